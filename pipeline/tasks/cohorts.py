"""Cohorts: every metric of a result sliced by a table of unit -> cohort (the ``cohorts`` option).

A cohort table holds a ``cohort`` column and one or more of the unit key's columns, named as the
key names them (a recommendation list's ``user_id``; a next-location ``sample_id``, or ``uid``
where the key is ``uid,d,t``); other columns are not read. Each chunk's rows, on both sides,
are joined with it on those columns (:meth:`CohortTable.parts`), and each cohort's rows go, as a
chunk of their own, through a scorer of their own: the family's scorer, which folds them into
its exact sums (:mod:`mobeval.kernels.exact_sum`). So the summary of cohort ``c`` is the family's
summary over the units of ``c`` alone, every row of it computed by the same code under the same
rules as the whole result's::

    value_c = (sum over units u of c with a value of v_u) / n_c       (a mean over units)

and likewise a micro average of the cohort's summed counts, a trec_eval ``gm_`` measure, the
population metrics of the cohort's lists: the same bits for any chunking, row order or engine.
The whole result's own summary is its scorer's on whole chunks, as without cohorts, bit for bit.

A unit whose key the table lacks is an InputError naming the table, the column and the first
such key, unless ``cohort_missing="unassigned"`` gathers those units in the cohort
``unassigned``. A key the table holds twice is refused, naming the first repeat. Memory: the
table (its join columns and cohort), and one family state per cohort.

The ``cohorts`` section (:func:`cohort_summaries`): ``cohort`` (String), then the summary's own
columns (:mod:`mobeval.tasks.summary`), the cohorts in ascending order; each per-unit row carries
its unit's ``cohort`` too (a String column after the metrics), which compare reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import polars as pl

from mobeval.errors import InputError
from mobeval.io.inputs import as_source
from mobeval.io.sources import columns_present, require_ids
from mobeval.tasks.summary import SCHEMA

COHORT = "cohort"
UNASSIGNED = "unassigned"
SECTION = "cohorts"
#: The cohorts section's schema: ``cohort``, then the summary's columns.
COHORT_SCHEMA = {COHORT: pl.String, **SCHEMA}
_TAG = "__cohort"
_BATCH_ROWS = 1 << 20


@dataclass(frozen=True)
class CohortTable:
    """A unit -> cohort table: ``frame`` (the join columns ``on``, then ``cohort`` as String),
    its ``label`` (the file, for messages) and the rule for units it lacks (``missing``:
    ``error`` or ``unassigned``)."""

    frame: pl.DataFrame
    on: tuple[str, ...]
    label: str
    missing: str = "error"
    _aligned: dict = field(default_factory=dict, compare=False, repr=False)

    def cohorts_of(self, side: pl.DataFrame) -> pl.Series:
        """Each row's cohort (null where the table has none), rows in ``side``'s order."""
        keys = side.select(self.on)
        table = self._table_for(keys.schema)
        keys = keys.cast({c: table.schema[c] for c in self.on})
        return keys.join(table, on=list(self.on), how="left", maintain_order="left")[COHORT]

    def parts(
        self, pred: pl.DataFrame, truth: pl.DataFrame
    ) -> list[tuple[str, pl.DataFrame, pl.DataFrame]]:
        """``(cohort, predictions, truth)`` for each cohort with rows in the chunk, in ascending
        order; each side's rows of the cohort in the side's order (a side without rows: empty,
        as the chunk's own)."""
        tags = [None if f.height == 0 else self.cohorts_of(f) for f in (pred, truth)]
        if self.missing == "error":
            self._require_assigned(
                [(f, t) for f, t in zip((pred, truth), tags, strict=True) if t is not None]
            )
        split = []
        for frame, tag in zip((pred, truth), tags, strict=True):
            if tag is None:
                split.append({})
                continue
            tagged = frame.with_columns(tag.fill_null(UNASSIGNED).alias(_TAG))
            parts = tagged.partition_by(_TAG, as_dict=True, include_key=False)
            split.append({name: part for (name,), part in parts.items()})
        names = sorted(set(split[0]) | set(split[1]))
        return [
            (name, split[0].get(name, pred.clear()), split[1].get(name, truth.clear()))
            for name in names
        ]

    def _table_for(self, schema: pl.Schema) -> pl.DataFrame:
        """The table with each join column typed as ``schema``'s: integers as the chunk's, and
        both as String where the two differ otherwise (the chunk's cast by :meth:`cohorts_of`)."""
        types = tuple(schema[c] for c in self.on)
        if types not in self._aligned:
            casts = {}
            for column, ours in zip(self.on, types, strict=True):
                theirs = self.frame.schema[column]
                if theirs != ours:
                    both_int = theirs.is_integer() and ours.is_integer()
                    casts[column] = ours if both_int else pl.String
            self._aligned[types] = self.frame.cast(casts)
        return self._aligned[types]

    def _require_assigned(self, sides: list[tuple[pl.DataFrame, pl.Series]]) -> None:
        """InputError naming the lowest key of the chunk that has no cohort, if any."""
        absent = [frame.filter(tag.is_null()).select(self.on) for frame, tag in sides]
        absent = [frame for frame in absent if frame.height]
        if not absent:
            return
        if any(frame.schema != absent[0].schema for frame in absent):  # typed differently
            absent = [frame.cast(pl.String) for frame in absent]
        first = pl.concat(absent).sort(self.on).row(0)
        raise InputError(
            "a unit has no cohort in this table (cohort_missing='unassigned' gathers such units "
            f"in the cohort '{UNASSIGNED}')",
            path=self.label,
            column=self.on[0],
            key=first[0] if len(first) == 1 else first,
        )


def read_cohorts(data: object, key: Sequence[str], missing: str = "error") -> CohortTable:
    """The cohort table ``data`` (a file read as an input is, or a DataFrame) checked whole: a
    ``cohort`` column and at least one of ``key``'s columns, neither null, each key once."""
    source = as_source(data)
    label = str(source.label)
    schema = source.schema()
    if COHORT not in schema:
        raise InputError(f"missing column; {columns_present(schema)}", path=label, column=COHORT)
    on = tuple(c for c in key if c in schema)
    if not on:
        raise InputError(
            f"no column of the unit key ({', '.join(key)}) to join on; {columns_present(schema)}",
            path=label,
            column=key[0],
        )
    require_ids(schema, on, label)
    batches = list(source.iter_batches([*on, COHORT], _BATCH_ROWS))
    if not batches or sum(b.height for b in batches) == 0:
        raise InputError("the cohort table is empty: no unit", path=label)
    frame = pl.concat(batches, how="vertical_relaxed")
    for column in (*on, COHORT):
        if frame[column].null_count():
            row = int(frame[column].is_null().arg_true()[0])
            raise InputError("null value", path=label, column=column, key=f"row {row}")
    repeated = ~frame.select(pl.struct(on).is_first_distinct()).to_series()
    if repeated.any():
        first = frame.filter(repeated).row(0)[: len(on)]
        raise InputError(
            "a unit is given twice (one cohort per unit)",
            path=label,
            column=on[0],
            key=first[0] if len(first) == 1 else first,
        )
    return CohortTable(frame.with_columns(pl.col(COHORT).cast(pl.String)), on, label, missing)


@dataclass
class CohortFold:
    """A cohort scorer's fold: the whole result's accumulator and each cohort's, merged exactly
    (each the family's own ``merge``)."""

    overall: object
    cohorts: dict[str, object]

    def merge(self, other: CohortFold) -> None:
        self.overall.merge(other.overall)
        for name, fold in other.cohorts.items():
            if name in self.cohorts:
                self.cohorts[name].merge(fold)
            else:
                self.cohorts[name] = fold


class CohortScorer:
    """The family's scorer of the whole result (``overall``, made by ``make``) and one per
    cohort met, each fed its cohort's rows of every chunk; the engines' scorer interface
    (``score``, ``summary``, ``result_sections``, ``accumulator``)."""

    def __init__(self, make: Callable[[], object], table: CohortTable) -> None:
        self.make = make
        self.table = table
        self.overall = make()
        self.cohorts: dict[str, object] = {}

    def parts(self, pred: pl.DataFrame, truth: pl.DataFrame) -> Iterator[tuple]:
        """``(scorer, predictions, truth)``: the whole chunk's first (so that its errors are
        raised as without cohorts), then each cohort's rows for that cohort's scorer."""
        yield self.overall, pred, truth
        for name, cohort_pred, cohort_truth in self.table.parts(pred, truth):
            if name not in self.cohorts:
                self.cohorts[name] = self.make()
            yield self.cohorts[name], cohort_pred, cohort_truth

    def score(self, pred: pl.DataFrame, truth: pl.DataFrame) -> dict | None:
        """The whole chunk's sections (the per-unit rows, each with its ``cohort``), every
        cohort's rows scored too."""
        return scored_parts(self, lambda scorer, p, t: scorer.score(p, t), pred, truth)

    def with_cohorts(self, sections: dict | None) -> dict | None:
        """``sections`` with each per-unit row's ``cohort`` (``unassigned`` where the table
        lacks it: a unit it lacks is refused before, unless ``cohort_missing="unassigned"``)."""
        if not sections or "per_unit" not in sections:
            return sections
        per_unit = sections["per_unit"]
        cohort = self.table.cohorts_of(per_unit).fill_null(UNASSIGNED)
        return sections | {"per_unit": per_unit.with_columns(cohort.alias(COHORT))}

    def summary(self) -> pl.DataFrame:
        return self.overall.summary()

    def result_sections(self) -> dict[str, pl.DataFrame]:
        """The whole result's own sections (its family's), and ``cohorts``."""
        own = getattr(self.overall, "result_sections", None)
        return ({} if own is None else own()) | {SECTION: cohort_summaries(self.cohorts)}

    @property
    def accumulator(self) -> CohortFold:
        return CohortFold(
            self.overall.accumulator, {n: s.accumulator for n, s in self.cohorts.items()}
        )

    @accumulator.setter
    def accumulator(self, fold: CohortFold) -> None:
        self.overall.accumulator = fold.overall
        self.cohorts = {}
        for name, state in fold.cohorts.items():
            self.cohorts[name] = self.make()
            self.cohorts[name].accumulator = state


def scored_parts(scorer: CohortScorer, score: Callable, pred, truth) -> dict | None:
    """``score(part_scorer, predictions, truth)`` for each of ``scorer``'s parts of a chunk
    (:meth:`CohortScorer.parts`); the whole chunk's sections."""
    parts = scorer.parts(pred, truth)
    whole = score(*next(parts))
    for part in parts:
        score(*part)
    return scorer.with_cohorts(whole)


def cohort_summaries(cohorts: dict[str, object]) -> pl.DataFrame:
    """Each cohort's summary, ``cohort`` first, the cohorts in ascending order."""
    frames = [
        scorer.summary().select(pl.lit(name, pl.String).alias(COHORT), pl.all())
        for name, scorer in sorted(cohorts.items())
    ]
    return pl.concat(frames) if frames else pl.DataFrame(schema=COHORT_SCHEMA)
