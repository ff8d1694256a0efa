"""Integer keys: unit boundaries, and each key of a list looked up in a sorted one; sequential
passes.

Each function is a Python wrapper that passes the keys read-only as C-contiguous int64 (one
compiled specialisation whatever the caller's array) and allocates the outputs with NumPy, which
compiles nothing (an allocation inside a kernel compiles Numba's implementation of it per dtype).
"""

from __future__ import annotations

import numpy as np

from mobeval.kernels.blocks import readonly
from mobeval.kernels.jit import njit


def key_order(keys):
    """Per row of ``keys`` (n_rows x n_columns int64): 1, 0 or -1 as the row's key is above, equal
    to or below the previous row's, compared lexicographically; the first row gets 1 (int8)."""
    keys = readonly(keys, np.int64)
    order = np.ones(keys.shape[0], dtype=np.int8)
    _key_order(keys, order)
    return order


@njit(nogil=True, cache=True)
def _key_order(keys, order):
    """:func:`key_order` into ``order`` (its first entry left as it is)."""
    n_rows, n_columns = keys.shape
    for row in range(1, n_rows):
        sign = 0
        for column in range(n_columns):
            a = keys[row, column]
            b = keys[row - 1, column]
            if a != b:
                sign = 1 if a > b else -1
                break
        order[row] = sign


@njit(nogil=True, cache=True)
def _compare(a, i, b, j):
    """-1, 0 or 1 as row i of ``a`` is below, equal to or above row j of ``b`` (lexicographic)."""
    for column in range(a.shape[1]):
        x = a[i, column]
        y = b[j, column]
        if x != y:
            return 1 if x > y else -1
    return 0


def match_keys(units, truth):
    """For each row of ``units`` (n x c int64, in any order), the row of ``truth`` (sorted
    ascending, lexicographically) holding the same key, or -1; and, per truth row, whether a unit
    has its key. ``ok`` is False (and nothing else is meaningful) unless ``truth`` is strictly
    increasing, so the caller can fall back to a join. Each unit is a binary search (its units
    come in key order from a sorted stream, in the stream's order from a grouped one).
    Returns (index, used, ok)."""
    units, truth = readonly(units, np.int64), readonly(truth, np.int64)
    index = np.full(units.shape[0], -1, dtype=np.int64)
    used = np.zeros(truth.shape[0], dtype=np.bool_)
    return index, used, _match_keys(units, truth, index, used)


@njit(nogil=True, cache=True)
def _match_keys(units, truth, index, used):
    """:func:`match_keys` into ``index`` (all -1 on entry) and ``used`` (all False); ``ok``."""
    n_truth = truth.shape[0]
    for j in range(1, n_truth):
        if _compare(truth, j, truth, j - 1) <= 0:
            return False
    for u in range(units.shape[0]):
        lo, hi = 0, n_truth
        while lo < hi:
            mid = (lo + hi) >> 1
            sign = _compare(truth, mid, units, u)
            if sign == 0:
                index[u] = mid
                used[mid] = True
                break
            if sign < 0:
                lo = mid + 1
            else:
                hi = mid
    return True


def unit_offsets(keys):
    """Offsets of the units of ``keys`` (n_rows x n_columns int64, rows grouped by key): the rows
    where the key differs from the previous row's, then ``n_rows``; the first row starts a unit."""
    keys = readonly(keys, np.int64)
    offsets = np.empty(keys.shape[0] + 1, dtype=np.int64)
    return offsets[: _unit_starts(keys, offsets) + 1].copy()


def segment_rows(starts, lengths):
    """The row numbers of segments ``starts[i] .. starts[i] + lengths[i] - 1``, one after the
    other (int64, ``lengths.sum()`` of them): the gather that puts the segments together."""
    first = np.cumsum(lengths) - lengths
    return np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(starts - first, lengths)


def unit_count(keys) -> int:
    """How many units ``keys`` (n_rows x n_columns int64) holds as :func:`unit_offsets` counts
    them (runs of equal keys), with no array made."""
    keys = readonly(keys, np.int64)
    return int(_unit_count(keys))


@njit(nogil=True, cache=True)
def _unit_count(keys):
    n_rows, n_columns = keys.shape
    n_units = 1 if n_rows else 0
    for row in range(1, n_rows):
        for column in range(n_columns):
            if keys[row, column] != keys[row - 1, column]:
                n_units += 1
                break
    return n_units


@njit(nogil=True, cache=True)
def _unit_starts(keys, offsets):
    """The unit starts of ``keys`` into ``offsets``, then ``n_rows``; the number of units."""
    n_rows, n_columns = keys.shape
    n_units = 0
    for row in range(n_rows):
        start = row == 0
        for column in range(n_columns):
            if start or keys[row, column] != keys[row - 1, column]:
                start = True
                break
        if start:
            offsets[n_units] = row
            n_units += 1
    offsets[n_units] = n_rows
    return n_units
