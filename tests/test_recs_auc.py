"""RecBole's AUC (``auc``): one ROC curve over every scored (user, item) pair of the lists, a
rated pair positive. Against RecBole's own test cases, golden values of RecBole's code (with
ties, -0.0 among them), a plain-Python count of the pairs, and the same bits for any chunking,
user order and merge order."""

from __future__ import annotations

import json
import math
import pickle
import random
import tempfile

import numpy as np
import polars as pl
import pytest

from mobeval.api import evaluate_recs
from mobeval.cli import main
from mobeval.errors import ConfigError
from mobeval.kernels.auc import score_keys
from mobeval.tasks import recs_population
from mobeval.tasks.recs_population import ScoreCounts
from tests.conftest import GOLDEN, REPO_ROOT
from tests.test_recs_engine import shuffle_users

SAMPLES = REPO_ROOT / "data_samples" / "recs"
GOLDEN_AUC = json.loads((GOLDEN / "beyond" / "auc.json").read_text())


def _pairs(users: list[int], scores: list[float], labels: list[int]):
    """Lists with one row per pair (user ``users[i]``, item ``i``) and the ratings of the
    label-1 pairs."""
    lists = pl.DataFrame(
        {"user_id": users, "item_id": list(range(len(users))), "score": [float(s) for s in scores]}
    )
    rated = [(u, i, 1.0) for i, (u, label) in enumerate(zip(users, labels, strict=True)) if label]
    ratings = pl.DataFrame(rated, schema=["user_id", "item_id", "rating"], orient="row")
    return ratings, lists


def _auc(ratings, lists, **options) -> tuple[float, int]:
    result = evaluate_recs(ratings, lists, metrics=["auc"], k=None, **options)
    row = result.summary.filter(pl.col("metric") == "auc")
    return row["value"].item(), row["n"].item()


@pytest.mark.parametrize(
    ("preds", "trues", "want"),
    [([0.1, 0.9, 0.2, 0.3], [1, 0, 1, 1], 0), ([0.7, 0.5, 0.6, 0.2], [0, 1, 1, 0], 2 / (2 * 2))],
)
def test_recbole_own_test_cases(preds, trues, want):
    # RecBole tests/metrics/test_loss_metrics.py, TestCases preds_i / trues_i, one user
    assert _auc(*_pairs([0] * 4, preds, trues)) == (want, 4)


def test_golden_value_of_recbole_code_with_ties():
    case = GOLDEN_AUC["ties_input"]
    users = [i % 7 for i in range(len(case["score"]))]  # the pairs spread over 7 users
    value, n = _auc(*_pairs(users, case["score"], case["label"]))
    assert value == pytest.approx(GOLDEN_AUC["cases"]["ties"], abs=1e-9)
    assert n == len(case["score"])


@pytest.mark.parametrize("model", ["mf", "popular"])
def test_golden_values_of_recbole_code(model):
    value, n = _auc(SAMPLES / "ratings.parquet", SAMPLES / f"{model}.parquet")
    assert value == pytest.approx(GOLDEN_AUC["cases"][model], abs=1e-9)


def _oracle(ratings: pl.DataFrame, lists: pl.DataFrame) -> float:
    """Every (positive, negative) pair counted: 1 in order, 1/2 tied; over P N."""
    rated = set(zip(ratings["user_id"], ratings["item_id"], strict=True))
    seen, positives, negatives = set(), [], []
    for user, item, score in lists.iter_rows():
        if (user, item) not in seen:  # a repeated item counts once, its first row
            seen.add((user, item))
            (positives if (user, item) in rated else negatives).append(score)
    wins = sum((p > q) + (p == q) / 2 for p in positives for q in negatives)
    return wins / (len(positives) * len(negatives))


def test_plain_python_and_the_same_bits_for_any_chunking_and_order():
    rng = random.Random(7)
    rows, grid = [], [-1.0, -0.0, 0.0, 0.5, 1.0, 2.0, 1e-300]  # ties, -0.0 == 0.0
    for user in range(40):
        items = rng.sample(range(30), rng.randint(1, 12))
        items += items[:1]  # a repeated item: its first row counts
        rows += [(user, item, rng.choice(grid)) for item in items]
    lists = pl.DataFrame(rows, schema=["user_id", "item_id", "score"], orient="row")
    rated = [(u, i, 1.0) for u, i, _ in rows if rng.random() < 0.4]
    rated += [(99, 1, 1.0)]  # a rating of a user without a list: not a scored pair
    options = {"convention": "relison"}  # users on one side only allowed (ClayRS refuses them)
    ratings = pl.DataFrame(rated, schema=["user_id", "item_id", "rating"], orient="row").unique(
        ["user_id", "item_id"]
    )
    value, n = _auc(ratings, lists, **options)
    assert value == pytest.approx(_oracle(ratings, lists), abs=1e-15)
    assert n == lists.unique(["user_id", "item_id"]).height
    for chunk_rows, seed in ((1, 1), (5, 2), (64, 3)):
        again = _auc(ratings, shuffle_users(lists, seed), chunk_rows=chunk_rows, **options)
        assert again == (value, n)


def test_score_counts_merge_in_any_order_gives_the_same_counts():
    rng = np.random.default_rng(3)
    parts = []
    for _ in range(6):
        size = int(rng.integers(1, 50))
        parts.append((np.round(rng.normal(size=size), 1), pl.Series(rng.random(size) < 0.3)))
    values = []
    for order in (range(6), reversed(range(6)), [3, 0, 5, 1, 4, 2]):
        whole, halves = ScoreCounts(), [ScoreCounts(), ScoreCounts()]
        for index in order:
            halves[index % 2].add(*parts[index])
        whole.merge(halves[1])
        whole.merge(halves[0])
        values.append(whole.auc())
    scores = np.concatenate([p[0] for p in parts])
    positive = np.concatenate([p[1].to_numpy() for p in parts])
    assert values == [(_pairs_auc(scores, positive), len(scores))] * 3


