"""Exactly rounded running sums of float64 columns, chunk- and order-independent, for any input.

A summary folded chunk by chunk must not depend on the chunk size, the thread count or the row
order. Floating-point addition is not associative, so each column keeps the *exact* sum of its
values as an integer, and the result is that integer rounded once to float64.

What a column's summary holds, for values ``v_1 .. v_n`` (``count`` = the number of non-NaN ones):

* NaN values are skipped: they mean "undefined for this unit" and are not counted.
* ``+inf`` / ``-inf`` are legitimate values (an infinite cross-entropy, an overflowing squared
  error) and are counted: the sum is ``+inf`` if some value is ``+inf`` and none ``-inf``, ``-inf``
  likewise, and NaN if both occur (``inf - inf`` is undefined, IEEE 754 section 6.1).
* Otherwise the sum is ``fl(sum_i v_i)``: the exact real sum of the finite values rounded once to
  float64 (round-half-even), ``+-inf`` only when that rounding overflows (``|S| >= 2^1024 - 2^970``,
  IEEE 754 section 4.3.1). Intermediate sums never overflow: ``1e308 + 1e308 - 1e308`` is exactly
  ``1e308``, as with Python's ``math.fsum``.

How (a "long accumulator", Kulisch & Miranker, "The arithmetic of the digital computer",
IEEE Trans. Comput. C-35 (1986); the chunked layout of R. M. Neal, "Fast exact summation using small
and large superaccumulators", arXiv:1505.05571, 2015): every finite float64 is
``(-1)^s * m * 2^p * 2^-1074`` with an integer mantissa ``m < 2^53`` and ``p = max(E, 1) - 1`` in
``[0, 2045]`` (``E`` the biased exponent field, subnormals included). The integer ``m * 2^p`` is
added into int64 bins of 32 bits each (bin ``j`` weighs ``2^(32 j)``): its low part
``(m * 2^(p mod 32)) mod 2^32`` into bin ``p // 32`` and its high part ``m >> (32 - p mod 32)``
(``< 2^52``) into the next. Integer addition is associative, so any chunking and any order give the
same integer, hence the same bits; a column's state is ``sum_j bins[j] * 2^(32 j - 1074)`` exactly.
The rows are folded by blocks (on threads), the blocks' bins added (integers again), and
:class:`ExactColumnSums` keeps the exact total as a Python ``int``; the final rounding is Python's
correctly rounded integer true division (``Fraction.__float__``).

The spread (:meth:`ExactColumnSums.stds`): beside each column the exact sum of the squares is kept
the same way, each square ``v * v`` split into two float64 that add up to it exactly (Dekker's
product, T. J. Dekker, "A floating-point technique for extending the available precision",
Numer. Math. 18 (1971): ``hi = fl(v v)``, ``lo = v v - hi``), so the population variance
``(sum v^2 - (sum v)^2 / n) / n`` is an exact rational, and its square root is rounded once
(:func:`sqrt_ratio`). The split is exact whenever ``lo`` is a normal number (about
``1e-145 < |v| < 1.3e154``: every metric value in practice); a smaller value's square is rounded at
``2^-1074``, the same way wherever the value is, so the result still does not depend on the
chunking; a larger one's square overflows, and the column's spread is ``inf``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from mobeval.kernels.blocks import readonly, run_blocks
from mobeval.kernels.jit import njit

BIN_BITS = 32
# Bins 0..64 receive the parts of finite values: p // 32 <= 2045 // 32 = 63, and the high part goes
# one bin up, to at most 64. Bins 65 and 66 only receive carries: a finite |v| < 2^2098 units, so
# bin 66 (weight 2^2112 units) holds less than n * 2^-14 + 1 in magnitude for n values.
N_BINS = 67
# Carry propagation bound. After a propagation bins 0..65 lie in [0, 2^32). One value changes a bin
# by less than 2^52 (a bin receives one part of it: low < 2^32 or high < 2^52), so after CARRY_EVERY
# more values |bin| < 2^32 + 1024 * 2^52 < 2^62.01 < 2^63: no int64 ever overflows.
CARRY_EVERY = 1024
BLOCK_ROWS = 1 << 16
_EXP_MASK = 0x7FF
_MANT_MASK = (1 << 52) - 1
_HIDDEN = 1 << 52
_LOW_MASK = (1 << BIN_BITS) - 1


@njit(cache=True, inline="always")
def _carry(bins, c):
    """Normalise bins[c] in place: bins[c, :-1] in [0, 2^32), the sign in the top bin (exact)."""
    for j in range(N_BINS - 1):
        k = bins[c, j] >> BIN_BITS  # arithmetic shift: floor division by 2^32
        bins[c, j] -= k << BIN_BITS
        bins[c, j + 1] += k


@njit(cache=True, inline="always")
def _add_bits(bins, c, bits):
    """Add the finite float64 whose bit pattern is ``bits`` (an int64) into ``bins[c]`` (exact)."""
    e = (bits >> 52) & _EXP_MASK  # 0..2046 here (2047 = inf/NaN is handled by the caller)
    m = bits & _MANT_MASK
    if e == 0:
        e = 1  # subnormal: no hidden bit, same scale as the smallest normal exponent
    else:
        m |= _HIDDEN
    p = e - 1  # 0 <= p <= 2045
    i = p >> 5  # 0 <= i <= 63, so i + 1 <= 64 < N_BINS: never out of bounds
    low = p & 31
    lo = (m & (_LOW_MASK >> low)) << low  # (m * 2^low) mod 2^32, no int64 overflow
    hi = m >> (BIN_BITS - low)  # floor(m * 2^low / 2^32) < 2^(53 + 31 - 32) = 2^52
    if bits < 0:
        bins[c, i] -= lo
        bins[c, i + 1] -= hi
    else:
        bins[c, i] += lo
        bins[c, i + 1] += hi


@njit(nogil=True, cache=True)
def _with_squares(values, out, first, last):
    """Rows ``first`` to ``last - 1``: ``out[r, c] = values[r, c] = v`` and, in columns ``n_cols
    + 2 c`` and ``n_cols + 2 c + 1``, ``hi + lo == v ** 2`` exactly (Dekker's product:
    Veltkamp's split of ``v`` into two 26-bit halves ``a + b``, then ``lo = ((a a - hi) + 2 a b)
    + b b``); NaN stays NaN, an infinite square has ``lo = 0``."""
    n_cols = values.shape[1]
    for r in range(first, last):
        for c in range(n_cols):
            v = values[r, c]
            out[r, c] = v
            hi = v * v
            if not math.isfinite(hi):
                out[r, n_cols + 2 * c] = hi
                out[r, n_cols + 2 * c + 1] = 0.0 if hi == hi else hi
                continue
            t = v * 134217729.0  # 2^27 + 1
            a = t - (t - v)
            b = v - a
            out[r, n_cols + 2 * c] = hi
            out[r, n_cols + 2 * c + 1] = ((a * a - hi) + 2.0 * a * b) + b * b


def with_squares(values: np.ndarray) -> np.ndarray:
    """``(n_rows, 3 n_cols)``: the columns of ``values``, then each one's squares as two, their
    ``hi`` and ``lo`` (:func:`_with_squares`), written in one pass, rows in blocks on threads."""
    values = readonly(values, np.float64)
    n_rows, n_cols = values.shape
    out = np.empty((n_rows, 3 * n_cols))
    run_blocks(_with_squares, n_rows, values, out, grain=BLOCK_ROWS)
    return out


@njit(nogil=True, cache=True)
def _blocks_bins(bits, block_bins, block_counts, first, last):
    """Blocks ``first`` to ``last - 1`` of ``BLOCK_ROWS`` rows of ``bits`` (float64 bit
    patterns): block b's rows added into ``block_bins[b]`` (n_cols x N_BINS, normalised at the
    end) and counted into ``block_counts[b]`` (+inf, -inf, not NaN). One kernel, not a kernel per
    block called by another: a first run compiles it in about half the time."""
    n_rows, n_cols = bits.shape
    for b in range(first, last):
        acc, cnt = block_bins[b], block_counts[b]
        since = 0
        for r in range(b * BLOCK_ROWS, min((b + 1) * BLOCK_ROWS, n_rows)):
            for c in range(n_cols):
                x = bits[r, c]
                if (x >> 52) & _EXP_MASK == _EXP_MASK:  # inf or NaN
                    if x & _MANT_MASK == 0:  # inf: counted by sign; NaN: skipped
                        cnt[1 if x < 0 else 0, c] += 1
                        cnt[2, c] += 1
                    continue
                cnt[2, c] += 1
                _add_bits(acc, c, x)
            since += 1  # a row adds at most one value to each column's bins
            if since == CARRY_EVERY:
                for c in range(n_cols):
                    _carry(acc, c)
                since = 0
        for c in range(n_cols):
            _carry(acc, c)


def column_bins(values):
    """Exact sums of each column of ``values`` (n_rows x n_cols float64).

    Returns (bins[n_cols, N_BINS] int64: the column's exact finite sum is ``sum_j bins[c, j] *
    2^(32 j - 1074)``; n_pos_inf[n_cols]; n_neg_inf[n_cols]; n_used[n_cols] = values that are not
    NaN). NaN values are skipped. Blocks of ``BLOCK_ROWS`` rows on threads
    (:func:`mobeval.kernels.blocks.run_blocks`), then the blocks' bins added: a block's bins are
    normalised (< 2^32, its top bin tiny: < 2^16 rows times 2^-14, plus one), so even 2^30 blocks
    add up without an int64 overflow.
    """
    bits = readonly(values, np.float64).view(np.int64)
    n_rows, n_cols = bits.shape
    n_blocks = (n_rows + BLOCK_ROWS - 1) // BLOCK_ROWS
    block_bins = np.zeros((n_blocks, n_cols, N_BINS), dtype=np.int64)
    block_counts = np.zeros((n_blocks, 3, n_cols), dtype=np.int64)
    run_blocks(_blocks_bins, n_blocks, bits, block_bins, block_counts)
    counts = block_counts.sum(axis=0)
    return block_bins.sum(axis=0), counts[0], counts[1], counts[2]


def bins_to_int(bins: np.ndarray) -> int:
    """The exact integer ``sum_j bins[j] * 2^(32 j)`` (units of 2^-1074)."""
    return sum(int(b) << (BIN_BITS * j) for j, b in enumerate(bins.tolist()) if b)


def round_units(total: int, n_pos_inf: int = 0, n_neg_inf: int = 0) -> float:
    """``total * 2^-1074`` rounded once to float64, with the infinities' rule (module docstring)."""
    if n_pos_inf and n_neg_inf:
        return math.nan
    if n_pos_inf:
        return math.inf
    if n_neg_inf:
        return -math.inf
    try:
        return float(Fraction(total, 1 << 1074))  # correctly rounded (CPython long true division)
    except OverflowError:
        return math.inf if total > 0 else -math.inf


