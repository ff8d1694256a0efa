"""Resampling kernels of ``mobeval compare``: the paired bootstrap and Fisher's sign-flip test.

Both work on the paired differences ``d`` (model minus baseline, one per unit, in unit-key order).

Random numbers are counter-based, so a result depends on the seed only, never on the number of
threads or on how work is split: resample (or sign-flip) ``r`` draws from its own SplitMix64
stream, seeded by mixing ``(seed, r, purpose)``; SplitMix64's output function (Steele, Lea and
Flood 2014, the one Java's SplittableRandom uses) is applied to ``state += 0x9E3779B97F4A7C15``.
Each resample sums its values sequentially in draw order, so it is the same floating-point sum
whichever thread runs it.

* :func:`bootstrap_means`: ``resamples`` means of ``n`` rows drawn from ``d`` with replacement
  (index ``(top 32 bits of a draw) * n >> 32``, so at most ``2**32 - 1`` units), every column
  (metric) of a row at once: one random access serves them all.
* :func:`signflip_count_exact`: of all ``2**n`` sign vectors (bit ``i`` of the mask flips
  ``d[i]``), how many give ``|sum(s * d)| >= threshold``; every sum is taken in index order from
  0.0, as :func:`flip_sum` does.
* :func:`signflip_count_mc`: the same count over ``permutations`` random sign vectors (64 signs per
  draw, bit ``b`` of draw ``j`` flipping row ``64 j + b``), every column at once.

* :func:`poisson_weights`: the Poisson bootstrap (Hanley and MacGibbon 2006; Chamandy et al.
  2012, "Estimating uncertainty for massive data streams"): unit ``u`` appears ``w[u, r] ~
  Poisson(1)`` times in resample ``r``, drawn from the unit's own stream (seeded by its key's
  hash), so a unit's weights are known the moment it is read, whatever the chunk, the row order
  or the engine: a population value is resampled in the same single pass that computes it.

The Monte-Carlo kernels take ``d`` as float64[n, m]: m metrics paired on the same n units share
the random indices and signs, and each column's numbers are the same as when it is alone.
"""

from __future__ import annotations

import numpy as np

from mobeval.kernels.blocks import readonly, run_blocks
from mobeval.kernels.buckets import splitmix64
from mobeval.kernels.jit import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_S32 = np.uint64(32)
_ONE = np.uint64(1)
_S11 = np.uint64(11)
#: 2**-53: a draw's top 53 bits as a uniform in [0, 1).
_UNIT = 1.0 / 9007199254740992.0

#: Stream purposes: a bootstrap resample and a sign flip with the same index draw different bits.
BOOTSTRAP = 1
SIGNFLIP = 2
POISSON = 3
#: Fewest resamples (or sign flips) per block of work on a thread.
RESAMPLES_PER_BLOCK = 64


@njit(cache=True)
def stream_state(seed, index, purpose):
    """The starting state of the stream of resample ``index`` for ``purpose`` under ``seed``."""
    z = splitmix64(np.uint64(seed) + _GOLDEN * np.uint64(purpose))
    return splitmix64(z ^ splitmix64(np.uint64(index) + _GOLDEN))


@njit(cache=True)
def flip_sum(d, mask):
    """``sum(s_i d_i)`` in index order from 0.0, ``s_i = -1`` where bit ``i`` of ``mask`` is set
    (``mask = 0``: the observed sum)."""
    s = 0.0
    for i in range(d.size):
        if (mask >> i) & 1:
            s -= d[i]
        else:
            s += d[i]
    return s


def bootstrap_means(d, resamples, seed):
    """The column means of each of ``resamples`` bootstrap resamples of the rows of ``d``
    (float64[n, m] -> float64[resamples, m]); ``n < 2**32``. Every column of a row drawn is added
    in draw order, so a column's numbers are the same whatever columns are beside it. Resamples
    in blocks on threads (:func:`mobeval.kernels.blocks.run_blocks`)."""
    d = readonly(d, np.float64)
    out = np.empty((resamples, d.shape[1]), dtype=np.float64)
    run_blocks(_bootstrap_units, resamples, d, int(seed), out, grain=RESAMPLES_PER_BLOCK)
    return out


@njit(nogil=True, cache=True)
def _bootstrap_units(d, seed, out, first, last):
    """Resamples ``first`` to ``last - 1`` of :func:`bootstrap_means` into ``out``."""
    n, columns = d.shape
    units = np.uint64(n)
    totals = np.empty(columns, dtype=np.float64)
    for r in range(first, last):
        state = stream_state(seed, r, BOOTSTRAP)
        totals[:] = 0.0
        for _ in range(n):
            state += _GOLDEN
            j = ((splitmix64(state) >> _S32) * units) >> _S32
            for c in range(columns):
                totals[c] += d[j, c]
        for c in range(columns):
            out[r, c] = totals[c] / n


