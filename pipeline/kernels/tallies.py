"""Tallies as rows of int64: a key of ``width`` columns, then counts; collapsed, cut and matched.

A tally is a 2-D int64 array whose first ``width`` columns are a key and whose other columns are
counts. *Collapsed* (:func:`collapse`), its rows are in ascending key order (lexicographic, the
columns signed), one row per distinct key, the counts of equal keys summed. Rows of any tallies
concatenated and collapsed give the tally of their union, whatever the order or the cut they came
in: the folds are exact. :func:`upto` cuts a collapsed tally at a key (binary search), and
:func:`matched` tells which rows of one collapsed tally have their key in another (one merge
pass). Float values tally by an int64 key in their order (:func:`mobeval.kernels.auc.score_keys`;
:func:`key_values` reads them back).

Each function is a Python wrapper that passes its inputs read-only (one compiled specialisation
whatever the caller's arrays) and allocates the outputs with NumPy.
"""

from __future__ import annotations

import numpy as np

from mobeval.kernels.auc import LOW_BITS
from mobeval.kernels.blocks import readonly
from mobeval.kernels.buckets import radix_order
from mobeval.kernels.jit import njit


def collapse(rows, width: int) -> np.ndarray:
    """``rows`` (n x c int64) collapsed on their first ``width`` columns: one row per distinct
    key, ascending, the other columns summed."""
    rows = readonly(rows, np.int64)
    order = radix_order(rows[:, :width])
    out = np.empty(rows.shape, dtype=np.int64)
    n = _collapse(rows, np.int64(width), order, out)
    return out if n == len(out) else out[:n].copy()


@njit(cache=True)
def _collapse(rows, width, order, out):
    """The rows in ``order`` (keys ascending), summed per run of equal keys; the runs' number."""
    n = 0
    for i in range(order.size):
        row = order[i]
        if n > 0 and _compare(out[n - 1], rows[row], width) == 0:
            for c in range(width, rows.shape[1]):
                out[n - 1, c] += rows[row, c]
        else:
            out[n, :] = rows[row, :]
            n += 1
    return n


@njit(cache=True)
def _compare(a, b, width):
    """-1, 0 or 1 as key ``a[:width]`` is below, equal to or above ``b[:width]``."""
    for c in range(width):
        if a[c] != b[c]:
            return -1 if a[c] < b[c] else 1
    return 0


def upto(rows, width: int, key) -> int:
    """How many rows of the collapsed ``rows`` have a key at most ``key`` (``width`` int64)."""
    key = readonly(key, np.int64)
    return int(_upto(readonly(rows, np.int64), np.int64(width), key))


@njit(cache=True)
def _upto(rows, width, key):
    lo, hi = 0, rows.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if _compare(rows[mid], key, width) <= 0:
            lo = mid + 1
        else:
            hi = mid
    return lo


def matched(rows, other, width: int) -> np.ndarray:
    """Per row of the collapsed ``rows``: whether its key is a key of the collapsed ``other``."""
    rows, other = readonly(rows, np.int64), readonly(other, np.int64)
    out = np.zeros(len(rows), dtype=np.bool_)
    _matched(rows, other, np.int64(width), out)
    return out


@njit(cache=True)
def _matched(rows, other, width, out):
    j = 0
    for i in range(rows.shape[0]):
        while j < other.shape[0] and _compare(other[j], rows[i], width) < 0:
            j += 1
        out[i] = j < other.shape[0] and _compare(other[j], rows[i], width) == 0


def key_values(keys) -> np.ndarray:
    """The float64 values of :func:`mobeval.kernels.auc.score_keys`' keys (its inverse)."""
    keys = np.asarray(keys, dtype=np.int64)
    return np.where(keys < 0, keys ^ LOW_BITS, keys).view(np.float64)
