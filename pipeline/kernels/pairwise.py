"""numpy's pairwise summation, so that a mean computed in a kernel equals ``np.mean`` to the bit.

GEO-BLEU's per-uid mean over days and ClayRS's per-user mean rating (the relevance threshold) are
``np.mean`` / ``np.nanmean`` in the reference systems; a plain loop differs in the last bit for
about one value in five, which can flip a rating that equals the mean across the threshold.

Non-finite values follow IEEE 754 exactly as ``np.mean`` does: NaN or ``inf - inf`` gives NaN, an
infinity gives that infinity, and a running sum that overflows gives ``+-inf`` (``np.mean([1e308,
1e308])`` is ``inf``). That is deliberate: it is the reference's per-unit value; exactness across
units is :mod:`mobeval.kernels.exact_sum`'s job. The kernel reads only ``values[start:start +
n]`` and writes only its own stack of pending halves, whose depth is bounded by ``log2(n) < 64``.
"""

from __future__ import annotations

import numpy as np

from mobeval.kernels.jit import njit

_BLOCK = 128  # numpy's PW_BLOCKSIZE: below it no split
_MAX_DEPTH = 64  # each split at least halves n < 2^63, so the pending right halves never exceed 63


@njit(cache=True)
def _block_sum(values, start, n):
    """numpy's pairwise sum of values[start:start+n] for n <= 128 (no split): n < 8 sequential
    from 0.0; else eight interleaved accumulators r0..r7 over the longest multiple-of-8 prefix,
    combined as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then the rest added one by one."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += values[start + i]
        return res
    r0 = values[start]
    r1 = values[start + 1]
    r2 = values[start + 2]
    r3 = values[start + 3]
    r4 = values[start + 4]
    r5 = values[start + 5]
    r6 = values[start + 6]
    r7 = values[start + 7]
    i = 8
    stop = n - n % 8
    while i < stop:
        r0 += values[start + i]
        r1 += values[start + i + 1]
        r2 += values[start + i + 2]
        r3 += values[start + i + 3]
        r4 += values[start + i + 4]
        r5 += values[start + i + 5]
        r6 += values[start + i + 6]
        r7 += values[start + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += values[start + i]
        i += 1
    return res


@njit(cache=True)
def pairwise_sum(values, start, n):
    """numpy's pairwise summation of values[start:start+n] (``pairwise_sum`` in loops_utils).

    n <= 128: :func:`_block_sum`. Larger: split at n2 = n//2 rounded down to a multiple of 8 and
    return sum(left n2) + sum(right n - n2). The recursion is unrolled into an explicit stack
    (post-order, same additions in the same order), because Numba cannot load a recursive
    function from its cache when it is called from another cached kernel.
    """
    if n <= _BLOCK:
        return _block_sum(values, start, n)
    right_start = np.empty(_MAX_DEPTH, dtype=np.int64)
    right_n = np.empty(_MAX_DEPTH, dtype=np.int64)
    left_sum = np.empty(_MAX_DEPTH)
    left_done = np.empty(_MAX_DEPTH, dtype=np.bool_)  # set as each level is pushed
    depth = 0
    s = start
    m = n
    while True:
        while m > _BLOCK:  # descend to the leftmost pending block, remembering right halves
            half = m // 2
            half -= half % 8
            right_start[depth] = s + half
            right_n[depth] = m - half
            left_done[depth] = False
            depth += 1
            m = half
        total = _block_sum(values, s, m)
        while depth > 0:  # climb: a finished left half waits for its right half
            d = depth - 1
            if not left_done[d]:
                left_sum[d] = total
                left_done[d] = True
                s = right_start[d]
                m = right_n[d]
                break
            total = left_sum[d] + total
            depth -= 1
        if depth == 0:
            return total
