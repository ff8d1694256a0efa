"""Logits ``[N, C]`` and integer targets ``[N]``, read in row chunks for the logits task.

Logits: a 2-D float array (a NumPy array, or any object with ``__dlpack__`` or ``__array__``: a
torch / JAX / CuPy tensor on the CPU, read through the protocol without importing its library,
zero-copy where DLPack allows), a ``.npy`` file (memory-mapped: only the chunk being scored is
read; at a URL, by byte ranges) or a Parquet file whose ``logits_column`` is a (fixed-size) list
of floats (read one row group at a time). Targets: an integer array (the same protocols), a
``.npy`` file, a Parquet file (its ``targets_column``), or the name of a column of the logits'
Parquet file. Files may be local or at any URL fsspec opens (:mod:`mobeval.io.remote`). Rows
are paired by position. Every problem is an :class:`~mobeval.errors.InputError` naming the file,
the column and the first offending row.
"""

from __future__ import annotations

import io
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa

from mobeval.errors import ConfigError, InputError, no_file
from mobeval.io.columns import TARGETS_COLUMN
from mobeval.io.objects import InputTypeError
from mobeval.io.remote import client_errors, filesystem, local_path, url_error, url_scheme
from mobeval.limits import address_space_limit

#: The most bytes of a remote ``.npy`` file read for its header (magic, length, dict).
HEADER_BYTES = 1 << 16
ACCEPTED = (
    "a NumPy array, an object with __dlpack__ or __array__ (a CPU tensor), a .npy file, or a "
    "Parquet file"
)


def is_array(data: object) -> bool:
    """An in-memory array: a NumPy array, or an object with ``__dlpack__``, or with
    ``__array__`` that is not a table (a DataFrame or an Arrow Table has columns)."""
    if isinstance(data, np.ndarray) or hasattr(data, "__dlpack__"):
        return True
    return hasattr(data, "__array__") and not hasattr(data, "columns")


def as_array(data: object, what: str) -> np.ndarray:
    """``data`` as a NumPy array: as it is, through DLPack (zero-copy), or ``__array__``. A
    tensor DLPack cannot hand over (on a GPU) is an InputError that says so."""
    if isinstance(data, np.ndarray):
        return data
    if hasattr(data, "__dlpack__"):
        try:
            return np.from_dlpack(data)
        except (BufferError, RuntimeError, TypeError, ValueError) as error:
            reason = (str(error).strip().splitlines() or [type(error).__name__])[0][:200]
            raise InputError(
                f"the {what} ({type(data).__name__}) cannot be read through DLPack ({reason}); "
                "a tensor on a GPU must be moved to the CPU first (tensor.cpu())"
            ) from None
    try:
        return np.asarray(data)
    except (TypeError, ValueError) as error:
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0][:200]
        raise InputError(f"the {what} ({type(data).__name__}) is not an array ({reason})") from None


def iter_logits(
    accumulator,
    logits: object,
    targets: object,
    *,
    chunk_rows: int,
    per_sample: bool,
    logits_column: str = "logits",
    targets_column: str = TARGETS_COLUMN,
) -> Iterator[tuple[int, pl.DataFrame | None]]:
    """Feed every row chunk to ``accumulator``; yield (its rows, its per-sample frame or None).

    ``accumulator.add(x, y, ...)`` scores a chunk (a
    :class:`mobeval.tasks.logits.LogitsAccumulator`). Inputs as in this module's docstring; an
    input without rows is an InputError.
    """
    if chunk_rows < 1:
        raise ConfigError(f"chunk_rows must be >= 1, not {chunk_rows}")
    path = input_name(logits)
    if is_targets_column(targets):
        targets_at = (path, targets)
    else:
        targets_at = (input_name(targets), targets_column if is_parquet(targets) else None)
    for first, x, y in logits_chunks(logits, targets, chunk_rows, logits_column, targets_column):
        frame = accumulator.add(
            x, y, first_row=first, path=path, targets_at=targets_at, per_sample=per_sample
        )
        yield len(x), frame
    if accumulator.n_classes is None:
        raise InputError("no logits rows", path=path)


