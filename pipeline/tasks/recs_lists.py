"""A chunk of whole users as the flat per-user arrays of :mod:`mobeval.kernels.recs`: the
columns checked (present, no nulls, finite numbers), the item ids as int64 codes, each side's rows
grouped by user, the users' segments and offsets, and each list in its convention's order
(:mod:`mobeval.kernels.list_order`). :func:`mobeval.tasks.recs.score_recs_frame` calls them in
turn.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from mobeval.errors import InputError
from mobeval.io.chunking import sorted_by_key
from mobeval.io.sources import columns_present
from mobeval.kernels.blocks import readonly
from mobeval.kernels.chunk_checks import scan_rows
from mobeval.kernels.keys import segment_rows
from mobeval.kernels.list_order import ID_ASC, TEXT_DESC, list_heads, list_order
from mobeval.kernels.ranks import drop_repeated, entry_counts, segment_offsets
from mobeval.kernels.ranx_lists import ranx_lists, ranx_order
from mobeval.kernels.user_blocks import truth_order, user_blocks

SCORE_ORDERS = {"score_id_str_desc": TEXT_DESC, "score_id_asc": ID_ASC}
ITEM = "_item"  # the int64 item codes of :func:`item_codes`, carried through the sorts


def checked_columns(df: pl.DataFrame, cols: list[str], path: object | None) -> pl.DataFrame:
    """The needed columns, checked for presence and nulls."""
    names = df.columns
    missing = [c for c in cols if c not in names]
    if missing:
        raise InputError(f"missing column; {columns_present(names)}", path=path, column=missing[0])
    if names != cols:
        df = df.select(cols)
    for c in cols:
        if df[c].null_count():
            row = int(df[c].is_null().arg_true()[0])
            key = df["user_id"][row] if c != "user_id" else f"row {row}"
            raise InputError("null value", path=path, column=c, key=key)
    return df


def check_finite(df: pl.DataFrame, column: str, path: object | None) -> None:
    """``column`` numeric and finite, or an InputError naming the first value that is not (and
    its user and item). A text column is refused, naming its first value that is not a number
    when it holds one (a CSV column is typed text by Arrow when a value is not a number)."""
    if df.schema[column] == pl.String:
        numbers = pl.col(column).cast(pl.Float64, strict=False)
        text = df.filter(numbers.is_null() & pl.col(column).is_not_null())
        if len(text):
            raise InputError(
                f"must be numeric: '{text[column][0][:40]}' is not a number",
                path=path,
                column=column,
                key=(text["user_id"][0], text["item_id"][0]),
            )
    if not df.schema[column].is_numeric():
        raise InputError(f"must be numeric, not {df.schema[column]}", path=path, column=column)
    if df.schema[column].is_integer() or (
        df.schema[column] == pl.Float64 and np.isfinite(df[column].to_numpy()).all()
    ):
        return  # one pass over the values (the filter below builds a frame)
    bad = df.filter(~pl.col(column).cast(pl.Float64).is_finite())
    if len(bad):
        raise not_finite(bad, 0, column, path)


def not_finite(df: pl.DataFrame, row: int, column: str, path: object | None) -> InputError:
    """The error for ``df``'s ``row``, whose ``column`` is NaN or infinite (its user and item)."""
    key = (df["user_id"][row], df["item_id"][row])
    return InputError("NaN or infinite value", path=path, column=column, key=key)


def checked_rows(
    df: pl.DataFrame, column: str | None, path: object | None, order: bool = True
) -> bool | None:
    """``column`` (None: none) checked as :func:`check_finite` checks it; with ``order``,
    whether the rows are grouped by user, ascending (the user column never decreases; else
    None). Integer users (within int64) and a float64 or integer ``column``: both in one pass
    over the columns' arrays (:func:`~mobeval.kernels.chunk_checks.scan_rows`), the users left
    out when their column is flagged sorted (Polars' flag: a sorted stream's chunks come so
    from the engine, which checked their order as it cut them); other types: Polars, a pass
    for each."""
    users = df["user_id"]
    kind = None if column is None else df.schema[column]
    if (
        not users.dtype.is_integer()
        or users.dtype == pl.UInt64
        or not (kind is None or kind == pl.Float64 or kind.is_integer())
    ):
        if column is not None:
            check_finite(df, column, path)
        return users.is_sorted() if order else None
    values = df[column].to_numpy() if kind == pl.Float64 else None
    known = not order or users.flags["SORTED_ASC"]
    decreasing, first_not_finite = scan_rows(None if known else users.to_numpy(), values)
    if first_not_finite >= 0:
        raise not_finite(df, first_not_finite, column, path)
    return (decreasing < 0) if order else None


