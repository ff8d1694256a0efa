"""A family's partition job sliced by cohorts (:mod:`mobeval.tasks.cohorts`): every engine
scores the whole result and each cohort through the family's own job, on the same chunks."""

from __future__ import annotations

from dataclasses import dataclass

from mobeval.tasks.cohorts import CohortScorer, CohortTable, scored_parts


@dataclass(frozen=True)
class CohortPartitionJob:
    """``job`` (a keyed family's partition job: ``key``, ``scorer()``, ``score(scorer, truth,
    predictions)``) with a :class:`CohortScorer` over ``cohorts``; picklable, no Spark."""

    job: object
    cohorts: CohortTable

    @property
    def key(self) -> list[str]:
        return self.job.key

    def scorer(self) -> CohortScorer:
        return CohortScorer(self.job.scorer, self.cohorts)

    def score(self, scorer: CohortScorer, truth, pred):
        """Spark's call: each part's rows through the family job's own ``score`` (which
        normalises them as its plan says)."""
        return scored_parts(scorer, lambda s, p, t: self.job.score(s, t, p), pred, truth)
