"""The trajectory family's partition job (:mod:`mobeval.engines.partition`): imported by
the runs that score trajectories, so that no other family loads its task or kernels.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
import pyarrow as pa

from mobeval.tasks.trajectory import TrajectoryScorer


@dataclass(frozen=True)
class TrajectoryPartitionJob:
    """Everything a worker needs to score trajectory partitions (picklable, no Spark)."""

    options: dict
    output: pa.Schema
    chunk_rows: int
    threads: int

    @property
    def key(self) -> list[str]:
        return ["uid"]

    def scorer(self) -> TrajectoryScorer:
        return TrajectoryScorer(**self.options)

    def score(self, scorer: TrajectoryScorer, reference: pl.DataFrame, generated: pl.DataFrame):
        # Sorted by (uid, d, t) as a sorted file streams locally, so that the first out-of-grid
        # row of a side is the smallest (uid, d, t), whatever the partitioning.
        order = ["uid", "d", "t"]
        return scorer.score(generated.sort(order), reference.sort(order))
