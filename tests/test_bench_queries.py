"""benchmarks/bench_vs_query.py's peer queries: every formulation of each workload (``QUERIES``)
computes mobeval's numbers, on inputs where the tie order matters (quantised scores) and some
truths are not listed, so the timings compare like with like."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from mobeval.api import evaluate_nextloc, evaluate_recs

pytest.importorskip("duckdb")
BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_vs_query.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_vs_query", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def summary(evaluation) -> dict[str, float]:
    return dict(zip(evaluation.summary["metric"], evaluation.summary["value"], strict=True))


def nextloc_files(folder: Path) -> tuple[str, str]:
    """300 samples x 12 candidates, scores in steps of 1/4 (ties), the truth listed 2 times in 3."""
    rng = np.random.default_rng(7)
    n, c = 300, 12
    locations = np.stack([rng.choice(60, c, replace=False) for _ in range(n)])
    listed = rng.random(n) < 2 / 3
    truth = np.where(listed, locations[np.arange(n), rng.integers(0, c, n)], 60 + np.arange(n))
    pred = pl.DataFrame(
        {
            "sample_id": np.repeat(np.arange(n), c),
            "location": locations.ravel(),
            "score": rng.integers(0, 4, n * c) / 4,
        }
    )
    paths = str(folder / "truth.parquet"), str(folder / "pred.parquet")
    pl.DataFrame({"sample_id": np.arange(n), "location": truth}).write_parquet(paths[0])
    pred.write_parquet(paths[1])
    return paths


def recs_files(folder: Path) -> tuple[str, str]:
    """200 users x 30 items, scores in steps of 1/5 (ties, item ids of 1 to 4 digits, so text and
    number orders differ), 8 ratings a user from 0 to 3, half of them on listed items."""
    rng = np.random.default_rng(11)
    users, length = 200, 30
    items = np.stack([rng.choice(5000, length, replace=False) for _ in range(users)])
    rated = np.concatenate([items[:, :4], rng.integers(5000, 9000, (users, 4))], axis=1)
    recs = pl.DataFrame(
        {
            "user_id": np.repeat(np.arange(users), length),
            "item_id": items.ravel(),
            "score": rng.integers(0, 5, users * length) / 5,
        }
    )
    ratings = pl.DataFrame(
        {
            "user_id": np.repeat(np.arange(users), 8),
            "item_id": rated.ravel(),
            "rating": rng.integers(0, 4, users * 8),
        }
    )
    paths = str(folder / "ratings.parquet"), str(folder / "recs.parquet")
    ratings.write_parquet(paths[0])
    recs.write_parquet(paths[1])
    return paths


@pytest.mark.parametrize("tool", ["duckdb", "polars"])
def test_every_nextloc_query_gives_mobevals_values(bench, tool, tmp_path):
    truth, pred = nextloc_files(tmp_path)
    ours = summary(
        evaluate_nextloc(
            truth, pred, convention="libcity", k=[1, 5, 10], metrics=["acc@k", "mrr", "ndcg@10"]
        )
    )
    for variant in bench.QUERIES["nextloc"][tool]:
        theirs = bench.WORKERS[tool]("nextloc", truth, pred, variant)
        for metric in bench.NEXTLOC_METRICS:
            assert theirs[metric] == pytest.approx(ours[metric], abs=1e-12), (variant, metric)


@pytest.mark.parametrize("tool", ["duckdb", "polars"])
def test_every_recs_query_gives_mobevals_values(bench, tool, tmp_path):
    ratings, recs = recs_files(tmp_path)
    ours = summary(evaluate_recs(ratings, recs, convention="trec_eval", metrics=bench.RECS_METRICS))
    for variant in bench.QUERIES["recs"][tool]:
        theirs = bench.WORKERS[tool]("recs", ratings, recs, variant)
        for metric in bench.RECS_METRICS:
            assert theirs[metric] == pytest.approx(ours[metric], abs=1e-12), (variant, metric)


def beyond_files(folder: Path) -> tuple[str, str, str]:
    """recs_files' lists and ratings, and training rows of 150 of their 200 users and 100 users
    without a list: 1 to 12 rows a user over 60 of the lists' items and 20 items of no list,
    repeats among them (a repeated row counts again), so some listed items are trained."""
    ratings, recs = recs_files(folder)
    rng = np.random.default_rng(13)
    listed = pl.read_parquet(recs)["item_id"].unique().sort().to_numpy()
    pool = np.concatenate([rng.choice(listed, 60, replace=False), 9000 + np.arange(20)])
    users = np.concatenate([np.arange(50, 200), np.arange(1000, 1100)])
    rows = rng.integers(1, 13, len(users))
    train = pl.DataFrame(
        {"user_id": np.repeat(users, rows), "item_id": rng.choice(pool, int(rows.sum()))}
    )
    path = str(folder / "train.parquet")
    train.write_parquet(path)
    return ratings, recs, path


@pytest.mark.parametrize("tool", ["duckdb", "polars"])
def test_every_beyond_query_gives_mobevals_values(bench, tool, tmp_path):
    ratings, recs, train = beyond_files(tmp_path)
    ours = summary(
        evaluate_recs(
            ratings,
            recs,
            convention="trec_eval",
            metrics=list(bench.BEYOND_METRICS),
            population_convention="msrecommenders",
            train=train,
        )
    )
    for variant in bench.QUERIES["beyond"][tool]:
        theirs = bench.WORKERS[tool]("beyond", train, recs, variant)
        for metric in bench.BEYOND_METRICS:
            assert theirs[metric] == pytest.approx(ours[metric], abs=1e-12), (variant, metric)
