"""The same next-location evaluation on the local engine and on Spark (local[N]), fixed costs apart.

    python benchmarks/bench_spark.py --samples 100000 --candidates 50 --cores 2

Rows printed (seconds, best of ``--repeat`` where repeated):

* Spark session start (JVM + SparkContext): paid once per process;
* Spark, first (tiny) evaluation: also starts the Python workers and loads the Numba kernels
  from the on-disk cache in each of them, and the JVM runs its code paths for the first time;
* Spark, tiny evaluation (the 3000-sample sample city), warm: the fixed cost of one (city, model)
  (listing, schema, a shuffle job, two writes, renames);
* Spark on the large input: its first run (the JVM still warming up), then warm; the local engine
  (warm, Numba threads = ``--cores``) on the same files;
* Spark minus the tiny evaluation: the size-dependent part.

Inputs come from benchmarks/datagen.py (cached under bench_data/); outputs go to a temporary
directory. Needs ``pip install 'mobeval[spark]'`` and Java 17+.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--candidates", type=int, default=50)
    parser.add_argument("--cores", type=int, default=2, help="Spark local[N] and Numba threads")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    os.environ.setdefault("NUMBA_NUM_THREADS", str(args.cores))
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

    import numba

    from benchmarks.datagen import nextloc_files
    from mobeval.api import evaluate_nextloc

    truth, pred = nextloc_files(args.samples, args.candidates)
    rows = args.samples * args.candidates
    sample_truth = ROOT / "data_samples" / "nextloc" / "tky" / "truth.parquet"
    sample_pred = ROOT / "data_samples" / "nextloc" / "tky" / "markov.parquet"
    options = {"k": [1, 5, 10], "convention": "libcity"}
    results: list[tuple[str, float]] = []

    with tempfile.TemporaryDirectory(prefix="mobeval-bench-spark-") as directory:
        out = Path(directory)
        numba.set_num_threads(min(args.cores, numba.config.NUMBA_NUM_THREADS))
        evaluate_nextloc(truth, pred, out=out / "warmup", **options)  # load the kernels
        local = []
        for index in range(args.repeat):
            started = time.perf_counter()
            evaluate_nextloc(truth, pred, out=out / f"local{index}", progress=False, **options)
            local.append(time.perf_counter() - started)

        started = time.perf_counter()
        from pyspark.sql import SparkSession

        from mobeval.api import evaluate_nextloc as evaluate

        spark = (
            SparkSession.builder.master(f"local[{args.cores}]")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.memory", "4g")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        results.append(("Spark session start (JVM + context)", time.perf_counter() - started))

        def timed(truth_path, pred_path, name) -> float:
            started = time.perf_counter()
            evaluate(truth_path, pred_path, out=out / name, spark=spark, **options)
            return time.perf_counter() - started

        cold = timed(sample_truth, sample_pred, "cold")
        results.append(("Spark, first (tiny) evaluation of the session", cold))
        tiny = min(timed(sample_truth, sample_pred, f"tiny{i}") for i in range(args.repeat))
        results.append(("Spark, tiny evaluation (3000 samples), warm", tiny))
        results.append((f"Spark local[{args.cores}], first large run", timed(truth, pred, "first")))
        warm = min(timed(truth, pred, f"spark{i}") for i in range(args.repeat))
        results.append((f"Spark local[{args.cores}], warm", warm))
        results.append((f"local engine, {args.cores} Numba threads, warm", min(local)))
        results.append(("Spark warm minus tiny (size-dependent part)", warm - tiny))
        spark.stop()

    print(f"nextloc, {args.samples:,} samples x {args.candidates} candidates = {rows:,} rows")
    width = max(len(name) for name, _ in results)
    for name, seconds in results:
        print(f"  {name:<{width}}  {seconds:8.2f} s")
    print(f"  {'Spark warm / local engine':<{width}}  {warm / min(local):8.2f} x")


if __name__ == "__main__":
    main()
