"""``python -m mobeval.cli``: the same command line as ``mobeval``, its process tuned as
:mod:`mobeval.__main__` tunes it (but for the allocators' environment, read by the libraries that
``mobeval.cli`` has loaded by then: ``python -m`` imports the package before this module)."""

from mobeval.cli import main
from mobeval.tuning import before_exit, tune_process

if __name__ == "__main__":
    tune_process()
    code = main()
    before_exit()
    raise SystemExit(code)
