"""Plain or gzipped text files: read as bytes in blocks of whole lines (TREC files), whole and
checked to be UTF-8 (a HuMob submission), or as blocks of integer CSV columns (the HuMob
validator's dataset). A file is gunzipped when it starts with gzip's magic bytes, whatever its
name. A line ends with LF, CR LF or a lone CR (:func:`universal_newlines`): a file written with
CR ends only has as many lines as the same file written with LF.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from mobeval.errors import InputError
from mobeval.io.remote import client_errors

if TYPE_CHECKING:
    import polars as pl

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


def universal_newlines(data: bytes) -> bytes:
    """``data`` with every line end (CR LF, or a CR alone) written as LF."""
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n") if b"\r" in data else data


def whole_lines(stream, block_bytes: int) -> Iterator[bytes]:
    """The lines of a binary ``stream`` in blocks of whole lines, about ``block_bytes`` at a
    time, every line ended by one LF (:func:`universal_newlines`); a last line without an end
    gets one, a blank last line is dropped."""
    rest = b""
    while chunk := stream.read(block_bytes):
        held = False
        if b"\r" in chunk or rest.endswith(b"\r"):  # CR ends: rewritten with the rest
            chunk, rest = rest + chunk, b""
            held = chunk.endswith(b"\r")  # perhaps the CR of a CR LF the read cut in two
            chunk = universal_newlines(chunk[:-1] if held else chunk)
        cut = chunk.rfind(b"\n") + 1
        if cut:
            yield b"".join((rest, memoryview(chunk)[:cut]))  # one copy of the block's bytes
            rest = chunk[cut:]
        else:
            rest += chunk
        if held:
            rest += b"\r"
    rest = universal_newlines(rest)
    if rest.strip():
        yield rest if rest.endswith(b"\n") else rest + b"\n"


def text_blocks(path: Path, block_bytes: int, unreadable: str, filesystem=None) -> Iterator[bytes]:
    """:func:`whole_lines` of the file at ``path``. A file that cannot be read is an InputError
    ``"<unreadable> (<reason>)"`` naming ``path``. ``filesystem``: as :func:`open_binary`'s."""
    guard = nullcontext() if filesystem is None else client_errors(path, READ_ERRORS)
    try:
        with guard, open_binary(path, filesystem) as stream:
            yield from whole_lines(stream, block_bytes)
    except READ_ERRORS as error:
        raise InputError(f"{unreadable} ({read_error_reason(error)})", path=path) from None


def line_blocks(
    path: Path, block_bytes: int, unreadable: str, filesystem=None
) -> Iterator[tuple[bytes, int]]:
    """:func:`text_blocks`, each block with the number of its first line (from 1)."""
    line = 1
    for block in text_blocks(path, block_bytes, unreadable, filesystem):
        yield block, line
        line += block.count(b"\n")


def first_non_utf8(data: bytes) -> tuple[int, int] | None:
    """(the byte, the 0-based index of its line) of the first byte of ``data`` that is not
    UTF-8 text, or None when ``data`` is UTF-8."""
    if data.isascii():
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        return data[error.start], data.count(b"\n", 0, error.start)
    return None


def read_utf8(path: Path, what: str) -> bytes:
    """The whole file as bytes (gunzipped, :func:`universal_newlines`), checked to be UTF-8
    text. A file that cannot be read is an InputError ``"cannot read <what> (<reason>)"``; a
    byte that is not UTF-8 one naming it and its 0-based line index."""
    try:
        with open_binary(path) as stream:
            data = universal_newlines(stream.read())
    except READ_ERRORS as error:
        raise InputError(f"cannot read {what} ({read_error_reason(error)})", path=path) from None
    bad = first_non_utf8(data)
    if bad is not None:
        raise InputError(
            f"not a UTF-8 text (CSV) file: byte 0x{bad[0]:02x} at line index {bad[1]} cannot be "
            "decoded",
            path=path,
        )
    return data


def first_bad_field(block: bytes, line: int, names: list[str]) -> str:
    """Where the comma-separated ``block`` (its first line numbered ``line``) first has a field
    of ``names`` (its first columns) that is not an integer: ``line 7, column 't': 'x' is not an
    integer``, or ``... is empty or missing``."""
    lines = block.decode("utf-8", "replace").removesuffix("\n").split("\n")
    for number, text in enumerate(lines, start=line):
        fields = text.split(",")
        for name, field in zip(names, fields + [""] * len(names), strict=False):
            value = field.strip()
            if not value:
                return f"line {number}, column '{name}' is empty or missing"
            if not value.lstrip("+-").isdigit() or not value.isascii():
                shown = value if len(value) <= 40 else value[:40] + "..."
                return f"line {number}, column '{name}': '{shown}' is not an integer"
    return "a field that is not an integer"


def integer_csv_blocks(
    path: Path, names: list[str], keep: int, what: str, block_bytes: int = 64 << 20
) -> Iterator[pl.DataFrame]:
    """A comma-separated file of integer columns ``names`` (a first line starting with
    ``names[0]`` is a header), its first ``keep`` columns as Int64 frames, a block of whole lines
    at a time. A field that is not an integer, or an empty or missing one, is an InputError
    naming ``what``; so is a file without rows."""
    import polars as pl

    schema = {c: pl.Int64 for c in names}
    header = names[0].encode()
    expected = ",".join(names)
    rows = 0
    for block, line in line_blocks(path, block_bytes, f"cannot read {what}"):
        if block.startswith(header):
            block = block[block.find(b"\n") + 1 :]
            line += 1
            if not block:
                continue
        try:
            frame = pl.read_csv(
                block, has_header=False, new_columns=names, schema=schema, columns=range(keep)
            )
            failed = frame.null_count().sum_horizontal().item() > 0
        except pl.exceptions.PolarsError:
            failed = True
        if failed:
            raise InputError(
                f"cannot read {what} as {expected}: {first_bad_field(block, line, names[:keep])}",
                path=path,
            )
        rows += frame.height
        yield frame
    if rows == 0:
        raise InputError(f"{what} has no rows (expected {expected} lines)", path=path)
