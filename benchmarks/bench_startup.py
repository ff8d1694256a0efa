"""Start-up: what a whole ``mobeval`` process costs before and around its work, per command.

    python benchmarks/bench_startup.py [--repeat 7] [--baseline REV] [--no-strace]

For ``mobeval --help``, ``mobeval <family> --help`` and each family's command on the shipped
samples (small inputs: the fixed cost dominates), in fresh processes with a warm Numba cache,
alternating: our process, the baseline's (``--baseline REV``: pipeline/ as of git revision REV,
e.g. the commit before a change) and the floor, a process that only imports Polars (NumPy for
``.npy``) and reads the same inputs whole, and the libraries' floor, a process that only imports
the libraries every family's command loads (Polars, pyarrow's Parquet module and Numba, with NumPy),
tuned and lightened as the command line's process is (:func:`mobeval.process.run_command`): what
is left above it is mobeval's own start (its modules, the options, the input checks, the cached
kernels' loading) and its work (it opens no input, so it is never traced: compare it with the
runs of ``--no-strace``, strace's own cost left out). Prints the medians of the wall seconds and
of the CPU seconds (user + system: on a loaded machine the steadier measure), and the seconds
from the process's start to its first open of an input file (``strace -f --seccomp-bpf -e
trace=execve,openat``: with ``--seccomp-bpf`` the kernel stops the process only at the traced
calls, so the figure is the program's; an strace that refuses the option traces without it and
the column says so; the goal: at most ~0.3 s, issue 25). Runs from a snapshot of pipeline/
taken at start (``datagen.snapshot_pipeline``), so edits made meanwhile do not count, compiled
to bytecode first as ``pip install`` does (with ``PYTHONDONTWRITEBYTECODE`` set, as on this
machine, every process would otherwise compile the modules it imports: 0.2-0.4 s before the first
read).
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_coldstart import snapshot_revision
from datagen import snapshot_pipeline
from measure import load

REPO_ROOT = Path(__file__).resolve().parents[1]
SAMPLES = "data_samples"
#: Each family's command on the samples, and the input files it reads.
COMMANDS = {
    "nextloc": (
        "--truth",
        f"{SAMPLES}/nextloc/tky/truth.parquet",
        "--pred",
        f"{SAMPLES}/nextloc/tky/markov.parquet",
    ),
    "trajectory": (
        "--reference",
        f"{SAMPLES}/humob/reference_test.csv.gz",
        "--generated",
        f"{SAMPLES}/humob/weekly_repeat.csv.gz",
        "--city",
        "test",
    ),
    "recs": (
        "--ratings",
        f"{SAMPLES}/recs/ratings.parquet",
        "--recs",
        f"{SAMPLES}/recs/mf.parquet",
    ),
    "logits": (
        "--logits",
        f"{SAMPLES}/logits/gru.npy",
        "--targets",
        f"{SAMPLES}/logits/targets.npy",
    ),
}
READERS = {".parquet": "pl.read_parquet", ".gz": "pl.read_csv", ".npy": "np.load"}


def inputs(arguments: tuple[str, ...]) -> list[str]:
    return [a for a in arguments if a.startswith(SAMPLES)]


def floor_code(files: list[str]) -> str:
    """A process that only reads ``files`` whole, with the library mobeval reads them with."""
    reads = "; ".join(f"{READERS[Path(f).suffix]}({f!r})" for f in files)
    return f"import numpy as np, polars as pl; {reads}"


#: The libraries' floor: the process tuned and Numba's import lightened as the command line's
#: (``run_command``), then Polars, pyarrow's Parquet module and Numba imported, nothing run.
LIBRARIES_CODE = """from mobeval.process import run_command
def load():
    import numba, polars, pyarrow.parquet
    return lambda: 0
