"""Population values of item count vectors (NumPy on flat integer arrays, no Python per item).

``counts`` are how many times each item was recommended (exact integers, summed over chunks in
any order), so every value here depends on the multiset of counts only: the same bits for any
chunking, thread count or row order. See :mod:`mobeval.metrics.recs_population` for the
metrics and their references.
"""

from __future__ import annotations

import numpy as np


def gini(counts: np.ndarray, n_items: int) -> float:
    """Gini index ``sum_j (2 j - N - 1) x_j / (N T)`` of ``N = n_items`` values, ``counts``
    sorted ascending being the largest ``len(counts)`` of them and the others 0 (so ``j`` runs
    over ``N - n + 1 .. N``); ``T = sum x``. The numerator and ``N T`` are exact integers, the
    value one division. NaN when ``T = 0``."""
    x = np.sort(np.asarray(counts, dtype=np.int64))
    total = int(x.sum())
    if total == 0 or n_items == 0:
        return float("nan")
    j = np.arange(n_items - len(x) + 1, n_items + 1, dtype=np.int64)
    numerator = int(((2 * j - n_items - 1) * x).sum(dtype=np.int64))
    return numerator / (n_items * total)


def entropy(counts: np.ndarray) -> float:
    """Shannon's entropy ``-sum_i p_i ln p_i`` of the shares ``p_i = c_i / T`` of the nonzero
    ``counts``, summed in ascending order of the counts (so it depends on the multiset only).
    NaN when ``T = 0``."""
    x = np.sort(np.asarray(counts, dtype=np.int64))
    x = x[x > 0]
    total = int(x.sum())
    if total == 0:
        return float("nan")
    p = x / total
    return float(-(p * np.log(p)).sum())
