"""Peak memory of a print-only run (``mobeval nextloc`` without ``--out``) at two input sizes.

    python benchmarks/rss_print_only.py [--small 1000000] [--large 4000000] [--candidates 10]
                                        [--chunk-rows 2000000] [--rounds 1]

Three ways to score the same input, each in a fresh process:

* ``print-only``: the command line without ``--out`` (``per_unit=False``: each chunk's per-unit
  values are let go as soon as the summary has folded them in);
* ``--out``: the command line writing every section under a temporary folder;
* ``kept``: ``evaluate_nextloc(...)`` in Python without ``out``, which keeps the per-unit table
  in memory (``result.per_unit``): what a print-only run did before ``per_unit=False``;
* ``read floor``: both files read through the same sources in the engine's 1 M-row batches, and
  nothing else (what reading alone costs at each size).

The peak RSS of each is its own ``ru_maxrss``, read with ``os.wait4`` on that child alone. The
cases alternate (small, large, for each way, ``--rounds`` times; the median is printed); the
Numba cache is populated first by an untimed small run.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from datagen import nextloc_files, snapshot_pipeline

WAYS = ("print-only", "--out", "kept", "read floor")


def worker(way: str, truth: str, pred: str, chunk_rows: int) -> None:
    """One run of ``way``; what it prints is thrown away by the caller."""
    if way == "read floor":
        from mobeval.io.inputs import as_source

        for path, columns in (
            (truth, ["sample_id", "location"]),
            (pred, ["sample_id", "location", "score"]),
        ):
            for _ in as_source(path).iter_batches(columns, min(chunk_rows, 1_000_000)):
                pass
        return
    if way == "kept":
        from mobeval.api import evaluate_nextloc

        result = evaluate_nextloc(truth, pred, k=[1, 5, 10], chunk_rows=chunk_rows, progress=False)
        print(result.value("mrr"), result.per_unit.height)
        return
    from mobeval.cli import main

    argv = ["nextloc", "--truth", truth, "--pred", pred, "--k", "1,5,10", "--quiet"]
    argv += ["--chunk-rows", str(chunk_rows)]
    with tempfile.TemporaryDirectory(prefix="rss-print-only-out-") as out:
        code = main(argv + (["--out", out] if way == "--out" else []))
    if code:
        raise SystemExit(code)


def measure(way: str, truth, pred, chunk_rows: int) -> tuple[float, float]:
    """(peak RSS in MiB, seconds) of one worker process."""
    spec = {"way": way, "truth": str(truth), "pred": str(pred), "chunk_rows": chunk_rows}
    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, __file__, "--worker", json.dumps(spec)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"{way} failed: {child.stderr.read().decode()[-2000:]}")
    return usage.ru_maxrss / 1024, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=1_000_000, help="samples, small case")
    parser.add_argument("--large", type=int, default=4_000_000, help="samples, large case")
    parser.add_argument("--candidates", type=int, default=10)
    parser.add_argument("--chunk-rows", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(**json.loads(args.worker))
        return

    code = snapshot_pipeline(tempfile.mkdtemp(prefix="rss-print-only-code-"))
    atexit.register(shutil.rmtree, code, True)
    cache = tempfile.mkdtemp(prefix="rss-print-only-numba-")
    atexit.register(shutil.rmtree, cache, True)
    os.environ["NUMBA_CACHE_DIR"] = cache
    print(f"{os.cpu_count()} CPUs; load average at start: {os.getloadavg()[0]:.2f}")
    c = args.candidates
    sizes = (args.small, args.large)
    files = {n: nextloc_files(n, c) for n in sizes}
    measure("print-only", *files[args.small], args.chunk_rows)  # the Numba cache, untimed
    found: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for _ in range(args.rounds):
        for way in WAYS:
            for n in sizes:
                found.setdefault((way, n), []).append(measure(way, *files[n], args.chunk_rows))
    print(f"chunk_rows = {args.chunk_rows:,}; {c} candidates a sample; median of {args.rounds}")
    print(f"  {'way':<11} {'samples':>10} {'peak RSS':>10} {'seconds':>8}")
    peak = {}
    for (way, n), runs in found.items():
        peak[way, n] = statistics.median(r[0] for r in runs)
        seconds = statistics.median(r[1] for r in runs)
        print(f"  {way:<11} {n:>10,} {peak[way, n]:>6.0f} MiB {seconds:>7.2f}s")
    extra = (args.large - args.small) * c
    for way in WAYS:
        grown = peak[way, args.large] - peak[way, args.small]
        per_sample = grown * 1024 * 1024 / (args.large - args.small)
        print(
            f"  {way}: {args.large:,} / {args.small:,} samples = "
            f"{peak[way, args.large] / peak[way, args.small]:.2f}x peak RSS "
            f"({grown:+.0f} MiB for {extra / 1e6:g} M more rows, {per_sample:+.0f} B a sample)"
        )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
