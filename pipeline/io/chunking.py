"""Key-aligned chunking: cut row streams into chunks that keep every unit (sample, user, uid) whole.

Three ways, chosen by the engine (:mod:`mobeval.engines.local`):

* **sorted streaming**: when the rows arrive sorted by the key (the usual case for files written by
  a model's evaluation loop), chunks are cut at unit boundaries on the fly; memory holds one chunk.
  If a row is found out of order, :class:`NotSorted` is raised and the engine switches to another
  way.
* **grouped streaming**: rows that hold each unit together in any key order are cut the same way
  (``SortedUnitChunks(..., grouped=True)``); each chunk's units come in the stream's order.
* **hash buckets**: rows are spread over B temporary files (Arrow IPC) by a hash of the key;
  every unit lands whole in one bucket, and each bucket (about input / B rows) is sorted in memory.
"""

from __future__ import annotations

import bisect
import contextlib
import math
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa

from mobeval.errors import ConfigError, InputError
from mobeval.io.arrays import kernel_array
from mobeval.io.whole import check_read, library_error
from mobeval.kernels.buckets import bucket_order, key_buckets, radix_order
from mobeval.kernels.cuts import unit_bounds
from mobeval.kernels.keys import key_order as integer_key_order
from mobeval.kernels.keys import segment_rows, unit_count, unit_offsets

HASH_SEED = 20251122


class NotSorted(Exception):
    """The stream is not sorted by its key; the caller falls back to hash buckets. ``keys``: the
    integer key rows of the predictions' batch where a key fell (n x c int64), or None."""

    def __init__(self, keys: np.ndarray | None = None) -> None:
        super().__init__()
        self.keys = keys


def key_order(frame: pl.DataFrame, key: list[str]) -> pl.Series:
    """Per row: -1, 0 or 1 as its key is below, equal to or above the previous row's (in order).

    The first row gets 1. Integer keys take a NumPy fast path; other types a Polars expression.
    """
    matrix = key_matrix(frame, key)
    if matrix is not None:
        return pl.Series(integer_key_order(matrix))
    order = pl.lit(0, dtype=pl.Int8)
    for column in reversed(key):
        previous = pl.col(column).shift(1)
        order = (
            pl.when(pl.col(column) < previous)
            .then(pl.lit(-1, dtype=pl.Int8))
            .when(pl.col(column) > previous)
            .then(pl.lit(1, dtype=pl.Int8))
            .otherwise(order)
        )
    first = pl.int_range(pl.len()) == 0
    return frame.select(pl.when(first).then(pl.lit(1, dtype=pl.Int8)).otherwise(order)).to_series()


def key_matrix(frame: pl.DataFrame, key: list[str]) -> np.ndarray | None:
    """The key columns as one read-only (rows x columns) int64 array, or None unless every key
    column is an integer without nulls (then the Numba key kernels apply)."""
    columns = [frame[c] for c in key]
    if not all(c.dtype.is_integer() and not c.null_count() for c in columns):
        return None
    if len(columns) == 1:
        return kernel_array(columns[0], np.int64).reshape(-1, 1)
    return kernel_array(np.column_stack([c.to_numpy() for c in columns]), np.int64)


def key_at(frame: pl.DataFrame, key: list[str], row: int) -> tuple:
    return tuple(frame.row(row, named=True)[column] for column in key)


def format_key(key: list[str], values: tuple) -> str:
    return ", ".join(f"{column}={value!r}" for column, value in zip(key, values, strict=True))


def lex_at_most(key: list[str], values: tuple) -> pl.Expr:
    """Expression: the row's key <= ``values`` (lexicographic)."""
    expr = pl.lit(True)
    for column, value in reversed(list(zip(key, values, strict=True))):
        expr = (pl.col(column) < value) | ((pl.col(column) == value) & expr)
    return expr


