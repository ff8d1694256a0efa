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


def segment_offsets(counts):
    """int64 offsets ``[0, c0, c0 + c1, ...]`` of consecutive segments of ``counts`` entries."""
    offsets = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets
