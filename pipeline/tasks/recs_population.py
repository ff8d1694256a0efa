"""Beyond-accuracy metrics of recommendation lists, streamed: item counts and per-user shares.

:func:`mobeval.tasks.recs_inputs.population_inputs` reads the catalogue and the training
interactions once (memory: one row per item), :class:`PopulationCounts` folds each chunk of
whole users' lists (in list order) into integer item counts per cutoff and exact sums of per-user
shares, and merges exactly with another chunk's (:meth:`PopulationCounts.merge`);
:meth:`PopulationCounts.rows` makes the summary rows. Memory is bounded by the catalogue, not by
the lists. The metrics and their references: :mod:`mobeval.metrics.recs_population`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import polars as pl

from mobeval.errors import InputError
from mobeval.kernels import catalogue as K
from mobeval.kernels.auc import score_keys, twice_u
from mobeval.kernels.correlation import METHODS, unit_auc, unit_correlations
from mobeval.kernels.exact_sum import ExactColumnSums, WeightedColumnSums
from mobeval.kernels.ranks import entry_counts
from mobeval.kernels.resampling import percentile_interval, poisson_weights, weighted_counts
from mobeval.kernels.tallies import collapse
from mobeval.metrics.recs_population import (
    CORRELATION_FAMILIES,
    COUNT_FAMILIES,
    GROUP_FAMILIES,
    MEAN_FAMILIES,
    NO_CUTOFF_FAMILIES,
    PLOT_FAMILIES,
    PROPENSITY_FAMILIES,
    PopulationMetric,
)
from mobeval.metrics.tallies import Tally, aligned_blocks
from mobeval.tasks import recs_lists as R
from mobeval.tasks.recs_beyond import distributional_coverage, novelty, user_values
from mobeval.tasks.recs_inputs import ItemCounts, PopulationInputs, ids_of_one_type
from mobeval.tasks.recs_propensity import PropensitySums


@dataclass
class PopulationCounts:
    """Item counts per cutoff (integers) and exact sums of the per-user shares, folded chunk by
    chunk; :meth:`merge` is exact, so any chunking or partition order gives the same bits."""

    inputs: PopulationInputs
    counts: dict = field(default_factory=dict)  # cutoff -> ItemCounts
    sums: ExactColumnSums | None = None
    users: int = 0
    boot: dict = field(default_factory=dict)  # cutoff -> BootstrapCounts (with resamples)
    resampled: WeightedColumnSums | None = None  # the per-user values' (with resamples)
    scores: ScoreCounts | None = None  # auc's counts per distinct score
    truth: ItemCounts = field(default_factory=ItemCounts)  # long_tail: the ratings' items
    propensity: PropensitySums | None = None  # psp, psr

    def __post_init__(self) -> None:
        if self.sums is None:
            names = [m.name for m in self.inputs.metrics if m.family in MEAN_FAMILIES]
            for m in self.inputs.per_unit:
                names += [f"{m.name}:{w}" for w in _AUC_SUMS] if m.family == "gauc" else [m.name]
            for m in self.inputs.metrics:
                if m.family in GROUP_FAMILIES:
                    names += [f"{m.name}:{g}:{side}" for g in self.inputs.groups for side in _SIDES]
            self.sums = ExactColumnSums(names)
        families = (*MEAN_FAMILIES, *GROUP_FAMILIES)
        resampled = {m.name for m in self.inputs.metrics if m.family in families}
        names = [n for n in self.sums.names if n.split(":")[0] in resampled]
        if self.inputs.resamples and names and self.resampled is None:
            self.resampled = WeightedColumnSums(names, self.inputs.resamples)
        scored = tuple(m for m in self.inputs.metrics if m.family in PROPENSITY_FAMILIES)
        if scored and self.propensity is None:
            self.propensity = PropensitySums(scored)

    def add(self, lists: pl.DataFrame, ratings: pl.DataFrame) -> pl.DataFrame | None:
        """Fold a chunk of whole users' lists (``user_id``, ``item_id``, ``score`` if a
        correlation is asked for; by user, ascending, each list in its order) and their
        ratings; return the per-user correlations (``user_id`` and a column each), if any."""
        if any(m.family == "long_tail" for m in self.inputs.metrics):
            self.truth.add(ratings["item_id"])
        if self.propensity is not None:
            inputs = self.inputs
            self.propensity.add(lists, ratings, inputs.propensity, inputs.relevance_threshold)
        if lists.height == 0:
            return None
        # each row's place in its list, from the users' runs (a window over the users took
        # 8.7 ms for 100,000 rows of 10,000 users, this 1 ms)
        offsets = R.user_offsets(lists)
        place = np.arange(lists.height) - np.repeat(offsets[:-1], np.diff(offsets))
        lists = lists.with_columns(pl.Series("_position", place, dtype=pl.Int64))
        # the correlations, auc and gauc read each (user, item) once: its first row
        firsts = _first_of_each_item(lists, offsets) if self.inputs.scored else None
        auc = any(m.family in NO_CUTOFF_FAMILIES for m in self.inputs.metrics)
        items = _scored_items(firsts, ratings) if auc else None
        per_unit = self._per_unit(lists, firsts, ratings, items)
        self.users += len(offsets) - 1  # whole users, each one run of rows
        if any(m.family == "auc" for m in self.inputs.metrics):
            self.scores = self.scores or ScoreCounts()
            self.scores.add(items["score"].cast(pl.Float64).to_numpy(), items["positive"])
        deepest = int(place.max())  # the last place of the longest list
        for k in self.inputs.cutoffs:
            head = lists if k is None or deepest < k else lists.filter(pl.Series(place < k))
            self.counts.setdefault(k, ItemCounts()).add(head["item_id"])
            if self.inputs.resamples:
                self.boot.setdefault(k, BootstrapCounts()).add(head, self.inputs)
        # per user, ascending
        columns = self._shares(lists, offsets, place) | self._gaps(lists)
        columns |= user_values(lists, ratings, self.inputs)
        if self.resampled is not None:
            self.resampled.add(
                np.column_stack([columns[name] for name in self.resampled.names]),
                user_weights(lists["user_id"].unique().sort(), self.inputs),
            )
        if per_unit is not None:
            columns |= {n: per_unit[n].to_numpy() for n in per_unit.columns if n != "user_id"}
        if columns:
            self.sums.add(np.column_stack([columns[name] for name in self.sums.names]))
        return None if per_unit is None else per_unit.select("user_id", *self._per_unit_names)

    @property
    def _per_unit_names(self) -> list[str]:
        return [m.name for m in self.inputs.per_unit]

    def _per_unit(
        self, lists: pl.DataFrame, firsts, ratings: pl.DataFrame, items
    ) -> pl.DataFrame | None:
        """Per user of the chunk (ascending), each per-unit metric: a correlation of the
        predicted scores and the ratings of its rated items among its first ``k`` (``firsts``:
        each item's first row in the list, :func:`_first_of_each_item`), or its AUC (and, for
        the sums, ``P AUC`` and ``P``) of ``items`` (:func:`_scored_items`)."""
        metrics = self.inputs.per_unit
        if not metrics:
            return None
        users = lists.select(pl.col("user_id").unique(maintain_order=True).sort())
        rated = None
        columns = [users["user_id"]]
        for m in metrics:
            if m.family == "gauc":
                columns += self._auc(items, m.name)
                continue
            if rated is None:  # by user and position, as the lists come
                rated = firsts.join(
                    ratings.select("user_id", "item_id", "rating"),
                    on=["user_id", "item_id"],
                    maintain_order="left",
                )
            pairs = rated if m.k is None else rated.filter(pl.col("_position") < m.k)
            counts = users.join(
                pairs.group_by("user_id").len(), on="user_id", how="left", maintain_order="left"
            )["len"].fill_null(0)
            offsets = np.concatenate([[0], np.cumsum(counts.to_numpy())]).astype(np.int64)
            values = unit_correlations(
                offsets,
                pairs["score"].cast(pl.Float64).to_numpy(),
                pairs["rating"].cast(pl.Float64).to_numpy(),
                METHODS[m.family],
            )
            columns.append(pl.Series(m.name, values, dtype=pl.Float64))
        return pl.DataFrame(columns)

    def _shares(
        self, lists: pl.DataFrame, offsets: np.ndarray, place: np.ndarray
    ) -> dict[str, np.ndarray]:
        """Per user of the chunk (``offsets``: its users' runs; ``place``: each row's place in
        its list), each per-user metric's share of its first ``k`` items: an integer sum over an
        integer count, one rounding, as RecBole's ``cumsum / k``."""
        per_user = [m for m in self.inputs.metrics if m.family in _SHARE_FAMILIES]
        if not per_user:
            return {}
        lists, pop = ids_of_one_type(lists, self.inputs.popularity)
        each = {"avg_popularity": pop["popularity"], "tail_percentage": pop["tail"]}
        values = lists.select(
            pl.col("item_id")
            .replace_strict(pop["item_id"], each[family], default=0, return_dtype=pl.Int64)
            .alias(family)
            for family in {m.family for m in per_user}
        )
        lengths = np.diff(offsets)
        out = {}
        for m in per_user:
            value = values[m.family].to_numpy()
            if m.k is not None:
                value = np.where(place < m.k, value, 0)
            sums = np.add.reduceat(value, offsets[:-1])
            out[m.name] = sums / (lengths if m.k is None else np.minimum(lengths, m.k))
        return out

    def _auc(self, items: pl.DataFrame, name: str) -> list[pl.Series]:
        """Per user of ``items`` (:func:`_scored_items`, ascending): AUC, and P AUC and P where
        the AUC is defined (else NaN)."""
        counts = items.group_by("user_id", maintain_order=True).len()["len"].to_numpy()
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        auc, positives = unit_auc(
            offsets,
            items["score"].cast(pl.Float64).to_numpy(),
            items["positive"].to_numpy(),
        )
        weight = np.where(np.isnan(auc), np.nan, positives.astype(np.float64))
        return [
            pl.Series(name, auc, dtype=pl.Float64),
            pl.Series(f"{name}:{_AUC_SUMS[0]}", weight * auc, dtype=pl.Float64),
            pl.Series(f"{name}:{_AUC_SUMS[1]}", weight, dtype=pl.Float64),
        ]

    def _gaps(self, lists: pl.DataFrame) -> dict[str, np.ndarray]:
        """Per user of the chunk, for each group metric (delta_gap, pop_ratio) and group: the
        value of its first ``k`` items and of its profile if the user is in the group, else NaN:
        the mean popularity (delta_gap), the share of its distinct items among the most popular
        (pop_ratio)."""
        grouped = [m for m in self.inputs.metrics if m.family in GROUP_FAMILIES]
        if not grouped:
            return {}
        lists, shares = ids_of_one_type(lists, self.inputs.item_share)
        profiles = self.inputs.profiles
        lists = lists.with_columns(
            pl.col("item_id")
            .replace_strict(shares["item_id"], shares["rows"], default=0)
            .cast(pl.Int64)
            .alias("share"),
            pl.col("item_id")
            .replace_strict(shares["item_id"], shares["popular"], default=False)
            .cast(pl.Int64)
            .alias("popular"),
            pl.col("item_id").is_first_distinct().over("user_id").alias("_distinct"),
        )
        users = self.inputs.original_users
        aggregations = []
        for m in grouped:
            head = pl.col("_position") < (m.k or lists.height + 1)
            if m.family == "delta_gap":
                share = pl.col("share").filter(head)
                aggregations.append((share.sum() / (share.count() * users)).alias(m.name))
            else:  # the distinct items of the head (a repeat's first row is in the head)
                popular = pl.col("popular").filter(head & pl.col("_distinct"))
                aggregations.append((popular.sum() / popular.count()).alias(m.name))
        per_user = lists.group_by("user_id").agg(aggregations).sort("user_id")
        if per_user.schema["user_id"] != profiles.schema["user_id"]:
            per_user = per_user.with_columns(pl.col("user_id").cast(pl.String))
            profiles = profiles.with_columns(pl.col("user_id").cast(pl.String))
        joined = per_user.join(profiles, on="user_id", how="left", maintain_order="left")
        group = joined["group"].to_numpy()
        sides = {"delta_gap": joined["profile"].to_numpy(), "pop_ratio": joined["ratio"].to_numpy()}
        out = {}
        for m in grouped:
            recs, profile = joined[m.name].cast(pl.Float64).to_numpy(), sides[m.family]
            for index in range(len(self.inputs.groups)):
                member = group == index
                name = f"{m.name}:{self.inputs.groups[index]}"
                out[f"{name}:recs"] = np.where(member, recs, np.nan)
                out[f"{name}:profile"] = np.where(member, profile, np.nan)
        return out

    def merge(self, other: PopulationCounts) -> None:
        """Fold another chunk's (or partition's) counts."""
        for k, part in other.counts.items():
            self.counts.setdefault(k, ItemCounts()).merge(part)
        self.sums.merge(other.sums)
        self.users += other.users
        if other.scores is not None:
            self.scores = self.scores or ScoreCounts()
            self.scores.merge(other.scores)
        for k, part in other.boot.items():
            self.boot.setdefault(k, BootstrapCounts()).merge(part)
        if other.resampled is not None:
            self.resampled.merge(other.resampled)
        if other.propensity is not None:
            self.propensity.merge(other.propensity)
        self.truth.merge(other.truth)

    def rows(self) -> list[tuple[str, float, int]]:
        """``(metric, value, n)`` per metric, ``n`` the users whose lists were counted."""
        totals = dict(zip(self.sums.names, self.sums.sums(), strict=True))
        rows = []
        counts = dict(zip(self.sums.names, self.sums.counts.tolist(), strict=True))
        resampled = self._resampled_sums()

        def with_interval(name: str, value, counted: str) -> list[tuple[str, float, int]]:
            """The row of ``value(totals, counts)`` (dicts by column name), ``n`` the users
            counted in column ``counted``; with resamples, its rows ``:low`` and ``:high``: the
            percentile interval of ``value`` of each resample's weighted sums and counts, over
            the resamples where it is defined (a group none of whose users is drawn has none;
            NaN without any)."""
            rows = [(name, float(value(totals, counts)), counts[counted])]
            if not resampled:
                return rows
            values = np.array([value(*sums) for sums in resampled])
            low, high = math.nan, math.nan
            if not np.isnan(values).all():
                defined = values[~np.isnan(values), None]
                low, high = (
                    float(q[0]) for q in percentile_interval(defined, self.inputs.confidence)
                )
            return [*rows, (f"{name}:low", low, rows[0][2]), (f"{name}:high", high, rows[0][2])]

        for m in self.inputs.metrics:
            if m.family in PLOT_FAMILIES:  # tables of their own: :meth:`sections`
                continue
            if m.family == "delta_gap":
                for group in self.inputs.groups:
                    recs, profile = (f"{m.name}:{group}:{side}" for side in _SIDES)
                    value = partial(_delta_gap, recs=recs, profile=profile)
                    rows += with_interval(f"{m.name}:{group}", value, recs)
                continue
            if m.family == "pop_ratio":  # each side's mean over the group's users with a list
                for group in self.inputs.groups:
                    for side in reversed(_SIDES):
                        name = f"{m.name}:{group}:{side}"
                        rows += with_interval(name, partial(_mean, name=name), name)
                continue
            if m.family in MEAN_FAMILIES:  # the mean over the users with a value
                rows += with_interval(m.name, partial(_mean, name=m.name), m.name)
                continue
            if m.family == "gauc":  # weighted by the positives, over the users with an AUC
                weighted, positives = (totals[f"{m.name}:{w}"] for w in _AUC_SUMS)
                n = int(counts[f"{m.name}:{_AUC_SUMS[1]}"])
                rows.append((m.name, weighted / positives if n else float("nan"), n))
                continue
            if m.family == "auc":  # over every scored pair
                rows.append((m.name, *(self.scores or ScoreCounts()).auc()))
                continue
            if m.family in PROPENSITY_FAMILIES:
                rows.append(self.propensity.row(m))
                continue
            if m.family == "novelty":  # Microsoft Recommenders': of the item counts
                listed = self._listed(m.k)
                rows.append((m.name, novelty(listed, self.inputs.train_tables), self.users))
                continue
            if m.family in CORRELATION_FAMILIES:  # the mean over the users with a value
                n = int(counts[m.name])
                rows.append((m.name, totals[m.name] / n if n else float("nan"), n))
                continue
            rows.append((m.name, float(self._value(m)), self.users))
            if m.k in self.boot and m.family in COUNT_FAMILIES:
                low, high = self._interval(m)
                rows += [(f"{m.name}:low", low, self.users), (f"{m.name}:high", high, self.users)]
        return rows

    def _resampled_sums(self) -> list[tuple[dict, dict]]:
        """Per resample, the per-user values' weighted sums and counts by column name
        (:class:`~mobeval.kernels.exact_sum.WeightedColumnSums`); none without resamples."""
        if self.resampled is None:
            return []
        names, counts = self.resampled.names, self.resampled.counts.tolist()
        return [
            (dict(zip(names, sums, strict=True)), dict(zip(names, n, strict=True)))
            for sums, n in zip(self.resampled.sums(), counts, strict=True)
        ]

    def sections(self) -> dict[str, pl.DataFrame]:
        """The plot metrics' tables (:data:`PLOT_FAMILIES`), one section per family, a block of
        rows per metric: ``long_tail`` (``metric``, ``side``, ``position``, ``item_id``,
        ``count``) and ``popularity_correlation`` (``metric``, ``item_id``, ``ratings``,
        ``popularity``, ``recommended``). Rows: at most the items counted (the catalogue)."""
        tables: dict[str, list[pl.DataFrame]] = {}
        for m in self.inputs.metrics:
            if m.family == "long_tail":
                sides = {"truth": self.truth, "recs": self.counts.get(m.k, ItemCounts())}
                frames = [_ranked(m.name, side, counts.table()) for side, counts in sides.items()]
            elif m.family == "popularity_correlation":
                frames = [self._popularity_correlation(m)]
            else:
                continue
            tables.setdefault(m.family, []).extend(f for f in frames if f is not None)
        return {family: _concat(frames) for family, frames in tables.items() if frames}

    def _popularity_correlation(self, metric: PopulationMetric) -> pl.DataFrame:
        """Per item of the original ratings: its rows there, its popularity (rows over the
        original ratings' users) and its count among the first ``k`` items of the lists."""
        shares = self.inputs.item_share.select("item_id", pl.col("rows").alias("ratings"))
        shares, counts = ids_of_one_type(shares, self._listed(metric.k, shares.schema["item_id"]))
        table = shares.join(counts, on="item_id", how="left").select(
            pl.lit(metric.name).alias("metric"),
            "item_id",
            pl.col("ratings").cast(pl.Int64),
            pl.col("count").fill_null(0).alias("recommended"),
        )
        # numpy's division, correctly rounded as Python's (Polars multiplies by the reciprocal)
        popularity = table["ratings"].to_numpy() / self.inputs.original_users
        table = table.insert_column(3, pl.Series("popularity", popularity, dtype=pl.Float64))
        return table.sort(["ratings", "item_id"], descending=[True, False])

    def _listed(self, k: int | None, item: pl.DataType = pl.Int64) -> pl.DataFrame:
        """Each item's count among the lists' first ``k`` items (``item_id``, ``count``; no
        rows, ``item_id`` of type ``item``, where none was counted)."""
        counted = self.counts.get(k, ItemCounts()).table()
        empty = pl.DataFrame(schema={"item_id": item, "count": pl.Int64})
        return empty if counted is None else counted

    def _value(self, metric: PopulationMetric) -> float:
        counts = self._listed(metric.k)
        inside = np.ones(counts.height, dtype=bool)
        if self.inputs.catalogue is not None:
            inside = self._in_catalogue(counts["item_id"])
        return self._count_value(metric.family, counts["count"].to_numpy(), inside)

    def _interval(self, metric: PopulationMetric) -> tuple[float, float]:
        """The percentile interval of ``metric`` (gini, coverage, entropy) over the Poisson
        bootstrap's resamples of the users (:class:`BootstrapCounts`)."""
        boot = self.boot[metric.k]
        inside = np.ones(boot.items.len(), dtype=bool)
        if self.inputs.catalogue is not None:
            inside = self._in_catalogue(boot.items)
        values = [
            self._count_value(metric.family, column[column > 0], inside[column > 0])
            for column in boot.counts.T
        ]
        low, high = percentile_interval(np.array(values)[:, None], self.inputs.confidence)
        return float(low[0]), float(high[0])

    def _count_value(self, family: str, values: np.ndarray, inside: np.ndarray) -> float:
        """gini, entropy or coverage of the item ``values`` (counts > 0), ``inside`` marking
        those of the catalogue."""
        conv = self.inputs.convention
        catalogue = self.inputs.catalogue
        n_items = None if catalogue is None else len(catalogue) + conv.catalogue_padding
        if family == "gini":
            if conv.gini_items == "catalogue":
                return K.gini(values[inside], n_items)
            return K.gini(values, len(values))
        if family == "entropy":
            h = K.entropy(values)
            return h / len(values) if conv.entropy_divisor == "distinct_items" else h
        if family == "distributional_coverage":
            return distributional_coverage(values)
        if conv.coverage_items == "train":
            n_items = self.inputs.train_tables.items.height
        covered = int(len(values) if conv.outside_catalogue == "count" else inside.sum()) / n_items
        if conv.coverage_unit == "percent_2dp":
            return float(np.round(covered * 100, 2))
        return covered

    def _in_catalogue(self, items: pl.Series) -> np.ndarray:
        """Which ``items`` are of the catalogue; under ``outside_catalogue="error"`` an item
        outside it is an InputError naming it."""
        catalogue = self.inputs.catalogue
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
        return member.to_numpy()


