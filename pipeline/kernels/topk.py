"""Top-K metrics of a single true item per sample, from its rank bounds, every cutoff in one pass.

With one relevant item at rank r (r = +inf when it is missing from the list):

* acc@k (hit rate, LibCity's Recall@K)  = [r <= k]
* precision@k                           = [r <= k] / k
* recall@k                              = [r <= k]          (|relevant| = 1)
* f1@k (per sample)                     = 2 P R / (P + R) = 2 / (k + 1) if r <= k else 0
* mrr@k, map@k                          = 1 / r if r <= k else 0   (AP with one relevant item is RR)
* mrr, map (no cutoff)                  = 1 / r
* ndcg@k                                = 1 / log2(r + 1) if r <= k else 0  (IDCG = 1)
* ndcg (no cutoff)                      = 1 / log2(r + 1)

When a tie policy yields a range of equally likely ranks lo..hi (every order of the tied items
equally likely: the target is equally likely at each position of its tie group), each value is its
expectation, the mean over that range: acc@k = #{r <= k} / n, mrr = mean of 1 / r, ndcg = mean of
1 / log2(r + 1) (the next-location and the logits tasks both score ties through this kernel).
References: LibCity ``TrajLocPredEvaluator`` / ``eval_funcs``; trec_eval ``P``,
``recip_rank``, ``map_cut``, ``ndcg_cut``, ``success``; Järvelin & Kekäläinen, TOIS 2002 (nDCG).
"""

from __future__ import annotations

import math

import numpy as np

from mobeval.kernels.blocks import readonly, run_blocks
from mobeval.kernels.codes import ACC, CODES, F1, MAP, MRR, NDCG, NO_CUTOFF, PRECISION, RECALL
from mobeval.kernels.jit import njit

UNITS_PER_BLOCK = 16384  # fewer units than this are scored in one block (no thread)


@njit(cache=True)
def _value_at_rank(metric, k, rank):
    if k != NO_CUTOFF and rank > k:
        return 0.0
    if metric in (ACC, RECALL):
        return 1.0
    if metric == PRECISION:
        return 1.0 / k
    if metric == F1:
        return 2.0 / (k + 1.0)
    if metric in (MRR, MAP):
        return 1.0 / rank
    if metric == NDCG:
        return 1.0 / math.log2(rank + 1.0)
    return math.nan  # never reached: single_target_metrics refuses unknown codes


def single_target_metrics(rank_lo, rank_hi, metrics, cutoffs):
    """values[u, j] = metric ``metrics[j]`` (a code of :data:`CODES`) at cutoff ``cutoffs[j]``
    (NO_CUTOFF: none, else >= 1) of unit u. ValueError on an unknown code or a negative cutoff:
    a bug of the caller, refused before any value is computed."""
    metrics = np.asarray(metrics, dtype=np.int64)
    cutoffs = np.asarray(cutoffs, dtype=np.int64)
    if metrics.shape != cutoffs.shape or metrics.ndim != 1:
        raise ValueError(f"metrics {metrics.shape} and cutoffs {cutoffs.shape}: one per column")
    unknown = sorted(set(metrics.tolist()) - CODES)
    if unknown:
        raise ValueError(f"unknown top-K metric code(s) {unknown}; known: {sorted(CODES)}")
    if (cutoffs < 0).any():
        raise ValueError(f"a cutoff is negative: {cutoffs.tolist()}")
    rank_lo, rank_hi = readonly(rank_lo, np.float64), readonly(rank_hi, np.float64)
    metrics, cutoffs = readonly(metrics, np.int64), readonly(cutoffs, np.int64)
    n_units = rank_lo.shape[0]
    values = np.zeros((n_units, metrics.shape[0]))
    args = (rank_lo, rank_hi, metrics, cutoffs, values)
    run_blocks(_single_target_units, n_units, *args, grain=UNITS_PER_BLOCK)
    return values


@njit(nogil=True, cache=True)
def _single_target_units(rank_lo, rank_hi, metrics, cutoffs, values, first, last):
    """Rows ``first`` to ``last - 1`` of the values, unit u's ranks ``rank_lo[u]`` to
    ``rank_hi[u]`` each equally likely (:func:`single_target_metrics` runs it on blocks of units
    on threads: :func:`mobeval.kernels.blocks.run_blocks`)."""
    for u in range(first, last):
        lo = rank_lo[u]
        hi = rank_hi[u]
        if lo == np.inf:
            continue
        n_ranks = hi - lo + 1.0
        for j in range(metrics.shape[0]):
            if n_ranks == 1.0:
                values[u, j] = _value_at_rank(metrics[j], cutoffs[j], lo)
            else:
                total = 0.0
                r = lo
                # ranks past a cutoff add 0.0, which leaves the sum's bits unchanged: stop there
                last_rank = hi if cutoffs[j] == NO_CUTOFF else min(hi, float(cutoffs[j]))
                while r <= last_rank:
                    total += _value_at_rank(metrics[j], cutoffs[j], r)
                    r += 1.0
                values[u, j] = total / n_ranks
