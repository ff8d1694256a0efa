"""``python -m mobeval.cli``: the same command line as ``mobeval``."""

from mobeval.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
