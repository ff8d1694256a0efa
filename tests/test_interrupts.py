"""SIGTERM and Ctrl-C (SIGINT) stop a run in every state within seconds: exit 130
(``mobeval: interrupted``, docs/jobs.md's exit codes), no result in OUT, and ``--resume`` then
computes every result.

A driver runs ``mobeval run`` on the next-location sample job with one step patched to print the
state it is in and hold there (reading a batch, compiling a kernel on an empty cache, a Numba
kernel busy on two threads, halfway through a commit's moves); the test sends the signal once
the state is printed."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
JOB = REPO_ROOT / "jobs" / "nextloc_sample.toml"

DRIVER = """
import os, sys, time
import numba
from mobeval import cli

STATE = sys.argv[1]


def announce():  # one write of a whole line: threads announcing at once cannot split it
    os.write(2, (STATE + "\\n").encode())


if STATE == "reading":
    import pyarrow.parquet as pq

    batches = pq.ParquetFile.iter_batches

    def slow_batches(self, *args, **kwargs):
        announce()
        time.sleep(120)
        yield from batches(self, *args, **kwargs)

    pq.ParquetFile.iter_batches = slow_batches
elif STATE == "compiling":
    from numba.core.dispatcher import Dispatcher

    compile = Dispatcher.compile

    def announced(self, sig):
        announce()
        return compile(self, sig)

    Dispatcher.compile = announced
elif STATE == "scoring":
    from mobeval.kernels import ranks

    @numba.njit(nogil=True)
    def spin(steps):
        x = 88172645463325252
        for _ in range(steps):  # xorshift: nothing for LLVM to fold
            x ^= (x << 13) & 0xFFFFFFFFFFFFFFFF
            x ^= x >> 7
            x ^= (x << 17) & 0xFFFFFFFFFFFFFFFF
        return x

    spin(1)
    rank_units = ranks._rank_units

    def busy(*args):
        announce()
        spin(10**12)  # minutes
        rank_units(*args)

    ranks._rank_units, ranks.UNITS_PER_BLOCK = busy, 1
elif STATE == "writing":
    from mobeval.io.writers import LocalMoves

    moves = []

    def rename(source, target):
        os.replace(source, target)
        moves.append(target)
        if len(moves) == 1:  # the first section is in place, the others not yet
            announce()
            time.sleep(120)

    LocalMoves.rename = staticmethod(rename)

sys.exit(cli.main(sys.argv[2:]))
"""


def results(out: Path) -> list[Path]:
    """The result files OUT shows (its staging area aside)."""
    return sorted(p for p in out.rglob("*.parquet") if ".staging" not in p.parts)


@pytest.mark.parametrize(
    ("state", "signum"),
    [
        ("reading", signal.SIGINT),
        ("compiling", signal.SIGTERM),
        ("scoring", signal.SIGTERM),
        ("scoring", signal.SIGINT),
        ("writing", signal.SIGTERM),
        ("writing", signal.SIGINT),
    ],
)
def test_a_signal_stops_the_run_at_once_and_resume_completes_it(state, signum, tmp_path):
    driver, out = tmp_path / "driver.py", tmp_path / "out"
    driver.write_text(DRIVER)
    environment = {"NUMBA_NUM_THREADS": "2", "PYTHONUNBUFFERED": "1"}
    if state == "compiling":  # an empty cache: the kernels compile in this run
        environment["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")
    running = subprocess.Popen(
        [sys.executable, str(driver), state, "run", str(JOB), "--out", str(out), "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
        env={**os.environ, **environment},
    )
    try:
        while not (line := running.stderr.readline()).endswith(f"{state}\n") and line:
            pass  # (a warning may come first)
        assert running.poll() is None
        if state == "compiling":
            time.sleep(0.5)  # inside LLVM
        sent = time.perf_counter()
        running.send_signal(signum)
        code = running.wait(timeout=30)
        seconds = time.perf_counter() - sent
    finally:
        running.kill()
    assert code == 130
    assert seconds < 10
    said = [line for line in running.stderr.read().splitlines() if line != state]
    assert said[-1] == "mobeval: interrupted"  # (a worker may announce its block after it)
    assert results(out) == []
    resumed = subprocess.run(
        [sys.executable, "-m", "mobeval", "run", str(JOB), "--out", str(out), "--resume"],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )
    assert resumed.returncode == 0, resumed.stderr
    summaries = [p for p in results(out) if "summary" in p.parts]
    assert len(summaries) == 4  # two cities x two models


def test_an_interrupt_that_a_library_wrapped_is_still_an_interrupt(monkeypatch, capsys):
    """A KeyboardInterrupt raised inside a library's callback (a Polars UDF, a Numba hook) comes
    back as the library's own error: it is still exit 130, not an internal error (exit 3)."""
    from mobeval import cli

    def run(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:
            raise RuntimeError("the library's own error") from interrupt

    monkeypatch.setattr(cli, "_run", run)
    code = cli.main(["run", str(JOB), "--quiet"])
    assert code == 130
    assert "interrupted" in capsys.readouterr().err


def test_a_finalizer_the_interrupt_broke_says_nothing_after_the_interrupt(monkeypatch, capsys):
    """An object whose construction the interrupt cut short (llvmlite's ``PassBuilder`` while
    Numba compiles) fails in its ``__del__`` when the interrupted frames are let go: that error is
    not printed after ``mobeval: interrupted`` (Python's hook would print its traceback)."""
    from mobeval import cli

    class HalfBuilt:
        def __init__(self):
            raise KeyboardInterrupt  # the signal arrives before the handle is set

        def __del__(self):
            self._handle.dispose()  # AttributeError: no _handle

    said = []
    monkeypatch.setattr(sys, "unraisablehook", said.append)
    monkeypatch.setattr(cli, "_run", lambda args: HalfBuilt())
    code = cli.main(["run", str(JOB), "--quiet"])
    gc.collect()
    assert code == 130
    assert said == []
    assert capsys.readouterr().err.splitlines()[-1] == "mobeval: interrupted"


def test_ctrl_c_while_the_command_line_is_read_is_no_traceback(monkeypatch, capsys):
    """Ctrl-C in the first second of a run (the parser built, the command's modules imported,
    before the command's own handling) ended in a KeyboardInterrupt traceback (14-32 lines)."""
    from mobeval import cli

    def interrupted(command):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["run", str(JOB)]) == 130
    assert capsys.readouterr().err == "mobeval: interrupted\n"


def test_ctrl_c_while_the_command_lines_modules_load_is_no_traceback(monkeypatch, capsys):
    """``mobeval`` and ``python -m mobeval`` imported ``mobeval.cli`` (0.2-0.5 s at load 20)
    before any handler: Ctrl-C then was a KeyboardInterrupt traceback."""
    import builtins

    from mobeval import __main__ as entry

    load = builtins.__import__

    def interrupted(name, *args, **kwargs):
        if name == "mobeval.cli":
            raise KeyboardInterrupt
        return load(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", interrupted)
    assert entry.run() == 130
    assert capsys.readouterr().err == "mobeval: interrupted\n"
