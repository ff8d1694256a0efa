"""Logs a scheduler can use: off a terminal, one timestamped line per phase of each result
(text, or JSON for a collector, errors included), what goes to stdout unchanged; on a terminal
the bar names the phase, Numba's compile included."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import tomllib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numba
import polars as pl
import pytest

from mobeval import logs
from mobeval.logs import ResultLog
from mobeval.progress import COMPILING, READING, SCORING, WRITING, Progress

REPO_ROOT = Path(__file__).resolve().parents[1]
JOB = REPO_ROOT / "jobs" / "nextloc_sample.toml"
PHASES = ["read", "bucket", "compile", "score", "write", "done"]
TEXT_LINE = re.compile(
    r"(?P<ts>\S+) mobeval (?P<label>\S+) (?P<phase>\w+)"
    r"(?: rows=(?P<rows>\d+))?(?: rate=(?P<rate>\d\.\de-?\d+)/s)? elapsed=\d+\.\d\ds"
    r"(?: out=(?P<out>\S+))?"
)


def mobeval(*args: str) -> subprocess.CompletedProcess:
    """The command line run with stderr to a pipe, not a terminal."""
    return subprocess.run(
        [sys.executable, "-m", "mobeval.cli", *args],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=300,
    )


def prediction_rows() -> dict[str, int]:
    """Rows of each of the sample job's prediction files, by city/model."""
    job = tomllib.loads(JOB.read_text())
    return {
        f"{task['city']}/{model}": pl.read_parquet(JOB.parent / path).height
        for task in job["tasks"]
        for model, path in task["models"].items()
    }


def check_time(ts: str) -> None:
    """ISO 8601 in UTC (``Z``), within the test's minutes."""
    when = datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert abs(datetime.now(UTC) - when) < timedelta(minutes=10), ts


def check_phases(records: list[dict], out: Path) -> None:
    """Each result's phases in order, ending on ``done``; scored rows = its predictions' rows."""
    rows = prediction_rows()
    by_result: dict[str, list[dict]] = {}
    for record in records:
        check_time(record["ts"])
        by_result.setdefault(record["label"], []).append(record)
    assert list(by_result) == list(rows)
    for label, seen in by_result.items():
        phases = [record["phase"] for record in seen]
        assert phases == sorted(phases, key=PHASES.index) and phases[-1] == "done", phases
        assert len(set(phases)) == len(phases), phases  # one line a phase: no per-chunk lines
        assert {"score", "write"} <= set(phases)
        for record in seen:
            if record["phase"] in ("score", "done"):
                assert int(record["rows"]) == rows[label], (label, record)
        assert seen[-1]["out"] == str(out)


def test_a_job_off_a_terminal_logs_one_timestamped_line_per_phase(tmp_path):
    done = mobeval("run", str(JOB), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if not line.startswith(("tky/", "nyc/"))]
    assert lines[-1] == f"outputs: {tmp_path / 'out'}"
    records = []
    for line in lines[:-1]:
        match = TEXT_LINE.fullmatch(line)
        assert match, line
        records.append(match.groupdict())
    check_phases(records, tmp_path / "out")


def test_json_logs_parse_line_by_line_and_stdout_is_unchanged(tmp_path):
    text = mobeval("run", str(JOB), "--out", str(tmp_path / "text"), "--format", "csv")
    done = mobeval(
        "run", str(JOB), "--out", str(tmp_path / "out"), "--format", "csv", "--log-format", "json"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == text.stdout  # the result table as it was
    records = [json.loads(line) for line in done.stderr.splitlines()]
    assert all(record["level"] == "info" for record in records)
    messages = [record["message"] for record in records if "message" in record]
    assert messages[-1] == f"outputs: {tmp_path / 'out'}"
    results = [record for record in records if "phase" in record]
    for record in results:
        assert set(record) == {"ts", "level", "city", "model", "run", "phase", "rows", "rate"} | {
            "elapsed",
            "out",
        }
        record["label"] = f"{record['city']}/{record['model']}"
        if record["rows"] is not None and record["elapsed"] > 0:
            assert record["rate"] == pytest.approx(record["rows"] / record["elapsed"], rel=1e-3)
    check_phases(results, tmp_path / "out")


def test_an_error_is_a_json_line_too(tmp_path):
    missing = tmp_path / "missing.parquet"
    done = mobeval(
        "nextloc", "--truth", str(missing), "--pred", str(missing), "--log-format", "json"
    )
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    record = json.loads(line)
    assert record["level"] == "error" and str(missing) in record["message"]
    check_time(record["ts"])


def test_a_job_file_sets_the_log_format_and_a_wrong_one_is_named(tmp_path):
    job = tmp_path / "job.toml"
    body = JOB.read_text().replace("../", f"{REPO_ROOT}/")
    job.write_text('log_format = "json"\n' + body.replace('out = "', 'out = "ignored', 1))
    done = mobeval("run", str(job), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert all(json.loads(line)["level"] == "info" for line in done.stderr.splitlines())
    job.write_text('log_format = "xml"\n' + body)
    wrong = mobeval("run", str(job))
    assert wrong.returncode == 2
    assert wrong.stderr == (
        f"mobeval: error: {job}: log_format: expected one of text, json, got string 'xml'\n"
    )


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_long_phase_has_a_line_every_period_not_one_per_chunk(monkeypatch):
    monkeypatch.setattr(logs, "PERIOD", 30.0)
    stream, clock = io.StringIO(), Clock()
    log = ResultLog("tky", "markov", None, None, "json", stream)
    meter = Progress("tky/markov", None, enabled=False, clock=clock, log=log)
    meter.phase(READING)
    for chunk in range(1, 101):  # 100 chunks in 10 s: one line
        clock.now = chunk / 10
        meter.advance(10)
    meter.phase(SCORING)
    for chunk in range(1, 101):  # 100 chunks in 100 s: a line every 30 s, then the last
        clock.now = 10.0 + chunk
        meter.advance(10)
    meter.phase(WRITING)
    meter.close()
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [r["phase"] for r in records] == ["read"] + ["score"] * 4 + ["write", "done"]
    assert records[0]["rows"] == 1000 and records[0]["elapsed"] == pytest.approx(10.0)
    assert [r["rows"] for r in records[1:-2]] == [300, 600, 900, 1000]
    assert records[-1]["rows"] == 1000 and records[-1]["elapsed"] == pytest.approx(110.0)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_says_compiling_kernels_at_once_while_numba_compiles():
    """A kernel Numba has never seen (defined here, no cache) is compiled on its first call:
    the bar names it from the start, however short the run so far, then the phase again."""

    @numba.njit
    def kernel(x):
        return x + 1

    stream, clock = Terminal(), Clock()
    meter = Progress("tky/markov", 100, stream=stream, clock=clock)
    meter.phase(SCORING, 100)
    assert stream.getvalue() == ""
    assert kernel(1) == 2
    shown = stream.getvalue()
    assert f"tky/markov {COMPILING}" in shown
    meter.advance(50)
    meter.close()
    assert re.split(r"[\r\n]", shown.strip())[-1].startswith("tky/markov scoring")
