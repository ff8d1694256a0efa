"""Item counts folded in batches (:class:`mobeval.tasks.recs_inputs.ItemCounts`): the ids held,
then counted by their sorted runs and summed into the counts so far, against
``collections.Counter``, whatever the pieces they come in, the folds and the merges; and the
population metrics that read them, the same bits with a fold every few ids as with none."""

from __future__ import annotations

import pickle
from collections import Counter

import numpy as np
import polars as pl
import pytest

from mobeval.api import evaluate_recs
from mobeval.tasks import recs_inputs
from mobeval.tasks.recs_inputs import ItemCounts


def _as_counter(counts: ItemCounts) -> Counter:
    table = counts.table()
    assert table.schema["count"] == pl.Int64
    assert table["item_id"].is_unique().all()
    return Counter(dict(zip(table["item_id"].to_list(), table["count"].to_list(), strict=True)))


def _pieces(ids: list, rng) -> list[pl.Series]:
    """``ids`` cut at random places (empty pieces included)."""
    cuts = np.sort(rng.integers(0, len(ids) + 1, 12))
    bounds = [0, *cuts.tolist(), len(ids)]
    return [pl.Series("item_id", ids[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]


@pytest.mark.parametrize("fold", [1, 3, 50, 10**6])
@pytest.mark.parametrize("kind", ["int", "str"])
def test_counts_against_counter(monkeypatch, fold, kind):
    monkeypatch.setattr(recs_inputs, "FOLD_IDS", fold)
    rng = np.random.default_rng(fold)
    ids = rng.integers(-5, 40, 400).tolist()
    if kind == "str":
        ids = [f"i{i:03d}" if i % 3 else str(i) for i in ids]
    counts = ItemCounts()
    for piece in _pieces(ids, rng):
        counts.add(piece)
        assert counts.held_ids < fold or not counts.held
    assert _as_counter(counts) == Counter(ids)


@pytest.mark.parametrize("fold", [2, 7, 10**6])
def test_merges_against_counter(monkeypatch, fold):
    """Counts merged from parts with ids held and ids counted, into parts of both kinds."""
    monkeypatch.setattr(recs_inputs, "FOLD_IDS", fold)
    rng = np.random.default_rng(fold)
    parts, everything = [], []
    for size in (0, 5, 30, 1, 90):
        ids = rng.integers(0, 25, size).tolist()
        everything += ids
        part = ItemCounts()
        for piece in _pieces(ids, rng):
            part.add(piece)
        parts.append(part)
    whole = ItemCounts()
    for part in parts:
        whole.merge(part)
    assert _as_counter(whole) == Counter(everything)
    copy = pickle.loads(pickle.dumps(parts[-1]))  # as a Spark partition's state travels
    assert not copy.held and _as_counter(copy) == Counter(everything[-90:])
    assert ItemCounts().table() is None
    empty = ItemCounts()
    empty.add(pl.Series("item_id", [], dtype=pl.Int64))
    assert empty.table() is None


def test_population_metrics_the_same_with_folds_every_few_ids(monkeypatch, tmp_path):
    """coverage, gini, avg_popularity and the long tail's counts (the lists' and the ratings')
    with a fold every 7 ids: the same values as with one fold at the end, and the long tail's
    counts those of plain-Python counting of each list's first 3 items."""
    rng = np.random.default_rng(5)
    users, length = 50, 12
    recs = pl.DataFrame(
        {
            "user_id": np.repeat(np.arange(users), length),
            "item_id": np.concatenate(
                [rng.choice(80, length, replace=False) for _ in range(users)]
            ),
            "score": np.tile(np.arange(length, 0, -1, dtype=np.float64), users),
        }
    )
    ratings = recs.filter(pl.col("score") > 9).select(
        "user_id", "item_id", rating=pl.lit(1.0, dtype=pl.Float64)
    )
    train = pl.DataFrame({"item_id": rng.choice(80, 500)})
    train.write_parquet(tmp_path / "train.parquet")
    pl.DataFrame({"item_id": np.arange(100)}).write_parquet(tmp_path / "catalogue.parquet")
    metrics = ["coverage@3", "gini@3", "avg_popularity@3", "coverage@12", "long_tail@3"]

    def run():
        return evaluate_recs(
            ratings,
            recs,
            metrics=metrics,
            k=None,
            convention="trec_eval",
            population_convention="recbole",
            train=str(tmp_path / "train.parquet"),
            catalogue=str(tmp_path / "catalogue.parquet"),
            chunk_rows=40,
        )

    whole = run()
    monkeypatch.setattr(recs_inputs, "FOLD_IDS", 7)
    folded = run()
    assert folded.summary.equals(whole.summary)
    tail = folded.tables["long_tail"]
    assert tail.equals(whole.tables["long_tail"])
    firsts = Counter(recs.filter(pl.col("score") > length - 3)["item_id"].to_list())
    listed = tail.filter(pl.col("side") == "recs")
    assert dict(zip(listed["item_id"], listed["count"], strict=True)) == firsts
    rated = tail.filter(pl.col("side") == "truth")
    want = Counter(ratings["item_id"].to_list())
    assert dict(zip(rated["item_id"], rated["count"], strict=True)) == want
