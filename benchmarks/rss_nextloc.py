"""Peak memory of next-location evaluation: 10 M vs 100 M candidate rows at the same chunk size.

    python benchmarks/rss_nextloc.py [--candidates 100] [--small 100000] [--large 1000000]
                                     [--chunk-rows 2000000] [--no-unsorted]

Each case is ``evaluate_nextloc(..., out=<temp dir>)`` with the default metrics at k = 1, 5, 10 in
a fresh process. The peak RSS is ``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss`` read by a
separate measuring process whose only child is that evaluation, so no other process is counted.
The Numba cache is populated first (an untimed run of each small case), so compilation memory is
not part of any case; each case also reports its run time.

"sorted" inputs stream chunk by chunk. Two unsorted copies (``unsorted_copy``: row groups written
in reverse order) are detected as not sorted: "grouped" (samples shuffled within each row group,
every sample's rows still together) is then streamed again, each chunk sorted in memory (the truth,
1 M rows at most here, fits in one chunk); "scattered" (rows shuffled within each row group, a
sample's rows apart) goes over hash buckets on disk. A tiny case (1,000 samples) shows the fixed
cost of the interpreter, Polars, Numba and the loaded kernels.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from datagen import nextloc_files, snapshot_pipeline

KS = (1, 5, 10)


def unsorted_copy(pred: Path, n_candidates: int, kind: str = "grouped", seed: int = 0) -> Path:
    """The predictions out of key order, one row group in memory at a time: row groups in reverse
    order, and within each either the units (``n_candidates`` rows each: samples, or a recs
    file's users) permuted, every unit's rows still together (``grouped``), or the rows themselves
    permuted, a unit's rows apart (``scattered``). Written beside ``pred`` (``<stem>_shuffled``,
    ``<stem>_scattered``), once."""
    import numpy as np
    import pyarrow.parquet as pq

    suffix = {"grouped": "_shuffled.parquet", "scattered": "_scattered.parquet"}[kind]
    target = pred.with_name(pred.stem + suffix)
    if target.exists():
        return target
    rng = np.random.default_rng(seed)
    source = pq.ParquetFile(pred)
    partial = target.with_suffix(".partial")
    with pq.ParquetWriter(partial, source.schema_arrow) as writer:
        for group in reversed(range(source.num_row_groups)):
            table = source.read_row_group(group)
            if table.num_rows % n_candidates:
                raise ValueError(f"row group {group} does not hold whole samples")
            if kind == "scattered":
                rows = rng.permutation(table.num_rows)
            else:
                blocks = rng.permutation(table.num_rows // n_candidates)
                rows = (blocks[:, None] * n_candidates + np.arange(n_candidates)).ravel()
            writer.write_table(table.take(rows))
    partial.rename(target)
    return target


def worker(truth: str, pred: str, chunk_rows: int) -> dict:
    from mobeval.api import evaluate_nextloc

    with tempfile.TemporaryDirectory(prefix="rss-nextloc-out-") as out:
        t0 = time.perf_counter()
        result = evaluate_nextloc(truth, pred, k=KS, out=out, chunk_rows=chunk_rows, progress=False)
        seconds = time.perf_counter() - t0
    self_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    import mobeval

    return {
        "seconds": seconds,
        "self_maxrss_kb": self_kb,
        "mrr": result.value("mrr"),
        "code": mobeval.__file__,
    }


def measure(spec: dict) -> dict:
    """Run the worker as this process's only child; its peak RSS is RUSAGE_CHILDREN's ru_maxrss."""
    cmd = [sys.executable, __file__, "--worker", json.dumps(spec)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"worker failed:\n{proc.stderr}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["children_maxrss_kb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    result["process_s"] = wall
    return result


def spawn_measure(spec: dict, cache: str) -> dict:
    """A fresh measuring process per case (RUSAGE_CHILDREN accumulates over all children)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    cmd = [sys.executable, __file__, "--measure", json.dumps(spec)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"measurement failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=100)
    parser.add_argument("--small", type=int, default=100_000, help="samples in the small case")
    parser.add_argument("--large", type=int, default=1_000_000, help="samples in the large case")
    parser.add_argument("--chunk-rows", type=int, default=2_000_000)
    parser.add_argument("--no-unsorted", action="store_true", help="skip the unsorted cases")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(**json.loads(args.worker))))
        return
    if args.measure:
        print(json.dumps(measure(json.loads(args.measure))))
        return

    c = args.candidates
    code = snapshot_pipeline(tempfile.mkdtemp(prefix="rss-nextloc-code-"))
    atexit.register(shutil.rmtree, code, True)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} CPUs; load average at start (1/5/15 min): {load}")
    t0 = time.perf_counter()
    files = {n: nextloc_files(n, c) for n in (1_000, args.small, args.large)}
    cases = [("tiny (fixed cost)", "sorted", 1_000, files[1_000][1])]
    for n in (args.small, args.large):
        cases.append((f"{n * c / 1e6:g} M rows", "sorted", n, files[n][1]))
    if not args.no_unsorted:
        for kind in ("grouped", "scattered"):
            for n in (args.small, args.large):
                copy = unsorted_copy(files[n][1], c, kind)
                cases.append((f"{n * c / 1e6:g} M rows", kind, n, copy))
    print(f"inputs ready in {time.perf_counter() - t0:.1f} s; chunk_rows = {args.chunk_rows:,}")

    results = {}
    with tempfile.TemporaryDirectory(prefix="rss-nextloc-numba-") as cache:
        # populate the Numba cache with every signature the cases use (a tiny input does not
        # reach all of them): one untimed run of each small case, sorted and unsorted
        for _, _, n, pred in cases:
            if n == args.small:
                spec = {"truth": str(files[n][0]), "pred": str(pred), "chunk_rows": args.chunk_rows}
                spawn_measure(spec, cache)
        for label, order, n, pred in cases:
            spec = {"truth": str(files[n][0]), "pred": str(pred), "chunk_rows": args.chunk_rows}
            results[(label, order)] = spawn_measure(spec, cache)
            if not results[(label, order)]["code"].startswith(code):
                raise SystemExit(f"worker imported {results[(label, order)]['code']}, not {code}")

    print()
    print(f"  {'case':<20} {'input':<9} {'peak RSS':>10} {'seconds':>9}  (worker's own ru_maxrss)")
    for (label, order), r in results.items():
        print(
            f"  {label:<20} {order:<9} {r['children_maxrss_kb'] / 1024:>7.0f} MiB "
            f"{r['seconds']:>8.2f}s  ({r['self_maxrss_kb'] / 1024:.0f} MiB)"
        )
    print()
    small, large = f"{args.small * c / 1e6:g} M rows", f"{args.large * c / 1e6:g} M rows"
    for order in ("sorted", "grouped", "scattered"):
        if (small, order) not in results:
            continue
        ratio = (
            results[(large, order)]["children_maxrss_kb"]
            / results[(small, order)]["children_maxrss_kb"]
        )
        verdict = "MET" if ratio <= 1.3 else "MISSED"
        print(f"  {order}: peak RSS {large} / {small} = {ratio:.2f} (target <= 1.3: {verdict})")
    print(f"load average at end (1/5/15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
