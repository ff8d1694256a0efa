"""Outputs that appear whole or not at all, under names that cannot escape OUT, one run at a time.

Layout under OUT::

    OUT/summary/city=<c>/model=<m>/part-00000.parquet  metric, value, n
    OUT/per_unit/city=<c>/model=<m>/part-00000.parquet one row per unit (sample, uid, user)
    OUT/summary/city=<c>/model=<m>/run=<r>/...         one run (a seed, a fold) of a model
    OUT/manifest.json                                  job, versions, input fingerprints, timings
    OUT/compare/city=<c>/part-0.parquet                the stored comparison (mobeval compare)
    OUT/.lock                                          while a run holds OUT (flock), its pid
    OUT/.staging/                                      work in progress, emptied by every run
    OUT/report/                                        the report's default folder (mobeval report)

City, model and run names are path pieces, so they must be plain names (:func:`check_name`); a
model's results are either all runs (``model=<m>/run=<r>``: seeds, folds) or one result without
a run, never both (:func:`check_result_slot`). A run
holds an exclusive lock on ``OUT/.lock`` for its whole duration (:func:`output_lock`); a second run
on the same OUT is refused at once. Everything under ``OUT/.staging/`` belongs to the lock holder,
so taking the lock empties it (what a killed run left: staged parts, hash buckets, temporary
files; but not while a commit journal it refused is there). A (city, model) result is first
written under ``OUT/.staging/``, then replaces the one OUT holds whole (:func:`commit_result`):
each section directory the model owns is moved aside into the staging area, each new one moved
into place with ``os.replace`` (the summary last), a section not written this time left
removed, all under a journal that a failure, or the next run after a kill, undoes; then the
manifest records it as complete.
Nothing outside ``OUT/.staging/`` is ever deleted (:func:`remove_staged`) but the run's own lock
file, and OUT itself if the run created it and left it empty.

This module is the one place that decides what a command may write, replace and remove:

* inside OUT, a path reached only through folders that stay inside OUT (:func:`checked_destination`:
  a symbolic link on the way that leaves OUT is refused, naming it; the lock file is opened
  without following a link; a linked ``OUT/.staging`` is refused);
* a report anywhere but over or under what OUT owns (:data:`OWNED`, :func:`report_destination`);
* temporary folders outside OUT (a report's staging beside its target, Arrow stream spools, hash
  buckets) are :class:`mobeval.io.scratch.ScratchFolder`: removed on every way out, and by the
  next one of their kind when their process was killed;
* standard output is written whole or the command fails (:func:`mobeval.io.stdout.checked_stdout`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import glob
import json
import os
import posixpath
import re
import secrets
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mobeval.errors import ConfigError, OutputInUse
from mobeval.io import leftovers
from mobeval.io.journal import check_journal
from mobeval.io.partitions import check_partition_layout
from mobeval.io.scratch import locked_folder
from mobeval.io.whole import WholeFile, library_error, write_whole

if TYPE_CHECKING:
    import polars as pl

SECTIONS_LAST = "summary"
STAGING = ".staging"
LOCK = ".lock"
MANIFEST = "manifest.json"
#: What OUT owns at its top level: the manifest, the lock, the staging area and the result
#: sections. Only the commands that make them write there; a report never goes over or under one.
RESULT_SECTIONS = (
    *("summary", "per_unit", "per_day", "distributions", "density_map"),
    *("long_tail", "popularity_correlation", "cohorts"),
)
OWNED = (MANIFEST, LOCK, STAGING, *RESULT_SECTIONS, "compare")

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


def result_name(city: str, model: str, run: str | None = None, partition: str | None = None) -> str:
    """A result's name, in the manifest and under each section: ``city=<c>/model=<m>``, or
    ``city=<c>/model=<m>/run=<r>`` for one run (a seed, a fold) of a model that has several;
    after its ``partition`` if it has one (``date=2026-11-27/city=<c>/...``: results over
    time, :mod:`mobeval.io.partitions`)."""
    name = f"city={city}/model={model}" + ("" if run is None else f"/run={run}")
    return name if partition is None else f"{partition}/{name}"


def partition_path(
    section: str, city: str, model: str, run: str | None = None, partition: str | None = None
) -> str:
    """A result's section directory relative to OUT: ``section/<result_name>``."""
    return f"{section}/{result_name(city, model, run, partition)}"


