"""The items' co-occurrence counts of the training rows, once, as a sparse upper triangle (Numba).

``n_ij = sum_u m_ui m_uj`` (``m_ui``: user ``u``'s training rows of item ``i``), the numerator
of Microsoft Recommenders' co-occurrence similarity (``_get_cooccurrence_similarity``: it counts
the pairs of a self-join of the training rows on the user, ``i1 <= i2``). Held for ``i <= j``
only, diagonal included, as CSR rows: ``ptr`` cuts ``cols`` (``j``, ascending) and ``counts``
(``n_ij``), both int32. Built row by row from the users' items in ``sum_u d_u (d_u + 1) / 2``
steps (``d_u``: the user's distinct items; twice: the rows' lengths, then their entries; rows in
small blocks on threads, the users' items transposed to the items in parts on threads), a mask
of one bit and a dense accumulator of one slot per item a thread; memory: 8 bytes per item pair
seen together, and about 20 bytes per training row while it is built. A lookup is a search in
the row of the smaller item: the pairs of two ascending item sets are found by walking each row
once, a galloping search from one target to the next (:func:`counts_between`), so a pair costs
about ``log2`` of the gap to it in the row, not the items' users (the intersections this
replaces).
"""

from __future__ import annotations

import numpy as np

from mobeval.kernels.blocks import readonly, run_blocks, thread_count
from mobeval.kernels.jit import njit

#: The rows are walked in blocks of this many items, taken by the threads as they come free: the
#: rows of popular items are far longer than the others, and fewer, larger blocks left one
#: thread walking the popular ones alone (a quarter of the two passes' time on two threads).
ITEMS_PER_BLOCK = 512
#: Fewer users than this have their distinct items found in one block (no thread).
USERS_PER_BLOCK = 4096
#: The users are transposed in parts on threads when they hold this many items per item and part
#: or more: a part's histogram of the items costs no more than a small share of its entries.
HELD_PER_ITEM_PART = 8


@njit(cache=True, nogil=True)
def _distinct(user_ptr, user_items, items, rows, counts, first, last):
    """Users ``first`` to ``last - 1``: each one's distinct items, ascending, at the start of its
    own span of ``items`` (``user_ptr[u]`` on; the rest of the span unused), their rows in
    ``rows``, and how many in ``counts[u]``."""
    for u in range(first, last):
        start, end = user_ptr[u], user_ptr[u + 1]
        items[start:end] = user_items[start:end]
        items[start:end].sort()
        out = start
        for r in range(start, end):
            if r > start and items[r] == items[out - 1]:
                rows[out - 1] += 1
            else:
                items[out] = items[r]
                rows[out] = 1
                out += 1
        counts[u] = out - start


@njit(cache=True, nogil=True)
def _item_histograms(user_ptr, counts, items, parts, hist, first, last):
    """Parts ``first`` to ``last - 1`` of the users (``parts`` cuts them): how many of each
    part's users hold each item, into ``hist[part, item + 1]``."""
    for part in range(first, last):
        for u in range(parts[part], parts[part + 1]):
            for p in range(user_ptr[u], user_ptr[u] + counts[u]):
                hist[part, items[p] + 1] += 1


@njit(cache=True, nogil=True)
def _item_spans(user_ptr, counts, items, parts, fill, starts, spans, first, last):
    """Parts ``first`` to ``last - 1`` of the users: each user's spans from each of its items
    on, at the item's next place for the part (``fill[part, item]``, advanced)."""
    for part in range(first, last):
        for u in range(parts[part], parts[part + 1]):
            end = user_ptr[u] + counts[u]
            for p in range(user_ptr[u], end):
                i = items[p]
                starts[fill[part, i]] = p
                spans[fill[part, i]] = end - p
                fill[part, i] += 1


