"""Numba kernels of the trec_eval measures (:mod:`mobeval.trec_eval`).

Every kernel takes the ranked judgments of all queries at once: ``off`` (``nq + 1`` offsets) and
``rel`` (one value per retrieved document, in rank order: the judged relevance ``>= 0``,
``NONPOOL`` for a document the qrels do not list, ``UNJUDGED`` for a negative judgment), and
returns one row per query. ``level`` is the relevance level (``-l``): relevant means
``rel >= level``. ``num_rel[q]`` counts the judged documents at or above the level and
``rel_levels[q, j]`` the judged documents at level ``level_values[j]`` (the distinct judged
levels ``>= 0`` and 0, ascending: a level may be any int64, only those judged cost memory).

Definitions follow trec_eval's documentation and its test outputs (its test/ folder); the code is
written from those definitions, not taken from trec_eval.
"""

from __future__ import annotations

import math

import numpy as np

from mobeval.kernels.borrow import borrowed
from mobeval.kernels.jit import njit
from mobeval.kernels.trec_order import NONPOOL, UNJUDGED

#: C's 0.0 / 0.0 on x86-64: a NaN with its sign bit set (glibc prints ``-nan``).
C_NAN = math.copysign(math.nan, -1.0)
MIN_GEO_MEAN = 0.00001


@njit(cache=True)
def base_counts(off, rel, level):
    """Per query: num_ret, num_rel_ret, documents not in the qrels, negatively judged ones."""
    nq = off.size - 1
    out = np.zeros((nq, 4), dtype=np.int64)
    for q in range(nq):
        for i in range(off[q], off[q + 1]):
            r = rel[i]
            if r == NONPOOL:
                out[q, 2] += 1
            elif r == UNJUDGED:
                out[q, 3] += 1
            elif r >= level:
                out[q, 1] += 1
        out[q, 0] = off[q + 1] - off[q]
    return out


@njit(cache=True)
def ranking_scores(off, rel, level, num_rel, num_nonrel):
    """Per query: map, log(max(map, 1e-5)), Rprec, recip_rank, bpref, log(max(bpref, 1e-5)),
    infAP, binG. ``num_nonrel[q]``: judged documents below the level."""
    nq = off.size - 1
    out = np.zeros((nq, 8))
    eps = 0.00001
    for q in range(nq):
        start = off[q]
        n = off[q + 1] - start
        R = num_rel[q]
        found = 0
        ap = 0.0
        rr = 0.0
        rprec_hits = 0
        bin_g = 0.0
        # bpref and infAP look only at judged documents
        nonrel_seen = 0
        unjudged_seen = 0
        judged_found = 0  # relevant among the judged (a level below 0 makes NONPOOL "relevant")
        bpref = 0.0
        infap = 0.0
        denom_nonrel = min(num_nonrel[q], R)
        for i in range(n):
            r = rel[start + i]
            hit = r >= level
            if hit:
                found += 1
                ap += found / (i + 1.0)
                if rr == 0.0:
                    rr = 1.0 / (i + 1.0)
                if i < R:
                    rprec_hits += 1
                bin_g += 1.0 / math.log2(3.0 + i - found)
            if r == NONPOOL:
                continue
            if r == UNJUDGED:
                unjudged_seen += 1
                continue
            if not hit:
                nonrel_seen += 1
                continue
            judged_found += 1
            if nonrel_seen > 0:
                bpref += 1.0 - min(nonrel_seen, R) / denom_nonrel
            else:
                bpref += 1.0
            if i == 0:
                infap += 1.0
            else:
                above = i * 1.0
                judged_above = judged_found - 1 + nonrel_seen
                infap += 1.0 / (above + 1.0) + (above / (above + 1.0)) * (
                    (judged_above + unjudged_seen) / above
                ) * ((judged_found - 1 + eps) / (judged_above + 2 * eps))
        map_q = ap / R if found > 0 else 0.0
        out[q, 0] = map_q
        out[q, 1] = math.log(max(map_q, MIN_GEO_MEAN))
        out[q, 2] = rprec_hits / R if min(n, R) > 0 else 0.0
        out[q, 3] = rr
        bp = bpref / R if R > 0 else bpref
        out[q, 4] = bp
        out[q, 5] = math.log(max(bp, MIN_GEO_MEAN))
        out[q, 6] = infap / R if R > 0 else infap
        out[q, 7] = bin_g / R if found > 0 else 0.0
    return out


