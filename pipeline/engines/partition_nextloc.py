"""The next-location family's partition job (:mod:`mobeval.engines.partition`): imported
by the runs that score next locations, so that no other family loads its task or kernels.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
import pyarrow as pa

from mobeval.engines.local import reject_duplicate_truth
from mobeval.tasks.nextloc import NextlocScorer
from mobeval.tasks.nextloc_inputs import NextlocSpec, plan_inputs


@dataclass(frozen=True)
class NextlocPartitionJob:
    """Everything a worker needs to score next-location partitions (picklable, no Spark)."""

    spec: NextlocSpec
    truth_schema: dict
    pred_schema: dict
    truth_label: str
    pred_label: str
    output: pa.Schema
    chunk_rows: int
    threads: int

    @property
    def key(self) -> list[str]:
        return list(self.spec.key)

    def scorer(self) -> NextlocScorer:
        plan = plan_inputs(
            self.truth_schema, self.truth_label, self.pred_schema, self.pred_label, self.spec
        )
        return NextlocScorer(self.spec, plan, self.pred_label, self.truth_label)

    def score(self, scorer: NextlocScorer, truth: pl.DataFrame, pred: pl.DataFrame):
        truth = truth.select(scorer.plan.truth_select)
        reject_duplicate_truth(truth, self.key, self.truth_label)
        return scorer.score(pred.select(scorer.plan.pred_select), truth)
