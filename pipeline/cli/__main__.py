"""``python -m mobeval.cli``: the same command line as ``mobeval``, its process tuned and Numba
imported as :mod:`mobeval.__main__` does it (but for the allocators' environment, read by the
libraries that ``mobeval.cli`` has loaded by then: ``python -m`` imports the package before this
module); the interpreter ends it as it would."""

from mobeval.cli import main
from mobeval.kernels.numba_import import lighten_numba_import
from mobeval.tuning import before_exit, tune_process

if __name__ == "__main__":
    tune_process()
    lighten_numba_import()
    code = main()
    before_exit()
    raise SystemExit(code)
