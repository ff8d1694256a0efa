"""Per-unit correlation coefficients of paired values (Numba, one unit per segment).

``offsets`` cut ``x`` and ``y`` into units; each unit's coefficient goes to its own slot, NaN
when it has fewer than 2 pairs or a constant side (as pandas' ``Series.corr`` gives):

* Pearson: ``r = sum (x - mx)(y - my) / sqrt(sum (x - mx)^2 sum (y - my)^2)``;
* Spearman: Pearson's ``r`` of the average ranks (ties share the mean of their ranks);
* Kendall's tau-b: ``(C - D) / sqrt((n0 - n1)(n0 - n2))``, ``C`` / ``D`` the concordant /
  discordant pairs, ``n0 = n(n-1)/2``, ``n1`` / ``n2`` the pairs tied in ``x`` / in ``y``
  (Kendall 1945; scipy's ``kendalltau``, which pandas calls).
"""

from __future__ import annotations

import numpy as np

from mobeval.kernels.jit import njit

PEARSON, SPEARMAN, KENDALL = 0, 1, 2
METHODS = {"pearson": PEARSON, "spearman": SPEARMAN, "kendall": KENDALL}


@njit(cache=True, nogil=True)
def _pearson(x, y):
    n = len(x)
    mx = x.sum() / n
    my = y.sum() / n
    sxy = 0.0
    sxx = 0.0
    syy = 0.0
    for i in range(n):
        dx = x[i] - mx
        dy = y[i] - my
        sxy += dx * dy
        sxx += dx * dx
        syy += dy * dy
    if sxx == 0.0 or syy == 0.0:
        return np.nan
    r = sxy / np.sqrt(sxx * syy)
    return max(-1.0, min(1.0, r))


@njit(cache=True, nogil=True)
def _average_ranks(v):
    order = np.argsort(v, kind="mergesort")
    ranks = np.empty(len(v))
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for m in range(i, j + 1):
            ranks[order[m]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return ranks


@njit(cache=True, nogil=True)
def _kendall_b(x, y):
    n = len(x)
    concordant = 0
    discordant = 0
    tied_x = 0
    tied_y = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx = x[i] - x[j]
            dy = y[i] - y[j]
            if dx == 0.0:
                tied_x += 1
            if dy == 0.0:
                tied_y += 1
            if dx != 0.0 and dy != 0.0:
                if (dx > 0.0) == (dy > 0.0):
                    concordant += 1
                else:
                    discordant += 1
    pairs = n * (n - 1) // 2
    denominator = float(pairs - tied_x) * float(pairs - tied_y)
    if denominator == 0.0:
        return np.nan
    return (concordant - discordant) / np.sqrt(denominator)


@njit(cache=True, nogil=True)
def unit_correlations(offsets, x, y, method):
    """The coefficient ``method`` (:data:`METHODS`) of each unit's pairs ``x[a:b]``, ``y[a:b]``."""
    units = len(offsets) - 1
    out = np.full(units, np.nan)
    for u in range(units):
        a = offsets[u]
        b = offsets[u + 1]
        if b - a < 2:
            continue
        xs = x[a:b]
        ys = y[a:b]
        if method == KENDALL:
            out[u] = _kendall_b(xs, ys)
        elif method == SPEARMAN:
            out[u] = _pearson(_average_ranks(xs), _average_ranks(ys))
        else:
            out[u] = _pearson(xs, ys)
    return out


@njit(cache=True, nogil=True)
def unit_auc(offsets, scores, positive):
    """Each unit's AUC of its ``positive`` items (1 / 0) ranked by ``scores`` and its number of
    positives: with ``L`` items, ``P`` positives and the descending ranks of the positives
    (ties: the mean of their ranks) summing to ``S``,
    ``AUC = ((L + 1) P - P (P + 1) / 2 - S) / (P (L - P))`` (RecBole's GAUC per user, the
    Mann-Whitney form); NaN without a positive or a negative."""
    units = len(offsets) - 1
    auc = np.full(units, np.nan)
    count = np.zeros(units, dtype=np.int64)
    for u in range(units):
        a = offsets[u]
        b = offsets[u + 1]
        length = b - a
        ascending = _average_ranks(scores[a:b])
        positives = 0
        rank_sum = 0.0
        for i in range(length):
            if positive[a + i]:
                positives += 1
                rank_sum += length + 1.0 - ascending[i]
        count[u] = positives
        if positives == 0 or positives == length:
            continue
        pairs = (length + 1.0) * positives - positives * (positives + 1.0) / 2.0 - rank_sum
        auc[u] = pairs / (positives * (length - positives))
    return auc, count
