"""Unsorted input with integer keys: hash buckets (which bucket each row goes to, the rows grouped
by bucket), the check that a stream holds each unit's rows together (:func:`claim_runs`), and a
stable radix sort of key rows (:func:`radix_order`).

A row's bucket is a hash of its key modulo the number of buckets, so every row of a unit lands in
the same bucket. The hash of a key ``(k_1 .. k_c)`` (int64 columns) is ``h_c``, with ``h_0`` a
constant and ``h_j = mix(k_j xor h_{j-1})``, where ``mix`` is the SplitMix64 finaliser (Steele,
Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014): a bijection of the
64-bit integers whose output bits each depend on every input bit, so consecutive ids spread evenly.

Each function is a Python wrapper that passes the keys read-only as C-contiguous int64 (one
compiled specialisation whatever the caller's array) and allocates the outputs with NumPy.
"""

from __future__ import annotations

import numpy as np

from mobeval.kernels.blocks import readonly
from mobeval.kernels.jit import njit

SEED = np.uint64(0x9E3779B97F4A7C15)
FLIP = np.uint64(1 << 63)  # the sign bit: flipped, the unsigned order of int64 is the signed one
#: The radix sort's digits (:func:`radix_order`).
DIGIT_BITS = 11
DIGITS = 1 << DIGIT_BITS


def key_buckets(keys, n_buckets: int) -> np.ndarray:
    """Per row of ``keys`` (n_rows x n_columns int64): its bucket in ``[0, n_buckets)``, the
    key's hash (see the module) modulo ``n_buckets``."""
    keys = readonly(keys, np.int64)
    buckets = np.empty(keys.shape[0], dtype=np.int64)
    _key_buckets(keys, np.uint64(n_buckets), buckets)
    return buckets


@njit(nogil=True, cache=True)
def splitmix64(x):
    """SplitMix64's finaliser (uint64 -> uint64, a bijection; Steele et al., OOPSLA 2014)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(nogil=True, cache=True)
def _key_buckets(keys, modulus, buckets):
    for row in range(keys.shape[0]):
        h = SEED
        for column in range(keys.shape[1]):
            h = splitmix64(np.uint64(keys[row, column]) ^ h)
        buckets[row] = np.int64(h % modulus)


def bucket_order(buckets, n_buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows grouped by bucket, stable (a counting sort): ``order`` lists bucket 0's rows in
    input order, then bucket 1's...; bucket ``b``'s rows are ``order[bounds[b]:bounds[b + 1]]``."""
    return grouped_values(buckets, n_buckets, None)


def grouped_values(buckets, n_buckets: int, values) -> tuple[np.ndarray, np.ndarray]:
    """``values`` grouped by bucket, stable, and the bounds (a counting sort): bucket 0's values
    in input order, then bucket 1's...; bucket ``b``'s are ``grouped[bounds[b]:bounds[b + 1]]``
    (a training user's items in file order: the values moved in the scatter, no array of rows).
    ``values`` None: the rows themselves (:func:`bucket_order`)."""
    buckets = readonly(buckets, np.int64)
    bounds = np.zeros(n_buckets + 1, dtype=np.int64)
    np.cumsum(np.bincount(buckets, minlength=n_buckets), out=bounds[1:])
    grouped = np.empty(len(buckets), dtype=np.int64 if values is None else values.dtype)
    _place(buckets, bounds[:-1].copy(), values, grouped)
    return grouped, bounds


@njit(nogil=True, cache=True)
def _place(buckets, position, values, grouped):
    """Each row's value (``values`` None: the row) at its bucket's next free position
    (``position``: each bucket's first); the None case is compiled without the other."""
    for row in range(len(buckets)):
        bucket = buckets[row]
        if values is None:
            grouped[position[bucket]] = row
        else:
            grouped[position[bucket]] = values[row]
        position[bucket] += 1


def rows_over_range(parts, low: int, span: int) -> tuple[np.ndarray, np.ndarray]:
    """Of integer arrays ``parts`` (a column's chunks, in order) whose values lie in ``low ..
    low + span - 1``: the offsets from ``low`` present, ascending (the distinct values), and each
    value's row among them (int64, the parts' values one after the other). Two passes over the
    values, each marking or reading a table over the range: no copy of the values, no sort."""
    present = np.zeros(span, dtype=np.bool_)
    for part in parts:
        _mark(part, low, present)
    table = np.cumsum(present) - 1
    rows = np.empty(sum(len(part) for part in parts), dtype=np.int64)
    at = 0
    for part in parts:
        _look_up(part, low, table, rows[at : at + len(part)])
        at += len(part)
    return np.flatnonzero(present), rows


