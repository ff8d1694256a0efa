"""The ROC AUC of scored pairs from integer counts per distinct score: exact in any order.

A score ``s`` (float64, not NaN) becomes an int64 key whose signed order is the order of the
scores (:func:`score_keys`: its bits, the negative ones' 63 low bits flipped; ``-0.0`` is
``0.0``, as ``==`` has them). The pairs collapse to one row per distinct key with its number of
positives and negatives (:func:`mobeval.kernels.tallies.collapse` of rows ``key, positives,
negatives``), and two such tables (or a table and a chunk's pairs, one count each) collapse
together the same way, so the counts of a whole input do not depend on how it was cut. With
those rows ascending, ``N_below(s)`` the negatives of lower scores, Mann & Whitney's count of
the (positive, negative) pairs in the right order, a tie counting one half, is
``U = sum_s pos_s (N_below(s) + neg_s / 2)``, and ``AUC = U / (P N)``: the area under the ROC
curve with ties drawn as diagonal steps (Fawcett, "An introduction to ROC analysis", Pattern
Recognition Letters 2006, section 6; scikit-learn's ``roc_auc_score``, RecBole's ``AUC``).
:func:`twice_u` returns ``2 U``, an integer, over blocks of rows in score order (``N_below``
carried from one block to the next).

Each function is a Python wrapper that passes its inputs read-only (one compiled specialisation
whatever the caller's arrays) and allocates the outputs with NumPy.
"""

from __future__ import annotations

import numpy as np

from mobeval.kernels.blocks import readonly
from mobeval.kernels.jit import njit

LOW_BITS = np.int64(0x7FFFFFFFFFFFFFFF)


def score_keys(scores) -> np.ndarray:
    """Per score (float64, not NaN): an int64 key in the scores' order, equal keys for equal
    scores (``-0.0`` and ``0.0`` share one)."""
    bits = (readonly(scores, np.float64) + 0.0).view(np.int64)  # -0.0 + 0.0 is 0.0
    keys = np.empty(len(bits), dtype=np.int64)
    _score_keys(readonly(bits, np.int64), keys)
    return keys


@njit(cache=True)
def _score_keys(bits, keys):
    """A negative float's bits order it backwards: its 63 low bits flipped, they order it."""
    for i in range(len(bits)):
        keys[i] = bits[i] ^ LOW_BITS if bits[i] < 0 else bits[i]


def twice_u(positives, negatives, below: int = 0) -> tuple[int, int]:
    """``2 U = sum_s pos_s (2 N_below(s) + neg_s)`` over rows in ascending score order (see the
    module), ``below`` the negatives of every lower score before them (rows cut into blocks in
    score order: the previous block's); ``(2 U, below + sum_s neg_s)``. The caller keeps
    ``2 P N`` below ``2**63`` (its largest value)."""
    total, below = _twice_u(
        readonly(positives, np.int64), readonly(negatives, np.int64), np.int64(below)
    )
    return int(total), int(below)


@njit(cache=True)
def _twice_u(positives, negatives, below):
    total = np.int64(0)
    for s in range(len(positives)):
        total += positives[s] * (2 * below + negatives[s])
        below += negatives[s]
    return total, below