def check_result_slot(
    out: str | os.PathLike,
    city: str,
    model: str,
    run: str | None,
    partition: str | None = None,
    matches: Callable[[str], bool] | None = None,
) -> None:
    """A ConfigError when OUT holds the model in the other shape: results of runs where this one
    has none, or a result without a run where this one is a run (Hive readers, compare and the
    report would meet one model as two tables); or results under other partition keys than
    ``partition``'s (:func:`mobeval.io.partitions.check_partition_layout`).
    ``matches(pattern)``: whether a glob pattern relative to OUT names something (default: on
    the local disk; the Spark engine passes its file system's)."""

    def on_disk(pattern: str) -> bool:
        return any(Path(out).glob(pattern))

    matches = matches or on_disk
    where = os.fspath(out).rstrip("/")
    check_partition_layout(where, partition, matches)
    for section in RESULT_SECTIONS:
        folder = partition_path(section, city, model, None, partition)
        if run is None and matches(f"{folder}/run=*"):
            found = "runs (run=<r>): give this result a run too"
        elif run is not None and matches(f"{folder}/*.parquet"):
            found = "a result without a run: score it again as a run, or name this model apart"
        else:
            continue
        raise ConfigError(
            f"{where}/{folder}: model {model!r} of city {city!r} already has {found} "
            "(a model's results are all runs or one result)"
        )


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


def _within(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def checked_destination(path: str | os.PathLike, out: str | os.PathLike) -> Path:
    """``path``, which a command is about to write, replace or remove, checked to lie inside
    ``out`` (lexically: no ``..`` out of it) and to be reached only through folders that stay
    inside OUT once resolved: a folder on the way that is a symbolic link leaving OUT is a
    ConfigError naming it. The last piece is not followed (a link there is replaced or removed
    itself, never its target). Returns ``path`` absolute and normalised."""
    top = Path(os.path.abspath(out))
    target = Path(os.path.normpath(os.path.abspath(path)))
    if target == top or not target.is_relative_to(top):
        raise ConfigError(f"{path}: not inside the output folder {out}: refusing to write there")
    root, folder = top.resolve(), top
    for piece in target.relative_to(top).parts[:-1]:
        folder = folder / piece
        if not _within(folder.resolve(), root):
            raise ConfigError(
                f"{folder}: a symbolic link to {folder.resolve()}, outside the output folder "
                f"{out}: mobeval writes only inside it (remove the link)"
            )
    return target


def check_inputs_apart(out: str | os.PathLike | None, inputs) -> None:
    """Refuse a local input (a path among ``inputs``; URLs, data objects and None pass) that
    lies under what ``out`` owns (:data:`OWNED`: a run replaces its result folders whole, so the
    input would be deleted), and a folder input that holds ``out`` (its results would be read as
    input). Paths are compared resolved, links followed: a ConfigError names the input. An OUT
    at a URL (Spark's) is not checked."""
    from mobeval.io.remote import local_path, url_scheme

    if (
        out is None or url_scheme(str(out)) is not None
    ):  # an OUT at a URL (Spark) holds no local input
        return
    top = Path(os.path.abspath(local_path(str(out)))).resolve()
    for given in inputs:
        if not isinstance(given, str | os.PathLike) or url_scheme(given) is not None:
            continue
        path = Path(os.path.abspath(local_path(given))).resolve()
        owned = next((name for name in OWNED if _within(path, top / name)), None)
        if owned is not None:
            raise ConfigError(
                f"{given}: an input inside {os.path.join(out, owned)}, which mobeval replaces "
                f"whole (the input would be deleted): move it out of the output folder {out}"
            )
        if path != top and top.is_relative_to(path) and path.is_dir():
            raise ConfigError(
                f"{given}: an input folder holding the output folder {out}, whose results would "
                "be read as input: give an --out outside it"
            )


def report_destination(path: str | os.PathLike, out: str | os.PathLike) -> Path:
    """``path``, where a report of ``out`` is to be written (with its ``<stem>_files`` folder
    beside), checked: outside OUT anywhere; inside OUT (lexically, or once its folder is
    resolved) through no link that leaves OUT (:func:`checked_destination`) and never over or
    under what OUT owns (:data:`OWNED`: the manifest, the lock, the staging area, the results):
    a ConfigError naming ``--output`` and the path otherwise."""
    top = Path(os.path.abspath(out))
    target = Path(os.path.normpath(os.path.abspath(path)))
    if target.is_relative_to(top):
        checked_destination(target, out)
    resolved, root = target.parent.resolve() / target.name, top.resolve()
    if _within(resolved, root):
        pieces = resolved.relative_to(root).parts
        if not pieces or pieces[0] in OWNED:
            owned = pieces[0] if pieces else "."
            raise ConfigError(
                f"--output: {path}: {owned} belongs to the output folder {out} (its manifest, "
                "lock, staging area and results): write the report elsewhere, e.g. in "
                f"{Path(out) / 'report'}"
            )
    return target


def _empty_staging(out: Path) -> None:
    """Delete everything under ``OUT/.staging`` and the folder itself (the lock holder's right)."""
    staging = out / STAGING
    if not staging.is_dir():
        return
    for entry in staging.iterdir():
        remove_staged(entry, out)
    staging.rmdir()


_HELD: dict[tuple[Path, int], int] = {}


def _why(out: Path, error: OSError) -> str:
    """Why the folder ``out`` cannot be made: the first piece of its path, from the root down,
    that is a file or a link to nothing, else the system's reason."""
    for path in [*reversed(out.parents), out]:
        if os.path.islink(path) and not os.path.exists(path):
            return f"{path} is a symbolic link to nothing"
        if os.path.lexists(path) and not os.path.isdir(path):
            return f"{path} is a file, not a folder"
    return error.strerror or str(error)


def _acquire(out: Path) -> int:
    """An open ``OUT/.lock`` holding the lock, with this process's id written in it. The file is
    opened without following a symbolic link (a linked lock is refused, naming it); if the pid
    cannot be written whole (a full disk), the lock file is removed again and the OSError names
    it."""
    lock = out / LOCK
    while True:
        try:
            handle = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o666)
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise ConfigError(
                    f"{lock}: a symbolic link: mobeval's lock file must be a plain file in the "
                    "output folder (remove the link)"
                ) from None
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
            if os.stat(lock, follow_symlinks=False).st_ino == os.fstat(handle).st_ino:
                _write_pid(handle, lock)
                return handle
        os.close(handle)  # its holder removed that file as we opened it: take the new one


