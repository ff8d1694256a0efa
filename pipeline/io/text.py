"""Plain or gzipped text files: read as bytes in blocks of whole lines (TREC files), such blocks
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


def readable(path: str | os.PathLike) -> bool:
    """Whether the local ``path`` is there to be read: a regular file, or a stream read once as
    it comes (a pipe: ``/dev/stdin``, a FIFO, ``<(...)``; a terminal; a socket). A folder is
    not."""
    return os.path.exists(path) and not os.path.isdir(path)


def open_binary(path: str | os.PathLike, filesystem=None):
    """The file as a binary stream, gunzipped when it starts with the gzip magic bytes.
    ``filesystem``: an fsspec file system holding ``path`` (None: the local one). A local file
    is opened once and its first bytes peeked, not read: a pipe is read once, from its start."""
    if filesystem is None:
        stream = open(path, "rb")  # noqa: SIM115 - returned open, closed by the caller
        if stream.peek(2)[:2] != GZIP_MAGIC:
            return stream
        unzipped = gzip.GzipFile(fileobj=stream, mode="rb")
        unzipped.myfileobj = stream  # closed with it, as gzip.open's own file is
        return unzipped
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


def whole_lines(stream, block_bytes: int, keep_blank_last: bool = False) -> Iterator[bytes]:
    """The lines of a binary ``stream`` in blocks of whole lines, about ``block_bytes`` at a
    time, every line ended by one LF (:func:`universal_newlines`); a last line without an end
    gets one, a blank last line is dropped unless ``keep_blank_last`` (Python's text-mode
    iteration yields it: a line of a HuMob submission)."""
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
    if rest.strip() or (rest and keep_blank_last):
        yield rest if rest.endswith(b"\n") else rest + b"\n"


def text_blocks(
    path: Path, block_bytes: int, unreadable: str, filesystem=None, keep_blank_last: bool = False
) -> Iterator[bytes]:
    """:func:`whole_lines` of the file at ``path``. A file that cannot be read is an InputError
    ``"<unreadable> (<reason>)"`` naming ``path``. ``filesystem``: as :func:`open_binary`'s."""
    guard = nullcontext() if filesystem is None else client_errors(path, READ_ERRORS)
    try:
        with guard, open_binary(path, filesystem) as stream:
            yield from whole_lines(stream, block_bytes, keep_blank_last)
    except READ_ERRORS as error:
        raise InputError(f"{unreadable} ({read_error_reason(error)})", path=path) from None


def line_blocks(
    path: Path, block_bytes: int, unreadable: str, filesystem=None, keep_blank_last: bool = False
) -> Iterator[tuple[bytes, int]]:
    """:func:`text_blocks`, each block with the number of its first line (from 1)."""
    line = 1
    for block in text_blocks(path, block_bytes, unreadable, filesystem, keep_blank_last):
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


def utf8_line_blocks(path: Path, what: str, block_bytes: int) -> Iterator[tuple[bytes, int]]:
    """The file (gunzipped) in blocks of whole lines, each with the 0-based index of its first
    line, every line ended by one LF (a blank last line kept), checked to be UTF-8 text. A file
    that cannot be read is an InputError ``"cannot read <what> (<reason>)"``; a byte that is not
    UTF-8 one naming it and its 0-based line index."""
    for block, line in line_blocks(path, block_bytes, f"cannot read {what}", keep_blank_last=True):
        bad = first_non_utf8(block)
        if bad is not None:
            raise InputError(
                f"not a UTF-8 text (CSV) file: byte 0x{bad[0]:02x} at line index "
                f"{line - 1 + bad[1]} cannot be decoded",
                path=path,
            )
        yield block, line - 1


#: The range of an Int64 column: a wider integer cannot be read as one.
INT64_RANGE = (-(1 << 63), (1 << 63) - 1)


def first_bad_field(block: bytes, line: int, names: list[str]) -> str:
    """Where the comma-separated ``block`` (its first line numbered ``line``) first is not
    ``names`` integers: ``line 7 has 6 fields, expected 5 (uid,d,t,x,y)``, ``line 7, column 't':
    'x' is not an integer`` (or ``... is empty or missing``, ``... does not fit in 64 bits``).
    A field is read as Python's ``int()`` reads it: a sign and blanks around it allowed."""
    lines = block.decode("utf-8", "replace").removesuffix("\n").split("\n")
    for number, text in enumerate(lines, start=line):
        fields = text.rstrip().split(",")
        if len(fields) != len(names):
            return (
                f"line {number} has {len(fields)} field(s), expected {len(names)} "
                f"({','.join(names)})"
            )
        for name, field in zip(names, fields, strict=True):
            value = field.strip()
            shown = value if len(value) <= 40 else value[:40] + "..."
            if not value:
                return f"line {number}, column '{name}' is empty or missing"
            if not value.lstrip("+-").isdigit() or not value.isascii():
                return f"line {number}, column '{name}': '{shown}' is not an integer"
            if not INT64_RANGE[0] <= int(value) <= INT64_RANGE[1]:
                return f"line {number}, column '{name}': '{shown}' does not fit in 64 bits"
    raise RuntimeError(f"no bad field in lines {line}..{line + len(lines) - 1}")


def _integer_frame(block: bytes, names: list[str]) -> pl.DataFrame | None:
    """The lines of ``block``, each exactly ``names`` integers, as Int64 columns; None when a
    line is not. Blanks around a field (the reference's ``int()`` takes them) are read by a
    second, slower pass over the block that failed the fast one."""
    import polars as pl

    try:
        frame = pl.read_csv(
            block, has_header=False, new_columns=names, schema={c: pl.Int64 for c in names}
        )
    except pl.exceptions.PolarsError:
        try:
            text = pl.read_csv(
                block, has_header=False, new_columns=names, schema={c: pl.String for c in names}
            )
        except pl.exceptions.PolarsError:  # a line with more fields than names
            return None
        frame = text.select(pl.col(c).str.strip_chars().cast(pl.Int64, strict=False) for c in names)
    return None if frame.null_count().sum_horizontal().item() else frame


def integer_csv_blocks(
    path: Path, names: list[str], keep: int, what: str, block_bytes: int = 64 << 20
) -> Iterator[pl.DataFrame]:
    """A comma-separated file of integer columns ``names`` (a first line starting with
    ``names[0]`` is a header), its first ``keep`` columns as Int64 frames, a block of whole lines
    at a time. Every line must hold exactly ``names`` integers: a line with another number of
    fields (a blank one included), a field that is not an integer or an empty one is an
    InputError naming ``what``, the line, the column and the value; so is a file without rows."""
    expected = ",".join(names)
    header = names[0].encode()
    rows = 0
    for block, line in line_blocks(path, block_bytes, f"cannot read {what}"):
        if block.startswith(header):
            block = block[block.find(b"\n") + 1 :]
            line += 1
            if not block:
                continue
        frame = _integer_frame(block, names)
        if frame is None:
            raise InputError(
                f"cannot read {what} as {expected}: {first_bad_field(block, line, names)}",
                path=path,
            )
        rows += frame.height
        yield frame.select(names[:keep])
    if rows == 0:
        raise InputError(f"{what} has no rows (expected {expected} lines)", path=path)
