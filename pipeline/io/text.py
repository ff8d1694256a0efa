"""Plain or gzipped text files: read as bytes in blocks of whole lines (TREC files), whole and
checked to be UTF-8 (a HuMob submission), or as blocks of integer CSV columns (the HuMob
validator's dataset). A file is gunzipped when it starts with gzip's magic bytes, whatever its
name.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import polars as pl

from mobeval.errors import InputError
from mobeval.io.remote import client_errors

#: What reading a (possibly gzipped) file can raise: OSError (permission denied, a bad gzip header
#: or trailing garbage: gzip.BadGzipFile), EOFError (a truncated gzip stream), zlib.error (corrupt
#: compressed data).
READ_ERRORS = (OSError, EOFError, zlib.error)
GZIP_MAGIC = b"\x1f\x8b"


def open_binary(path: str | os.PathLike, filesystem=None):
    """The file as a binary stream, gunzipped when it starts with the gzip magic bytes.
    ``filesystem``: an fsspec file system holding ``path`` (None: the local one)."""
    if filesystem is None:
        with open(path, "rb") as probe:
            magic = probe.read(2)
        return gzip.open(path, "rb") if magic == GZIP_MAGIC else open(path, "rb")
    with filesystem.open(path, "rb") as probe:
        magic = probe.read(2)
    return filesystem.open(path, "rb", compression="gzip" if magic == GZIP_MAGIC else None)


def read_error_reason(error: BaseException) -> str:
    """One readable phrase for one of :data:`READ_ERRORS`."""
    if isinstance(error, EOFError):
        return f"the compressed stream is truncated: {error}"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__


def line_blocks(
    path: Path, block_bytes: int, unreadable: str, filesystem=None
) -> Iterator[tuple[bytes, int]]:
    """Whole lines, about ``block_bytes`` at a time, each block with the number of its first line
    (from 1); a last line without a newline gets one. A file that cannot be read is an InputError
    ``"<unreadable> (<reason>)"`` naming ``path``. ``filesystem``: as :func:`open_binary`'s."""
    line = 1
    rest = b""
    guard = nullcontext() if filesystem is None else client_errors(path, READ_ERRORS)
    try:
        with guard, open_binary(path, filesystem) as stream:
            while chunk := stream.read(block_bytes):
                data = rest + chunk
                cut = data.rfind(b"\n") + 1
                block, rest = data[:cut], data[cut:]
                if block:
                    yield block, line
                    line += block.count(b"\n")
    except READ_ERRORS as error:
        raise InputError(f"{unreadable} ({read_error_reason(error)})", path=path) from None
    if rest.strip():
        yield rest + b"\n", line


def read_utf8(path: Path, what: str) -> bytes:
    """The whole file as bytes (gunzipped), checked to be UTF-8 text. A file that cannot be read
    is an InputError ``"cannot read <what> (<reason>)"``; a byte that is not UTF-8 one naming
    it and its 0-based line index."""
    try:
        with open_binary(path) as stream:
            data = stream.read()
    except READ_ERRORS as error:
        raise InputError(f"cannot read {what} ({read_error_reason(error)})", path=path) from None
    if data and np.frombuffer(data, dtype=np.uint8).max() >= 0x80:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as error:
            line = data.count(b"\n", 0, error.start)
            raise InputError(
                f"not a UTF-8 text (CSV) file: byte 0x{data[error.start]:02x} at line index "
                f"{line} cannot be decoded",
                path=path,
            ) from None
    return data


def integer_csv_blocks(
    path: Path, names: list[str], keep: int, what: str, block_bytes: int = 64 << 20
) -> Iterator[pl.DataFrame]:
    """A comma-separated file of integer columns ``names`` (a first line starting with
    ``names[0]`` is a header), its first ``keep`` columns as Int64 frames, a block of whole lines
    at a time. A field that is not an integer, or an empty or missing one, is an InputError
    naming ``what``; so is a file without rows."""
    schema = {c: pl.Int64 for c in names}
    header = names[0].encode()
    expected = ",".join(names)
    rows = 0
    for block, _ in line_blocks(path, block_bytes, f"cannot read {what}"):
        if block.startswith(header):
            block = block[block.find(b"\n") + 1 :]
            if not block:
                continue
        try:
            frame = pl.read_csv(
                block, has_header=False, new_columns=names, schema=schema, columns=range(keep)
            )
        except pl.exceptions.PolarsError as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            reason = reason if len(reason) <= 160 else reason[:160] + "..."
            raise InputError(f"cannot read {what} as {expected} ({reason})", path=path) from None
        if frame.null_count().sum_horizontal().item():
            fields = ", ".join(names[: keep - 1]) + f" or {names[keep - 1]}"
            raise InputError(
                f"{what} has a line with an empty or missing {fields} field", path=path
            )
        rows += frame.height
        yield frame
    if rows == 0:
        raise InputError(f"{what} has no rows (expected {expected} lines)", path=path)
