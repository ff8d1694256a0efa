"""One pass per row of a logits matrix: what ranks the target, the top-1 class, the cross-entropy.

The matrix is never sorted. For row ``x`` and target ``t`` the kernel counts the other classes
whose score is strictly greater than ``x[t]`` (``g``) and those equal to it at a lower (``e_<``)
and a higher (``e_>``) class index; every tie policy's rank follows from the three counts
(:func:`mobeval.tasks.logits.rank_bounds`). The same read of the row finds its largest value
``m``: through the values' IEEE-754 bits mapped to integers in the order of the floats
(:func:`_order_key`), so that the max is an integer max, which vectorises without fast-math.

Top-1 is ``argmax`` with the lowest index on ties (``np.argmax`` / ``torch.argmax``). Cross-entropy
is ``log(sum_j exp(x_j - m)) + m - x_t`` (stable log-sum-exp), its terms in the input's precision:

* float64 logits: ``exp`` is libm's, in float64, added left to right.
* float32 logits (as ``torch.nn.functional.cross_entropy`` computes them): ``d_j = x_j - m`` in
  float32 and :func:`exp_f32`, a polynomial exp of fused multiply-adds that vectorises (libm's
  is one call per logit); the terms are added in float64, then ``log`` and ``+ m - x_t`` in
  float64. Its error bound (:func:`cross_entropy_error_bound`), with ``u = 2**-24``, ``C`` classes:
  ``|ce - CE| <= (ln C + EXP_ERROR / u + 0.01) * u + C * 2**-53 + 2**-50 * |CE|``, CE the exact
  cross-entropy of the float32 logits. Sources: ``d_j``'s rounding, ``|delta_j| <= u |x_j - m|``,
  moves the sum by at most ``u * sum_j p_j (m - x_j) <= u * H(p) <= u ln C`` relatively (``p``
  the softmax, ``H`` its entropy); each term's exp is within ``EXP_ERROR`` (relative); the float64
  sum adds at most ``(C - 1) * 2**-53`` relatively (the ``C * 2**-53``); ``0.01 u`` covers the
  few float64 roundings of log and additions, second-order terms and the terms below
  ``e**-87.5`` (next paragraph).

Those rounding and exp errors are ~1e-7 relative: next to them a term below ``e**-87.5`` (which
counts as ``e**-87.5``, < 1.1e-38) is nothing. A NaN or ``+inf`` anywhere in a row flags the row
as bad; a row of only ``-inf`` gets a NaN cross-entropy, a ``-inf`` target ``+inf``.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

from mobeval.kernels.blocks import readonly, run_blocks
from mobeval.kernels.jit import njit

#: Fewest rows per block of work on a thread (a block allocates its scratch row once).
BLOCK = 64
#: Values per block of the counting loop (the arg-max is searched in one block at the end).
SCAN_BLOCK = 512

# float32 constants of exp_f32 (numba freezes module globals as constants of their type)
_F32 = np.float32
_LOG2E = _F32(1.0 / math.log(2.0))
#: ln 2 split in two (Cody & Waite): _LN2_HI has 9 significant bits, so k * _LN2_HI is exact for
#: |k| < 2**15 and so is y - k * _LN2_HI (Sterbenz); _LN2_LO is the rest, rounded to float32.
_LN2_HI = _F32(0.693359375)
_LN2_LO = _F32(math.log(2.0) - 0.693359375)
_ROUND = _F32(1.5 * 2.0**23)  # (v + _ROUND) - _ROUND rounds v to an integer, |v| < 2**22
_LOWEST = _F32(-87.5)  # then k >= round(-87.5 / ln 2) = -126: 2**k stays a normal float32
_ONE = _F32(1.0)
_TAYLOR = tuple(_F32(1.0 / math.factorial(k)) for k in range(2, 8))
_T2, _T3, _T4, _T5, _T6, _T7 = _TAYLOR
#: Largest relative error of :func:`exp_f32` over d in [-87.5, 0], u = 2**-24: measured against
#: float64 libm exp on every one of the 1.1e9 float32 there, 1.85 u (at d = -87.493, where e**d is
#: subnormal); stated as 2 u. tests/test_logits_exp.py checks it on random and edge arguments.
EXP_ERROR = 2.0 * 2.0**-24


@intrinsic
def _float32_from_bits(typingctx, bits):
    """The float32 whose IEEE-754 bit pattern is the int32 ``bits`` (an LLVM bitcast)."""
    if bits != types.int32:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(types.int32), codegen


@intrinsic
def _fma32(typingctx, a, b, c):
    """``a * b + c`` in float32 with one rounding (LLVM's ``llvm.fma``: one instruction on x86-64
    with FMA, a libm call elsewhere; the same bits either way)."""
    if not (a == b == c == types.float32):
        return None

    def codegen(context, builder, signature, args):
        f32 = ir.FloatType()
        fma = builder.module.declare_intrinsic(
            "llvm.fma", [f32], ir.FunctionType(f32, [f32, f32, f32])
        )
        return builder.call(fma, args)

    return types.float32(types.float32, types.float32, types.float32), codegen


@njit(cache=True)
def exp_f32(d):
    """``e**d`` for a float32 ``d <= 0``, in float32, without a libm call (so loops vectorise).

    ``d = k ln 2 + r`` with ``k = round(d / ln 2)``, ``|r| <= ln(2) / 2`` (Cody-Waite: ``r`` exact
    but for one float32 rounding); ``e**r`` by its Taylor polynomial of degree 7 in Horner form
    (truncation < 1e-8 relative); times ``2**k`` made from its bits. Every step is an IEEE
    operation or a fused multiply-add (one rounding), so the bits are the same on every machine.
    Relative error <= EXP_ERROR for ``-87.5 <= d <= 0``; below -87.5 (``-inf`` included) it returns
    ``e**-87.5`` (1.0e-38). Compiled without fast-math: the rounding trick needs IEEE operations.
    """
    y = max(d, _LOWEST)
    k = _fma32(y, _LOG2E, _ROUND) - _ROUND
    r = _fma32(-k, _LN2_LO, _fma32(-k, _LN2_HI, y))
    p = _fma32(_fma32(_fma32(_T7, r, _T6), r, _T5), r, _T4)
    p = _fma32(_fma32(_fma32(_fma32(p, r, _T3), r, _T2), r, _ONE), r, _ONE)
    return p * _float32_from_bits(np.int32((np.int32(k) + 127) << 23))


def cross_entropy_error_bound(n_classes: int, ce: float) -> float:
    """Largest ``|computed - exact|`` cross-entropy of a row of ``n_classes`` float32 logits
    whose exact cross-entropy is ``ce`` (module docstring)."""
    u = 2.0**-24
    return (
        (math.log(n_classes) + EXP_ERROR / u + 0.01) * u + n_classes * 2.0**-53 + 2.0**-50 * abs(ce)
    )


@njit(cache=True)
def _exps_f32(row, m, out):
    """``out[j] = exp_f32(row[j] - m)`` (float32 arithmetic, no fast-math)."""
    for j in range(row.size):
        out[j] = exp_f32(row[j] - m)


@njit(cache=True, fastmath={"reassoc"})
def _sum_f64(values):
    """``sum_j float64(values[j])``; reassociation (this function's additions only) lets the sum
    run in vector lanes: any order is within the bound of module docstring, and the order is
    fixed for a compiled kernel, so a row always gives the same bits on one machine."""
    s = 0.0
    for j in range(values.size):
        s += np.float64(values[j])
    return s


@njit(cache=True)
def _sum_exp_shifted(row, shift):
    """``sum_j exp(row[j] - shift)`` in float64 with libm's exp, added strictly left to right
    (float64 logits)."""
    s = 0.0
    for j in range(row.size):
        s += math.exp(np.float64(row[j]) - shift)
    return s


def _log_sum_exp_shifted(row, m, scratch):
    """``log(sum_j exp(row[j] - m))`` in float64, the terms in the row's precision (``scratch``:
    a row of the row's dtype)."""


@overload(_log_sum_exp_shifted)
def _log_sum_exp_shifted_impl(row, m, scratch):
    if row.dtype == types.float32:

        def impl(row, m, scratch):
            _exps_f32(row, m, scratch)
            return math.log(_sum_f64(scratch))

    else:

        def impl(row, m, scratch):
            return math.log(_sum_exp_shifted(row, np.float64(m)))

    return impl


def _bits(row):
    """``row``'s IEEE-754 bit patterns as signed integers of its width."""


@overload(_bits)
def _bits_impl(row):
    width = np.int32 if row.dtype == types.float32 else np.int64
    return lambda row: row.view(width)


def _order_key(bits):
    """An integer in the order of the float whose bits are ``bits`` (non-NaN): itself for
    ``+0.0`` and above, ``-(magnitude bits)`` below, so that ``-0.0`` and ``+0.0`` both map to 0."""


@overload(_order_key)
def _order_key_impl(bits):
    if bits == types.int32:
        return lambda bits: bits if bits >= 0 else np.int32(np.int64(-(2**31)) - bits)
    return lambda bits: bits if bits >= 0 else np.int64(-(2**63)) - bits


def _lowest_key(bits):
    """An integer below every :func:`_order_key` of ``bits``' elements."""


@overload(_lowest_key)
def _lowest_key_impl(bits):
    low = np.int32(-(2**31)) if bits.dtype == types.int32 else np.int64(-(2**63))
    return lambda bits: low


@njit(cache=True)
def _scan(row, bits, lo, hi, x, top, top_at):
    """Over ``row[lo:hi]``: the values > x, == x and NaN (int32: a row has < 2**31 classes, and
    int32 counts take twice the vector lanes of int64), and the running max ``top`` of the
    order keys with ``top_at``, the start of the first ``SCAN_BLOCK`` that reached it (a max
    vectorises, a running arg-max does not; the caller finds the index in that block).
    Unsigned indices: no negative-index check in the loop."""
    greater = np.int32(0)
    equal = np.int32(0)
    n_nan = np.int32(0)
    low = _lowest_key(bits)
    for start in range(lo, hi, SCAN_BLOCK):
        block_top = low
        for j in range(np.uint64(start), np.uint64(min(hi, start + SCAN_BLOCK))):
            v = row[j]
            greater = np.int32(greater + (v > x))
            equal = np.int32(equal + (v == x))
            n_nan = np.int32(n_nan + (v != v))
            block_top = max(block_top, _order_key(bits[j]))
        if block_top > top:
            top, top_at = block_top, start
    return greater, equal, n_nan, top, top_at


def logits_rows(logits, targets, with_ce):
    """Per row: the counts ``g``, ``e_<``, ``e_>`` (int64), top-1 class, cross-entropy, bad flag.

    Rows whose target is negative are skipped (counts -1, cross-entropy NaN, top-1 -1); without
    ``with_ce`` the cross-entropy is NaN. Rows in blocks on threads (:func:`_logits_units`,
    :func:`mobeval.kernels.blocks.run_blocks`); the matrix is passed read-only, so that a mapped
    ``.npy`` file and an array in memory share one compiled kernel per dtype.
    """
    logits = readonly(logits, logits.dtype)
    targets = readonly(targets, np.int64)
    n = logits.shape[0]
    n_greater, n_lower, n_higher, top1 = (np.empty(n, dtype=np.int64) for _ in range(4))
    ce = np.empty(n)
    bad = np.zeros(n, dtype=np.bool_)
    outputs = (n_greater, n_lower, n_higher, top1, ce, bad)
    run_blocks(_logits_units, n, logits, targets, bool(with_ce), *outputs, grain=BLOCK)
    return outputs


@njit(nogil=True, cache=True)
def _logits_units(
    logits, targets, with_ce, n_greater, n_lower, n_higher, top1, ce, bad, first, last
):
    """Rows ``first`` to ``last - 1`` of :func:`logits_rows` (one scratch row for them all)."""
    n_classes = logits.shape[1]
    scratch = np.empty(n_classes if with_ce else 0, dtype=logits.dtype)
    for i in range(first, last):
        t = targets[i]
        ce[i] = np.nan
        if t < 0:
            n_greater[i] = -1
            n_lower[i] = -1
            n_higher[i] = -1
            top1[i] = -1
            continue
        row = logits[i]
        bits = _bits(row)
        x = row[t]
        start, none = np.int64(0), np.int64(-1)  # not literals: one specialisation of _scan
        greater, equal_before, n_nan, top, top_at = _scan(
            row, bits, start, t, x, _lowest_key(bits), none
        )
        if _order_key(bits[t]) > top:
            top, top_at = _order_key(bits[t]), t
        more, equal_after, more_nan, top, top_at = _scan(
            row, bits, t + 1, n_classes, x, top, top_at
        )
        n_greater[i] = greater + more
        n_lower[i] = equal_before
        n_higher[i] = equal_after
        n_nan += more_nan
        best = top_at
        while _order_key(bits[best]) != top:
            best += 1
        top1[i] = best
        m = row[best]
        bad[i] = n_nan > 0 or x != x or m == np.inf
        if with_ce and not bad[i] and m != -np.inf:
            ce[i] = _log_sum_exp_shifted(row, m, scratch) + (np.float64(m) - np.float64(x))