#: The seed of the user-id hash that seeds each user's bootstrap weights.
USER_HASH_SEED = 0


def user_weights(users: pl.Series, inputs: PopulationInputs) -> np.ndarray:
    """int64[users, resamples]: each user's Poisson bootstrap weights
    (:func:`mobeval.kernels.resampling.poisson_weights`), drawn from the hash of its id (Polars'
    ``Series.hash`` with :data:`USER_HASH_SEED`)."""
    hashes = users.hash(USER_HASH_SEED).to_numpy()
    return poisson_weights(hashes, inputs.resamples, inputs.seed)


@dataclass
class BootstrapCounts:
    """The item counts of every resample of the Poisson bootstrap of the users
    (:func:`mobeval.kernels.resampling.poisson_weights`): user ``u`` counts ``w[u, r]`` times in
    resample ``r``, its weights drawn from the hash of its id (Polars' ``Series.hash`` with
    :data:`USER_HASH_SEED`), so they are known as soon as its lists are read, whatever the
    chunking, the row order or the engine. ``items`` (sorted) and ``counts`` (int64[items,
    resamples]): exact integers, merged exactly; memory the items times the resamples."""

    items: pl.Series | None = None
    counts: np.ndarray | None = None

    def add(self, head: pl.DataFrame, inputs: PopulationInputs) -> None:
        """Fold a chunk's first-``k`` rows (``user_id``, ``item_id``)."""
        pairs = head.group_by("user_id", "item_id").len("count")
        users = pairs["user_id"].unique().sort()
        items = pairs["item_id"].unique().sort()
        weights = user_weights(users, inputs)
        counts = weighted_counts(
            users.search_sorted(pairs["user_id"]).to_numpy().astype(np.int64),
            items.search_sorted(pairs["item_id"]).to_numpy().astype(np.int64),
            pairs["count"].cast(pl.Int64).to_numpy(),
            weights,
            items.len(),
        )
        self.merge(BootstrapCounts(items, counts))

    def merge(self, other: BootstrapCounts) -> None:
        """Add another chunk's (or partition's) counts, item by item."""
        if self.items is None:
            self.items, self.counts = other.items, other.counts
            return
        items = pl.concat([self.items, other.items]).unique().sort()
        counts = np.zeros((items.len(), self.counts.shape[1]), dtype=np.int64)
        for part in (self, other):
            counts[items.search_sorted(part.items).to_numpy()] += part.counts
        self.items, self.counts = items, counts