@njit(cache=True)
def hits_at(off, rel, level, cutoffs):
    """Per query and cutoff k: relevant documents in the top k, unjudged (not in the qrels or
    negatively judged) documents in the top k, and the sum of precisions at the relevant documents
    of the top k (map_cut's numerator)."""
    nq = off.size - 1
    nc = cutoffs.size
    hits = np.zeros((nq, nc), dtype=np.int64)
    unjudged = np.zeros((nq, nc), dtype=np.int64)
    ap = np.zeros((nq, nc))
    for q in range(nq):
        start = off[q]
        n = off[q + 1] - start
        found = 0
        unj = 0
        s = 0.0
        c = 0
        for i in range(n):
            while c < nc and cutoffs[c] == i:
                hits[q, c] = found
                unjudged[q, c] = unj
                ap[q, c] = s
                c += 1
            if c == nc:
                break
            r = rel[start + i]
            if r >= level:
                found += 1
                s += found / (i + 1.0)
            if r < 0:
                unj += 1
        while c < nc:
            hits[q, c] = found
            unjudged[q, c] = unj
            ap[q, c] = s
            c += 1
    return hits, unjudged, ap


@njit(cache=True)
def provider_scores(off, rel, level, cutoffs):
    """Per query and cutoff k (0: the whole list), two measures of ir_measures' own Python
    providers (terrierteam/ir_measures 0.4.3, ``providers/judged_provider.py`` and
    ``msmarco_provider.py``), on lists ranked with ties by docno ascending as they sort:

    * Judged@k = |{d in top n_k : d is in the qrels}| / n_k with n_k = min(k, list length), a
      negative judgment counting as judged (only ``NONPOOL`` does not); 0 for an empty list;
    * RR@k = 1 / rank of the first document with ``rel >= level`` within the top k, else 0.
    """
    nq = off.size - 1
    nc = cutoffs.size
    judged = np.zeros((nq, nc))
    rr = np.zeros((nq, nc))
    for q in range(nq):
        start = off[q]
        n = off[q + 1] - start
        first = 0  # rank of the first relevant document (0: none)
        for i in range(n):
            if rel[start + i] >= level:
                first = i + 1
                break
        for c in range(nc):
            depth = n if cutoffs[c] == 0 else min(cutoffs[c], n)
            seen = 0
            for i in range(depth):
                if rel[start + i] != NONPOOL:
                    seen += 1
            if depth > 0:
                judged[q, c] = seen / depth
            if first > 0 and (cutoffs[c] == 0 or first <= cutoffs[c]):
                rr[q, c] = 1.0 / first
    return judged, rr


@njit(cache=True)
def _c_long(x):
    """C's ``(long) x`` on x86-64: truncated; NaN, infinite or beyond 64 bits: -2^63."""
    if not -9.223372036854775808e18 <= x < 9.223372036854775808e18:
        return np.int64(-9223372036854775808)
    return np.int64(x)


@njit(cache=True)
def _c_lround(x):
    """C's ``lround(x)`` (glibc, x86-64): the nearest integer, halves away from 0; NaN,
    infinite or beyond 64 bits: -2^63."""
    a = abs(x)
    r = math.floor(a)
    if a - r >= 0.5:
        r += 1.0
    return _c_long(r if x >= 0 else -r)


@njit(cache=True)
def interpolated_precision(off, rel, level, num_rel, num_rel_ret, fractions):
    """Per query and recall fraction f (in the order given): the interpolated precision at
    k = lround(f * num_rel) relevant documents, the highest precision at any rank holding k or
    more, as trec_eval's ``te_calc_iprec_at_recall`` walks the list from its end: the cutoffs
    from the last down, each taken when the walk reaches exactly k relevant documents; a cutoff
    beyond the relevant retrieved stays 0; the rest (k = 0, or passed by: out of order) take
    the highest precision of the whole list (0 / 0 for an empty one, ``-J``)."""
    nq = off.size - 1
    nf = fractions.size
    out = np.zeros((nq, nf))
    cut = np.zeros(nf, dtype=np.int64)
    for q in range(nq):
        start = off[q]
        n = off[q + 1] - start
        hits = num_rel_ret[q]
        for f in range(nf):
            cut[f] = _c_lround(fractions[f] * num_rel[q])
        c = nf - 1
        while c >= 0 and cut[c] > hits:
            c -= 1
        best = hits / n if n > 0 else C_NAN
        found = hits
        i = n
        while i > 0 and found > 0:
            p = found / i
            if best < p:
                best = p
            if rel[start + i - 1] >= level:
                while c >= 0 and found == cut[c]:
                    out[q, c] = best
                    c -= 1
                found -= 1
            i -= 1
        while c >= 0:
            out[q, c] = best
            c -= 1
    return out


