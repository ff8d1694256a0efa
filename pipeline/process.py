"""The command line's process around its ``main``, the same for ``mobeval``, ``python -m mobeval``
(:mod:`mobeval.__main__`) and ``python -m mobeval.cli`` (:mod:`mobeval.cli.__main__`): tuned for a
batch run before its libraries load (:func:`mobeval.tuning.tune_process`), Numba imported without
the modules a run does not use (:func:`mobeval.kernels.numba_import.lighten_numba_import`), the
command run, and the process's objects frozen once it is done
(:func:`mobeval.tuning.before_exit`). A floor below the command line: its ``main`` is handed in,
loaded after the tuning."""

from __future__ import annotations

from collections.abc import Callable

from mobeval.kernels.numba_import import lighten_numba_import
from mobeval.tuning import before_exit, tune_process


def run_command(load_main: Callable[[], Callable[[], int]]) -> int:
    """The exit code of the ``main`` that ``load_main`` returns, run in the tuned process (see
    the module docstring); ``load_main`` is called after the tuning, so that the modules it
    imports load in the tuned process."""
    tune_process()
    lighten_numba_import()
    code = load_main()()
    before_exit()
    return code
