"""Temporary folders outside OUT (a report's staging beside its target, Arrow stream spools, hash
buckets): removed on every way out, and by the next one of their kind when their process was
killed (:mod:`mobeval.io.leftovers` records where they lie)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
from pathlib import Path

from mobeval.io import leftovers


class ScratchFolder:
    """A temporary folder ``parent/<prefix><random>`` for one command's work outside OUT's
    staging area, removed by :meth:`close` (or leaving a ``with`` block) on every way out. While
    open it holds an ``flock`` on the folder itself, which the operating system releases when the
    process dies, even by SIGKILL: so a folder whose lock is free is what a killed run left, and
    a new ScratchFolder or OUT's lock removes it, wherever it lies (it is recorded while it
    lives: :mod:`mobeval.io.leftovers`), never one another live run holds."""

    def __init__(self, parent: str | os.PathLike, prefix: str) -> None:
        parent = Path(parent)
        parent.mkdir(parents=True, exist_ok=True)
        _remove_leftovers(parent, prefix)
        while True:
            path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
            handle = locked_folder(path)
            if handle is not None:  # else a leftover sweep took it as we made it: make another
                break
        self.path, self._handle, self._record = path, handle, leftovers.record(path)

    def close(self) -> None:
        """Remove the folder and what it holds (once; later calls do nothing)."""
        if self._handle is None:
            return
        shutil.rmtree(self.path, ignore_errors=True)
        leftovers.forget(self._record)
        os.close(self._handle)
        self._handle = None

    def __enter__(self) -> Path:
        return self.path

    def __exit__(self, *exc) -> None:
        self.close()


def locked_folder(path: Path) -> int | None:
    """An open handle on folder ``path`` holding its exclusive ``flock``; None if the folder is
    gone, is not a plain folder, or another process holds the lock."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.stat(path, follow_symlinks=False).st_ino == os.fstat(handle).st_ino:
            return handle
    except OSError:
        pass
    os.close(handle)
    return None


def _remove_leftovers(parent: Path, prefix: str) -> None:
    """Remove killed runs' leftovers: ``parent/<prefix>*`` and recorded folders, lock free."""
    leftovers.sweep(locked_folder)
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            if entry.name.startswith(prefix) and leftovers.marked(entry):  # never the user's
                handle = locked_folder(entry)
                if handle is not None:
                    shutil.rmtree(entry, ignore_errors=True)
                    os.close(handle)
