"""ranx's lists as a ranx ``Run`` holds them: a dict filled row by row (one entry per item under
``duplicates="drop"``), then sorted by Numba's ``np.argsort`` of the negated scores, run step for
step (Numba's quicksort, ``numba/misc/quicksort.py``), only as far as the metrics read.

ranx 0.3.21 (``data_structures/common.py``: ``sort_dict_by_value``, inside ``@njit``) sorts each
query's dict by its scores with Numba's ``np.argsort``: an insertion sort (stable) on lists of up
to ``NUMBA_SMALL_SORT`` items and an unstable quicksort on longer ones, so tied items come in an
order only that sort gives. :func:`ranx_lists` copies each list as the dict holds it and runs the
same sort on the copy (:func:`numba_sort_head`), into the ranges that reach below the largest
cutoff only (a quickselect), unless the list is in that order already (:func:`ranx_list_state`).
"""

from __future__ import annotations

import numpy as np

from mobeval.kernels.blocks import readonly, run_blocks
from mobeval.kernels.borrow import borrowed
from mobeval.kernels.jit import njit
from mobeval.kernels.ranks import (
    NUMBA_MAX_STACK,
    NUMBA_SMALL_SORT,
    UNITS_PER_BLOCK,
    segment_offsets,
)
from mobeval.kernels.recs import hashed_first_repeat


@njit(cache=True)
def _before(a, b):
    """Whether score ``a`` sorts before score ``b`` in Numba's ``np.argsort`` of the negated
    scores: its float comparison (``numba/np/numpy_support.py: lt_floats``, NaN last) of ``-a``
    and ``-b``, ``-a < -b or (isnan(-b) and not isnan(-a))``; negating is exact."""
    return a > b or (np.isnan(b) and not np.isnan(a))


@njit(cache=True, inline="always")
def _swap(values, rows, i, j):
    """Positions ``i`` and ``j`` of the pairs ``(values, rows)`` exchanged."""
    values[i], values[j] = values[j], values[i]
    rows[i], rows[j] = rows[j], rows[i]


@njit(cache=True)
def _insertion_sort(values, rows, low, high):
    """Numba's ``insertion_sort`` of the pairs at ``low .. high``: stable. A value moves left
    past those it sorts before: a number past every ``w`` with ``not value <= w`` (that is,
    :func:`_before`: ``value > w`` or ``w`` NaN, in one comparison), a NaN past none."""
    for i in range(low + 1, high + 1):
        value = values[i]
        row = rows[i]
        j = i
        if value == value:
            while j > low and not value <= values[j - 1]:
                values[j] = values[j - 1]
                rows[j] = rows[j - 1]
                j -= 1
        values[j] = value
        rows[j] = row


@njit(cache=True)
def _partition(values, rows, low, high, ordered):
    """Numba's ``partition`` of the pairs at ``low .. high``: the median of the first, middle
    and last values as the pivot, put at its place, which is returned. Its scans compare with
    the pivot by :func:`_before` in one comparison each: for a number ``p``, ``v`` sorts before
    it iff ``v > p`` and it sorts before ``v`` iff ``not p <= v`` (``v`` smaller, or NaN); a
    NaN pivot has every number before it and sorts before nothing.

    ``ordered``: the range is in sort order already (:func:`ranx_list_state`), so the median of
    three is the middle value, the values before its ties sort before it and those after its
    ties after it: the scans would pass over them untouched, and start at the ties' ends instead
    (found from the middle outwards), the same steps from there. A range in order then costs
    its pivot's ties, not its length."""
    mid = (low + high) >> 1
    if _before(values[mid], values[low]):
        _swap(values, rows, low, mid)
    if _before(values[high], values[mid]):
        _swap(values, rows, high, mid)
    if _before(values[mid], values[low]):
        _swap(values, rows, low, mid)
    pivot = values[mid]
    i = low
    j = high - 1
    if ordered:
        i = mid
        while i > low and not _before(values[i - 1], pivot):
            i -= 1
        j = mid
        while j < high and not _before(pivot, values[j + 1]):
            j += 1
        j = min(j, high - 1)  # the pivot goes to high, the value at high to mid
    _swap(values, rows, high, mid)
    number = pivot == pivot
    while True:
        if number:
            while i < high and values[i] > pivot:
                i += 1
            while j >= low and not pivot <= values[j]:
                j -= 1
        else:
            while i < high and values[i] == values[i]:
                i += 1
        if i >= j:
            break
        _swap(values, rows, i, j)
        i += 1
        j -= 1
    _swap(values, rows, i, high)
    return i


