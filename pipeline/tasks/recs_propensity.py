"""PSP@k and PSR@k of ``mobeval recs``, streamed: a fold over chunks of whole users.

The metrics (:mod:`mobeval.tasks.propensity`; Jain, Prabhu & Varma, KDD 2016, in pyxclib's
normalised form) are ratios of means over users of four per-user sums, at each cutoff ``k``:
with ``w_l = 1 / p_l``, ``L_u`` the first ``k`` items of ``u``'s list, ``B_u`` the ``k``
relevant items of largest ``w_l`` and ``n`` the users,

    PSP@k = (S_1 / n) / (S_3 / n),   PSR@k = (S_2 / n) / (S_4 / n),
    S_1 = sum_u (1/k) sum_{l in L_u} y_ul w_l,     S_3 = sum_u (1/k) sum_{l in B_u} w_l,
    S_2 = sum_u (1/|y_u|) sum_{l in L_u} y_ul w_l, S_4 = sum_u (1/|y_u|) sum_{l in B_u} w_l.

Each chunk adds its users' values into exact sums (:class:`~mobeval.kernels.exact_sum.
ExactColumnSums`) and its users to ``n``, so any chunking, partitioning or order gives the same
bits: each ``S`` is the exact sum rounded once. pyxclib sums in its matrix's row order, one
rounding per user, so the two agree to a few units in the last place, not bit for bit
(docs/diversity.md). A user counts when it has a list or a rating; ``y_ul``: the ranking
convention's relevance of the user's rating of ``l`` (``relevant_threshold``). Memory: the
chunk and the weights (one row per item).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from mobeval.kernels.exact_sum import ExactColumnSums
from mobeval.metrics.recs_population import PopulationMetric
from mobeval.tasks.propensity import PropensityWeights, relevant_weights, user_sums
from mobeval.tasks.recs_beyond import relevant_pairs
from mobeval.tasks.recs_inputs import ids_of_one_type

#: Per cutoff, the four sums of :func:`~mobeval.kernels.diversity.propensity_scored`.
SUMS = ("top/k", "top/relevant", "best/k", "best/relevant")
#: The two metric families: the sums of their numerator and of their denominator.
FAMILIES = {"psp": ("top/k", "best/k"), "psr": ("top/relevant", "best/relevant")}


@dataclass
class PropensitySums:
    """The exact sums ``S_1 .. S_4`` of each cutoff of ``metrics`` (``psp`` / ``psr``) and the
    users counted, folded chunk by chunk; :meth:`merge` is exact."""

    metrics: tuple[PopulationMetric, ...]
    cutoffs: list[int] = field(init=False)
    sums: ExactColumnSums = field(init=False)
    users: int = 0

    def __post_init__(self) -> None:
        self.cutoffs = sorted({m.k for m in self.metrics})
        self.sums = ExactColumnSums([f"{k}:{s}" for k in self.cutoffs for s in SUMS])

    def add(
        self,
        lists: pl.DataFrame,
        ratings: pl.DataFrame,
        weights: PropensityWeights,
        threshold: float | str | None,
    ) -> None:
        """Fold a chunk of whole users: ``lists`` (``user_id``, ``item_id``, each list in rank
        order) and ``ratings`` (``user_id``, ``item_id``, ``rating``)."""
        users = pl.concat([lists["user_id"], ratings["user_id"]]).unique(maintain_order=True)
        if users.len() == 0:
            return
        pairs = relevant_pairs(ratings, threshold).select("user_id", "item_id")
        pairs, table = ids_of_one_type(pairs, weights.weights)
        best = relevant_weights(pairs, table, weights.unseen, weights.path)
        lists, best = ids_of_one_type(lists.select("user_id", "item_id"), best)
        self.sums.add(user_sums(lists, best, users, self.cutoffs))
        self.users += users.len()

    def merge(self, other: PropensitySums) -> None:
        self.sums.merge(other.sums)
        self.users += other.users

    def row(self, metric: PopulationMetric) -> tuple[str, float, int]:
        """``(name, value, n)`` of ``metric``: the ratio of the means (NaN without a user, or
        where no user has a relevant item)."""
        total = dict(zip(self.sums.names, self.sums.sums(), strict=True))
        n = self.users
        top, ideal = (total[f"{metric.k}:{name}"] for name in FAMILIES[metric.family])
        if n == 0 or ideal == 0:
            return metric.name, float("nan"), n
        return metric.name, (top / n) / (ideal / n), n
