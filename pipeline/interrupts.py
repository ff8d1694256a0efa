"""SIGTERM stops a command as Ctrl-C does: by a KeyboardInterrupt in the main thread, so that
every ``finally`` and ``with`` on the way out runs (temporary files removed, OUT's staging
discarded, its lock released) and the command line exits 130 (``mobeval: interrupted``)."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading

#: Set when SIGTERM arrived in :func:`terminate_as_interrupt`'s block.
_terminated = threading.Event()


def interrupted(error: BaseException) -> bool:
    """Whether ``error`` is the interrupt coming back through a library that wrapped it (a
    KeyboardInterrupt raised inside a Polars or Numba callback returns as the library's own
    error): a KeyboardInterrupt among its causes and contexts, or a SIGTERM received."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, KeyboardInterrupt):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return _terminated.is_set()


@contextlib.contextmanager
def terminate_as_interrupt():
    """SIGTERM raises KeyboardInterrupt for the ``with`` block (in the main thread), as Ctrl-C
    does: every ``finally`` and ``with`` on the way out runs, so a terminated command removes its
    temporary files and folders and releases OUT's lock (exit 130, ``mobeval: interrupted``)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        _terminated.set()
        raise KeyboardInterrupt

    _terminated.clear()
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def quiet_teardown() -> None:
    """After an interrupt, finalizers' errors go unsaid (``sys.unraisablehook``): an object whose
    construction the interrupt cut short (llvmlite's ``PassBuilder`` while Numba compiles) fails
    in its ``__del__`` when it is collected, and Python would print that traceback after
    ``mobeval: interrupted``. The process is ending: nothing of it is the user's to act on."""
    sys.unraisablehook = _unsaid


def _unsaid(unraisable) -> None:
    """An error raised where nothing can catch it (a finalizer), after an interrupt: dropped."""
