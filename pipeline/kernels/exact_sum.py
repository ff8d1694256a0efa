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
A chunk's rows are folded into :class:`ExactColumnSums`' own bins (kept normalised; a chunk of
many rows by blocks on threads, the blocks' bins then added: integers again), and the exact total
is made a Python ``int`` once, when the sums are asked for; the final rounding is Python's
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
from collections.abc import Sequence
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
#: The rows of a fold's counts, a column each: +inf values, -inf values, values not NaN, values
#: whose square is infinite.
COUNTS = ("pos_inf", "neg_inf", "used", "square_inf")
_POS, _NEG, _USED, _SQUARE_INF = range(len(COUNTS))


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
    neg = bits >> 63  # -1 for a negative value, else 0: x ^ neg - neg is -x or x, no branch
    bins[c, i] += (lo ^ neg) - neg
    bins[c, i + 1] += (hi ^ neg) - neg


@njit(nogil=True, cache=True)
def _fold_blocks(values, squared, block_bins, block_counts, first, last):
    """Blocks ``first`` to ``last - 1`` of ``BLOCK_ROWS`` rows of ``values`` (n_rows x n_cols
    float64) folded into ``block_bins[b]`` (3 n_cols x N_BINS, normalised on entry and left
    normalised) and ``block_counts[b]`` (the rows of :data:`COUNTS`, n_cols each): each value
    into row ``c`` of the bins and, where ``squared[c]``, its square ``v * v`` as the two
    float64 ``hi + lo`` of Dekker's product (Veltkamp's split of ``v`` into two 26-bit halves
    ``a + b``, then ``lo = ((a a - hi) + 2 a b) + b b``) into rows ``n_cols + 2 c`` and
    ``n_cols + 2 c + 1``; NaN skipped, an infinity counted by sign (its square as infinite), a
    square that overflows counted as infinite. One pass, the squares made where they are added
    (no array of them)."""
    n_rows, n_cols = values.shape
    for b in range(first, last):
        acc, cnt = block_bins[b], block_counts[b]
        since = 0
        for r in range(b * BLOCK_ROWS, min((b + 1) * BLOCK_ROWS, n_rows)):
            for c in range(n_cols):
                v = values[r, c]
                x = np.float64(v).view(np.int64)
                if (x >> 52) & _EXP_MASK == _EXP_MASK:  # inf or NaN
                    if x & _MANT_MASK == 0:  # inf: counted by sign; NaN: skipped
                        cnt[_NEG if x < 0 else _POS, c] += 1
                        cnt[_USED, c] += 1
                        cnt[_SQUARE_INF, c] += 1
                    continue
                cnt[_USED, c] += 1
                if v == 0.0:  # +-0 and its square add nothing (a metric's value often is)
                    continue
                _add_bits(acc, c, x)
                if not squared[c]:
                    continue
                hi = v * v
                if not math.isfinite(hi):
                    cnt[_SQUARE_INF, c] += 1
                    continue
                t = v * 134217729.0  # 2^27 + 1
                a = t - (t - v)
                low = v - a
                lo = ((a * a - hi) + 2.0 * a * low) + low * low
                _add_bits(acc, n_cols + 2 * c, np.float64(hi).view(np.int64))
                _add_bits(acc, n_cols + 2 * c + 1, np.float64(lo).view(np.int64))
            since += 1  # a row adds at most one value to each row of the bins
            if since == CARRY_EVERY:
                for c in range(3 * n_cols):
                    _carry(acc, c)
                since = 0
        for c in range(3 * n_cols):
            _carry(acc, c)


@njit(nogil=True, cache=True)
def _merge_bins(bins, other):
    """``bins += other``, each row normalised after (both normalised, or sums of a few
    normalised ones: every bin far below 2^62)."""
    for c in range(bins.shape[0]):
        for j in range(N_BINS):
            bins[c, j] += other[c, j]
        _carry(bins, c)


def bins_to_int(bins: np.ndarray) -> int:
    """The exact integer ``sum_j bins[j] * 2^(32 j)`` (units of 2^-1074)."""
    return sum(int(b) << (BIN_BITS * j) for j, b in enumerate(bins.tolist()) if b)


def int_bins(total: int) -> list[int]:
    """The normalised bins of the integer ``total`` (the inverse of :func:`bins_to_int`): 32 bits
    a bin, the sign and the rest in the top one."""
    low = [(total >> (BIN_BITS * j)) & _LOW_MASK for j in range(N_BINS - 1)]
    return [*low, total >> (BIN_BITS * (N_BINS - 1))]


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

    Per column: the exact sum of the finite values and, for the columns of ``spread`` (None:
    all), of their squares (each as bins of :func:`_fold_blocks`, kept normalised: a fold adds
    into them, no Python ``int`` made before :meth:`sums`) and the numbers of ``+inf`` and
    ``-inf``; :meth:`sums` applies the module docstring's definition, :meth:`stds` the
    spread's (NaN for a column not in ``spread``: its squares were not summed)."""

    def __init__(self, names: list[str], spread: Sequence[str] | None = None) -> None:
        self.names = list(names)
        squared = [spread is None or name in spread for name in self.names]
        self._squared = readonly(np.array(squared, dtype=np.bool_), np.bool_)
        self._bins = np.zeros((3 * len(self.names), N_BINS), dtype=np.int64)
        self._counts = np.zeros((len(COUNTS), len(self.names)), dtype=np.int64)

    @property
    def counts(self) -> np.ndarray:
        """The number of non-NaN values of each column."""
        return self._counts[_USED]

    def __getstate__(self) -> dict:
        """Pickled small (a gather carries it): each row of bins as the Python int it stands
        for, most of them 0."""
        return vars(self) | {"_bins": [bins_to_int(row) for row in self._bins]}

    def __setstate__(self, state: dict) -> None:
        vars(self).update(state)
        self._squared = readonly(self._squared, np.bool_)  # the kernel's type: one compile
        rows = [int_bins(total) for total in state["_bins"]]
        self._bins = np.array(rows, dtype=np.int64).reshape(len(rows), N_BINS)  # none: 0 x N_BINS

    def add(self, values: np.ndarray) -> None:
        """Fold a (n_rows x n_cols) float64 block, columns in ``names`` order; NaN is skipped.
        Blocks of ``BLOCK_ROWS`` rows on threads (:func:`mobeval.kernels.blocks.run_blocks`),
        their bins then added; a single block folded into the state's bins themselves."""
        n_cols = len(self.names)
        values = readonly(np.asarray(values, dtype=np.float64).reshape(-1, n_cols), np.float64)
        n_blocks = (len(values) + BLOCK_ROWS - 1) // BLOCK_ROWS
        if n_blocks <= 1:
            _fold_blocks(values, self._squared, self._bins[None], self._counts[None], 0, 1)
            return
        block_bins = np.zeros((n_blocks, *self._bins.shape), dtype=np.int64)
        block_counts = np.zeros((n_blocks, *self._counts.shape), dtype=np.int64)
        run_blocks(_fold_blocks, n_blocks, values, self._squared, block_bins, block_counts)
        _merge_bins(self._bins, block_bins.sum(axis=0))
        self._counts += block_counts.sum(axis=0)

    def merge(self, other: ExactColumnSums) -> None:
        """Fold another accumulator over the same columns (exact, order-independent)."""
        _merge_bins(self._bins, other._bins)
        self._counts += other._counts

    def _totals(self) -> list[int]:
        """Each column's exact sum of its finite values, in units of 2^-1074."""
        return [bins_to_int(self._bins[c]) for c in range(len(self.names))]

    def sums(self) -> np.ndarray:
        """The sums per the module docstring: exact finite sums rounded once, or +-inf / NaN."""
        pos_inf, neg_inf = self._counts[_POS].tolist(), self._counts[_NEG].tolist()
        return np.array(
            [
                round_units(t, p, n)
                for t, p, n in zip(self._totals(), pos_inf, neg_inf, strict=True)
            ],
            dtype=np.float64,
        )

    def stds(self) -> np.ndarray:
        """Each column's population standard deviation (ddof 0, as ``numpy.std`` and ranx's
        ``return_std``): ``sqrt(sum (v - m)^2 / n)``, ``m`` the mean of the ``n`` non-NaN values,
        from the exact sums (module docstring); NaN when ``n == 0`` or a value is infinite,
        ``inf`` when a square overflows."""
        n_cols = len(self.names)
        out = np.full(n_cols, np.nan)
        totals = self._totals()
        pos_inf, neg_inf, used, square_inf = self._counts.tolist()
        for c, n in enumerate(used):
            if n == 0 or pos_inf[c] or neg_inf[c] or not self._squared[c]:
                continue
            if square_inf[c]:
                out[c] = np.inf
                continue
            # units of 2^-1074: sum v = t 2^-1074, sum v^2 = s 2^-1074
            t = totals[c]
            s = bins_to_int(self._bins[n_cols + 2 * c]) + bins_to_int(
                self._bins[n_cols + 2 * c + 1]
            )
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
