"""Plain or gzipped text files, read as bytes in blocks of whole lines (TREC files, the HuMob
validator's dataset). A file is gunzipped when it starts with gzip's magic bytes, whatever its name.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Iterator
from pathlib import Path

from mobeval.errors import InputError

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


def line_blocks(path: Path, block_bytes: int, unreadable: str) -> Iterator[tuple[bytes, int]]:
    """Whole lines, about ``block_bytes`` at a time, each block with the number of its first line
    (from 1); a last line without a newline gets one. A file that cannot be read is an InputError
    ``"<unreadable> (<reason>)"`` naming ``path``."""
    line = 1
    rest = b""
    try:
        with open_binary(path) as stream:
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
