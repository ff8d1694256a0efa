"""All logits metrics in one pass vs the cheapest possible pass and the usual baselines.

A 100,000 x 10,000 float32 matrix (4 GB) is written to a ``.npy`` file in a temp dir and read
memory-mapped in row chunks. Printed: mobeval (acc@1/5/10, mrr, ndcg@1/5/10, weighted and macro
F1, cross-entropy; and all but cross-entropy), one ``np.max(axis=1)`` pass over the same chunks
(the memory-bandwidth floor), ``sklearn.metrics.f1_score`` on the top-1 predictions (if
installed), and a numpy ``argsort`` ranking timed on a slice and scaled to all rows.

    python benchmarks/bench_logits.py [--rows 100000] [--classes 10000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from mobeval.tasks.logits import DEFAULT_CHUNK_ROWS, score_logits


def make_data(folder: Path, rows: int, classes: int) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    x_path, y_path = folder / "logits.npy", folder / "targets.npy"
    x = np.lib.format.open_memmap(x_path, mode="w+", dtype=np.float32, shape=(rows, classes))
    for first in range(0, rows, 4096):
        x[first : first + 4096] = rng.standard_normal(
            (min(4096, rows - first), classes), dtype=np.float32
        )
    x.flush()
    del x
    np.save(y_path, rng.integers(0, classes, size=rows))
    return x_path, y_path


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--classes", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        x_path, y_path = make_data(Path(tmp), args.rows, args.classes)
        x = np.load(x_path, mmap_mode="r")
        y = np.load(y_path)
        score_logits(x[:100], y[:100])  # warm-up: JIT compile / cache load

        def max_pass():
            return np.concatenate(
                [
                    x[i : i + DEFAULT_CHUNK_ROWS].max(axis=1)
                    for i in range(0, len(x), DEFAULT_CHUNK_ROWS)
                ]
            )

        t_max, _ = timed(max_pass)
        t_ours, scores = timed(lambda: score_logits(x_path, y_path, k=(1, 5, 10)))
        print(scores.summary)
        no_ce = ["acc", "mrr", "ndcg", "f1_weighted", "f1_macro"]
        t_no_ce, _ = timed(lambda: score_logits(x_path, y_path, k=(1, 5, 10), metrics=no_ce))
        print(f"mobeval, every metric:  {t_ours:7.2f} s   ratio {t_ours / t_max:.2f}x np.max")
        print(f"mobeval, all but CE:    {t_no_ce:7.2f} s   ratio {t_no_ce / t_max:.2f}x np.max")
        print(f"np.max(axis=1) pass:    {t_max:7.2f} s")

        n_sort = min(2000, len(x))
        t_sort, _ = timed(lambda: np.argsort(-np.asarray(x[:n_sort]), axis=1))
        t_sort *= len(x) / n_sort
        print(
            f"np.argsort ranking:     {t_sort:7.2f} s   (scaled from {n_sort} rows; "
            f"{t_sort / t_ours:.1f}x mobeval's time)"
        )
        try:
            from sklearn.metrics import f1_score
        except ImportError:
            print("scikit-learn not installed: no f1_score baseline")
            return
        pred = np.concatenate([np.argmax(x[i : i + 4096], axis=1) for i in range(0, len(x), 4096)])
        t_f1, f1 = timed(lambda: f1_score(y, pred, average="weighted"))
        ours = scores.summary.filter(scores.summary["metric"] == "f1_weighted")["value"][0]
        print(
            f"sklearn f1_score alone: {t_f1:7.2f} s   (|difference| {abs(f1 - ours):.1e}; "
            "its argmax pass not counted)"
        )


if __name__ == "__main__":
    main()
