"""Wall time and peak RSS of one command in a fresh process, for the benchmark scripts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# Forks the command, sends its stdout to a file and reaps it with os.wait4, whose rusage is that
# child's alone (ru_maxrss in KiB on Linux): neither the measuring process nor other children
# are counted.
WRAPPER = r"""
import os, sys, json, time
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1)
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
print(json.dumps({"wall": time.perf_counter() - t0, "rss_kib": usage.ru_maxrss,
                  "cpu": usage.ru_utime + usage.ru_stime,
                  "status": os.waitstatus_to_exitcode(status)}))
"""


def run_child(cmd: list[str], stdout_path: str) -> tuple[float, float, str | None]:
    """(wall seconds, peak RSS MiB, stdout text) of ``cmd`` in a fresh process; its stdout goes
    to ``stdout_path`` (``/dev/null``: not kept, None returned). Exits when the command fails."""
    report, text = run_measured(cmd, stdout_path)
    return report["wall"], report["rss_kib"] / 1024, text


def run_measured(cmd: list[str], stdout_path: str) -> tuple[dict, str | None]:
    """As :func:`run_child`: ``{"wall", "cpu" (user + system seconds), "rss_kib"}`` of the
    command, and its stdout text."""
    proc = subprocess.run(
        [sys.executable, "-c", WRAPPER, stdout_path, *cmd], capture_output=True, text=True
    )
    if proc.returncode:
        sys.exit(f"measuring wrapper failed: {proc.stderr[-3000:]}")
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    if report["status"]:
        sys.exit(f"child failed ({report['status']}): {' '.join(cmd)}\n{proc.stderr[-3000:]}")
    text = None if stdout_path == os.devnull else Path(stdout_path).read_text()
    return report, text


def machine_line() -> str:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} logical CPUs, {model}, RAM {ram:.1f} GiB"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())
