"""File sources: a Parquet file, a directory or glob of Parquet files, a CSV file (optionally
.gz), a RecBole atomic file (:mod:`mobeval.io.recbole`), each local or at a URL that fsspec opens
(``s3://``, ``gs://``, ``az://``, ``hf://``, ``memory://``: :mod:`mobeval.io.remote`). A source
streams DataFrames with bounded memory; it never knows a metric. Which reader takes an input
(these, a TREC file's, a Python object's) is decided in :mod:`mobeval.io.inputs`.

Every source has ``label`` (what the user gave, for messages), ``schema()``, ``has_rows()``,
``row_count_estimate()``, ``iter_batches(columns, batch_rows)`` (may be called more than once)
and ``fingerprint()`` (what ``--resume`` compares).
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pyarrow as pa

from mobeval.errors import InputError
from mobeval.io import recbole
from mobeval.io.parquet_batches import parquet_batches
from mobeval.io.remote import (
    client_errors,
    file_size,
    local_path,
    remote_files,
    url_scheme,
)
from mobeval.io.text import READ_ERRORS as TEXT_ERRORS
from mobeval.io.text import open_binary

PARQUET_SUFFIXES = (".parquet", ".pq")
CSV_SUFFIXES = (".csv", ".csv.gz", ".txt", ".txt.gz")
#: Names that say text but not which table: their first line is looked at (a RecBole header?).
TEXT_SUFFIXES = (".txt", ".txt.gz")
FINGERPRINT_BYTES = 1 << 16
#: What reading a damaged file raises: Arrow's errors, ValueError (pyarrow decodes column names
#: and strings as UTF-8: UnicodeDecodeError), what reading a gzipped text raises (OSError,
#: EOFError, zlib.error: :data:`mobeval.io.text.READ_ERRORS`), and a panic of Polars' Rust code on
#: bytes it did not expect (a BaseException).
READ_ERRORS = (pa.ArrowException, ValueError, *TEXT_ERRORS, pl.exceptions.PanicException)
#: How each format is named in messages.
KINDS = {"parquet": "Parquet", "csv": "CSV", "recbole": "RecBole atomic"}


def plain_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` without its metadata and its fields' (Polars panics, printing a Rust backtrace,
    on metadata bytes that are not UTF-8; mobeval reads none of it)."""
    return pa.schema([field.remove_metadata() for field in schema])


