"""Exactly rounded running sums (Shewchuk's algorithm, as in Python's ``math.fsum``).

A summary folded chunk by chunk must not depend on the chunk size or the thread count.
Floating-point addition is not associative, so we keep, per metric column, a short list of
non-overlapping partials whose exact sum equals the exact sum of every value added so far; the final
value is that exact sum rounded once. Any split of the data into chunks, in any order, gives the
same bits.

Reference: J. R. Shewchuk, "Adaptive Precision Floating-Point Arithmetic and Fast Robust Geometric
Predicates", Discrete & Computational Geometry 18 (1997); CPython ``Modules/mathmodule.c`` (msum).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

MAX_PARTIALS = 64  # exact partials of a float64 sum never exceed ~40 (the exponent range / 53 bits)


@njit(cache=True)
def _add_value(partials, count, x):
    """Add x to the exact partials[:count]; return the new count (Shewchuk's grow-expansion)."""
    i = 0
    for j in range(count):
        y = partials[j]
        if abs(x) < abs(y):
            x, y = y, x
        hi = x + y
        lo = y - (hi - x)
        if lo != 0.0:
            partials[i] = lo
            i += 1
        x = hi
    partials[i] = x
    return i + 1


@njit(parallel=True, cache=True)
def column_partials(values):
    """Exact partials of each column of ``values`` (n_rows x n_cols); NaN values are skipped.

    Returns (partials[n_cols, MAX_PARTIALS], counts[n_cols], n_finite[n_cols]).
    """
    n_rows, n_cols = values.shape
    partials = np.zeros((n_cols, MAX_PARTIALS))
    counts = np.zeros(n_cols, dtype=np.int64)
    n_used = np.zeros(n_cols, dtype=np.int64)
    for c in prange(n_cols):
        count = 0
        used = 0
        for r in range(n_rows):
            v = values[r, c]
            if v != v:
                continue
            used += 1
            if v != 0.0:
                count = _add_value(partials[c], count, v)
        counts[c] = count
        n_used[c] = used
    return partials, counts, n_used


@njit(cache=True)
def _compress(values):
    """Exact non-overlapping partials of the sum of a 1-D array (at most MAX_PARTIALS)."""
    partials = np.zeros(MAX_PARTIALS)
    count = 0
    for v in values:
        count = _add_value(partials, count, v)
    return partials[:count].copy()


class ExactColumnSums:
    """Running exact sums (and counts of non-NaN values) of a fixed set of named columns."""

    def __init__(self, names: list[str]) -> None:
        self.names = list(names)
        self._partials = [np.zeros(0) for _ in self.names]
        self.counts = np.zeros(len(self.names), dtype=np.int64)

    def add(self, values: np.ndarray) -> None:
        """Fold a (n_rows x n_cols) float64 block, columns in ``names`` order; NaN is skipped."""
        # C-contiguous and writable: one Numba specialisation whatever the caller passes.
        values = np.require(values, np.float64, ["C", "W"]).reshape(-1, len(self.names))
        partials, counts, n_used = column_partials(values)
        for c in range(len(self.names)):
            both = np.concatenate([self._partials[c], partials[c, : counts[c]]])
            self._partials[c] = _compress(both)
        self.counts += n_used

    def merge(self, other: ExactColumnSums) -> None:
        """Fold another accumulator over the same columns (exact, order-independent)."""
        for c in range(len(self.names)):
            both = np.concatenate([self._partials[c], other._partials[c]])
            self._partials[c] = _compress(both)
        self.counts += other.counts

    def sums(self) -> np.ndarray:
        """The exact sums, rounded once to float64."""
        return np.array([math.fsum(p.tolist()) for p in self._partials], dtype=np.float64)
