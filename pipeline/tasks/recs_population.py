"""Beyond-accuracy metrics of recommendation lists, streamed: item counts and per-user shares.

:func:`population_inputs` reads the catalogue and the training interactions once (memory: one
row per item), :class:`PopulationCounts` folds each chunk of whole users' lists (in list order)
into integer item counts per cutoff and exact sums of per-user shares, and merges exactly with
another chunk's (:meth:`PopulationCounts.merge`); :meth:`PopulationCounts.rows` makes the summary
rows. Memory is bounded by the catalogue, not by the lists. The metrics and their references:
:mod:`mobeval.metrics.recs_population`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from mobeval.errors import ConfigError, InputError
from mobeval.io.inputs import as_source
from mobeval.io.sources import columns_present
from mobeval.kernels import catalogue as K
from mobeval.kernels.exact_sum import ExactColumnSums
from mobeval.metrics.recs_population import (
    PER_USER_FAMILIES,
    PopulationConvention,
    PopulationMetric,
)

_BATCH_ROWS = 1 << 20


@dataclass(frozen=True)
class PopulationInputs:
    """What the metrics need beyond the lists: the catalogue's distinct items, and per item of
    the training interactions its popularity (rows) and whether it is in the long tail."""

    metrics: tuple[PopulationMetric, ...]
    convention: PopulationConvention
    catalogue: pl.Series | None = None
    popularity: pl.DataFrame | None = None  # item_id, popularity (Int64), tail (Boolean)
    path_catalogue: str | None = None

    @property
    def cutoffs(self) -> list[int | None]:
        """The cutoffs whose item counts are kept (those of the count-based metrics)."""
        return sorted(
            {m.k for m in self.metrics if m.family not in PER_USER_FAMILIES},
            key=lambda k: -1 if k is None else k,
        )


def population_inputs(
    metrics: Sequence[PopulationMetric],
    convention: PopulationConvention,
    *,
    catalogue: object | None,
    train: object | None,
) -> PopulationInputs:
    """Read the inputs the ``metrics`` need (ConfigError naming the first metric whose input is
    not given): ``catalogue``, a file with an ``item_id`` column (each item once or more);
    ``train``, the training interactions, an ``item_id`` column, one row per interaction."""
    given = {"catalogue": catalogue, "train": train}
    for metric in metrics:
        for need in convention.needs(metric.family):
            if given[need] is None:
                raise ConfigError(
                    f"{metric.name} needs the {_ROLE[need]}: give {need}=PATH (--{need} PATH), "
                    f"a file with an item_id column"
                )
    needed = {n for m in metrics for n in convention.needs(m.family)}
    items = _items(catalogue) if "catalogue" in needed else None
    popularity = None
    if "train" in needed:
        popularity = _popularity(train, convention.tail_ratio)
    return PopulationInputs(
        tuple(metrics),
        convention,
        None if items is None else items[0],
        popularity,
        None if items is None else items[1],
    )


_ROLE = {"catalogue": "catalogue of items", "train": "training interactions (item popularity)"}


def _item_batches(source):
    """The ``item_id`` column of a source in batches, checked present and without nulls."""
    schema = source.schema()
    if "item_id" not in schema:
        raise InputError(
            f"missing column; {columns_present(schema)}", path=source.label, column="item_id"
        )
    for batch in source.iter_batches(["item_id"], _BATCH_ROWS):
        if batch["item_id"].null_count():
            row = int(batch["item_id"].is_null().arg_true()[0])
            raise InputError("null value", path=source.label, column="item_id", key=f"row {row}")
        yield batch


def _items(data: object) -> tuple[pl.Series, str]:
    """The distinct items of a catalogue file, and its label."""
    source = as_source(data)
    parts = [batch["item_id"].unique() for batch in _item_batches(source)]
    items = pl.concat(parts).unique().sort() if parts else pl.Series("item_id", [])
    if len(items) == 0:
        raise InputError("the catalogue is empty: no item", path=source.label)
    return items, source.label


def _popularity(data: object, tail_ratio: float) -> pl.DataFrame:
    """Rows per item of the training interactions, and RecBole's long tail: with
    ``tail_ratio > 1`` the items seen at most ``tail_ratio`` times, else the
    ``max(int(n * tail_ratio), 1)`` first of the ``n`` items sorted by (popularity, item id)."""
    source = as_source(data)
    counts = None
    for batch in _item_batches(source):
        part = batch.group_by("item_id").len("popularity")
        counts = part if counts is None else _add(counts, part, "popularity")
    if counts is None or counts.height == 0:
        raise InputError("the training interactions are empty", path=source.label)
    counts = counts.with_columns(pl.col("popularity").cast(pl.Int64)).sort(
        ["popularity", "item_id"]
    )
    if tail_ratio > 1:
        tail = pl.col("popularity") <= tail_ratio
    else:
        tail = pl.int_range(pl.len()) < max(int(counts.height * tail_ratio), 1)
    return counts.with_columns(tail.alias("tail"))


def _add(left: pl.DataFrame, right: pl.DataFrame, column: str) -> pl.DataFrame:
    """Two (item_id, count) tables summed item by item (exact integers)."""
    return pl.concat([left, right]).group_by("item_id").agg(pl.col(column).sum())


@dataclass
class PopulationCounts:
    """Item counts per cutoff (integers) and exact sums of the per-user shares, folded chunk by
    chunk; :meth:`merge` is exact, so any chunking or partition order gives the same bits."""

    inputs: PopulationInputs
    counts: dict = field(default_factory=dict)  # cutoff -> DataFrame(item_id, count)
    sums: ExactColumnSums | None = None
    users: int = 0

    def __post_init__(self) -> None:
        if self.sums is None:
            self.sums = ExactColumnSums(
                [m.name for m in self.inputs.metrics if m.family in PER_USER_FAMILIES]
            )

    def add(self, lists: pl.DataFrame) -> None:
        """Fold a chunk of whole users' lists: ``user_id``, ``item_id``, each user's rows
        together and in list order."""
        if lists.height == 0:
            return
        lists = lists.select("user_id", "item_id").with_columns(
            pl.int_range(pl.len()).over("user_id").alias("_position")
        )
        self.users += lists["user_id"].n_unique()
        for k in self.inputs.cutoffs:
            head = lists if k is None else lists.filter(pl.col("_position") < k)
            part = (
                head.group_by("item_id").len("count").with_columns(pl.col("count").cast(pl.Int64))
            )
            known = self.counts.get(k)
            self.counts[k] = part if known is None else _add(known, part, "count")
        shares = self._shares(lists)
        if shares:
            self.sums.add(np.column_stack(shares))

    def _shares(self, lists: pl.DataFrame) -> list[np.ndarray]:
        """Per user of the chunk, each per-user metric's share of its first ``k`` items."""
        per_user = [m for m in self.inputs.metrics if m.family in PER_USER_FAMILIES]
        if not per_user:
            return []
        pop = self.inputs.popularity
        lists = lists.with_columns(
            pl.col("item_id")
            .replace_strict(pop["item_id"], pop["popularity"], default=0, return_dtype=pl.Int64)
            .alias("avg_popularity"),
            pl.col("item_id")
            .replace_strict(pop["item_id"], pop["tail"].cast(pl.Int64), default=0)
            .cast(pl.Int64)
            .alias("tail_percentage"),
        )
        aggregations = []
        for m in per_user:
            first = pl.col(m.family)
            if m.k is not None:
                first = first.filter(pl.col("_position") < m.k)
            # an integer sum over an integer count: one rounding, as RecBole's cumsum / k
            aggregations.append((first.sum() / first.count()).alias(m.name))
        table = lists.group_by("user_id").agg(aggregations)
        return [table[m.name].cast(pl.Float64).to_numpy() for m in per_user]

    def merge(self, other: PopulationCounts) -> None:
        """Fold another chunk's (or partition's) counts."""
        for k, part in other.counts.items():
            known = self.counts.get(k)
            self.counts[k] = part if known is None else _add(known, part, "count")
        self.sums.merge(other.sums)
        self.users += other.users

    def rows(self) -> list[tuple[str, float, int]]:
        """``(metric, value, n)`` per metric, ``n`` the users whose lists were counted."""
        totals = dict(zip(self.sums.names, self.sums.sums(), strict=True))
        rows = []
        for m in self.inputs.metrics:
            if m.family in PER_USER_FAMILIES:
                value = totals[m.name] / self.users if self.users else float("nan")
            else:
                value = self._value(m)
            rows.append((m.name, float(value), self.users))
        return rows

    def _value(self, metric: PopulationMetric) -> float:
        conv = self.inputs.convention
        empty = pl.DataFrame(schema={"item_id": pl.Int64, "count": pl.Int64})
        counts = self.counts.get(metric.k, empty)
        catalogue = self.inputs.catalogue
        inside = counts
        if catalogue is not None:
            inside = self._in_catalogue(counts, catalogue)
        n_items = None if catalogue is None else len(catalogue) + conv.catalogue_padding
        values = counts["count"].to_numpy()
        if metric.family == "gini":
            if conv.gini_items == "catalogue":
                return K.gini(inside["count"].to_numpy(), n_items)
            return K.gini(values, len(values))
        if metric.family == "entropy":
            h = K.entropy(values)
            return h / len(values) if conv.entropy_divisor == "distinct_items" else h
        covered = inside.height / n_items
        if conv.coverage_unit == "percent_2dp":
            return float(np.round(covered * 100, 2))
        return covered

    def _in_catalogue(self, counts: pl.DataFrame, catalogue: pl.Series) -> pl.DataFrame:
        """The counted items of the catalogue; under ``outside_catalogue="error"`` an item
        outside it is an InputError naming it."""
        items = counts["item_id"]
        if items.dtype != catalogue.dtype:
            items, catalogue = items.cast(pl.String), catalogue.cast(pl.String)
        member = items.is_in(catalogue.implode())
        if self.inputs.convention.outside_catalogue == "error" and not member.all():
            outside = items.filter(~member).sort()[0]
            raise InputError(
                "a recommended item is not in the catalogue (RecBole's items all come from its "
                "catalogue; population_convention='clayrs' ignores such items)",
                path=self.inputs.path_catalogue,
                column="item_id",
                key=outside,
            )
        return counts.filter(member)
