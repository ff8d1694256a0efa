"""Numba kernels of the novelty and diversity measures of TREC's Web track (``ndeval``), of
graded ERR as ``gdeval.pl`` computes it, and of propensity-scored precision and recall.

**ndeval** (TREC Web track 2009-2014, ``ndeval.c`` version 4.5; Clarke et al., SIGIR 2008 and
ICTIR 2009; Agrawal et al., WSDM 2009; Chapelle et al., CIKM 2009). A topic has ``S`` subtopics
that some judged document is relevant to (binary judgments; a subtopic no document is relevant
to is ignored). Walking a ranked list, the document at rank ``i`` (from 0) gains

    g_i = sum over its relevant subtopics j, in subtopic order, of (1 - alpha)^(c_ij)

where ``c_ij`` counts the documents above it relevant to ``j``. With ``D(0) = 1`` and
``D(i) = log(2) / log(i + 2)`` (C's ``log``), and the "ideal ideal" gains ``S (1 - alpha)^i``:

* alpha-DCG@k = sum_{i<k} g_i D(i) / sum_{i<k} S (1 - alpha)^i D(i);
* ERR-IA@k = sum_{i<k} g_i / (i + 1) / sum_{i<k} S (1 - alpha)^i / (i + 1);
* alpha-nDCG@k, nERR-IA@k: the same over the value of the ideal list, built greedily (at each
  rank the judged document of highest gain, ties to the greatest docno) from every judged
  document; 0 where the list's own value is 0;
* NRBP = (1 - (1 - alpha) beta) / S * sum_i g_i beta^i over the whole list, nNRBP the same over
  the ideal list's (0 / 0 where no subtopic is relevant: C's ``-nan``);
* P-IA@k = sum_{i<k} |relevant subtopics of doc i| / (k S); strec@k = subtopics covered by the
  top k / S; MAP-IA = (1 / S) sum_j AP_j, AP_j over the whole list with the documents relevant
  to ``j`` as its relevant ones.

ndeval keeps the values of ranks 1 to ``depth`` (its ``DEPTH``, 20) and normalises ERR-IA and
alpha-DCG by the ideal ideal from the second rank on: its rank-1 values are the raw
``g_0 / 1`` and ``g_0`` (pyndeval, and so ir_measures' ``ERR_IA@1``, report them so). Each
sum and quotient is taken in the C code's order, so the values have its bits.

**gdeval** (``gdeval.pl`` version 1.3, TREC Web track; Chapelle et al., CIKM 2009): with gains
``R_i = (2^{g_i} - 1) / 2^4`` of the graded judgments ``g_i`` (0 for an unjudged or negatively
judged document), ERR@k = sum_{i<k} R_i / (i + 1) prod_{m<i} (1 - R_m).

**Propensity-scored precision and recall** (Jain, Prabhu & Varma, KDD 2016; the Extreme
Classification Repository's normalised form, as pyxclib's ``xc_metrics`` computes it): a label
``l`` seen ``N_l`` times among ``N`` training points has inverse propensity
``1 / p_l = 1 + C (N_l + B)^(-A)``, ``C = (log N - 1)(B + 1)^A``; PSP@k sums ``1 / p_l`` over the
relevant labels of the top k, over ``k``; PSR@k over the number of relevant labels; each is also
given at the best top k (the relevant labels of largest ``1 / p_l``), which the summary divides by.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: C's 0.0 / 0.0 on x86-64: a NaN with its sign bit set (glibc prints ``-nan``).
C_NAN = math.copysign(math.nan, -1.0)
#: gdeval's highest gain (``$MAX_JUDGMENT``): ERR's ``R = (2^g - 1) / 2^4``.
GDEVAL_MAX_JUDGMENT = 4


@njit(cache=True)
def _discount(i):
    """ndeval's ``discount(rank)``: 1 at rank 0, else log(2) / log(rank + 2)."""
    if i == 0:
        return 1.0
    return math.log(2.0) / math.log(i + 2.0)


