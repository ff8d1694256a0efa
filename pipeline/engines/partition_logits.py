"""The logits family's fold, partition job and scorer (:mod:`mobeval.engines.partition`):
imported by the runs that score logits, so that no other family loads its task or kernels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

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