def _scored_items(firsts: pl.DataFrame, ratings: pl.DataFrame) -> pl.DataFrame:
    """Each (user, item) of the lists once (``firsts``: :func:`_first_of_each_item`), in their
    order, with its ``score`` and whether the user rated it (``positive``)."""
    return firsts.join(
        ratings.select("user_id", "item_id", pl.lit(True).alias("positive")),
        on=["user_id", "item_id"],
        how="left",
        maintain_order="left",
    ).with_columns(pl.col("positive").fill_null(False))


def _first_of_each_item(lists: pl.DataFrame, offsets: np.ndarray) -> pl.DataFrame:
    """Each (user, item)'s first row of ``lists`` (``user_id``, ``item_id``, ``score``,
    ``_position``; ``offsets``: its users' blocks), in their order: all of them where no list
    repeats an item (one counting pass, :func:`~mobeval.kernels.ranks.entry_counts`, where
    Polars' ``unique`` hashes every pair)."""
    lists = lists.select("user_id", "item_id", "score", "_position")
    items = R.as_given(lists.select("item_id"))[0]
    if int(entry_counts(offsets, items, None).sum()) == lists.height:
        return lists
    return lists.unique(["user_id", "item_id"], keep="first", maintain_order=True)


#: auc's budget: the most rows (distinct scores, 24 bytes each) :class:`ScoreCounts` holds in
#: memory before it spills them to a file, as many as a default chunk's rows (48 MB).
AUC_TABLE_ROWS = 2_000_000