@njit(nogil=True, cache=True)
def _mark(values, low, present):
    for value in values:
        present[value - low] = True


@njit(nogil=True, cache=True)
def _look_up(values, low, table, rows):
    for r in range(len(values)):
        rows[r] = table[values[r] - low]


def groups_holding(bounds, values, n_values: int) -> np.ndarray:
    """How many groups hold each value ``0 .. n_values - 1`` (int64), of ``values`` grouped by
    ``bounds`` (group ``g``: ``values[bounds[g]:bounds[g + 1]]``, :func:`grouped_values`'): a
    group counts once however often it holds the value (a training user's items: each item's
    distinct users). One pass, each value stamped with the last group that counted it."""
    held = np.zeros(n_values, dtype=np.int64)
    _groups_holding(readonly(bounds, np.int64), values, held, np.full(n_values, -1, np.int64))
    return held


@njit(nogil=True, cache=True)
def _groups_holding(bounds, values, held, last):
    for group in range(len(bounds) - 1):
        for row in range(bounds[group], bounds[group + 1]):
            value = values[row]
            if last[value] != group:
                last[value] = group
                held[value] += 1


@njit(nogil=True, cache=True)
def _find(keys, row, table):
    """The row of ``table`` (strictly increasing, lexicographic) equal to ``keys[row]``, or -1."""
    lo, hi = 0, table.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        sign = 0
        for column in range(table.shape[1]):
            if table[mid, column] != keys[row, column]:
                sign = 1 if table[mid, column] > keys[row, column] else -1
                break
        if sign == 0:
            return mid
        if sign < 0:
            lo = mid + 1
        else:
            hi = mid
    return -1


def claim_runs(
    keys, truth, claimed: np.ndarray, continued: bool, absent: bool = False
) -> tuple[int, np.ndarray]:
    """Claim, for each run of equal keys in ``keys`` (n x c int64, a batch of a stream; with
    ``continued`` its first run continues the previous batch's last one and is skipped), the truth
    row holding its key (``truth``: strictly increasing, lexicographic): ``claimed[j]`` (bool)
    becomes True. Returns the first row whose run has a truth row claimed before (its unit is not
    together in the stream) or, unless ``absent``, none (its unit is not in the truth), -1 when
    there is no such row; and per row of ``keys``, the truth row its run claimed where the run
    starts (-1 elsewhere, and at a run not in the truth)."""
    rows = np.full(keys.shape[0], -1, dtype=np.int64)
    keys, truth = readonly(keys, np.int64), readonly(truth, np.int64)
    return _claim_runs(keys, truth, claimed, continued, absent, rows), rows


@njit(nogil=True, cache=True)
def _claim_runs(keys, truth, claimed, continued, absent, rows):
    for row in range(keys.shape[0]):
        if row > 0 or continued:
            previous = row - 1 if row > 0 else 0
            same = True
            for column in range(keys.shape[1]):
                if keys[row, column] != keys[previous, column]:
                    same = False
                    break
            if same:
                continue
        j = _find(keys, row, truth)
        if j < 0 and absent:
            continue
        if j < 0 or claimed[j]:
            return row
        claimed[j] = True
        rows[row] = j
    return -1


def radix_order(keys) -> np.ndarray:
    """The stable sorting permutation of ``keys`` (n x c int64, compared lexicographically): an
    LSD radix sort (Knuth, TAOCP vol. 3, section 5.2.5), last column first, each value's sign bit
    flipped so that the unsigned order is the signed one. A column's values are gathered once in
    the order so far and move with their rows; only the digits below the highest bit where the
    column's smallest and largest values differ are passed over (ids below 2^22 take two passes,
    a column of one value none). Digits of :data:`DIGIT_BITS` bits: 2,048 counts, whose write
    positions stay in a core's cache (by 16-bit digits, 65,536 of them, a bucket of 2 M ids below
    100,000 took 3.4 times as long). A column whose differing bits leave room for the rows'
    numbers in 64 bits moves them packed with its digits, 8 bytes a row instead of 16 (2 M ids
    below 100,000: 21 ms instead of 27). O(n) per pass, where a comparison sort
    (``np.lexsort``) takes O(n log n). Memory: 32 bytes a row."""
    keys = readonly(keys, np.int64)
    order = np.arange(keys.shape[0], dtype=np.int64)
    if len(order) < 2:
        return order
    spare = np.empty_like(order)
    values = np.empty(len(order), dtype=np.uint64)
    spare_values = np.empty_like(values)
    counts = np.empty(DIGITS + 1, dtype=np.int64)
    return spare if _radix_passes(keys, order, spare, values, spare_values, counts) else order