@njit(cache=True)
def _curves(scores, n, subtopics, alpha, depth, dcg, err):
    """ndeval's ``computeDCG`` and ``computeERR`` of a list whose ranks gain ``scores[:n]``:
    the cumulated ``dcg[:depth]`` and ``err[:depth]``, each divided by the ideal ideal from
    the second rank on (left 0 when no subtopic is relevant)."""
    dcg[:] = 0.0
    err[:] = 0.0
    if subtopics == 0:
        return
    for i in range(min(depth, n)):
        dcg[i] = scores[i] * _discount(i)
        err[i] = scores[i] / (i + 1.0)
    ideal_dcg = np.empty(depth)
    ideal_err = np.empty(depth)
    gain = float(subtopics)
    for i in range(depth):
        ideal_dcg[i] = gain * _discount(i)
        ideal_err[i] = gain / (i + 1.0)
        gain *= 1.0 - alpha
    for i in range(1, depth):
        dcg[i] += dcg[i - 1]
        ideal_dcg[i] += ideal_dcg[i - 1]
        err[i] += err[i - 1]
        ideal_err[i] += ideal_err[i - 1]
    for i in range(1, depth):
        dcg[i] /= ideal_dcg[i]
        err[i] /= ideal_err[i]


@njit(cache=True)
def _nrbp(scores, n, subtopics, alpha, beta):
    """ndeval's ``computeNRBP`` of a list whose ranks gain ``scores[:n]``."""
    if subtopics == 0:
        return 0.0
    total = 0.0
    decay = 1.0
    for i in range(n):
        total += scores[i] * decay
        decay *= beta
    return total * ((1 - (1 - alpha) * beta) / subtopics)


@njit(cache=True)
def _gain_of(doc, rel_off, rel_sub, gains, alpha):
    """A judged document's gain at its rank, its subtopics' gains then worn by ``1 - alpha``."""
    score = 0.0
    for r in range(rel_off[doc], rel_off[doc + 1]):
        score += gains[rel_sub[r]]
        gains[rel_sub[r]] *= 1.0 - alpha
    return score


@njit(cache=True)
def _ideal_scores(first, last, rel_off, rel_sub, subtopics, alpha, scores):
    """ndeval's ``idealResult``: the gains, rank by rank, of the greedy ideal list of the judged
    documents ``first .. last - 1`` (in docno order: of equal gains the last, the greatest
    docno, is taken). Stops at the first rank whose best gain is 0: every rank below gains 0.
    Returns the ranks filled."""
    gains = np.ones(subtopics)
    taken = np.zeros(last - first, dtype=np.bool_)
    for rank in range(last - first):
        where = -1
        best = 0.0
        for d in range(first, last):
            if taken[d - first]:
                continue
            score = 0.0
            for r in range(rel_off[d], rel_off[d + 1]):
                score += gains[rel_sub[r]]
            if where == -1 or score >= best:
                best = score
                where = d
        if best == 0.0:
            return rank
        taken[where - first] = True
        scores[rank] = _gain_of(where, rel_off, rel_sub, gains, alpha)
    return last - first


