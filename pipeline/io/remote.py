"""Inputs named by a URL (``s3://``, ``gs://``, ``az://``, ``hf://``, ``memory://``, any scheme
fsspec knows): the file system comes from fsspec (:func:`fsspec.core.url_to_fs`), which loads
the protocol's package (s3fs, gcsfs, adlfs, huggingface_hub...) when it is installed. Files are
opened as byte streams and handed to pyarrow's Parquet and CSV readers, so a remote input is
streamed as a local one is (pyarrow reads a Parquet file's footer, then one row group at a time).

A local path is never a URL here (``C:\\data`` neither); ``file://`` URLs are read as local paths.
"""

from __future__ import annotations

import glob
import re
from contextlib import contextmanager

from mobeval.errors import InputError, MobevalError

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")


def url_scheme(spec: object) -> str | None:
    """The scheme of a URL (``"s3"`` for ``s3://bucket/key``), None for a local path."""
    if not isinstance(spec, str):
        return None
    match = _URL.match(spec)
    if match is None or match.group(1).lower() == "file":
        return None
    return match.group(1).lower()


def local_path(spec):
    """``spec`` without a ``file://`` prefix (any other spec as it is)."""
    if isinstance(spec, str) and spec.lower().startswith("file://"):
        return spec[len("file://") :]
    return spec


def filesystem(url: str):
    """(fsspec file system, path inside it) of ``url``; an unknown scheme, a missing package or
    a file system that cannot be reached is an InputError naming the URL."""
    import fsspec

    scheme = url_scheme(url)
    try:
        return fsspec.core.url_to_fs(url)
    except ImportError as error:  # fsspec: "Install s3fs to access S3"
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise InputError(
            f"{scheme}:// needs a package that is not installed ({reason})", path=url
        ) from None
    except ValueError as error:
        if "Protocol not known" in str(error):
            raise InputError(
                f"unknown URL scheme {scheme}:// (fsspec knows s3, gs, az, hf, memory, http, "
                "and the others of fsspec.available_protocols())",
                path=url,
            ) from None
        raise InputError(f"cannot open this URL ({_first_line(error)})", path=url) from None
    except Exception as error:  # noqa: BLE001 - a file system's constructor may raise anything
        raise InputError(f"cannot reach this URL ({_first_line(error)})", path=url) from None


def remote_files(url: str, accepted) -> tuple[object, tuple[str, ...]]:
    """(file system, files) of ``url``: one file, a directory's files whose names ``accepted``
    takes (recursively, sorted), or a glob pattern's matches. Each file is named as a URL (one
    file as given), so messages and fingerprints say where it is."""
    fs, path = filesystem(url)
    try:
        if glob.has_magic(path):
            found = sorted(p for p in fs.glob(path) if fs.isfile(p))
            if not found:
                raise InputError("no file matches this pattern", path=url)
        elif fs.isdir(path):
            found = sorted(p for p in fs.find(path) if accepted(p))
            if not found:
                raise InputError("directory holds no .parquet or .csv files", path=url)
        elif fs.isfile(path):
            return fs, (url,)
        else:
            raise InputError("no such file or directory", path=url)
    except InputError:
        raise
    except Exception as error:  # noqa: BLE001 - network and permission errors of any fs
        raise InputError(f"cannot reach this URL ({_first_line(error)})", path=url) from None
    return fs, tuple(fs.unstrip_protocol(p) for p in found)


@contextmanager
def client_errors(url, expected: tuple = ()):
    """Around reading ``url``: an error of the file system client's own kind (a library's, not an
    OSError nor one of ``expected``, which the caller words) becomes an InputError naming it."""
    try:
        yield
    except (MobevalError, OSError, *expected):
        raise
    except Exception as error:  # noqa: BLE001 - network and permission errors of any fs
        raise InputError(f"cannot read this URL ({_first_line(error)})", path=url) from None


def file_size(fs, url: str) -> int:
    """The size in bytes of the file at ``url``; any failure is an InputError naming it."""
    try:
        with client_errors(url):
            return int(fs.size(url))
    except OSError as error:
        raise InputError(f"cannot read this URL ({_first_line(error)})", path=url) from None


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0][:200] if lines else type(error).__name__