def _by_item(user_ptr, counts, items, n_items):
    """The transposed table: per item (``item_ptr`` cuts the rest), its users ascending, each as
    the span of that user's distinct items (:func:`_distinct`) from this one on: where it starts
    in ``items`` (``starts``, int64) and how many items it holds (``spans``, int32). The users
    in parts on threads, a histogram of the items a part (:func:`_item_histograms`): a part's
    places for an item follow the parts before it (:func:`_item_spans`)."""
    held = int(counts.sum())
    n_parts = max(1, min(thread_count(), held // max(1, HELD_PER_ITEM_PART * n_items)))
    parts = np.linspace(0, len(counts), n_parts + 1).astype(np.int64)
    hist = np.zeros((n_parts, n_items + 1), dtype=np.int64)
    run_blocks(_item_histograms, n_parts, user_ptr, counts, items, parts, hist, n_blocks=n_parts)
    item_ptr = np.cumsum(hist.sum(axis=0))
    fill = item_ptr[:-1] + np.cumsum(hist[:, 1:], axis=0) - hist[:, 1:]
    starts = np.empty(held, dtype=np.int64)
    spans = np.empty(held, dtype=np.int32)
    args = (user_ptr, counts, items, parts, fill, starts, spans)
    run_blocks(_item_spans, n_parts, *args, n_blocks=n_parts)
    return item_ptr, starts, spans


#: A 64-bit de Bruijn sequence: the top six bits of ``2^t`` times it differ for each ``t < 64``
#: (C. E. Leiserson, H. Prokop, K. H. Randall, "Using de Bruijn sequences to index a 1 in a
#: computer word", 1998).
DE_BRUIJN = 0x03F79D71B4CB0A89
#: At ``(2^t * DE_BRUIJN mod 2^64) >> 58``: ``t``.
LOWEST_BITS = np.zeros(64, dtype=np.int64)
LOWEST_BITS[[((DE_BRUIJN << t) % (1 << 64)) >> 58 for t in range(64)]] = np.arange(64)
ONE = np.uint64(1)


@njit(cache=True, inline="always")
def _lowest_bit(x):
    """The position of the lowest set bit of ``x`` (uint64, not 0): its isolated bit
    ``x & -x`` times :data:`DE_BRUIJN`, whose top six bits index :data:`LOWEST_BITS`."""
    return LOWEST_BITS[((x & (~x + ONE)) * np.uint64(DE_BRUIJN)) >> np.uint64(58)]


@njit(cache=True, nogil=True)
def _rows(by_item, by_user, fill, row_ptr, cols, counts, row_largest, first, last):
    """Rows ``first`` to ``last - 1``, each item ``i``'s ``j >= i``: its length into
    ``row_ptr[i + 1]`` (``fill`` False), or its columns, ascending, and counts from
    ``row_ptr[i]`` and its largest count into ``row_largest[i]`` (``fill`` True). Each user of
    ``i`` adds its items from ``i`` on (its span, ascending): a bit each in a mask of the items
    and, when filling, ``m_ui m_uj`` to a dense ``n_ij``; the mask's set bits, read word by word
    from ``i``'s up to the highest item met, give the columns in order (no sort), and the words
    and counts read are zeroed for the next row."""
    item_ptr, starts, spans = by_item
    items, rows = by_user
    n_items = len(item_ptr) - 1
    marks = np.zeros((n_items + 63) >> 6, dtype=np.uint64)
    total = np.zeros(n_items if fill else 0, dtype=np.int64)
    for i in range(first, last):
        top = i
        for e in range(item_ptr[i], item_ptr[i + 1]):
            q0 = starts[e]
            q1 = q0 + spans[e]
            m = np.int64(rows[q0])
            for q in range(q0, q1):
                j = items[q]
                marks[j >> 6] |= ONE << np.uint64(j & 63)
                if fill:
                    total[j] += m * rows[q]
            top = max(top, items[q1 - 1])
        k = row_ptr[i] if fill else 0
        largest = 0
        for w in range(i >> 6, (top >> 6) + 1):
            x = marks[w]
            marks[w] = 0
            while x:
                if fill:
                    j = (w << 6) + _lowest_bit(x)
                    n_ij = total[j]
                    total[j] = 0
                    cols[k] = j
                    counts[k] = n_ij
                    largest = max(largest, n_ij)
                k += 1
                x &= x - ONE
        if fill:
            row_largest[i] = largest
        else:
            row_ptr[i + 1] = k


def cooccurrence(user_ptr, user_items, n_items):
    """``(ptr, cols, counts, largest)``: the rows ``i`` of ``n_ij`` for ``j >= i`` of the
    training rows (``user_ptr`` cuts ``user_items``, each user's rows' items, codes
    ``0..n_items-1``) and the largest count (beyond int32's range the counts are not whole).
    Each user's distinct items are found in blocks of users on threads (:func:`_distinct`), then
    the rows in two passes, in blocks of items on threads (:func:`_rows`): their lengths, then
    their entries."""
    user_ptr, user_items = readonly(user_ptr, np.int64), readonly(user_items, np.int32)
    items = np.empty(len(user_items), dtype=np.int32)
    rows = np.empty(len(user_items), dtype=np.int32)
    distinct = np.empty(len(user_ptr) - 1, dtype=np.int64)
    run_blocks(
        _distinct, len(distinct), user_ptr, user_items, items, rows, distinct, grain=USERS_PER_BLOCK
    )
    by_item, by_user = _by_item(user_ptr, distinct, items, n_items), (items, rows)
    row_ptr = np.zeros(n_items + 1, dtype=np.int64)
    row_blocks = -(-n_items // ITEMS_PER_BLOCK)  # the popular items' rows are the long ones
    none, no_largest = np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int64)
    args = (by_item, by_user, False, row_ptr, none, none, no_largest)
    run_blocks(_rows, n_items, *args, grain=ITEMS_PER_BLOCK, n_blocks=row_blocks)
    row_ptr = np.cumsum(row_ptr)
    cols = np.empty(row_ptr[n_items], dtype=np.int32)
    counts = np.empty(row_ptr[n_items], dtype=np.int32)
    row_largest = np.zeros(n_items, dtype=np.int64)
    args = (by_item, by_user, True, row_ptr, cols, counts, row_largest)
    run_blocks(_rows, n_items, *args, grain=ITEMS_PER_BLOCK, n_blocks=row_blocks)
    return row_ptr, cols, counts, int(row_largest.max(initial=0))


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
