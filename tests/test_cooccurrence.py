"""The items' co-occurrence counts, built once from the training rows
(:func:`mobeval.kernels.cooccurrence.cooccurrence`), against a plain self-join of the rows on
the user (Microsoft Recommenders' ``_get_pairwise_items``: every pair of a user's rows,
``i1 <= i2``, a repeated row counted again)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import polars as pl
import pytest

from mobeval.kernels.cooccurrence import counts_between
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
    ids = tables.items["item_id"].to_list()
    expected = _self_join(users, items)
    assert len(cols) == len(expected)  # only the pairs seen together are held
    for _ in range(20):  # two item sets (rows ascending), overlapping or not
        left = np.flatnonzero(rng.random(len(ids)) < 0.5)
        right = np.flatnonzero(rng.random(len(ids)) < 0.3)
        out = np.zeros((len(left), len(right)))
        counts_between(left, right, ptr, cols, counts, out, False)
        for x, a in enumerate(left):
            for y, b in enumerate(right):
                pair = (min(ids[a], ids[b]), max(ids[a], ids[b]))
                assert out[x, y] == expected.get(pair, 0), pair
        upper = np.zeros((len(left), len(left)))
        counts_between(left, left, ptr, cols, counts, upper, True)
        for x, a in enumerate(left):
            for y, b in enumerate(left[x:], x):
                assert upper[x, y] == expected.get((ids[a], ids[b]), 0)


def test_each_users_items_keep_the_training_rows_order():
    frame = pl.DataFrame({"user_id": ["b", "a", "b", "a", "b"], "item_id": [5, 9, 1, 5, 5]})
    tables = train_tables(frame)
    ids = tables.items["item_id"].to_list()
    held = [ids[i] for i in tables.user_items]
    assert tables.users["user_id"].to_list() == ["a", "b"]
    assert tables.user_ptr.tolist() == [0, 2, 5]
    assert held == [9, 5, 5, 1, 5]


@pytest.mark.parametrize(("per_block", "parts"), [(1, 5), (7, 2), (512, 1)])
def test_rows_over_many_mask_words_and_blocks(monkeypatch, per_block, parts):
    """Items on both sides of 64-item words (the mask read word by word), rows and users in
    blocks of one, seven or all of them (threads), the users transposed in five, two or one
    parts, repeated rows (``m_ui > 1``): each row's columns ascending and counts equal to a
    plain count of every pair of a user's rows."""
    from mobeval.kernels import cooccurrence as module

    monkeypatch.setattr(module, "ITEMS_PER_BLOCK", per_block)
    monkeypatch.setattr(module, "USERS_PER_BLOCK", per_block)
    monkeypatch.setattr(module, "HELD_PER_ITEM_PART", 0)
    monkeypatch.setattr(module, "thread_count", lambda: parts)
    rng = np.random.default_rng(7)
    n_items = 300
    lists = [rng.integers(0, n_items, rng.integers(1, 30)).tolist() for _ in range(80)]
    lists.append([63, 64, 127, 128, 0, 299, 64])  # word edges, a repeat
    user_ptr = np.cumsum([0] + [len(items) for items in lists])
    user_items = np.array([i for items in lists for i in items], dtype=np.int32)
    ptr, cols, counts, largest = module.cooccurrence(user_ptr, user_items, n_items)
    expected = Counter()
    for items in lists:
        for i in items:
            for j in items:
                if i <= j:
                    expected[(i, j)] += 1
    held = {}
    for i in range(n_items):
        row = cols[ptr[i] : ptr[i + 1]].tolist()
        assert row == sorted(set(row)), i
        held.update({(i, j): int(c) for j, c in zip(row, counts[ptr[i] : ptr[i + 1]], strict=True)})
    assert held == dict(expected)
    assert largest == max(expected.values())


@pytest.mark.parametrize(
    ("ids", "kind"),
    [
        (lambda n: np.arange(n) * 3 - 40, pl.Int64),  # from a base, negative too: counted
        (lambda n: np.arange(n) * 3 + 9, pl.UInt16),
        (lambda n: np.arange(n) * 10**15, pl.Int64),  # wider than the rows: searched
        (lambda n: np.arange(n) * 3, pl.UInt64),
        (lambda n: [f"i{k:03d}" for k in range(n)], pl.String),
    ],
)
def test_tables_equal_plain_counts_whatever_the_ids(ids, kind):
    """Each item's rows and distinct users, each user's items in the rows' order, whichever way
    the ids are turned into rows of the tables (the columns in several chunks)."""
    rng = np.random.default_rng(3)
    names = ids(40)
    user_ids = rng.integers(-5, 30, 400).tolist()
    item_ids = [names[k] for k in rng.integers(0, 40, 400)]
    frame = pl.DataFrame({"user_id": user_ids, "item_id": item_ids}).cast({"item_id": kind})
    frame = pl.concat([frame[:100], frame[100:250], frame[250:]], rechunk=False)  # in 3 chunks
    assert frame.n_chunks() == 3
    tables = train_tables(frame)
    assert tables.items.schema["item_id"] == kind
    assert tables.items["item_id"].to_list() == sorted(set(item_ids))
    assert tables.items["row"].to_list() == list(range(tables.items.height))
    assert tables.items["rows"].to_list() == [item_ids.count(i) for i in sorted(set(item_ids))]
    pairs = set(zip(user_ids, item_ids, strict=True))
    distinct = Counter(i for _, i in pairs)
    assert tables.items["users"].to_list() == [distinct[i] for i in sorted(set(item_ids))]
    assert tables.users["user_id"].to_list() == sorted(set(user_ids))
    names_by_row = tables.items["item_id"].to_list()
    for row, user in enumerate(tables.users["user_id"]):
        held = tables.user_items[tables.user_ptr[row] : tables.user_ptr[row + 1]]
        assert [names_by_row[i] for i in held] == [
            i for u, i in zip(user_ids, item_ids, strict=True) if u == user
        ]
