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

Each family's job (and its fold) lives in its own module, ``partition_<family>.py``, which only
the runs of that family import: a run loads its own task and kernels, no other family's.

This module imports no Spark at module level: workers unpickle the partition job by reference
(``functools.partial`` of :func:`score_partition`), so Numba kernels come from the installed
package and load from its on-disk cache.
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numba
import numpy as np
import polars as pl
import pyarrow as pa

from mobeval.errors import ConfigError, InputError
from mobeval.io.chunking import SortedUnitChunks, key_at

if TYPE_CHECKING:
    from mobeval.engines.partition_logits import LogitsPartitionJob


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


def score_partition(group: PartitionJobs, folds, batches: Iterator[pa.RecordBatch], *, detach=None):
    """Score one partition for every result of ``group`` (see the module docstring); the function
    Spark's mapInArrow calls. A result that meets bad input stops there (its first error is kept)
    and the others go on. The partition's folds, one per result, go to ``folds`` (a Spark
    accumulator of :class:`FoldList`). ``detach`` (``detach(states, output)``: the folds, the
    output schema) takes out of the folds, before they are pickled, what leaves as output rows
    instead (their batches, which it yields): so no worker holds those parts of a fold twice,
    as tallies and as a pickle (:func:`mobeval.engines.spark.hashes.detach_hashes`)."""
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
    if detach is not None:
        yield from detach(states, group.output)
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


def merged_folds(folds: list[tuple[int, bytes]]) -> Iterator[list[dict]]:
    """One entry per partition (the first of a partition computed twice), unpickled when it is
    reached, so that a driver merging them holds one partition's fold beside the merged one
    (a population's trajectory hashes are most of a fold): the partition's folds, one per
    result."""
    for blob in dict(reversed(folds)).values():
        yield pickle.loads(blob)


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
    "PartitionJobs",
    "SparkNotInstalled",
    "FoldList",
    "fold_state",
    "merged_folds",
    "rebuild_error",
    "row_ranges",
    "score_partition",
    "score_rows",
    "section_batch",
]
