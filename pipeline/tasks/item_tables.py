"""The item tables of novelty, diversity and serendipity, read once before the lists.

* :func:`train_tables`: the training interactions (``user_id``, ``item_id``, one row per
  interaction) as a CSR table of each user's items in the training rows' order (serendipity),
  per item its rows, its distinct users and Elliot's long tail, and, on first use, the items'
  co-occurrence counts (:attr:`TrainTables.pairs`). Memory: 4 bytes per training row, a few
  columns per item and per user, 8 bytes per item pair seen together; while the file is read,
  its two columns and about 24 bytes a row.
* :func:`feature_tables`: the items' features (``--item-features``): one row per item and
  ``category`` (a category set, its 0/1 vector), or a vector per item (a list column
  ``features``, or every other column a number). Memory: 8 bytes per item and dimension.

A bad file is named before Numba is imported: the tables' two counting kernels
(:mod:`mobeval.kernels.buckets`) load after the file is read and checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import polars as pl

from mobeval.errors import InputError
from mobeval.io.inputs import as_source
from mobeval.io.sources import columns_present, require_ids

#: Elliot's short head (``Popularity(pop_ratio=0.8)``): the most popular items holding this share
#: of the distinct training (user, item) pairs; the long tail is every other training item.
ELLIOT_SHORT_HEAD = 0.8


@dataclass(frozen=True)
class TrainTables:
    """The training interactions by item and by user (see the module docstring).

    ``items``: ``item_id``, ``row`` (0..), ``rows`` (its training rows), ``users`` (its distinct
    users), ``long_tail`` (Elliot's); ``users``: ``user_id``, ``row``. ``user_ptr`` cuts
    ``user_items`` (each user's training rows' items, int32 rows of ``items``, in file order)."""

    items: pl.DataFrame
    users: pl.DataFrame
    user_ptr: np.ndarray
    user_items: np.ndarray
    rows: int  # the training rows (Microsoft Recommenders' novelty denominator)
    label: str | None = None  # the file, for messages

    @cached_property
    def pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(ptr, cols, counts)``: the co-occurrence counts ``n_ij`` (``i <= j``) of
        :func:`mobeval.kernels.cooccurrence.cooccurrence`, built once, on first use."""
        from mobeval.kernels.cooccurrence import cooccurrence

        ptr, cols, counts, largest = cooccurrence(self.user_ptr, self.user_items, self.items.height)
        if largest > np.iinfo(np.int32).max:
            raise InputError(
                f"two items co-occur {largest} times, more than the co-occurrence table holds "
                "(2**31 - 1)",
                path=self.label,
                column="item_id",
            )
        return ptr, cols, counts

    @property
    def root(self) -> np.ndarray:
        """``sqrt(c_i)`` of each item's training rows (Microsoft Recommenders' ``count ** 0.5``)."""
        return np.sqrt(self.items["rows"].to_numpy().astype(np.float64))


@dataclass(frozen=True)
class FeatureTables:
    """Each described item's row (``items``: ``item_id``, ``row``) of ``vectors`` (float64, one
    row an item) and its norm ``sqrt(v . v)``."""

    items: pl.DataFrame
    vectors: np.ndarray
    norms: np.ndarray


def train_tables(data: object, *, pairs: bool = False) -> TrainTables:
    """:class:`TrainTables` of the training interactions (a path or a frame with ``user_id``
    and ``item_id``); ``pairs``: the co-occurrence counts built now, not on first use, so that
    they travel with the tables. The Spark engine ships the tables to its tasks pickled (with
    the job, which PySpark broadcasts once it is large): built here, on the driver, the table is
    built once, not by every task."""
    source = as_source(data)
    frame = read_columns(source, ("user_id", "item_id"))
    if frame.height == 0:
        raise InputError("the training interactions are empty", path=source.label)
    from mobeval.kernels import buckets  # Numba: after the checks

    rows = frame.height
    ids, item = _rows_of(frame.drop_in_place("item_id"))  # each column let go once coded
    user_ids, user = _rows_of(frame.drop_in_place("user_id"))
    users = pl.DataFrame({"user_id": user_ids})
    user_items, user_ptr = buckets.grouped_values(user, users.height, item.astype(np.int32))
    del item, user
    items = pl.DataFrame(
        {
            "item_id": ids,
            "rows": np.bincount(user_items, minlength=len(ids)).astype(np.int64),
            "users": buckets.groups_holding(user_ptr, user_items, len(ids)),
        }
    )
    items = items.with_row_index("row").with_columns(pl.col("row").cast(pl.Int64))
    users = users.with_row_index("row").with_columns(pl.col("row").cast(pl.Int64))
    tables = TrainTables(
        items.with_columns(_elliot_long_tail(items)),
        users,
        user_ptr,
        user_items,
        rows,
        source.label,
    )
    if pairs:
        tables.pairs  # noqa: B018 - cached in the instance, pickled with it
    return tables


def _rows_of(values: pl.Series) -> tuple[pl.Series, np.ndarray]:
    """``values``' distinct values, ascending, and each value's row among them (int64). Integers
    spanning no more values than there are (ids numbered from a base) are counted over their
    range, chunk by chunk (:func:`~mobeval.kernels.buckets.rows_over_range`): the values present
    are the distinct ones, their running count each one's row (10 M training rows' item ids: 0.1
    s, against 1.3 s for their distinct values hashed and sorted, then searched); others are
    searched in their distinct values."""
    if values.dtype.is_integer() and values.dtype != pl.UInt64:
        low, high = values.min(), values.max()
        if high - low < max(len(values), 1 << 16):  # Python ints: no overflow
            from mobeval.kernels.buckets import rows_over_range

            parts = [chunk.to_numpy() for chunk in values.get_chunks()]  # no copy: no nulls
            offsets, rows = rows_over_range(parts, low, high - low + 1)
            return pl.Series(values.name, offsets + low, dtype=values.dtype), rows
    distinct = values.unique().sort()
    return distinct, distinct.search_sorted(values).to_numpy().astype(np.int64, copy=False)


def _elliot_long_tail(items: pl.DataFrame) -> pl.Expr:
    """Elliot's ``Popularity.get_long_tail``: the items sorted by distinct users, descending
    (ties by item id), make the short head up to and including the one whose running sum
    reaches :data:`ELLIOT_SHORT_HEAD` of the distinct pairs; the long tail is the rest."""
    ranked = items.sort(["users", "item_id"], descending=[True, False])
    limit = int(ranked["users"].sum()) * ELLIOT_SHORT_HEAD
    reached = (ranked["users"].cum_sum() >= limit).to_numpy()
    head = int(np.argmax(reached)) + 1 if reached.any() else ranked.height
    tail = ranked["item_id"].slice(head)
    return pl.col("item_id").is_in(tail.implode()).alias("long_tail")


def feature_tables(data: object) -> FeatureTables:
    """:class:`FeatureTables` of an item-features file: ``item_id`` and ``category`` (one row
    per item and category: its 0/1 vector over the categories), a list column ``features``, or
    numeric columns (each a dimension). An item twice (vectors), a null, lists of different
    lengths or an all-zero vector (its cosine is undefined) is an InputError naming the file,
    the column and the first item."""
    source = as_source(data)
    schema = source.schema()
    if "item_id" not in schema:
        raise InputError(
            f"missing column; {columns_present(schema)}", path=source.label, column="item_id"
        )
    if "category" in schema:
        frame = read_columns(source, ("item_id", "category"))
        frame = frame.unique(maintain_order=True)
        categories = frame["category"].unique().sort()
        items = frame.select(pl.col("item_id").unique().sort()).with_row_index("row")
        vectors = np.zeros((items.height, categories.len()))
        rows = frame["item_id"].replace_strict(items["item_id"], items["row"]).to_numpy()
        columns = categories.search_sorted(frame["category"]).to_numpy()
        vectors[rows, columns] = 1.0
        return _checked(source, items, vectors, "category")
    listed = "features" in schema and isinstance(schema["features"], pl.List | pl.Array)
    names = ["features"] if listed else [c for c in schema if c != "item_id"]
    bad = [
        c
        for c in names
        if not (schema[c].is_numeric() or isinstance(schema[c], pl.List | pl.Array))
    ]
    if bad or not names:
        raise InputError(
            "item features are a category column, a list column 'features' or numeric columns; "
            f"{columns_present(schema)}",
            path=source.label,
            column=bad[0] if bad else None,
        )
    frame = read_columns(source, ("item_id", *names))
    if listed:  # a fixed-size list (Arrow's, Polars' Array) as a list of its length
        frame = frame.with_columns(pl.col("features").cast(pl.List(pl.Float64)))
    twice = frame["item_id"].is_duplicated()
    if twice.any():
        raise InputError(
            "an item has two feature vectors",
            path=source.label,
            column="item_id",
            key=frame["item_id"].filter(twice)[0],
        )
    frame = frame.sort("item_id")
    if listed:
        lengths = frame["features"].list.len()
        if lengths.n_unique() > 1:
            raise InputError(
                f"feature vectors of different lengths ({lengths[0]} and another)",
                path=source.label,
                column="features",
                key=frame["item_id"].filter(lengths != lengths[0])[0],
            )
        vectors = np.asarray(frame["features"].to_list(), dtype=np.float64)
    else:
        vectors = frame.select(pl.col(names).cast(pl.Float64)).to_numpy()
    items = frame.select("item_id").with_row_index("row")
    return _checked(source, items, vectors.reshape(frame.height, -1), names[0])


def _checked(source, items: pl.DataFrame, vectors: np.ndarray, column: str) -> FeatureTables:
    """The tables, each vector checked finite and not all zero."""
    norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
    bad = ~np.isfinite(norms) | (norms == 0)
    if bad.any():
        raise InputError(
            "an item's feature vector is all zeros or not finite (its cosine is undefined)",
            path=source.label,
            column=column,
            key=items["item_id"][int(np.argmax(bad))],
        )
    return FeatureTables(items.with_columns(pl.col("row").cast(pl.Int64)), vectors, norms)


def read_columns(source, columns) -> pl.DataFrame:
    """``columns`` of a source, whole, checked present, ids exact and without nulls."""
    schema = source.schema()
    for column in columns:
        if column not in schema:
            raise InputError(
                f"missing column; {columns_present(schema)}", path=source.label, column=column
            )
    batches = list(source.iter_batches(list(columns), 1 << 20))
    frame = pl.concat(batches) if batches else pl.DataFrame(schema={c: schema[c] for c in columns})
    require_ids(schema, [c for c in columns if c.endswith("_id")], source.label, frame)
    for column in columns:
        if frame[column].null_count():
            row = int(frame[column].is_null().arg_true()[0])
            raise InputError("null value", path=source.label, column=column, key=f"row {row}")
    return frame
