"""The recs kernel's duplicate check and rise count on one list's view
(:func:`mobeval.kernels.recs.hashed_first_repeat`,
:func:`~mobeval.kernels.list_order.list_rises`) against plain Python: repeats at the start, at
the end, in the middle, within and across runs of tied scores, several repeats (the first one
found is the earliest position that repeats), ids whose text and number orders differ, extreme
and negative ids, long lists; one hash set reused by list after list (its stamps), as the kernel
reuses it by user; NaN scores never rise, and the NaN and infinite ones are counted."""

import math

import numpy as np
import pytest

from mobeval.kernels import recs as K
from mobeval.kernels.list_order import list_rises

TEXT_ORDER_IDS = [9, 10, 100, 99, 1000, -1, -10, -9, 0, 19, 2, 20, 200]
EXTREMES = [np.iinfo(np.int64).min, np.iinfo(np.int64).max, -1, 0, 1]


def _first_repeat(items):
    """The position of the first item that occurred earlier in the list, or -1."""
    seen = set()
    for p, item in enumerate(items):
        if item in seen:
            return p
        seen.add(item)
    return -1


def _rises(scores):
    return sum(b > a for a, b in zip(scores, scores[1:], strict=False))


def _lists(rng):
    """Lists with repeats placed at the start, at the end, in tied runs, or none."""
    pool = np.array(TEXT_ORDER_IDS + EXTREMES + list(range(300, 400)), dtype=np.int64)
    for _ in range(200):
        n = int(rng.choice([1, 2, 3, 10, 100, 1000]))
        items = list(rng.choice(pool, size=min(n, len(pool)), replace=False))
        items += list(rng.integers(10**6, 10**9, size=n - len(items)))
        where = rng.choice(["start", "end", "middle", "twice", "none"])
        if n >= 2 and where == "start":
            items[1] = items[0]
        elif n >= 2 and where == "end":
            items[-1] = items[int(rng.integers(0, n - 1))]
        elif n >= 3 and where in ("middle", "twice"):
            a, b = sorted(rng.choice(n, size=2, replace=False))
            items[b] = items[a]
            if where == "twice" and n >= 4:
                c, d = sorted(rng.choice(n, size=2, replace=False))
                items[d] = items[c]
        scores = -np.sort(-np.floor(rng.random(n) * 4) / 4)  # runs of tied scores
        yield np.array(items, dtype=np.int64), scores


@pytest.mark.parametrize("seed", range(4))
def test_the_first_repeat_of_each_list_is_found(seed):
    rng = np.random.default_rng(seed)
    slots = np.empty(1 << 11, dtype=np.int64)  # at least twice the longest list
    stamps = np.full(slots.shape[0], -1, dtype=np.int64)
    rows, found = [], 0
    for stamp, (items, _) in enumerate(_lists(rng)):
        lead = int(rng.integers(0, 3))  # the list as a view into a longer column
        column = np.concatenate([np.full(lead, items[0]), items, items[:1]])
        view = column[lead : lead + items.shape[0]]
        got = K.hashed_first_repeat(view, slots, stamps, stamp)
        assert got == _first_repeat(items.tolist())
        assert K.first_repeat(items) == got
        rows.append(got)
        found += got >= 0
    assert 0 < found < len(rows)


@pytest.mark.parametrize("seed", range(3))
def test_rises_are_counted_over_the_view(seed):
    rng = np.random.default_rng(seed)
    for _, scores in _lists(rng):
        shaken = scores.copy()
        for p in rng.choice(len(shaken), size=min(3, len(shaken)), replace=False):
            shaken[p] = rng.choice([math.nan, math.inf, -math.inf, 5.0, -5.0, shaken[p]])
        column = np.concatenate([[math.nan], shaken, [math.inf]])  # odd scores around the list
        odd = sum(not math.isfinite(s) for s in shaken.tolist())
        assert list_rises(column[1:-1]) == (_rises(shaken.tolist()), odd)
