"""One pass per row of a logits matrix: what ranks the target, the top-1 class, the cross-entropy.

The matrix is never sorted. For row ``x`` and target ``t`` the kernel counts the other classes
whose score is strictly greater than ``x[t]`` (``g``) and those equal to it at a lower (``e_<``)
and a higher (``e_>``) class index; every tie policy's rank follows from the three counts
(:func:`mobeval.tasks.logits.rank_bounds`).

Top-1 is ``argmax`` with the lowest index on ties (``np.argmax`` / ``torch.argmax``). Cross-entropy
is ``log(sum_j exp(x_j - m)) + m - x_t`` with ``m = max_j x_j`` (stable log-sum-exp), accumulated in
float64 whatever the input precision (``torch.nn.functional.cross_entropy`` on float64 logits).
A NaN or ``+inf`` anywhere in a row flags the row as bad. The exp pass costs most of the time
(one scalar float64 ``exp`` per logit, ~10x the counting pass), so it runs only when asked for.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

# reassociation lets LLVM vectorise the counting and max loops; no 'nnan'/'ninf', so the NaN check
# on the exp-sum stays
_FAST = {"reassoc", "nsz", "arcp", "contract"}


@njit(parallel=True, cache=True, fastmath=_FAST)
def logits_rows(logits, targets, with_ce):
    """Per row: the counts ``g``, ``e_<``, ``e_>`` (int64), top-1 class, cross-entropy, bad flag.

    Rows whose target is negative are skipped (counts -1, cross-entropy NaN, top-1 -1); without
    ``with_ce`` the cross-entropy is NaN.
    """
    n, n_classes = logits.shape
    n_greater = np.empty(n, dtype=np.int64)
    n_lower = np.empty(n, dtype=np.int64)
    n_higher = np.empty(n, dtype=np.int64)
    top1 = np.empty(n, dtype=np.int64)
    ce = np.empty(n)
    bad = np.zeros(n, dtype=np.bool_)
    for i in prange(n):
        t = targets[i]
        if t < 0:
            n_greater[i] = -1
            n_lower[i] = -1
            n_higher[i] = -1
            top1[i] = -1
            ce[i] = np.nan
            continue
        row = logits[i]
        x = row[t]
        greater = 0
        equal_before = 0
        equal_after = 0
        n_nan = 0
        m = x
        for j in range(t):
            v = row[j]
            greater += v > x
            equal_before += v == x
            n_nan += v != v
            m = max(m, v)
        for j in range(t + 1, n_classes):
            v = row[j]
            greater += v > x
            equal_after += v == x
            n_nan += v != v
            m = max(m, v)
        n_greater[i] = greater
        n_lower[i] = equal_before
        n_higher[i] = equal_after
        best = 0
        while row[best] != m and best < n_classes - 1:
            best += 1
        top1[i] = best
        bad[i] = n_nan > 0 or x != x or m == np.inf
        ce[i] = np.nan
        if with_ce and not bad[i]:
            mf = np.float64(m)
            ce[i] = math.log(_sum_exp_shifted(row, mf)) + mf - np.float64(x)
    return n_greater, n_lower, n_higher, top1, ce, bad


@njit(cache=True)
def _sum_exp_shifted(row, shift):
    """``sum_j exp(row[j] - shift)`` in float64, added strictly left to right.

    Compiled without fast-math (LLVM's flags are per instruction, so they stay strict when this
    is inlined into :func:`logits_rows`): with reassociation allowed, the order of the additions
    depended on how each input dtype's specialisation was compiled, and the same logits read as
    float32 (``.npy``) or float64 (Parquet) differed in the last bit of the cross-entropy."""
    s = 0.0
    for j in range(row.size):
        s += math.exp(np.float64(row[j]) - shift)
    return s
