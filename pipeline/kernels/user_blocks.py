"""The users' blocks of a chunk's two sides (recommendation lists and ratings) from their integer
columns, in sequential passes: no sort, no join, no hash table.

Both sides arrive grouped by user in ascending order. :func:`truth_order` checks the ratings'
(user, item) pairs in one pass; :func:`user_blocks` merges the two user columns as two sorted
lists (the union of their users, ascending) and counts each user's rows on each side: one pass to
count the users, one to write them (the outputs allocated with NumPy between the two).
"""

from __future__ import annotations

import numpy as np

from mobeval.kernels.blocks import readonly
from mobeval.kernels.jit import njit


def truth_order(users, items) -> tuple[int, int]:
    """``(unsorted, repeated)``: the first row whose (user, item) pair is below the previous
    row's (-1: the rows are in that order), and the first row whose pair equals the previous
    row's (-1: none; meaningful only when the rows are in order)."""
    return _truth_order(readonly(users, np.int64), readonly(items, np.int64))


@njit(cache=True)
def _truth_order(users, items):
    repeated = -1
    for r in range(1, users.shape[0]):
        if users[r] < users[r - 1] or (users[r] == users[r - 1] and items[r] < items[r - 1]):
            return r, repeated
        if repeated < 0 and users[r] == users[r - 1] and items[r] == items[r - 1]:
            repeated = r
    return -1, repeated


def user_blocks(rec_users, tru_users) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(users, rec_counts, tru_counts)``: the union of the users of the two columns (each
    sorted ascending), ascending, and each user's number of rows in each (0 where it has none):
    the two columns merged as sorted lists."""
    rec_users, tru_users = readonly(rec_users, np.int64), readonly(tru_users, np.int64)
    none = np.empty(0, dtype=np.int64)
    n = _merge(rec_users, tru_users, none, none, none, False)
    users = np.empty(n, dtype=np.int64)
    rec_counts, tru_counts = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    _merge(rec_users, tru_users, users, rec_counts, tru_counts, True)
    return users, rec_counts, tru_counts


@njit(cache=True, inline="always")
def _run_end(values, i, n, guess):
    """The end of the run of ``values[i]`` that starts at ``i < n`` (``values`` sorted
    ascending): first at ``i + guess`` (the last run's length: lists are often all as long),
    checked at its two ends alone, then 16 rows at a time (the last of them equal: all are)
    and row by row. A whole column of equally long runs costs two reads a run, not a read a
    row."""
    value = values[i]
    end = i + guess
    if i < end <= n and values[end - 1] == value and (end == n or values[end] != value):
        return end
    while i + 16 <= n and values[i + 15] == value:
        i += 16
    while i < n and values[i] == value:
        i += 1
    return i


@njit(cache=True)
def _merge(rec_users, tru_users, users, rec_counts, tru_counts, write):
    """The number of users of the union; with ``write``, each written to ``users`` with its
    rows on each side (the counts zero on entry). Each side's runs found by :func:`_run_end`."""
    i = j = n = 0
    n_rec, n_tru = rec_users.shape[0], tru_users.shape[0]
    rec_run = tru_run = 0  # the last run's length on each side
    while i < n_rec or j < n_tru:
        if j == n_tru or (i < n_rec and rec_users[i] <= tru_users[j]):
            user = rec_users[i]
        else:
            user = tru_users[j]
        start = i
        if i < n_rec and rec_users[i] == user:
            i = _run_end(rec_users, i, n_rec, rec_run)
            rec_run = i - start
        first = j
        if j < n_tru and tru_users[j] == user:
            j = _run_end(tru_users, j, n_tru, tru_run)
            tru_run = j - first
        if write:
            users[n] = user
            rec_counts[n] = i - start
            tru_counts[n] = j - first
        n += 1
    return n
