"""Peak memory of next-location evaluation by kind of input: a path, a Polars LazyFrame
(``pl.scan_parquet``: streamed by Polars' streaming engine) and, for contrast, a collected
DataFrame (``pl.read_parquet``), on predictions of 2 M and 16 M rows at the same chunk size.

    python benchmarks/rss_inputs.py [--small 100000] [--large 800000] [--candidates 20]
                                    [--chunk-rows 500000]

Each case runs ``evaluate_nextloc(truth, predictions, k=(1, 5, 10), out=<temp dir>)`` in a fresh
process, measured by :func:`measure.run_child` (the peak RSS of that process alone). The Numba
cache is warmed first by an untimed small run. Streaming holds the peak flat as the input grows
eightfold; the collected DataFrame grows with it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

from datagen import nextloc_files, snapshot_pipeline
from measure import run_child

KINDS = ("path", "lazy", "collected")


def worker(kind: str, truth: str, pred: str, chunk_rows: int) -> None:
    import polars as pl

    from mobeval.api import evaluate_nextloc

    open_input = {"path": str, "lazy": pl.scan_parquet, "collected": pl.read_parquet}[kind]
    with tempfile.TemporaryDirectory(prefix="rss-inputs-out-") as out:
        result = evaluate_nextloc(
            open_input(truth),
            open_input(pred),
            k=(1, 5, 10),
            out=out,
            chunk_rows=chunk_rows,
            progress=False,
        )
    print(json.dumps({"mrr": result.value("mrr")}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=100_000)
    parser.add_argument("--large", type=int, default=800_000)
    parser.add_argument("--candidates", type=int, default=20)
    parser.add_argument("--chunk-rows", type=int, default=500_000)
    parser.add_argument("--worker", nargs=4)
    args = parser.parse_args()
    if args.worker:
        kind, truth, pred, chunk_rows = args.worker
        worker(kind, truth, pred, int(chunk_rows))
        return
    snapshot_pipeline(tempfile.mkdtemp(prefix="rss-inputs-code-"))
    sizes = {"small": args.small, "large": args.large}
    files = {name: nextloc_files(n, args.candidates) for name, n in sizes.items()}

    def case(kind: str, size: str) -> tuple[float, float, float]:
        truth, pred = files[size]
        command = [sys.executable, __file__, "--worker", kind, str(truth), str(pred)]
        with tempfile.NamedTemporaryFile(suffix=".json") as printed:
            seconds, rss, text = run_child([*command, str(args.chunk_rows)], printed.name)
        return seconds, rss, json.loads(text.splitlines()[-1])["mrr"]

    case("path", "small")  # warms the Numba cache
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"chunk_rows={args.chunk_rows}, {args.candidates} candidates a sample")
    print(f"{'input':<10} {'rows':>12} {'seconds':>8} {'peak RSS MiB':>13}  mrr")
    for size in sizes:
        for kind in KINDS:
            seconds, rss, mrr = case(kind, size)
            rows = sizes[size] * args.candidates
            print(f"{kind:<10} {rows:>12,} {seconds:>8.2f} {rss:>13.0f}  {mrr:.12f}")


if __name__ == "__main__":
    main()