def rows_through(frame: pl.DataFrame, key: list[str], values: tuple) -> int:
    """How many of the first rows of ``frame`` (sorted by key, no null key) have a key <=
    ``values``: a binary search of one integer key column (no pass over the rows), else the
    count of :func:`lex_at_most`.

    The search runs chunk by chunk (a lookup's buffer is often two: no copy) and in the
    interpreter (:func:`bisect.bisect_right`, about 20 comparisons): NumPy's ``searchsorted``
    lets go of the GIL, and the main thread then waited up to a switch interval (5 ms) for the
    reader threads to give it back."""
    column = frame[key[0]]
    if len(key) == 1 and column.dtype.is_integer():
        count = 0
        for part in column.get_chunks():
            array = part.to_numpy()
            found = bisect.bisect_right(array, values[0])
            count += found
            if found < len(array):
                break
        return count
    return int(frame.select(lex_at_most(key, values).sum()).item())


def unit_starts(frame: pl.DataFrame, key: list[str]) -> pl.Series:
    """Row indices where a new unit starts, in a frame sorted (or at least grouped) by key."""
    order = key_order(frame, key)
    return (order != 0).arg_true()


class SortedUnitChunks:
    """Iterate a key-sorted batch stream as chunks of whole units, ``chunk_rows`` rows or more.

    Each row's key is compared with the previous row's once, as its batch arrives (one pass:
    :func:`mobeval.kernels.cuts.unit_bounds`); a chunk is cut at the last unit start of the
    rows gathered, and the rows after it carry over. A chunk holds one Arrow chunk per column
    (kernels then read its columns without a copy).

    A batch of ``in_place_rows`` rows or more (None: no batch) is cut where it lies, not
    copied: the rows carried over and the batch's rows up to its first unit start are one chunk
    (the seam: the few rows of the unit the batch boundary split, or the small batches gathered
    before), and the batch's rows from its first unit start to its last are another, a slice
    of the decoded batch itself; the rows from its last unit start carry over. That slice waits
    for the next batch: where it starts a unit (the batch boundary fell between two units, as
    a file written in row groups of whole units has it), the batch's last unit ends with the
    batch, and the slice runs to the batch's end (no seam of its own: a 100 M-row recs run
    scored 100 pairs, not 200). An error reading the next batch comes after the slice.

    With ``grouped`` the stream need only hold each unit's rows together, in any key order (the
    caller checks that no unit comes twice: :func:`mobeval.kernels.buckets.claim_runs`); a
    chunk's units come in the stream's order."""

    def __init__(
        self,
        batches: Iterator[pl.DataFrame],
        key: list[str],
        chunk_rows: int,
        *,
        grouped: bool = False,
        in_place_rows: int | None = None,
    ) -> None:
        self.batches = batches
        self.key = key
        self.chunk_rows = chunk_rows
        self.grouped = grouped
        self.in_place_rows = in_place_rows
        self.last_key: tuple | None = None

    def _unit_starts(self, batch: pl.DataFrame) -> tuple[int, int]:
        """The first and the last row of ``batch`` that start a unit, given the stream so far
        (-1 if every row continues the stream's last unit); NotSorted if a key decreases
        (unless grouped)."""
        matrix = key_matrix(batch, self.key)
        if matrix is not None:
            previous = None if self.last_key is None else np.array(self.last_key, np.int64)
            first, last, decreased = unit_bounds(matrix, previous)
        else:
            order = key_order(batch, self.key).to_numpy(writable=True)
            if self.last_key is not None:
                head = key_at(batch, self.key, 0)
                order[0] = (head > self.last_key) - (head < self.last_key)
            starts = np.flatnonzero(order)
            first, last = (int(starts[0]), int(starts[-1])) if len(starts) else (-1, -1)
            decreased = bool((order < 0).any())
        if decreased and not self.grouped:
            raise NotSorted(matrix)
        if len(self.key) == 1 and not self.grouped:  # flagged sorted: a scorer checks no more
            column = batch.get_column_index(self.key[0])
            batch.replace_column(column, batch.to_series(column).set_sorted())
        self.last_key = key_at(batch, self.key, batch.height - 1)
        return first, last

    def __iter__(self) -> Iterator[pl.DataFrame]:
        pending: list[pl.DataFrame] = []
        rows = cut = 0  # cut: the last unit start in the pending rows (0: none after the first)
        in_place = self.in_place_rows or 0
        held = None  # (an in-place batch's rows from its first unit start, how many of them come
        # before its last): not yielded yet, its rows from the last pending
        batches = (batch for batch in self.batches if batch.height)
        while True:
            try:
                batch = next(batches, None)
                first, last = (-1, -1) if batch is None else self._unit_starts(batch)
            except Exception:
                yield from _before_last_start(held)  # the rows before the error first
                raise
            if held is not None:
                if batch is None or first == 0:  # its last unit ends with it: one slice
                    yield held[0]
                    pending, rows, cut = [], 0, 0
                else:
                    yield from _before_last_start(held)
                held = None
            if batch is None:
                break
            if in_place and batch.height >= in_place and first >= 0:
                if pending:
                    yield self._whole(pl.concat([*pending, batch.slice(0, first)], rechunk=False))
                held = (batch.slice(first), last - first)
                pending, rows, cut = [batch.slice(last)], batch.height - last, 0
                continue
            if last >= 0:
                cut = rows + last
            pending.append(batch)
            rows += batch.height
            if rows < self.chunk_rows or cut == 0:
                continue  # cut == 0: one unit larger than a chunk, keep reading
            frame = pl.concat(pending, rechunk=False)
            carry = frame.slice(cut)
            pending, rows = [carry], carry.height
            yield self._whole(frame.slice(0, cut))
            cut = 0
        if rows:
            yield self._whole(pl.concat(pending))

    def _whole(self, chunk: pl.DataFrame) -> pl.DataFrame:
        """The chunk in one Arrow chunk per column."""
        return chunk.rechunk()


