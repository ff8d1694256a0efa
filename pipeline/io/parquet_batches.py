"""A Parquet file's batches, decoded by the faster of two readers where both give the same frames.

pyarrow's ``ParquetFile.iter_batches`` is the reader every input can take (any type, a remote
file, batches cut anywhere in a row group). Polars' own Parquet reader decodes the plain columns
mobeval streams (integers, floats, booleans, strings) in less CPU: a recs run's 100 M list rows
(three columns, 100 row groups) in about 0.55 s of CPU against pyarrow's 0.9 s and the conversion
of its batches (BENCHMARKS.md, issue 37, ninth pass), and the ratings' 10 M rows in batches of
250 k (four a row group) in 0.10 s against pyarrow's 0.16 s, whose fresh buffers each batch
also cost the process's page faults (tenth pass). It reads a slice of the file
(``scan_parquet(...).slice(start, rows)``) by decoding the row groups that hold it, so it
decodes whole row groups, a span of them at a time (at least :data:`POLARS_ROWS` rows, its fixed
cost a read), and the batches are cut from the spans decoded without a copy (a batch across two
spans is copied into one): batch ``b`` holds rows ``[b * batch_rows, (b + 1) * batch_rows)``, the
batches pyarrow yields (its batches run across row groups). Memory: a batch, and the span it is
cut from; a file with a row group larger than both a batch and :data:`GROUP_ROWS` is pyarrow's
(which decodes a batch at a time), as is a file of fewer than :data:`POLARS_ROWS` rows.

The frames are the same either way: the same columns in the order asked for, of the types
``pl.from_arrow`` gives pyarrow's batches (checked on each span: another type hands the rest of
the file to pyarrow), one chunk per column. A file whose metadata holds bytes that are not UTF-8
(Polars panics on them) or a column of another type is read by pyarrow. Where Polars cannot read
a span (a damaged file), pyarrow reads the file from the first row not yet yielded: it raises
the error it raised before, or reads what Polars could not.
"""

from __future__ import annotations

import bisect
import itertools
import os
from collections.abc import Iterator

import polars as pl
import pyarrow as pa

#: The fewest rows Polars decodes a read (a span of row groups), and the fewest a file must hold
#: for Polars to read it: its reads cost a fixed 0.4 ms more than pyarrow's (a query's plan, the
#: footer read again), its decoding less, even at 100 k rows (2.6 ms each), 30 % less at 1 M
#: (13.6 against 18.8 ms, two columns).
POLARS_ROWS = 200_000
#: The rows of the largest row group Polars decodes whole when the batches are smaller (a recs
#: run's ratings: a quarter of a 1 M-row batch of the lists, groups of up to 1 M rows, pyarrow's
#: default): a larger group is pyarrow's to read, a batch at a time (memory bounded by the batch
#: and this, not by how the file was written).
GROUP_ROWS = 1 << 20


def parquet_batches(parquet, source, columns: list[str], batch_rows: int, plain) -> Iterator:
    """The frames of ``columns`` of the open ``pyarrow.parquet.ParquetFile`` ``parquet``, read from
    ``source`` (a local path, or a file object: pyarrow only), ``batch_rows`` rows a batch;
    ``plain``: a pyarrow batch as Polars reads it (metadata dropped)."""
    starts = _group_starts(parquet.metadata)
    done = 0  # the rows yielded
    if _polars_reads(parquet, source, columns, batch_rows, starts):
        for frame in _polars_batches(parquet, source, columns, batch_rows, plain, starts):
            done += frame.height
            yield frame
        if done >= starts[-1]:
            return
    first = bisect.bisect_right(starts, done) - 1  # the row group holding the next row
    groups = range(first, parquet.metadata.num_row_groups)
    batches = parquet.iter_batches(batch_size=batch_rows, columns=columns, row_groups=groups)
    frames = (pl.from_arrow(plain(batch)) for batch in batches)
    if starts[first] == done:
        yield from frames
    else:  # Polars failed inside a row group: its rows from there on, in the same batches
        yield from _cut(_after(frames, done - starts[first]), batch_rows)