class ScoreCounts:
    """auc's sufficient statistics: per distinct score of the scored pairs, its positives and
    negatives, as a :class:`~mobeval.metrics.tallies.Tally` of rows ``key, positives,
    negatives`` (the key :func:`~mobeval.kernels.auc.score_keys`, in the scores' order; integer
    counts), so chunks and partitions fold exactly in any order.

    Memory: at most :data:`AUC_TABLE_ROWS` rows of 24 bytes whatever the input; beyond, the
    tally spills sorted runs to its scratch folder, removed when the value is taken.
    :meth:`auc` reads them back in key order (:func:`~mobeval.metrics.tallies.aligned_blocks`),
    ``N_below`` carried across blocks. The Spark engine, whose partitions' folds reach the driver
    whole, refuses ``auc`` (:data:`mobeval.metrics.recs_population.LOCAL_ENGINE_FAMILIES`)."""

    def __init__(self) -> None:
        self._tally = _score_tally()

    def add(self, scores: np.ndarray, positive: pl.Series) -> None:
        """Fold a chunk's scored pairs (``positive``: Boolean, one per score)."""
        positives = positive.cast(pl.Int64).to_numpy()
        rows = np.column_stack([score_keys(scores), positives, 1 - positives])
        self._tally.add(Tally(1, collapse(rows, 1)))

    def merge(self, other: ScoreCounts) -> None:
        """Fold another chunk's (or partition's) counts; ``other``'s runs let go."""
        self._tally.add(other._tally)
        other._tally = _score_tally()

    @property
    def rows_in_memory(self) -> int:
        """The rows held in memory (at most :data:`AUC_TABLE_ROWS`)."""
        return self._tally.rows_in_memory

    def __setstate__(self, state: dict) -> None:
        """Unpickled (a tally pickles whole, with the tallies' budget): auc's budget again."""
        self._tally = state["_tally"]
        self._tally.budget = AUC_TABLE_ROWS

    def auc(self) -> tuple[float, int]:
        """``(AUC, n)``: ``2 U / (2 P N)``, one division of exact integers (NaN without a
        positive or a negative), and ``n = P + N``, the pairs scored (the runs let go)."""
        doubled, positives, negatives = 0, 0, 0
        for (block,) in aligned_blocks([self._tally]):
            part, negatives = twice_u(block[:, 1], block[:, 2], negatives)
            doubled += part
            positives += int(block[:, 1].sum())
        self._tally = _score_tally()
        if 2 * positives * negatives >= 2**63:
            raise InputError(
                f"auc counts 2 P N = {2 * positives * negatives} pairs' halves in 64-bit "
                "integers: more than 2**63, too many scored pairs for one value"
            )
        if not positives or not negatives:
            return float("nan"), positives + negatives
        return doubled / (2 * positives * negatives), positives + negatives