@njit(cache=True)
def precision_at_r_multiples(off, rel, level, num_rel, num_rel_ret, multiples):
    """Per query and multiple m (in the order given): precision in the top
    k = (long)(m * num_rel + 0.9) documents, as trec_eval's ``te_calc_Rprec_mult`` takes them:
    the cutoffs from the last down, one beyond the list gives num_rel_ret / k (the list counts
    as padded with nonrelevant documents), the others taken walking up from the end of the list
    while a relevant document remains; one never reached (k <= 0, or passed by) stays 0."""
    nq = off.size - 1
    nm = multiples.size
    out = np.zeros((nq, nm))
    cut = np.zeros(nm, dtype=np.int64)
    for q in range(nq):
        start = off[q]
        n = off[q + 1] - start
        for m in range(nm):
            cut[m] = _c_long(multiples[m] * num_rel[q] + 0.9)
        c = nm - 1
        while c >= 0 and cut[c] > n:
            out[q, c] = num_rel_ret[q] / cut[c]
            c -= 1
        found = num_rel_ret[q]
        i = n
        while i > 0 and found > 0:
            while c >= 0 and cut[c] == i:
                out[q, c] = found / i
                c -= 1
            if rel[start + i - 1] >= level:
                found -= 1
            i -= 1
    return out


@njit(cache=True)
def _is_named(value, judged, custom_level):
    """Whether ``value`` is one of ``judged`` (ascending) or of ``custom_level``."""
    j = np.searchsorted(judged, value)
    return (j < judged.size and judged[j] == value) or bool((custom_level == value).any())


@njit(cache=True)
def _gain_table(levels, level_values, custom_level, custom_gain):
    """One query's gain levels: (gain, documents at that level), as trec_eval's table of every
    level from 0 to the query's highest judged one T (gain = level unless given) and the given
    levels above. Kept sparse: the judged levels up to T (``levels[j]``: its documents judged
    ``level_values[j]``), the given levels, and of the other levels between 0 and T (none
    judged, each of gain = its level) the lowest and the highest, which bound their gains: the
    table's judged counts, highest gain and range of gains are trec_eval's."""
    upto = 0
    for j in range(levels.size):
        if levels[j] > 0:
            upto = j + 1
    top = level_values[upto - 1] if upto > 0 else -1
    size = upto + custom_level.size + 2
    gains = np.empty(size)
    counts = np.zeros(size, dtype=np.int64)
    n = 0
    for j in range(upto):
        g = float(level_values[j])
        for c in range(custom_level.size):
            if custom_level[c] == level_values[j]:
                g = custom_gain[c]
                break  # the first, as _gain_of reads it
        gains[n] = g
        counts[n] = levels[j]
        n += 1
    judged = level_values[:upto]
    for c in range(custom_level.size):
        if not _is_named(custom_level[c], judged, custom_level[:0]):  # not in the loop above
            gains[n] = custom_gain[c]
            n += 1
    low = 1
    while low < top and _is_named(low, judged, custom_level):
        low += 1
    high = top - 1
    while high > low and _is_named(high, judged, custom_level):
        high -= 1
    for unnamed in (low, high):
        if 0 < unnamed < top:
            gains[n] = float(unnamed)
            n += 1
    return gains[:n], counts[:n]


@njit(cache=True)
def _gain_of(r, custom_level, custom_gain):
    """trec_eval's ``get_gain``: the first gain given for level ``r`` (a level below 0 too:
    -1 not in the qrels, -2 judged negative), else ``r`` itself when it is a judged level
    (>= 0), else 0."""
    for c in range(custom_level.size):
        if custom_level[c] == r:
            return custom_gain[c]
    return float(r) if r >= 0 else 0.0


