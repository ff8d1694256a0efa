"""``mobeval ... | head``: a reader that stops early ends the command quietly with 141, as a
program killed by SIGPIPE (``git log | head``), never with an error line."""

import json
import subprocess
import sys
import tomllib
from pathlib import Path

from mobeval import cli


def test_reader_that_stops_early_ends_the_command_quietly(tmp_path):
    queries = 5000  # `-q` prints a line per query and measure: far more than a pipe holds
    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    qrels.write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(queries)))
    run.write_text("".join(f"q{i} Q0 d{i} 1 1.0 tag\n" for i in range(queries)))
    command = [sys.executable, "-m", "mobeval", "trec_eval", "-q", str(qrels), str(run)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        first = process.stdout.readline()
        process.stdout.close()  # the reader goes away, as `head -1` does
        stderr = process.stderr.read()
        code = process.wait()
    assert len(first.split()) == 3  # measure, query, value
    assert (code, stderr) == (cli.EXIT_CLOSED_PIPE, b"")


def test_output_that_cannot_be_written_whole_is_still_an_error(tmp_path):
    """A full device is not a reader's choice: exit 2 and the reason, as before."""
    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    qrels.write_text("q1 0 d1 1\n")
    run.write_text("q1 Q0 d1 1 1.0 tag\n")
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [sys.executable, "-m", "mobeval", "trec_eval", str(qrels), str(run)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
        )
    assert result.returncode == cli.EXIT_BAD_INPUT
    assert "<stdout>: No space left on device" in result.stderr


def test_job_whose_reader_left_at_once_still_writes_every_result(tmp_path):
    """The reader gone before the first line: the job runs to its end, OUT whole, then 141."""
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "mobeval",
        "run",
        "jobs/nextloc_sample.toml",
        "--out",
        str(out),
    ]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        process.stdout.close()
        stderr = process.stderr.read()
        code = process.wait()
    assert code == cli.EXIT_CLOSED_PIPE
    assert b"error" not in stderr  # stderr has the run's own lines ("tky/markov: done in ...")
    manifest = json.loads((out / "manifest.json").read_text())
    job = tomllib.loads(Path("jobs/nextloc_sample.toml").read_text())
    expected = {f"city={t['city']}/model={m}" for t in job["tasks"] for m in t["models"]}
    assert set(manifest["results"]) == expected
