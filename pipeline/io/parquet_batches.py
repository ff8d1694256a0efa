"""A Parquet file's batches, decoded by the faster of two readers where both give the same frames.

pyarrow's ``ParquetFile.iter_batches`` is the reader every input can take (any type, a remote
file, batches cut anywhere in a row group). Polars' own Parquet reader decodes the plain columns
mobeval streams (integers, floats, booleans, strings) in less CPU: a recs run's 100 M list rows
(three columns, 100 row groups) in about 0.55 s of CPU against pyarrow's 0.9 s and the conversion
of its batches (BENCHMARKS.md, issue 37, ninth pass). It reads a slice of the file
(``scan_parquet(...).slice(start, rows)``) by decoding the row groups that hold it, so it is
taken only for batches of :data:`POLARS_ROWS` rows or more (or the whole file), each starting
on a row group's first row (a batch cut inside a row group would decode that group again for
each batch): batch ``b`` holds rows ``[b * batch_rows, (b + 1) * batch_rows)``, the batches
pyarrow yields (its batches run across row groups).

The frames are the same either way: the same columns in the order asked for, of the types
``pl.from_arrow`` gives pyarrow's batches (checked on each frame: another type hands the rest of
the file to pyarrow), one chunk per column. A file whose metadata holds bytes that are not UTF-8
(Polars panics on them) or a column of another type is read by pyarrow. Where Polars cannot read
a batch (a damaged file), pyarrow reads the file from that batch on: it raises the error it
raised before, or reads what Polars could not.
"""

from __future__ import annotations

import bisect
import itertools
import os
from collections.abc import Iterator

import polars as pl
import pyarrow as pa

#: The fewest rows a batch for Polars to read it: its reads cost a fixed 0.4 ms more than
#: pyarrow's (a query's plan, the footer read again), its decoding less, even at 100 k rows
#: (2.6 ms each), 30 % less at 1 M (13.6 against 18.8 ms, two columns).
POLARS_ROWS = 200_000


def parquet_batches(parquet, source, columns: list[str], batch_rows: int, plain) -> Iterator:
    """The frames of ``columns`` of the open ``pyarrow.parquet.ParquetFile`` ``parquet``, read from
    ``source`` (a local path, or a file object: pyarrow only), ``batch_rows`` rows a batch;
    ``plain``: a pyarrow batch as Polars reads it (metadata dropped)."""
    start = 0
    if _polars_reads(parquet, source, columns, batch_rows):
        expected = pl.from_arrow(plain(_empty_batch(parquet.schema_arrow, columns))).schema
        frames = pl.scan_parquet(source, glob=False, hive_partitioning=False).select(columns)
        total = parquet.metadata.num_rows
        while start < total:
            try:
                frame = frames.slice(start, batch_rows).collect()
            except (pl.exceptions.PolarsError, pl.exceptions.PanicException, OSError):
                break  # pyarrow raises its own error, or reads it
            if frame.schema != expected or frame.height != min(batch_rows, total - start):
                break
            yield frame.rechunk() if max(frame.n_chunks("all"), default=1) > 1 else frame
            start += batch_rows
        if start >= total:
            return
    groups = range(_group_at(parquet.metadata, start), parquet.metadata.num_row_groups)
    for batch in parquet.iter_batches(batch_size=batch_rows, columns=columns, row_groups=groups):
        yield pl.from_arrow(plain(batch))


def _polars_reads(parquet, source, columns: list[str], batch_rows: int) -> bool:
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
    starts = _group_starts(parquet.metadata)
    if min(batch_rows, starts[-1]) < POLARS_ROWS:
        return False
    return set(range(0, starts[-1], batch_rows)) <= set(starts)


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


def _group_at(metadata, row: int) -> int:
    """The row group that starts at ``row`` (a batch's first row on the Polars path; 0 at 0)."""
    return bisect.bisect_left(_group_starts(metadata), row)


def _empty_batch(schema: pa.Schema, columns: list[str]) -> pa.RecordBatch:
    """No rows of ``columns``, built without ``pa.array`` (which imports pandas, where installed:
    0.5 s of the reader thread's start, under the GIL the main thread's imports need)."""
    fields = [schema.field(column) for column in columns]
    arrays = [pa.nulls(0, field.type) for field in fields]
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))