def _score_tally() -> Tally:
    """An empty tally of auc's rows (one key column) with auc's budget."""
    tally = Tally(1)
    tally.budget = AUC_TABLE_ROWS
    return tally


def _ranked(metric: str, side: str, counts: pl.DataFrame | None) -> pl.DataFrame | None:
    """``counts`` (item_id, count) by count, descending, ties by item id, with their
    ``position`` (0, 1, ...): the long tail of one side."""
    if counts is None:
        return None
    ranked = counts.sort(["count", "item_id"], descending=[True, False])
    return ranked.select(
        pl.lit(metric).alias("metric"),
        pl.lit(side).alias("side"),
        pl.int_range(pl.len(), dtype=pl.Int64).alias("position"),
        "item_id",
        "count",
    )


def _concat(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """``frames`` one under the other, their item ids as strings where their types differ (the
    ratings' and the lists' items)."""
    if len({f.schema["item_id"] for f in frames}) > 1:
        frames = [f.with_columns(pl.col("item_id").cast(pl.String)) for f in frames]
    return pl.concat(frames)


_SIDES = ("recs", "profile")
#: The per-user shares of the training popularity (:meth:`PopulationCounts._shares`).
_SHARE_FAMILIES = ("avg_popularity", "tail_percentage")
_AUC_SUMS = ("weighted", "positives")


def _mean(totals: dict, counts: dict, name: str) -> float:
    """Column ``name``'s mean over its values (NaN without one)."""
    return totals[name] / counts[name] if counts[name] else float("nan")


def _delta_gap(totals: dict, counts: dict, recs: str, profile: str) -> float:
    """``(GAP_recs - GAP_profile) / GAP_profile``, 0 when ``GAP_profile = 0`` (ClayRS's
    ``calculate_delta_gap``); NaN for a group none of whose users has a list (ClayRS leaves the
    group out with a warning)."""
    n = counts[recs]
    if n == 0:
        return float("nan")
    recs_gap, profile_gap = totals[recs] / n, totals[profile] / n
    return (recs_gap - profile_gap) / profile_gap if profile_gap != 0 else 0.0
