"""Integer keys: unit boundaries, and the merge of two sorted key lists; sequential passes.

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


def match_sorted(units, truth):
    """Merge two key lists sorted ascending (n x c int64, compared lexicographically): for each
    row of ``units`` the row of ``truth`` holding the same key, or -1; and, per truth row, whether
    a unit has its key. ``ok`` is False (and nothing else is meaningful) unless ``truth`` is
    strictly increasing and ``units`` non-decreasing, so the caller can fall back to a join.
    Returns (index, used, ok)."""
    units, truth = readonly(units, np.int64), readonly(truth, np.int64)
    index = np.full(units.shape[0], -1, dtype=np.int64)
    used = np.zeros(truth.shape[0], dtype=np.bool_)
    return index, used, _match_sorted(units, truth, index, used)


@njit(nogil=True, cache=True)
def _match_sorted(units, truth, index, used):
    """:func:`match_sorted` into ``index`` (all -1 on entry) and ``used`` (all False); ``ok``."""
    n_units = units.shape[0]
    n_truth = truth.shape[0]
    for j in range(1, n_truth):
        if _compare(truth, j, truth, j - 1) <= 0:
            return False
    j = np.int64(0)  # not the literal 0: _compare would compile a specialisation for it
    for u in range(n_units):
        if u > 0 and _compare(units, u, units, u - 1) < 0:
            return False
        while j < n_truth and _compare(truth, j, units, u) < 0:
            j += 1
        if j < n_truth and _compare(truth, j, units, u) == 0:
            index[u] = j
            used[j] = True
    return True


def unit_offsets(keys):
    """Offsets of the units of ``keys`` (n_rows x n_columns int64, rows grouped by key): the rows
    where the key differs from the previous row's, then ``n_rows``; the first row starts a unit."""
    keys = readonly(keys, np.int64)
    offsets = np.empty(keys.shape[0] + 1, dtype=np.int64)
    return offsets[: _unit_starts(keys, offsets) + 1].copy()


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