def rows_per_chunk(
    logits: object,
    targets: object,
    budget: int,
    *,
    logits_column: str = "logits",
    targets_column: str = TARGETS_COLUMN,
) -> int:
    """Logits rows in ``budget`` values (rows x classes; at least one row). The classes are the
    first row's; a first chunk that cannot be read raises here, as the scoring would."""
    if budget < 1:
        raise ConfigError(f"chunk_rows must be >= 1, not {budget}")
    first = next(logits_chunks(logits, targets, 1, logits_column, targets_column), None)
    width = first[1].shape[-1] if first is not None and first[1].ndim == 2 else 1
    return max(1, budget // max(1, width))


def is_parquet(source: object) -> bool:
    return isinstance(source, str | os.PathLike) and str(source).lower().endswith(".parquet")


#: The dimensions of each input: logits rows x classes, one target per row.
DIMENSIONS = {"logits": 2, "targets": 1}


def read_array(source: object, what: str, column: str = TARGETS_COLUMN) -> np.ndarray:
    """An array as is, a ``.npy`` file memory-mapped (read lazily by the chunk slices; at a URL,
    or under an address-space limit, where a map of the whole file would count against it, by
    byte ranges: :class:`NpyRows`), or the ``column`` of a Parquet file (read whole: one
    integer per row); its dimensions checked (:data:`DIMENSIONS`: an InputError naming the
    input otherwise, a 0-d array, a single number, included)."""
    array = _read_array(source, what, column)
    if array.ndim != DIMENSIONS[what]:
        shape = f"shape {array.shape}" if array.ndim else "a single value (a 0-d array)"
        raise InputError(
            f"the {what} must be a {DIMENSIONS[what]}-D array, got {shape}",
            path=input_name(source),
        )
    return array


def _read_array(source: object, what: str, column: str) -> np.ndarray:
    import pyarrow.parquet as pq

    if is_array(source):
        return as_array(source, what)
    if not isinstance(source, str | os.PathLike):
        raise InputTypeError(f"the {what}", source, ACCEPTED)
    if not str(source).lower().endswith((".npy", ".parquet")):
        raise InputError(f"{what} must be {ACCEPTED}", path=source)
    path, fs = _located(source)
    if str(source).lower().endswith(".npy"):
        if fs is None and address_space_limit() is None:
            return _load_npy(path, what)
        return NpyRows(fs, path, what)
    try:
        with _opened(path, fs) as opened:
            parquet = pq.ParquetFile(opened)
            _require_column(parquet.schema_arrow.names, column, path)
            values = parquet.read(columns=[column]).column(0)
    except (pa.ArrowException, OSError, ValueError) as error:
        raise InputError(f"not a readable Parquet file ({error})", path=path) from None
    if values.null_count:
        row = int(np.flatnonzero(values.is_null().to_numpy())[0])
        raise InputError(f"null {what[:-1]}", path=path, column=column, key=f"row {row}")
    return values.to_numpy()


def _require_column(names: list[str], column: str, path) -> None:
    """``column`` is one of a Parquet file's column ``names``, once (two columns of one name are
    two candidates, not one input)."""
    if column not in names:
        raise InputError(f"missing column; found {names}", path=path, column=column)
    if names.count(column) > 1:
        raise InputError("two columns of the file have this name", path=path, column=column)


def _located(source) -> tuple[object, object | None]:
    """(path, fsspec file system or None) of a local path or a URL; InputError if no file."""
    if url_scheme(str(source)) is None:
        path = Path(local_path(source))
        if path.is_dir():
            raise InputError("a folder, not a file: give a .npy or Parquet file", path=path)
        if not path.is_file():
            raise no_file(path)
        return path, None
    fs, inside = filesystem(str(source))
    try:
        found = fs.isfile(inside)
    except Exception as error:  # noqa: BLE001 - network and permission errors of any fs
        raise url_error(source, error) from None
    if not found:
        raise no_file(source)
    return str(source), fs


@contextmanager
def _opened(path, fs):
    """What pyarrow reads: the local path itself, or the remote file opened."""
    if fs is None:
        yield path
        return
    with client_errors(path, (pa.ArrowException, ValueError)), fs.open(path, "rb") as handle:
        yield handle


class NpyRows:
    """A ``.npy`` array at a URL (``fs``: its fsspec file system) or in a local file (``fs``
    None), read as a memory map is read: its header once, then each slice of rows
    (``array[start:stop]``) by one byte-range read, so that only the slice takes memory or
    address space; ``len``, ``shape``, ``ndim`` and ``dtype`` as an array's. C order and plain
    (not object) types only."""

    def __init__(self, fs, url: str, what: str) -> None:
        self.fs, self.url = fs, url
        try:
            with client_errors(url), self._open() as stream:
                head = io.BytesIO(stream.read(HEADER_BYTES))
        except OSError as error:
            raise InputError(f"cannot read the .npy array ({error})", path=url) from None
        try:
            version = np.lib.format.read_magic(head)
            read_header = {
                (1, 0): np.lib.format.read_array_header_1_0,
                (2, 0): np.lib.format.read_array_header_2_0,
            }.get(version)
            if read_header is None:
                raise ValueError(f"unsupported .npy version {version}")
            self.shape, fortran, self.dtype = read_header(head)
            self.offset = head.tell()
        except Exception as error:  # a damaged header can raise anything its parser raises
            reason = str(error).split(". ")[0] or type(error).__name__
            raise InputError(f"not a readable .npy array of {what} ({reason})", path=url) from None
        if fortran or self.dtype.hasobject or not self.shape:
            raise InputError(
                f"a .npy array of {what} read by byte ranges (at a URL, or under an "
                "address-space limit) must be in C order, of numbers, with "
                f"rows (found {'Fortran order' if fortran else self.dtype}, shape {self.shape})",
                path=url,
            )
        self.ndim = len(self.shape)
        self.row_bytes = self.dtype.itemsize * int(np.prod(self.shape[1:], dtype=np.int64))

    def _open(self):
        return open(self.url, "rb") if self.fs is None else self.fs.open(self.url, "rb")

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, rows: slice) -> np.ndarray:
        start, stop, _ = rows.indices(len(self))
        count = max(0, stop - start)
        try:
            with client_errors(self.url), self._open() as stream:
                stream.seek(self.offset + start * self.row_bytes)
                data = stream.read(count * self.row_bytes)
        except OSError as error:
            raise InputError(f"cannot read the .npy array ({error})", path=self.url) from None
        if len(data) != count * self.row_bytes:
            raise InputError("the .npy array is truncated", path=self.url, key=f"row {start}")
        return np.frombuffer(data, dtype=self.dtype).reshape((count, *self.shape[1:]))


