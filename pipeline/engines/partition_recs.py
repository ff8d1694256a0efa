"""The recommendation family's fold, scorer and partition job
(:mod:`mobeval.engines.partition`): imported by the runs that score recommendation lists, so
that no other family loads its task or kernels.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
import pyarrow as pa

from mobeval.tasks.recs import RecsPlan, RecsScorer, RecsState


@dataclass
class RecsFold:
    """The fold of a recommendation scoring: the summary state (None before any user) and the
    number of users scored; merged exactly (:meth:`RecsState.merge`)."""

    state: RecsState | None = None
    users: int = 0

    def merge(self, other: RecsFold) -> None:
        if other.state is not None:
            if self.state is None:
                self.state = other.state
            else:
                self.state.merge(other.state)
        self.users += other.users


class RecsPartitionScorer(RecsScorer):
    """:class:`RecsScorer` whose state and user count read and write as one ``accumulator`` (a
    :class:`RecsFold`), as the engine folds partitions; users on one side only are checked by
    :meth:`summary`, on the driver, once every partition is in (the local engine's message)."""

    @property
    def accumulator(self) -> RecsFold:
        return RecsFold(self.state, self.users)

    @accumulator.setter
    def accumulator(self, fold: RecsFold) -> None:
        self.state, self.users = fold.state, fold.users


@dataclass(frozen=True)
class RecsPartitionJob:
    """Everything a worker needs to score recommendation partitions (picklable, no Spark).

    ``options``: the :class:`RecsScorer` keyword arguments; ``columns``, ``recs_schema``,
    ``ratings_schema``: what :meth:`RecsPlan.build` takes (the plan is rebuilt on the worker).
    A user's list rows arrive in input order (file, then position), as the local engine reads them.
    """

    options: dict
    columns: tuple[str, ...]
    recs_schema: dict
    ratings_schema: dict
    output: pa.Schema
    chunk_rows: int
    threads: int

    @property
    def key(self) -> list[str]:
        return [self.options["key"]]

    def plan(self) -> RecsPlan:
        return RecsPlan.build(
            self.options["key"], self.columns, self.recs_schema, self.ratings_schema
        )

    def scorer(self) -> RecsPartitionScorer:
        scorer = RecsPartitionScorer(**self.options)
        scorer.plan = self.plan()
        return scorer

    def score(self, scorer: RecsPartitionScorer, ratings: pl.DataFrame, recs: pl.DataFrame):
        plan = scorer.plan
        return scorer.score(recs.select(plan.pred_select), ratings.select(plan.truth_select))
