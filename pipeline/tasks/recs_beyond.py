"""Novelty, diversity and serendipity of a chunk of whole users' lists: one value per user.

:func:`user_values` gives, per user of the chunk (ascending), each per-user metric of
:data:`mobeval.metrics.recs_population.BEYOND_USER_FAMILIES` (NaN where its reference leaves the
user out); :class:`mobeval.tasks.recs_population.PopulationCounts` folds them into its exact sums,
so the system value (the mean over the users with a value) has the same bits for any chunking.
:func:`novelty` is Microsoft Recommenders' novelty of the item counts. Memory: the chunk, the
item tables (:mod:`mobeval.tasks.item_tables`) and, besides, a block of :data:`BLOCK_ROWS` list
rows at a time (its sorted copy and a few numbers a row), whatever the chunk's size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import polars as pl

from mobeval.kernels import similarity as K
from mobeval.tasks.item_tables import FeatureTables, TrainTables
from mobeval.tasks.recs_inputs import TrainItems, ids_of_one_type

#: The list rows a block of whole users holds (:func:`user_blocks`): the per-row arrays of
#: :func:`user_values` (a sorted copy, item rows, orders, relevance) are a block's, not the chunk's.
BLOCK_ROWS = 100_000


def user_values(lists: pl.DataFrame, ratings: pl.DataFrame, inputs) -> dict[str, np.ndarray]:
    """Per user of ``lists`` (``user_id``, ``item_id``, ``_position``), ascending, each metric of
    ``inputs.metrics`` (a :class:`~mobeval.tasks.recs_inputs.PopulationInputs`) computed here;
    ``ratings`` (``user_id``, ``item_id``, ``rating``) give EPC's and EFD's relevance."""
    from mobeval.metrics.recs_population import BEYOND_USER_FAMILIES

    metrics = [m for m in inputs.metrics if m.family in BEYOND_USER_FAMILIES]
    if not metrics:
        return {}
    train, features = inputs.train_tables, inputs.features
    tables = profiles = None
    if any(m.family in ("diversity", "serendipity") for m in metrics):
        tables = _similarity_tables(inputs.convention.item_similarity, train, features)
    if any(m.family == "serendipity" for m in metrics):
        history = train.user_items  # the training rows' items, as rows of the tables
        if tables[0] is not train.items:
            history = _rows(train.items.select("item_id"), tables[0])[history]
        users = pl.DataFrame({"item_id": lists["user_id"].unique().sort()})
        profiles = history, _rows(users, train.users.rename({"user_id": "item_id"}))
    parts = [
        _block_values(block, block_ratings, inputs, metrics, tables, profiles, first)
        for first, block, block_ratings in user_blocks(lists, ratings, BLOCK_ROWS)
    ]
    return {m.name: np.concatenate([part[m.name] for part in parts]) for m in metrics}


def user_blocks(lists: pl.DataFrame, ratings: pl.DataFrame, rows: int):
    """``lists`` cut into blocks of whole users, ascending, each with its users' ``ratings``:
    ``(first, lists, ratings)``, one at a time (``first``: the position of the block's first
    user among the users of ``lists``, ascending). A block holds the users whose first row (users in
    order) falls in one stretch of ``rows`` rows: ``rows`` rows and at most one list more. At
    least one block, empty for empty ``lists``."""
    sizes = lists.group_by("user_id").len().sort("user_id")
    if sizes.height == 0:
        yield 0, lists, ratings
        return
    length = sizes["len"].to_numpy()
    block = (np.cumsum(length) - length) // rows
    first = np.flatnonzero(np.diff(block, prepend=-1))
    last = np.append(first[1:], sizes.height) - 1
    users = sizes["user_id"]
    for a, b in zip(first, last, strict=True):
        these = pl.col("user_id").is_between(users[int(a)], users[int(b)])
        yield int(a), lists.filter(these), ratings.filter(these)


def _block_values(lists, ratings, inputs, metrics, tables, profiles, first) -> dict:
    """:func:`user_values` of a block of whole users, the ``first`` of the chunk's on (``tables``:
    the similarity's; ``profiles``: the training rows' items as rows of them and each of the
    chunk's users' row of the training users, -1 for none; None where no metric reads them)."""
    lists = lists.sort(["user_id", "_position"])
    counts = lists.group_by("user_id", maintain_order=True).len()["len"].to_numpy()
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    train = inputs.train_tables
    out, expected = {}, None
    for m in metrics:
        cut = -1 if m.k is None else m.k
        if m.family in ("diversity", "serendipity"):
            index = _rows(lists, tables[0])
            order = lists["item_id"].rank("dense").cast(pl.Int64).to_numpy()
            if m.family == "diversity":
                out[m.name] = K.unit_diversity(offsets, cut, index, order, tables[1:])
                continue
            history, profile = profiles
            out[m.name] = K.unit_serendipity(
                offsets,
                cut,
                index,
                order,
                _relevance(lists, ratings, inputs),
                profile[first : first + len(counts)],
                train.user_ptr,
                history,
                tables[1:],
            )
        elif m.family in ("epc", "efd"):
            expected = expected or _ExpectedNovelty.of(lists, ratings, inputs)
            out[m.name] = expected.values(offsets, cut, m.family)
        else:  # aplt, aclt: the distinct items of the first k in Elliot's long tail
            head = lists.with_columns(
                pl.col("_position").rank("ordinal").over("user_id").alias("_rank")
            ).filter(pl.lit(m.k is None) | (pl.col("_rank") <= (m.k or 0)))
            head, items = ids_of_one_type(head, train.items)
            tail = items.filter("long_tail")["item_id"]
            in_tail = pl.col("item_id").is_in(tail.implode())  # once, not once per user
            table = (
                head.with_columns(in_tail.alias("_tail"))
                .group_by("user_id", maintain_order=True)
                .agg(
                    pl.col("item_id").filter("_tail").n_unique().alias("tail"),
                    pl.len().alias("length"),
                )
            )
            tail_items = table["tail"].to_numpy().astype(np.float64)
            out[m.name] = (
                tail_items if m.family == "aclt" else tail_items / table["length"].to_numpy()
            )
    return out


def _similarity_tables(kind: str, train: TrainTables | None, features: FeatureTables | None):
    """``(items, kind, pair_ptr, pair_cols, pair_counts, root, vectors, norms)`` of the kernels'
    similarity: the training co-occurrences or the feature vectors (the other's arrays empty)."""
    empty_i, empty_f = np.zeros(1, dtype=np.int32), np.zeros(0)
    if kind == "features":
        return (
            features.items,
            K.VECTORS,
            np.zeros(1, dtype=np.int64),
            empty_i,
            empty_i,
            empty_f,
            features.vectors,
            features.norms,
        )
    return (
        train.items,
        K.COOCCURRENCE,
        *train.pairs,
        train.root,
        np.zeros((0, 1)),
        empty_f,
    )


def _rows(frame: pl.DataFrame, items: pl.DataFrame) -> np.ndarray:
    """Each ``item_id`` of ``frame``'s row in ``items`` (``item_id`` ascending, ``row``), -1 if
    absent. Integer ids no larger than :data:`DENSE_IDS` times the items index a NumPy table
    of the rows (built here: as many entries as the largest id, no hash table); other ids go
    through Polars' ``replace_strict``."""
    frame, items = ids_of_one_type(frame, items)
    ids = items["item_id"]
    if ids.dtype.is_integer() and ids.len() and 0 <= ids.min() <= ids.max() < DENSE_IDS * ids.len():
        table = np.full(ids.max() + 1, -1, dtype=np.int64)
        table[ids.to_numpy()] = items["row"].to_numpy()
        wanted = frame["item_id"].to_numpy()
        inside = (wanted >= 0) & (wanted < len(table))
        return np.where(inside, table[np.where(inside, wanted, 0)], -1)
    return (
        frame["item_id"]
        .replace_strict(ids, items["row"], default=-1, return_dtype=pl.Int64)
        .to_numpy()
    )


#: :func:`_rows` indexes a table by integer ids up to this many times the items (8 bytes each).
DENSE_IDS = 4


@dataclass(frozen=True)
class _ExpectedNovelty:
    """What Elliot's EPC and EFD share in a chunk (sorted by user and list position): each list
    row's item as a row of the training items (-1 outside them) and its relevance, and which
    users rated an item relevant; computed once for both metrics."""

    rows: np.ndarray
    relevant: np.ndarray
    counted: np.ndarray
    train: TrainTables

    @classmethod
    def of(cls, lists: pl.DataFrame, ratings: pl.DataFrame, inputs) -> _ExpectedNovelty:
        relevant, pairs = relevant_rows(lists, ratings, inputs.relevance_threshold)
        users = lists["user_id"].unique(maintain_order=True)
        counted = users.is_in(pairs["user_id"].implode()).to_numpy()
        train = inputs.train_tables
        return cls(_rows(lists, train.items), relevant, counted, train)

    def values(self, offsets: np.ndarray, cut: int, family: str) -> np.ndarray:
        """EPC or EFD per user (NaN for a user without a relevant rating)."""
        epc, efd, efd_unknown = K.elliot_novelty(
            self.train.items["users"].to_numpy().astype(np.float64),
            float(self.train.users.height),
        )
        novelty, unknown = (epc, 1.0) if family == "epc" else (efd, efd_unknown)
        item_novelty = np.where(self.rows >= 0, novelty[np.maximum(self.rows, 0)], unknown)
        return K.unit_expected_novelty(offsets, cut, self.relevant, item_novelty, self.counted)


def _relevance(lists: pl.DataFrame, ratings: pl.DataFrame, inputs) -> np.ndarray:
    """Serendipity's ``rel`` of each list row: 1, or (``serendipity_relevance`` ``ratings``)
    whether the user's rating of the item is relevant."""
    if inputs.convention.serendipity_relevance == "one":
        return np.ones(lists.height)
    return relevant_rows(lists, ratings, inputs.relevance_threshold)[0]


def relevant_pairs(ratings: pl.DataFrame, threshold) -> pl.DataFrame:
    """The (user, item) pairs rated relevant, each once, with ``_relevant`` 1.0 (Elliot's
    ``BinaryRelevance``: rating >= ``threshold``; ``user_mean``: the user's mean rating; None:
    every rated item)."""
    rating = pl.col("rating")
    if threshold is None:
        keep = pl.lit(True)
    elif threshold == "user_mean":
        keep = rating >= rating.mean().over("user_id")
    else:
        keep = rating >= float(threshold)
    return (
        ratings.filter(keep)
        .select("user_id", "item_id", pl.lit(1.0).alias("_relevant"))
        .unique(["user_id", "item_id"])
    )


def relevant_rows(lists: pl.DataFrame, ratings: pl.DataFrame, threshold):
    """``(rel, pairs)``: per list row 1.0 where the user's rating of the item is relevant
    (:func:`relevant_pairs`), else 0.0, and the relevant pairs."""
    pairs = relevant_pairs(ratings, threshold)
    flagged = lists.join(pairs, on=["user_id", "item_id"], how="left", maintain_order="left")
    return flagged["_relevant"].fill_null(0.0).to_numpy(), pairs


def novelty(counts: pl.DataFrame, train: TrainTables | TrainItems) -> float:
    """Microsoft Recommenders' ``novelty``: ``sum_i n_i nov_i / sum_i n_i``, ``n_i`` the item's
    count in the lists (``counts``: ``item_id``, ``count``), ``nov_i = -log2(c_i / N)`` of its
    ``c_i`` training rows out of ``N`` (an item outside them adds 0 to the sum, its rows still
    counted); the products' sum exact (``math.fsum``), one division. NaN without a list row."""
    total = int(counts["count"].sum())
    if total == 0:
        return float("nan")
    counts, items = ids_of_one_type(counts, train.items)
    known = counts.join(items.select("item_id", "rows"), on="item_id")
    nov = -np.log2(known["rows"].to_numpy() / train.rows)
    return math.fsum(known["count"].to_numpy() * nov) / total


def distributional_coverage(counts: np.ndarray) -> float:
    """Microsoft Recommenders' ``distributional_coverage``: ``-sum_i p_i log2 p_i``, ``p_i = n_i /
    sum n``, the sum exact (``math.fsum``). NaN without a list row."""
    total = int(counts.sum())
    if total == 0:
        return float("nan")
    p = counts[counts > 0] / total
    return -math.fsum(p * np.log2(p))