@njit(cache=True, nogil=True, error_model="numpy")
def ndeval_topics(
    doc_off,
    rel_off,
    rel_sub,
    n_sub,
    topic_of,
    list_off,
    list_doc,
    alpha,
    beta,
    depth,
    curves,
    single,
    first_topic,
    last_topic,
):
    """ndeval's measures of listed topics ``first_topic .. last_topic - 1``.

    Listed topic ``t`` is the qrels' topic ``q = topic_of[t]`` (-1: a topic the qrels lack,
    judging nothing), which judges documents ``doc_off[q] .. doc_off[q + 1] - 1`` (global
    indices, docno order), document ``d`` relevant to subtopics
    ``rel_sub[rel_off[d]:rel_off[d + 1]]`` (the topic's subtopics numbered
    ``0 .. n_sub[q] - 1`` in subtopic order, each relevant to some document); its ranked list
    is ``list_doc[list_off[t]:list_off[t + 1]]`` (a judged document's index, -1 for one the
    qrels lack). Writes ``curves[t, c, i]`` for rank ``i + 1``
    (``c``: 0 ERR-IA, 1 nERR-IA, 2 alpha-DCG, 3 alpha-nDCG, 4 P-IA, 5 strec) and ``single[t]``
    (NRBP, nNRBP, MAP-IA)."""
    scores = np.zeros(0)
    for t in range(first_topic, last_topic):
        q = topic_of[t]
        subtopics = n_sub[q] if q >= 0 else 0
        first = doc_off[q] if q >= 0 else 0
        last = doc_off[q + 1] if q >= 0 else 0
        n = list_off[t + 1] - list_off[t]
        if scores.size < max(n, last - first):
            scores = np.zeros(max(n, last - first))
        ideal_n = _ideal_scores(first, last, rel_off, rel_sub, subtopics, alpha, scores)
        ideal_dcg = np.zeros(depth)
        ideal_err = np.zeros(depth)
        _curves(scores, ideal_n, subtopics, alpha, depth, ideal_dcg, ideal_err)
        ideal_nrbp = _nrbp(scores, ideal_n, subtopics, alpha, beta)
        gains = np.ones(subtopics)
        seen = np.zeros(subtopics, dtype=np.bool_)
        hits = np.zeros(subtopics, dtype=np.int64)
        sums = np.zeros(subtopics)
        covered = 0
        count = 0
        for i in range(n):
            doc = list_doc[list_off[t] + i]
            scores[i] = 0.0 if doc < 0 else _gain_of(doc, rel_off, rel_sub, gains, alpha)
            if doc >= 0 and subtopics > 0:
                for r in range(rel_off[doc], rel_off[doc + 1]):
                    j = rel_sub[r]
                    hits[j] += 1
                    sums[j] += hits[j] / (i + 1.0)
                    if i < depth:
                        count += 1
                        if not seen[j]:
                            seen[j] = True
                            covered += 1
            if i < depth and subtopics > 0:
                curves[t, 4, i] = count / ((i + 1) * subtopics)
                curves[t, 5, i] = covered / subtopics
        for i in range(n, depth):
            if subtopics > 0:
                curves[t, 4, i] = count / ((i + 1) * subtopics)
                curves[t, 5, i] = covered / subtopics
        _curves(scores, n, subtopics, alpha, depth, curves[t, 2], curves[t, 0])
        for i in range(depth):
            if curves[t, 2, i] != 0.0:
                curves[t, 3, i] = curves[t, 2, i] / ideal_dcg[i]
                curves[t, 1, i] = curves[t, 0, i] / ideal_err[i]
        nrbp = _nrbp(scores, n, subtopics, alpha, beta)
        single[t, 0] = nrbp
        single[t, 1] = C_NAN if nrbp == 0.0 and ideal_nrbp == 0.0 else nrbp / ideal_nrbp
        map_ia = 0.0
        if subtopics > 0:
            relevant = np.zeros(subtopics, dtype=np.int64)
            for d in range(first, last):
                for r in range(rel_off[d], rel_off[d + 1]):
                    relevant[rel_sub[r]] += 1
            for j in range(subtopics):
                map_ia += sums[j] / relevant[j]
            map_ia /= subtopics
        single[t, 2] = map_ia


@njit(cache=True)
def gdeval_err(off, rel, cutoffs):
    """Per query and cutoff k: gdeval's ERR@k of the ranked judgments ``rel[off[q]:off[q+1]]``
    (a level 1 to 4 gains ``(2^g - 1) / 16``; 0, unjudged, or negative gains nothing), summed
    as ``gdeval.pl``'s ``err`` sums: ``score += r * decay / (i + 1)``, ``decay *= 1 - r``."""
    nq = off.size - 1
    out = np.zeros((nq, cutoffs.size))
    for q in range(nq):
        n = off[q + 1] - off[q]
        for c in range(cutoffs.size):
            score = 0.0
            decay = 1.0
            for i in range(min(n, cutoffs[c])):
                g = rel[off[q] + i]
                r = (2.0**g - 1.0) / 2.0**GDEVAL_MAX_JUDGMENT if g > 0 else 0.0
                score += r * decay / (i + 1)
                decay *= 1.0 - r
            out[q, c] = score
    return out


@njit(cache=True)
def propensity_scored(off, weight, n_relevant, best_off, best_weight, k):
    """Per list: PSP@k's and PSR@k's sums, at the list and at its best top k.

    ``weight[off[u]:off[u+1]]``: the inverse propensity of each item of list ``u`` in rank order,
    0 for an item not relevant; ``best_weight[best_off[u]:best_off[u+1]]``: the inverse
    propensities of the user's relevant items, largest first; ``n_relevant[u]`` their count.
    Columns: sum of the top k's weights / k, the same / max(n_relevant, 1), and both for the best
    top k (pyxclib's ``_precision`` and ``_recall`` of one instance)."""
    nu = off.size - 1
    out = np.zeros((nu, 4))
    for u in range(nu):
        top = 0.0
        for i in range(off[u], min(off[u + 1], off[u] + k)):
            top += weight[i]
        best = 0.0
        for i in range(best_off[u], min(best_off[u + 1], best_off[u] + k)):
            best += best_weight[i]
        per_rank = 1.0 / k  # pyxclib multiplies by reciprocals
        per_relevant = 1.0 / max(n_relevant[u], 1)
        out[u, 0] = top * per_rank
        out[u, 1] = top * per_relevant
        out[u, 2] = best * per_rank
        out[u, 3] = best * per_relevant
    return out
