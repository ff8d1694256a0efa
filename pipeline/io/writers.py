"""Outputs that appear whole or not at all, under names that cannot escape OUT, one run at a time.

Layout under OUT::

    OUT/summary/city=<c>/model=<m>/part-00000.parquet  metric, value, n
    OUT/per_unit/city=<c>/model=<m>/part-00000.parquet one row per unit (sample, uid, user)
    OUT/manifest.json                                  job, versions, input fingerprints, timings
    OUT/.lock                                          while a run holds OUT (flock), its pid
    OUT/.staging/                                      work in progress, emptied by every run

City and model names are path pieces, so they must be plain names (:func:`check_name`). A run
holds an exclusive lock on ``OUT/.lock`` for its whole duration (:func:`output_lock`); a second run
on the same OUT is refused at once. Everything under ``OUT/.staging/`` belongs to the lock holder,
so taking the lock empties it (what a killed run left: staged parts, hash buckets, temporary
files). A (city, model) result is first written under ``OUT/.staging/``, then each section
directory is moved into place with ``os.replace`` (the summary last; a result it replaces is first
moved aside into the staging area and deleted afterwards), and the manifest records it as complete.
Nothing outside ``OUT/.staging/`` is ever deleted (:func:`remove_staged`) but the run's own lock
file, and OUT itself if the run created it and left it empty.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import posixpath
import re
import secrets
import shutil
import threading
from pathlib import Path

import polars as pl

from mobeval.errors import ConfigError, OutputInUse

SECTIONS_LAST = "summary"
STAGING = ".staging"
LOCK = ".lock"

#: A plain name: letters, digits and ``_ - . + =``, not starting with a dot (so never ``.``,
#: ``..`` or a hidden file), at most 200 characters; no path separator, no control character.
PLAIN_NAME = re.compile(r"[A-Za-z0-9_+=-][A-Za-z0-9_.+=-]{0,199}")
_NOT_PLAIN = re.compile(r"[^A-Za-z0-9_.+=-]")


def check_name(value: object, option: str) -> str:
    """``value`` if it is a plain city / model name (:data:`PLAIN_NAME`), else a ConfigError naming
    ``option`` (``--model``, ``tasks[0].city``...) and the value."""
    if isinstance(value, str) and PLAIN_NAME.fullmatch(value):
        return value
    raise ConfigError(
        f"{option}: {value!r} is not a plain name (letters, digits and _ - . + =, "
        "not starting with '.', at most 200 characters)"
    )


def plain_name(text: str) -> str:
    """``text`` made a plain name, predictably: every other character becomes ``_``, leading dots
    go, at most 200 characters are kept; ``model`` if nothing is left (``my model.v2`` ->
    ``my_model.v2``)."""
    return _NOT_PLAIN.sub("_", text).lstrip(".")[:200] or "model"


def partition_path(section: str, city: str, model: str) -> str:
    """A result's section directory relative to OUT: ``section/city=<c>/model=<m>``."""
    return f"{section}/city={city}/model={model}"


def require_staged(path: str | os.PathLike, out: str | os.PathLike) -> str:
    """``path``, checked to lie inside ``OUT/.staging`` (RuntimeError otherwise): every deletion
    mobeval makes (:func:`remove_staged`, the Spark engine's) goes through this. A local path comes
    back normalised, its folder resolved (symbolic links followed, the last piece itself not, so a
    link is removed, never its target) and compared with ``OUT`` resolved + ``/.staging``; a URI
    (``s3a://``, ``file:``) is compared lexically."""
    text, root = os.fspath(path), f"{os.fspath(out).rstrip('/')}/{STAGING}"
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]+:", root):
        checked, inside = text, posixpath.normpath(text).startswith(posixpath.normpath(root) + "/")
    else:
        lexical = Path(os.path.normpath(os.path.abspath(text)))
        target = lexical.parent.resolve() / lexical.name
        staging = Path(out).resolve() / STAGING  # a .staging that is a link leads outside: refused
        checked, inside = str(target), target != staging and target.is_relative_to(staging)
    if not inside:
        raise RuntimeError(f"refusing to delete {text}: not inside {root}")
    return checked


def remove_staged(path: str | os.PathLike, out: str | os.PathLike) -> None:
    """Delete ``path`` (a file or a directory tree; nothing if absent) inside ``OUT/.staging``."""
    target = Path(require_staged(path, out))
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    elif target.exists() or target.is_symlink():
        target.unlink()


def _empty_staging(out: Path) -> None:
    """Delete everything under ``OUT/.staging`` and the folder itself (the lock holder's right)."""
    staging = out / STAGING
    if not staging.is_dir():
        return
    for entry in staging.iterdir():
        remove_staged(entry, out)
    staging.rmdir()


_HELD: dict[tuple[Path, int], int] = {}


