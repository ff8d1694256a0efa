"""Which reader reads an input: the one place that knows every kind of input at once.

:func:`as_source` hands a path, glob, directory or URL to :class:`mobeval.io.sources.Source` or,
for a TREC run or qrels, to :class:`mobeval.io.trec.TrecSource`, and a Python object to
:func:`mobeval.io.objects.object_source`; :func:`fingerprint` is what ``--resume`` compares for
any input, logits arrays included; :func:`check_input` and :func:`is_uri` are the cheap looks
that job files and engines take at their inputs before any work. The readers themselves never
import this module.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

from mobeval.errors import ConfigError, InputError, no_file
from mobeval.io.remote import filesystem, local_path, url_error, url_scheme
from mobeval.io.sources import PARQUET_SUFFIXES, Source, file_fingerprint, remote_fingerprint

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")


def is_uri(path: str | Path) -> bool:
    """Whether a job path names another file system (``s3://b/k``, ``memory://x``,
    ``dbfs:/Volumes/v``; also once joined to a folder, ``/jobs/s3a:/b/k``)."""
    text = str(path)
    return "://" in text or any(_SCHEME.fullmatch(part) for part in PurePosixPath(text).parts)


def _is_source(data) -> bool:
    """Already a source (a :class:`Source`, a TREC file's, an object's...)."""
    return all(
        callable(getattr(type(data), name, None))
        for name in ("schema", "has_rows", "iter_batches", "fingerprint", "row_count_estimate")
    )


def as_source(data, *, label: str | None = None, names=None):
    """The source of an input: a path, glob, directory or URL (:meth:`Source.resolve`; a TREC
    run or qrels told by its first line: :class:`mobeval.io.trec.TrecSource`), or a Python object
    (:func:`mobeval.io.objects.object_source`: DataFrames, LazyFrames, Arrow objects, dicts of
    dicts); a MoveSim sequence file (``.data``: :mod:`mobeval.io.sequences`). ``names``: column
    names for header-less CSV files."""
    if _is_source(data):
        return data
    # each reader imported where it reads: a run loads the readers of its inputs only
    if isinstance(data, str | os.PathLike):
        spec = local_path(data) if isinstance(data, str) else data
        from mobeval.io import sequences

        if sequences.sniff(spec):
            return sequences.SequenceSource.open(spec)  # MoveSim's real.data / gene.data
        if not str(spec).lower().endswith(PARQUET_SUFFIXES):
            from mobeval.io.trec import TrecSource, sniff

            if sniff(spec):
                return TrecSource.open(spec)  # a TREC run or qrels file, told by its first line
        return Source.resolve(spec, names=names)
    from mobeval.io.objects import object_source

    return object_source(data, label)


def fingerprint(data) -> list[dict]:
    """What ``--resume`` compares for an input: a source's files (see :meth:`Source.fingerprint`),
    a ``.npy`` file's (or another local file's) size, mtime and first 64 KiB, or an in-memory
    array's shape and type."""
    from mobeval.io.logits import is_array

    if is_array(data):
        shape = getattr(data, "shape", None)
        return [
            {
                "path": "<array>",
                "type": type(data).__name__,
                "shape": None if shape is None else [int(n) for n in shape],
                "dtype": str(getattr(data, "dtype", None)),
            }
        ]
    if isinstance(data, str | os.PathLike) and str(data).lower().endswith(".npy"):
        if url_scheme(str(data)):
            return [remote_fingerprint(filesystem(str(data))[0], str(data), footer=False)]
        if not Path(data).is_file():
            raise no_file(data)
        return [file_fingerprint(Path(data), footer=False)]
    try:
        return as_source(data).fingerprint()
    except InputError:  # a local file of a family's own format (a location table): the file's
        local = isinstance(data, str | os.PathLike) and not url_scheme(str(data))
        if local and Path(data).is_file():
            return [file_fingerprint(Path(data), footer=False)]
        raise


def check_input(kind: str, path: Path | str, where: str) -> None:
    """A cheap look through the code that reads inputs (:func:`as_source`;
    at most a text file's first line is read): a file exists, a directory holds a file of a
    known format, a glob matches a file, locally or at a URL (logits' ``.npy`` / Parquet and
    ``kind`` "file", a file of a family's own format: a file). ConfigError naming ``where`` and
    the input."""
    try:
        if kind not in ("logits", "file"):
            as_source(path)
        elif not is_file(path):
            raise no_file(path)
    except InputError as error:  # its text names the path
        raise ConfigError(f"{where}: {error}") from None


def is_file(path: Path | str) -> bool:
    """Whether ``path`` (local, or a URL: :func:`mobeval.io.remote.filesystem`) is a file."""
    if url_scheme(str(path)) is None:
        return Path(path).is_file()
    fs, inside = filesystem(str(path))
    try:
        return fs.isfile(inside)
    except Exception as error:  # noqa: BLE001 - network and permission errors of any fs
        raise url_error(path, error) from None
