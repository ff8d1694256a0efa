"""``run --resume`` prints every result, the skipped ones read back from OUT: the same table,
CSV and JSON as the run that computed them (JSON and Python mark them resumed), in the job's
order, whichever results were recomputed."""

from __future__ import annotations

import json
import shutil

import pytest
import test_job_validation as job_validation

from mobeval.cli import main
from mobeval.jobs import load_job, run_job

FILES = job_validation.FILES
inputs = job_validation.inputs  # the fixture: one small valid input of every family


def _job(tmp_path, inputs, family: str):
    model = inputs / FILES[family][1]
    return job_validation._job(tmp_path, inputs, family, "", {"b": model, "a": model, "c": model})


def _run(capsys, *argv: str) -> tuple[str, str]:
    assert main(["run", *argv, "--quiet"]) == 0
    return capsys.readouterr()


@pytest.mark.parametrize("family", sorted(FILES))
@pytest.mark.parametrize("fmt", ["table", "csv", "markdown"])
def test_resume_prints_what_the_first_run_printed(tmp_path, inputs, capsys, family, fmt):
    job = str(_job(tmp_path, inputs, family))
    first, _ = _run(capsys, job, "--format", fmt)
    again, err = _run(capsys, job, "--resume", "--format", fmt)
    assert again == first and first.strip()
    assert err.count("complete, resumed from OUT (--resume)") == 3, err


@pytest.mark.parametrize("family", sorted(FILES))
def test_resume_reads_back_the_skipped_and_keeps_the_jobs_order(tmp_path, inputs, capsys, family):
    job = str(_job(tmp_path, inputs, family))
    first = json.loads(_run(capsys, job, "--format", "json")[0])["results"]
    shutil.rmtree(tmp_path / "out" / "summary" / "city=c" / "model=a")  # a: scored again
    again = json.loads(_run(capsys, job, "--resume", "--format", "json")[0])["results"]
    assert [r["model"] for r in again] == ["b", "a", "c"] == [r["model"] for r in first]
    assert [r["resumed"] for r in first] == [False, False, False]
    assert [r["resumed"] for r in again] == [True, False, True]
    for before, after in zip(first, again, strict=True):
        for field in ("task", "city", "model", "options", "summary", "n", "outputs"):
            assert after[field] == before[field], field


def test_python_gets_every_result_back(tmp_path, inputs):
    spec = load_job(_job(tmp_path, inputs, "nextloc"))
    first = run_job(spec, progress=False, log=lambda _: None)
    again = run_job(spec, resume=True, progress=False, log=lambda _: None)
    assert [(e.model, e.resumed) for e in again] == [("b", True), ("a", True), ("c", True)]
    for before, after in zip(first, again, strict=True):
        assert after.summary.equals(before.summary)
        assert after.outputs == before.outputs and after.inputs == before.inputs