def _write_pid(handle: int, lock: Path) -> None:
    """This process's id written whole into the lock file we hold; otherwise the file is
    removed, the handle closed (the lock released) and an OSError names the lock file."""
    pid = f"{os.getpid()}\n".encode()
    try:
        os.ftruncate(handle, 0)
        if os.pwrite(handle, pid, 0) != len(pid):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(lock)
        os.close(handle)
        raise OSError(error.errno, error.strerror, str(lock)) from None


def check_output_folder(out: Path) -> None:
    """Refuse an existing folder that is not an OUT: one that holds something besides what OUT
    owns (:data:`OWNED`) and no manifest, so that a run never writes its sections beside the
    user's own files. A new or empty folder, and an OUT written before, are fine."""
    if not out.is_dir() or (out / MANIFEST).exists():
        return
    foreign = sorted(entry.name for entry in out.iterdir() if entry.name not in OWNED)
    if foreign:
        raise ConfigError(
            f"{out}: not a mobeval output folder: it holds {foreign[0]!r} and no {MANIFEST}; "
            "give a new or empty folder (mobeval writes its own files there), or an output "
            "folder written before"
        )


@contextlib.contextmanager
def output_lock(out: str | os.PathLike):
    """Hold OUT exclusively for the ``with`` block: ``flock`` on ``OUT/.lock``, non-blocking, so
    a second run on the same OUT raises :class:`OutputInUse` at once and writes nothing. The
    operating system releases the lock when the process dies, even by SIGKILL. Re-entrant within
    one thread (a job holds it while the API evaluates each result). The outermost holder empties
    ``OUT/.staging`` on entry and exit, never while a commit journal is there (refused: what it
    moved aside stays), and on exit removes the lock file and OUT if it made it and it is empty."""
    out = Path(out)
    key = (out.resolve(), threading.get_ident())
    if key in _HELD:
        _HELD[key] += 1
        try:
            yield out
        finally:
            _HELD[key] -= 1
        return
    check_output_folder(out)
    created = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(f"{out}: cannot use this output folder ({_why(out, error)})") from None
    try:
        handle = _acquire(out)
        _HELD[key] = 1
        try:
            if (out / STAGING).is_symlink():
                raise ConfigError(
                    f"{out / STAGING}: a symbolic link: mobeval's staging area must be a folder "
                    "inside the output folder (remove the link)"
                )
            undo_interrupted_commits(LocalMoves(), str(out))
            _empty_staging(out)
            leftovers.sweep(locked_folder)  # what killed runs left elsewhere (reports' staging)
            yield out
        finally:
            del _HELD[key]
            try:
                if not (out / STAGING).is_symlink() and not any(out.glob(f"{STAGING}/commit-*")):
                    _empty_staging(out)  # a journal left (refused, or an undo cut short) stays
                with contextlib.suppress(FileNotFoundError):  # OUT removed under the run's feet
                    os.unlink(out / LOCK)
            finally:
                os.close(handle)  # releases the lock
    finally:
        if created:
            with contextlib.suppress(OSError):
                out.rmdir()  # only if empty: a run that wrote nothing leaves nothing


