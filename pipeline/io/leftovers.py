"""Where this user's scratch folders are, so that any later mobeval run removes what a killed one
left, wherever it lies.

A scratch folder (:class:`mobeval.io.scratch.ScratchFolder`) may lie anywhere: a report's
staging folder beside its ``--output``, outside OUT and outside the system's temporary folder.
Killed (``kill -9``), its process removes nothing; a later run of the same kind in the same
folder would, but no other run looks there. So each scratch folder is recorded while it lives:
one file in this user's private registry (``$TMPDIR/mobeval-scratch-<uid>/``, mode 0700) naming
its path and a random token, also written in the folder (:data:`MARK`). Every run that makes a
scratch folder or takes OUT's lock sweeps the registry (:func:`sweep`): a folder holding its
record's token (provably the one mobeval made, never one made since under its name) whose lock
is free (its process is gone) is removed with its record; a record whose folder is gone, or
holds no such token, is dropped. A registry that is not this user's own
private folder is never read.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

#: The file in a recorded scratch folder holding its record's token: what proves the folder is
#: the one recorded, not one made since under its name.
MARK = ".mobeval-scratch"


def _registry(make: bool) -> Path | None:
    """This user's registry folder (made when ``make``), or None when it is absent or is not a
    folder of this user's that no one else may write (a link, another owner, open modes)."""
    folder = Path(tempfile.gettempdir()) / f"mobeval-scratch-{os.getuid()}"
    if make:
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)
    try:
        status = folder.lstat()
    except OSError:
        return None
    private = status.st_uid == os.getuid() and not status.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    return folder if stat.S_ISDIR(status.st_mode) and private else None


def record(path: Path) -> Path | None:
    """Mark the scratch folder ``path`` (just made) with a random token (:data:`MARK`) and record
    it with the token; the record, for :func:`forget`. Nothing is recorded where the registry
    cannot be used, nor marked where the mark cannot be written (a full disk): then only a run
    of its kind in the same folder removes it, and only if it is empty."""
    token = secrets.token_hex(16)
    for _ in range(2):  # once more if another run removed the empty registry as it was made
        folder = _registry(make=True)
        entry = None if folder is None else folder / f"{token[:16]}.json"
        try:
            (path / MARK).write_text(token)
            if entry is not None:
                entry.write_text(json.dumps({"path": str(path), "token": token}))
            return entry
        except FileNotFoundError:
            continue
        except OSError:  # a full disk: unrecorded, unmarked (only a run of its kind removes it)
            break
    for leftover in filter(None, (entry, path / MARK)):
        with contextlib.suppress(OSError):
            leftover.unlink()
    return None


def marked(path: Path) -> bool:
    """Whether ``path``, a folder named as a kind of scratch folder, is one mobeval made: it
    holds :data:`MARK` (or nothing: made and killed before its mark was written)."""
    try:
        return (path / MARK).is_file() or not any(path.iterdir())
    except OSError:
        return False


def forget(entry: Path | None) -> None:
    """Drop a scratch folder's record (the folder was removed), and the registry with its last
    record (the temporary folder is left as it was found)."""
    if entry is not None:
        with contextlib.suppress(OSError):
            entry.unlink()
            entry.parent.rmdir()


def sweep(locked: Callable[[Path], int | None]) -> None:
    """Remove every recorded scratch folder whose process is gone: still the folder recorded
    (its token) and ``locked(path)`` takes its lock (an open handle, closed here; None while a
    live run holds it). Records of folders gone are dropped; unreadable ones kept."""
    folder = _registry(make=False)
    if folder is None:
        return
    for entry in folder.glob("*.json"):
        try:
            recorded = json.loads(entry.read_text())
            path = Path(recorded["path"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        mark = None
        if path.is_dir() and not path.is_symlink():
            with contextlib.suppress(OSError, UnicodeDecodeError):
                mark = (path / MARK).read_text()
        if mark != recorded["token"]:
            forget(entry)  # gone, or not the folder recorded (made since under its name)
            continue
        handle = locked(path)
        if handle is not None:
            shutil.rmtree(path, ignore_errors=True)
            os.close(handle)
            forget(entry)
