"""Logits: every metric in one pass vs one ``np.max(axis=1)`` pass over the same matrix.

    python benchmarks/bench_logits.py [--rows 100000] [--classes 10000] [--repeat 3]

The float32 matrix (standard normal, seed 0; 4 GB at the default size) and its int64 targets
are written once to ``bench_data/`` (git-ignored, cached). One process times, alternating, each
case ``--repeat`` times and prints the medians:

* ``np.max``: ``np.load(path, mmap_mode="r")`` and ``.max(axis=1)`` over row chunks of
  ``DEFAULT_CHUNK_ROWS``: one read of the matrix by single-threaded NumPy, the memory floor;
* mobeval, every metric: ``score_logits(path, targets)``: acc@1/5/10, mrr, ndcg@1/5/10,
  f1_weighted, f1_macro and cross_entropy (Numba threads: all cores);
* mobeval, all but cross-entropy.

Each timed call opens the file anew (the same page-cache reads and page faults on both sides).
An untimed round first fills the page cache and loads the kernels. Then, once: a NumPy
``argsort`` ranking of 2,000 rows scaled to all, and scikit-learn's ``f1_score`` if installed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np
from measure import load

from mobeval.tasks.logits import DEFAULT_CHUNK_ROWS, score_logits

BENCH_DATA = Path(__file__).resolve().parents[1] / "bench_data"


def make_data(rows: int, classes: int) -> tuple[Path, Path]:
    """(logits .npy, targets .npy) in bench_data/, written once per size."""
    BENCH_DATA.mkdir(exist_ok=True)
    x_path = BENCH_DATA / f"logits_{rows}x{classes}.npy"
    y_path = BENCH_DATA / f"logits_{rows}x{classes}_targets.npy"
    if x_path.exists() and y_path.exists():
        return x_path, y_path
    rng = np.random.default_rng(0)
    part = x_path.with_suffix(".part")
    x = np.lib.format.open_memmap(part, mode="w+", dtype=np.float32, shape=(rows, classes))
    for first in range(0, rows, 4096):
        x[first : first + 4096] = rng.standard_normal(
            (min(4096, rows - first), classes), dtype=np.float32
        )
    x.flush()
    del x
    np.save(y_path, rng.integers(0, classes, size=rows))
    part.rename(x_path)
    return x_path, y_path


def max_pass(x_path: Path) -> np.ndarray:
    x = np.load(x_path, mmap_mode="r")
    return np.concatenate(
        [x[i : i + DEFAULT_CHUNK_ROWS].max(axis=1) for i in range(0, len(x), DEFAULT_CHUNK_ROWS)]
    )


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--classes", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import numba

    lines = Path("/proc/cpuinfo").read_text().splitlines()
    model = next((line.split(":", 1)[1].strip() for line in lines if "model name" in line), "?")
    print(f"machine: {os.cpu_count()} CPUs ({model}), numba {numba.__version__} threads "
          f"{numba.get_num_threads()}, numpy {np.__version__}")  # fmt: skip
    print(f"load average at start (1/5/15 min): {load()}")
    t0 = time.perf_counter()
    x_path, y_path = make_data(args.rows, args.classes)
    size = x_path.stat().st_size
    ready = time.perf_counter() - t0
    print(f"input: {x_path} ({size / 2**30:.2f} GiB float32), ready in {ready:.1f} s")

    no_ce = ["acc", "mrr", "ndcg", "f1_weighted", "f1_macro"]
    cases = {
        "np.max(axis=1) pass": lambda: max_pass(x_path),
        "mobeval, every metric": lambda: score_logits(x_path, y_path, k=(1, 5, 10)),
        "mobeval, all but CE": lambda: score_logits(x_path, y_path, k=(1, 5, 10), metrics=no_ce),
    }
    for fn in cases.values():  # page cache, kernels
        fn()
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.repeat):
        for name, fn in cases.items():
            times[name].append(timed(fn))
    median = {name: statistics.median(v) for name, v in times.items()}
    floor = median["np.max(axis=1) pass"]
    print(f"\nmedian of {args.repeat}, alternating (runs in seconds):")
    for name, value in median.items():
        runs = ", ".join(f"{v:.2f}" for v in times[name])
        print(f"  {name:24s} {value:6.2f} s  {value / floor:5.2f}x np.max   ({runs})")
    print(f"  memory read by np.max: {size / floor / 2**30:.1f} GiB/s")
    scores = score_logits(x_path, y_path, k=(1, 5, 10)).summary
    values = zip(scores["metric"], scores["value"], strict=True)
    print("  " + ", ".join(f"{m} {v:.6g}" for m, v in values))

    x = np.load(x_path, mmap_mode="r")
    n_sort = min(2000, len(x))
    t_sort = timed(lambda: np.argsort(-np.asarray(x[:n_sort]), axis=1)) * len(x) / n_sort
    print(f"np.argsort ranking: {t_sort:.2f} s (scaled from {n_sort} rows)")
    try:
        from sklearn.metrics import f1_score
    except ImportError:
        print("scikit-learn not installed: no f1_score baseline")
    else:
        y = np.load(y_path)
        pred = np.concatenate([np.argmax(x[i : i + 4096], axis=1) for i in range(0, len(x), 4096)])
        t_f1 = timed(lambda: f1_score(y, pred, average="weighted"))
        print(f"sklearn f1_score alone: {t_f1:.2f} s (its argmax pass not counted)")
    print(f"load average at end (1/5/15 min): {load()}")


if __name__ == "__main__":
    main()
