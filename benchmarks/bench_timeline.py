"""A ``mobeval`` run's timeline: seconds from the process's start to each step before, during and
after its work, in fresh processes, alternating this checkout and a baseline's.

    python benchmarks/bench_timeline.py [--repeat 4] [--baseline REV] -- nextloc --truth ...

The steps: the imports of ``mobeval.api``, Polars, NumPy, pyarrow and Numba (start and end), the
first Parquet or CSV batch opened (``Source._parquet_batches`` / ``_csv_batches`` entered) and
decoded (its first batch yielded), the engine's run begun (``LocalEngine.run``), the first and the
last chunk scored (``_Run.add``), the command done (``mobeval.tuning.before_exit``: its output
written and its files closed), and the process gone (its parent's ``wait``), the process run
through the command's entry (``mobeval.__main__.command``, or ``run`` before it). Time zero is the
parent's clock just before it starts the process (``time.time()`` is one clock for both). The
watch is a finder on ``sys.meta_path`` and wrapped methods: it adds a few milliseconds of its
own to the imports. Runs from snapshots of pipeline/ byte-compiled first (``datagen``,
``bench_coldstart``), as ``bench_startup`` does, each run once first to fill its Numba cache.
Prints each step's median and range (``--raw FILE``: every run's steps, as JSON).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_coldstart import snapshot_revision
from datagen import snapshot_pipeline

#: The code each watched process runs: the steps reported as JSON on stderr's last line.
WATCH = r"""
import os, sys, time
T0 = float(os.environ["MOBEVAL_TIMELINE_T0"])
steps = {}
def mark(name):
    steps.setdefault(name, time.time() - T0)

MODULES = ("mobeval.api", "polars", "numpy", "pyarrow", "numba", "mobeval.engines.local")

def wrap_first(owner, name, step, on_yield=None):
    function = getattr(owner, name)
    def wrapped(*args, **kwargs):
        mark(step)
        result = function(*args, **kwargs)
        if on_yield is None:
            return result
        def batches():
            for item in result:
                mark(on_yield)
                yield item
        return batches()
    setattr(owner, name, wrapped)

def patch(name, module):
    if name == "mobeval.io.sources":
        wrap_first(module.Source, "_parquet_batches", "first batch opened", "first batch decoded")
        wrap_first(module.Source, "_csv_batches", "first batch opened", "first batch decoded")
    elif name == "mobeval.engines.base":
        wrap_first(module.LocalEngine, "run", "engine run begun")
        add = module._Run.add
        def added(self, parts):
            mark("first chunk scored")
            steps["last chunk scored"] = time.time() - T0
            return add(self, parts)
        module._Run.add = added
    elif name == "mobeval.tuning":
        before = module.before_exit
        def done():
            mark("command done")
            sys.stderr.write("\nTIMELINE " + __import__("json").dumps(steps) + "\n")
            before()
        module.before_exit = done

class Watch:
    def find_spec(self, name, path, target=None):
        if name not in MODULES and name not in ("mobeval.io.sources", "mobeval.engines.base",
                                                "mobeval.tuning"):
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        execute = spec.loader.exec_module
        def exec_module(module):
            if name in MODULES:
                mark(name + " import begun")
            execute(module)
            if name in MODULES:
                mark(name + " imported")
            patch(name, module)
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, Watch())
mark("watch ready")
sys.argv = ["mobeval", *sys.argv[1:]]
import mobeval.__main__ as entry
raise SystemExit(getattr(entry, "command", entry.run)())
"""


def timeline(python_path: str, arguments: list[str]) -> dict[str, float]:
    """One process's steps, in seconds from its start."""
    environment = {**os.environ, "PYTHONPATH": python_path}
    environment["MOBEVAL_TIMELINE_T0"] = repr(time.time())
    started = float(environment["MOBEVAL_TIMELINE_T0"])
    done = subprocess.run(
        [sys.executable, "-c", WATCH, *arguments],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    gone = time.time() - started
    if done.returncode != 0 or "\nTIMELINE " not in done.stderr:
        raise SystemExit(done.stderr[-2000:])
    steps = json.loads(done.stderr.rsplit("\nTIMELINE ", 1)[1])
    steps["process gone"] = gone
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=4)
    parser.add_argument("--baseline", default=None, help="git revision to alternate with")
    parser.add_argument("--raw", default=None, help="a JSON file to write every run's steps to")
    parser.add_argument("arguments", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    arguments = [a for a in args.arguments if a != "--"]
    work = Path(tempfile.mkdtemp(prefix="mobeval-timeline-"))
    codes = {"this": snapshot_pipeline(str(work / "this"))}
    if args.baseline:
        codes["baseline"] = str(snapshot_revision(args.baseline, work / "baseline"))
    for path in codes.values():
        compileall.compile_dir(path, quiet=1)
        timeline(path, arguments)  # a copy's first run fills its Numba cache: not counted
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in codes}
    for _ in range(args.repeat):
        for name, path in codes.items():
            runs[name].append(timeline(path, arguments))
    os.system("uptime")
    if args.raw:
        Path(args.raw).write_text(json.dumps(runs))
    order = sorted({step for steps in runs["this"] for step in steps}, key=runs["this"][0].get)
    print("| step | " + " | ".join(codes) + " |")
    print("|---|" + "---|" * len(codes))
    for step in order:
        cells = []
        for name in codes:
            values = [steps[step] for steps in runs[name] if step in steps]
            if not values:
                cells.append("")
                continue
            cells.append(f"{statistics.median(values):.3f} s ({min(values):.3f}-{max(values):.3f})")
        print(f"| {step} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