def _before_last_start(held: tuple[pl.DataFrame, int] | None) -> Iterator[pl.DataFrame]:
    """The rows of a held slice (:meth:`SortedUnitChunks.__iter__`) before its last unit start,
    if it holds any."""
    if held is not None and held[1] > 0:
        yield held[0].slice(0, held[1])


class SortedLookup:
    """A key-sorted stream (the truth, or a reference table), consumed in key order. With ``unique``
    every key must appear on one row only."""

    def __init__(
        self, batches: Iterator[pl.DataFrame], key: list[str], label: str, *, unique: bool = True
    ) -> None:
        self.batches = batches
        self.key = key
        self.label = label
        self.unique = unique
        self.buffer: pl.DataFrame | None = None
        self.exhausted = False
        self.last_key: tuple | None = None

    def _read(self) -> bool:
        for batch in self.batches:
            if batch.height == 0:
                continue
            matrix = None if self.unique else key_matrix(batch, self.key)
            if matrix is None:
                self._check(batch)
            else:  # the order only: one pass over the keys, no array a row (recs' ratings)
                previous = None if self.last_key is None else np.array(self.last_key, np.int64)
                if unit_bounds(matrix, previous)[2]:
                    raise NotSorted
            self.last_key = key_at(batch, self.key, batch.height - 1)
            self.buffer = batch if self.buffer is None else pl.concat([self.buffer, batch])
            return True
        self.exhausted = True
        return False

    def _check(self, batch: pl.DataFrame) -> None:
        """NotSorted if a key of ``batch`` falls (from the previous row's, the first row's from the
        stream's last key); with ``unique``, an InputError naming its first repeated key."""
        order = key_order(batch, self.key)
        if (order < 0).any():
            raise NotSorted
        first = key_at(batch, self.key, 0)
        if self.last_key is not None and first < self.last_key:
            raise NotSorted
        duplicate = (order == 0).arg_true() if self.unique else ()
        repeated = self.last_key is not None and first == self.last_key
        if self.unique and (len(duplicate) or repeated):
            row = int(duplicate[0]) if len(duplicate) else 0
            raise InputError(
                "duplicate key: the truth must hold one row per unit",
                path=self.label,
                column=self.key[0],
                key=format_key(self.key, key_at(batch, self.key, row)),
            )

    def take_through(self, last_key: tuple | None) -> pl.DataFrame:
        """Remove and return every row with key <= ``last_key`` (every remaining row if None)."""
        while not self.exhausted and (
            last_key is None
            or self.buffer is None
            or key_at(self.buffer, self.key, self.buffer.height - 1) <= last_key
        ):
            self._read()
        if self.buffer is None:
            return pl.DataFrame()
        if last_key is None:
            taken, self.buffer = self.buffer, None
            return taken
        count = rows_through(self.buffer, self.key, last_key)
        taken = self.buffer.slice(0, count)
        self.buffer = self.buffer.slice(count)
        return taken


