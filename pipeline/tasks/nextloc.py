"""Next-location evaluation: one true next location per sample against a ranked candidate list.

Inputs (column names mappable, key of one or several columns, ``sample_id`` by default):

* truth: key columns + ``location`` (integer), one row per sample;
* predictions in **long form**: key columns, ``location`` and ``score`` (higher is better)
  and/or ``rank`` (1 is best); or in **list form**: key columns, ``locations`` (a list of integers,
  best first) and optionally ``scores`` (a list of floats, same length).

The task wires readers to kernels: it checks and normalises columns, turns a chunk of whole samples
into flat arrays (offsets + values), calls :mod:`mobeval.kernels.ranks` and
:mod:`mobeval.kernels.topk`, and folds the per-sample table into exact sums for the summary
(:class:`NextlocAccumulator`; the same fold serves every engine).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from mobeval.errors import InputError
from mobeval.io.arrays import kernel_array
from mobeval.io.chunking import format_key, key_at, key_matrix, unit_starts
from mobeval.kernels.blocks import thread_count
from mobeval.kernels.exact_sum import ExactColumnSums
from mobeval.kernels.keys import match_keys, unit_offsets
from mobeval.kernels.ranks import drop_repeated, target_rank_bounds
from mobeval.kernels.topk import ACC, single_target_metrics
from mobeval.metrics import drop_duplicates_hint
from mobeval.metrics.nextloc import TIE_POLICIES, MetricColumns, NextlocConvention
from mobeval.tasks.nextloc_inputs import PREFERENCE, TARGET, InputPlan, NextlocSpec
from mobeval.tasks.summary import count_row, summary_frame


@dataclass
class UnitArrays:
    """A chunk of whole samples as flat arrays (offsets + values) plus their keys."""

    keys: pl.DataFrame
    offsets: np.ndarray
    locations: np.ndarray
    preference: np.ndarray


def _first_key_where(frame: pl.DataFrame, key: list[str], mask: pl.Series) -> str:
    return format_key(key, key_at(frame, key, int(mask.arg_true()[0])))


def to_unit_arrays(
    chunk: pl.DataFrame, plan: InputPlan, key: list[str], label: str, spec: NextlocSpec
) -> UnitArrays:
    """Flatten a chunk of whole samples (rows grouped by key); reject nulls and NaN; under
    ``duplicates="drop"`` a location twice in one list is reduced to one entry (under "error" the
    scorer's rank pass looks for it). Long form with integer keys goes to NumPy in one step per
    column (the unit starts from :func:`mobeval.kernels.keys.key_order`)."""
    if any(chunk[column].null_count() for column in key):
        null_key = chunk.select(pl.any_horizontal(pl.col(key).is_null())).to_series()
        row = int(null_key.arg_true()[0])
        raise InputError("null key value", path=label, column=key[0], key=f"row {row}")
    if plan.list_form:
        keys = chunk.select(key)
        if keys.height > 1 and (unit_starts(keys, key).len() != keys.height):
            duplicated = keys.is_duplicated()
            raise InputError(
                "the same key appears on two rows of list-form predictions",
                path=label,
                column=key[0],
                key=_first_key_where(keys, key, duplicated),
            )
        lengths = chunk["locations"].list.len().fill_null(0)
        offsets = np.zeros(chunk.height + 1, dtype=np.int64)
        np.cumsum(lengths.to_numpy(), out=offsets[1:])
        flat = chunk["locations"].explode(keep_nulls=False, empty_as_null=False)
        if "scores" in chunk.columns:
            score_lengths = chunk["scores"].list.len().fill_null(0)
            bad = score_lengths != lengths
            if bad.any():
                raise InputError(
                    "scores list has another length than the locations list",
                    path=label,
                    column="scores",
                    key=_first_key_where(chunk, key, bad),
                )
            preference_series = chunk["scores"].explode(keep_nulls=False, empty_as_null=False)
        else:
            positions = np.arange(offsets[-1], dtype=np.float64)
            positions -= np.repeat(offsets[:-1], np.diff(offsets)).astype(np.float64)
            preference_series = pl.Series(-positions)
        location_values = flat
    else:
        matrix = key_matrix(chunk, key)
        if matrix is None:
            offsets = np.append(unit_starts(chunk, key).to_numpy(), chunk.height).astype(np.int64)
            keys = chunk.select(key)[offsets[:-1]]
        else:
            offsets = unit_offsets(matrix)
            unit_keys = matrix[offsets[:-1]]
            keys = pl.DataFrame(
                {column: unit_keys[:, j] for j, column in enumerate(key)},
                schema={column: chunk.schema[column] for column in key},
            )
        location_values = chunk["location"]
        preference_series = chunk[PREFERENCE]

    def unit_of_row(row: int) -> int:
        return int(np.searchsorted(offsets, row, side="right")) - 1

    if location_values.null_count():
        row = unit_of_row(int(location_values.is_null().arg_true()[0]))
        raise InputError(
            "null location",
            path=label,
            column="location",
            key=format_key(key, key_at(keys, key, row)),
        )
    preference = kernel_array(preference_series, np.float64)  # a null becomes NaN
    bad_preference = np.isnan(preference)
    if bad_preference.any():
        row = unit_of_row(int(np.argmax(bad_preference)))
        column = "rank" if plan.order == "rank" else "score"
        if plan.list_form:
            column = "scores"
        raise InputError(
            "null rank" if column == "rank" else "null or NaN score",
            path=label,
            column=column,
            key=format_key(key, key_at(keys, key, row)),
        )
    locations = kernel_array(location_values, np.int64)
    if spec.resolved_convention.duplicates == "drop":
        # a list without scores is ranked by place: its first copy's (the others move up)
        by_value = plan.order != "list"
        offsets, locations, preference = drop_repeated(
            offsets, locations, preference, by_value, _blocks()
        )
    return UnitArrays(keys, offsets, locations, preference)


def _blocks() -> int:
    """Blocks of units the parallel kernels split a chunk into: a few per thread."""
    return 4 * thread_count()


@dataclass
class NextlocAccumulator:
    """The summary as a fold over per-sample tables: exact sums of the metric columns, and counts.

    :meth:`add` folds a per-unit table (whatever engine produced it, in any order and any split);
    :meth:`merge` combines two folds (Spark folds each partition, the driver merges). The sums are
    exact (integer), so the summary does not depend on how the rows were split or ordered.
    ``samples`` counts the rows, ``without_predictions`` the rows with ``n_candidates == 0``;
    ``dropped_predictions`` is counted on the side (those samples have no per-unit row).
    """

    columns: MetricColumns
    convention: NextlocConvention
    kernel_names: list[str]
    sums: ExactColumnSums
    samples: int = 0
    without_predictions: int = 0
    dropped_predictions: int = 0

    def add(self, per_unit: pl.DataFrame) -> None:
        """Fold a per-unit table (columns ``n_candidates`` and every name of ``kernel_names``)."""
        if per_unit.height == 0:
            return
        self.sums.add(np.column_stack([per_unit[name].to_numpy() for name in self.kernel_names]))
        self.samples += per_unit.height
        self.without_predictions += int((per_unit["n_candidates"] == 0).sum())

    def merge(self, other: NextlocAccumulator) -> None:
        """Fold another accumulator of the same task (exact, order-independent)."""
        self.sums.merge(other.sums)
        self.samples += other.samples
        self.without_predictions += other.without_predictions
        self.dropped_predictions += other.dropped_predictions

    def summary(self) -> pl.DataFrame:
        """One row per metric: the mean over the samples counted (``n``) and its ``std``
        (:mod:`mobeval.tasks.summary`; none for LibCity's aggregated F1), plus the counts."""
        totals = self.sums.sums()
        stds = self.sums.stds()
        counted = int(self.sums.counts[0]) if len(self.sums.counts) else 0
        values = []
        for j, name in enumerate(self.columns.names):
            mean, std = (totals[j] / counted, stds[j]) if counted else (float("nan"), None)
            if self.columns.aggregation(j, self.convention) == "hits":
                mean, std = self._aggregate_f1(totals, int(self.columns.cutoffs[j]), counted), None
            values.append((name, mean, counted, std))
        values += [
            count_row("samples", self.samples),
            count_row("samples_without_predictions", self.without_predictions),
            count_row("predictions_without_truth_dropped", self.dropped_predictions),
        ]
        return summary_frame(values)

    def _aggregate_f1(self, totals, cutoff, counted) -> float:
        """LibCity: F1@K = 2PR/(P+R) with P = hits/(N K) and R = hits/N (0 when both are 0)."""
        hits = totals[self.kernel_names.index(f"acc@{cutoff}")]
        if not counted or hits == 0:
            return 0.0
        precision = hits / (counted * cutoff)
        recall = hits / counted
        return 2 * precision * recall / (precision + recall)


def kernel_columns(spec: NextlocSpec) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The requested columns, plus ``acc@k`` (the hit at k) where an aggregated F1@k needs it.

    LibCity's F1@k is computed from the summed hits, so the per-unit table carries ``acc@k`` for
    every such ``f1@k`` even when ``acc@k`` was not requested (it is then not in the summary): the
    summary is a pure fold over the per-unit table.
    """
    columns = spec.metric_columns
    names = list(columns.names)
    codes = list(columns.metric_codes)
    cutoffs = list(columns.cutoffs)
    for j, cutoff in enumerate(columns.cutoffs):
        hits = f"acc@{cutoff}"
        if columns.aggregation(j, spec.resolved_convention) == "hits" and hits not in names:
            names.append(hits)
            codes.append(ACC)
            cutoffs.append(cutoff)
    return names, np.array(codes, dtype=np.int64), np.array(cutoffs, dtype=np.int64)


class NextlocScorer:
    """Scores chunks of whole samples; the one partition scorer every engine calls."""

    def __init__(self, spec: NextlocSpec, plan: InputPlan, pred_label: str, truth_label: str):
        self.spec = spec
        self.plan = plan
        self.key = list(spec.key)
        self.pred_label = pred_label
        self.truth_label = truth_label
        self.convention = spec.resolved_convention
        self.tie_code = TIE_POLICIES[self.convention.ties]
        self.names, self.codes, self.cutoffs = kernel_columns(spec)
        self.accumulator = NextlocAccumulator(
            spec.metric_columns, self.convention, self.names, ExactColumnSums(self.names)
        )

    def score(self, chunk: pl.DataFrame, truth: pl.DataFrame) -> dict[str, pl.DataFrame] | None:
        """Per-sample results for the whole samples of ``chunk`` and the truth rows ``truth`` that
        fall in the same key range (sorted streaming) or the same bucket; either may be empty.
        Folds the per-unit table into the summary and returns {"per_unit": table} (None if no
        rows). A sample with no candidates (no prediction rows, or an empty list) is a sample
        without predictions: a miss, or left out of the means under ``missing="skip"``."""
        key = self.key
        if truth.height and truth[TARGET].null_count():
            raise InputError(
                "null location",
                path=self.truth_label,
                column="location",
                key=_first_key_where(truth, key, truth[TARGET].is_null()),
            )
        frames = []
        missing = truth
        if chunk.height:
            units = to_unit_arrays(chunk, self.plan, key, self.pred_label, self.spec)
            table, used = self._score_units(units, truth)
            frames.append(table)
            if truth.height:
                if used is None:
                    missing = truth.join(units.keys, on=key, how="anti")
                else:
                    missing = truth.filter(~used)
        if missing.height:
            frames.append(self._missing_table(missing.select(key)))
        if not frames:
            return None
        per_unit = frames[0] if len(frames) == 1 else pl.concat(frames).sort(key)
        self.accumulator.add(per_unit)
        return {"per_unit": per_unit}

    def per_unit_schema(self, key_schema: dict) -> dict[str, pl.DataType]:
        """Columns and types of the per-unit table, given the canonical key columns' types."""
        return {
            **{column: key_schema[column] for column in self.key},
            "rank": pl.Float64,
            "n_candidates": pl.Int64,
            **dict.fromkeys(self.names, pl.Float64),
        }

    def summary(self) -> pl.DataFrame:
        return self.accumulator.summary()

    def _targets(self, units: UnitArrays, truth: pl.DataFrame):
        """Per unit: its true location (-1 if it has none) and whether it has one; per truth row
        whether a unit matched it (None when a join found the matches). Integer keys and a truth
        sorted by them: a lookup (:func:`mobeval.kernels.keys.match_keys`); else a join."""
        n_units = units.keys.height
        if not truth.height:
            return np.full(n_units, -1, dtype=np.int64), np.zeros(n_units, dtype=bool), None
        unit_keys, truth_keys = key_matrix(units.keys, self.key), key_matrix(truth, self.key)
        if unit_keys is not None and truth_keys is not None:
            index, used, ok = match_keys(unit_keys, truth_keys)
            if ok:
                found = index >= 0
                targets = truth[TARGET].to_numpy()[np.where(found, index, 0)]
                return np.where(found, targets, -1), found, pl.Series(used)
        matched = units.keys.join(truth, on=self.key, how="left", maintain_order="left")
        found = matched[TARGET].is_not_null().to_numpy()
        return matched[TARGET].fill_null(-1).to_numpy(), found, None

    def _score_units(self, units: UnitArrays, truth: pl.DataFrame):
        """The per-unit table of the chunk's samples that have a truth row, and the truth rows
        matched (see :meth:`_targets`)."""
        targets, found, used = self._targets(units, truth)
        lo, hi, duplicate = target_rank_bounds(
            units.offsets,
            units.locations,
            units.preference,
            kernel_array(targets, np.int64),
            self.tie_code,
            _blocks(),
            self.convention.duplicates == "error",
        )
        if duplicate >= 0:
            raise InputError(
                "the same location appears twice in one sample's list (trec_eval refuses duplicate "
                f"documents); {drop_duplicates_hint('location')}",
                path=self.pred_label,
                column=("locations" if self.plan.list_form else "location"),
                key=format_key(self.key, key_at(units.keys, self.key, duplicate)),
            )
        if not found.all():
            if self.spec.unmatched == "error":
                raise InputError(
                    "predictions for a sample that is not in the truth (unmatched='drop' drops "
                    "and counts them)",
                    path=self.pred_label,
                    column=self.key[0],
                    key=format_key(self.key, key_at(units.keys, self.key, int(np.argmin(found)))),
                )
            self.accumulator.dropped_predictions += int((~found).sum())
        n_candidates = np.diff(units.offsets)
        self._check_cutoffs(n_candidates, units.keys)
        values = single_target_metrics(lo, hi, self.codes, self.cutoffs)
        if self.convention.missing == "skip":
            values[n_candidates == 0] = np.nan
        table = self._table(units.keys, (lo + hi) / 2, n_candidates, values)
        return (table if found.all() else table.filter(found)), used

    def _check_cutoffs(self, n_candidates: np.ndarray, keys: pl.DataFrame) -> None:
        if self.convention.k_beyond_list != "error":
            return
        short = n_candidates < self.accumulator.columns.max_cutoff
        if short.any():
            row = int(np.argmax(short))
            raise InputError(
                f"k={self.accumulator.columns.max_cutoff} exceeds this sample's "
                f"{int(n_candidates[row])} candidates (the {self.spec.convention} convention "
                "rejects it, as LibCity's topk does; k_beyond_list='allow' scores such a list "
                "with what it has, or lower k)",
                path=self.pred_label,
                column="location",
                key=format_key(self.key, key_at(keys, self.key, row)),
            )

    def _table(self, keys, rank, n_candidates, values) -> pl.DataFrame:
        """The per-unit table: keys, rank (null for a miss), n_candidates, the metric values."""
        return keys.hstack(
            [
                pl.Series("rank", np.where(np.isinf(rank), np.nan, rank), nan_to_null=True),
                pl.Series("n_candidates", n_candidates, dtype=pl.Int64),
                *[pl.Series(name, values[:, j]) for j, name in enumerate(self.names)],
            ]
        )

    def _missing_table(self, keys: pl.DataFrame) -> pl.DataFrame:
        n = keys.height
        values = np.zeros((n, len(self.names)))
        if self.convention.missing == "skip":
            values[:] = np.nan
        return self._table(keys, np.full(n, np.inf), np.zeros(n, dtype=np.int64), values)
