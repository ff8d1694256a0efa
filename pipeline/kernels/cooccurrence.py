"""The items' co-occurrence counts of the training rows, once, as a sparse upper triangle (Numba).

``n_ij = sum_u m_ui m_uj`` (``m_ui``: user ``u``'s training rows of item ``i``), the numerator
of Microsoft Recommenders' co-occurrence similarity (``_get_cooccurrence_similarity``: it counts
the pairs of a self-join of the training rows on the user, ``i1 <= i2``). Held for ``i <= j``
only, diagonal included, as CSR rows: ``ptr`` cuts ``cols`` (``j``, ascending) and ``counts``
(``n_ij``), both int32. Built row by row from the users' items in ``sum_u d_u^2`` steps
(``d_u``: the user's distinct items; twice: the rows' lengths, then their entries), a dense
accumulator of one slot per item; memory: 8 bytes per item pair seen together. A lookup is a
search in the row of the smaller item: the pairs of two ascending item sets are found by walking
each row once, a galloping search from one target to the next (:func:`counts_between`), so a
pair costs about ``log2`` of the gap to it in the row, not the items' users (the intersections
this replaces).
"""

from __future__ import annotations

import numpy as np

from mobeval.kernels.jit import njit


@njit(cache=True, nogil=True)
def _distinct(user_ptr, user_items):
    """Each user's distinct items, ascending, and their rows: ``(ptr, items, rows)``."""
    n_users = len(user_ptr) - 1
    ordered = user_items.copy()
    ptr = np.zeros(n_users + 1, dtype=np.int64)
    items = np.empty(len(user_items), dtype=np.int32)
    rows = np.empty(len(user_items), dtype=np.int32)
    out = 0
    for u in range(n_users):
        start, end = user_ptr[u], user_ptr[u + 1]
        ordered[start:end].sort()
        for r in range(start, end):
            if r > start and ordered[r] == ordered[r - 1]:
                rows[out - 1] += 1
            else:
                items[out] = ordered[r]
                rows[out] = 1
                out += 1
        ptr[u + 1] = out
    return ptr, items[:out], rows[:out]


@njit(cache=True, nogil=True)
def _by_item(ptr, items, rows, n_items):
    """The transposed table: per item its users (ascending) and their rows of it."""
    item_ptr = np.zeros(n_items + 1, dtype=np.int64)
    for p in range(len(items)):
        item_ptr[items[p] + 1] += 1
    for i in range(n_items):
        item_ptr[i + 1] += item_ptr[i]
    fill = item_ptr[:-1].copy()
    users = np.empty(len(items), dtype=np.int32)
    counts = np.empty(len(items), dtype=np.int32)
    for u in range(len(ptr) - 1):
        for p in range(ptr[u], ptr[u + 1]):
            i = items[p]
            users[fill[i]] = u
            counts[fill[i]] = rows[p]
            fill[i] += 1
    return item_ptr, users, counts


@njit(cache=True, nogil=True)
def _walk(by_item, by_user, row_ptr, cols, counts, fill):
    """Each item ``i``'s row ``j >= i``: its length into ``row_ptr[i + 1]`` (``fill`` False), or
    its columns, ascending, and counts at ``row_ptr[i]`` (``fill`` True: the largest count)."""
    item_ptr, item_users, item_rows = by_item
    ptr, items, rows = by_user
    n_items = len(item_ptr) - 1
    seen = np.full(n_items, -1, dtype=np.int64)
    total = np.zeros(n_items, dtype=np.int64)
    largest = 0
    for i in range(n_items):
        start, length = row_ptr[i], 0
        for p in range(item_ptr[i], item_ptr[i + 1]):
            u, m = item_users[p], item_rows[p]
            for q in range(ptr[u], ptr[u + 1]):
                j = items[q]
                if j < i:
                    continue
                if seen[j] != i:
                    seen[j] = i
                    total[j] = 0
                    if fill:
                        cols[start + length] = j
                    length += 1
                total[j] += np.int64(m) * rows[q]
        if not fill:
            row_ptr[i + 1] = length
            continue
        cols[start : start + length].sort()
        for p in range(start, start + length):
            counts[p] = total[cols[p]]
            largest = max(largest, total[cols[p]])
    return largest


@njit(cache=True, nogil=True)
def cooccurrence(user_ptr, user_items, n_items):
    """``(ptr, cols, counts, largest)``: the rows ``i`` of ``n_ij`` for ``j >= i`` of the
    training rows (``user_ptr`` cuts ``user_items``, each user's rows' items, codes
    ``0..n_items-1``) and the largest count (beyond int32's range the counts are not whole)."""
    by_user = _distinct(user_ptr, user_items)
    by_item = _by_item(*by_user, n_items)
    row_ptr = np.zeros(n_items + 1, dtype=np.int64)
    none = np.empty(0, dtype=np.int32)
    _walk(by_item, by_user, row_ptr, none, none, False)
    row_ptr = np.cumsum(row_ptr)
    cols = np.empty(row_ptr[n_items], dtype=np.int32)
    counts = np.empty(row_ptr[n_items], dtype=np.int32)
    largest = _walk(by_item, by_user, row_ptr, cols, counts, True)
    return row_ptr, cols, counts, largest


@njit(cache=True, nogil=True)
def _gallop(cols, lo, end, target):
    """The first position in ``cols[lo:end]`` (ascending) not below ``target`` (``end``: none),
    searched from ``lo`` in doubling steps, then halving."""
    step = 1
    while lo + step < end and cols[lo + step] < target:
        lo += step
        step *= 2
    hi = min(lo + step, end)
    while lo < hi:
        mid = (lo + hi) >> 1
        if cols[mid] < target:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _row_counts(rows, targets, ptr, cols, counts, out, transposed, above):
    """For each ``rows[x]``, the counts of the ``targets[y]`` of its row (``targets[y] >
    rows[x]`` with ``above``, else ``>=``) into ``out[x, y]`` (``out[y, x]``: ``transposed``)."""
    for x in range(len(rows)):
        a = rows[x]
        lo, end = ptr[a], ptr[a + 1]
        first = np.searchsorted(targets, a + 1 if above else a)  # integer codes
        for y in range(first, len(targets)):
            lo = _gallop(cols, lo, end, targets[y])
            if lo == end:
                break
            if cols[lo] == targets[y]:
                if transposed:
                    out[y, x] = counts[lo]
                else:
                    out[x, y] = counts[lo]


@njit(cache=True, nogil=True)
def counts_between(left, right, ptr, cols, counts, out, upper):
    """``out[x, y] = n_ab`` of ``a = left[x]``, ``b = right[y]`` (two ascending arrays of
    distinct item codes; ``out`` zeroed, ``len(left) x len(right)``): each pair from the row
    of its smaller item, ``left``'s rows walked for ``b >= a``, ``right``'s for ``a > b``
    (``upper``: ``left`` is ``right`` and only ``x <= y`` is wanted, the first walk alone)."""
    _row_counts(left, right, ptr, cols, counts, out, False, False)
    if not upper:
        _row_counts(right, left, ptr, cols, counts, out, True, True)
