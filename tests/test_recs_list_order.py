"""Each user's list in its scoring order (:func:`mobeval.kernels.list_order.list_order`) against
Python's sort on the same keys: trec_eval's ties by the item id as text, descending (integer ids
of every sign and length, ``"9" > "10"``, ``"-"`` below the digits), or by the id ascending; lists
that arrive in score order (only the ties sorted) or shuffled, short (insertion) and long
(heapsort); rows equal in score and id keep their file order."""

import functools

import numpy as np
import pytest

from mobeval.kernels.list_order import ID_ASC, TEXT_DESC, list_order

IDS = [0, 1, 9, 10, 99, 100, 123, 1230, -1, -9, -10, -123, 2**63 - 1, -(2**63), 10**16, 5 * 10**17]


def _expected(rows, scores, ids, mode):
    """Python's sort of ``rows``: score descending, then the id (as text descending, or
    ascending), then the row."""

    def before(i, j):
        if scores[i] != scores[j]:
            return -1 if scores[i] > scores[j] else 1
        if ids[i] != ids[j]:
            if mode == TEXT_DESC:
                return -1 if str(ids[i]) > str(ids[j]) else 1
            return -1 if ids[i] < ids[j] else 1
        return -1 if i < j else 1

    return sorted(rows, key=functools.cmp_to_key(before))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("mode", [TEXT_DESC, ID_ASC])
def test_lists_in_their_order(seed, mode):
    rng = np.random.default_rng(seed)
    lengths = [0, 1, 2, 5, 31, 32, 33, 80, 200]
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    n = int(offsets[-1])
    ids = rng.choice(np.array(IDS + list(range(-30, 300)), dtype=np.int64), n)
    scores = np.floor(rng.random(n) * 4) / 4  # ties
    for u in range(0, len(lengths), 2):  # every other list arrives in score order
        lo, hi = offsets[u], offsets[u + 1]
        scores[lo:hi] = -np.sort(-scores[lo:hi])
    ordered = list_order(offsets, scores, ids, mode, True)
    assert ordered is not None
    rows, out_ids, out_scores = ordered
    for u in range(len(lengths)):
        lo, hi = offsets[u], offsets[u + 1]
        assert list(rows[lo:hi]) == _expected(range(lo, hi), scores, ids, mode)
    np.testing.assert_array_equal(out_ids, ids[rows])
    np.testing.assert_array_equal(out_scores, scores[rows])
    assert list_order(offsets, out_scores, out_ids, mode, True) is None  # in order: left


@pytest.mark.parametrize("limit", [1, 3, 10])
def test_ties_from_the_limit_on_stay_in_file_order(limit):
    """In a list whose scores never increase, a run of tied scores starting before ``limit`` is
    sorted whole, one starting at or after it keeps its file order."""
    rng = np.random.default_rng(limit)
    scores = -np.sort(-np.floor(rng.random(40) * 8) / 8)
    ids = rng.permutation(np.arange(100, 140, dtype=np.int64))
    offsets = np.array([0, 40])
    ordered = list_order(offsets, scores, ids, TEXT_DESC, True, limit)
    rows = np.arange(40) if ordered is None else ordered[0]  # None: nothing moved
    whole = _expected(range(40), scores, ids, TEXT_DESC)
    starts = [r for r in range(40) if r == 0 or scores[r] != scores[r - 1]]
    for start, end in zip(starts, [*starts[1:], 40], strict=True):
        kept = list(range(start, end)) if start >= limit else whole[start:end]
        assert list(rows[start:end]) == kept


@pytest.mark.parametrize("limit", [0, 1, 5, 10, 40, 199, 200])
@pytest.mark.parametrize("mode", [TEXT_DESC, ID_ASC])
def test_a_shuffled_list_has_its_first_positions_in_order_up_to_the_limit(limit, mode):
    """A list whose scores rise somewhere (long: the heap) has its first ``limit`` rows in
    order, those Python's sort puts first, and every other row after them."""
    rng = np.random.default_rng(limit + 7 * mode)
    lengths = [33, 200, 64]
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    n = int(offsets[-1])
    ids = rng.choice(np.array(IDS + list(range(-30, 300)), dtype=np.int64), n)
    scores = np.floor(rng.random(n) * 6) / 6  # ties, in no order
    rows = list_order(offsets, scores, ids, mode, True, limit)[0]
    for u in range(len(lengths)):
        lo, hi = offsets[u], offsets[u + 1]
        head = _expected(range(lo, hi), scores, ids, mode)[:limit]
        assert list(rows[lo : lo + len(head)]) == head
        assert sorted(rows[lo:hi]) == list(range(lo, hi))
