"""Unsorted input: next location over hash buckets beside the sorted path and Polars' own
partitioned sink, in one run.

    python benchmarks/bench_buckets.py [--samples 300000] [--candidates 100] [--repeat 3]

Inputs: the sorted synthetic files of ``datagen.nextloc_files`` and a copy of the predictions whose
samples are shuffled (``rss_nextloc.shuffled_copy``: row groups reversed, samples permuted within
each, every sample's rows still together), so mobeval finds them unsorted at once and goes over
hash buckets. Each measurement is a fresh process, the three kinds alternating, after one untimed
run of each mobeval kind (which fills the Numba cache); the medians are printed with their ratios:

* sorted: ``evaluate_nextloc(truth, pred, out=...)`` on the sorted file (streaming);
* unsorted: the same on the shuffled file (bucketing both inputs, then scoring bucket by bucket);
* peer: Polars alone on the shuffled predictions, doing the bucketing part of that work with its
  partitioned sink (``sink_parquet(pl.PartitionBy(key=hash % B))``, B as mobeval chooses), then
  reading each bucket back sorted by sample, as mobeval must before scoring.

Both mobeval runs must give the same summary (bit for bit) and the same per-sample table (compared
by an order-independent sum of row hashes). Runs from a snapshot of pipeline/.
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
from pathlib import Path

from datagen import nextloc_files, snapshot_pipeline
from measure import load
from rss_nextloc import shuffled_copy

GOAL = 1.5


def worker_mobeval(truth: str, pred: str, chunk_rows: int) -> dict:
    import polars as pl

    from mobeval.api import evaluate_nextloc

    with tempfile.TemporaryDirectory(prefix="bench-buckets-out-") as out:
        started = time.perf_counter()
        result = evaluate_nextloc(truth, pred, out=out, chunk_rows=chunk_rows, progress=False)
        seconds = time.perf_counter() - started
        per_unit = pl.read_parquet(Path(out) / "per_unit", hive_partitioning=False)
        digest = int(per_unit.select(sorted(per_unit.columns)).hash_rows(seed=1).sum())
    summary = dict(zip(result.summary["metric"], result.summary["value"], strict=True))
    return {"seconds": seconds, "summary": summary, "rows": per_unit.height, "digest": digest}


def worker_peer(pred: str, chunk_rows: int) -> dict:
    import polars as pl

    from mobeval.io.chunking import HASH_SEED, bucket_count
    from mobeval.io.sources import as_source

    n_buckets = bucket_count(as_source(pred).row_count_estimate(), chunk_rows)
    with tempfile.TemporaryDirectory(prefix="bench-buckets-peer-") as folder:
        started = time.perf_counter()
        bucket = (pl.struct("sample_id").hash(seed=HASH_SEED) % n_buckets).alias("bucket")
        pl.scan_parquet(pred).with_columns(bucket).sink_parquet(
            pl.PartitionBy(folder, key="bucket", include_key=False), mkdir=True
        )
        rows = 0
        for path in sorted(Path(folder).rglob("*.parquet")):
            rows += pl.read_parquet(path).sort("sample_id", maintain_order=True).height
        seconds = time.perf_counter() - started
    return {"seconds": seconds, "rows": rows, "buckets": n_buckets}


def spawn(kind: str, **kwargs) -> dict:
    cmd = [sys.executable, __file__, "--worker", json.dumps({"kind": kind, **kwargs})]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"worker {kind} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=300_000)
    parser.add_argument("--candidates", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chunk-rows", type=int, default=2_000_000)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        spec = json.loads(args.worker)
        kind = spec.pop("kind")
        result = worker_mobeval(**spec) if kind == "mobeval" else worker_peer(**spec)
        print(json.dumps(result))
        return

    scratch = tempfile.mkdtemp(prefix="bench-buckets-")
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    snapshot_pipeline(str(Path(scratch) / "code"))
    truth, pred = nextloc_files(args.samples, args.candidates)
    shuffled = shuffled_copy(pred, args.candidates)
    rows = args.samples * args.candidates
    print(f"{os.cpu_count()} CPUs; load average at start (1/5/15 min): {load()}")
    print(
        f"{args.samples:,} samples x {args.candidates} candidates = {rows:,} rows; "
        f"chunk_rows {args.chunk_rows:,}; {args.repeat} runs each, alternating\n"
    )
    runs: dict[str, list[dict]] = {"sorted": [], "unsorted": [], "peer": []}
    common = {"chunk_rows": args.chunk_rows}
    for path in (pred, shuffled):  # untimed: the snapshot's kernels compile into its cache
        spawn("mobeval", truth=str(truth), pred=str(path), **common)
    for _ in range(args.repeat):
        runs["sorted"].append(spawn("mobeval", truth=str(truth), pred=str(pred), **common))
        runs["unsorted"].append(spawn("mobeval", truth=str(truth), pred=str(shuffled), **common))
        runs["peer"].append(spawn("peer", pred=str(shuffled), **common))
    med = {name: statistics.median(r["seconds"] for r in results) for name, results in runs.items()}
    notes = {
        "sorted": "evaluate_nextloc, sorted file (streaming)",
        "unsorted": "evaluate_nextloc, shuffled file (hash buckets)",
        "peer": f"Polars PartitionBy sink + sorted read-back, {runs['peer'][0]['buckets']} buckets",
    }
    for name, seconds in med.items():
        every = ", ".join(f"{r['seconds']:.2f}" for r in runs[name])
        print(f"  {name:<9} {seconds:>7.2f} s  {notes[name]} (all: {every})")
    ratio = med["unsorted"] / med["sorted"]
    verdict = "MET" if ratio <= GOAL else "missed"
    print(f"\n  unsorted / sorted      {ratio:5.2f}x  (goal <= {GOAL}x: {verdict})")
    print(
        f"  unsorted / peer        {med['unsorted'] / med['peer']:5.2f}x  "
        "(peer: the bucketing alone, no scoring)"
    )
    same = all(
        u["summary"] == s["summary"] and (u["rows"], u["digest"]) == (s["rows"], s["digest"])
        for u, s in zip(runs["unsorted"], runs["sorted"], strict=True)
    )
    print(f"  identical results (summary bit for bit, per-sample rows): {'YES' if same else 'NO'}")
    print(f"\nload average at end (1/5/15 min): {load()}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