@njit(cache=True)
def _sampled(total, points, dcg, idcg):
    """Rndcg's running sum and count of ndcg values with ``dcg / idcg`` added (when
    ``idcg > 0``)."""
    if idcg > 0.0:
        return total + dcg / idcg, points + 1
    return total, points


@njit(cache=True, error_model="numpy")  # a gain given below 0 may divide by 0: C's inf, NaN
def gain_scores(off, rel, level, num_rel, rel_levels, level_values, custom_level, custom_gain):
    """Per query: ndcg, dcg, ideal dcg, ndcg_rel, Rndcg and G with graded gains (a judged level's
    gain is the level unless ``custom_level``/``custom_gain`` say otherwise; unjudged: 0)."""
    nq = off.size - 1
    out = np.zeros((nq, 6))
    for q in range(nq):
        start = off[q]
        n = off[q + 1] - start
        gains, counts = _gain_table(rel_levels[q], level_values, custom_level, custom_gain)
        order = np.argsort(-gains, kind="mergesort")
        top = gains[order[0]] if gains.size > 0 else 0.0
        npos = 0
        for j in order:
            if gains[j] > 0.0:
                npos += counts[j]
        ideal = np.zeros(npos + 1)
        p = 0
        for j in order:
            if gains[j] > 0.0:
                for _ in range(counts[j]):
                    ideal[p] = gains[j]
                    p += 1
        # ndcg / dcg / ideal dcg
        dcg = 0.0
        for i in range(n):
            g = _gain_of(rel[start + i], custom_level, custom_gain)
            if g != 0.0:
                dcg += g / math.log2(i + 2.0)
        idcg = 0.0
        for i in range(npos):
            idcg += ideal[i] / math.log2(i + 2.0)
        out[q, 0] = dcg / idcg if idcg > 0.0 else 0.0
        out[q, 1] = dcg
        out[q, 2] = idcg
        # ndcg_rel: ndcg at each retrieved document of positive gain, the rest at the end
        run_dcg = 0.0
        run_idcg = 0.0
        total = 0.0
        pos_ret = 0
        for i in range(n):
            g = _gain_of(rel[start + i], custom_level, custom_gain)
            if g != 0.0:
                run_dcg += g / math.log2(i + 2.0)
            if i < npos:
                run_idcg += ideal[i] / math.log2(i + 2.0)
            if g > 0.0:
                total += run_dcg / run_idcg
                pos_ret += 1
        if npos > 0:
            total += (npos - pos_ret) * run_dcg / idcg
            out[q, 3] = total / npos if total > 0.0 else 0.0
        # Rndcg: ndcg where the ideal gain changes, and at the end of the list
        if num_rel[q] > 0:
            old = top
            current = top
            run_dcg = 0.0
            run_idcg = 0.0
            total = 0.0
            points = 0
            i = 0
            while i < n and current > 0.0:
                g = _gain_of(rel[start + i], custom_level, custom_gain)
                current = ideal[i] if i < npos else 0.0
                if old != current:
                    total, points = _sampled(total, points, run_dcg, run_idcg)
                    old = current
                if g != 0.0:
                    run_dcg += g / math.log2(i + 2.0)
                if current > 0.0:
                    run_idcg += current / math.log2(i + 2.0)
                i += 1
            if i < n:
                while i < n:
                    g = _gain_of(rel[start + i], custom_level, custom_gain)
                    if g != 0.0:
                        run_dcg += g / math.log2(i + 2.0)
                    i += 1
                total, points = _sampled(total, points, run_dcg, run_idcg)
            while current > 0.0:
                current = ideal[i] if i < npos else 0.0
                if old != current:
                    total, points = _sampled(total, points, run_dcg, run_idcg)
                    old = current
                if current > 0.0:
                    run_idcg += current / math.log2(i + 2.0)
                i += 1
            out[q, 4] = total / points if points > 0 else C_NAN  # trec_eval's 0 / 0
        # G: gain discounted by how far the list lags the ideal one
        sum_results = 0.0
        sum_cost = 0.0
        value = 0.0
        sum_ideal = 0.0
        for i in range(npos):
            sum_ideal += ideal[i]
        for i in range(n):
            g = _gain_of(rel[start + i], custom_level, custom_gain)
            sum_results += g
            current = ideal[i] if i < npos else 0.0
            sum_cost += current if current >= 1.0 else 1.0
            if g != 0.0:
                value += g / math.log2(2.0 + sum_cost - sum_results)
        out[q, 5] = value / sum_ideal if sum_ideal > 0.0 else 0.0
    return out


