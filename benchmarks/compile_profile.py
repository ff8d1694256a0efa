"""Where a first run's compile goes: CPU seconds per kernel specialisation of one command.

    python benchmarks/compile_profile.py run jobs/nextloc_sample.toml --out /tmp/x --quiet

Runs the ``mobeval`` command given (its arguments as on the command line) in this process on an
empty ``NUMBA_CACHE_DIR`` (a new temporary folder), listening to Numba's ``numba:compile``
events (``numba.core.event``), and prints on stderr one line per specialisation compiled: its
own CPU seconds (the compiling thread's, so the load of other processes does not count and
nested compiles are subtracted), the seconds with those of the functions it called (compiled
first, inside its own compile), the function (Numba's overloads of NumPy functions included:
they compile again in every process that compiles a kernel using them) and its argument types;
then the total compile and the process's CPU seconds.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="compile-profile-")

from numba.core import event  # noqa: E402 (after NUMBA_CACHE_DIR: Numba reads it at import)


class CompileTimes(event.Listener):
    """(own seconds, total seconds, function, argument types) of each compile, nesting undone."""

    def __init__(self) -> None:
        self.open: list[list[float]] = []  # [start, seconds of nested compiles], innermost last
        self.rows: list[tuple[float, float, str, str]] = []

    def on_start(self, e: event.Event) -> None:
        self.open.append([time.thread_time(), 0.0])

    def on_end(self, e: event.Event) -> None:
        started, nested = self.open.pop()
        total = time.thread_time() - started
        if self.open:
            self.open[-1][1] += total
        function = e.data["dispatcher"].py_func
        name = f"{function.__module__.removeprefix('mobeval.')}.{function.__qualname__}"
        self.rows.append((total - nested, total, name, str(e.data["args"])))


def main() -> None:
    times = CompileTimes()
    event.register("numba:compile", times)
    cpu = time.process_time()
    from mobeval.cli import main as mobeval

    code = mobeval(sys.argv[1:])
    cpu = time.process_time() - cpu
    for own, total, name, args in sorted(times.rows, reverse=True):
        print(f"{own:6.2f} {total:6.2f}  {name:<48} {args[:100]}", file=sys.stderr)
    own = sum(row[0] for row in times.rows)
    kernels = sum(row[2].startswith("kernels.") for row in times.rows)
    print(
        f"{len(times.rows)} specialisations ({kernels} of mobeval's kernels): {own:.2f} s CPU"
        f" compiling, {cpu:.2f} s CPU in all (the command's imports and run included)",
        file=sys.stderr,
    )
    raise SystemExit(code)


if __name__ == "__main__":
    main()