def common_id_types(recs: pl.DataFrame, ratings: pl.DataFrame):
    """Cast an id column to String on both sides when the two sides type it differently."""
    kinds = recs.schema, ratings.schema
    for c in ("user_id", "item_id"):
        if kinds[0][c] != kinds[1][c]:
            recs = recs.with_columns(pl.col(c).cast(pl.String))
            ratings = ratings.with_columns(pl.col(c).cast(pl.String))
    return recs, ratings


def by_user(recs: pl.DataFrame, grouped: bool | None = None) -> pl.DataFrame:
    """``recs`` grouped by user (ascending), each user's rows in file order: as they are when
    the user column is sorted already (a sorted stream's chunks; ``grouped``: known to be, or
    not: :func:`checked_rows`), else sorted stably (integer users: their runs sorted, not their
    rows, :func:`mobeval.io.chunking.sorted_by_key`; a chunk of a grouped stream, 1 M rows of
    10,000 users, in a quarter of Polars' sort's time)."""
    if recs["user_id"].is_sorted() if grouped is None else grouped:
        return recs
    return sorted_by_key(recs, ["user_id"])


def by_user_item(ratings: pl.DataFrame) -> pl.DataFrame:
    """``ratings`` sorted by user, then item (its ``ITEM`` codes order as its ids): as they
    are when they are in that order already (as a ratings file is often written), else sorted."""
    user, item = pl.col("user_id"), pl.col(ITEM)
    later = (user > user.shift()) | ((user == user.shift()) & (item >= item.shift()))
    if ratings.select(later.slice(1).all()).item():
        return ratings
    return ratings.sort(["user_id", "item_id"])


def ordered(recs: pl.DataFrame, order: str, limit: int = -1) -> pl.DataFrame:
    """Rows grouped by user (ascending), each user's rows in list order; with a ``limit`` (0 or
    more), only each list's first ``limit`` rows, and only those put in order (:func:`lists`: a
    list of 100 rows in no order, cut at 10, costs a tenth of its whole sort; under a score
    order only those rows are written, :func:`~mobeval.kernels.list_order.list_heads`)."""
    recs = by_user(recs)
    offsets = user_offsets(recs)
    if limit >= 0 and order in SCORE_ORDERS:
        mode, text = score_order(recs, order)
        items, scores = as_given(recs)
        return recs[list_heads(offsets, scores, items, mode, text, limit)]
    rows = lists(recs, order, offsets, limit, with_rows=True)[0]
    if limit >= 0:
        lengths = np.diff(offsets)
        if (lengths > limit).any():
            first = segment_rows(offsets[:-1], np.minimum(lengths, limit))
            rows = first if rows is None else rows[first]
    return recs if rows is None else recs[rows]


def lists(
    recs: pl.DataFrame, order: str, rec_off: np.ndarray, limit: int = -1, with_rows: bool = False
) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """``(rows, items, scores)`` of ``recs`` (grouped by user, ascending; ``rec_off``: the
    offsets of its users' blocks, an empty block allowed) with each user's rows
    in list order inside the user's block (so the user column stays as it is): the row
    permutation (None: the rows are in that order already), the int64 item codes (``ITEM``, or
    :func:`item_codes` of ``item_id``) and the float64 scores (0 without a score column) in
    that order. Score orders: :func:`~mobeval.kernels.list_order.list_order` (trec_eval: score
    descending, ties by item id as text descending), which sorts the arrays themselves, the ties
    from position ``limit`` on where the scores never increase left as they are (-1: none).
    ranx's order (:func:`~mobeval.kernels.ranx_lists.ranx_order`) puts each list's first ``limit``
    rows in order (-1: all), and with a ``limit`` gives no rows unless ``with_rows`` (None:
    trec_eval's measures and an error's message take the rows of whole lists, the population
    metrics those of the first ``limit`` positions)."""
    items, scores = as_given(recs)
    if order in SCORE_ORDERS:
        mode, text = score_order(recs, order)
        ordered = list_order(rec_off, scores, items, mode, text, limit)
        return (None, items, scores) if ordered is None else ordered
    if order == "ranx":
        return ranx_order(rec_off, scores, items, limit, rows=limit < 0 or with_rows)
    rows = None
    if order == "rank":
        rows = recs.select(pl.arg_sort_by(["user_id", "rank"], maintain_order=True))
        rows = rows.to_series().to_numpy()
    return (None, items, scores) if rows is None else (rows, items[rows], scores[rows])


