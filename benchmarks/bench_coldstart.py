"""Cold start: the first run of each task family on an empty Numba cache, beside a warm run.

    python benchmarks/bench_coldstart.py [--families nextloc,recs,trajectory,logits] [--repeat 1]

For each family, in fresh processes, alternating: ``mobeval run jobs/<family>_sample.toml`` with
``NUMBA_CACHE_DIR`` a new empty folder (every kernel the run uses compiles: "cold"), then the same
command again on that folder ("warm": the kernels load from the cache), then ``mobeval warmup
--family <family>`` on another empty folder and the job on it ("after warmup": what a container
image built with ``mobeval warmup`` pays on its first run). Prints the wall seconds of each process
(interpreter start and imports included), the number of kernels compiled (Numba's
``NUMBA_DEBUG_CACHE`` save lines) and the goal (cold <= 3 s per family). Runs from a snapshot of
pipeline/ taken at start (``datagen.snapshot_pipeline``), so edits made meanwhile do not count.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from datagen import snapshot_pipeline
from measure import load

REPO_ROOT = Path(__file__).resolve().parents[1]
GOAL_S = 3.0


def mobeval(cache: Path, *args: str) -> tuple[float, int]:
    """Wall seconds of one ``python -m mobeval ARGS`` process on ``cache``, and the number of
    kernels it compiled and saved."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), NUMBA_DEBUG_CACHE="1")
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "mobeval", *args],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=env,
    )
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"mobeval {' '.join(args)} failed:\n{result.stderr}")
    return seconds, sum("data saved to" in line for line in result.stdout.splitlines())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default="nextloc,recs,trajectory,logits")
    parser.add_argument("--repeat", type=int, default=1, help="cold/warm pairs per family")
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="bench-coldstart-")
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    snapshot_pipeline(str(Path(scratch) / "code"))
    print(f"{os.cpu_count()} CPUs; load average at start (1/5/15 min): {load()}")
    print(f"code: snapshot of pipeline/ in {scratch}/code\n")
    print(
        f"  {'family':<11} {'cold':>8} {'compiled':>9} {'warm':>8} {'after warmup':>13}"
        f" {'warmup':>8}  cold <= {GOAL_S:.0f} s"
    )
    for family in args.families.split(","):
        job = f"jobs/{family}_sample.toml"
        cold, warm, after, warmup, compiled = [], [], [], [], 0
        for i in range(args.repeat):
            cache = Path(scratch) / f"{family}-{i}"
            out = Path(scratch) / f"out-{family}-{i}"
            seconds, compiled = mobeval(cache, "run", job, "--out", str(out), "--quiet")
            cold.append(seconds)
            warm.append(mobeval(cache, "run", job, "--out", str(out), "--quiet")[0])
            prepared = Path(scratch) / f"{family}-{i}-warmup"
            warmup.append(mobeval(prepared, "warmup", "--family", family)[0])
            seconds, late = mobeval(prepared, "run", job, "--out", str(out), "--quiet")
            after.append(seconds)
            assert late == 0, f"{family}: the run after warmup compiled {late} kernels"
        med = statistics.median
        verdict = "MET" if med(cold) <= GOAL_S else "missed"
        print(
            f"  {family:<11} {med(cold):>7.1f}s {compiled:>9} {med(warm):>7.1f}s "
            f"{med(after):>12.1f}s {med(warmup):>7.1f}s  {verdict}"
        )
    print(f"\nload average at end (1/5/15 min): {load()}")


if __name__ == "__main__":
    main()
