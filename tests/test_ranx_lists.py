"""ranx's lists in one pass (:func:`mobeval.kernels.ranx_lists.ranx_lists`): each list held as a
ranx ``Run`` holds it (a dict filled row by row: one entry per item, at its first row's place,
with its last row's score, under ``duplicates="drop"``), then sorted by Numba's ``np.argsort`` of
the negated scores, its first ``depth`` entries only (``heads``) or all of them; lists already in
that order are not sorted (:func:`~mobeval.kernels.ranx_lists.ranx_list_state`); ids near and far
apart (a hash table finds the copies).

The oracle is a plain Python dict and Numba's own quicksort run as plain Python
(``numba.misc.quicksort``'s ``make_py_quicksort``, the code ``np.argsort`` compiles, with
Numba's float comparison), over the negated scores as ranx's ``sort_dict_by_value`` sorts them.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from numba.misc.quicksort import make_py_quicksort
from numba.np.numpy_support import lt_floats

from mobeval.kernels.ranx_lists import HEAD_IN_ORDER, UNORDERED, ranx_list_state, ranx_lists
from mobeval.tasks.recs import score_recs_frame

PY_ARGSORT = make_py_quicksort(lt=lt_floats, is_argsort=True, is_np_array=True).run_quicksort


def _as_ranx_holds(items, scores, drop):
    """``[(row, item, score)]`` of one list in a ranx Run's order: the dict ``d[item] = (score,
    row)`` filled row by row (``drop``; else every row), sorted as ranx sorts it."""
    if drop:
        held: dict[int, tuple[float, int]] = {}
        for row, (item, score) in enumerate(zip(items, scores, strict=True)):
            held[int(item)] = (float(score), row)
        entries = [(row, item, score) for item, (score, row) in held.items()]
    else:
        entries = [
            (row, int(i), float(s)) for row, (i, s) in enumerate(zip(items, scores, strict=True))
        ]
    values = np.array([score for _, _, score in entries], dtype=np.float64)
    return [entries[int(p)] for p in PY_ARGSORT(-values)]


def _lists(seed: int, wide: bool):
    """Offsets, items and scores of lists of many lengths (around Numba's 15-item insertion sort
    and past it): items drawn from a few (so lists repeat some), scores from a few levels (ties)
    or all different, some lists in score order already (strictly decreasing, ties only after
    the head, or ties throughout), a few NaNs; ``wide``: ids 2**40 apart."""
    rng = np.random.default_rng(seed)
    lengths = [0, 1, 2, 10, 15, 16, 17, 31, 64, 100, 257]
    lengths += [int(n) for n in rng.integers(0, 300, 14)]
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    n = int(offsets[-1])
    items = rng.integers(0, 400, n) * ((1 << 40) if wide else 3) - 7
    scores = np.floor(rng.random(n) * 4) / 4 - 0.5  # 0.0 and -0.0 among them
    for u, (lo, hi) in enumerate(zip(offsets[:-1], offsets[1:], strict=True)):
        if u % 4 == 1:  # all different: sorted below, or not
            scores[lo:hi] = rng.permutation(hi - lo) / 7.0
        if u % 2:
            scores[lo:hi] = -np.sort(-scores[lo:hi])
        if u % 8 == 5:  # decreasing, then ties after position 12
            scores[lo + 12 : hi] = scores[min(lo + 12, hi - 1)] if hi > lo else 0.0
        if u % 8 == 3:  # unique items: the dict keeps every row
            items[lo:hi] = rng.permutation(10_000)[: hi - lo] * ((1 << 40) if wide else 1)
    if seed % 2:
        scores[rng.random(n) < 0.02] = np.nan  # sorted last
    return offsets, items, scores


@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("drop", [False, True])
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("depth", [0, 1, 5, 10, 12, 13, 16, 50, 257, -1])
def test_lists_as_a_ranx_run_holds_them(seed, depth, drop, wide):
    offsets, items, scores = _lists(seed, wide)
    for heads in (False, True):
        out_off, rows, out_items, out_scores = ranx_lists(
            offsets, scores, items, depth, drop=drop, heads=heads
        )
        no_rows = ranx_lists(offsets, scores, items, depth, drop=drop, rows=False, heads=heads)
        assert no_rows[1] is None
        assert no_rows[0].tolist() == out_off.tolist()
        assert no_rows[2].tolist() == out_items.tolist()
        assert np.array_equal(no_rows[3], out_scores, equal_nan=True)
        assert out_off[0] == 0 and out_off.shape == offsets.shape
        for u in range(offsets.shape[0] - 1):
            lo, hi = int(offsets[u]), int(offsets[u + 1])
            expected = _as_ranx_holds(items[lo:hi], scores[lo:hi], drop)
            head = len(expected) if depth < 0 else min(depth, len(expected))
            got = list(range(int(out_off[u]), int(out_off[u + 1])))
            assert len(got) == (head if heads else len(expected)), (u, hi - lo)
            got_rows = [int(rows[p]) - lo for p in got]
            expected_rows = [row for row, _, _ in expected]
            assert got_rows[:head] == expected_rows[:head], (u, hi - lo)
            if not heads:
                assert sorted(got_rows[head:]) == sorted(expected_rows[head:])
            assert out_items[got].tolist() == items[lo + np.array(got_rows, dtype=int)].tolist()
            taken = scores[lo + np.array(got_rows, dtype=int)]
            assert np.array_equal(out_scores[got], taken, equal_nan=True)


def _in_sort_order(values) -> bool:
    """No value sorts before the one at its left in Numba's float order of the negated values
    (``lt_floats``: NaN last): scores never increase, NaNs at the end."""
    return not any(lt_floats(-values[i], -values[i - 1]) for i in range(1, len(values)))


@pytest.mark.parametrize("seed", range(8))
def test_list_state_head_in_order_only_where_numba_sort_keeps_it(seed):
    """Where :func:`ranx_list_state` finds the head in order, Numba's sort leaves the list's
    first ``top`` rows where they are; it does on lists in score order (NaNs last) whose head has
    no tie (short lists: any ties), and not on a list with a rise or a tie inside a long list's
    head. It finds a list in sort order exactly where it is."""
    rng = np.random.default_rng(seed)
    held = ordered = 0
    for _ in range(300):
        n = int(rng.integers(0, 40))
        levels = int(rng.choice([2, 5, 1000]))
        values = -np.sort(-np.floor(rng.random(n) * levels))
        if rng.random() < 0.2 and n > 1:  # NaNs at the end: still in sort order
            values[int(rng.integers(1, n)) :] = np.nan
        if rng.random() < 0.3 and n > 1:  # a rise somewhere, or a number after a NaN
            i = int(rng.integers(1, n))
            values[i] = values[i - 1] + 1 if values[i - 1] == values[i - 1] else 0.0
        for top in (0, 1, 3, 10, 16, n):
            state = ranx_list_state(values, n, top)
            assert (state != UNORDERED) == _in_sort_order(values), (values.tolist(), top)
            ordered += state != UNORDERED
            if state == HEAD_IN_ORDER:
                held += 1
                order = [int(p) for p in PY_ARGSORT(-values)]
                assert order[:top] == list(range(min(top, n))), (values.tolist(), top)
    assert held > 300  # the sorted lists do take the shortcut
    assert ordered > held  # and those with ties in the head are followed as in order
    tie_at_three = np.array([3.0, 2.0, 1.0, 1.0, 0.0] + [-1.0] * 20)
    assert ranx_list_state(tie_at_three, 25, 2) == HEAD_IN_ORDER
    assert ranx_list_state(tie_at_three, 25, 3) != HEAD_IN_ORDER  # the third 1.0 is the sort's
    assert ranx_list_state(np.array([3.0, 2.0, 2.0, 1.0]), 4, 4) == HEAD_IN_ORDER  # stable
    assert ranx_list_state(np.array([3.0, np.nan, 1.0]), 3, 3) == UNORDERED
    assert ranx_list_state(np.array([3.0, 1.0, np.nan]), 3, 3) == HEAD_IN_ORDER


@pytest.mark.parametrize("metrics", [["precision@10", "ndcg@12", "mrr@20"], ["ndcg", "map"]])
@pytest.mark.parametrize("seed", range(3))
def test_ranx_preset_scores_the_lists_a_dict_holds(seed, metrics):
    """``mobeval``'s ``ranx`` preset (``duplicates="drop"``, its lists cut to the largest
    cutoff, or whole) on long lists that repeat items scores as the same preset on the lists
    reduced by a plain dict and ordered by the oracle (``order="input"``)."""
    offsets, items, scores = _lists(seed, False)
    users = np.repeat(np.arange(offsets.shape[0] - 1), np.diff(offsets))
    recs = pl.DataFrame({"user_id": users, "item_id": items, "score": scores})
    recs = recs.with_columns(pl.col("score").fill_nan(-9.0))
    rng = np.random.default_rng(seed)
    n_users = offsets.shape[0] - 1
    truth = pl.DataFrame(
        {
            "user_id": np.repeat(np.arange(n_users), 8),
            "item_id": np.concatenate(
                [rng.choice(400, 8, replace=False) * 3 - 7 for _ in range(n_users)]
            ),
            "rating": rng.integers(0, 3, n_users * 8).astype(np.float64),
        }
    )
    held = []
    for u in range(n_users):
        lo, hi = offsets[u], offsets[u + 1]
        sub = recs[int(lo) : int(hi)]
        for _, item, score in _as_ranx_holds(sub["item_id"], sub["score"], True):
            held.append((u, item, score))
    ordered = pl.DataFrame(held, schema=recs.schema, orient="row")
    got = score_recs_frame(recs, truth, metrics=metrics, convention="ranx")
    expected = score_recs_frame(ordered, truth, metrics=metrics, convention="ranx", order="input")
    assert got.per_user.equals(expected.per_user)