@njit(nogil=True, cache=True)
def _radix_passes(keys, order, spare, values, spare_values, counts):
    """The passes of :func:`radix_order`, moving the permutation (and the column's values)
    between ``order`` and ``spare``; True when it ends in ``spare``. A column whose differing
    bits and the rows' numbers fit in 64 bits together is sorted packed: each row's number in
    the low bits of its value's differing bits (:func:`_packed_passes`)."""
    n_rows, n_columns = keys.shape
    rows, rows_to, column_values, values_to = order, spare, values, spare_values
    in_spare = False
    row_bits = _bit_length(np.uint64(n_rows - 1))
    for column in range(n_columns - 1, -1, -1):
        low = high = np.uint64(keys[rows[0], column]) ^ FLIP
        for i in range(n_rows):
            value = np.uint64(keys[rows[i], column]) ^ FLIP
            column_values[i] = value
            low = min(low, value)
            high = max(high, value)
        bits = _bit_length(low ^ high)  # the digits above them are every row's
        if bits == 0:
            continue
        if bits + row_bits <= 64:
            _packed_passes(rows, column_values, values_to, counts, bits, row_bits)
            continue
        for shift in range(0, bits, DIGIT_BITS):
            _scatter(column_values, values_to, rows, rows_to, counts, np.uint64(shift), True)
            rows, rows_to = rows_to, rows
            column_values, values_to = values_to, column_values
            in_spare = not in_spare
    return in_spare


@njit(nogil=True, cache=True)
def _packed_passes(rows, column_values, values_to, counts, bits, row_bits):
    """``rows`` put in the stable order of ``column_values``' low ``bits`` bits, in place: each
    value's bits above ``row_bits`` bits of its row, sorted by those bits alone (8 bytes a row
    moved, where :func:`_scatter` moves 16)."""
    value_mask = (np.uint64(1) << np.uint64(bits)) - np.uint64(1)
    row_mask = (np.uint64(1) << np.uint64(row_bits)) - np.uint64(1)
    for i in range(rows.shape[0]):
        column_values[i] = ((column_values[i] & value_mask) << np.uint64(row_bits)) | np.uint64(
            rows[i]
        )
    source, target = column_values, values_to
    for shift in range(row_bits, row_bits + bits, DIGIT_BITS):
        _scatter(source, target, source, target, counts, np.uint64(shift), False)
        source, target = target, source
    for i in range(rows.shape[0]):
        rows[i] = np.int64(source[i] & row_mask)


@njit(nogil=True, cache=True)
def _scatter(values, values_to, rows, rows_to, counts, shift, with_rows):
    """One stable counting pass by the :data:`DIGIT_BITS`-bit digit of ``values`` at ``shift``:
    ``values`` (and ``rows``, ``with_rows``) written to ``values_to`` (``rows_to``) in order."""
    mask = np.uint64(DIGITS - 1)
    counts[:] = 0
    for i in range(values.shape[0]):
        counts[((values[i] >> shift) & mask) + 1] += 1
    for digit in range(DIGITS):
        counts[digit + 1] += counts[digit]
    for i in range(values.shape[0]):
        value = values[i]
        digit = (value >> shift) & mask
        place = counts[digit]
        values_to[place] = value
        if with_rows:
            rows_to[place] = rows[i]
        counts[digit] = place + 1


@njit(nogil=True, cache=True)
def _bit_length(x):
    """The number of bits of the uint64 ``x`` up to its highest set one (0 for 0)."""
    n = 0
    while n < 64 and (x >> np.uint64(n)) != 0:
        n += 1
    return n
