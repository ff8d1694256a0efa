"""SIGTERM stops a command as Ctrl-C does: by a KeyboardInterrupt in the main thread, so that
every ``finally`` and ``with`` on the way out runs (temporary files removed, OUT's staging
discarded, its lock released) and the command line exits 130 (``mobeval: interrupted``)."""

from __future__ import annotations

import contextlib
import signal
import threading


@contextlib.contextmanager
def terminate_as_interrupt():
    """SIGTERM raises KeyboardInterrupt for the ``with`` block (in the main thread), as Ctrl-C
    does: every ``finally`` and ``with`` on the way out runs, so a terminated command removes its
    temporary files and folders and releases OUT's lock (exit 130, ``mobeval: interrupted``)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