def plain_batch(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` with :func:`plain_schema` (itself when it has no metadata)."""
    if batch.schema.metadata is None and all(f.metadata is None for f in batch.schema):
        return batch
    return pa.RecordBatch.from_arrays(batch.columns, schema=plain_schema(batch.schema))


def columns_present(names) -> str:
    """``columns present: [...]`` for a missing-column message; when a CSV header was read as
    one column whose name holds another separator, the likely cause as well."""
    names = list(names)
    text = f"columns present: {names}"
    if len(names) == 1:
        for mark, word in ((";", "semicolons"), ("\t", "tabs"), ("|", "vertical bars")):
            if mark in names[0]:
                return f"{text}: the header looks separated by {word}; CSV files need commas"
    return text


def require_ids(schema: dict, columns, label: str, first: pl.DataFrame | None = None) -> None:
    """Each of ``columns`` (ids: a unit's, an item's) holds integers, strings or other exact
    values, never floats: two inputs that type an id differently are compared as text, and a
    float's text (``10.0``) is never the integer's (``10``), so a float id would silently match
    nothing (as pandas writes an integer column that had a missing value), or be cut to one
    (``10.5`` read as ``10``). ``first``: rows of the input, whose first id the error names."""
    for column in columns:
        dtype = schema[column]
        if dtype.is_float() or dtype.is_decimal():
            raise InputError(
                f"ids must be integers or strings, found {dtype} (write the ids as integers: a "
                "float id 10.0 is never the id 10 of the other input)",
                path=label,
                column=column,
                key=None if first is None or not first.height else first[column][0],
            )


def format_of(name: str) -> str | None:
    """A file's format told from its name: ``parquet``, ``recbole`` (``.inter``), ``csv``."""
    name = name.lower()
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if name.endswith(recbole.SUFFIXES):
        return "recbole"
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    return None


def _first_line(path, filesystem=None, kind: str | None = None) -> str:
    """The first line of a (possibly gzipped) text file, at most 64 KiB, decoded leniently;
    ``kind`` (``csv``, ``recbole``) names the file in the error of a file that cannot be read."""
    try:
        with open_binary(path, filesystem) as stream:  # later bytes are not decoded
            return stream.readline(1 << 16).decode("utf-8", errors="replace")
    except READ_ERRORS as error:
        what = KINDS.get(kind, "text")
        raise InputError(f"not a readable {what} file ({error})", path=path) from None


@dataclass(frozen=True)
class Source:
    """Files of one format, read in order. ``label`` is what the user gave (used in messages);
    ``files`` are local paths, or URLs read through ``filesystem`` (an fsspec file system)."""

    label: str
    files: tuple
    format: str  # "parquet", "csv" or "recbole"
    has_header: bool = True
    names: tuple[str, ...] | None = None  # column names for header-less CSV
    #: A RecBole file's columns and their Arrow types (from its typed header).
    types: tuple[tuple[str, pa.DataType], ...] | None = None
    filesystem: object | None = field(default=None, compare=False, repr=False)

    @classmethod
    def resolve(cls, spec: str | os.PathLike, *, has_header: bool = True, names=None) -> Source:
        """Resolve a file, a directory (its Parquet, CSV or RecBole files, sorted) or a glob
        pattern, local or at a URL. A file's format is told from its name (``.parquet``,
        ``.csv``, ``.inter``); a ``.txt`` file, or one of another name, whose first line is a
        RecBole typed header is a RecBole file."""
        label = str(spec)
        filesystem = None
        if url_scheme(label):
            filesystem, files = remote_files(label, lambda p: format_of(p) is not None)
        else:
            files = _local_files(Path(local_path(label)), label)
        formats, headers = [], []
        for path in files:
            kind = format_of(str(path))
            header = None
            if kind is None or kind == "recbole" or str(path).lower().endswith(TEXT_SUFFIXES):
                header = recbole.parse_header(_first_line(path, filesystem, kind))
                if kind == "recbole" and header is None:
                    raise InputError(
                        "a RecBole atomic file starts with a header of name:type fields apart "
                        "by tabs (user_id:token, rating:float...)",
                        path=path,
                    )
                kind = "recbole" if header is not None else kind
            formats.append(kind)
            headers.append(header)
        if None in formats:
            bad = files[formats.index(None)]
            raise InputError(
                "unknown file type (expected .parquet, .csv, .csv.gz, a RecBole .inter file, "
                "or a TREC run or qrels)",
                path=bad,
            )
        if len(set(formats)) > 1:
            raise InputError("mixes file formats (Parquet, CSV, RecBole); give one", path=label)
        file_format = formats[0]
        types = None
        if file_format == "recbole":
            for path, header in zip(files, headers, strict=True):
                if list(header.items()) != list(headers[0].items()):
                    raise InputError("header differs from the first file's", path=path)
            types = tuple(headers[0].items())
        has_header = True
        if file_format == "csv" and names:
            first = _first_line(files[0], filesystem, file_format)
            has_header = not _is_number(first.split(",")[0])
        return cls(
            label,
            tuple(files),
            file_format,
            has_header,
            tuple(names) if names else None,
            types,
            filesystem,
        )

    @contextmanager
    def _opened(self, path):
        """What pyarrow reads ``path`` from: the path itself, or an open remote file. An error of
        the remote file system's own kind (not an OSError: a client library's) is an InputError
        naming the URL."""
        if self.filesystem is None:
            yield path
            return
        with client_errors(path, READ_ERRORS), self.filesystem.open(path, "rb") as handle:
            if self.format != "parquet" and str(path).lower().endswith(".gz"):
                yield pa.CompressedInputStream(pa.PythonFile(handle, mode="r"), "gzip")
            else:
                yield handle

    def _arrow_schema(self, path) -> pa.Schema:
        """The Arrow schema of one file (a Parquet footer, a text file's first block), its
        column names checked (:func:`_refuse_twice`)."""
        import pyarrow.parquet as pq

        try:
            with self._opened(path) as source:
                if self.format == "parquet":
                    arrow_schema = pq.ParquetFile(source).schema_arrow
                else:
                    arrow_schema = self._open_csv(source, block_size=1 << 20).schema
        except READ_ERRORS as error:
            kind = KINDS[self.format]
            raise InputError(f"not a readable {kind} file ({error})", path=path) from None
        try:
            _refuse_twice(arrow_schema.names, path)
        except READ_ERRORS as error:  # e.g. a column name that is not UTF-8
            raise InputError(f"unreadable column names ({error})", path=path) from None
        return arrow_schema

    def schema(self) -> dict[str, pl.DataType]:
        """Column names and Polars types (of the first file; the others are checked when read)."""
        first = self.files[0]
        arrow_schema = self._arrow_schema(first)
        try:
            # from no batches: Schema.empty_table() imports pandas (pyarrow's check for it,
            # about 0.3 s of CPU), before the columns are even checked
            empty = pl.from_arrow(pa.Table.from_batches([], plain_schema(arrow_schema)))
        except READ_ERRORS as error:
            raise InputError(f"unreadable column names ({error})", path=first) from None
        for name, arrow_type in zip(arrow_schema.names, arrow_schema.types, strict=True):
            if self.format == "csv" and (
                pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type)
            ):
                raise InputError("holds bytes that are not UTF-8 text", path=first, column=name)
        return dict(empty.schema)

    def row_count_estimate(self) -> int:
        """Exact for Parquet (from the footers); from the file size for text files."""
        if self.format == "parquet":
            return sum(self._parquet_rows(path) for path in self.files)
        return sum(max(1, self._size(path) // 16) for path in self.files)

    def _size(self, path) -> int:
        if self.filesystem is None:
            return os.path.getsize(path)
        return file_size(self.filesystem, path)

    def _parquet_rows(self, path) -> int:
        import pyarrow.parquet as pq

        try:
            with self._opened(path) as source:
                return pq.ParquetFile(source).metadata.num_rows
        except READ_ERRORS as error:
            raise InputError(f"not a readable Parquet file ({error})", path=path) from None

    def has_rows(self) -> bool:
        """Whether any file holds a data row: Parquet from the footers, a text file from its
        first non-empty block (a header-only CSV has none). An unreadable file is an InputError."""
        for path in self.files:
            if self.format == "parquet":
                if self._parquet_rows(path) > 0:
                    return True
                continue
            try:
                with self._opened(path) as source:
                    if any(batch.num_rows for batch in self._open_csv(source, 1 << 20)):
                        return True
            except READ_ERRORS as error:
                raise self._read_error("not a readable", error, path) from None
        return False

    def iter_batches(self, columns: list[str], batch_rows: int) -> Iterator[pl.DataFrame]:
        """Yield DataFrames of about ``batch_rows`` rows holding ``columns``, file by file; each
        file's columns of the same kind as the first file's (:func:`_same_kind`), and each
        file's header naming no column twice (:func:`_refuse_twice`: Arrow would read a CSV
        file's first column of the name, a Parquet file's both)."""
        first = None
        for index, path in enumerate(self.files):
            if index and self.format == "csv" and self.has_header:
                self._arrow_schema(path)  # a Parquet file's names are checked as it is opened
            try:
                with self._opened(path) as source:
                    if self.format == "parquet":
                        batches = self._parquet_batches(source, path, columns, batch_rows)
                    else:
                        batches = self._csv_batches(source, columns, batch_rows)
                    for batch in batches:
                        first = first or (path, batch.schema)
                        _check_kinds(batch.schema, path, *first)
                        yield batch
            except READ_ERRORS as error:
                raise self._read_error("could not read this", error, path) from None

    def _parquet_batches(self, source, path, columns, batch_rows) -> Iterator[pl.DataFrame]:
        # pre_buffer=False: with it, pyarrow keeps whole column chunks and RSS grows with the file.
        import pyarrow.parquet as pq

        parquet = pq.ParquetFile(source, pre_buffer=False, buffer_size=1 << 22)
        _refuse_twice(parquet.schema_arrow.names, path)
        missing = [c for c in columns if c not in parquet.schema_arrow.names]
        if missing:
            raise InputError(
                "missing column (present in the first file)", path=path, column=missing[0]
            )
        yield from parquet_batches(parquet, source, columns, batch_rows, plain_batch)

    def _open_csv(self, source, block_size: int, columns=None, *, as_text: bool = False):
        """Arrow's streaming reader of a CSV or RecBole file: ``columns`` only (None: all), each
        read as text when ``as_text``."""
        text_types = {c: pa.string() for c in columns} if as_text else {}
        import pyarrow.csv as pacsv

        if self.format == "recbole":
            types = dict(self.types) | text_types
            return pacsv.open_csv(
                source,
                read_options=pacsv.ReadOptions(
                    block_size=block_size, skip_rows=1, column_names=list(types)
                ),
                parse_options=pacsv.ParseOptions(delimiter=recbole.FIELD_SEPARATOR),
                convert_options=pacsv.ConvertOptions(column_types=types, include_columns=columns),
            )
        read_options = pacsv.ReadOptions(
            block_size=block_size,
            column_names=None if self.has_header else list(self.names),
        )
        convert = (
            pacsv.ConvertOptions(include_columns=columns, column_types=text_types)
            if columns
            else None
        )
        return pacsv.open_csv(source, read_options=read_options, convert_options=convert)

    def _csv_batches(self, source, columns, batch_rows) -> Iterator[pl.DataFrame]:
        reader = self._open_csv(source, block_size=max(1 << 20, batch_rows * 16), columns=columns)
        for batch in reader:
            yield pl.from_arrow(plain_batch(batch))

    def _read_error(self, what: str, error: BaseException, path) -> InputError:
        """``<what> <kind> file (<reason>)``, naming the column when Arrow's CSV reader gives its
        number (``In CSV column #2: ...``) and, for a value it could not convert (``invalid
        value '4x'``), the line that first holds it."""
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
        column = None
        number = re.search(r"CSV column #(\d+)", reason)
        if number and self.format != "parquet":
            names = [n for n, _ in self.types] if self.types else self.names
            if names is None:
                names = list(self.schema())
            if int(number.group(1)) < len(names):
                column = names[int(number.group(1))]
        invalid = re.search(r"invalid value '(.*)'$", reason)
        if column is not None and invalid:
            line = self._first_line_holding(path, column, invalid.group(1))
            if line is not None:
                reason += f" at line {line}"
        return InputError(f"{what} {KINDS[self.format]} file ({reason})", path=path, column=column)

    def _first_line_holding(self, path, column: str, value: str) -> int | None:
        """The line of the text file ``path`` whose ``column`` first holds ``value`` as written
        (a row a line, as in the files mobeval reads; the header is line 1), or None if it
        cannot be told: what a conversion error's message names."""
        import pyarrow.compute as pc  # only when a message needs it

        row = 0
        with suppress(*READ_ERRORS), self._opened(path) as source:
            for batch in self._open_csv(source, 1 << 20, [column], as_text=True):
                found = pc.index(batch.column(0), value).as_py()
                if found >= 0:
                    return row + found + (2 if self.has_header else 1)
                row += batch.num_rows
        return None

    def fingerprint(self) -> list[dict]:
        """Size, mtime and a SHA-256 of each file's Parquet footer (last 64 KiB) or first 64 KiB."""
        footer = self.format == "parquet"
        if self.filesystem is None:
            return [file_fingerprint(Path(path), footer=footer) for path in self.files]
        return [remote_fingerprint(self.filesystem, path, footer=footer) for path in self.files]


@dataclass(frozen=True)
class SpooledSource(Source):
    """A one-pass stream written to a temporary Parquet file (:func:`mobeval.io.objects.spooled`):
    its fingerprint is the stream's row count, not the temporary file."""

    rows: int = 0

    def fingerprint(self) -> list[dict]:
        return [{"path": self.label, "rows": self.rows}]


def _same_kind(left: pl.DataType, right: pl.DataType) -> bool:
    """Whether two files' types of one column read as the same values: equal, both numbers
    (the widths and an integer CSV beside a float one are cast where they are read), or lists
    of the same kind."""
    if left == right or (left.is_numeric() and right.is_numeric()):
        return True
    nested = (pl.List, pl.Array)
    return (
        isinstance(left, nested)
        and isinstance(right, nested)
        and _same_kind(left.inner, right.inner)
    )


def _refuse_twice(names: list[str], path) -> None:
    """A file whose header names a column twice is an InputError naming the file and the
    column: which of the two a reader takes is no defined answer."""
    twice = next((name for name in names if names.count(name) > 1), None)
    if twice is not None:
        raise InputError("two columns of the file have this name", path=path, column=twice)


def _check_kinds(schema, path, first_path, first_schema) -> None:
    """A file of a directory or glob whose column holds another kind of value than the first
    file's (strings beside integers) is refused, naming both files and the column."""
    for column, dtype in schema.items():
        if not _same_kind(dtype, first_schema[column]):
            raise InputError(
                f"type {dtype} differs from {first_schema[column]} in {first_path}: the files "
                "of one input must hold the same kind of values in a column",
                path=path,
                column=column,
            )


def _local_files(path: Path, label: str) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and format_of(p.name))
        if not files:
            raise InputError("directory holds no .parquet, .csv or .inter files", path=label)
        return files
    if path.is_file():
        return [path]
    if glob.has_magic(label):
        files = sorted(Path(p) for p in glob.glob(label, recursive=True) if Path(p).is_file())
        if not files:
            raise InputError("no file matches this pattern", path=label)
        return files
    raise InputError("no such file or directory", path=label)


def file_fingerprint(path: Path, *, footer: bool) -> dict:
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


def remote_fingerprint(filesystem, url: str, *, footer: bool) -> dict:
    """As :func:`file_fingerprint`, with the modification time the file system reports (its
    name differs between file systems: ``mtime``, ``LastModified``, ``updated``, ``created``)."""
    try:
        with client_errors(url, READ_ERRORS):
            info = filesystem.info(url)
        size = int(info.get("size") or 0)
        with client_errors(url, READ_ERRORS), filesystem.open(url, "rb") as handle:
            if footer and size > FINGERPRINT_BYTES:
                handle.seek(size - FINGERPRINT_BYTES)
            digest = hashlib.sha256(handle.read(FINGERPRINT_BYTES)).hexdigest()
    except READ_ERRORS as error:
        raise InputError(f"cannot read this file ({error})", path=url) from None
    stamps = ("mtime", "LastModified", "last_modified", "updated", "created")
    mtime = next((info[k] for k in stamps if info.get(k) is not None), None)
    return {
        "path": url,
        "size": size,
        "mtime": mtime if isinstance(mtime, int | float) else str(mtime),
        "sha256_footer" if footer else "sha256_head": digest,
    }


def _is_number(text: str) -> bool:
    return text.strip().lstrip("-").replace(".", "", 1).isdigit()
