"""Inputs read from pipes, once, as they come: ``mobeval trec_eval QRELS -`` (the run from
standard input, as trec_eval reads it), ``/dev/stdin``, FIFOs (plain or gzipped through the
pipe), and ``mobeval validate``'s dataset and submission from FIFOs."""

import gzip
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mobeval.cli import main

SUITE = Path(__file__).parent / "golden" / "trec_eval_suite"
HUMOB = Path(__file__).resolve().parents[1] / "data_samples" / "humob"
QRELS, RUN = SUITE / "qrels.test.gz", SUITE / "results.test.gz"


def _fifo(folder: Path, name: str, data: bytes) -> Path:
    """A FIFO at ``folder/name`` that a thread fills with ``data`` once a reader opens it."""
    path = folder / name
    os.mkfifo(path)

    def fill():
        with open(path, "wb") as pipe:
            pipe.write(data)

    threading.Thread(target=fill, daemon=True).start()
    return path


def _mobeval(args: list[str], stdin: bytes) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "mobeval", *args]
    return subprocess.run(command, input=stdin, capture_output=True, check=False)


@pytest.mark.parametrize("name", ["-", "/dev/stdin"])
@pytest.mark.parametrize("zipped", [False, True], ids=["plain", "gzip"])
def test_trec_eval_reads_the_run_from_standard_input(name, zipped):
    run = RUN.read_bytes() if zipped else gzip.decompress(RUN.read_bytes())
    done = _mobeval(["trec_eval", str(QRELS), name], run)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout == (SUITE / "out.test").read_bytes()


def test_trec_eval_reads_both_files_from_fifos(tmp_path, capsys):
    qrels = _fifo(tmp_path, "qrels", gzip.decompress(QRELS.read_bytes()))
    run = _fifo(tmp_path, "run", RUN.read_bytes())
    assert main(["trec_eval", "-q", "-m", "all_trec", str(qrels), str(run)]) == 0
    assert capsys.readouterr().out == (SUITE / "out.test.aq").read_text()


def test_a_recs_metric_reads_each_pipe_once(tmp_path, capsys):
    """``-m mrr@10`` reads the files as tables of lines, trec_eval's measures as codes: from the
    one read of each pipe, the same lines as from the files."""
    argv = ["trec_eval", "-q", "-m", "mrr@10", "-m", "map", "-m", "P.5"]
    assert main([*argv, str(QRELS), str(RUN)]) == 0
    from_files = capsys.readouterr().out
    qrels = _fifo(tmp_path, "qrels", QRELS.read_bytes())
    run = _fifo(tmp_path, "run", gzip.decompress(RUN.read_bytes()))
    assert main([*argv, str(qrels), str(run)]) == 0
    assert capsys.readouterr().out == from_files


def test_validate_reads_fifos(tmp_path, capsys):
    dataset, submission = HUMOB / "city_test_challengedata.csv.gz", HUMOB / "weekly_repeat.csv.gz"
    argv = ["validate", "--task", "2025:test", "--dataset"]
    assert main([*argv, str(dataset), "--submission", str(submission)]) == 0
    from_files = capsys.readouterr().out
    dataset = _fifo(tmp_path, "dataset", dataset.read_bytes())
    submission = _fifo(tmp_path, "submission", gzip.decompress(submission.read_bytes()))
    assert main([*argv, str(dataset), "--submission", str(submission)]) == 0
    assert capsys.readouterr().out == from_files
