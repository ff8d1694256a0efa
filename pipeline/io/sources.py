"""Input sources: a Parquet file, a directory or glob of Parquet files, a CSV file (optionally .gz),
or an in-memory Polars DataFrame. A source streams record batches with bounded memory; it never
knows a metric.
"""

from __future__ import annotations

import glob
import gzip
import hashlib
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from mobeval.errors import InputError

PARQUET_SUFFIXES = (".parquet", ".pq")
CSV_SUFFIXES = (".csv", ".csv.gz", ".txt", ".txt.gz")
FINGERPRINT_BYTES = 1 << 16
#: What reading a damaged file raises: Arrow's errors, OSError, ValueError (pyarrow decodes
#: column names and strings as UTF-8: UnicodeDecodeError), and a panic of Polars' Rust code on
#: bytes it did not expect (a BaseException).
READ_ERRORS = (pa.ArrowException, OSError, ValueError, pl.exceptions.PanicException)


def _format_of(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    return None


@dataclass(frozen=True)
class Source:
    """Files of one format, read in order. ``label`` is what the user gave (used in messages)."""

    label: str
    files: tuple[Path, ...]
    format: str
    has_header: bool = True
    names: tuple[str, ...] | None = None  # column names for header-less CSV

    @classmethod
    def resolve(cls, spec: str | os.PathLike, *, has_header: bool = True, names=None) -> Source:
        """Resolve a file, a directory (its Parquet or CSV files, sorted) or a glob pattern."""
        label = str(spec)
        path = Path(spec)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and _format_of(p))
            if not files:
                raise InputError("directory holds no .parquet or .csv files", path=label)
        elif path.is_file():
            files = [path]
        elif glob.has_magic(label):
            files = sorted(Path(p) for p in glob.glob(label, recursive=True) if Path(p).is_file())
            if not files:
                raise InputError("no file matches this pattern", path=label)
        else:
            raise InputError("no such file or directory", path=label)
        formats = {_format_of(p) for p in files}
        if None in formats:
            bad = next(p for p in files if _format_of(p) is None)
            raise InputError("unknown file type (expected .parquet, .csv or .csv.gz)", path=bad)
        if len(formats) > 1:
            raise InputError("mixes Parquet and CSV files; give one format", path=label)
        file_format = formats.pop()
        has_header = True
        if file_format == "csv" and names:
            has_header = not _first_field_is_number(files[0])
        return cls(label, tuple(files), file_format, has_header, tuple(names) if names else None)

    def schema(self) -> dict[str, pl.DataType]:
        """Column names and Polars types (of the first file; the others are checked when read)."""
        first = self.files[0]
        if self.format == "parquet":
            try:
                arrow_schema = pq.read_schema(first)
            except READ_ERRORS as error:
                raise InputError(f"not a readable Parquet file ({error})", path=first) from None
        else:
            try:
                reader = self._open_csv(first, block_size=1 << 20)
            except READ_ERRORS as error:
                raise InputError(f"not a readable CSV file ({error})", path=first) from None
            arrow_schema = reader.schema
        try:
            names = arrow_schema.names
            empty = pl.from_arrow(_plain_schema(arrow_schema).empty_table())
        except READ_ERRORS as error:  # e.g. a column name that is not UTF-8
            raise InputError(f"unreadable column names ({error})", path=first) from None
        for name, arrow_type in zip(names, arrow_schema.types, strict=True):
            if self.format == "csv" and (
                pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type)
            ):
                raise InputError("holds bytes that are not UTF-8 text", path=first, column=name)
        return dict(empty.schema)

    def row_count_estimate(self) -> int:
        """Exact for Parquet (from the footers); from the file size for CSV."""
        if self.format == "parquet":
            return sum(self._parquet_rows(path) for path in self.files)
        return sum(max(1, os.path.getsize(path) // 16) for path in self.files)

    def _parquet_rows(self, path: Path) -> int:
        try:
            return pq.ParquetFile(path).metadata.num_rows
        except READ_ERRORS as error:
            raise InputError(f"not a readable Parquet file ({error})", path=path) from None

    def has_rows(self) -> bool:
        """Whether any file holds a data row: Parquet from the footers, CSV from its first
        non-empty block (a header-only CSV has none). An unreadable file is an InputError."""
        for path in self.files:
            if self.format == "parquet":
                if self._parquet_rows(path) > 0:
                    return True
                continue
            try:
                for batch in self._open_csv(path, block_size=1 << 20):
                    if batch.num_rows:
                        return True
            except READ_ERRORS as error:
                raise InputError(f"not a readable CSV file ({error})", path=path) from None
        return False

    def iter_batches(self, columns: list[str], batch_rows: int) -> Iterator[pl.DataFrame]:
        """Yield DataFrames of about ``batch_rows`` rows holding ``columns``, file by file."""
        for path in self.files:
            try:
                if self.format == "parquet":
                    yield from self._parquet_batches(path, columns, batch_rows)
                else:
                    yield from self._csv_batches(path, columns, batch_rows)
            except READ_ERRORS as error:
                kind = "Parquet" if self.format == "parquet" else "CSV"
                raise InputError(f"could not read this {kind} file ({error})", path=path) from None

    def _parquet_batches(self, path: Path, columns, batch_rows) -> Iterator[pl.DataFrame]:
        # pre_buffer=False: with it, pyarrow keeps whole column chunks and RSS grows with the file.
        parquet = pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 22)
        missing = [c for c in columns if c not in parquet.schema_arrow.names]
        if missing:
            raise InputError(
                "missing column (present in the first file)", path=path, column=missing[0]
            )
        for batch in parquet.iter_batches(batch_size=batch_rows, columns=columns):
            yield pl.from_arrow(_plain_batch(batch))

    def _open_csv(self, path: Path, block_size: int, columns=None):
        read_options = pacsv.ReadOptions(
            block_size=block_size,
            column_names=None if self.has_header else list(self.names),
        )
        convert = pacsv.ConvertOptions(include_columns=columns) if columns else None
        return pacsv.open_csv(path, read_options=read_options, convert_options=convert)

    def _csv_batches(self, path: Path, columns, batch_rows) -> Iterator[pl.DataFrame]:
        reader = self._open_csv(path, block_size=max(1 << 20, batch_rows * 16), columns=columns)
        for batch in reader:
            yield pl.from_arrow(_plain_batch(batch))

    def fingerprint(self) -> list[dict]:
        """Size, mtime and a SHA-256 of each file's Parquet footer (last 64 KiB) or first 64 KiB."""
        return [_file_fingerprint(path, footer=self.format == "parquet") for path in self.files]


def _plain_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` without its metadata and its fields' (Polars panics, printing a Rust backtrace,
    on metadata bytes that are not UTF-8; mobeval reads none of it)."""
    return pa.schema([schema.field(i).remove_metadata() for i in range(len(schema))])


def _plain_batch(batch: pa.RecordBatch) -> pa.RecordBatch:
    if batch.schema.metadata is None and all(f.metadata is None for f in batch.schema):
        return batch
    return pa.RecordBatch.from_arrays(batch.columns, schema=_plain_schema(batch.schema))


def _file_fingerprint(path: Path, *, footer: bool) -> dict:
    stat = path.stat()
    with open(path, "rb") as handle:
        if footer and stat.st_size > FINGERPRINT_BYTES:
            handle.seek(stat.st_size - FINGERPRINT_BYTES)
        digest = hashlib.sha256(handle.read(FINGERPRINT_BYTES)).hexdigest()
    return {
        "path": str(path),
        "size": stat.st_size,
        "mtime": stat.st_mtime,
        "sha256_footer" if footer else "sha256_head": digest,
    }


def fingerprint(data) -> list[dict]:
    """What ``--resume`` compares for an input: a source's files (see :meth:`Source.fingerprint`),
    a ``.npy`` file's size, mtime and first 64 KiB, or an in-memory array's shape and type."""
    if isinstance(data, np.ndarray):
        return [{"path": "<array>", "shape": list(data.shape), "dtype": str(data.dtype)}]
    if isinstance(data, str | os.PathLike) and str(data).lower().endswith(".npy"):
        if not Path(data).is_file():
            raise InputError("no such file", path=data)
        return [_file_fingerprint(Path(data), footer=False)]
    return as_source(data).fingerprint()


def _first_field_is_number(path: Path) -> bool:
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    try:
        with opener(path, "rb") as stream:  # the first line only: later bytes are not decoded
            line = stream.readline(1 << 16).decode("utf-8", errors="replace")
    except (OSError, EOFError, zlib.error) as error:
        raise InputError(f"not a readable CSV file ({error})", path=path) from None
    first = line.split(",")[0].strip()
    return first.lstrip("-").replace(".", "", 1).isdigit()


@dataclass(frozen=True)
class FrameSource:
    """An in-memory Polars DataFrame presented as a source (for the Python API)."""

    frame: pl.DataFrame
    label: str = "<DataFrame>"

    def schema(self) -> dict[str, pl.DataType]:
        return dict(self.frame.schema)

    def row_count_estimate(self) -> int:
        return self.frame.height

    def has_rows(self) -> bool:
        return self.frame.height > 0

    def iter_batches(self, columns: list[str], batch_rows: int) -> Iterator[pl.DataFrame]:
        missing = [c for c in columns if c not in self.frame.columns]
        if missing:
            raise InputError("missing column", path=self.label, column=missing[0])
        selected = self.frame.select(columns)
        for offset in range(0, max(selected.height, 1), batch_rows):
            yield selected.slice(offset, batch_rows)

    def fingerprint(self) -> list[dict]:
        return [{"path": self.label, "rows": self.frame.height}]


def as_source(data, *, label: str | None = None, names=None) -> Source | FrameSource:
    """A Source for a path, glob or directory; a FrameSource for a Polars (or pandas) DataFrame.
    ``names``: column names for header-less CSV files (see :meth:`Source.resolve`)."""
    if isinstance(data, Source | FrameSource):
        return data
    if type(data).__name__ == "TrecSource":
        return data
    if isinstance(data, pl.DataFrame):
        return FrameSource(data, label or "<DataFrame>")
    if isinstance(data, pl.LazyFrame):
        return FrameSource(data.collect(), label or "<LazyFrame>")
    if isinstance(data, str | os.PathLike):
        from mobeval.io.trec import TrecSource, sniff

        if not str(data).lower().endswith(PARQUET_SUFFIXES) and sniff(data):
            return TrecSource.open(data)  # a TREC run or qrels file, told by its first line
        return Source.resolve(data, names=names)
    if type(data).__module__.startswith("pandas"):
        return FrameSource(pl.from_pandas(data), label or "<pandas DataFrame>")
    raise TypeError(f"expected a path or a Polars DataFrame, got {type(data).__name__}")
