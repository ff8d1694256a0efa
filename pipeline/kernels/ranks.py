"""Rank of the true location inside each sample's candidate list, without sorting the list.

Candidates are ordered by a preference value, higher first (the score, or minus the rank when only a
rank column is given). The rank of the target is ``1 + #{c : v_c > v_t}`` plus the candidates tied
with it that a tie policy puts first. One pass over each list, O(L) per sample; samples in parallel.

Tie policies (the codes are data shared with ``pipeline.metrics.nextloc``):

* ``ID_ASC``       ties broken by lower location id first (mobeval's deterministic default);
* ``ID_ASC_STR``   ties broken by the location id compared as a decimal string, ascending ("10"
                   before "9"): ir_measures' RR@k provider;
* ``ID_DESC_STR``  the same, descending: trec_eval's ``qsort`` on docno, so "9" comes before "10";
* ``INPUT``        ties keep the input order (ranx on short lists, any code that sorts stably);
* ``OPTIMISTIC``   the target comes first among its ties (rank = 1 + #greater);
* ``PESSIMISTIC``  the target comes last among its ties (rank = #greater + #equal);
* ``AVERAGE``      every order of the ties is equally likely: the metrics are averaged over the
                   ranks from optimistic to pessimistic (McSherry & Najork, ECIR 2008).

The kernel returns the rank bounds (lo, hi): lo == hi for every policy except ``AVERAGE``.
A sample whose list does not hold the target gets lo = hi = +inf (a miss).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

ID_ASC = 0
ID_DESC_STR = 1
INPUT = 2
OPTIMISTIC = 3
PESSIMISTIC = 4
AVERAGE = 5
ID_ASC_STR = 6


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


@njit(parallel=True, cache=True)
def target_rank_bounds(offsets, locations, preference, targets, tie_policy):
    """Rank bounds of ``targets[u]`` within ``locations[offsets[u]:offsets[u+1]]`` for every unit u.

    ``preference`` is higher-is-better (score, or -rank). Returns (lo, hi) float64 arrays, +inf for
    a miss.
    """
    n_units = offsets.shape[0] - 1
    lo = np.full(n_units, np.inf)
    hi = np.full(n_units, np.inf)
    for u in prange(n_units):
        start = offsets[u]
        stop = offsets[u + 1]
        target = targets[u]
        position = -1
        for i in range(start, stop):
            if locations[i] == target:
                position = i
                break
        if position < 0:
            continue
        value = preference[position]
        greater = 0
        tied_before = 0
        tied = 0
        for i in range(start, stop):
            v = preference[i]
            if v > value:
                greater += 1
            elif v == value and i != position:
                tied += 1
                if tie_policy == ID_ASC:
                    if locations[i] < target:
                        tied_before += 1
                elif tie_policy == ID_DESC_STR:
                    if string_order(locations[i], target) > 0:
                        tied_before += 1
                elif tie_policy == ID_ASC_STR:
                    if string_order(locations[i], target) < 0:
                        tied_before += 1
                elif tie_policy == INPUT and i < position:
                    tied_before += 1
        if tie_policy in (OPTIMISTIC, AVERAGE):
            lo[u] = greater + 1.0
        elif tie_policy == PESSIMISTIC:
            lo[u] = greater + tied + 1.0
        else:
            lo[u] = greater + tied_before + 1.0
        hi[u] = greater + tied + 1.0 if tie_policy == AVERAGE else lo[u]
    return lo, hi


MARKER_RANGE = 1 << 22  # ids spanning fewer values than this use a marker array (16 MiB per thread)


@njit(parallel=True, cache=True)
def first_duplicate_unit(offsets, locations, n_blocks):
    """Index of the first unit whose list holds a location twice, or -1.

    When the ids span a small range, each thread marks seen ids in an array indexed by id (O(L) per
    unit), one array per block of units (``n_blocks``: a few per thread); otherwise each list is
    sorted (O(L log L)).
    """
    n_units = offsets.shape[0] - 1
    flags = np.zeros(n_units, dtype=np.bool_)
    if locations.shape[0] == 0:
        return -1
    low = locations.min()
    span = locations.max() - low + 1
    if span <= MARKER_RANGE:
        n_blocks = max(1, min(n_units, n_blocks))
        for block in prange(n_blocks):
            seen = np.full(span, -1, dtype=np.int64)
            for u in range(block * n_units // n_blocks, (block + 1) * n_units // n_blocks):
                for i in range(offsets[u], offsets[u + 1]):
                    slot = locations[i] - low
                    if seen[slot] == u:
                        flags[u] = True
                        break
                    seen[slot] = u
    else:
        for u in prange(n_units):
            values = np.sort(locations[offsets[u] : offsets[u + 1]])
            for i in range(1, values.shape[0]):
                if values[i] == values[i - 1]:
                    flags[u] = True
                    break
    for u in range(n_units):
        if flags[u]:
            return u
    return -1