def sqrt_ratio(num: int, den: int) -> float:
    """``sqrt(num / den)`` rounded once to float64 (``den > 0``; ``num <= 0`` gives 0.0).

    With ``q = floor(num 4^e / den) >= 2^110`` and ``r = isqrt(q)``, the root of ``num 4^e / den``
    lies in ``[r, r + 1)``, exactly ``r`` iff nothing was truncated; ``r + 1/2`` stands for any
    inexact value there, since no rounding boundary of a 53-bit float lies strictly between two
    integers above ``2^55``. Dividing by ``2^e`` is exact and the final rounding is Python's.
    """
    if num <= 0:
        return 0.0
    e = (112 - (num.bit_length() - den.bit_length())) // 2 + 1
    q, rest = divmod(num << 2 * e, den) if e >= 0 else divmod(num, den << -2 * e)
    r = math.isqrt(q)
    halves = 2 * r + (rest != 0 or r * r != q)
    return float(Fraction(halves, 1 << (e + 1)) if e >= -1 else Fraction(halves << -(e + 1)))


class ExactColumnSums:
    """Running exact sums (and counts of non-NaN values) of a fixed set of named columns.

    Per column: the exact sum of the finite values (a Python ``int``, units of 2^-1074) and the
    numbers of ``+inf`` and ``-inf``; :meth:`sums` applies the module docstring's definition. The
    exact sums of the squares are kept the same way, for :meth:`stds`.
    """

    def __init__(self, names: list[str]) -> None:
        self.names = list(names)
        self._totals = [0] * len(self.names)
        self._squares = [0] * len(self.names)
        self._square_inf = np.zeros(len(self.names), dtype=np.int64)
        self._pos_inf = np.zeros(len(self.names), dtype=np.int64)
        self._neg_inf = np.zeros(len(self.names), dtype=np.int64)
        self.counts = np.zeros(len(self.names), dtype=np.int64)

    def add(self, values: np.ndarray) -> None:
        """Fold a (n_rows x n_cols) float64 block, columns in ``names`` order; NaN is skipped."""
        values = np.asarray(values, dtype=np.float64).reshape(-1, len(self.names))
        n_cols = len(self.names)
        bins, pos_inf, neg_inf, n_used = column_bins(with_squares(values))
        for c in range(n_cols):
            self._totals[c] += bins_to_int(bins[c])
            self._squares[c] += bins_to_int(bins[n_cols + 2 * c]) + bins_to_int(
                bins[n_cols + 2 * c + 1]
            )
        self._square_inf += pos_inf[n_cols::2]
        pos_inf, neg_inf, n_used = pos_inf[:n_cols], neg_inf[:n_cols], n_used[:n_cols]
        self._pos_inf += pos_inf
        self._neg_inf += neg_inf
        self.counts += n_used

    def merge(self, other: ExactColumnSums) -> None:
        """Fold another accumulator over the same columns (exact, order-independent)."""
        for c in range(len(self.names)):
            self._totals[c] += other._totals[c]
            self._squares[c] += other._squares[c]
        self._square_inf += other._square_inf
        self._pos_inf += other._pos_inf
        self._neg_inf += other._neg_inf
        self.counts += other.counts

    def sums(self) -> np.ndarray:
        """The sums per the module docstring: exact finite sums rounded once, or +-inf / NaN."""
        return np.array(
            [
                round_units(t, int(p), int(n))
                for t, p, n in zip(self._totals, self._pos_inf, self._neg_inf, strict=True)
            ],
            dtype=np.float64,
        )

    def stds(self) -> np.ndarray:
        """Each column's population standard deviation (ddof 0, as ``numpy.std`` and ranx's
        ``return_std``): ``sqrt(sum (v - m)^2 / n)``, ``m`` the mean of the ``n`` non-NaN values,
        from the exact sums (module docstring); NaN when ``n == 0`` or a value is infinite,
        ``inf`` when a square overflows."""
        out = np.full(len(self.names), np.nan)
        for c, n in enumerate(self.counts.tolist()):
            if n == 0 or self._pos_inf[c] or self._neg_inf[c]:
                continue
            if self._square_inf[c]:
                out[c] = np.inf
                continue
            # units of 2^-1074: sum v = t 2^-1074, sum v^2 = s 2^-1074
            t, s = self._totals[c], self._squares[c]
            out[c] = sqrt_ratio((n * s << 1074) - t * t, n * n << 2148)
        return out