def _load_npy(path: Path, what: str) -> np.ndarray:
    """A ``.npy`` file memory-mapped; a truncated, pickled (object), text or zip file is an
    InputError."""
    try:
        with open(path, "rb") as stream:  # np.load reads a file without them as a pickle
            head = stream.read(len(np.lib.format.MAGIC_PREFIX))
        if head and head != np.lib.format.MAGIC_PREFIX and not head.startswith(b"PK"):
            raise ValueError("it does not begin with the bytes of a .npy file")
        with warnings.catch_warnings():  # e.g. "created on Python 2": read it, say nothing
            warnings.simplefilter("ignore")
            array = np.load(path, mmap_mode="r")
    except Exception as error:  # a damaged header can raise anything its parser raises
        reason = str(error).split(". ")[0] or type(error).__name__
        raise InputError(f"not a readable .npy array of {what} ({reason})", path=path) from None
    if not isinstance(array, np.ndarray):  # an .npz archive named .npy
        raise InputError(f"not a .npy array of {what} (an .npz archive?)", path=path)
    return array


def _parquet_batches(pf, path: Path, **options) -> Iterator:
    """``pf.iter_batches(**options)`` (``pf``: a pyarrow ParquetFile); a file that cannot be
    decoded is an InputError."""
    batches = pf.iter_batches(**options)
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except (pa.ArrowException, OSError, ValueError) as error:
            raise InputError(f"not a readable Parquet file ({error})", path=path) from None
        yield batch


def logits_chunks(
    logits: object, targets: object, chunk_rows: int, logits_column: str, targets_column: str
) -> Iterator:
    """``(first_row, logits_chunk, targets_chunk)`` over the whole input."""
    if is_parquet(logits):
        yield from _parquet_chunks(logits, targets, chunk_rows, logits_column, targets_column)
        return
    x = read_array(logits, "logits")
    y = read_array(targets, "targets", targets_column)
    if x.ndim == 2 and len(y) != len(x):
        raise InputError(f"{len(x)} logits rows but {len(y)} targets", path=input_name(targets))
    for first in range(0, len(x), chunk_rows):
        yield first, np.asarray(x[first : first + chunk_rows]), y[first : first + chunk_rows]


