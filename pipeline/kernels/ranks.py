"""Rank of the true location inside each sample's candidate list, without sorting the list.

Candidates are ordered by a preference value, higher first (the score, or minus the rank when only a
rank column is given). The rank of the target is ``1 + #{c : v_c > v_t}`` plus the candidates tied
with it that a tie policy puts first. One pass over each list, O(L) per sample; samples in parallel.

Tie policies (the codes are data shared with ``mobeval.metrics.nextloc``):

* ``ID_ASC``       ties broken by lower location id first (mobeval's deterministic default);
* ``ID_ASC_STR``   ties broken by the location id compared as a decimal string, ascending ("10"
                   before "9"): ir_measures' RR@k provider;
* ``ID_DESC_STR``  the same, descending: trec_eval's ``qsort`` on docno, so "9" comes before "10";
* ``INPUT``        ties keep the input order (any code that sorts stably);
* ``RANX``         the order of Numba's ``np.argsort`` of the negated scores in input order, the
                   sort a ranx ``Run`` applies once when it is built (``Run(dict)``, ``from_dict``,
                   ``from_df``, ``from_file``, ``add``); ``RANX_COMPARABLE`` applies it twice, as
                   ``evaluate(..., make_comparable=True)`` re-sorts the Run; ``RANX_DICT`` is
                   ``np.argsort(scores)[::-1]``, ranx's sort of a plain dict given to ``evaluate``.
                   Numba's sort is an insertion sort (stable) below ``NUMBA_SMALL_SORT`` + 1 items
                   and an unstable quicksort above, so on lists of up to 15 items ``RANX`` and
                   ``RANX_COMPARABLE`` are ``INPUT`` and ``RANX_DICT`` is the reverse input order;
                   on longer lists a tied target is placed by running that same Numba sort;
* ``OPTIMISTIC``   the target comes first among its ties (rank = 1 + #greater);
* ``PESSIMISTIC``  the target comes last among its ties (rank = #greater + #equal);
* ``AVERAGE``      every order of the ties is equally likely: the metrics are averaged over the
                   ranks from optimistic to pessimistic (McSherry & Najork, ECIR 2008).

The kernel returns the rank bounds (lo, hi): lo == hi for every policy except ``AVERAGE``.
A sample whose list does not hold the target gets lo = hi = +inf (a miss).
"""

from __future__ import annotations

import numpy as np

from mobeval.kernels.blocks import readonly, run_blocks
from mobeval.kernels.codes import (
    AVERAGE,
    ID_ASC,
    ID_ASC_STR,
    ID_DESC_STR,
    INPUT,
    OPTIMISTIC,
    PESSIMISTIC,
    RANX,
    RANX_COMPARABLE,
    RANX_DICT,
)
from mobeval.kernels.jit import njit

# Numba's np.argsort (numba/misc/quicksort.py, SMALL_QUICKSORT) insertion-sorts a range of fewer
# than 16 items; only longer ranges go through its (unstable) quicksort partitions.
NUMBA_SMALL_SORT = 15
NUMBA_MAX_STACK = 100  # its quicksort's stack of ranges (MAX_STACK): the larger side waits there


@njit(cache=True)
def _decimal_digits(value):
    """Number of decimal digits of |value| (0 has one digit)."""
    magnitude = abs(value)
    digits = 1
    while magnitude >= 10:
        magnitude //= 10
        digits += 1
    return digits


