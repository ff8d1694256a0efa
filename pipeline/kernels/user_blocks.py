"""The users' blocks of a chunk's two sides (recommendation lists and ratings) from their integer
columns, in sequential passes: no sort, no join, no hash table.

Both sides arrive grouped by user in ascending order. :func:`truth_order` checks the ratings'
(user, item) pairs in one pass; :func:`user_blocks` merges the two user columns as two sorted
lists (the union of their users, ascending) and counts each user's rows on each side, in one pass
(the outputs grown as it goes).
"""

from __future__ import annotations

import numpy as np

from mobeval.kernels.blocks import readonly
from mobeval.kernels.borrow import borrowed
from mobeval.kernels.jit import njit


def truth_order(users, items) -> tuple[int, int]:
    """``(unsorted, repeated)``: the first row whose (user, item) pair is below the previous
    row's (-1: the rows are in that order), and the first row whose pair equals the previous
    row's (-1: none; meaningful only when the rows are in order)."""
    return _truth_order(readonly(users, np.int64), readonly(items, np.int64))


@njit(nogil=True, cache=True)
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
    return _merge(readonly(rec_users, np.int64), readonly(tru_users, np.int64))


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


@njit(nogil=True, cache=True)
def _merge(rec_users, tru_users):
    """:func:`user_blocks`' arrays, in one pass: each user written with its rows on each side
    (each side's runs found by :func:`_run_end`) into arrays of a user per 32 rows (at least
    16), twice as long when full (a chunk's lists are mostly longer: rarely), returned as the
    views of their users."""
    rec_users, tru_users = borrowed(rec_users, tru_users)  # each run's end read without a count
    n_rec, n_tru = rec_users.shape[0], tru_users.shape[0]
    out = np.empty((3, 16 + (n_rec + n_tru) // 32), dtype=np.int64)
    i = j = n = 0
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
        if n == out.shape[1]:
            grown = np.empty((3, 2 * n), dtype=np.int64)
            grown[:, :n] = out
            out = grown
        out[0, n] = user
        out[1, n] = i - start
        out[2, n] = j - first
        n += 1
    return out[0, :n], out[1, :n], out[2, :n]
