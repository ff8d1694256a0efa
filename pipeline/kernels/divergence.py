"""Divergences between two histograms of counts: Jensen-Shannon, Kullback-Leibler, Wasserstein-1.

Each function takes two count vectors ``c1`` (the real population) and ``c2`` (the generated one)
over the same bins and returns one float64. Counts are normalized here, so that a histogram folded
exactly (integer counts) from any chunking gives the same bits.

* :func:`jsd` (natural log), as MoveSim's ``EvalUtils.get_js_divergence`` (FIBLAB/MoveSim
  ``code/evaluations.py``, KDD 2020) computes it with ``scipy.stats.entropy``::

      p_i = c1_i / (sum(c1) + guard),   q_i = c2_i / (sum(c2) + guard),   m = (p + q) / 2
      JSD = 1/2 KL(p || m) + 1/2 KL(q || m)

  where ``KL`` is :func:`kl_probabilities` (scipy's ``entropy``: both arguments normalized again,
  ``sum_i rel_entr(p_i, m_i)``). MoveSim's ``guard`` is 1e-14; 0 leaves an empty histogram NaN.
* :func:`js_distance`: the Jensen-Shannon distance as ``scipy.spatial.distance.jensenshannon``
  computes it (TrajGDM, MobilityGPT): ``p = c1 / sum(c1)``, ``q = c2 / sum(c2)``,
  ``m = (p + q) / 2``, ``sqrt((sum_i rel_entr(p_i, m_i) + sum_i rel_entr(q_i, m_i)) / 2)``
  (no guard; the square root of the JSD, natural log).
* :func:`kl`: ``KL(p || q) = sum_i p_i ln(p_i / q_i)`` (``+inf`` where some ``q_i = 0 < p_i``).
* :func:`emd`: the Earth mover's (Wasserstein-1) distance between the two normalized histograms
  over bins of equal ``width``: ``W1 = width * sum_i |P_i - Q_i|`` with ``P``, ``Q`` the cumulative
  sums (Villani, *Optimal transport*, 2009, remark 2.19: in one dimension W1 is the L1 distance
  between the distribution functions).

Sums are taken in NumPy's order (:func:`pairwise_sum`, the pairwise summation of ``np.sum`` on a
contiguous float64 vector), but the log is LLVM's, which differs from scipy's ``rel_entr`` in the
last bit for about a third of its arguments: ``jsd`` matches scipy's value to about 1e-15
relative, not its bits (MoveSim's bits: :func:`mobeval.metrics.population.scipy_jsd`).
"""

from __future__ import annotations

import numpy as np

from mobeval.kernels.jit import njit

#: NumPy's pairwise summation: at most this many values are added in 8 running sums.
_BLOCK = 128


@njit(cache=True)
def _block_sum(a: np.ndarray, lo: int, n: int) -> float:
    """NumPy's sum of at most 128 values: 8 running sums, then the rest in order."""
    if n < 8:
        total = -0.0
        for i in range(n):
            total += a[lo + i]
        return total
    r = a[lo : lo + 8].copy()
    i = 8
    while i < n - n % 8:
        for j in range(8):
            r[j] += a[lo + i + j]
        i += 8
    total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while i < n:
        total += a[lo + i]
        i += 1
    return total


@njit(cache=True)
def pairwise_sum(a: np.ndarray) -> float:
    """``np.sum(a)`` of a contiguous float64 vector, bit for bit: NumPy's pairwise summation,
    ``sum(a[:h]) + sum(a[h:])`` with ``h`` = half the length rounded down to a multiple of 8,
    down to blocks of at most 128 values (:func:`_block_sum`). The recursion runs on an explicit
    stack (Numba cannot cache a recursive function)."""
    depth = 64
    starts = np.zeros(depth, dtype=np.int64)
    sizes = np.zeros(depth, dtype=np.int64)
    stage = np.zeros(depth, dtype=np.int64)
    left = np.zeros(depth)
    sizes[0] = a.size
    top = 0
    result = 0.0
    while top >= 0:
        lo, n = starts[top], sizes[top]
        if n <= _BLOCK:
            result = _block_sum(a, lo, n)
            top -= 1
            continue
        half = n // 2
        half -= half % 8
        if stage[top] == 0:
            stage[top] = 1
            top += 1
            starts[top], sizes[top], stage[top] = lo, half, 0
        elif stage[top] == 1:
            left[top] = result
            stage[top] = 2
            top += 1
            starts[top], sizes[top], stage[top] = lo + half, n - half, 0
        else:
            result = left[top] + result
            top -= 1
    return result


@njit(cache=True)
def _rel_entr(x: float, y: float) -> float:
    """scipy.special.rel_entr: x ln(x / y); 0 where x = 0 <= y; +inf otherwise."""
    if x > 0.0 and y > 0.0:
        return x * np.log(x / y)
    if x == 0.0 and y >= 0.0:
        return 0.0
    return np.inf


@njit(cache=True)
def kl_probabilities(p: np.ndarray, q: np.ndarray) -> float:
    """``scipy.stats.entropy(p, q)``: ``sum_i rel_entr(p_i / sum(p), q_i / sum(q))``."""
    pk = p / pairwise_sum(p)
    qk = q / pairwise_sum(q)
    terms = np.empty(p.size)
    for i in range(p.size):
        terms[i] = _rel_entr(pk[i], qk[i])
    return pairwise_sum(terms)


@njit(cache=True)
def jsd(c1: np.ndarray, c2: np.ndarray, guard: float) -> float:
    """Jensen-Shannon divergence (natural log) of two count histograms (module docstring)."""
    p = c1.astype(np.float64)
    q = c2.astype(np.float64)
    p = p / (pairwise_sum(p) + guard)
    q = q / (pairwise_sum(q) + guard)
    m = (p + q) / 2
    return 0.5 * kl_probabilities(p, m) + 0.5 * kl_probabilities(q, m)


@njit(cache=True)
def js_distance(c1: np.ndarray, c2: np.ndarray) -> float:
    """Jensen-Shannon distance of two histograms, scipy's ``jensenshannon`` (module docstring)."""
    p = c1.astype(np.float64)
    q = c2.astype(np.float64)
    p = p / pairwise_sum(p)
    q = q / pairwise_sum(q)
    m = (p + q) / 2.0
    left = np.empty(p.size)
    right = np.empty(p.size)
    for i in range(p.size):
        left[i] = _rel_entr(p[i], m[i])
        right[i] = _rel_entr(q[i], m[i])
    return np.sqrt((pairwise_sum(left) + pairwise_sum(right)) / 2.0)


@njit(cache=True)
def kl(c1: np.ndarray, c2: np.ndarray, guard: float) -> float:
    """KL(real || generated) of two count histograms, each divided by its sum + ``guard``."""
    p = c1.astype(np.float64)
    q = c2.astype(np.float64)
    return kl_probabilities(p / (pairwise_sum(p) + guard), q / (pairwise_sum(q) + guard))


@njit(cache=True)
def emd(c1: np.ndarray, c2: np.ndarray, width: float) -> float:
    """Wasserstein-1 distance of two count histograms over bins ``width`` apart."""
    p = c1.astype(np.float64)
    q = c2.astype(np.float64)
    p = p / pairwise_sum(p)
    q = q / pairwise_sum(q)
    gap = np.abs(np.cumsum(p) - np.cumsum(q))
    return width * pairwise_sum(gap)
