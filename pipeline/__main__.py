"""``python -m mobeval`` and the ``mobeval`` command: the command line (:func:`mobeval.cli.main`),
Ctrl-C while its modules load included: one line, ``mobeval: interrupted``, exit 130 (the exit
code of :data:`mobeval.cli.EXIT_INTERRUPTED`, not imported: the interrupt may come before it is
loaded), never a traceback. The process is tuned for a batch run before its libraries load
(:func:`mobeval.tuning.tune_process`), Numba imported without the modules a run does not use
(:func:`mobeval.kernels.numba_import.lighten_numba_import`), and frozen after it
(:func:`mobeval.tuning.before_exit`)."""

import sys


def run() -> int:
    """The command line's exit code."""
    try:
        from mobeval.kernels.numba_import import lighten_numba_import
        from mobeval.tuning import before_exit, tune_process

        tune_process()
        lighten_numba_import()
        from mobeval.cli import main
    except KeyboardInterrupt:
        sys.stderr.write("mobeval: interrupted\n")
        return 130
    code = main()
    before_exit()
    return code


if __name__ == "__main__":
    raise SystemExit(run())