@njit(cache=True)
def rbp_scores(off, rel, rel_levels, level_values, custom_level, custom_gain, persistence):
    """Per query: rank-biased precision (gains rescaled to [0, 1] when outside it) and its
    residual (the most unjudged documents could add; 0 when every document is judged)."""
    off, rel, rel_levels, level_values, custom_level, custom_gain = borrowed(
        off, rel, rel_levels, level_values, custom_level, custom_gain
    )  # a document's calls count no reference (:mod:`mobeval.kernels.borrow`)
    nq = off.size - 1
    out = np.zeros((nq, 2))
    for q in range(nq):
        gains, _counts = _gain_table(rel_levels[q], level_values, custom_level, custom_gain)
        lo = np.inf
        hi = -np.inf
        for g in gains:
            lo = min(lo, g)
            hi = max(hi, g)
        rescale = gains.size > 0 and (lo < 0.0 or hi > 1.0)
        total = 0.0
        weight = 1.0
        resid = 0.0
        unj = 0
        for i in range(off[q], off[q + 1]):
            r = rel[i]
            g = _gain_of(r, custom_level, custom_gain)
            if rescale and (r >= 0 or (custom_level == r).any()):  # a level of the table
                g = (g - lo) / (hi - lo)
            total += g * weight
            if r < 0:
                unj += 1
                resid += weight
            weight *= persistence
        out[q, 0] = (1.0 - persistence) * total
        if unj > 0:
            out[q, 1] = weight + (1.0 - persistence) * resid
    return out


@njit(cache=True)
def ndcg_at(off, rel, rel_levels, level_values, cutoffs):
    """Per query and cutoff k: dcg of the top k (gain = judged level) over the ideal dcg of the
    top k (the dcg when that is 0), as trec_eval's ``te_calc_ndcg_cut`` takes the cutoffs in
    their order: each when the walk down the list (then down the ideal list) reaches rank k,
    the ones not reached (beyond the list, or passed by: out of order) at its end."""
    nq = off.size - 1
    nc = cutoffs.size
    out = np.zeros((nq, nc))
    for q in range(nq):
        ranked = rel[off[q] : off[q + 1]]
        c = 0
        dcg = 0.0
        for i in range(ranked.size):
            if cutoffs[c] == i:
                out[q, c] = dcg
                c += 1
                if c == nc:
                    break
            if ranked[i] > 0:
                dcg += ranked[i] / math.log2(i + 2.0)
        while c < nc:
            out[q, c] = dcg
            c += 1
        c = 0
        ideal = 0.0
        i = 0
        for lv in range(rel_levels.shape[1] - 1, 0, -1):
            if c == nc:
                break
            for _ in range(rel_levels[q, lv]):
                if cutoffs[c] == i:
                    if ideal > 0.0:
                        out[q, c] /= ideal
                    c += 1
                if c == nc:
                    break
                ideal += level_values[lv] / math.log2(i + 2.0)
                i += 1
        while c < nc:
            if ideal > 0.0:
                out[q, c] /= ideal
            c += 1
    return out


@njit(cache=True)
def relstrings(off, rel, length):
    """Per query, the first ``length`` judgments as characters (level digit, '>' above 9, '-'
    not in the qrels, '.' judged negative), as a byte matrix padded with 0."""
    nq = off.size - 1
    out = np.zeros((nq, max(length, 0)), dtype=np.uint8)
    for q in range(nq):
        start = off[q]
        n = min(off[q + 1] - start, length)
        for i in range(n):
            r = rel[start + i]
            if r > 9:
                out[q, i] = 62  # '>'
            elif r >= 0:
                out[q, i] = 48 + r
            elif r == NONPOOL:
                out[q, i] = 45  # '-'
            elif r == UNJUDGED:
                out[q, i] = 46  # '.'
            else:
                out[q, i] = 60  # '<'
    return out
