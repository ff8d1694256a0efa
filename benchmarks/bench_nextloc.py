"""Next-location throughput: mobeval vs the Parquet read floor vs ranx, side by side in one run.

    python benchmarks/bench_nextloc.py [--samples 1000000] [--candidates 100] [--repeat 3]
                                       [--ranx-samples 100000] [--ranx-repeat 1]
    python benchmarks/bench_nextloc.py --process-only [--samples 1000000] [--repeat 5]
                                       [--baseline REV]

Inputs are synthetic, sorted Parquet files from ``datagen.nextloc_files`` (cached in bench_data/).
Every measurement runs in its own fresh Python process; "best of N" is the minimum over N processes.

* mobeval end to end: ``evaluate_nextloc(..., out=<temp dir>)`` with acc / precision / recall /
  f1 / mrr / map / ndcg at 1, 5, 10 plus mrr, Numba cache populated (warm); per-sample and summary
  Parquet are written.
* cold / warm start: a process whose ``NUMBA_CACHE_DIR`` is a fresh empty directory (every kernel
  compiles), then a second process with the same, now populated, directory.
* I/O floor: ``polars.read_parquet`` of the predictions file.
* ranx end to end (Parquet -> polars -> pandas, ``Qrels.from_df``, ``Run.from_df``, ``evaluate``)
  builds Python dicts per query, so it runs on a smaller file of ``--ranx-samples`` samples; mobeval
  is timed on that same file for a same-size ratio, and the full-size ranx time is extrapolated
  linearly (labelled as such).
* ranx kernels alone: the ``ranx.metrics`` functions on the already built typed lists, warm.
* agreement: mobeval (convention "ranx") equals ranx on the subset for every metric both compute.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

from bench_buckets import baseline_code
from datagen import nextloc_files, snapshot_pipeline

KS = (1, 5, 10)
MOBEVAL_METRICS = ["acc@k", "precision@k", "recall@k", "f1@k", "mrr@k", "map@k", "ndcg@k", "mrr"]
# mobeval name -> ranx name; with one relevant item per sample ranx's hits@k is our acc@k
RANX_NAMES = {f"acc@{k}": f"hits@{k}" for k in KS}
for _k in KS:
    for _m in ("precision", "recall", "f1", "mrr", "map", "ndcg"):
        RANX_NAMES[f"{_m}@{_k}"] = f"{_m}@{_k}"
RANX_NAMES["mrr"] = "mrr"
TOLERANCE = 1e-9


# -- workers (each runs in its own process) ----------------------------------------------------


def worker_mobeval(truth: str, pred: str, convention: str, chunk_rows: int) -> dict:
    t0 = time.perf_counter()
    from mobeval.api import evaluate_nextloc

    import_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory(prefix="bench-nextloc-out-") as out:
        t0 = time.perf_counter()
        result = evaluate_nextloc(
            truth,
            pred,
            k=KS,
            metrics=MOBEVAL_METRICS,
            convention=convention,
            out=out,
            chunk_rows=chunk_rows,
            progress=False,
        )
        evaluate_s = time.perf_counter() - t0
        written = sum(f.stat().st_size for f in Path(out).rglob("*") if f.is_file())
    summary = dict(zip(result.summary["metric"], result.summary["value"], strict=True))
    import mobeval

    return {
        "import_s": import_s,
        "evaluate_s": evaluate_s,
        "summary": summary,
        "bytes": written,
        "code": mobeval.__file__,
    }


def worker_read(pred: str) -> dict:
    import polars as pl

    t0 = time.perf_counter()
    frame = pl.read_parquet(pred)
    seconds = time.perf_counter() - t0
    return {"read_s": seconds, "rows": frame.height}


def worker_read_both(truth: str, pred: str) -> dict:
    """The read-only process: both Parquet files read whole, nothing else."""
    import polars as pl

    t0 = time.perf_counter()
    rows = pl.read_parquet(truth).height + pl.read_parquet(pred).height
    return {"read_s": time.perf_counter() - t0, "rows": rows}


def worker_ranx(truth: str, pred: str) -> dict:
    import numpy as np
    import polars as pl
    from ranx import Qrels, Run, evaluate, metrics

    names = list(RANX_NAMES.values())
    t0 = time.perf_counter()
    qrels_df = (
        pl.read_parquet(truth)
        .select(
            pl.col("sample_id").cast(pl.String).alias("q_id"),
            pl.col("location").cast(pl.String).alias("doc_id"),
            pl.lit(1, dtype=pl.Int64).alias("score"),
        )
        .to_pandas()
    )
    run_df = (
        pl.read_parquet(pred)
        .select(
            pl.col("sample_id").cast(pl.String).alias("q_id"),
            pl.col("location").cast(pl.String).alias("doc_id"),
            pl.col("score").cast(pl.Float64),
        )
        .to_pandas()
    )
    for frame in (qrels_df, run_df):  # ranx asserts object dtype; pandas may infer "str"
        for column in ("q_id", "doc_id"):
            frame[column] = frame[column].astype(object)
    read_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    qrels = Qrels.from_df(qrels_df)
    run = Run.from_df(run_df)
    build_s = time.perf_counter() - t0
    del qrels_df, run_df
    t0 = time.perf_counter()
    means = evaluate(qrels, run, names)
    evaluate_s = time.perf_counter() - t0

    # kernels alone: the low-level functions ranx.evaluate dispatches to, on prebuilt typed lists
    t0 = time.perf_counter()
    q_typed, r_typed = qrels.to_typed_list(), run.to_typed_list()
    typed_s = time.perf_counter() - t0
    funcs = {
        "hits": metrics.hits,
        "precision": metrics.precision,
        "recall": metrics.recall,
        "f1": metrics.f1,
        "mrr": metrics.reciprocal_rank,
        "map": metrics.average_precision,
        "ndcg": metrics.ndcg,
    }
    calls = []
    for name in names:
        base, _, cut = name.partition("@")
        calls.append((name, funcs[base], int(cut) if cut else 0))
    for _, func, k in calls:  # warm-up: already compiled by evaluate(); make sure nothing is left
        func(q_typed, r_typed, k, 1)
    t0 = time.perf_counter()
    kernel_means = {name: float(np.mean(func(q_typed, r_typed, k, 1))) for name, func, k in calls}
    kernels_s = time.perf_counter() - t0
    return {
        "read_s": read_s,
        "build_s": build_s,
        "evaluate_s": evaluate_s,
        "end_to_end_s": read_s + build_s + evaluate_s,
        "typed_list_s": typed_s,
        "kernels_s": kernels_s,
        "means": {name: float(value) for name, value in means.items()},
        "kernel_means": kernel_means,
    }


def worker_profile(truth: str, pred: str, top: int) -> dict:
    """cProfile of one warm evaluate_nextloc (a first, unprofiled run compiles / loads kernels)."""
    import cProfile
    import io
    import pstats

    from mobeval.api import evaluate_nextloc

    options = {"k": KS, "metrics": MOBEVAL_METRICS, "progress": False}
    with tempfile.TemporaryDirectory(prefix="bench-nextloc-out-") as out:
        evaluate_nextloc(truth, pred, out=out, **options)
    with tempfile.TemporaryDirectory(prefix="bench-nextloc-out-") as out:
        profiler = cProfile.Profile()
        t0 = time.perf_counter()
        profiler.runcall(evaluate_nextloc, truth, pred, out=out, **options)
        seconds = time.perf_counter() - t0
    text = []
    for order in ("tottime", "cumulative"):
        buffer = io.StringIO()
        stats = pstats.Stats(profiler, stream=buffer).strip_dirs().sort_stats(order)
        stats.print_stats(top)
        lines = buffer.getvalue().splitlines()
        start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls"))
        text.append(f"-- top {top} by {order} --")
        text.extend(lines[start:])
    return {"seconds": seconds, "text": "\n".join(text)}


WORKERS = {
    "mobeval": worker_mobeval,
    "read": worker_read,
    "read_both": worker_read_both,
    "ranx": worker_ranx,
    "profile": worker_profile,
}


# -- driver ------------------------------------------------------------------------------------


def spawn(kind: str, cache_dir: str, code: str | None = None, **kwargs) -> dict:
    """Run one worker in a fresh process; adds its wall time ("process_s", start to exit).
    ``code``: a folder holding another ``mobeval`` package, imported instead of the snapshot."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join([code, env.get("PYTHONPATH", "")])
    cmd = [sys.executable, __file__, "--worker", json.dumps({"kind": kind, **kwargs})]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    process_s = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"worker {kind} failed:\n{proc.stderr}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["process_s"] = process_s
    result["cpu_s"] = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return result