def _pairs_auc(scores: np.ndarray, positive: np.ndarray) -> float:
    """Plain Python: the share of (positive, negative) pairs in order, a tie counting one half."""
    pos = [s for s, p in zip(scores.tolist(), positive.tolist(), strict=True) if p]
    neg = [s for s, p in zip(scores.tolist(), positive.tolist(), strict=True) if not p]
    doubled = sum(2 * (p > n) + (p == n) for p in pos for n in neg)
    return doubled / (2 * len(pos) * len(neg))


def test_spilled_runs_give_the_same_bits_and_memory_stays_within_the_budget(monkeypatch, tmp_path):
    # real-valued scores (nearly all distinct) with ties among them; counts folded chunk by chunk
    # with a budget far below the distinct scores: sorted runs spilled, read back in blocks
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    rng = np.random.default_rng(11)
    scores = np.concatenate([rng.normal(size=3000), np.round(rng.normal(size=1000), 1)])
    scores[:10] = -0.0
    positive = pl.Series(rng.random(len(scores)) < 0.3)
    whole = ScoreCounts()
    whole.add(scores, positive)
    assert not list(tmp_path.iterdir())  # within the default budget: nothing on disk
    want = whole.auc()
    assert want[0] == _pairs_auc(scores, positive.to_numpy())
    for budget, chunk, seed in ((2, 97, 1), (16, 1, 2), (100, 13, 3), (1000, 250, 4)):
        monkeypatch.setattr(recs_population, "AUC_TABLE_ROWS", budget)
        order = np.random.default_rng(seed).permutation(len(scores))
        counts, peak = ScoreCounts(), 0
        for start in range(0, len(scores), chunk):
            rows = order[start : start + chunk]
            part = ScoreCounts()
            part.add(scores[rows], positive.gather(rows))
            counts.merge(part)
            peak = max(peak, counts.rows_in_memory)
        assert peak <= budget and list(tmp_path.glob("*/run-*.bin"))  # spilled to disk
        assert counts.auc() == want
        assert not list(tmp_path.iterdir())  # the runs removed with their folder


def test_unpickled_counts_keep_aucs_budget(monkeypatch, tmp_path):
    """Counts sent through a pickle (another process's fold) stay within auc's budget."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(recs_population, "AUC_TABLE_ROWS", 16)
    rng = np.random.default_rng(7)
    scores, positive = rng.normal(size=600), pl.Series(rng.random(600) < 0.4)
    counts = pickle.loads(pickle.dumps(ScoreCounts()))
    peak = 0
    for start in range(0, 600, 50):
        counts.add(scores[start : start + 50], positive[start : start + 50])
        peak = max(peak, counts.rows_in_memory)
    assert peak <= 16
    assert counts.auc() == (_pairs_auc(scores, positive.to_numpy()), 600)


def test_a_run_that_spills_gives_the_same_bits_for_any_chunking(monkeypatch):
    rng = np.random.default_rng(5)
    users = rng.integers(0, 60, size=900)
    lists = pl.DataFrame(
        {"user_id": users, "item_id": np.arange(900), "score": rng.normal(size=900)}
    )
    ratings = lists.filter(pl.Series(rng.random(900) < 0.3)).select(
        "user_id", "item_id", pl.lit(1.0).alias("rating")
    )
    options = {"convention": "relison"}
    want = _auc(ratings, lists, **options)
    monkeypatch.setattr(recs_population, "AUC_TABLE_ROWS", 7)
    for chunk_rows, seed in ((1, 1), (40, 2), (5000, 3)):
        assert _auc(ratings, shuffle_users(lists, seed), chunk_rows=chunk_rows, **options) == want


def test_score_keys_order_the_scores():
    scores = np.array([0.5, -0.0, 0.0, -1.5, np.inf, -np.inf, 5e-324, -5e-324, 1e300, -1e300])
    keys = score_keys(scores)
    for i in range(len(scores)):
        for j in range(len(scores)):
            assert (keys[i] < keys[j]) == (scores[i] < scores[j])
            assert (keys[i] == keys[j]) == (scores[i] == scores[j])


def test_undefined_refused_and_bad_scores():
    # no negative: NaN (RecBole warns and returns NaN)
    value, n = _auc(*_pairs([0, 0], [0.3, 0.1], [1, 1]))
    assert math.isnan(value) and n == 2
    ratings, lists = _pairs([0, 0], [0.3, 0.1], [1, 0])
    with pytest.raises(ConfigError, match="takes no cutoff"):
        evaluate_recs(ratings, lists, metrics=["auc@5"], k=None)


def test_a_nan_score_is_an_input_error_naming_the_pair(tmp_path, capsys):
    ratings, lists = _pairs([0, 0, 1], [0.3, float("nan"), 0.2], [1, 0, 1])
    ratings.write_parquet(tmp_path / "ratings.parquet")
    lists.write_parquet(tmp_path / "recs.parquet")
    code = main(
        [
            "recs",
            "--ratings",
            str(tmp_path / "ratings.parquet"),
            "--recs",
            str(tmp_path / "recs.parquet"),
            "--metrics",
            "auc",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "recs.parquet" in err and "score" in err and "NaN" in err
    assert not (tmp_path / "out").exists()
