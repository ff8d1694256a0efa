"""Inputs named by a URL (``s3://``, ``gs://``, ``az://``, ``hf://``, ``memory://``, any scheme
fsspec knows): the file system comes from fsspec (:func:`fsspec.core.url_to_fs`), which loads
the protocol's package (s3fs, gcsfs, adlfs, huggingface_hub...) when it is installed. Files are
opened as byte streams and handed to pyarrow's Parquet and CSV readers, so a remote input is
streamed as a local one is (pyarrow reads a Parquet file's footer, then one row group at a time).

A local path is never a URL here (``C:\\data`` neither); ``file://`` URLs are read as local paths.

Every remote read has a bounded wait (:data:`DEFAULT_URL_TIMEOUT` seconds, or what the face was
given: ``url_timeout=`` in Python, ``--url-timeout`` on the command line and in ``trec_eval``,
``url_timeout`` in a job file; :func:`url_timeout`): to connect, and between two pieces of an
answer, so a server that stalls (headers, then nothing) is an InputError naming the URL within
that time, not fsspec / aiohttp's five minutes. :data:`TIMEOUT_OPTIONS` says how each client is
told (HTTP(S) through aiohttp, S3 through botocore); other schemes keep their client's own.
"""

from __future__ import annotations

import glob
import math
import re
from contextlib import contextmanager
from contextvars import ContextVar

from mobeval.errors import ConfigError, InputError, MobevalError

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


#: Seconds a remote read waits to connect, and for each next piece of an answer, before it fails.
DEFAULT_URL_TIMEOUT = 30.0
_TIMEOUT: ContextVar[float] = ContextVar("url_timeout", default=DEFAULT_URL_TIMEOUT)


def _http_timeout(seconds: float) -> dict:
    import aiohttp  # what fsspec's HTTP file system runs on (ImportError: named as missing)

    bounded = aiohttp.ClientTimeout(total=None, connect=seconds, sock_read=seconds)
    return {"client_kwargs": {"timeout": bounded}}


def _s3_timeout(seconds: float) -> dict:
    return {"config_kwargs": {"connect_timeout": seconds, "read_timeout": seconds}}


#: scheme -> the fsspec storage options that bound its client's waits to a number of seconds.
TIMEOUT_OPTIONS = {"http": _http_timeout, "https": _http_timeout, "s3": _s3_timeout}


def checked_url_timeout(value: object, option: str = "url_timeout") -> float:
    """``value`` as seconds if it is a positive finite number, else a ConfigError naming
    ``option`` (``--url-timeout``, ``job.toml: url_timeout``)."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and math.isfinite(value) and value > 0:
        return float(value)
    raise ConfigError(f"{option}: {value!r} is not a positive number of seconds")


@contextmanager
def url_timeout(seconds: object, option: str = "url_timeout"):
    """Within the block, remote reads wait at most ``seconds`` (checked; None: as around the
    block, :data:`DEFAULT_URL_TIMEOUT` unless an outer block says otherwise) to connect and
    between two pieces of an answer."""
    if seconds is None:
        yield
        return
    token = _TIMEOUT.set(checked_url_timeout(seconds, option))
    try:
        yield
    finally:
        _TIMEOUT.reset(token)


def filesystem(url: str):
    """(fsspec file system, path inside it) of ``url``, its waits bounded (:func:`url_timeout`);
    an unknown scheme, a missing package or a file system that cannot be reached is an
    InputError naming the URL."""
    import fsspec

    scheme = url_scheme(url)
    try:
        bounded = TIMEOUT_OPTIONS[scheme](_TIMEOUT.get()) if scheme in TIMEOUT_OPTIONS else {}
        return fsspec.core.url_to_fs(url, **bounded)
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
        raise url_error(url, error) from None


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
        raise url_error(url, error) from None
    return fs, tuple(fs.unstrip_protocol(p) for p in found)


@contextmanager
def client_errors(url, expected: tuple = ()):
    """Around reading ``url``: an error of the file system client's own kind (a library's, not an
    OSError nor one of ``expected``, which the caller words) becomes an InputError naming it."""
    try:
        yield
    except TimeoutError as error:  # asyncio's and the clients' too: an OSError, named here
        raise url_error(url, error) from None
    except (MobevalError, OSError, *expected):
        raise
    except Exception as error:  # noqa: BLE001 - network and permission errors of any fs
        raise url_error(url, error, "read") from None


def url_error(url: object, error: BaseException, doing: str = "reach") -> InputError:
    """The InputError of a failed remote read of ``url``: a wait past the URL timeout says so,
    any other error is ``cannot <doing> this URL (<the client's reason>)``."""
    if isinstance(error, TimeoutError):  # asyncio's, fsspec's FSTimeoutError, aiohttp's...
        seconds = f"{_TIMEOUT.get():g}"
        reason = f"no answer within {seconds} s (the URL timeout: --url-timeout, url_timeout)"
        return InputError(reason, path=url)
    return InputError(f"cannot {doing} this URL ({_first_line(error)})", path=url)


def file_size(fs, url: str) -> int:
    """The size in bytes of the file at ``url``; any failure is an InputError naming it."""
    try:
        with client_errors(url):
            return int(fs.size(url))
    except OSError as error:
        raise url_error(url, error, "read") from None


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0][:200] if lines else type(error).__name__
