"""The items' co-occurrence counts, built once from the training rows
(:func:`mobeval.kernels.cooccurrence.cooccurrence`), against a plain self-join of the rows on
the user (Microsoft Recommenders' ``_get_pairwise_items``: every pair of a user's rows,
``i1 <= i2``, a repeated row counted again)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import polars as pl
import pytest

from mobeval.kernels.cooccurrence import pair_count
from mobeval.tasks.item_tables import train_tables


def _self_join(users, items) -> Counter:
    """``n_ij`` of every item pair ``i <= j``, from the rows' pairs of one user."""
    counts = Counter()
    for u, i in zip(users, items, strict=True):
        for v, j in zip(users, items, strict=True):
            if u == v and i <= j:
                counts[(i, j)] += 1
    return counts


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_counts_equal_a_self_join_of_the_rows(seed):
    rng = np.random.default_rng(seed)
    users = rng.integers(0, 15, 120).tolist()
    items = (rng.integers(0, 25, 120) * 3 + 7).tolist()  # ids that are not rows
    tables = train_tables(pl.DataFrame({"user_id": users, "item_id": items}))
    ptr, cols, counts = tables.pairs
    row = dict(zip(tables.items["item_id"], tables.items["row"], strict=True))
    expected = _self_join(users, items)
    ids = sorted(set(items))
    for i in ids:
        for j in ids:
            if i <= j:
                got = pair_count(ptr, cols, counts, row[i], row[j])
                assert got == expected.get((i, j), 0), (i, j)
                assert pair_count(ptr, cols, counts, row[j], row[i]) == got
    assert len(cols) == len(expected)  # only the pairs seen together are held


def test_each_users_items_keep_the_training_rows_order():
    frame = pl.DataFrame({"user_id": ["b", "a", "b", "a", "b"], "item_id": [5, 9, 1, 5, 5]})
    tables = train_tables(frame)
    ids = tables.items["item_id"].to_list()
    held = [ids[i] for i in tables.user_items]
    assert tables.users["user_id"].to_list() == ["a", "b"]
    assert tables.user_ptr.tolist() == [0, 2, 5]
    assert held == [9, 5, 5, 1, 5]