def _acquire(out: Path) -> int:
    """An open ``OUT/.lock`` holding the lock, with this process's id written in it."""
    lock = out / LOCK
    while True:
        try:
            handle = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as error:
            raise ConfigError(
                f"{out}: cannot use this output folder ({error.strerror or error})"
            ) from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = os.pread(handle, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(handle)
            raise OutputInUse(
                f"{out}: in use by another mobeval run (pid {owner}); "
                "wait for it or choose another --out"
            ) from None
        with contextlib.suppress(FileNotFoundError):
            if os.stat(lock).st_ino == os.fstat(handle).st_ino:
                os.ftruncate(handle, 0)
                os.pwrite(handle, f"{os.getpid()}\n".encode(), 0)
                return handle
        os.close(handle)  # its holder removed that file as we opened it: take the new one


@contextlib.contextmanager
def output_lock(out: str | os.PathLike):
    """Hold OUT exclusively for the ``with`` block: ``flock`` on ``OUT/.lock``, non-blocking, so
    a second run on the same OUT raises :class:`OutputInUse` at once and writes nothing. The
    operating system releases the lock when the process dies, even by SIGKILL. Re-entrant within
    one thread (a job holds it while the API evaluates each result). The outermost holder empties
    ``OUT/.staging`` on entry and on exit; on exit it also removes the lock file (a run that
    finds it replaced takes the new one) and OUT itself if it created it and it stayed empty."""
    out = Path(out)
    key = (out.resolve(), threading.get_ident())
    if key in _HELD:
        _HELD[key] += 1
        try:
            yield out
        finally:
            _HELD[key] -= 1
        return
    created = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(f"{out}: cannot use this output folder ({error.strerror})") from None
    handle = _acquire(out)
    _HELD[key] = 1
    try:
        _empty_staging(out)
        yield out
    finally:
        del _HELD[key]
        try:
            _empty_staging(out)
            with contextlib.suppress(FileNotFoundError):  # OUT removed under the run's feet
                os.unlink(out / LOCK)
        finally:
            os.close(handle)  # releases the lock
        if created:
            with contextlib.suppress(OSError):
                out.rmdir()  # only if empty: a run that wrote nothing leaves nothing


def write_parquet(frame: pl.DataFrame, path: Path) -> None:
    """``frame.write_parquet(path)``; an I/O failure (a full disk, a read-only file system) is an
    OSError naming the file, as Python's own writes raise it (Polars reports a ComputeError)."""
    try:
        frame.write_parquet(path)
    except pl.exceptions.PolarsError as error:
        found = re.search(r"os error (\d+)", str(error))
        if found is None:
            raise
        code = int(found.group(1))
        raise OSError(code, os.strerror(code), str(path)) from None


def write_text_atomic(text: str, path: Path) -> None:
    """Write ``text`` to ``path``, a file directly in OUT (the manifest), through a temporary file
    in ``OUT/.staging`` created with the umask-respecting mode of every other output, then
    renamed into place."""
    staging = path.parent / STAGING
    staging.mkdir(parents=True, exist_ok=True)
    temporary = staging / f"{path.name}.{secrets.token_hex(4)}.tmp"
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    with os.fdopen(handle, "w") as stream:
        stream.write(text)
    os.replace(temporary, path)


def _make_parents(paths) -> None:
    """Make the parent folder of every path; if one cannot be made, remove again the folders
    made here (so a failed commit leaves OUT as it was) and raise."""
    made: list[Path] = []
    try:
        for path in paths:
            for folder in reversed(path.parents):
                if not folder.exists():
                    folder.mkdir()
                    made.append(folder)
    except OSError:
        for folder in reversed(made):
            folder.rmdir()
        raise


class StagedResult:
    """Where one (city, model) result is written before it is committed into ``out`` (whose lock
    the caller holds, so the staging area starts empty)."""

    def __init__(self, out: Path, city: str, model: str) -> None:
        self.out = out
        self.city = city
        self.model = model
        self.root = out / STAGING / f"city={city}" / f"model={model}"
        self.parts: dict[str, int] = {}
        self._writing: threading.Thread | None = None
        self._failed: BaseException | None = None

    def add_part(self, section: str, frame: pl.DataFrame) -> None:
        """Append one part file (a chunk's rows) to ``section``. The file is written by a thread
        while the caller scores the next chunk (Polars' writer releases the GIL); one write at a
        time, so memory holds at most one part being written. A failed write is raised here or
        by :meth:`commit`."""
        self._wait()
        index = self.parts.get(section, 0)
        self.parts[section] = index + 1
        directory = self.root / section
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"part-{index:05d}.parquet"

        def write() -> None:
            try:
                write_parquet(frame, path)
            except BaseException as error:  # noqa: BLE001 - raised in the caller by _wait
                self._failed = error

        self._writing = threading.Thread(target=write, name="mobeval-writer", daemon=True)
        self._writing.start()

    def _wait(self) -> None:
        """Wait for the part being written; raise its error, if any."""
        if self._writing is not None:
            self._writing.join()
            self._writing = None
        if self._failed is not None:
            failed, self._failed = self._failed, None
            raise failed

    def commit(self) -> dict[str, str]:
        """Move every section into place, the summary last; return section -> final directory.

        A section that already exists is first renamed aside into the staging area, so the
        directory is always either the old result or the new one, never a mixture. Every
        section's parent folder is made before anything moves, so a path that cannot be made
        (``OUT/summary`` is a file) stops the commit with nothing moved."""
        self._wait()
        placed = {}
        sections = sorted(self.parts, key=lambda name: name == SECTIONS_LAST)
        finals = {s: self.out / partition_path(s, self.city, self.model) for s in sections}
        _make_parents(finals.values())
        for section, final in finals.items():
            aside = self.root / f"replaced-{section}"
            with contextlib.suppress(FileNotFoundError):
                os.replace(final, aside)
            os.replace(self.root / section, final)
            remove_staged(aside, self.out)
            placed[section] = str(final)
        self.discard()
        return placed

    def discard(self) -> None:
        """Delete what was staged for this result."""
        with contextlib.suppress(Exception):  # discarding anyway: a failed write does not matter
            self._wait()
        remove_staged(self.root, self.out)
