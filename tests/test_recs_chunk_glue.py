"""A recommendation chunk's checks on the main thread (tasks.recs_lists) take what the engine
proved already: a sorted stream's chunks come with their key column flagged sorted (the pairing
thread checked every key as it cut them, io.chunking.SortedUnitChunks), so the users' order is not
scanned again; the ratings' order is the ratings' sort's to check (blocks), not the finite check's;
lists without a score column share one read-only array of zeros."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from mobeval.errors import InputError
from mobeval.io.chunking import SortedUnitChunks
from mobeval.tasks import recs_lists as R


def _batches():
    return [
        pl.DataFrame({"x": [0.5, 1.5, 2.5], "user_id": [1, 1, 2]}),
        pl.DataFrame({"x": [3.5, 4.5, 5.5, 6.5], "user_id": [2, 3, 3, 4]}),
        pl.DataFrame({"x": [7.5], "user_id": [5]}),
    ]


@pytest.mark.parametrize("in_place_rows", [None, 2])
def test_a_sorted_streams_chunks_come_flagged_sorted(in_place_rows):
    chunks = list(SortedUnitChunks(iter(_batches()), ["user_id"], 2, in_place_rows=in_place_rows))
    assert pl.concat(chunks)["user_id"].to_list() == [1, 1, 2, 2, 3, 3, 4, 5]
    assert all(chunk["user_id"].flags["SORTED_ASC"] for chunk in chunks)


def _lists(users, scores, flagged):
    frame = pl.DataFrame({"user_id": users, "item_id": list(range(len(users))), "score": scores})
    return frame.with_columns(pl.col("user_id").set_sorted()) if flagged else frame


def test_checked_rows_takes_the_users_order_from_the_flag_or_checks_the_values_alone():
    assert R.checked_rows(_lists([1, 1, 2], [0.3, 0.2, 0.1], True), "score", "r.parquet")
    assert not R.checked_rows(_lists([2, 1, 1], [0.3, 0.2, 0.1], False), "score", "r.parquet")
    with pytest.raises(InputError) as error:
        R.checked_rows(_lists([1, 2, 2], [0.3, np.nan, np.inf], True), "score", "r.parquet")
    assert (error.value.column, error.value.key) == ("score", (2, 1))
    ratings = pl.DataFrame({"user_id": [2, 1], "item_id": [5, 6], "rating": [1.0, np.inf]})
    assert R.checked_rows(ratings.head(1), "rating", "t.parquet", order=False) is None
    with pytest.raises(InputError) as error:
        R.checked_rows(ratings, "rating", "t.parquet", order=False)
    assert (error.value.column, error.value.key) == ("rating", (1, 6))


def test_lists_without_scores_share_one_read_only_array_of_zeros():
    long = pl.DataFrame({"user_id": [1] * 50, "item_id": list(range(50))})
    short = long.head(7)
    items, zeros = R.as_given(long)
    _, fewer = R.as_given(short)
    assert zeros.tolist() == [0.0] * 50 and fewer.tolist() == [0.0] * 7
    assert not zeros.flags.writeable and np.shares_memory(zeros, R.as_given(long)[1])
    assert items.tolist() == list(range(50))
