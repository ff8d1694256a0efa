"""The moments of paired differences that the paired t-test and Cohen's d_z take, as NumPy
computes them, for every pair of models at once.

For a pair of columns ``a`` (the baseline) and ``b`` (the model) of ``n`` units, ``d = b - a``:

* ``total = sum_u d_u``, NumPy's pairwise summation (``np.sum(d)``; ``np.mean(d) = total / n``);
* ``squares = sum_u (d_u - total / n)^2``, the same summation of the squared deviations
  (``np.sum((d - np.mean(d)) ** 2)``: ``np.var(d) = squares / n``, ``np.std(d, ddof=1) =
  sqrt(squares / (n - 1))``).

The sums are :func:`mobeval.kernels.pairwise.pairwise_sum`, so they equal NumPy's to the bit
(the same additions in the same order; a shortcut through per-model sums and the cross products
``X^T X``, ``sum d^2 = sum b^2 - 2 sum ab + sum a^2``, would not: it adds other numbers, and
cancels catastrophically when the models are close). What the pair costs is two passes over its
two columns and one scratch column per thread, instead of NumPy's temporary arrays.
:func:`difference_moments_pairs` runs the pairs in blocks on threads
(:func:`mobeval.kernels.blocks.run_blocks`): each pair's numbers are the same whichever thread
computes it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mobeval.kernels.blocks import readonly, run_blocks
from mobeval.kernels.pairwise import pairwise_sum

#: Fewest pairs per block of work on a thread.
PAIRS_PER_BLOCK = 1


@njit(cache=True)
def _moments(a, b, scratch):
    """(total, squares) of ``d = b - a`` (module docstring), ``scratch`` holding ``d`` and then
    its squared deviations; (0, 0) when there is no unit."""
    n = a.size
    if n == 0:
        return 0.0, 0.0
    for u in range(n):
        scratch[u] = b[u] - a[u]
    total = pairwise_sum(scratch, np.int64(0), n)
    mean = total / n
    for u in range(n):
        deviation = scratch[u] - mean
        scratch[u] = deviation * deviation
    return total, pairwise_sum(scratch, np.int64(0), n)


def difference_moments(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(total, squares) of the differences ``b - a`` of two float64 columns of one length."""
    a, b = readonly(a, np.float64), readonly(b, np.float64)
    total, squares = _pair(a, b)
    return float(total), float(squares)


@njit(cache=True)
def _pair(a, b):
    """:func:`difference_moments` compiled."""
    return _moments(a, b, np.empty(a.size, dtype=np.float64))


def difference_moments_pairs(
    columns: np.ndarray, baselines: np.ndarray, models: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per pair ``p``, (total, squares) of ``columns[models[p]] - columns[baselines[p]]``
    (``columns``: float64[k, n], one row per model, the units in the same order in every row):
    two float64[pairs] arrays."""
    columns = readonly(columns, np.float64)
    baselines = readonly(baselines, np.int64)
    models = readonly(models, np.int64)
    totals = np.empty(baselines.size, dtype=np.float64)
    squares = np.empty(baselines.size, dtype=np.float64)
    args = (columns, baselines, models, totals, squares)
    run_blocks(_pairs_units, baselines.size, *args, grain=PAIRS_PER_BLOCK)
    return totals, squares


@njit(nogil=True, cache=True)
def _pairs_units(columns, baselines, models, totals, squares, first, last):
    """Pairs ``first`` to ``last - 1`` of :func:`difference_moments_pairs`."""
    scratch = np.empty(columns.shape[1], dtype=np.float64)
    for p in range(first, last):
        totals[p], squares[p] = _moments(columns[baselines[p]], columns[models[p]], scratch)
