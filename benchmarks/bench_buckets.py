"""Unsorted input: next location on shuffled copies beside the sorted path and Polars' own
partitioned sink, in one run.

    python benchmarks/bench_buckets.py [--samples 300000] [--candidates 100] [--repeat 3]
                                       [--chunk-rows 2000000] [--baseline REV]

Inputs: the sorted synthetic files of ``datagen.nextloc_files`` and two unsorted copies of the
predictions (``rss_nextloc.unsorted_copy``, row groups reversed): "grouped", the samples permuted
within each row group, every sample's rows still together (mobeval streams it again, each chunk
sorted in memory, as the truth fits in one chunk), and "scattered", the rows permuted within each
row group, a sample's rows apart (mobeval goes over hash buckets on disk). Each measurement is a
fresh process, the kinds alternating, after one untimed run of each mobeval kind (which fills the
Numba cache); the medians (wall, and the evaluating process's CPU) are printed with their ratios:

* sorted / grouped / scattered: ``evaluate_nextloc(truth, pred, out=...)`` on that file;
* peer: Polars alone on the scattered predictions, doing the bucketing part of that work with its
  partitioned sink (``sink_parquet(pl.PartitionBy(key=hash % B))``, B as mobeval chooses), then
  reading each bucket back sorted by sample, as mobeval must before scoring.

``--baseline REV`` also runs the three mobeval kinds with the ``pipeline/`` of git revision REV
(``git archive``), alternating with the current code: before and after in one run.

Every mobeval run must give the sorted run's summary (bit for bit) and per-sample table (compared
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
from rss_nextloc import unsorted_copy

GOAL = 1.5


def worker_mobeval(truth: str, pred: str, chunk_rows: int) -> dict:
    import polars as pl

    from mobeval.api import evaluate_nextloc

    with tempfile.TemporaryDirectory(prefix="bench-buckets-out-") as out:
        started, cpu = time.perf_counter(), time.process_time()
        result = evaluate_nextloc(truth, pred, out=out, chunk_rows=chunk_rows, progress=False)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        per_unit = pl.read_parquet(Path(out) / "per_unit", hive_partitioning=False)
        digest = int(per_unit.select(sorted(per_unit.columns)).hash_rows(seed=1).sum())
    summary = dict(zip(result.summary["metric"], result.summary["value"], strict=True))
    return {
        "seconds": seconds,
        "cpu": cpu,
        "summary": summary,
        "rows": per_unit.height,
        "digest": digest,
    }


def worker_peer(pred: str, chunk_rows: int) -> dict:
    import polars as pl

    from mobeval.io.chunking import HASH_SEED, bucket_count
    from mobeval.io.inputs import as_source

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


def spawn(kind: str, code: str | None = None, **kwargs) -> dict:
    """One worker in a fresh process; ``code``: a folder holding another ``mobeval`` package."""
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join([code, env.get("PYTHONPATH", "")])
    cmd = [sys.executable, __file__, "--worker", json.dumps({"kind": kind, **kwargs})]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"worker {kind} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def baseline_code(revision: str, folder: Path) -> str:
    """``pipeline/`` of git revision ``revision`` copied into ``folder`` as ``mobeval``."""
    root = Path(__file__).resolve().parents[1]
    archive = subprocess.run(
        ["git", "-C", str(root), "archive", revision, "pipeline"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "x", "-C", str(folder)], input=archive, check=True)
    (folder / "pipeline").rename(folder / "mobeval")
    return str(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=300_000)
    parser.add_argument("--candidates", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chunk-rows", type=int, default=2_000_000)
    parser.add_argument("--baseline", help="git revision whose pipeline/ runs beside the current")
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
    codes = {"": None}
    if args.baseline:
        folder = Path(scratch) / "baseline"
        folder.mkdir()
        codes = {"base ": baseline_code(args.baseline, folder), **codes}
    truth, pred = nextloc_files(args.samples, args.candidates)
    files = {
        "sorted": pred,
        "grouped": unsorted_copy(pred, args.candidates, "grouped"),
        "scattered": unsorted_copy(pred, args.candidates, "scattered"),
    }
    rows = args.samples * args.candidates
    print(f"{os.cpu_count()} CPUs; load average at start (1/5/15 min): {load()}")
    if args.baseline:
        print(f"base: pipeline/ of {args.baseline}; the others: the current pipeline/")
    print(
        f"{args.samples:,} samples x {args.candidates} candidates = {rows:,} rows; "
        f"chunk_rows {args.chunk_rows:,}; {args.repeat} runs each, alternating\n"
    )
    common = {"chunk_rows": args.chunk_rows}
    runs: dict[str, list[dict]] = {}
    for _ in range(args.repeat + 1):  # the first round is untimed: it fills each code's cache
        for version, code in codes.items():
            for kind, path in files.items():
                result = spawn("mobeval", code, truth=str(truth), pred=str(path), **common)
                runs.setdefault(version + kind, []).append(result)
        runs.setdefault("peer", []).append(spawn("peer", pred=str(files["scattered"]), **common))
    runs = {name: results[1:] for name, results in runs.items()}
    med = {name: statistics.median(r["seconds"] for r in results) for name, results in runs.items()}
    buckets = runs["peer"][0]["buckets"]
    cpu = {
        name: statistics.median(r["cpu"] for r in results)
        for name, results in runs.items()
        if name != "peer"
    }
    for name, seconds in med.items():
        every = ", ".join(f"{r['seconds']:.2f}" for r in runs[name])
        used = f"; CPU {cpu[name]:.2f} s" if name in cpu else ""
        print(f"  {name:<16} {seconds:>7.2f} s  (all: {every}{used})")
    print(f"  (peer: Polars PartitionBy sink + sorted read-back, {buckets} buckets, no scoring)\n")
    for version in codes:
        for kind in ("grouped", "scattered"):
            ratio = med[version + kind] / med[version + "sorted"]
            cpu_ratio = cpu[version + kind] / cpu[version + "sorted"]
            verdict = "MET" if ratio <= GOAL else "missed"
            label = f"{version}{kind} / sorted"
            print(
                f"  {label:<24} {ratio:5.2f}x  (goal <= {GOAL}x: {verdict}); CPU {cpu_ratio:.2f}x"
            )
        label = f"{version}scattered / peer"
        print(f"  {label:<24} {med[version + 'scattered'] / med['peer']:5.2f}x")
    reference = runs["sorted"][0]
    same = all(
        r["summary"] == reference["summary"]
        and (r["rows"], r["digest"]) == (reference["rows"], reference["digest"])
        for name, results in runs.items()
        if name != "peer"
        for r in results
    )
    print(f"  identical results (summary bit for bit, per-sample rows): {'YES' if same else 'NO'}")
    print(f"\nload average at end (1/5/15 min): {load()}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
