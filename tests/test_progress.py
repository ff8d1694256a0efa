"""What a run's progress shows, decided without a terminal: nothing unless asked or on a terminal,
nothing for a run under a second (tqdm not even imported), the phases by name with their totals,
a width that fits, one final line after a success and none after a failure."""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import polars as pl
import pytest

from mobeval import api
from mobeval import progress as progress_module
from mobeval.progress import (
    BUCKETING,
    COMPILING,
    READING,
    SCORING,
    WRITING,
    Progress,
    wanted,
)

REPO_ROOT = Path(__file__).resolve().parents[1]


class Clock:
    """Seconds that pass only when a test says so."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def everything_read(controller: int) -> str:
    """What a pseudo terminal showed, once its other end is closed (Linux then answers EIO)."""
    seen = b""
    with contextlib.suppress(OSError):
        while chunk := os.read(controller, 1 << 16):
            seen += chunk
    os.close(controller)
    return seen.decode()


def redraws(text: str) -> list[str]:
    """Each state the stream showed: tqdm redraws a line after a carriage return."""
    return [part.strip() for part in re.split(r"[\r\n]", text) if part.strip()]


@pytest.mark.parametrize(
    ("option", "terminal", "shown"),
    [(None, True, True), (None, False, False), (True, False, True), (False, True, False)],
)
def test_progress_is_shown_when_asked_or_on_a_terminal(option, terminal, shown):
    stream = Terminal() if terminal else io.StringIO()
    assert wanted(option, stream) is shown
    clock = Clock()
    meter = Progress("tky/markov", 10, enabled=option, stream=stream, clock=clock)
    clock.now = 5.0
    meter.advance(10)
    meter.close()
    assert bool(stream.getvalue()) is shown


def test_a_run_under_a_second_prints_nothing_and_never_imports_tqdm(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # importing it would raise
    stream, clock = Terminal(), Clock()
    meter = Progress("tky/markov", 1_000, stream=stream, clock=clock)
    for phase in (READING, SCORING):
        meter.phase(phase, 1_000)
        for _ in range(5):
            clock.now += 0.09
            meter.advance(100)
    meter.close()
    assert stream.getvalue() == ""


def test_importing_mobeval_does_not_import_tqdm():
    """tqdm is imported when a bar is shown, not before a run reads its first row."""
    code = "import sys, mobeval.api, mobeval.cli, mobeval.jobs; print('tqdm' in sys.modules)"
    ran = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO_ROOT
    )
    assert ran.stdout.strip() == "False"


def test_the_bar_appears_after_a_second_with_the_rows_done_so_far():
    stream, clock = Terminal(), Clock()
    meter = Progress("tky/markov", 1_000, stream=stream, clock=clock)
    meter.advance(300)
    assert stream.getvalue() == ""
    clock.now = 1.5
    meter.advance(200)
    shown = redraws(stream.getvalue())
    assert shown and shown[-1].startswith("tky/markov scoring")
    assert "500/1.00k" in shown[-1] and " 50%" in shown[-1]
    meter.close()


def test_each_phase_is_named_with_its_own_total_and_the_final_line_counts_the_scored_rows():
    stream, clock = Terminal(), Clock()
    meter = Progress("tky/markov", 4_000, stream=stream, clock=clock)
    clock.now = 2.0
    meter.phase(READING, 6_000)
    meter.advance(6_000)
    meter.phase(BUCKETING, 5_000)
    meter.advance(3_000)
    meter.phase(SCORING, 4_000)
    meter.advance(4_000)
    meter.phase(WRITING)
    clock.now = 10.0
    meter.close()
    shown = redraws(stream.getvalue())
    first = {}  # each phase's first drawing: its bar starts at row 0 of the phase's total
    for line in shown[:-1]:
        first.setdefault(line.split(":")[0], line)
    assert list(first) == [
        f"tky/markov {phase}" for phase in (READING, BUCKETING, SCORING, WRITING)
    ]
    assert "0/6.00k" in first["tky/markov reading"]
    assert "0/5.00k" in first["tky/markov bucketing"]
    assert "0/4.00k" in first["tky/markov scoring"]
    assert "0 rows" in first["tky/markov writing"] and "%" not in first["tky/markov writing"]
    assert shown[-1] == "tky/markov: 4,000 rows in 10.0 s, 400 rows/s"
    assert stream.getvalue().endswith(shown[-1] + "\n")


def test_a_failed_run_clears_its_bar_and_writes_no_final_line():
    stream, clock = Terminal(), Clock()
    meter = Progress("tky/markov", 1_000, stream=stream, clock=clock)
    clock.now = 3.0
    meter.advance(500)
    meter.close(succeeded=False)
    assert " rows in " not in stream.getvalue()
    assert redraws(stream.getvalue())[-1].startswith("tky/markov scoring")  # then cleared
    assert stream.getvalue().endswith("\r")


def test_a_total_that_the_rows_pass_is_dropped_not_shown_beyond_100_percent():
    """Text files' totals are estimates from their size: rows beyond one show as a count."""
    stream, clock = Terminal(), Clock()
    meter = Progress("tky/markov", 1_000, stream=stream, clock=clock)
    meter.advance(1_500)
    clock.now = 2.0
    meter.advance(500)
    meter.close()
    drawn = redraws(stream.getvalue())[0]
    assert "2.00k rows" in drawn and "/1.00k" not in drawn and "%" not in drawn


def test_the_bar_fits_the_width_of_the_terminal():
    """tqdm reads the terminal's width at every redraw: on a 60-column terminal (a pseudo
    terminal here) no line is wider, a long label included."""
    controller, terminal = os.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 20, 60, 0, 0))
    clock = Clock()
    with os.fdopen(terminal, "w") as stream:
        label = "a_rather_long_city_name/a_rather_long_model_name"
        meter = Progress(label, 10**8, stream=stream, clock=clock)
        clock.now = 2.0
        meter.advance(10**6)
        meter.phase(SCORING, 10**8)
        clock.now = 4.0
        meter.close()
    lines = redraws(everything_read(controller))
    assert len(lines) == 3 and lines[-1].startswith(label)
    assert all(len(line) <= 60 for line in lines[:-1])
    assert lines[0].startswith(label[:20])


def test_the_local_engine_names_reading_bucketing_and_scoring(tmp_path, monkeypatch, capsys):
    """Unsorted inputs larger than a chunk go through the hash buckets: the bar names each phase
    in turn, and the run ends on one line with every prediction row."""
    monkeypatch.setattr(progress_module, "SHOW_AFTER", 0.0)
    samples = 400
    order = [(7 * sample) % samples for sample in range(samples)]  # not sorted by sample_id
    truth = pl.DataFrame({"sample_id": order, "location": [s % 13 for s in order]})
    pred = pl.DataFrame(
        {
            "sample_id": [s for s in order for _ in range(3)],
            "rank": [1, 2, 3] * samples,
            "location": [(s + r) % 13 for s in order for r in range(3)],
        }
    )
    api.evaluate_nextloc(truth, pred, k=[1], progress=True, chunk_rows=100, out=tmp_path / "out")
    shown = redraws(capsys.readouterr().err)
    drawn = [line for line in shown[:-1] if COMPILING not in line]  # Numba, if not cached yet
    phases = [line.split(":")[0].split()[1] for line in drawn]
    assert list(dict.fromkeys(phases)) == [READING, BUCKETING, SCORING, WRITING]
    assert re.fullmatch(rf"default/\S+: {pred.height:,} rows in .*", shown[-1])