def best(results: list[dict], field: str) -> dict:
    return min(results, key=lambda r: r[field])


def machine_info() -> list[str]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        import psutil

        ram = f"{psutil.virtual_memory().total / 2**30:.1f} GiB"
    except ImportError:
        ram = f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.1f} GiB"
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    versions = []
    for module in ("numba", "numpy", "polars", "pyarrow", "ranx"):
        try:
            versions.append(f"{module} {metadata.version(module)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{module} -")
    return [
        f"machine: {os.cpu_count()} logical CPUs (nproc {len(os.sched_getaffinity(0))}), {cpu}, "
        f"RAM {ram}",
        f"python {platform.python_version()}, {', '.join(versions)}",
        f"load average at start (1/5/15 min): {load}",
    ]


def source_stamp() -> float:
    """Newest modification time of the pipeline sources (a change mid-run mixes code versions)."""
    root = Path(__file__).resolve().parents[1] / "pipeline"
    return max((f.stat().st_mtime for f in root.rglob("*.py")), default=0.0)


def row(label: str, seconds: float, note: str = "") -> str:
    return f"  {label:<58} {seconds:>9.2f} s  {note}"


def process_only(args) -> None:
    """Whole mobeval process vs read-only process, alternating; medians of the process times.
    With ``--baseline REV`` the pipeline/ of git revision REV runs too, in the same rotation."""
    for line in machine_info():
        print(line)
    code = snapshot_pipeline(tempfile.mkdtemp(prefix="bench-nextloc-code-"))
    atexit.register(shutil.rmtree, code, True)
    versions = {"mobeval": None}
    if args.baseline:
        folder = Path(tempfile.mkdtemp(prefix="bench-nextloc-base-"))
        atexit.register(shutil.rmtree, folder, True)
        versions = {f"base {args.baseline}": baseline_code(args.baseline, folder), **versions}
    truth, pred = (str(p) for p in nextloc_files(args.samples, args.candidates))
    rows = args.samples * args.candidates
    print(f"{args.samples:,} samples x {args.candidates} candidates = {rows:,} rows; {pred}")
    mob = {"truth": truth, "pred": pred, "convention": "mobeval", "chunk_rows": args.chunk_rows}
    reads, runs = [], {version: [] for version in versions}
    with tempfile.TemporaryDirectory(prefix="bench-nextloc-numba-") as caches:
        cache = {version: str(Path(caches) / str(n)) for n, version in enumerate(versions)}
        for version, folder in versions.items():  # untimed: fills each version's cache
            spawn("mobeval", cache[version], folder, **mob)
        for _ in range(args.repeat):
            reads.append(spawn("read_both", caches, truth=truth, pred=pred))
            for version, folder in versions.items():
                runs[version].append(spawn("mobeval", cache[version], folder, **mob))
    median = statistics.median
    read_s = median(r["process_s"] for r in reads)
    read_cpu = median(r["cpu_s"] for r in reads)
    print(f"  {'process':<52} {'median':>8}  all  (CPU: user + sys, median)")
    print(
        f"  {'read both Parquet files (pl.read_parquet x 2)':<52} {read_s:>7.2f}s  "
        + ", ".join(f"{r['process_s']:.2f}" for r in reads)
        + f"  (CPU {read_cpu:.2f} s)"
    )
    for version, results in runs.items():
        run_s = median(r["process_s"] for r in results)
        label = f"{version} evaluate_nextloc, warm, out= written"
        print(
            f"  {label:<52} {run_s:>7.2f}s  "
            + ", ".join(f"{r['process_s']:.2f}" for r in results)
            + f"  (evaluate() alone: {median(r['evaluate_s'] for r in results):.2f} s;"
            + f" CPU {median(r['cpu_s'] for r in results):.2f} s)"
        )
    for version, results in runs.items():
        ratio = median(r["process_s"] for r in results) / read_s
        cpu_ratio = median(r["cpu_s"] for r in results) / read_cpu
        verdict = "MET" if ratio <= 1.5 else "missed"
        print(
            f"  {version}: ratio {ratio:.2f}x (goal <= 1.5x: {verdict}); CPU ratio {cpu_ratio:.2f}x"
        )
    summaries = {json.dumps(r["summary"], sort_keys=True) for rs in runs.values() for r in rs}
    print(f"  same summary in every run: {'YES' if len(summaries) == 1 else 'NO'}")
    print(f"load average at end (1/5/15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--candidates", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3, help="best of N processes")
    parser.add_argument("--ranx-samples", type=int, default=100_000)
    parser.add_argument("--ranx-repeat", type=int, default=1, help="ranx runs (slow: default 1)")
    parser.add_argument("--chunk-rows", type=int, default=2_000_000)
    parser.add_argument(
        "--profile",
        type=int,
        metavar="TOP",
        help="only print a cProfile (top TOP entries) of one warm evaluate_nextloc at full size",
    )
    parser.add_argument(
        "--process-only",
        action="store_true",
        help="only the issue-13 row: whole mobeval process vs a process that only reads both "
        "Parquet files, alternating, --repeat times each, medians",
    )
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="with --process-only: also run the pipeline/ of git revision REV, alternating",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        spec = json.loads(args.worker)
        print(json.dumps(WORKERS[spec.pop("kind")](**spec)))
        return
    if args.process_only:
        process_only(args)
        return
    if args.profile:
        code = snapshot_pipeline(tempfile.mkdtemp(prefix="bench-nextloc-code-"))
        atexit.register(shutil.rmtree, code, True)
        truth, pred = (str(p) for p in nextloc_files(args.samples, args.candidates))
        with tempfile.TemporaryDirectory(prefix="bench-nextloc-numba-") as cache:
            result = spawn("profile", cache, truth=truth, pred=pred, top=args.profile)
        print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"evaluate_nextloc on {pred} under cProfile: {result['seconds']:.2f} s")
        print(result["text"])
        return

    for line in machine_info():
        print(line)
    code = snapshot_pipeline(tempfile.mkdtemp(prefix="bench-nextloc-code-"))
    atexit.register(shutil.rmtree, code, True)
    print(f"code: snapshot of pipeline/ taken at start, run from {code}")
    stamp = source_stamp()
    n, c, sub = args.samples, args.candidates, args.ranx_samples
    t0 = time.perf_counter()
    truth, pred = (str(p) for p in nextloc_files(n, c))
    sub_truth, sub_pred = (str(p) for p in nextloc_files(sub, c))
    tiny_truth, tiny_pred = (str(p) for p in nextloc_files(1_000, c))
    print(f"inputs ready in {time.perf_counter() - t0:.1f} s: {pred} ({os.path.getsize(pred):,} B)")
    print(f"metrics: {', '.join(MOBEVAL_METRICS)} with k = {', '.join(map(str, KS))}")
    print()
    mob = {"convention": "mobeval", "chunk_rows": args.chunk_rows}
    # the ranx-size subset, under ranx's convention
    on_subset = {
        "truth": sub_truth,
        "pred": sub_pred,
        "convention": "ranx",
        "chunk_rows": args.chunk_rows,
    }

    with tempfile.TemporaryDirectory(prefix="bench-nextloc-numba-") as cache:
        # cold start (empty cache: every kernel compiles), then warm start (same cache)
        cold = spawn("mobeval", cache, truth=truth, pred=pred, **mob)
        warm_start = spawn("mobeval", cache, truth=truth, pred=pred, **mob)
        # ranx's kernels are cached too, so that its timings exclude compilation like ours
        spawn("ranx", cache, truth=tiny_truth, pred=tiny_pred)
        spawn("mobeval", cache, **on_subset)

        full = [spawn("mobeval", cache, truth=truth, pred=pred, **mob) for _ in range(args.repeat)]
        floor = [spawn("read", cache, pred=pred) for _ in range(args.repeat)]
        sub_mob = [spawn("mobeval", cache, **on_subset) for _ in range(args.repeat)]
        sub_floor = [spawn("read", cache, pred=sub_pred) for _ in range(args.repeat)]
        ranx = [
            spawn("ranx", cache, truth=sub_truth, pred=sub_pred) for _ in range(args.ranx_repeat)
        ]

    if not full[0]["code"].startswith(code):
        sys.exit(f"children imported {full[0]['code']}, not the snapshot in {code}")
    full_best = best(full, "evaluate_s")
    floor_best = best(floor, "read_s")
    sub_best = best(sub_mob, "evaluate_s")
    sub_floor_best = best(sub_floor, "read_s")
    ranx_best = best(ranx, "end_to_end_s")
    scale = n / sub

    rows_full, rows_sub = n * c, sub * c
    print(f"== full size: {n:,} samples x {c} candidates = {rows_full:,} rows ==")
    print(f"  {'measurement':<58} {'seconds':>11}  notes")
    print(
        row(
            f"mobeval evaluate_nextloc, warm, best of {args.repeat}",
            full_best["evaluate_s"],
            f"{rows_full / full_best['evaluate_s'] / 1e6:.1f} M rows/s; process "
            f"{best(full, 'process_s')['process_s']:.2f} s incl. start + import; all: "
            + ", ".join(f"{r['evaluate_s']:.2f}" for r in full),
        )
    )
    print(
        row(
            "mobeval cold start (empty NUMBA_CACHE_DIR): evaluate()",
            cold["evaluate_s"],
            f"process {cold['process_s']:.2f} s (import {cold['import_s']:.2f} s)",
        )
    )
    print(
        row(
            "mobeval warm start (same cache dir): evaluate()",
            warm_start["evaluate_s"],
            f"process {warm_start['process_s']:.2f} s (import {warm_start['import_s']:.2f} s)",
        )
    )
    print(
        row(
            f"I/O floor: polars.read_parquet(predictions), best of {args.repeat}",
            floor_best["read_s"],
            "all: " + ", ".join(f"{r['read_s']:.2f}" for r in floor),
        )
    )
    print(
        row(
            "ranx end to end, EXTRAPOLATED linearly from the subset",
            ranx_best["end_to_end_s"] * scale,
            f"= {ranx_best['end_to_end_s']:.2f} s x {scale:g} (not measured)",
        )
    )
    print()
    print(f"== subset: {sub:,} samples x {c} candidates = {rows_sub:,} rows (same file for all) ==")
    print(f"  {'measurement':<58} {'seconds':>11}  notes")
    print(
        row(
            f"mobeval evaluate_nextloc (convention ranx), best of {args.repeat}",
            sub_best["evaluate_s"],
            "all: " + ", ".join(f"{r['evaluate_s']:.2f}" for r in sub_mob),
        )
    )
    print(row(f"I/O floor: polars.read_parquet, best of {args.repeat}", sub_floor_best["read_s"]))
    print(
        row(
            f"ranx end to end, best of {args.ranx_repeat}",
            ranx_best["end_to_end_s"],
            "all: " + ", ".join(f"{r['end_to_end_s']:.2f}" for r in ranx),
        )
    )
    print(row("  ranx: read Parquet -> polars -> pandas (str ids)", ranx_best["read_s"]))
    print(row("  ranx: Qrels.from_df + Run.from_df", ranx_best["build_s"]))
    print(row("  ranx: evaluate(qrels, run, 22 metrics)", ranx_best["evaluate_s"]))
    print(
        row(
            "ranx kernels alone (ranx.metrics.*, warm, prebuilt lists)",
            ranx_best["kernels_s"],
            f"+ {ranx_best['typed_list_s']:.2f} s for to_typed_list(), not counted",
        )
    )
    print()

    # agreement on the subset
    ours = sub_best["summary"]
    failures = []
    for our_name, ranx_name in RANX_NAMES.items():
        for source in ("means", "kernel_means"):
            theirs = ranx_best[source][ranx_name]
            if abs(ours[our_name] - theirs) > TOLERANCE:
                failures.append(f"{our_name}: mobeval {ours[our_name]!r} vs ranx {theirs!r}")
    verdict = "PASS" if not failures else "FAIL"
    what = f"{len(RANX_NAMES)} metrics, abs {TOLERANCE:g}"
    print(f"agreement with ranx on the subset ({what}): {verdict}")
    for line in failures:
        print("  " + line)
    print(
        "  e.g. "
        + ", ".join(f"{m} {ours[m]:.6f}" for m in ("acc@1", "acc@10", "ndcg@10", "mrr", "f1@5"))
    )
    print()

    e2e_ratio = ranx_best["end_to_end_s"] / sub_best["evaluate_s"]
    kernel_ratio = ranx_best["kernels_s"] / sub_best["evaluate_s"]
    floor_ratio = full_best["evaluate_s"] / floor_best["read_s"]
    sub_floor_ratio = sub_best["evaluate_s"] / sub_floor_best["read_s"]
    extrapolated = ranx_best["end_to_end_s"] * scale / full_best["evaluate_s"]

    def verdict_of(ok: bool) -> str:
        return "MET" if ok else "MISSED"

    def ratio(label: str, value: str, note: str = "") -> None:
        print(f"  {label:<58} {value:>9}  {note}")

    print("== ratios ==")
    ratio(
        f"ranx e2e / mobeval e2e, same {rows_sub / 1e6:g} M-row file",
        f"{e2e_ratio:.1f}x",
        f"mobeval faster; target >= 10x: {verdict_of(e2e_ratio >= 10)}",
    )
    ratio(
        "ranx e2e / mobeval e2e, full size (ranx EXTRAPOLATED)",
        f"{extrapolated:.1f}x",
        "ranx not measured at this size",
    )
    ratio(
        "ranx kernels alone / mobeval e2e, same subset file",
        f"{kernel_ratio:.2f}x",
        "> 1: mobeval incl. Parquet I/O beats ranx's bare kernels",
    )
    ratio(
        f"mobeval e2e / read_parquet floor, {rows_full / 1e6:g} M rows",
        f"{floor_ratio:.2f}x",
        f"target <= 2x: {verdict_of(floor_ratio <= 2)}",
    )
    ratio(f"mobeval e2e / read_parquet floor, {rows_sub / 1e6:g} M rows", f"{sub_floor_ratio:.2f}x")
    ratio(
        "cold start cost (cold process - warm process)",
        f"{cold['process_s'] - warm_start['process_s']:.2f} s",
        "Numba compilation of the kernels",
    )
    print(f"load average at end (1/5/15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if source_stamp() != stamp:
        print("note: pipeline/ sources changed during the run; the run used the snapshot")


if __name__ == "__main__":
    main()
