"""The lists' scores checked by the kernel that reads them all (the metric kernel under a score
order: trec_eval, ir_measures; ranx's lists under ranx's order, the copies a dict drops
included), not by a pass of their own: the kernels' ``not_finite`` flags against plain Python,
and the error still the one the check made before it: the first NaN or infinite score of the
chunk's rows (its user and item), ahead of a repeated item in a list, a repeated or NaN
rating."""

import math

import numpy as np
import polars as pl
import pytest

from mobeval.errors import InputError
from mobeval.kernels import recs as K
from mobeval.kernels.list_order import ID_ASC, TEXT_DESC
from mobeval.kernels.ranx_lists import ranx_lists
from mobeval.tasks.recs import score_recs_frame

ODD = [math.nan, math.inf, -math.inf]


def _odd_lists(rng):
    """``(lengths, offsets, scores)`` of 300 lists of 0-39 rows in score order, 40 of their
    scores NaN or infinite."""
    lengths = rng.integers(0, 40, size=300)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    scores = -np.sort(-np.floor(rng.random(offsets[-1]) * 8) / 8)
    for row in rng.choice(offsets[-1], size=40, replace=False):
        scores[row] = ODD[int(rng.integers(0, 3))]
    return lengths, offsets, scores


@pytest.mark.parametrize("mode", [TEXT_DESC, ID_ASC, K.AS_GIVEN])
def test_the_kernel_flags_each_list_with_a_nan_or_infinite_score(mode):
    rng = np.random.default_rng(5)
    lengths, offsets, scores = _odd_lists(rng)
    ids = rng.permutation(offsets[-1]).astype(np.int64)
    truth = (offsets, ids, np.ones(offsets[-1]))  # every item rated, once
    rules = K.StatsRules(1.0, False, K.GAIN_LINEAR, -np.inf, True, False, K.DUP_EACH, True, True,
                         K.AP_RELEVANT, False, False, mode, True, 10).checked()  # fmt: skip
    flags = K.recs_user_stats(
        offsets, ids, scores, *truth, np.array([10]), np.log2(np.arange(2, 42)), rules
    )[3]
    for u in range(len(lengths)):
        odd = any(not math.isfinite(s) for s in scores[offsets[u] : offsets[u + 1]].tolist())
        assert flags[u] == (odd and mode != K.AS_GIVEN), u


@pytest.mark.parametrize("drop", [False, True])
@pytest.mark.parametrize("depth", [3, -1])
def test_ranx_lists_flag_each_list_with_a_nan_or_infinite_score(drop, depth):
    rng = np.random.default_rng(6)
    lengths, offsets, scores = _odd_lists(rng)
    items = rng.integers(0, 30, size=offsets[-1])  # copies in most lists: a dict drops them
    flags = np.zeros(len(lengths), dtype=np.bool_)
    ranx_lists(offsets, scores, items, depth, drop=drop, heads=True, not_finite=flags)
    for u in range(len(lengths)):
        odd = any(not math.isfinite(s) for s in scores[offsets[u] : offsets[u + 1]].tolist())
        assert flags[u] == odd, u


def _lists(score_of):
    """Users 1 to 4, five items each (user u: items 10u to 10u + 4), scores 1.0, 0.75, ...;
    ``score_of``: (user, item) -> another score."""
    rows = [(u, 10 * u + i, 1.0 - i / 4) for u in range(1, 5) for i in range(5)]
    rows = [(u, item, score_of.get((u, item), s)) for u, item, s in rows]
    return pl.DataFrame(rows, schema=["user_id", "item_id", "score"], orient="row")


def _ratings(extra=()):
    rows = [(u, 10 * u + i, 2.0) for u in range(1, 5) for i in (0, 3)] + list(extra)
    return pl.DataFrame(rows, schema=["user_id", "item_id", "rating"], orient="row")


def _error(recs, ratings, convention):
    with pytest.raises(InputError) as raised:
        score_recs_frame(
            recs, ratings, metrics=["ndcg@3"], convention=convention, path_recs="recs.parquet"
        )
    return str(raised.value)


@pytest.mark.parametrize("convention", ["trec_eval", "ir_measures", "ranx"])
@pytest.mark.parametrize("odd", ODD)
def test_the_first_odd_score_of_the_rows_is_named(convention, odd):
    recs = _lists({(3, 32): odd, (2, 24): odd, (4, 40): math.nan})
    assert _error(recs, _ratings(), convention) == (
        "recs.parquet: column 'score': NaN or infinite value (first offending key: (2, 24))"
    )
    # rows not grouped by user: the first in the rows' order, not in the users'
    shuffled = recs.sort("user_id", descending=True, maintain_order=True)
    assert "(first offending key: (4, 40))" in _error(shuffled, _ratings(), convention)


@pytest.mark.parametrize("convention", ["trec_eval", "ir_measures"])
def test_an_odd_score_is_named_before_a_repeated_item_or_a_bad_rating(convention):
    # user 1's list repeats an item (trec_eval's duplicates="error"); user 3 has a NaN score
    recs = _lists({(3, 31): math.nan}).with_columns(
        pl.when((pl.col("user_id") == 1) & (pl.col("item_id") == 14))
        .then(10)
        .otherwise(pl.col("item_id"))
        .alias("item_id")
    )
    named = "column 'score': NaN or infinite value (first offending key: (3, 31))"
    assert named in _error(recs, _ratings(), convention)
    for bad in ([(2, 20, 5.0)], [(2, 99, math.nan)]):  # a repeated rating, a NaN rating
        assert named in _error(recs, _ratings(bad), convention)
    # without the odd score, each of them is the error
    fine = recs.with_columns(pl.col("score").fill_nan(0.5))
    assert "an item appears twice" in _error(fine, _ratings(), convention)
    assert "rated twice" in _error(fine, _ratings([(2, 20, 5.0)]), convention)
    assert "column 'rating'" in _error(fine, _ratings([(2, 99, math.nan)]), convention)


def test_ranx_names_an_odd_score_a_dict_drops_before_a_bad_rating():
    # user 1's list repeats item 10 with a NaN score: the dict keeps the copy's place, drops it
    recs = _lists({}).with_columns(
        pl.when((pl.col("user_id") == 1) & (pl.col("item_id") == 14))
        .then(10)
        .otherwise(pl.col("item_id"))
        .alias("item_id"),
        pl.when((pl.col("user_id") == 1) & (pl.col("item_id") == 10))
        .then(math.nan)
        .otherwise(pl.col("score"))
        .alias("score"),
    )
    named = "column 'score': NaN or infinite value (first offending key: (1, 10))"
    for bad in ([], [(2, 20, 5.0)], [(2, 99, math.nan)]):  # none, a repeated rating, a NaN one
        assert named in _error(recs, _ratings(bad), "ranx")