def write_parquet(frame: pl.DataFrame, path: Path) -> None:
    """``frame`` as Parquet to ``path``, streamed into a :class:`WholeFile` (written whole or an
    OSError naming the file and the free space, as a failure of Polars' own is one too)."""
    import polars as pl  # only a command that writes Parquet loads it

    with WholeFile(path) as file:
        try:
            frame.write_parquet(file)
        except pl.exceptions.PolarsError as error:
            raise (file.error() or library_error(error, path) or error) from None


def write_text_atomic(text: str, path: Path) -> None:
    """Write ``text`` to ``path``, a file directly in OUT (the manifest), whole through a new
    file in ``OUT/.staging`` (the umask-respecting mode of every output), renamed into place."""
    staging = path.parent / STAGING
    staging.mkdir(parents=True, exist_ok=True)
    temporary = staging / f"{path.name}.{secrets.token_hex(4)}.tmp"
    write_whole(temporary, text.encode(), exclusive=True)
    os.replace(temporary, path)


@contextlib.contextmanager
def made_parents(paths):
    """Make the parent folder of every path for the ``with`` block; if one cannot be made, or the
    block fails, the folders made here that are still empty are removed again (so a failed
    commit or report leaves the folders as they were)."""
    made: list[Path] = []
    try:
        for path in paths:
            for folder in reversed(Path(path).parents):
                if not folder.exists():
                    folder.mkdir()
                    made.append(folder)
        yield
    except BaseException:
        for folder in reversed(made):
            with contextlib.suppress(OSError):  # not empty: it holds what was moved in
                folder.rmdir()
        raise


def commit_result(
    moves, out: str, names: tuple[str, str, str | None], staged: dict[str, str], aside_root: str
) -> None:
    """Replace the result of ``names`` (city, model, run or None) under OUT by its ``staged``
    sections (section -> its folder in ``OUT/.staging``): the result owns one folder in each of
    :data:`RESULT_SECTIONS`; each it has in OUT is moved aside to
    ``<aside_root>/replaced-<section>`` and the staged one, if any, moved into its place (the
    summary last). A section not written
    this time is so removed with the rest: OUT never shows a section of an earlier run beside
    a new summary.

    Whole or not at all: before the first move, a journal ``OUT/.staging/commit-<token>.json``
    lists the moves; a failure undoes them (:func:`_undo`), and when the process was killed the
    next run to take OUT's lock does (:func:`undo_interrupted_commits`). Removing the journal is
    the commit; the folders moved aside are deleted after it. Only the result's own folders move,
    by rename (a link there moves itself, never followed). ``moves``: the file operations
    (:class:`LocalMoves`; the Spark engine's Hadoop ``Files``), on paths ``OUT/...``."""
    order = sorted(RESULT_SECTIONS, key=lambda section: section == SECTIONS_LAST)
    plan = [  # paths relative to OUT
        {
            "final": partition_path(section, *names),
            "aside": f"{aside_root}/replaced-{section}".removeprefix(f"{out}/"),
            "staged": staged[section].removeprefix(f"{out}/") if section in staged else None,
        }
        for section in order
    ]
    journal = f"{out}/{STAGING}/commit-{secrets.token_hex(4)}.json"
    moves.write_text(journal, json.dumps(plan))
    try:
        for move in plan:
            final = f"{out}/{move['final']}"
            if moves.exists(final):
                moves.rename(final, f"{out}/{move['aside']}")
            if move["staged"] is not None:
                moves.rename(f"{out}/{move['staged']}", final)
    except BaseException:
        _undo(moves, out, plan)
        moves.remove_staged(journal, out)
        raise
    moves.remove_staged(journal, out)  # the commit
    for move in plan:
        moves.remove_staged(f"{out}/{move['aside']}", out)


