"""``python -m mobeval`` and the ``mobeval`` command: the command line (:func:`mobeval.cli.main`),
Ctrl-C while its modules load included: one line, ``mobeval: interrupted``, exit 130 (the exit
code of :data:`mobeval.cli.EXIT_INTERRUPTED`, not imported: the interrupt may come before it is
loaded), never a traceback. The process is tuned for a batch run before its libraries load,
Numba imported without the modules a run does not use, and frozen after it
(:func:`mobeval.process.run_command`); the command's process then ends without tearing its
modules down (:func:`command`)."""

import atexit
import os
import sys
import threading


def run() -> int:
    """The command line's exit code (:func:`mobeval.process.run_command`)."""
    try:
        from mobeval.process import run_command

        return run_command(_main)
    except KeyboardInterrupt:  # while its modules load: ``main`` answers one of its own
        sys.stderr.write("mobeval: interrupted\n")
        return 130


def _main():
    """:func:`mobeval.cli.main`, imported in the tuned process."""
    from mobeval.cli import main

    return main


def command() -> int:
    """The ``mobeval`` command: :func:`run`, then the process's exit with its exit functions run
    and its standard streams flushed (Python's and the C library's), but not the interpreter's
    teardown of every module and object (NumPy's, Polars', Arrow's, Numba's and LLVM's: 0.03 s
    of a 0.6 s run, after the command's work is done, its files written whole and closed).
    Where a thread is still running or a stream cannot be flushed the code is returned, for the
    interpreter to end as it would."""
    code = run()
    others = [t for t in threading.enumerate() if t is not threading.main_thread()]
    if any(not t.daemon for t in others if t.is_alive()):
        return code
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        atexit._run_exitfuncs()  # as the interpreter's exit (they are cleared: run once)
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # the interpreter reports it as it would
        return code
    _flush_c_streams()
    os._exit(code)


def _flush_c_streams() -> None:
    """The C library's buffered streams written out (what a library printed through C's
    ``stdout``), as C's ``exit`` would."""
    import contextlib
    import ctypes

    with contextlib.suppress(OSError, AttributeError, TypeError):  # no C library (Windows)
        ctypes.CDLL(None).fflush(None)


if __name__ == "__main__":
    raise SystemExit(command())
