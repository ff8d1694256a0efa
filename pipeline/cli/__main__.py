"""``python -m mobeval.cli``: the same command line as ``mobeval``, its process tuned and Numba
imported as :mod:`mobeval.__main__` does it (:func:`mobeval.process.run_command`; but for the
allocators' environment, read by the libraries that ``mobeval.cli`` has loaded by then: ``python
-m`` imports the package before this module); the interpreter ends it as it would."""

from mobeval.cli import main
from mobeval.process import run_command

if __name__ == "__main__":
    raise SystemExit(run_command(lambda: main))