@njit(nogil=True, cache=True)
def _weighted_bins(bits, weights, bins, counts, first, last):
    """Resamples ``first`` to ``last - 1``: row ``u`` of ``bits`` (float64 bit patterns) added
    ``weights[u, r]`` times into ``bins[r]`` (n_cols x N_BINS, normalised at the end), its
    weight counted into ``counts[r]`` (+inf, -inf, not NaN). A weight is at most 64 (the cap of
    :func:`mobeval.kernels.resampling.poisson_weights`), so carrying before a row would take a
    column past ``CARRY_EVERY`` values keeps every bin below 2^63."""
    n_rows, n_cols = bits.shape
    for r in range(first, last):
        acc, cnt = bins[r], counts[r]
        since = 0
        for u in range(n_rows):
            w = weights[u, r]
            if w == 0:
                continue
            if since + w > CARRY_EVERY:
                for c in range(n_cols):
                    _carry(acc, c)
                since = 0
            for c in range(n_cols):
                x = bits[u, c]
                if (x >> 52) & _EXP_MASK == _EXP_MASK:  # inf or NaN
                    if x & _MANT_MASK == 0:  # inf: counted by sign; NaN: skipped
                        cnt[1 if x < 0 else 0, c] += w
                        cnt[2, c] += w
                    continue
                cnt[2, c] += w
                for _ in range(w):
                    _add_bits(acc, c, x)
            since += w
        for c in range(n_cols):
            _carry(acc, c)