run_command(load)"""


def strace_options() -> list[str]:
    """strace's options that trace ``execve`` and ``openat`` with time stamps: through a seccomp
    filter (the process runs at full speed between those calls) where this strace accepts it,
    else stopping at every system call (slower: the first read comes later than untraced)."""
    light = ["-f", "--seccomp-bpf", "-ttt", "-e", "trace=execve,openat"]
    probe = subprocess.run(["strace", *light, "-o", os.devnull, "true"], capture_output=True)
    return light if probe.returncode == 0 else [o for o in light if o != "--seccomp-bpf"]


def timed(
    command: list[str], env: dict, trace: list[str] | None, files: list[str]
) -> tuple[float, float, float]:
    """Wall and CPU seconds of one process, and (``trace``: strace's options) the seconds from
    its start to its first open of one of ``files`` (NaN: none opened, or not traced)."""
    first_read = float("nan")
    log = None
    if trace:
        handle, log = tempfile.mkstemp(suffix=".strace")
        os.close(handle)
        command = ["strace", *trace, "-o", log, *command]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    if log is not None:
        lines = Path(log).read_text().splitlines()
        os.unlink(log)
        stamps = [float(line.split()[1]) for line in lines if "execve(" in line]
        names = "|".join(re.escape(Path(f).name) for f in files)
        opened = [
            float(line.split()[1]) for line in lines if re.search(rf"openat\(.*({names})", line)
        ]
        if stamps and opened:
            first_read = opened[0] - stamps[0]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, first_read


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--baseline", help="git revision to measure beside ours (alternating)")
    parser.add_argument("--no-strace", action="store_true", help="no time to the first read")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    codes = {"ours": snapshot_pipeline(str(scratch / "code"))}
    if args.baseline:
        codes["baseline"] = snapshot_revision(args.baseline, scratch / "baseline")
    for code in codes.values():  # the .pyc files an installed package has
        compileall.compile_dir(code, quiet=1)
    given = os.environ.get("PYTHONPATH")
    envs = {
        label: dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [code, given])))
        for label, code in codes.items()
    }
    trace = None
    if not args.no_strace and shutil.which("strace") is not None:
        trace = strace_options()
    rows = {"--help": ("--help",)}
    rows |= {f"{family} --help": (family, "--help") for family in COMMANDS}
    rows |= {family: (family, *arguments) for family, arguments in COMMANDS.items()}
    for env in envs.values():  # the kernels cached for every code, before timing
        for family, arguments in COMMANDS.items():
            timed([sys.executable, "-m", "mobeval", family, *arguments], env, None, [])
    print(f"2 CPUs; load average at start (1/5/15 min): {load()}")
    if trace and "--seccomp-bpf" not in trace:
        print("strace refused --seccomp-bpf: first reads traced at every system call (slower)")
    print(f"{'command':<18} {'code':<9} {'wall':>6} {'cpu':>6} {'first read':>10}")
    for row, arguments in rows.items():
        files = inputs(arguments)
        runs = {label: [] for label in envs}
        if files:
            runs["floor"] = []
            runs["libraries"] = []
        for _ in range(args.repeat):  # alternating, so that each sees the same load
            for label, env in envs.items():
                command = [sys.executable, "-m", "mobeval", *arguments]
                runs[label].append(timed(command, env, trace if files else None, files))
            if files:
                command = [sys.executable, "-c", floor_code(files)]
                runs["floor"].append(timed(command, envs["ours"], trace, files))
                command = [sys.executable, "-c", LIBRARIES_CODE]
                runs["libraries"].append(timed(command, envs["ours"], None, files))
        for label, figures in runs.items():
            wall, cpu, first = (statistics.median(f[i] for f in figures) for i in range(3))
            first_text = "" if first != first else f"{first:.2f}s"
            print(f"{row:<18} {label:<9} {wall:>5.2f}s {cpu:>5.2f}s {first_text:>10}")
    print(f"load average at end: {load()}")
    shutil.rmtree(scratch)


if __name__ == "__main__":
    main()
