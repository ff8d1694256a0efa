"""The trajectory family's partition job (:mod:`mobeval.engines.partition`): imported by
the runs that score trajectories, so that no other family loads its task or kernels.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
import pyarrow as pa

from mobeval.tasks.trajectory import TrajectoryScorer
from mobeval.tasks.trajectory_inputs import TrajectoryPlan


@dataclass(frozen=True)
class TrajectoryPartitionJob:
    """Everything a worker needs to score trajectory partitions (picklable, no Spark);
    ``inputs``: the plan whose expressions make each side's rows the scorer's columns (unpaired:
    ``d`` 0 where an input has none, :func:`mobeval.tasks.trajectory_inputs.population_plan`),
    as the local engine applies them."""

    options: dict
    output: pa.Schema
    chunk_rows: int
    threads: int
    inputs: TrajectoryPlan = TrajectoryPlan()

    @property
    def key(self) -> list[str]:
        return ["uid"]

    def scorer(self) -> TrajectoryScorer:
        return TrajectoryScorer(**self.options)

    def score(self, scorer: TrajectoryScorer, reference: pl.DataFrame, generated: pl.DataFrame):
        # Sorted by (uid, d, t) as a sorted file streams locally, so that the first out-of-grid
        # row of a side is the smallest (uid, d, t), whatever the partitioning.
        order = ["uid", "d", "t"]
        generated = generated.select(self.inputs.pred_select).sort(order)
        return scorer.score(generated, reference.select(self.inputs.truth_select).sort(order))