@njit(cache=True)
def string_order(a, b):
    """Compare str(a) and str(b) as strings (bytewise): -1, 0 or 1, without building strings."""
    if a == b:
        return 0
    if a < 0 <= b:
        return -1  # '-' sorts before every digit
    if b < 0 <= a:
        return 1
    sign = 1
    if a < 0:  # both negative: compare the digit strings after the common '-'
        a, b = -a, -b
    da = _decimal_digits(a)
    db = _decimal_digits(b)
    for i in range(min(da, db)):
        digit_a = (a // 10 ** (da - 1 - i)) % 10
        digit_b = (b // 10 ** (db - 1 - i)) % 10
        if digit_a != digit_b:
            return sign if digit_a > digit_b else -sign
    return sign if da > db else -sign


@njit(cache=True)
def numba_sort_rank(values, position, tie_policy):
    """1-based rank of ``values[position]`` after ranx's sort (``RANX``, ``RANX_COMPARABLE`` or
    ``RANX_DICT``) of ``values`` (higher first, given in input order), by running Numba's
    ``np.argsort`` as ranx does."""
    n = values.shape[0]
    if tie_policy == RANX_DICT:
        order = np.argsort(values)  # ascending, then read backwards
        for i in range(n):
            if order[i] == position:
                return n - i
    order = np.argsort(-values)
    if tie_policy == RANX_COMPARABLE:
        order = order[np.argsort(-values[order])]
    for i in range(n):
        if order[i] == position:
            return i + 1
    return -1


@njit(cache=True)
def _unit_rank_bounds(locations, preference, start, stop, position, tie_policy):
    """(lo, hi) rank bounds of the target at row ``position`` of one unit's list ``[start,
    stop)``; +inf if absent (``position`` < 0); NaN where a second pass places a tied target: a
    string policy (:func:`_string_ranks`) or a ranx policy on a list of more than
    ``NUMBA_SMALL_SORT`` items (:func:`_sorted_ranks`).

    A first pass counts the candidates preferred to the target and those equal to it (the target
    among them) without a branch; only a list with a tie (equal > 1) takes the policy's pass."""
    if position < 0:
        return np.inf, np.inf
    value = preference[position]
    greater = 0
    equal = 0
    for i in range(start, stop):
        v = preference[i]
        greater += v > value
        equal += v == value
    if equal == 1:  # no tie: every policy ranks the target after the greater ones
        return greater + 1.0, greater + 1.0
    target = locations[position]
    tied_before = 0
    tied = equal - 1
    for i in range(start, stop):
        if preference[i] == value and i != position:
            if tie_policy == ID_ASC:
                if locations[i] < target:
                    tied_before += 1
            elif tie_policy in (INPUT, RANX, RANX_COMPARABLE, RANX_DICT) and (
                # input order; ranx's plain-dict sort reverses it on short lists
                (i > position) if tie_policy == RANX_DICT else (i < position)
            ):
                tied_before += 1
    if tie_policy in (ID_DESC_STR, ID_ASC_STR) or (
        tie_policy in (RANX, RANX_COMPARABLE, RANX_DICT) and stop - start > NUMBA_SMALL_SORT
    ):
        return np.nan, np.nan  # placed by _string_ranks or _sorted_ranks
    if tie_policy in (OPTIMISTIC, AVERAGE):
        lo = greater + 1.0
    elif tie_policy == PESSIMISTIC:
        lo = greater + tied + 1.0
    else:
        lo = greater + tied_before + 1.0
    return lo, (greater + tied + 1.0 if tie_policy == AVERAGE else lo)


@njit(nogil=True, cache=True)
def _rank_units(offsets, locations, preference, targets, tie_policy, low, span, out, first, last):
    """Rank bounds of units ``first`` to ``last - 1`` into ``out[0, u]``, ``out[1, u]``. One pass
    over each list's locations finds the target's row; when ``span`` > 0 it also stamps each id's
    slot (``locations - low`` indexes an array of ``span`` stamps) with the unit's number in the
    block: a slot that already holds it is a copy within the unit (``out[2, u]`` = 1). Run on
    blocks of units by :func:`target_rank_bounds`."""
    seen = np.zeros(span, dtype=np.int32)
    for u in range(first, last):
        start = offsets[u]
        stop = offsets[u + 1]
        target = targets[u]
        position = -1
        if span > 0:
            stamp = np.int32(u - first + 1)
            repeated = False
            for i in range(start, stop):
                location = locations[i]
                slot = location - low
                repeated |= seen[slot] == stamp
                seen[slot] = stamp
                if location == target and position < 0:
                    position = i
            if repeated:
                out[2, u] = 1.0
        else:
            for i in range(start, stop):
                if locations[i] == target:
                    position = i
                    break
        out[0, u], out[1, u] = _unit_rank_bounds(
            locations, preference, start, stop, position, tie_policy
        )


@njit(cache=True)
def _sorted_ranks(offsets, locations, preference, targets, tie_policy, units, out):
    """``out[0, u]`` = ``out[1, u]`` = the rank :func:`numba_sort_rank` gives each unit u of
    ``units``. Its own function, compiled only by a run that meets such a unit (a ranx policy, a
    tied target, a long list), as it compiles Numba's sort."""
    for u in units:
        start = offsets[u]
        position = start
        while locations[position] != targets[u]:
            position += 1
        rank = float(
            numba_sort_rank(preference[start : offsets[u + 1]], position - start, tie_policy)
        )
        out[0, u] = rank
        out[1, u] = rank


@njit(cache=True)
def _string_ranks(offsets, locations, preference, targets, tie_policy, units, out):
    """``out[0, u]`` = ``out[1, u]`` = the rank of each unit u of ``units`` whose target is tied,
    under ``ID_DESC_STR`` or ``ID_ASC_STR``: ties ordered by the ids' decimal strings
    (:func:`string_order`). Its own function, compiled only by a run that meets such a unit."""
    order = 1 if tie_policy == ID_DESC_STR else -1  # string_order of a tied id placed first
    for u in units:
        start = offsets[u]
        position = start
        while locations[position] != targets[u]:
            position += 1
        value = preference[position]
        rank = 1.0
        for i in range(start, offsets[u + 1]):
            v = preference[i]
            if v > value or (
                v == value and i != position and string_order(locations[i], targets[u]) == order
            ):
                rank += 1.0
        out[0, u] = rank
        out[1, u] = rank


def target_rank_bounds(
    offsets, locations, preference, targets, tie_policy, n_blocks, check_duplicates
):
    """Rank bounds of ``targets[u]`` within ``locations[offsets[u]:offsets[u+1]]`` for every unit
    u, and the first unit whose list holds a location twice (-1 if none, or if not
    ``check_duplicates``).

    ``preference`` is higher-is-better (score, or -rank). Returns (lo, hi, duplicate): lo and hi
    float64 arrays, +inf for a miss. The duplicate check shares the rank pass when the ids span at
    most ``MARKER_RANGE`` values; wider ids take :func:`first_duplicate_unit`'s sort. Units in
    ``n_blocks`` blocks on threads (:func:`mobeval.kernels.blocks.run_blocks`).
    """
    offsets, locations, targets = (readonly(a, np.int64) for a in (offsets, locations, targets))
    preference = readonly(preference, np.float64)
    n_units = offsets.shape[0] - 1
    low, span = 0, 0
    duplicate = -1
    if check_duplicates and locations.shape[0]:
        low = int(locations.min())
        span = int(locations.max()) - low + 1
        if span > MARKER_RANGE:
            duplicate, span = first_duplicate_unit(offsets, locations, n_blocks), 0
    out = np.zeros((3, n_units))
    args = (offsets, locations, preference, targets, int(tie_policy), low, span, out)
    run_blocks(_rank_units, n_units, *args, grain=UNITS_PER_BLOCK, n_blocks=n_blocks)
    later = np.flatnonzero(np.isnan(out[0]))  # tied targets a second pass places
    if later.size:
        second = _string_ranks if tie_policy in (ID_DESC_STR, ID_ASC_STR) else _sorted_ranks
        second(offsets, locations, preference, targets, int(tie_policy), later, out)
    if span > 0:
        flagged = np.flatnonzero(out[2])
        duplicate = int(flagged[0]) if flagged.size else -1
    return out[0], out[1], duplicate


MARKER_RANGE = 1 << 22  # ids spanning fewer values than this use a marker array
UNITS_PER_BLOCK = 1024  # fewer units than this are ranked in one block (no thread)


@njit(nogil=True, cache=True)
def _dict_units(
    offsets,
    locations,
    preference,
    keep_last_value,
    packed,
    out_locations,
    out_preference,
    low,
    span,
    counts,
    first,
    last,
):
    """Units ``first`` to ``last - 1`` of :func:`_dict_entries`: ``counts[u]``, and with
    ``packed`` their entries. ``span`` > 0: the ids lie in ``low .. low + span - 1`` and a marker
    array indexed by id says where each id's entry went (an entry of unit u lies at or after u's
    first position, and the units run in order, so an older mark is never taken for one of u's);
    ``span`` = 0: each list is sorted, stably."""
    write = packed.shape[0] > 0
    if span > 0:
        seen = np.full(span, -1, dtype=np.int64)
        for u in range(first, last):
            base = packed[u] if write else offsets[u]
            at = base
            for i in range(offsets[u], offsets[u + 1]):
                slot = locations[i] - low
                entry = seen[slot]
                if entry >= base:  # a copy: the entry keeps its place, maybe takes the value
                    if write and keep_last_value:
                        out_preference[entry] = preference[i]
                else:
                    seen[slot] = at
                    if write:
                        out_locations[at] = locations[i]
                        out_preference[at] = preference[i]
                    at += 1
            counts[u] = at - base
        return
    for u in range(first, last):
        start = offsets[u]
        n = offsets[u + 1] - start
        values = locations[start : start + n]
        order = np.argsort(values, kind="mergesort")  # stable: a group's rows in row order
        is_first = np.zeros(n, dtype=np.bool_)
        last_row = np.arange(n)  # the row whose value the entry at a first row takes
        g = 0
        while g < n:
            end = g
            while end + 1 < n and values[order[end + 1]] == values[order[g]]:
                end += 1
            is_first[order[g]] = True
            if keep_last_value:
                last_row[order[g]] = order[end]
            g = end + 1
        at = packed[u] if write else start
        for i in range(n):
            if is_first[i]:
                if write:
                    out_locations[at] = values[i]
                    out_preference[at] = preference[start + last_row[i]]
                at += 1
        counts[u] = at - (packed[u] if write else start)


def _dict_entries(
    offsets, locations, preference, keep_last_value, n_blocks, packed, out_locations, out_preference
):
    """Each unit's list as a dict filled row by row holds it (``d[location] = value``): returns
    ``counts[u]``, unit u's number of entries (distinct locations). With ``packed`` (n_units + 1
    offsets of the reduced lists, from those counts) it also writes unit u's entries to
    ``out_*[packed[u] : packed[u + 1]]``: each location once, at the place of its first row, with
    the value of its last row (``keep_last_value``) or of its first. Without (``packed`` empty) it
    only counts, reading and writing nothing else.

    When the ids span at most ``MARKER_RANGE`` values, each block of units (``n_blocks``: a few per
    thread) marks where each id's entry went in an array indexed by id, O(L) per unit; otherwise
    each list is sorted, stably (O(L log L)) (:func:`_dict_units`, on threads:
    :func:`mobeval.kernels.blocks.run_blocks`)."""
    offsets, locations, packed = (readonly(a, np.int64) for a in (offsets, locations, packed))
    preference = readonly(preference, np.float64)
    n_units = offsets.shape[0] - 1
    counts = np.zeros(n_units, dtype=np.int64)
    if locations.shape[0] == 0:
        return counts
    low = int(locations.min())
    span = int(locations.max()) - low + 1  # Python integers: no overflow whatever the ids
    args = (offsets, locations, preference, bool(keep_last_value), packed)
    args += (out_locations, out_preference, low, span if span <= MARKER_RANGE else 0, counts)
    run_blocks(_dict_units, n_units, *args, grain=UNITS_PER_BLOCK, n_blocks=n_blocks)
    return counts


_NO_INTS = np.empty(0, dtype=np.int64)
_NO_FLOATS = np.empty(0, dtype=np.float64)


def entry_counts(offsets, locations, n_blocks):
    """Distinct locations of every unit's list (see :func:`_dict_entries`; one read-only pass)."""
    return _dict_entries(
        offsets, locations, _NO_FLOATS, False, n_blocks, _NO_INTS, _NO_INTS, _NO_FLOATS
    )


def first_duplicate_unit(offsets, locations, n_blocks):
    """Index of the first unit whose list holds a location twice, or -1."""
    short = np.flatnonzero(entry_counts(offsets, locations, n_blocks) < np.diff(offsets))
    return int(short[0]) if short.size else -1


def drop_repeated(offsets, locations, preference, keep_last_value, n_blocks, counts=None):
    """``duplicates="drop"`` of next-location and of recs (which passes each row's number as
    ``preference``, and takes the rows kept): every unit's list as a dict filled row by row holds
    it (``d[location] = value``, as ranx, pytrec_eval and ir_measures hold a run): one entry per
    location, at the place of its FIRST row, with the preference of its LAST row
    (``keep_last_value``; False keeps the first row's, for lists ranked by place). The later copies
    vanish and the entries after them move up. Returns ``(offsets, locations, preference)``: the
    arrays given when no list repeats a location (one read-only pass, :func:`entry_counts`, or
    its ``counts`` given), else the reduced lists (a second pass writes them)."""
    if counts is None:
        counts = entry_counts(offsets, locations, n_blocks)
    if int(counts.sum()) == locations.shape[0]:
        return offsets, locations, preference
    packed = segment_offsets(counts)
    out_locations = np.empty(packed[-1], dtype=np.int64)
    out_preference = np.empty(packed[-1], dtype=np.float64)
    _dict_entries(
        offsets,
        locations,
        preference,
        keep_last_value,
        n_blocks,
        packed,
        out_locations,
        out_preference,
    )
    return packed, out_locations, out_preference


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
    each item goes into an open-addressing hash table (multiplicative hashing, Knuth, TAOCP vol.
    3, 6.4; linear probing) of at least twice the longest list's slots, holding where its pair
    went, a slot in use while its stamp is the unit's (no clearing between lists), and a copy
    gives its score and row to the pair of its item's first row. The pairs put in ranx's order
    up to ``depth`` (:func:`numba_sort_head`, unless they are in that order already:
    :func:`ranx_list_state`), then the first ``out_off[u + 1] - out_off[u]`` of them, or all
    when the list has fewer (``counts[u]``: how many), written as items and scores (and rows,
    when ``out_rows`` holds them) from ``out_off[u]`` on."""
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
    mask = np.uint64(size - 1)
    shift = np.uint64(64 - bits)
    values = np.empty(longest)
    rows = np.empty(longest, dtype=np.int64)
    stack = np.empty((NUMBA_MAX_STACK, 3), dtype=np.int64)
    with_rows = out_rows.shape[0] > 0
    check = not_finite.shape[0] > 0
    for u in range(first, last):
        start = offsets[u]
        # the list's own views: no index read as counted from the end (Numba's wraparound)
        unit_items, unit_scores = items[start : offsets[u + 1]], scores[start : offsets[u + 1]]
        n = 0
        odd = 0
        for i in range(unit_items.shape[0]):
            x = unit_scores[i]
            odd += (x - x) != 0.0
            if drop:
                item = unit_items[i]
                h = (np.uint64(item) * _GOLDEN) >> shift
                while stamps[h] == u and keys[h] != item:
                    h = (h + np.uint64(1)) & mask
                if stamps[h] == u:  # a copy: the dict's entry keeps its place, takes the score
                    values[places[h]] = unit_scores[i]
                    rows[places[h]] = start + i
                    continue
                stamps[h] = u
                keys[h] = item
                places[h] = n
            values[n] = unit_scores[i]
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


def segment_offsets(counts):
    """int64 offsets ``[0, c0, c0 + c1, ...]`` of consecutive segments of ``counts`` entries."""
    offsets = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets
