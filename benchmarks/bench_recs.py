"""mobeval vs ranx, end to end from the same Parquet files.

100,000 users x 100 recommended items (unique scores), 20 relevant truth items per user (about
half of them recommended). Both sides read the Parquet files, score precision / recall / map /
ndcg / mrr at 10 and 100 with trec_eval conventions, and agree to 1e-9.

    python benchmarks/bench_recs.py [--users 100000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

from mobeval.tasks.recs import score_recs_frame

METRICS = ["precision", "recall", "map", "ndcg", "mrr"]
CUTOFFS = [10, 100]


def make_data(folder: Path, n_users: int, n_recs: int = 100, n_rel: int = 20) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    n_items = 50_000
    users = np.repeat(np.arange(n_users, dtype=np.int64), n_recs)
    # distinct items per list: a random offset plus a strided walk
    offsets = rng.integers(0, n_items, size=n_users)
    items = (np.repeat(offsets, n_recs) + np.tile(np.arange(n_recs) * 37, n_users)) % n_items
    scores = np.tile(np.linspace(1.0, 0.01, n_recs), n_users) + np.repeat(
        rng.random(n_users) * 1e-3, n_recs
    )
    recs = folder / "recs.parquet"
    pl.DataFrame({"user_id": users, "item_id": items, "score": scores}).write_parquet(recs)
    # half of the relevant items come from the list, half from elsewhere
    t_users = np.repeat(np.arange(n_users, dtype=np.int64), n_rel)
    picks = rng.integers(0, n_recs, size=(n_users, n_rel // 2))
    from_list = (offsets[:, None] + picks * 37) % n_items
    outside = (offsets[:, None] + n_recs * 37 + np.arange(n_rel - n_rel // 2) * 101) % n_items
    t_items = np.concatenate([from_list, outside], axis=1).ravel()
    ratings = rng.integers(1, 6, size=n_users * n_rel).astype(np.float64)
    truth = folder / "ratings.parquet"
    frame = pl.DataFrame({"user_id": t_users, "item_id": t_items, "rating": ratings})
    frame.unique(["user_id", "item_id"], keep="first").write_parquet(truth)
    return recs, truth


def run_mobeval(recs: Path, truth: Path) -> dict[str, float]:
    scores = score_recs_frame(
        pl.read_parquet(recs),
        pl.read_parquet(truth),
        metrics=METRICS,
        cutoffs=CUTOFFS,
        convention="trec_eval",
        gain="binary",
        path_recs=recs,
        path_ratings=truth,
    )
    summary = scores.summary()
    return dict(zip(summary["metric"], summary["value"], strict=True))


def run_ranx(recs: Path, truth: Path) -> dict[str, float]:
    import pandas as pd
    from ranx import Qrels, Run, evaluate

    qrels_df = pd.read_parquet(truth)
    run_df = pd.read_parquet(recs)
    for df in (qrels_df, run_df):
        df["user_id"] = df["user_id"].astype(str).astype(object)
        df["item_id"] = df["item_id"].astype(str).astype(object)
    qrels_df["rating"] = 1  # binary relevance: every truth item relevant (rating >= 1)
    qrels = Qrels.from_df(qrels_df, q_id_col="user_id", doc_id_col="item_id", score_col="rating")
    run = Run.from_df(run_df, q_id_col="user_id", doc_id_col="item_id", score_col="score")
    names = [f"{m}@{k}" for m in METRICS for k in CUTOFFS]
    return evaluate(qrels, run, names)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        recs, truth = make_data(Path(tmp), args.users)
        run_mobeval(recs, truth)  # warm-up: JIT compile / cache load
        t0 = time.perf_counter()
        ours = run_mobeval(recs, truth)
        t_ours = time.perf_counter() - t0
        print(f"mobeval: {t_ours:.2f} s")
        try:
            run_ranx(recs, truth)  # warm-up: ranx JIT
        except ImportError:
            print("ranx not installed: no comparison")
            return
        t0 = time.perf_counter()
        theirs = run_ranx(recs, truth)
        t_ranx = time.perf_counter() - t0
        print(f"ranx:    {t_ranx:.2f} s")
        print(f"ratio ranx / mobeval: {t_ranx / t_ours:.1f}x")
        worst = max(abs(ours[m] - theirs[m]) for m in theirs)
        print(f"largest |difference| over {len(theirs)} metrics: {worst:.2e}")


if __name__ == "__main__":
    main()