#: The most rows of a hash bucket (a chunk's, where a chunk is smaller). Each bucket comes back
#: whole, sorted and scored while the next one is read: smaller ones than a chunk kept the
#: threads busier and the memory lower (10 M scattered rows, 2 M-row chunks, buckets of 2 M,
#: 1 M, 500 k and 250 k rows: 1.29 s / 682 MiB, 1.16 s / 523 MiB, 1.08 s / 478 MiB, 1.14 s /
#: 462 MiB).
BUCKET_ROWS = 500_000
#: The files a run keeps open beside its buckets' (its inputs, its outputs, the libraries').
OTHER_FILES = 64


def bucket_count(rows: int, chunk_rows: int) -> int:
    """Hash buckets for ``rows`` rows, each bucket's file open while the rows are spread: of
    :data:`BUCKET_ROWS` rows (a chunk's, where that is fewer), of a chunk's where the process
    may not open that many files, and a ConfigError where it may not open even those (naming
    its limit and what to raise). The limit on open files is raised to what the buckets need
    where the hard limit allows (``ulimit -n``: 256 or 1,024 by default, 10 M rows in chunks of
    10,000 take 1,000 buckets). One bucket, held in memory, where the rows fit in a chunk."""
    if rows <= chunk_rows:
        return 1
    for size in (min(chunk_rows, BUCKET_ROWS), chunk_rows):
        n_buckets = math.ceil(rows / size)
        limit = open_files(n_buckets + OTHER_FILES)
        if n_buckets + OTHER_FILES <= limit:
            return n_buckets
    fits = math.ceil(rows / (limit - OTHER_FILES)) if limit - OTHER_FILES > 1 else rows
    raise ConfigError(
        f"{rows:,} unsorted rows in chunks of {chunk_rows:,} take {n_buckets:,} hash buckets, "
        f"each a file open at once, and this process may open {limit:,} files: raise the "
        f"limit (ulimit -n {n_buckets + OTHER_FILES}) or the chunk size (--chunk-rows {fits}, "
        "a job's chunk_rows)"
    )


def open_files(wanted: int) -> int:
    """How many files this process may open: its soft limit, raised first to ``wanted`` where
    that is higher and the hard limit allows (as ``ulimit -n`` raises it); unbounded
    (``sys.maxsize``) where the system sets no limit."""
    try:
        import resource
    except ImportError:  # Windows: no such limit
        return sys.maxsize
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    unlimited = resource.RLIM_INFINITY
    if soft != unlimited and soft < wanted:
        raised = wanted if hard == unlimited else min(wanted, hard)
        with contextlib.suppress(ValueError, OSError):  # macOS: at most OPEN_MAX
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
    return sys.maxsize if soft == unlimited else soft


def bucket_ids(batch: pl.DataFrame, key: list[str], n_buckets: int) -> np.ndarray:
    """Per row of ``batch``: its bucket, a hash of its key modulo ``n_buckets`` (integer keys:
    :func:`mobeval.kernels.buckets.key_buckets`; other keys: Polars' hash of the key columns)."""
    matrix = key_matrix(batch, key)
    if matrix is not None:
        return key_buckets(matrix, n_buckets)
    hashed = batch.select(pl.struct(key).hash(seed=HASH_SEED) % n_buckets).to_series()
    return hashed.to_numpy().astype(np.int64)