@njit(cache=True)
def numba_sort_head(values, rows, low, high, top, stack, ordered):
    """The pairs ``(values[i], rows[i])`` at ``low .. high`` (in input order) put in the order
    in which Numba's ``np.argsort(-values[low : high + 1])`` (``numba/misc/quicksort.py``:
    ``run_quicksort1``) puts the rows, at the positions before ``top`` only; the pairs at
    ``top`` and after are the same set as there, in another order. Each row moves with its value
    (the comparisons read no row), so ``rows[i]`` ends where Numba's argsort puts position i.
    ``stack``: (``NUMBA_MAX_STACK``, 3) int64 scratch; ``ordered``: the pairs are in sort order
    already (:func:`ranx_list_state`).

    Numba's quicksort partitions a range of 16 or more rows around a pivot (:func:`_partition`),
    sorts each side alone (the smaller first, the larger on a stack) and insertion-sorts a range
    of up to ``NUMBA_SMALL_SORT`` rows (:func:`_insertion_sort`). What a range holds once sorted
    depends only on what it held when it was made, so a range starting at ``top`` or later can
    be left as it is: the same steps on the other ranges give the same rows before ``top``. A
    quickselect, then, which goes on only into the ranges before ``top``: O(n + top log top) a
    list, expected, and Numba's whole sort with ``top`` past the list.

    A list in score order already with ties (a recommender's list, as written) is followed
    through the ranges known to be in order: the list itself, and the left side of a range in
    order, whose values sort before the pivot or tie with it, in order too. Such a range is
    partitioned from its pivot's ties (:func:`_partition`'s ``ordered``) and left as it is where
    Numba insertion-sorts it (a stable sort of values in order moves none); a right side is not
    known to be in order (the value moved from its end to the middle)."""
    stack[0, 0] = low
    stack[0, 1] = high
    stack[0, 2] = ordered
    n = 1
    while n > 0:
        n -= 1
        low = stack[n, 0]
        high = stack[n, 1]
        ordered = stack[n, 2] != 0
        while high - low >= NUMBA_SMALL_SORT and low < top:
            i = _partition(values, rows, low, high, ordered)
            if high - i > i - low:  # the right side, larger, waits on the stack
                if high > i and i + 1 < top:
                    stack[n, 0] = i + 1
                    stack[n, 1] = high
                    stack[n, 2] = False
                    n += 1
                high = i - 1
            else:
                if i > low:
                    stack[n, 0] = low
                    stack[n, 1] = i - 1
                    stack[n, 2] = ordered
                    n += 1
                low = i + 1
                ordered = False
        if low < top and not ordered:
            _insertion_sort(values, rows, low, high)


#: What :func:`ranx_list_state` finds of a list: its first positions in ranx's order already, the
#: whole list in sort order (with ties in those first positions), neither.
HEAD_IN_ORDER, IN_SORT_ORDER, UNORDERED = 0, 1, 2


@njit(cache=True)
def ranx_list_state(values, n, top):
    """How :func:`numba_sort_head` finds ``values[:n]`` for its first ``top`` positions, in one
    scan (past the head, vector compares: no branch a value) for a value out of sort order
    (:func:`_before`: scores never increase, NaNs last). ``HEAD_IN_ORDER`` where it would leave
    them as they are: the values in sort order and either the list short enough for Numba's
    insertion sort alone (``n`` <= ``NUMBA_SMALL_SORT``: stable, ties keep their order) or the
    scores strictly decreasing through position ``top`` (each of the first ``top`` then sorts
    before every later value, so any sort puts it where it is, whatever the quicksort does with
    the ties after it); ``IN_SORT_ORDER`` where the values are in sort order with a tie there
    (its ``ordered``); else ``UNORDERED``."""
    strict = min(top + 1, n) if n > NUMBA_SMALL_SORT else 1  # decreasing up to there
    i = 1
    while i < strict and values[i] < values[i - 1]:
        i += 1
    head = i >= strict
    ordered = True
    for p in range(i, n):  # no rise, NaNs last: a number after a NaN is neither
        v = values[p]
        ordered &= (v <= values[p - 1]) | (v != v)
    if not ordered:
        return UNORDERED
    return HEAD_IN_ORDER if head else IN_SORT_ORDER


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # 2^64 / golden ratio: Knuth's multiplicative hash


