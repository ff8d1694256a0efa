"""Recommendation runs before their first row: the columns of the lists a scoring reads
(:func:`rec_columns`) and the population metrics' inputs beyond the lists, read once
(:func:`population_inputs`: the catalogue and the training interactions; memory one row per
item).

Polars and :mod:`mobeval.metrics` only, no kernel: a run reads these and checks its inputs'
columns before Numba and the scorers (:mod:`mobeval.tasks.recs`,
:mod:`mobeval.tasks.recs_population`) are imported, so a bad input is named at once
(``tests/test_startup_imports.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from mobeval.errors import ConfigError, InputError
from mobeval.io.inputs import as_source
from mobeval.io.sources import columns_present, require_ids
from mobeval.metrics.recs import RecsConvention, RecsMetric
from mobeval.metrics.recs_population import (
    BEYOND_USER_FAMILIES,
    GROUP_FAMILIES,
    MEAN_FAMILIES,
    PER_UNIT_FAMILIES,
    PER_USER_FAMILIES,
    PROPENSITY_FAMILIES,
    SCORE_FAMILIES,
    PopulationConvention,
    PopulationMetric,
    parse_user_groups,
)

if TYPE_CHECKING:  # the tables and weights of population metrics: imported where read
    from mobeval.tasks.item_tables import FeatureTables, TrainTables
    from mobeval.tasks.propensity import PropensityWeights

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
    #: DeltaGap, PopRatio: the group names, each profile user's group, profile popularity and
    #: popularity ratio, and the items' popularity (rows in the original ratings / their users)
    groups: tuple[str, ...] = ()
    profiles: pl.DataFrame | None = None  # user_id, group (Int64), profile, ratio (Float64)
    item_share: pl.DataFrame | None = None  # item_id, rows (Int64), popular (Boolean)
    original_users: int = 0  # the users of the original ratings (popularity's denominator)
    #: the Poisson bootstrap of gini / coverage / entropy
    #: (:class:`~mobeval.tasks.recs_population.BootstrapCounts`): its resamples (0: none), seed
    #: and confidence
    resamples: int = 0
    seed: int = 0
    confidence: float = 0.95
    #: novelty, diversity, serendipity, EPC...: the training interactions as tables, the item
    #: features, and the relevance of EPC / EFD (the ranking convention's ``relevant_threshold``)
    train_tables: TrainTables | TrainItems | None = None
    features: FeatureTables | None = None
    relevance_threshold: float | str | None = None
    #: PSP@k, PSR@k: each item's inverse propensity
    propensity: PropensityWeights | None = None

    @property
    def per_unit(self) -> tuple[PopulationMetric, ...]:
        """The metrics with a value per user (``per_unit`` columns; they read the lists' scores)."""
        return tuple(m for m in self.metrics if m.family in PER_UNIT_FAMILIES)

    @property
    def scored(self) -> bool:
        """Whether a metric reads the lists' scores (a per-unit metric, ``auc``)."""
        return any(m.family in SCORE_FAMILIES for m in self.metrics)

    @property
    def depth(self) -> int:
        """The most list positions a metric reads: the largest cutoff, or -1 where a metric
        reads whole lists (no cutoff: ``auc``, ``gauc``, a metric without ``@k``)."""
        cutoffs = [m.k for m in self.metrics]
        return -1 if not cutoffs or None in cutoffs else max(cutoffs)

    @property
    def cutoffs(self) -> list[int | None]:
        """The cutoffs whose item counts are kept: those of the metrics that read them (not
        the means over users, the propensity sums, the groups' gaps, the correlations and the
        AUCs: sums of their own)."""
        own = (*MEAN_FAMILIES, *PROPENSITY_FAMILIES, *GROUP_FAMILIES, *SCORE_FAMILIES)
        return sorted(
            {m.k for m in self.metrics if m.family not in own}, key=lambda k: -1 if k is None else k
        )


def population_inputs(
    metrics: Sequence[PopulationMetric],
    convention: PopulationConvention,
    *,
    catalogue: object | None,
    train: object | None,
    original_ratings: object | None = None,
    user_groups: Sequence[str] = (),
    pop_percentage: float = 0.2,
    resamples: int = 0,
    seed: int = 0,
    confidence: float = 0.95,
    item_features: object | None = None,
    relevance_threshold: float | str | None = None,
    propensities: object | None = None,
    propensity_preset: str | None = None,
    propensity_a: float | None = None,
    propensity_b: float | None = None,
) -> PopulationInputs:
    """Read the inputs the ``metrics`` need (ConfigError naming the first metric whose input is
    not given): ``catalogue``, a file with an ``item_id`` column (each item once or more);
    ``train``, the training interactions, an ``item_id`` column, one row per interaction (and
    ``user_id`` for ``delta_gap``: the users' profiles); ``original_ratings`` (``user_id``,
    ``item_id``; default ``train``): the popularity of ``delta_gap``, ``user_groups`` its groups
    (``NAME=FRACTION``), ``pop_percentage`` the share of most popular items; ``resamples``,
    ``seed``, ``confidence``: the bootstrap interval over users of
    :data:`~mobeval.metrics.recs_population.BOOTSTRAP_FAMILIES`; ``item_features``: the
    items' categories or vectors (:func:`~mobeval.tasks.item_tables.feature_tables`);
    ``relevance_threshold``: EPC's, EFD's, PSP's and PSR's relevance (a rating >= it,
    ``user_mean``, None: every rated item); ``propensities`` (``item_id, propensity``) or
    ``train`` with ``propensity_preset``, ``propensity_a``, ``propensity_b``: PSP's and PSR's
    weights (:func:`~mobeval.tasks.propensity.propensity_weights`)."""
    from mobeval.tasks.item_tables import feature_tables, train_tables
    from mobeval.tasks.propensity import propensity_weights

    given = {"catalogue": catalogue, "train": train, "item_features": item_features}
    for metric in metrics:
        for need in convention.needs(metric.family):
            if given[need] is None:
                raise ConfigError(
                    f"{metric.name} needs the {_ROLE[need]}: give {need}=PATH "
                    f"(--{need.replace('_', '-')} PATH), "
                    f"a file with an item_id column"
                )
    families = {m.family for m in metrics}
    needed = {n for family in families for n in convention.needs(family)}
    items = _items(catalogue) if "catalogue" in needed else None
    tabled = ("novelty", "coverage", *BEYOND_USER_FAMILIES)  # coverage: over train's items
    scored = [m for m in metrics if m.family in PROPENSITY_FAMILIES]
    # the tables by user, or the items alone (novelty, coverage): streamed, one row an item
    by_user = (
        families & set(BEYOND_USER_FAMILIES)
        or (families & set(PER_USER_FAMILIES) and convention.popularity == "users")
        or (scored and propensities is None)
    )
    tables = None
    if any(f in tabled and "train" in convention.needs(f) for f in families):
        similar = families & {"diversity", "serendipity"}  # the co-occurrence table, once
        pairs = bool(similar) and convention.item_similarity != "features"
        tables = train_tables(train, pairs=pairs) if by_user else train_items(train)
    popularity = None
    if families & set(PER_USER_FAMILIES):
        if convention.popularity == "users":
            tables = tables or train_tables(train)
            counts = tables.items.select("item_id", pl.col("users").alias("popularity"))
        else:
            counts = _item_rows(train)
        popularity = _with_tail(counts, convention.tail_ratio)
    groups, profiles, item_share = (), None, None
    grouped = [m for m in metrics if m.family in GROUP_FAMILIES]
    if grouped:
        if not user_groups:
            raise ConfigError(
                f"{grouped[0].family} needs user groups: user_groups=['popular=0.2', ...]"
            )
        parsed = parse_user_groups(user_groups)
        groups = tuple(name for name, _ in parsed)
    if grouped or "popularity_correlation" in families:
        original = train if original_ratings is None else original_ratings
        item_share, original_users, most_popular = _item_shares(original, pop_percentage)
        popular = pl.col("item_id").is_in(most_popular.implode())
        item_share = item_share.with_columns(popular.alias("popular"))
    if grouped:
        profiles = _profiles(train, item_share, original_users, most_popular, parsed)
    weights = None
    if scored:
        weights = propensity_weights(
            scored, train=train, propensities=propensities, preset=propensity_preset,
            a=propensity_a, b=propensity_b, tables=tables,
        )  # fmt: skip
    return PopulationInputs(
        tuple(metrics),
        convention,
        None if items is None else items[0],
        popularity,
        None if items is None else items[1],
        groups,
        profiles,
        item_share,
        original_users if item_share is not None else 0,
        resamples,
        seed,
        confidence,
        tables,
        feature_tables(item_features) if "item_features" in needed else None,
        relevance_threshold,
        weights,
    )


_ROLE = {
    "catalogue": "catalogue of items",
    "train": "training interactions (item popularity)",
    "item_features": "item features (categories or vectors)",
}


def _item_batches(source, columns: Sequence[str] = ("item_id",)):
    """``columns`` of a source in batches, checked present and without nulls."""
    schema = source.schema()
    for column in columns:
        if column not in schema:
            raise InputError(
                f"missing column; {columns_present(schema)}", path=source.label, column=column
            )
    for index, batch in enumerate(source.iter_batches(list(columns), _BATCH_ROWS)):
        if index == 0:  # ids as the lists': never floats (naming the first)
            require_ids(schema, columns, source.label, batch)
        for column in columns:
            if batch[column].null_count():
                row = int(batch[column].is_null().arg_true()[0])
                raise InputError("null value", path=source.label, column=column, key=f"row {row}")
        yield batch


def _item_shares(data: object, pop_percentage: float) -> tuple[pl.DataFrame, int, pl.Series]:
    """ClayRS's item popularity (``get_item_popularity``): rows of the item over the distinct
    users of ``data``; and its most popular items (``get_most_popular_items``): the first
    ``round(n * pop_percentage)`` of the ``n`` items by popularity, descending, ties in order of
    first appearance (a stable sort of a dict filled row by row)."""
    source = as_source(data)
    counts, users, offset = None, None, 0
    for batch in _item_batches(source, ("user_id", "item_id")):
        part = (
            batch.with_row_index("first", offset=offset)
            .group_by("item_id")
            .agg(pl.len().alias("rows"), pl.col("first").min())
        )
        offset += batch.height
        if counts is not None:
            part = (
                pl.concat([counts, part])
                .group_by("item_id")
                .agg(pl.col("rows").sum(), pl.col("first").min())
            )
        counts = part
        distinct = batch["user_id"].unique()
        users = distinct if users is None else pl.concat([users, distinct]).unique()
    if counts is None or counts.height == 0:
        raise InputError("the original ratings are empty", path=source.label)
    counts = counts.sort(["rows", "first"], descending=[True, False])
    top = round(counts.height * pop_percentage)
    return counts.select("item_id", "rows"), len(users), counts["item_id"].head(top)


def _profiles(
    data: object,
    item_share: pl.DataFrame,
    original_users: int,
    most_popular: pl.Series,
    groups: Sequence[tuple[str, float]],
) -> pl.DataFrame:
    """Each profile user's group (index in ``groups``) and mean item popularity over every row of
    its profile (ClayRS ``split_user_in_groups``, ``get_avg_pop_by_users``). Memory: the distinct
    (user, item) pairs of the profiles."""
    source = as_source(data)
    parts, offset = [], 0
    for batch in _item_batches(source, ("user_id", "item_id")):
        batch, shares = ids_of_one_type(batch, item_share)
        parts.append(
            batch.with_columns(
                pl.col("item_id")
                .replace_strict(shares["item_id"], shares["rows"], default=0)
                .cast(pl.Int64)
                .alias("share"),
                pl.int_range(offset, offset + batch.height, dtype=pl.Int64).alias("row"),
            )
            .group_by("user_id", "item_id")
            .agg(pl.len().alias("rows"), pl.col("share").sum(), pl.col("row").min())
        )
        offset += batch.height
    pairs = (
        pl.concat(parts)
        .group_by("user_id", "item_id")
        .agg(pl.col("rows").sum(), pl.col("share").sum(), pl.col("row").min())
    )
    if pairs.schema["item_id"] != most_popular.dtype:  # as text, as the shares were
        most_popular = most_popular.cast(pl.String)
    popular = pl.col("item_id").is_in(most_popular.implode())
    users = (
        pairs.group_by("user_id")
        .agg(
            (popular.sum() / pl.len()).alias("ratio"),
            # integers over integers: one rounding, in any row or thread order
            (pl.col("share").sum() / (pl.col("rows").sum() * original_users)).alias("profile"),
            pl.col("row").min().alias("first"),
        )
        .sort(["ratio", "first"], descending=[True, False])
    )
    n_users = users.height
    if n_users < len(groups):
        raise InputError(
            f"You can't split in {len(groups)} groups {n_users} users! Try reducing number of "
            "groups (ClayRS's message)",
            path=source.label,
            column="user_id",
        )
    group = np.zeros(n_users, dtype=np.int64)
    start, cumulative = 0, 0.0
    for index, (_, fraction) in enumerate(groups):
        cumulative += fraction
        end = round(n_users * cumulative)
        group[start:end] = index
        start = max(start, end)
    return users.select("user_id", pl.Series("group", group), "profile", "ratio")


def _items(data: object) -> tuple[pl.Series, str]:
    """The distinct items of a catalogue file, and its label."""
    source = as_source(data)
    parts = [batch["item_id"].unique() for batch in _item_batches(source)]
    items = pl.concat(parts).unique().sort() if parts else pl.Series("item_id", [])
    if len(items) == 0:
        raise InputError("the catalogue is empty: no item", path=source.label)
    return items, source.label


@dataclass(frozen=True)
class TrainItems:
    """The training interactions' items alone, what ``novelty`` and ``coverage`` over the
    training items read (:class:`~mobeval.tasks.item_tables.TrainTables` holds them too, beside
    the tables by user that the other metrics read): ``items`` (``item_id``, ascending, and
    ``rows``, its training rows), ``rows`` (all of them) and the file's ``label``."""

    items: pl.DataFrame
    rows: int
    label: str | None = None


def train_items(data: object) -> TrainItems:
    """:class:`TrainItems` of the training interactions (a path or a frame with ``item_id``),
    counted in one streamed pass (:func:`_item_rows`): memory one row per item, where
    :func:`~mobeval.tasks.item_tables.train_tables` holds the whole file while it builds its
    tables by user (10 M training rows: 0.5 s and a 191-221 MiB peak against 1.4-1.6 s, Numba's
    import included, and 628-667 MiB)."""
    source = as_source(data)
    items = _item_rows(source).rename({"popularity": "rows"}).sort("item_id")
    return TrainItems(items, int(items["rows"].sum()), source.label)


def _item_rows(data: object) -> pl.DataFrame:
    """Rows per item of the training interactions (``item_id``, ``popularity``)."""
    source = as_source(data)
    counts = ItemCounts()
    for batch in _item_batches(source):
        counts.add(batch["item_id"])
    table = counts.table()
    if table is None:
        raise InputError("the training interactions are empty", path=source.label)
    return table.rename({"count": "popularity"})


def _with_tail(counts: pl.DataFrame, tail_ratio: float) -> pl.DataFrame:
    """Each item's popularity and RecBole's long tail: with ``tail_ratio > 1`` the items seen at
    most ``tail_ratio`` times, else the ``max(int(n * tail_ratio), 1)`` first of the ``n`` items
    sorted by (popularity, item id)."""
    counts = counts.with_columns(pl.col("popularity").cast(pl.Int64)).sort(
        ["popularity", "item_id"]
    )
    if tail_ratio > 1:
        tail = pl.col("popularity") <= tail_ratio
    else:
        tail = pl.int_range(pl.len()) < max(int(counts.height * tail_ratio), 1)
    return counts.with_columns(tail.alias("tail"))


def ids_of_one_type(
    left: pl.DataFrame, right: pl.DataFrame, column: str = "item_id"
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``left`` and ``right`` with their ``column`` (ids) of one type: as text where the two type
    it differently, the rule of two inputs' ids (:func:`~mobeval.io.sources.require_ids`): the
    integer 12 is the text ``12``, and the text ``012`` is no integer (never read as 12)."""
    if left.schema[column] == right.schema[column]:
        return left, right
    text = pl.col(column).cast(pl.String)
    return left.with_columns(text), right.with_columns(text)


def add_counts(left: pl.DataFrame, right: pl.DataFrame, column: str) -> pl.DataFrame:
    """Two (item_id, count) tables summed item by item (exact integers)."""
    return pl.concat([left, right]).group_by("item_id").agg(pl.col(column).sum())


#: The item ids an :class:`ItemCounts` holds before it counts them: 8 MiB of integer ids.
FOLD_IDS = 1_000_000


@dataclass
class ItemCounts:
    """How often each item id occurs (exact integers), counted in folds: the ids added are held
    until there are :data:`FOLD_IDS` of them, then sorted, their runs of equal ids counted
    (Polars' ``rle``) and summed into the counts so far (:func:`add_counts`). On one thread (as
    a run's Polars), 50,000 distinct ids: a ``group_by`` of a chunk's ids and another of the
    counts so far and the chunk's took 21 ms a chunk of 100,000 ids; in folds of 1 M ids, a
    ``group_by`` 60 ms a fold, the sort and its runs 24 ms. The counts are the same integers
    whatever the folds. Memory: the distinct ids counted and at most :data:`FOLD_IDS` ids held
    (and the last chunk's)."""

    counted: pl.DataFrame | None = None  # item_id, count (Int64); rows in no order
    held: list = field(default_factory=list)  # Series of item ids not yet counted
    held_ids: int = 0

    def add(self, ids: pl.Series) -> None:
        """Count the item ids ``ids`` (a Series named ``item_id``)."""
        if ids.len():
            self.held.append(ids)
            self.held_ids += ids.len()
        if self.held_ids >= FOLD_IDS:
            self._fold()

    def merge(self, other: ItemCounts) -> None:
        """Add another chunk's (or partition's) counts."""
        for ids in other.held:
            self.add(ids)
        if other.counted is not None:
            self._sum(other.counted)

    def table(self) -> pl.DataFrame | None:
        """``item_id`` and ``count`` (Int64), a row per item counted (in no order); None when no
        id was added."""
        self._fold()
        return self.counted

    def __getstate__(self) -> dict:
        """Pickled (a Spark partition's state, sent to the driver) with its ids counted: the
        distinct ids, not every id held."""
        self._fold()
        return self.__dict__.copy()

    def _fold(self) -> None:
        """The ids held counted: sorted, then their runs of equal ids."""
        if self.held:
            runs = pl.concat(self.held).sort().rle().struct.unnest()
            self.held, self.held_ids = [], 0
            counts = pl.col("len").cast(pl.Int64).alias("count")
            self._sum(runs.select(pl.col("value").alias("item_id"), counts))

    def _sum(self, part: pl.DataFrame) -> None:
        known = self.counted
        self.counted = part if known is None else add_counts(known, part, "count")


def rec_columns(
    conv: RecsConvention,
    specs: Sequence[RecsMetric],
    population: PopulationInputs | None = None,
) -> list[str]:
    """The columns of the lists a scoring needs: ``user_id``, ``item_id``, then ``rank`` (order
    "rank") and ``score`` (score orders, ranx's included; the predicted rating of mse/mae/rmse,
    or of the
    ``population`` metrics that read it: correlations, gauc, auc)."""
    need_score = (
        conv.order not in ("input", "rank")
        or any(s.family in ("mse", "mae", "rmse", "trec") for s in specs)
        or bool(population is not None and population.scored)
    )
    return (
        ["user_id", "item_id"]
        + (["rank"] if conv.order == "rank" else [])
        + (["score"] if need_score else [])
    )