def write_buckets(
    batches: Iterator[pl.DataFrame],
    key: list[str],
    n_buckets: int,
    directory: Path,
    ahead: Callable[[Iterator], Iterator] | None = None,
) -> list[tuple[Path, int] | None]:
    """Spread rows over ``n_buckets`` files by a hash of the key; return each bucket's (path, rows
    written), None for a bucket that got no row. Each batch is grouped by bucket in one gather
    (:func:`by_bucket`) and each bucket's slice appended to its file, an uncompressed Arrow IPC
    stream: a bucket is written once and read back once, mostly from the page cache, so
    compression would cost more CPU than the disk it saves (LZ4 took three times the write's
    CPU, for half the size). ``ahead``: what runs the grouping ahead of the writing (a thread:
    :func:`mobeval.engines.local.read_ahead`), so that the batches' decoding, their grouping and
    the writing each keep a thread busy."""
    directory.mkdir(parents=True, exist_ok=True)
    writers: dict[int, pa.ipc.RecordBatchStreamWriter] = {}
    buckets: dict[int, tuple[Path, int]] = {}
    path = directory
    groups = (by_bucket(batch, key, n_buckets) for batch in batches if batch.height)
    if ahead is not None:
        groups = ahead(groups)
    try:
        for grouped, bounds in groups:
            table = grouped.to_arrow()
            for bucket in np.flatnonzero(np.diff(bounds)).tolist():
                start, end = int(bounds[bucket]), int(bounds[bucket + 1])
                path, rows = buckets.get(bucket, (directory / f"bucket-{bucket:05d}.arrows", 0))
                if bucket not in writers:
                    writers[bucket] = pa.ipc.new_stream(path, table.schema)
                writers[bucket].write_table(table.slice(start, end - start))
                buckets[bucket] = (path, rows + end - start)
        for bucket, writer in writers.items():
            path = buckets[bucket][0]
            writer.close()
    except OSError as error:  # Arrow's names no file: a full disk names the bucket's
        raise (library_error(error, path) or error) from None
    finally:
        groups.close()  # a thread grouping ahead stops with the writing
        for writer in writers.values():
            with contextlib.suppress(OSError):  # closed above, or failed already
                writer.close()
    return [buckets.get(b) for b in range(n_buckets)]


def by_bucket(
    frame: pl.DataFrame, key: list[str], n_buckets: int
) -> tuple[pl.DataFrame, np.ndarray]:
    """``frame``'s rows grouped by bucket (:func:`bucket_ids`; one gather, stable), and the bounds
    of each bucket's rows in it (``bounds[b]`` to ``bounds[b + 1]``)."""
    order, bounds = bucket_order(bucket_ids(frame, key, n_buckets), n_buckets)
    return frame[order], bounds


def split_buckets(frame: pl.DataFrame, key: list[str], n_buckets: int) -> list[pl.DataFrame]:
    """``frame``'s rows by bucket (as :func:`write_buckets` spreads them), each bucket's in their
    order in ``frame``: one gather (:func:`by_bucket`), each bucket a slice of it."""
    grouped, bounds = by_bucket(frame, key, n_buckets)
    return [grouped[int(bounds[b]) : int(bounds[b + 1])] for b in range(n_buckets)]


def read_bucket(bucket: tuple[Path, int] | None, key: list[str]) -> pl.DataFrame:
    """A bucket's rows sorted by key (stable: a unit's rows keep their input order), every row
    written (:func:`~mobeval.io.whole.check_read`: a bucket cut short on disk is an error)."""
    if bucket is None:
        return pl.DataFrame()
    path, rows = bucket
    with pa.memory_map(str(path)) as source, pa.ipc.open_stream(source) as reader:
        # one chunk per column: a gather from the many small parts written is 3x slower
        table = reader.read_all().combine_chunks()
    check_read(path, table.num_rows, rows)
    return sorted_by_key(pl.from_arrow(table), key)


def sorted_by_key(frame: pl.DataFrame, key: list[str]) -> pl.DataFrame:
    """``frame`` sorted by key, stable (integer keys: :func:`grouped_order`)."""
    if frame.height == 0:
        return frame
    matrix = key_matrix(frame, key)
    if matrix is None:
        return frame.sort(key, maintain_order=True)
    return frame[grouped_order(matrix)]


def grouped_order(keys: np.ndarray) -> np.ndarray:
    """The stable sorting permutation of ``keys`` (rows x columns int64), whose equal keys often
    come in runs (a bucket holds each input batch's rows of a unit together): the runs are
    sorted (:func:`mobeval.kernels.buckets.radix_order`, stable), not the rows."""
    if 2 * unit_count(keys) > keys.shape[0]:
        return radix_order(keys)  # runs of about one row: sorting the rows themselves is cheaper
    starts = unit_offsets(keys)
    order = radix_order(keys[starts[:-1]])
    return segment_rows(starts[:-1][order], np.diff(starts)[order])
