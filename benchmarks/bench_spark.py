"""The Spark engine against Spark's own floor and the local engine, in one session (issue 14).

    python benchmarks/bench_spark.py --samples 100000 --candidates 50 --cores 2 --repeat 3

Next-location scoring (LibCity convention, k = 1, 5, 10) of ``samples x candidates`` long-form
rows (benchmarks/datagen.py, cached under bench_data/). Printed, in seconds (medians of
``--repeat``, the cases taken in turn so that a change of load hits them alike):

* Spark session start (JVM + SparkContext), once per process;
* the first evaluation of the session (tiny input: the Python workers start, the Numba kernels
  load from their cache, the JVM runs its code paths for the first time);
* the fixed cost of one (city, model) result: a tiny evaluation (the 3000-sample sample city),
  warm (listing, schemas, the scoring job, the writes and renames);
* the fixed cost per result in a job of ``--models`` models of that tiny city (one truth, the
  predictions in one format: the Spark engine scores them in one Spark job), the job's time
  divided by the models;
* on the large input: mobeval on Spark; Spark's own floor, the same rows (truth and predictions,
  the columns mobeval reads) repartitioned by the key into as many partitions and sorted within
  them, into the ``noop`` sink; the local engine (Numba threads = ``--cores``);
* mobeval's size-dependent part (large minus tiny), its ratio to the floor, and the per-core
  rates: how many Spark cores match the local engine on ``--cores`` cores;
* the same ratios in CPU seconds (this process, the JVM and the Python workers: the process tree,
  ``psutil``), which other jobs on the machine disturb far less than wall time.

The code runs from a snapshot of pipeline/ taken at start (``datagen.snapshot_pipeline``), so edits
made meanwhile do not count. Needs ``pip install 'mobeval[spark]'`` and Java 17+.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from datagen import nextloc_files, snapshot_pipeline  # noqa: E402
from measure import load, machine_line  # noqa: E402

OPTIONS = {"k": [1, 5, 10], "convention": "libcity"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--candidates", type=int, default=50)
    parser.add_argument("--cores", type=int, default=2, help="Spark local[N] and Numba threads")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--models", type=int, default=10, help="models in the tiny job")
    args = parser.parse_args()
    truth, pred = nextloc_files(args.samples, args.candidates)
    rows = args.samples * args.candidates
    before = load()
    with tempfile.TemporaryDirectory(prefix="mobeval-bench-spark-") as scratch:
        code = snapshot_pipeline(str(Path(scratch) / "code"))
        sys.path.insert(0, code)
        os.environ["NUMBA_NUM_THREADS"] = str(args.cores)
        os.environ["PYSPARK_PYTHON"] = sys.executable
        results = run(args, truth, pred, Path(scratch))
    print(f"machine: {machine_line()}; load average before: {before}, after: {load()}")
    print(f"nextloc, {args.samples:,} samples x {args.candidates} candidates = {rows:,} rows")
    width = max(len(name) for name in results)
    print(f"  {'':<{width}}      wall       CPU")
    for name, (wall, cpu) in results.items():
        unit = "x" if name.endswith(("ratio", "cores")) else "s"
        cpu_text = "" if cpu is None else f"{cpu:8.2f} {unit}"
        print(f"  {name:<{width}}  {wall:8.2f} {unit}  {cpu_text}")


def cpu_seconds() -> float:
    """CPU seconds so far of this process and its descendants (the JVM, the Python workers),
    including their children that have ended."""
    import psutil

    me = psutil.Process()
    total = 0.0
    for process in [me, *me.children(recursive=True)]:
        try:
            times = process.cpu_times()
        except psutil.Error:  # ended meanwhile: counted in its parent's children times
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


def timed(case) -> tuple[float, float]:
    """(wall, CPU) seconds of ``case()``."""
    cpu, started = cpu_seconds(), time.perf_counter()
    case()
    return time.perf_counter() - started, cpu_seconds() - cpu


def run(args, truth: Path, pred: Path, scratch: Path) -> dict[str, tuple[float, float | None]]:
    import numba
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from mobeval.api import evaluate_nextloc
    from mobeval.engines.spark import BYTES_PER_PARTITION
    from mobeval.jobs import load_job, run_job

    assert Path(evaluate_nextloc.__code__.co_filename).is_relative_to(scratch)  # the snapshot
    numba.set_num_threads(args.cores)
    sample = ROOT / "data_samples" / "nextloc" / "tky"
    evaluate_nextloc(truth, pred, out=scratch / "warm", progress=False, **OPTIONS)  # kernels
    started = time.perf_counter()
    spark = (
        SparkSession.builder.master(f"local[{args.cores}]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "4g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    results = {"Spark session start (JVM + context)": (time.perf_counter() - started, None)}
    partitions = max(
        spark.sparkContext.defaultParallelism,
        -(-(truth.stat().st_size + pred.stat().st_size) // BYTES_PER_PARTITION),
    )
    runs = iter(range(10**6))

    def spark_run(truth_path, pred_path) -> None:
        out = scratch / f"spark{next(runs)}"
        evaluate_nextloc(truth_path, pred_path, out=out, spark=spark, progress=False, **OPTIONS)

    job_file = scratch / "tiny_job.toml"
    models = "\n".join(f'm{i} = "{sample / "markov.parquet"}"' for i in range(args.models))
    job_file.write_text(
        f'[[tasks]]\ntype = "nextloc"\ncity = "tky"\ntruth = "{sample / "truth.parquet"}"\n'
        f'k = [1, 5, 10]\nconvention = "libcity"\n[tasks.models]\n{models}\n'
    )

    def job_run() -> None:
        """A job of ``--models`` tiny results sharing a truth."""
        out = scratch / f"job{next(runs)}"
        run_job(load_job(job_file, out=out), spark=spark, progress=False, log=lambda _: None)

    def local_run() -> None:
        evaluate_nextloc(truth, pred, out=scratch / f"local{next(runs)}", progress=False, **OPTIONS)

    def floor_run(hand_over: bool = False) -> None:
        """The same rows and columns, hash-partitioned by the key and sorted, into no sink; with
        ``hand_over``, also handed to Python in Arrow batches (``mapInArrow``) that are dropped."""
        left = spark.read.parquet(str(truth)).select(
            "sample_id", F.lit(0).alias("side"), "location", F.lit(None).cast("double")
        )
        right = spark.read.parquet(str(pred)).select(
            "sample_id", F.lit(1).alias("side"), "location", "score"
        )
        floor = (
            left.union(right)
            .repartition(partitions, "sample_id")
            .sortWithinPartitions("sample_id", "side")
        )
        if hand_over:
            floor = floor.mapInArrow(_dropped, "sample_id long")
        floor.write.format("noop").mode("overwrite").save()

    tiny = functools.partial(spark_run, sample / "truth.parquet", sample / "markov.parquet")
    results["first (tiny) evaluation of the session"] = timed(tiny)
    floor_run()  # the JVM's first pass over the large file
    cases = {
        "tiny": tiny,
        "job": job_run,
        "large": functools.partial(spark_run, truth, pred),
        "floor": floor_run,
        "hand_over": functools.partial(floor_run, hand_over=True),
        "local": local_run,
    }
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for _ in range(args.repeat):
        for name, case in cases.items():
            times[name].append(timed(case))
    for kind, index in (("wall", 0), ("CPU", 1)):
        median = {name: statistics.median(t[index] for t in got) for name, got in times.items()}
        size_part = median["large"] - median["tiny"]
        # Spark cores whose size-dependent throughput equals the local engine's on --cores
        cores = args.cores * size_part / median["local"] if kind == "wall" else None
        figures = {
            "fixed cost per result (tiny evaluation, warm)": median["tiny"],
            f"  in a job of {args.models} tiny models of one truth, per result": median["job"]
            / args.models,
            f"mobeval on Spark local[{args.cores}], large": median["large"],
            "  of which size-dependent (large - tiny)": size_part,
            f"Spark's floor: repartition({partitions}) + sort, noop sink": median["floor"],
            "size-dependent / floor ratio": size_part / median["floor"],
            "the floor + Spark's hand-over to Python (mapInArrow, batches dropped)": median[
                "hand_over"
            ],
            "  hand-over floor / floor ratio": median["hand_over"] / median["floor"],
            f"local engine, {args.cores} Numba threads": median["local"],
            "Spark cores to match the local engine, cores": cores,
        }
        for name, value in figures.items():
            wall, _ = results.get(name, (None, None))
            results[name] = (value, None) if kind == "wall" else (wall, value)
    spark.stop()
    return results


def _dropped(batches):
    """A mapInArrow function that reads every batch and returns none."""
    for _ in batches:
        pass
    return iter(())


if __name__ == "__main__":
    main()