def ranx_runs(
    recs: pl.DataFrame,
    rec_off: np.ndarray,
    limit: int,
    drop: bool,
    heads: bool,
    not_finite: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray]:
    """``(offsets, rows, items, scores)``: ``recs``'s lists (grouped by user, ascending;
    ``rec_off``: the offsets of its users' blocks) as ranx holds them in its ``Run``
    (:func:`~mobeval.kernels.ranx_lists.ranx_lists`): under ``drop`` (``duplicates="drop"``) one
    entry per item, its first row's place and its last row's score, in the same pass; each
    list's first ``limit`` entries (-1: all) in ranx's order, and with ``heads`` only those (the
    metric kernel reads no further), else the others after them. ``rows``: the row of ``recs``
    each entry comes from, given under no limit only (trec_eval's measures take the rows).
    ``not_finite`` (a flag a user, or None): set where a list holds a NaN or infinite score."""
    items, scores = as_given(recs)
    return ranx_lists(
        rec_off, scores, items, limit, drop=drop, rows=limit < 0, heads=heads, not_finite=not_finite
    )


def as_given(recs: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """``(items, scores)`` of ``recs`` in its rows' order: the int64 item codes (``ITEM``, or
    :func:`item_codes` of ``item_id``) and the float64 scores (0 without a score column)."""
    ids = recs["item_id"]
    items = recs[ITEM].to_numpy() if ITEM in recs.columns else item_codes(ids, ids[:0])[0]
    if "score" not in recs.columns:
        return items, no_scores(recs.height)
    return items, recs["score"].to_numpy().astype(np.float64, copy=False)


_ZEROS = readonly(np.zeros(0), np.float64)


def no_scores(n: int) -> np.ndarray:
    """``n`` zeros, read-only: the scores of lists without a score column. A view of one
    zeroed array, grown when a chunk is longer than any before (not 8 MB zeroed again a chunk
    of 1 M rows)."""
    global _ZEROS
    if len(_ZEROS) < n:
        _ZEROS = readonly(np.zeros(n), np.float64)
    return _ZEROS[:n]


def score_order(recs: pl.DataFrame, order: str) -> tuple[int, bool]:
    """``(mode, ids_text)`` of a score order (:data:`SCORE_ORDERS`) for
    :mod:`mobeval.kernels.list_order`: integer ids compared as their decimal text under
    ``TEXT_DESC``."""
    return SCORE_ORDERS[order], recs["item_id"].dtype.is_integer()


def user_offsets(recs: pl.DataFrame) -> np.ndarray:
    """Offsets of the users' row blocks of ``recs`` (grouped by user)."""
    return segment_offsets(recs["user_id"].rle().struct.field("len").to_numpy())


def one_row_per_item(recs: pl.DataFrame, rec_off: np.ndarray) -> tuple[pl.DataFrame, np.ndarray]:
    """``duplicates="drop"``: one row per (user, item), as a dict filled row by row holds a run
    (``d[item] = row``: ranx ``Run.from_df`` / ``from_file``, pytrec_eval, ir_measures): the values
    of the item's LAST row, at the place of its FIRST row; the later copies vanish and the rows
    after them move up. ``recs`` is grouped by user, each user's rows in file order, its items'
    codes in ``ITEM``; ``rec_off``: the offsets of its users' blocks. Returns the rows kept and
    their blocks' offsets: ``recs`` and ``rec_off`` themselves when no list repeats an item (one
    counting pass, :func:`~mobeval.kernels.ranks.entry_counts`), else the rows that
    next-location's kernel keeps of each user's row numbers
    (:func:`~mobeval.kernels.ranks.drop_repeated`)."""
    items = recs[ITEM].to_numpy()
    counts = entry_counts(rec_off, items, None)
    if int(counts.sum()) == recs.height:
        return recs, rec_off  # no row numbers made for nothing
    rows = np.arange(recs.height, dtype=np.float64)
    kept_off, _, kept = drop_repeated(rec_off, items, rows, True, None, counts)
    return recs[kept.astype(np.int64)], kept_off


def check_unique_truth(ratings: pl.DataFrame, path: object | None) -> None:
    """A (user, item) pair rated twice is ambiguous: reject it (``ratings`` sorted by both)."""
    dup = ratings.select(
        (pl.col("user_id") == pl.col("user_id").shift())
        & (pl.col("item_id") == pl.col("item_id").shift())
    ).to_series()
    if dup.any():
        raise_repeated_truth(ratings, int(dup.arg_true()[0]), path)


def raise_repeated_truth(ratings: pl.DataFrame, row: int, path: object | None) -> None:
    """The InputError of a (user, item) pair rated twice: ``row`` repeats the row before it."""
    key = (ratings["user_id"][row], ratings["item_id"][row])
    raise InputError(
        "the same item is rated twice for a user", path=path, column="item_id", key=key
    )


def with_item_codes(recs: pl.DataFrame, ratings: pl.DataFrame):
    """Both sides with their ``ITEM`` column, the :func:`item_codes` of their ``item_id``: of
    integer ids, the ids as Int64 (no copy of an Int64 column). Added with ``hstack``, which
    runs no query (``with_columns`` took 0.2 ms a call in a run, ten times ``hstack``)."""
    if recs["item_id"].dtype.is_integer():
        return tuple(f.hstack([f["item_id"].cast(pl.Int64).alias(ITEM)]) for f in (recs, ratings))
    rec_items, tru_items = item_codes(recs["item_id"], ratings["item_id"])
    return (
        recs.hstack([pl.Series(ITEM, rec_items)]),
        ratings.hstack([pl.Series(ITEM, tru_items)]),
    )


def item_codes(rec_items: pl.Series, tru_items: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """int64 item keys whose order and equality match the ids' (dense ranks for non-integers)."""
    if rec_items.dtype.is_integer():
        return rec_items.cast(pl.Int64).to_numpy(), tru_items.cast(pl.Int64).to_numpy()
    codes = pl.concat([rec_items, tru_items]).rank("dense").cast(pl.Int64).to_numpy()
    return codes[: len(rec_items)], codes[len(rec_items) :]


def segments(rec_users: pl.Series, tru_users: pl.Series):
    """Union of users (ascending) and each one's row count in the (user-sorted) recs and truth."""
    rc = rec_users.rle().struct.unnest().rename({"len": "n_recs", "value": "user_id"})
    tc = tru_users.rle().struct.unnest().rename({"len": "n_truth", "value": "user_id"})
    both = rc.join(tc, on="user_id", how="full", coalesce=True).sort("user_id").fill_null(0)
    return (
        both["user_id"],
        both["n_recs"].to_numpy().astype(np.int64),
        both["n_truth"].to_numpy().astype(np.int64),
    )


def blocks(recs: pl.DataFrame, ratings: pl.DataFrame, path_ratings: object | None):
    """``(ratings, users, rec_counts, tru_counts)``: the ratings sorted by user, then item (as
    they are when they arrive in that order, as a ratings file is often written), checked to rate
    each (user, item) once; the union of both sides' users (ascending) and each user's rows on
    each side. ``recs`` grouped by user (ascending), its ``user_id`` typed as the ratings'.
    Integer user ids (within int64's range): one pass over the ratings' pairs and a merge of the
    two user columns (:mod:`mobeval.kernels.user_blocks`); other ids: Polars' run lengths and a
    join."""
    if not recs["user_id"].dtype.is_integer() or recs["user_id"].dtype == pl.UInt64:
        ratings = by_user_item(ratings)
        check_unique_truth(ratings, path_ratings)
        return ratings, *segments(recs["user_id"], ratings["user_id"])
    unsorted, repeated = truth_order(ratings["user_id"].to_numpy(), ratings[ITEM].to_numpy())
    if unsorted >= 0:
        ratings = ratings.sort(["user_id", "item_id"])
        repeated = truth_order(ratings["user_id"].to_numpy(), ratings[ITEM].to_numpy())[1]
    if repeated >= 0:
        raise_repeated_truth(ratings, repeated, path_ratings)
    users, rec_counts, tru_counts = user_blocks(
        recs["user_id"].to_numpy(), ratings["user_id"].to_numpy()
    )
    users = pl.Series("user_id", users)
    kind = recs["user_id"].dtype
    return ratings, users if kind == pl.Int64 else users.cast(kind), rec_counts, tru_counts