def _parquet_chunks(
    source, targets: object, chunk_rows: int, column: str, targets_column: str
) -> Iterator:
    path, fs = _located(source)
    with _opened(path, fs) as opened:
        yield from _parquet_file_chunks(opened, path, targets, chunk_rows, column, targets_column)


def _parquet_file_chunks(
    opened, path, targets: object, chunk_rows: int, column: str, targets_column: str
) -> Iterator:
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(opened)
    except (pa.ArrowException, OSError, ValueError) as error:
        raise InputError(f"not a readable Parquet file ({error})", path=path) from None
    target_column = targets if is_targets_column(targets) else None
    wanted = [column] + ([target_column] if target_column else [])
    for c in wanted:
        _require_column(pf.schema_arrow.names, c, path)
    y_all = None if target_column else read_array(targets, "targets", targets_column)
    first = 0
    width = None
    for batch in _parquet_batches(pf, path, batch_size=chunk_rows, columns=wanted):
        x = _list_matrix(batch.column(0), path, column, first, width)
        width = x.shape[1]
        y = (
            batch.column(1).to_numpy(zero_copy_only=False)
            if target_column
            else np.asarray(y_all[first : first + len(x)])
        )
        if target_column and batch.column(1).null_count:
            nulls = batch.column(1).is_null().to_numpy(zero_copy_only=False)
            row = first + int(np.flatnonzero(nulls)[0])
            raise InputError("null target", path=path, column=target_column, key=f"row {row}")
        yield first, x, y
        first += len(x)
    if y_all is not None and len(y_all) != first:
        raise InputError(f"{first} logits rows but {len(y_all)} targets", path=input_name(targets))


def _list_matrix(
    arr: pa.Array, path: Path, column: str, first: int, width: int | None
) -> np.ndarray:
    """A (fixed-size) list-of-floats column as a 2-D array; every row must have the same width:
    ``width`` (the earlier chunks'), or this chunk's first row's."""
    if arr.null_count:
        row = first + int(np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))[0])
        raise InputError("null logits row", path=path, column=column, key=f"row {row}")
    if pa.types.is_fixed_size_list(arr.type):
        width = arr.type.list_size  # one file: one width
    elif pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type):
        lengths = np.diff(arr.offsets.to_numpy())
        if width is None:
            width = int(lengths[0]) if len(lengths) else 0
        if (lengths != width).any():
            row = first + int(np.flatnonzero(lengths != width)[0])
            raise InputError(
                f"row width differs from the first row's {width}",
                path=path,
                column=column,
                key=f"row {row}",
            )
    else:
        raise InputError(f"must be a list of floats, not {arr.type}", path=path, column=column)
    values = arr.flatten()
    if not pa.types.is_floating(values.type):
        raise InputError(f"logits must be floats, not {values.type}", path=path, column=column)
    if values.null_count:
        raise InputError("null value inside a logits row", path=path, column=column)
    return values.to_numpy(zero_copy_only=False).reshape(len(arr), width)


def frame_rows(
    frame: object, first: int, logits_column: str = "logits", targets_column: str = TARGETS_COLUMN
) -> tuple[np.ndarray, np.ndarray]:
    """A batch given as a table (a Polars DataFrame, an Arrow Table or RecordBatch, any object
    with ``__arrow_c_stream__``) as ``(logits [n, C], targets [n])``: its ``logits_column``, a
    (fixed-size) list of floats per row, and its integer ``targets_column``, checked as a
    Parquet file's (``first``: the batch's first row, for messages)."""
    table = pa.table(frame.to_arrow() if isinstance(frame, pl.DataFrame) else frame)
    for column in (logits_column, targets_column):
        _require_column(table.column_names, column, None)
    x = _list_matrix(table.column(logits_column).combine_chunks(), None, logits_column, first, None)
    y = table.column(targets_column)
    if y.null_count:
        row = first + int(np.flatnonzero(y.is_null().to_numpy(zero_copy_only=False))[0])
        raise InputError("null target", column=targets_column, key=f"row {row}")
    return x, y.to_numpy()


def is_targets_column(targets: object) -> bool:
    """Targets named as a column of the logits' Parquet file (not a path, not an array)."""
    return (
        isinstance(targets, str)
        and not targets.lower().endswith((".npy", ".parquet"))
        and os.sep not in targets
    )


def input_name(source: object) -> str | None:
    """The file an input names (for messages); None for an array."""
    return str(source) if isinstance(source, str | os.PathLike) else None
