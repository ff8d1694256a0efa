"""Cold start: the first run of each task family on an empty Numba cache, beside a warm run.

    python benchmarks/bench_coldstart.py [--families nextloc,recs,trajectory,logits] [--repeat 1]
                                         [--baseline REV]

For each family, in fresh processes, alternating: ``mobeval run jobs/<family>_sample.toml`` with
``NUMBA_CACHE_DIR`` a new empty folder (every kernel the run uses compiles: "cold"), then the same
command again on that folder ("warm": the kernels load from the cache), then ``mobeval warmup
--family <family>`` on another empty folder and the job on it ("after warmup": what a container
image built with ``mobeval warmup`` pays on its first run). Prints the wall seconds of each process
(interpreter start and imports included), the CPU seconds of the cold process (user + system: on
a loaded machine a steadier measure of the compile work than the wall time), the number of
kernels compiled (Numba's ``NUMBA_DEBUG_CACHE`` save lines) and the goal (cold <= 3 s per
family). Runs from a snapshot of pipeline/ taken at start (``datagen.snapshot_pipeline``), so
edits made meanwhile do not count. ``--baseline REV`` also measures pipeline/ as of git revision
REV (e.g. the commit before a change), its cold and warm runs alternating with ours, so that both
see the same load.
"""

from __future__ import annotations

import argparse
import atexit
import io
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from datagen import snapshot_pipeline
from measure import load

REPO_ROOT = Path(__file__).resolve().parents[1]
GOAL_S = 3.0
PYTHONPATH = os.environ.get("PYTHONPATH")  # as given, before snapshot_pipeline prepends its copy


def mobeval(cache: Path, *args: str, code: str | None = None) -> tuple[float, float, int]:
    """Wall seconds and CPU seconds (user + system) of one ``python -m mobeval ARGS`` process on
    ``cache``, and the number of kernels it compiled and saved. ``code``: a folder holding the
    ``mobeval`` package to run instead of the snapshot."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), NUMBA_DEBUG_CACHE="1")
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join([code, *filter(None, [PYTHONPATH])])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "mobeval", *args],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=env,
    )
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if result.returncode != 0:
        sys.exit(f"mobeval {' '.join(args)} failed:\n{result.stderr}")
    return seconds, cpu, sum("data saved to" in line for line in result.stdout.splitlines())


def snapshot_revision(revision: str, folder: Path) -> str:
    """pipeline/ as of git ``revision``, extracted into ``folder`` as the ``mobeval`` package."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", revision, "pipeline"],
        capture_output=True,
        cwd=REPO_ROOT,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    (folder / "pipeline").rename(folder / "mobeval")
    return str(folder)


def measure(family: str, scratch: Path, label: str, code: str | None) -> dict[str, float]:
    """One cold run, one warm run on its cache, and (ours only) a warm-up then a run."""
    job = f"jobs/{family}_sample.toml"
    cache, out = scratch / f"{family}-{label}", scratch / f"out-{family}-{label}"
    run = ("run", job, "--out", str(out), "--quiet")
    cold, cpu, compiled = mobeval(cache, *run, code=code)
    warm = mobeval(cache, *run, code=code)[0]
    shutil.rmtree(cache)
    figures = {"cold": cold, "cpu": cpu, "compiled": compiled, "warm": warm}
    if code is None:
        prepared = scratch / f"{family}-{label}-warmup"
        figures["warmup"] = mobeval(prepared, "warmup", "--family", family)[0]
        figures["after"], _, late = mobeval(prepared, *run)
        assert late == 0, f"{family}: the run after warmup compiled {late} kernels"
        shutil.rmtree(prepared)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default="nextloc,recs,trajectory,logits")
    parser.add_argument("--repeat", type=int, default=1, help="cold/warm pairs per family")
    parser.add_argument("--baseline", help="git revision to measure beside ours (alternating)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-coldstart-"))
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    snapshot_pipeline(str(scratch / "code"))
    baseline = None
    if args.baseline:
        baseline = snapshot_revision(args.baseline, scratch / "baseline")
    print(f"{os.cpu_count()} CPUs; load average at start (1/5/15 min): {load()}")
    print(f"code: snapshot of pipeline/ in {scratch}/code")
    if baseline:
        print(f"baseline: pipeline/ as of {args.baseline} in {baseline}")
    print(
        f"\n  {'family':<11} {'code':<9} {'cold':>7} {'cpu':>7} {'compiled':>9} {'warm':>7}"
        f" {'after warmup':>13} {'warmup':>7}  cold <= {GOAL_S:.0f} s"
    )
    med = statistics.median
    for family in args.families.split(","):
        runs: dict[str, list[dict[str, float]]] = {"ours": [], "baseline": []}
        for i in range(args.repeat):
            if baseline:
                runs["baseline"].append(measure(family, scratch, f"base-{i}", baseline))
            runs["ours"].append(measure(family, scratch, f"ours-{i}", None))
        for label, figures in runs.items():
            if not figures:
                continue
            m = {key: med(f[key] for f in figures) for key in figures[0]}
            after = f"{m['after']:>12.1f}s {m['warmup']:>6.1f}s" if "after" in m else " " * 21
            verdict = "MET" if m["cold"] <= GOAL_S else "missed"
            print(
                f"  {family:<11} {label:<9} {m['cold']:>6.1f}s {m['cpu']:>6.1f}s "
                f"{int(m['compiled']):>9} {m['warm']:>6.1f}s {after}  {verdict}"
            )
    print(f"\nload average at end (1/5/15 min): {load()}")


if __name__ == "__main__":
    main()