class WeightedColumnSums:
    """:class:`ExactColumnSums` of ``resamples`` weighted copies of the same rows: resample
    ``r``'s column ``c`` is the exact sum ``sum_u w[u, r] v[u, c]`` (integer weights: each value
    added ``w`` times into the bins, so it is the same integer as the unweighted sum of the
    rows repeated), its count ``sum_u w[u, r]`` over the non-NaN values; with every weight 1, a
    resample's sums and counts are :class:`ExactColumnSums`' bits. Memory: the columns times the
    resamples."""

    def __init__(self, names: list[str], resamples: int) -> None:
        self.names = list(names)
        self._totals = [[0] * len(self.names) for _ in range(resamples)]
        self._inf = np.zeros((resamples, 2, len(self.names)), dtype=np.int64)
        self.counts = np.zeros((resamples, len(self.names)), dtype=np.int64)

    def add(self, values: np.ndarray, weights: np.ndarray) -> None:
        """Fold a (n_rows x n_cols) float64 block, columns in ``names`` order, row ``u`` counted
        ``weights[u, r]`` times in resample ``r`` (int64[n_rows, resamples], each at most 64)."""
        bits = readonly(values, np.float64).reshape(-1, len(self.names)).view(np.int64)
        weights = readonly(weights, np.int64)
        resamples = len(self._totals)
        bins = np.zeros((resamples, len(self.names), N_BINS), dtype=np.int64)
        counts = np.zeros((resamples, 3, len(self.names)), dtype=np.int64)
        run_blocks(_weighted_bins, resamples, bits, weights, bins, counts, grain=16)
        for r, totals in enumerate(self._totals):
            for c in range(len(self.names)):
                totals[c] += bins_to_int(bins[r, c])
        self._inf += counts[:, :2]
        self.counts += counts[:, 2]

    def merge(self, other: WeightedColumnSums) -> None:
        """Fold another accumulator over the same columns and resamples (exact)."""
        for totals, others in zip(self._totals, other._totals, strict=True):
            for c, total in enumerate(others):
                totals[c] += total
        self._inf += other._inf
        self.counts += other.counts

    def sums(self) -> np.ndarray:
        """float64[resamples, n_cols]: each resample's sums, as :meth:`ExactColumnSums.sums`."""
        return np.array(
            [
                [round_units(t, int(p), int(n)) for t, p, n in zip(totals, *inf, strict=True)]
                for totals, inf in zip(self._totals, self._inf, strict=True)
            ],
            dtype=np.float64,
        ).reshape(len(self._totals), len(self.names))