def _undo(moves, out: str, plan: list[dict]) -> None:
    """Put back what :func:`commit_result` moved, section by section from the last: a staged
    folder already in place goes back to the staging area, then the folder moved aside returns.
    Each step is read from what is on disk, so undoing an undo cut short finishes it."""
    for move in reversed(plan):
        final, aside = f"{out}/{move['final']}", f"{out}/{move['aside']}"
        staged = None if move["staged"] is None else f"{out}/{move['staged']}"
        if staged is not None and not moves.exists(staged) and moves.exists(final):
            moves.rename(final, staged)
        if moves.exists(aside):
            moves.rename(aside, final)


def undo_interrupted_commits(moves, out: str) -> None:
    """Undo every commit a killed run left half done (its journal ``OUT/.staging/commit-*.json``
    still there: :func:`commit_result`), so OUT holds the results as they were before it. One
    not exactly as a commit writes it (:func:`check_journal`) is a ConfigError: nothing moves."""
    for journal in moves.glob(f"{out}/{STAGING}/commit-*.json"):
        try:
            plan = json.loads(moves.read_text(journal))
            check_journal(plan, RESULT_SECTIONS, STAGING, PLAIN_NAME)
        except (ValueError, TypeError) as error:  # json's errors are ValueErrors too
            raise ConfigError(
                f"{journal}: not a commit journal mobeval wrote ({error}): nothing moved, "
                f"{out}/{STAGING} left as it is; put back what it names, then remove it"
            ) from None
        _undo(moves, out, plan)
        moves.remove_staged(journal, out)


class LocalMoves:
    """:func:`commit_result`'s file operations on the local disk."""

    exists = staticmethod(os.path.lexists)
    rename = staticmethod(os.replace)

    @staticmethod
    def remove_staged(path: str, out: str) -> None:
        remove_staged(path, out)

    @staticmethod
    def write_text(path: str, text: str) -> None:
        """Write a file whole: a temporary file beside it, renamed."""
        temporary = f"{path}.tmp"
        write_whole(temporary, text.encode())
        os.replace(temporary, path)

    @staticmethod
    def read_text(path: str) -> str:
        return Path(path).read_text()

    @staticmethod
    def glob(pattern: str) -> list[str]:
        return sorted(glob.glob(pattern))


def _prune_empty(folder: Path, out: Path) -> None:
    """Remove ``folder`` and the folders above it inside OUT while they are empty (what a
    section removed from OUT leaves: ``distributions/city=c``); a link is never removed."""
    top = Path(os.path.abspath(out))
    while folder != top and folder.is_relative_to(top):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


class StagedResult:
    """Where one (city, model[, run]) result is written before it is committed into ``out``
    (whose lock the caller holds, so the staging area starts empty)."""

    def __init__(
        self, out: Path, city: str, model: str, run: str | None = None, partition=None
    ) -> None:
        self.out = out
        self.city, self.model, self.run, self.partition = city, model, run, partition
        self.root = out / STAGING / result_name(*self.names)
        self.parts: dict[str, int] = {}
        self._writing: threading.Thread | None = None
        self._failed: BaseException | None = None

    @property
    def names(self) -> tuple:
        """City, model, run and partition (:func:`result_name`)."""
        return (self.city, self.model, self.run, self.partition)

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
        """Put this result in place of the one OUT holds (:func:`commit_result`: every section
        this model owns replaced, a section not written this time removed, whole or not at all);
        return section -> final directory. Every staged section's parent folder is made before
        anything moves, so a path that cannot be made (``OUT/summary`` is a file) stops the
        commit with nothing moved."""
        self._wait()
        names = self.names
        finals = {
            s: checked_destination(self.out / partition_path(s, *names), self.out)
            for s in RESULT_SECTIONS
        }
        staged = {section: str(self.root / section) for section in self.parts}
        with made_parents(finals[section] for section in staged):
            commit_result(LocalMoves(), str(self.out), names, staged, str(self.root))
        for section in set(RESULT_SECTIONS) - set(staged):
            _prune_empty(finals[section].parent, self.out)
        self.discard()
        return {section: str(self.out / partition_path(section, *names)) for section in staged}

    def discard(self) -> None:
        """Delete what was staged for this result."""
        with contextlib.suppress(Exception):  # discarding anyway: a failed write does not matter
            self._wait()
        remove_staged(self.root, self.out)
