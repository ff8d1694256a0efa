"""Unpaired populations on the Spark engine at city scale: ``mobeval trajectory --pairing none
--engine spark`` over :func:`datagen.population_files` (as ``bench_population_scale.py`` runs
them), with the whole process tree measured: the Python driver, Spark's JVM and its Python
workers.

    python benchmarks/bench_population_spark.py [--sizes 1000000] [--spaces grid,links]
        [--presets trajgdm] [--master local[2]] [--chunk-rows 500000] [--nice 10]
        [--spark-conf spark.driver.memory=2g ...]

Each run is a fresh process tree, sampled every ``--every`` seconds with psutil: per process
its CPU seconds (user + system, with its reaped children's) at its last sample and its peak
RSS (Linux's ``VmHWM``, the kernel's own high-water mark, so not missed between samples), by
role (``driver``: the ``mobeval`` process; ``jvm``: Spark's Java; ``workers``: the Python
processes the JVM starts): the CPU seconds of a role summed, its largest process's peak RSS. A
process that exits between two samples loses at most ``--every`` seconds of CPU. The summary
is printed (one JSON line) and, where ``--compare-local`` asks, compared with the local
engine's, value for value.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_population_scale import command  # noqa: E402
from datagen import population_files  # noqa: E402
from measure import load, machine_line  # noqa: E402


def _role(process: psutil.Process, driver: int) -> str:
    if process.pid == driver:
        return "driver"
    return "jvm" if "java" in process.name() else "workers"


def _peak_rss(process: psutil.Process) -> int:
    """The process's peak resident set (``VmHWM``), in bytes."""
    for line in Path(f"/proc/{process.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def run_tree(cmd: list[str], stdout_path: str, every: float) -> tuple[dict, str]:
    """Wall seconds, CPU seconds and peak RSS by role of ``cmd``'s process tree; its stdout."""
    started = time.perf_counter()
    with open(stdout_path, "w") as stdout:
        proc = subprocess.Popen(cmd, stdout=stdout)
        root = psutil.Process(proc.pid)
        seen: dict[int, tuple[str, float, int]] = {}  # pid -> (role, cpu s, peak rss)
        while proc.poll() is None:
            try:
                tree = [root, *root.children(recursive=True)]
            except psutil.NoSuchProcess:
                break
            for process in tree:
                try:
                    with process.oneshot():
                        t = process.cpu_times()
                        cpu = t.user + t.system + t.children_user + t.children_system
                        rss = _peak_rss(process)
                except (psutil.NoSuchProcess, psutil.AccessDenied, FileNotFoundError):
                    continue
                _, before, peak = seen.get(process.pid, ("", 0.0, 0))
                # a zombie (exited, not yet reaped) has no VmHWM: keep what was seen
                seen[process.pid] = (_role(process, proc.pid), max(cpu, before), max(rss, peak))
            time.sleep(every)
    wall = time.perf_counter() - started
    if proc.returncode:
        sys.exit(f"exit {proc.returncode}: {' '.join(cmd)}")
    report = {"wall": wall, "cpu": {}, "rss_mib": {}}
    for role, cpu, rss in seen.values():  # CPU summed by role, RSS the role's largest process
        report["cpu"][role] = report["cpu"].get(role, 0.0) + cpu
        report["rss_mib"][role] = max(report["rss_mib"].get(role, 0.0), rss / 2**20)
    return report, Path(stdout_path).read_text()


def shown(name: str, report: dict) -> str:
    cpu = report["cpu"]
    by_role = ", ".join(f"{role} {cpu[role]:.1f} s / {report['rss_mib'][role]:.0f} MiB"
                        for role in sorted(cpu))  # fmt: skip
    return f"{name}: {report['wall']:.1f} s wall, {sum(cpu.values()):.1f} s CPU ({by_role})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])

    def listed(kind):
        return lambda text: [kind(v) for v in text.split(",") if v]

    parser.add_argument("--sizes", type=listed(int), default=[1_000_000])
    parser.add_argument("--spaces", type=listed(str), default=["grid", "links"])
    parser.add_argument("--presets", type=listed(str), default=["trajgdm"])
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--spark-conf", action="append", default=[])
    parser.add_argument("--chunk-rows", type=int, default=500_000)
    parser.add_argument("--nice", type=int, default=10)
    parser.add_argument("--every", type=float, default=0.5)
    parser.add_argument("--compare-local", action="store_true")
    args = parser.parse_args()
    print(f"machine: {machine_line()}; load before: {load()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp, "stdout"))
        for n in args.sizes:
            for space in args.spaces:
                real, gen = population_files(n, space)
                for preset in args.presets:
                    cmd = command(real, gen, space, preset, "spark", args.chunk_rows)
                    cmd += ["--master", args.master]
                    for setting in args.spark_conf:
                        cmd += ["--spark-conf", setting]
                    report, text = run_tree(["nice", "-n", str(args.nice), *cmd], out, args.every)
                    name = f"{n:,} x 48 {space} {preset} spark {args.master}"
                    print(shown(name, report) + f"  (load {load()})", flush=True)
                    print(json.dumps(json.loads(text)["summary"]), flush=True)
                    if args.compare_local:
                        local = command(real, gen, space, preset, "local", args.chunk_rows)
                        local_report, local_text = run_tree(local, out, args.every)
                        same = json.loads(text)["summary"] == json.loads(local_text)["summary"]
                        print(shown(name.replace("spark", "local"), local_report), flush=True)
                        print(f"  summaries equal: {same}", flush=True)
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