@njit(nogil=True, cache=True)
def _ranx_lists_units(
    offsets,
    scores,
    items,
    depth,
    drop,
    out_off,
    out_rows,
    out_items,
    out_scores,
    counts,
    not_finite,
    first,
    last,
):
    """Units ``first`` to ``last - 1`` of :func:`ranx_lists`. Each list's (score, row) pairs
    copied to a scratch array (``not_finite[u]``, when it holds a flag a unit: whether a score
    copied or dropped is NaN or infinite, ``x - x`` not 0); under ``drop`` one pair per item:
    the list's items go first into the metric kernel's hash set
    (:func:`mobeval.kernels.recs.hashed_first_repeat`: multiplicative hashing, linear probing)
    of at least twice the longest list's slots, a slot in use while its stamp is the unit's (no
    clearing between lists); a list without a repeat (as a rule) is copied as it is, and one
    with a repeat copied again through the same table as a dict (under a stamp of its own),
    each slot holding where its item's pair went and a copy giving its score and row to the
    pair of its item's first row. The pairs put in ranx's order up to ``depth``
    (:func:`numba_sort_head`, unless they are in that order already: :func:`ranx_list_state`),
    then the first ``out_off[u + 1] - out_off[u]`` of them, or all when the list has fewer
    (``counts[u]``: how many), written as items and scores (and rows, when ``out_rows`` holds
    them) from ``out_off[u]`` on. The block's scratch arrays are allocated here, the loop run by
    :func:`_ranx_lists_loop`."""
    longest = 1
    for u in range(first, last):
        longest = max(longest, offsets[u + 1] - offsets[u])
    bits = 1
    while (1 << bits) < 2 * longest:
        bits += 1
    size = (1 << bits) if drop else 0
    keys = np.empty(size, dtype=np.int64)
    places = np.empty(size, dtype=np.int64)
    stamps = np.full(size, -1, dtype=np.int64)
    values = np.empty(longest)
    rows = np.empty(longest, dtype=np.int64)
    stack = np.empty((NUMBA_MAX_STACK, 3), dtype=np.int64)
    arrays = (offsets, scores, items, out_off, out_rows, out_items, out_scores, counts, not_finite)
    scratch = (keys, places, stamps, values, rows, stack)
    _ranx_lists_loop(arrays, scratch, bits, depth, drop, first, last)


@njit(cache=True)
def _ranx_lists_loop(arrays, scratch, bits, depth, drop, first, last):
    """:func:`_ranx_lists_units`' loop over its units, on borrowed views of its arrays
    (:mod:`mobeval.kernels.borrow`: a unit's slices and calls count no reference); ``bits``:
    log2 of the dict's slots."""
    offsets, scores, items, out_off, out_rows, out_items, out_scores, counts, not_finite = borrowed(
        *arrays
    )
    keys, places, stamps, values, rows, stack = borrowed(*scratch)
    mask = np.uint64(keys.shape[0] - 1)
    shift = np.uint64(64 - bits)
    with_rows = out_rows.shape[0] > 0
    check = not_finite.shape[0] > 0
    for u in range(first, last):
        start = offsets[u]
        # the list's own views: no index read as counted from the end (Numba's wraparound)
        unit_items, unit_scores = items[start : offsets[u + 1]], scores[start : offsets[u + 1]]
        m = unit_items.shape[0]
        # the list's items as a set (the metric kernel's duplicate check): a repeat sends the
        # list through the dict
        repeats = drop and hashed_first_repeat(unit_items, keys, stamps, u) >= 0
        n = 0
        odd = 0
        if not repeats:
            for i in range(m):
                x = unit_scores[i]
                odd += (x - x) != 0.0
                values[i] = x
                rows[i] = start + i
            n = m
        else:
            stamp = u + last  # a stamp no unit of the block has: the set's slots are free again
            for i in range(m):
                x = unit_scores[i]
                odd += (x - x) != 0.0
                item = unit_items[i]
                h = (np.uint64(item) * _GOLDEN) >> shift
                while stamps[h] == stamp and keys[h] != item:
                    h = (h + np.uint64(1)) & mask
                if stamps[h] == stamp:  # a copy: the dict's entry keeps its place, takes the score
                    values[places[h]] = x
                    rows[places[h]] = start + i
                    continue
                stamps[h] = stamp
                keys[h] = item
                places[h] = n
                values[n] = x
                rows[n] = start + i
                n += 1
        if check:
            not_finite[u] = odd > 0
        top = n if depth < 0 else min(n, depth)
        state = ranx_list_state(values, n, top)
        if state != HEAD_IN_ORDER:
            numba_sort_head(values, rows, 0, n - 1, top, stack, state == IN_SORT_ORDER)
        at = out_off[u]
        counts[u] = min(n, out_off[u + 1] - at)
        for i in range(counts[u]):
            out_items[at + i] = items[rows[i]]
            out_scores[at + i] = values[i]
            if with_rows:
                out_rows[at + i] = rows[i]


