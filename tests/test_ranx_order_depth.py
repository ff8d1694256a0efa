"""ranx's list order cut at a depth (:func:`mobeval.kernels.ranx_lists.ranx_order` with ``depth``):
each list's first ``depth`` rows are those of the whole sort ranx runs, bit for bit, on lists
with many ties (where Numba's quicksort does not keep the input order), shorter than, as long
as and longer than the depth; the rows after them are the list's other rows; the items and
scores come in the rows' order, with or without the rows.

The oracle is Numba's own quicksort run as plain Python (``numba.misc.quicksort``'s
``make_py_quicksort``, the code ``np.argsort`` compiles, with Numba's float comparison), over
the negated scores as ranx's ``sort_dict_by_value`` sorts them; it is checked against the
compiled ``np.argsort`` itself.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from numba.misc.quicksort import make_py_quicksort
from numba.np.numpy_support import lt_floats

from mobeval.kernels.ranx_lists import ranx_order

PY_ARGSORT = make_py_quicksort(lt=lt_floats, is_argsort=True, is_np_array=True).run_quicksort


@numba.njit
def _numba_argsort(values):
    return np.argsort(values)


def _ranx_sorted(scores: np.ndarray) -> list[int]:
    """The positions of ``scores`` (one list, in input order) as ranx's Run sorts them."""
    expected = [int(i) for i in PY_ARGSORT(-scores)]
    assert expected == _numba_argsort(-scores).tolist()  # the oracle is Numba's sort
    return expected


def _lists(seed: int):
    """Offsets and scores of lists of many lengths (around Numba's 15-item insertion sort and
    past it), few score levels (many ties), some in score order already, a few NaNs."""
    rng = np.random.default_rng(seed)
    lengths = [0, 1, 2, 10, 15, 16, 17, 31, 64, 100, 257]
    lengths += [int(n) for n in rng.integers(0, 300, 10)]
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    scores = np.floor(rng.random(int(offsets[-1])) * 4) / 4 - 0.5  # 0.0 and -0.0 among them
    for u in range(0, len(lengths), 3):  # every third list arrives in score order
        lo, hi = offsets[u], offsets[u + 1]
        scores[lo:hi] = -np.sort(-scores[lo:hi])
    if seed % 2:
        scores[rng.random(scores.shape[0]) < 0.02] = np.nan  # sorted last
    scores[offsets[-2] :] = 1.0  # one list all tied
    return offsets, scores


def _assert_heads_as_ranx_sorts_them(order, offsets, scores, depth) -> None:
    """Each list's first ``depth`` rows of ``order`` (-1: all) those of ranx's whole sort, in
    its order; the rows after them the list's other rows."""
    for u in range(offsets.shape[0] - 1):
        lo, hi = int(offsets[u]), int(offsets[u + 1])
        expected = [lo + i for i in _ranx_sorted(scores[lo:hi])]
        head = hi - lo if depth < 0 else min(depth, hi - lo)
        assert order[lo : lo + head].tolist() == expected[:head], (u, hi - lo)
        assert sorted(order[lo + head : hi].tolist()) == sorted(expected[head:]), (u, hi - lo)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("depth", [0, 1, 5, 10, 15, 16, 17, 50, 100, 256, 257, 1000, -1])
def test_first_rows_as_ranx_sorts_them(seed, depth):
    offsets, scores = _lists(seed)
    items = np.arange(scores.shape[0], dtype=np.int64) * 7 - 50
    order, out_items, out_scores = ranx_order(offsets, scores, items, depth)
    assert out_items.tolist() == items[order].tolist()
    assert np.array_equal(out_scores, scores[order], equal_nan=True)
    without_rows = ranx_order(offsets, scores, items, depth, rows=False)
    assert without_rows[0] is None
    assert without_rows[1].tolist() == out_items.tolist()
    assert np.array_equal(without_rows[2], out_scores, equal_nan=True)
    _assert_heads_as_ranx_sorts_them(order, offsets, scores, depth)


def test_whole_lists_by_default():
    offsets, scores = _lists(5)
    items = np.arange(scores.shape[0], dtype=np.int64)
    whole = ranx_order(offsets, scores, items)[0].tolist()
    assert whole == ranx_order(offsets, scores, items, -1)[0].tolist()
    assert whole == ranx_order(offsets, scores, items, 10**9)[0].tolist()


def _lists_in_order(seed: int):
    """Offsets and scores of lists as a recommender writes them: in score order already (never
    increasing, NaNs last), with runs of ties of every length (one to the whole list) at every
    place, the order Numba's quicksort is followed through from the pivot's ties
    (``numba_sort_head``); a few lists with one score out of place, which are not."""
    rng = np.random.default_rng(100 + seed)
    lengths = [16, 17, 31, 32, 33, 64, 100, 101, 255, 256, 257]
    lengths += [int(n) for n in rng.integers(16, 400, 20)]
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    scores = np.empty(int(offsets[-1]))
    for u, n in enumerate(lengths):
        levels = int(rng.choice([1, 2, 3, 5, 20, n]))
        values = np.floor(rng.random(n) * levels) / levels
        values[rng.random(n) < (0.1 if u % 4 == 1 else 0.0)] = np.nan
        numbers = np.sort(values[~np.isnan(values)])[::-1]
        values = np.concatenate([numbers, np.full(n - numbers.shape[0], np.nan)])
        if u % 5 == 4:  # one score out of place: a list not in order
            values[rng.integers(1, n)] = 2.0
        scores[offsets[u] : offsets[u + 1]] = values
    return offsets, scores


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("depth", [1, 10, 16, 50, -1])
def test_lists_in_score_order_as_ranx_sorts_them(seed, depth):
    offsets, scores = _lists_in_order(seed)
    items = np.arange(scores.shape[0], dtype=np.int64)
    order = ranx_order(offsets, scores, items, depth)[0]
    _assert_heads_as_ranx_sorts_them(order, offsets, scores, depth)
