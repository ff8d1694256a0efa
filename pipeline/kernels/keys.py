"""Integer keys: unit boundaries, and the merge of two sorted key lists; sequential passes."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def key_order(keys):
    """Per row of ``keys`` (n_rows x n_columns int64): 1, 0 or -1 as the row's key is above, equal
    to or below the previous row's, compared lexicographically; the first row gets 1."""
    n_rows, n_columns = keys.shape
    order = np.ones(n_rows, dtype=np.int8)
    for row in range(1, n_rows):
        sign = 0
        for column in range(n_columns):
            a = keys[row, column]
            b = keys[row - 1, column]
            if a != b:
                sign = 1 if a > b else -1
                break
        order[row] = sign
    return order


@njit(cache=True)
def _compare(a, i, b, j):
    """-1, 0 or 1 as row i of ``a`` is below, equal to or above row j of ``b`` (lexicographic)."""
    for column in range(a.shape[1]):
        x = a[i, column]
        y = b[j, column]
        if x != y:
            return 1 if x > y else -1
    return 0


@njit(cache=True)
def match_sorted(units, truth):
    """Merge two key lists sorted ascending (n x c int64, compared lexicographically): for each
    row of ``units`` the row of ``truth`` holding the same key, or -1; and, per truth row, whether
    a unit has its key. ``ok`` is False (and nothing else is meaningful) unless ``truth`` is
    strictly increasing and ``units`` non-decreasing, so the caller can fall back to a join."""
    n_units = units.shape[0]
    n_truth = truth.shape[0]
    index = np.full(n_units, -1, dtype=np.int64)
    used = np.zeros(n_truth, dtype=np.bool_)
    for j in range(1, n_truth):
        if _compare(truth, j, truth, j - 1) <= 0:
            return index, used, False
    j = np.int64(0)  # not the literal 0: _compare would compile a specialisation for it
    for u in range(n_units):
        if u > 0 and _compare(units, u, units, u - 1) < 0:
            return index, used, False
        while j < n_truth and _compare(truth, j, units, u) < 0:
            j += 1
        if j < n_truth and _compare(truth, j, units, u) == 0:
            index[u] = j
            used[j] = True
    return index, used, True


@njit(cache=True)
def unit_offsets(keys):
    """Offsets of the units of ``keys`` (n_rows x n_columns int64, rows grouped by key): the rows
    where the key differs from the previous row's, then ``n_rows``; the first row starts a unit."""
    n_rows, n_columns = keys.shape
    offsets = np.empty(n_rows + 1, dtype=np.int64)
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
    return offsets[: n_units + 1].copy()