def ranx_lists(
    offsets, scores, items, depth=-1, *, drop=False, rows=True, heads=False, not_finite=None
):
    """Every unit's list as a ranx ``Run`` holds it (ranx 0.3.21 ``data_structures/common.py``:
    a dict filled row by row, then ``sort_dict_by_value``, ``np.argsort`` of the negated scores
    in the dict's insertion order, inside ``@njit``), in one pass a list
    (:func:`_ranx_lists_units`).

    ``drop``: one entry per item, at the place of its FIRST row, with the score (and row) of
    its LAST (``d[item] = score``, as :func:`drop_repeated` reduces a list). Then Numba's
    ``np.argsort``, whose quicksort keeps the input order of tied scores on lists of up to
    ``NUMBA_SMALL_SORT`` items and not on longer ones, run step for step by
    :func:`numba_sort_head` on each list's copy (skipped where the list is in its order
    already, :func:`ranx_list_state`): each list's first ``depth`` positions in ranx's order (-1:
    all), O(L + depth log depth) a list of L rows.

    Returns ``(offsets, rows, items, scores)``: the lists' offsets, the rows of ``scores`` and
    ``items`` each position holds (int64; None unless ``rows``), and the items and scores in
    that order. ``heads``: each list's first ``depth`` positions only (a list of fewer, whole),
    else every entry, those after ``depth`` the list's other entries in another order.
    ``not_finite`` (a bool array, a flag a unit; None: no check): set where a list holds a NaN
    or infinite score, a dropped copy's included (the scores' check, made on the pass that reads
    them all, not on one of its own). Units in blocks on threads
    (:func:`mobeval.kernels.blocks.run_blocks`)."""
    offsets, items = readonly(offsets, np.int64), readonly(items, np.int64)
    scores = readonly(scores, np.float64)
    lengths = np.diff(offsets)
    bound = np.minimum(lengths, depth) if heads and depth >= 0 else lengths
    out_off = segment_offsets(bound)
    size = int(out_off[-1])
    counts = np.empty(lengths.shape[0], dtype=np.int64)
    out = (np.empty(size if rows else 0, dtype=np.int64), np.empty(size, dtype=np.int64))
    out += (np.empty(size),)
    flags = np.zeros(0, dtype=np.bool_) if not_finite is None else not_finite
    args = (offsets, scores, items, np.int64(depth), bool(drop), out_off, *out, counts, flags)
    run_blocks(_ranx_lists_units, lengths.shape[0], *args, grain=UNITS_PER_BLOCK)
    if not np.array_equal(counts, bound):  # the dicts made lists shorter: close the gaps
        written = np.arange(size) < np.repeat(out_off[:-1] + counts, bound)
        out_off = segment_offsets(counts)
        out = tuple(a[written] if a.shape[0] else a for a in out)
    return out_off, out[0] if rows else None, out[1], out[2]


def ranx_order(offsets, scores, items, depth=-1, rows=True):
    """Every unit's list in ranx's order (:func:`ranx_lists`, its items kept as they come): its
    first ``depth`` positions (-1: all), the others after them. Returns ``(rows, items,
    scores)``: the permutation of all rows (int64, unit by unit; None unless ``rows``) and the
    items and scores in its order."""
    return ranx_lists(offsets, scores, items, depth, rows=rows)[1:]