def signflip_count_exact(d, threshold):
    """How many of the ``2**n`` sign vectors give ``|flip_sum| >= threshold`` (n <= 30)."""
    d = readonly(d, np.float64)
    hits = np.zeros(1 << d.size, dtype=np.uint8)
    run_blocks(_signflip_exact_units, hits.size, d, float(threshold), hits, grain=1 << 12)
    return int(hits.sum(dtype=np.int64))


@njit(nogil=True, cache=True)
def _signflip_exact_units(d, threshold, hits, first, last):
    """``hits[mask]`` = 1 where ``|flip_sum(d, mask)| >= threshold``, masks ``first`` to
    ``last - 1``."""
    for mask in range(first, last):
        if abs(flip_sum(d, mask)) >= threshold:
            hits[mask] = 1


def signflip_count_mc(d, permutations, seed, threshold):
    """Per column of ``d`` (float64[n, m]), how many of ``permutations`` random sign vectors of
    the rows give ``|sum(s d)| >= threshold`` (float64[m]); one sign vector per permutation serves
    every column, so a column's count does not depend on the columns beside it."""
    d = readonly(d, np.float64)
    threshold = readonly(threshold, np.float64)
    hits = np.zeros((permutations, d.shape[1]), dtype=np.uint8)
    args = (d, int(seed), threshold, hits)
    run_blocks(_signflip_mc_units, permutations, *args, grain=RESAMPLES_PER_BLOCK)
    return hits.sum(axis=0, dtype=np.int64)


@njit(nogil=True, cache=True)
def _signflip_mc_units(d, seed, threshold, hits, first, last):
    """Permutations ``first`` to ``last - 1`` of :func:`signflip_count_mc`: ``hits[p, c]`` = 1
    where sign vector p gives ``|sum(s d[:, c])| >= threshold[c]``."""
    n, columns = d.shape
    sums = np.empty(columns, dtype=np.float64)
    for p in range(first, last):
        state = stream_state(seed, p, SIGNFLIP)
        sums[:] = 0.0
        start = 0
        while start < n:
            state += _GOLDEN
            bits = splitmix64(state)
            stop = min(start + 64, n)
            for i in range(start, stop):  # branchless: d * -1.0 is exactly -d
                sign = 1.0 - 2.0 * np.float64(bits & _ONE)
                for c in range(columns):
                    sums[c] += d[i, c] * sign
                bits >>= _ONE
            start = stop
        for c in range(columns):
            if abs(sums[c]) >= threshold[c]:
                hits[p, c] = 1


@njit(cache=True)
def _poisson1(u):
    """The Poisson(1) value whose CDF interval holds ``u`` (inversion: the smallest ``k`` with
    ``u < sum_{i <= k} e^-1 / i!``, the terms and their sum accumulated in this order)."""
    k = 0
    term = np.exp(-1.0)
    cdf = term
    while u >= cdf and k < 64:  # P(k > 20) < 1e-19: the cap only guards the loop
        k += 1
        term /= k
        cdf += term
    return k


def poisson_weights(unit_hashes, resamples, seed):
    """``w[u, r]``: how many times unit ``u`` (``unit_hashes[u]``, uint64: its key's hash) is
    drawn into resample ``r`` of the Poisson bootstrap under ``seed`` (int64[n, resamples]).
    Draw ``r`` of unit ``u``'s stream (:func:`stream_state` of ``(seed, hash, POISSON)``,
    advanced ``r + 1`` times) gives the uniform ``(top 53 bits) / 2**53``, and
    :func:`_poisson1` the weight."""
    hashes = readonly(unit_hashes, np.uint64)
    out = np.empty((hashes.size, resamples), dtype=np.int64)
    _poisson_units(hashes, int(seed), out)
    return out


@njit(cache=True)
def _poisson_units(hashes, seed, out):
    for u in range(hashes.size):
        state = stream_state(seed, hashes[u], POISSON)
        for r in range(out.shape[1]):
            state += _GOLDEN
            out[u, r] = _poisson1(np.float64(splitmix64(state) >> _S11) * _UNIT)


@njit(cache=True)
def weighted_counts(rows_unit, rows_code, rows_count, weights, codes):
    """``out[c, r] = sum over rows i with rows_code[i] = c of rows_count[i] *
    weights[rows_unit[i], r]`` (int64[codes, resamples]): per resample, how many times each
    code (an item) is counted when each unit's rows count ``weights[unit, r]`` times. Integer
    sums: exact in any order."""
    out = np.zeros((codes, weights.shape[1]), dtype=np.int64)
    for i in range(rows_code.size):
        for r in range(weights.shape[1]):
            out[rows_code[i], r] += rows_count[i] * weights[rows_unit[i], r]
    return out


def percentile_interval(values, confidence):
    """The percentile interval of each column of ``values`` (float64[resamples, m], one row per
    resample): its ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles (NumPy's
    linear interpolation), as two float64[m]."""
    alpha = (1 - confidence) / 2
    low, high = np.percentile(values, [alpha * 100, (1 - alpha) * 100], axis=0)
    return low, high