def _polars_batches(parquet, source, columns, batch_rows: int, plain, starts) -> Iterator:
    """The file's batches, cut from spans of whole row groups Polars decodes; ends early (the
    caller's pyarrow reads the rest) at a span Polars cannot read, or reads otherwise."""
    expected = pl.from_arrow(plain(_empty_batch(parquet.schema_arrow, columns))).schema
    query = pl.scan_parquet(source, glob=False, hive_partitioning=False).select(columns)
    total = starts[-1]
    window, begun, end = None, 0, 0  # the rows decoded and not yet yielded: [begun, end)
    for start in range(0, total, batch_rows):
        stop = min(start + batch_rows, total)
        if stop > end:  # whole groups through row stop - 1, and POLARS_ROWS rows at least
            upto = starts[bisect.bisect_left(starts, min(max(stop, end + POLARS_ROWS), total))]
            try:
                span = query.slice(end, upto - end).collect()
            except (pl.exceptions.PolarsError, pl.exceptions.PanicException, OSError):
                return  # pyarrow raises its own error, or reads it
            if span.schema != expected or span.height != upto - end:
                return
            rest = None if window is None or start >= end else window.slice(start - begun)
            window = span if rest is None else pl.concat([rest, span], rechunk=False)
            begun, end = start, upto
        yield _one_chunk(window.slice(start - begun, stop - start))


def _polars_reads(parquet, source, columns: list[str], batch_rows: int, starts) -> bool:
    """Whether Polars reads this file's batches as pyarrow would (see the module's docstring)."""
    if not isinstance(source, str | os.PathLike) or len(set(columns)) != len(columns):
        return False
    schema = parquet.schema_arrow
    if not all(_plain_type(schema.field(column).type) for column in columns):
        return False
    metadata = [*(parquet.metadata.metadata or {}).items()]
    for field in [schema, *schema]:
        metadata += (field.metadata or {}).items()
    try:
        for name, value in metadata:
            name.decode("utf-8"), value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    largest = max((b - a for a, b in itertools.pairwise(starts)), default=0)
    return starts[-1] >= POLARS_ROWS and largest <= max(batch_rows, GROUP_ROWS)


def _plain_type(arrow_type: pa.DataType) -> bool:
    return (
        pa.types.is_integer(arrow_type)
        or pa.types.is_float32(arrow_type)
        or pa.types.is_float64(arrow_type)
        or pa.types.is_boolean(arrow_type)
        or pa.types.is_string(arrow_type)
        or pa.types.is_large_string(arrow_type)
    )


def _group_starts(metadata) -> list[int]:
    """The first row of each row group, then the file's row count."""
    rows = (metadata.row_group(g).num_rows for g in range(metadata.num_row_groups))
    return [0, *itertools.accumulate(rows)]


def _one_chunk(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` in one chunk a column (copied only if it is in more)."""
    return frame.rechunk() if max(frame.n_chunks("all"), default=1) > 1 else frame


def _after(frames: Iterator[pl.DataFrame], skip: int) -> Iterator[pl.DataFrame]:
    """The rows of ``frames`` after the first ``skip``."""
    for frame in frames:
        if skip < frame.height:
            yield frame.slice(skip)
        skip = max(0, skip - frame.height)


def _cut(frames: Iterator[pl.DataFrame], batch_rows: int) -> Iterator[pl.DataFrame]:
    """The rows of ``frames`` in batches of ``batch_rows`` (the last one shorter)."""
    pending: list[pl.DataFrame] = []
    rows = 0
    for frame in frames:
        pending.append(frame)
        rows += frame.height
        while rows >= batch_rows:
            whole = pl.concat(pending, rechunk=False)
            yield _one_chunk(whole.slice(0, batch_rows))
            pending, rows = [whole.slice(batch_rows)], rows - batch_rows
    if rows:
        yield _one_chunk(pl.concat(pending, rechunk=False))


def _empty_batch(schema: pa.Schema, columns: list[str]) -> pa.RecordBatch:
    """No rows of ``columns``, built without ``pa.array`` (which imports pandas, where installed:
    0.5 s of the reader thread's start, under the GIL the main thread's imports need)."""
    fields = [schema.field(column) for column in columns]
    arrays = [pa.nulls(0, field.type) for field in fields]
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))
