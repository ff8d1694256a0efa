"""The partition scorer a distributed engine runs on its workers (Spark's ``mapInArrow``).

A partition is a stream of Arrow record batches holding the rows of whole units (every row of a
unit is in the same partition: the engine hash-partitions by the unit key) sorted by the unit key.
Each row is a truth row or a prediction row of one of the results scored together (the models
of a job that share a truth: :class:`PartitionJobs`)::

    <key columns, normalised>  __side (0 truth, 1 + i result i)  __both:<c>...  __truth:<c>...
    __pred:<c>...

holding the source columns the task's input plan reads, as read: a column both sides read with
one type once (``__both:location``), a side's own column under its prefix (null on the other
side's rows), a key column that is the source column as it is not again (a flat table, cheaper
to shuffle and to hand to Python than a struct per side). The partition is cut into chunks of
whole units (:class:`mobeval.io.chunking.SortedUnitChunks`, so memory is one chunk, not one
partition), each side goes through the plan's own normalising expressions and then the same
scorer class the local engine uses (:class:`mobeval.tasks.nextloc.NextlocScorer`,
:class:`mobeval.tasks.trajectory.TrajectoryScorer`, :class:`mobeval.tasks.recs.RecsScorer`):
kernels are shared, not copied.

Output batches carry one section per row: a ``per_unit`` (and ``per_day``) struct, the sections
the output schema holds (none in a print-only run: the per-unit rows are let go). At the end of
the partition its fold goes back to the driver through a Spark accumulator (``folds``, a
:class:`FoldList`): the scorer's accumulator (the exact fold of the per-unit rows of the
partition), the rows read per side, and the first input error if one was raised, tagged with the
partition's number (:func:`fold_state`): the same write that stores the per-unit rows scores
them, and a partition computed twice (a retried task, a cached block computed again) is counted
once. The driver merges the accumulators (exact sums: any partitioning gives the same bits) and
raises the error, so a bad input fails with the local engine's message and no task retries.

This module imports no Spark at module level: workers unpickle the partition job by reference
(``functools.partial`` of :func:`score_partition`), so Numba kernels come from the installed
package and load from its on-disk cache.
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Iterator
from dataclasses import dataclass

import numba
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from mobeval.engines.local import reject_duplicate_truth
from mobeval.errors import ConfigError, InputError
from mobeval.io.chunking import SortedUnitChunks, key_at
from mobeval.io.logits import (
    TARGETS_COLUMN,
    input_name,
    is_parquet,
    is_targets_column,
    iter_logits,
    logits_chunks,
    read_array,
)
from mobeval.tasks.logits import AGGREGATION, LogitsAccumulator
from mobeval.tasks.nextloc import NextlocScorer, NextlocSpec, plan_inputs
from mobeval.tasks.recs import RecsPlan, RecsScorer, RecsState
from mobeval.tasks.trajectory import TrajectoryScorer


class SparkNotInstalled(ConfigError, ImportError):
    """PySpark is missing (raised by importing :mod:`mobeval.engines.spark`); the CLI prints the
    message and exits 2."""


SIDE = "__side"
TRUTH = "__truth"
PRED = "__pred"
TRUTH_SIDE = 0
PRED_SIDE = 1
BOTH = "__both"
MODEL = "__model"


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


class LogitsFold(LogitsAccumulator):
    """:class:`LogitsAccumulator` that merges another one exactly (its sums and its per-class
    confusion counts), as the engine folds partitions of rows."""

    def merge(self, other: LogitsFold) -> None:
        if other.n_classes is None:
            return
        if self.n_classes is None:
            self.n_classes = other.n_classes
            self.n_true, self.n_pred, self.n_tp = (np.zeros_like(other.n_true) for _ in "abc")
        self.sums.merge(other.sums)
        self.n_true = self.n_true + other.n_true
        self.n_pred = self.n_pred + other.n_pred
        self.n_tp = self.n_tp + other.n_tp


@dataclass(frozen=True)
class LogitsPartitionJob:
    """Everything needed to score logits rows (picklable): the inputs (a ``.npy`` or Parquet
    path, or an array locally; targets also a column of the logits' Parquet file), the
    accumulator's options, the input columns and the rows per chunk.

    Rows pair by position, so a partition is a range of rows: :meth:`chunks` reads, from the
    file itself, the chunks starting in ``[first, stop)`` (a ``.npy`` file memory-mapped: only
    those rows; Parquet: the batches of ``chunk_rows`` rows up to ``stop``). Every partition but
    the one holding row 0 starts with the classes known (``n_classes``, the first row's), so a row
    of another width is the local engine's error wherever it is."""

    logits: object
    targets: object
    options: dict
    columns: dict
    chunk_rows: int
    percent: bool = False
    n_classes: int | None = None
    output: pa.Schema | None = None
    threads: int = 1

    def accumulator(self) -> LogitsFold:
        return LogitsFold(**self.options)

    def scorer(self) -> LogitsScorer:
        return LogitsScorer(self.accumulator(), self.percent)

    @property
    def truth_file(self) -> object:
        """What holds the targets: their own input, or the logits' when they are a column of it."""
        return self.logits if is_targets_column(self.targets) else self.targets

    def fingerprints(self, fingerprint=None) -> dict[str, list]:
        """The inputs' fingerprints (``fingerprint``: the engine's, default the local files')."""
        if fingerprint is None:
            from mobeval.io.inputs import fingerprint
        column = is_targets_column(self.targets)
        return {
            "truth": [{"column": self.targets}] if column else fingerprint(self.targets),
            "predictions": fingerprint(self.logits),
        }

    def per_unit_schema(self) -> dict[str, pl.DataType]:
        """Columns and types of the per-sample table (:meth:`LogitsAccumulator.add`)."""
        means = [m for m in self.options["metrics"] if AGGREGATION.get(m, "mean") == "mean"]
        return {
            "row": pl.Int64,
            "target": pl.Int64,
            "rank": pl.Float64,
            "top1": pl.Int64,
            **dict.fromkeys(means, pl.Float64),
        }

    def shape(self) -> tuple[int, int]:
        """(rows, classes) of the logits, the classes read from the first row."""
        first = next(logits_chunks(self.logits, self.targets, 1, **self._chunk_columns()), None)
        width = first[1].shape[-1] if first is not None and first[1].ndim == 2 else 0
        if is_parquet(self.logits):
            return pq.ParquetFile(self.logits).metadata.num_rows, width
        return len(read_array(self.logits, "logits")), width

    def chunks(self, accumulator: LogitsFold, first: int = 0, stop: int | None = None):
        """(rows, per-sample frame) of every chunk that starts in ``[first, stop)``, each folded
        into ``accumulator`` (everything: :func:`mobeval.io.logits.iter_logits`)."""
        if first == 0 and stop is None:
            yield from iter_logits(
                accumulator,
                self.logits,
                self.targets,
                chunk_rows=self.chunk_rows,
                per_sample=True,
                **self.columns,
            )
            return
        path = input_name(self.logits)
        if is_targets_column(self.targets):
            targets_at = (path, self.targets)
        else:
            parquet = is_parquet(self.targets)
            targets_at = (
                input_name(self.targets),
                self.columns["targets_column"] if parquet else None,
            )
        if first > 0 and self.n_classes is not None:
            accumulator.n_classes = self.n_classes
            accumulator.n_true, accumulator.n_pred, accumulator.n_tp = (
                np.zeros(self.n_classes, dtype=np.int64) for _ in "abc"
            )
        for start, x, y in logits_chunks(
            self.logits, self.targets, self.chunk_rows, **self._chunk_columns()
        ):
            if stop is not None and start >= stop:
                return
            if start >= first:
                frame = accumulator.add(
                    x, y, first_row=start, path=path, targets_at=targets_at, per_sample=True
                )
                yield len(x), frame

    def _chunk_columns(self) -> dict:
        return {
            "logits_column": self.columns.get("logits_column", "logits"),
            "targets_column": self.columns.get("targets_column", TARGETS_COLUMN),
        }


@dataclass
class LogitsScorer:
    """The fold of a logits scoring as the engines' drivers use it: ``accumulator`` (merged from
    the partitions) and the summary."""

    accumulator: LogitsFold
    percent: bool

    def summary(self) -> pl.DataFrame:
        return self.accumulator.finalize(percent=self.percent)


def row_ranges(n_rows: int, chunk_rows: int, partitions: int) -> list[tuple[int, int]]:
    """``partitions`` ranges of whole chunks covering ``[0, n_rows)`` (fewer if there are fewer
    chunks): each range starts on a multiple of ``chunk_rows``."""
    n_chunks = max(1, math.ceil(n_rows / chunk_rows))
    per = math.ceil(n_chunks / max(1, min(partitions, n_chunks)))
    return [
        (lo * chunk_rows, min(n_rows, (lo + per) * chunk_rows)) for lo in range(0, n_chunks, per)
    ]


def score_rows(job: LogitsPartitionJob, ranges, folds, batches: Iterator[pa.RecordBatch]):
    """Score the row ranges whose indices arrive in ``batches`` (a column ``id``); the function
    Spark's mapInArrow calls for logits. Output and ``folds`` as :func:`score_partition`'s."""
    numba.set_num_threads(task_threads(job.threads))
    accumulator = job.accumulator()
    rows = {"truth": 0, "predictions": 0}
    error = None
    first = 0
    try:
        for index in (i for batch in batches for i in batch.column(0).to_pylist()):
            first, stop = ranges[index]
            for n_rows, frame in job.chunks(accumulator, first, stop):
                rows["truth"] += n_rows
                rows["predictions"] += n_rows
                if "per_unit" in job.output.names:  # not when print-only
                    yield section_batch(job.output, "per_unit", frame, 0)
    except InputError as exc:
        error = ((first,), error_state(exc))
    folds.add(fold_state([{"accumulator": accumulator, "rows": rows, "error": error}]))


def task_threads(default: int) -> int:
    """Numba threads for this task: the task's cores (``spark.task.cpus``), not the machine's."""
    cpus = default
    try:
        from pyspark import TaskContext

        context = TaskContext.get()
        if context is not None:
            cpus = int(context.cpus())
    except Exception:  # noqa: BLE001 - outside Spark, or an old TaskContext: keep the default
        cpus = default
    return max(1, min(cpus, numba.config.NUMBA_NUM_THREADS))


@dataclass(frozen=True)
class PartitionJobs:
    """The partition jobs of results that share a truth, scored in one pass (one read of the
    truth, one shuffle): result ``i``'s prediction rows carry side ``PRED_SIDE + i`` and its
    output rows ``MODEL = i``. ``columns``: for the truth, then the predictions, where each
    source column lies in the partition's rows (``{"location": "__both:location", "score":
    "__pred:score", "sample_id": "sample_id"}``). ``key``, ``output`` (the Arrow schema of the
    output batches: the ``MODEL`` column, then a struct per section kept), ``chunk_rows`` (rows
    of all results together per chunk) and ``threads`` are the group's; each job scores its own
    result."""

    jobs: tuple
    key: list[str]
    columns: tuple[dict, dict]
    output: pa.Schema
    chunk_rows: int
    threads: int


def score_partition(group: PartitionJobs, folds, batches: Iterator[pa.RecordBatch]):
    """Score one partition for every result of ``group`` (see the module docstring); the function
    Spark's mapInArrow calls. A result that meets bad input stops there (its first error is kept)
    and the others go on. The partition's folds, one per result, go to ``folds`` (a Spark
    accumulator of :class:`FoldList`)."""
    numba.set_num_threads(task_threads(group.threads))
    scorers = [job.scorer() for job in group.jobs]
    rows = [{"truth": 0, "predictions": 0} for _ in group.jobs]
    errors: list = [None] * len(group.jobs)
    chunk_key = None
    frames = (pl.from_arrow(batch) for batch in batches if batch.num_rows)
    try:
        for chunk in SortedUnitChunks(frames, group.key, group.chunk_rows):
            chunk_key = key_at(chunk, group.key, 0)
            sides = _sides(chunk, group.columns, len(group.jobs))
            truth = sides[TRUTH_SIDE]
            for index, (job, scorer) in enumerate(zip(group.jobs, scorers, strict=True)):
                if errors[index] is not None:
                    continue
                pred = sides[PRED_SIDE + index]
                rows[index]["truth"] += truth.height
                rows[index]["predictions"] += pred.height
                try:
                    scored = job.score(scorer, truth, pred) or {}
                except InputError as exc:
                    errors[index] = (chunk_key, error_state(exc))
                    continue
                for section, frame in scored.items():
                    if section in group.output.names:  # none when print-only
                        yield section_batch(group.output, section, frame, index)
    except InputError as exc:  # the chunker's (a key's order or nulls): every result's
        errors = [error or (chunk_key, error_state(exc)) for error in errors]
    states = [
        {"accumulator": scorer.accumulator, "rows": counted, "error": error}
        for scorer, counted, error in zip(scorers, rows, errors, strict=True)
    ]
    folds.add(fold_state(states))


class FoldList:
    """A Spark accumulator's parameter (``zero``, ``addInPlace``): a list of
    :func:`fold_state` entries, one per partition computed (duplicates possible)."""

    def zero(self, value) -> list:
        return []

    def addInPlace(self, folds: list, more: list) -> list:  # noqa: N802 - Spark's name
        folds.extend(more)
        return folds


def fold_state(states: list[dict]) -> list[tuple[int, bytes]]:
    """A partition's folds as the driver receives them: [(the partition's number, the pickled
    list of ``{"accumulator", "rows", "error"}``, one per result)]."""
    from pyspark import TaskContext

    blob = pickle.dumps(states, protocol=pickle.HIGHEST_PROTOCOL)
    return [(TaskContext.get().partitionId(), blob)]


def merged_folds(folds: list[tuple[int, bytes]]) -> list[list[dict]]:
    """One entry per partition (the first of a partition computed twice), unpickled: the
    partition's folds, one per result."""
    return [pickle.loads(blob) for blob in dict(reversed(folds)).values()]


def _sides(chunk: pl.DataFrame, columns: tuple[dict, dict], results: int) -> list[pl.DataFrame]:
    """A chunk's rows by side (the truth, then each result's predictions), each side's source
    columns under their own names (``columns``: :class:`PartitionJobs`'s); a side without rows
    is empty."""
    truth, pred = (
        [pl.col(column).alias(name) for name, column in layout.items()] for layout in columns
    )
    return [
        chunk.filter(pl.col(SIDE) == side).select(truth if side == TRUTH_SIDE else pred)
        for side in range(PRED_SIDE + results)
    ]


def section_batch(
    schema: pa.Schema, section: str, value: pl.DataFrame, result: int
) -> pa.RecordBatch:
    """One output batch: ``result`` (the result's index in its group) in the ``MODEL`` column,
    ``value`` in the ``section`` column, nulls in the other sections."""
    field = schema.field(section)
    fields = [field.type.field(i) for i in range(field.type.num_fields)]
    table = value.select([f.name for f in fields]).to_arrow().cast(pa.schema(fields))
    n = table.num_rows
    filled = pa.StructArray.from_arrays(
        [column.combine_chunks() for column in table.columns], fields=fields
    )
    arrays = [
        pa.array(np.full(n, result, dtype=np.int32))
        if f.name == MODEL
        else filled
        if f.name == section
        else pa.nulls(n, type=f.type)
        for f in schema
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def error_state(error: InputError) -> tuple:
    return (str(error), error.path, error.column, None if error.key is None else str(error.key))


def rebuild_error(state: tuple) -> InputError:
    """The InputError a worker raised, with the same message and attributes."""
    text, path, column, key = state
    error = InputError(text)
    error.path, error.column, error.key = path, column, key
    return error


__all__ = [
    "LogitsFold",
    "LogitsPartitionJob",
    "LogitsScorer",
    "NextlocPartitionJob",
    "PartitionJobs",
    "RecsFold",
    "RecsPartitionJob",
    "RecsPartitionScorer",
    "SparkNotInstalled",
    "TrajectoryPartitionJob",
    "FoldList",
    "fold_state",
    "merged_folds",
    "rebuild_error",
    "row_ranges",
    "score_partition",
    "score_rows",
    "section_batch",
]
