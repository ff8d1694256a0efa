"""Novelty, diversity and serendipity per user a block of whole users at a time: a chunk's
per-row arrays are a block's (``BLOCK_ROWS`` list rows), the values the same bits as one block."""

from __future__ import annotations

import polars as pl
import pytest

import mobeval.tasks.recs_beyond as beyond
from mobeval.metrics.recs_population import parse_population_metrics, resolve_population
from mobeval.tasks.recs_beyond import user_blocks, user_values
from mobeval.tasks.recs_inputs import population_inputs
from tests.conftest import REPO_ROOT

SAMPLES = REPO_ROOT / "data_samples" / "recs"
METRICS = ["diversity", "serendipity", "epc", "efd", "aplt", "aclt"]


def _values(block_rows, monkeypatch):
    """Each user's values of :data:`METRICS` at 5 and 10 of data_samples' mf lists (the
    relevance of serendipity, EPC and EFD from the ratings, at the user's mean rating), computed
    in blocks of ``block_rows`` list rows."""
    train = pl.read_parquet(SAMPLES / "train.parquet")
    lists = pl.read_parquet(SAMPLES / "mf.parquet").select("user_id", "item_id")
    lists = lists.with_columns(pl.int_range(pl.len()).over("user_id").alias("_position"))
    ratings = pl.read_parquet(SAMPLES / "ratings.parquet").select("user_id", "item_id", "rating")
    convention = resolve_population("msrecommenders", serendipity_relevance="ratings")
    metrics = parse_population_metrics(METRICS, [5, 10])
    inputs = population_inputs(
        metrics, convention, catalogue=None, train=train, relevance_threshold="user_mean"
    )
    monkeypatch.setattr(beyond, "BLOCK_ROWS", block_rows)
    return user_values(lists, ratings, inputs)


@pytest.mark.parametrize("block_rows", [1, 7, 50])
def test_same_bits_for_any_block_and_the_kernels_see_one_block(monkeypatch, block_rows):
    whole = _values(10**9, monkeypatch)
    seen = []
    for name in ("unit_diversity", "unit_serendipity"):
        kernel = getattr(beyond.K, name)

        def recording(offsets, *args, kernel=kernel):
            seen.append(int(offsets[-1]))
            return kernel(offsets, *args)

        monkeypatch.setattr(beyond.K, name, recording)
    blocked = _values(block_rows, monkeypatch)
    assert blocked.keys() == whole.keys() and len(whole) == 2 * len(METRICS)
    for name, values in whole.items():
        assert blocked[name].tobytes() == values.tobytes(), name
    longest = 30  # mf.parquet's lists: a block is BLOCK_ROWS rows and at most one list more
    assert max(seen) <= block_rows + longest - 1
    assert len(seen) > 4


def test_blocks_are_whole_users_in_order_with_their_ratings():
    lists = pl.DataFrame({"user_id": [3, 3, 1, 2, 2, 2, 5], "item_id": [1, 2, 3, 4, 5, 6, 7]})
    ratings = pl.DataFrame({"user_id": [1, 5, 9, 3], "item_id": [3, 7, 1, 2]})
    blocks = list(user_blocks(lists, ratings, 3))
    users = [block["user_id"].unique(maintain_order=True).to_list() for _, block, _ in blocks]
    # rows before each user (ascending): 0, 1, 4, 6: the stretches of 3 rows they start in
    assert users == [[1, 2], [3], [5]]
    assert [first for first, _, _ in blocks] == [0, 2, 3]
    assert [b.height for _, b, _ in blocks] == [4, 2, 1]
    assert [r["user_id"].to_list() for _, _, r in blocks] == [[1], [3], [5]]
    empty = list(user_blocks(lists.clear(), ratings, 3))
    assert len(empty) == 1 and empty[0][1].height == 0


@pytest.mark.parametrize("grain", [1, 3])
def test_same_bits_with_the_users_in_blocks_on_threads(monkeypatch, grain):
    """Diversity and serendipity score their users in blocks on threads (as few as ``grain``
    users a block, each block its own scratch): each user's value is the same bits."""
    whole = _values(10**9, monkeypatch)
    monkeypatch.setattr(beyond.K, "USERS_PER_BLOCK", grain)
    threaded = _values(10**9, monkeypatch)
    for name, values in whole.items():
        assert threaded[name].tobytes() == values.tobytes(), name
