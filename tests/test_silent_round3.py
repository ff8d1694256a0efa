"""Issue 36's silently-wrong and crash classes: a test design never switched by a key's type
(class 6), values taken as given or refused (class 7), user and I/O errors as one line and exit
2, never a traceback or exit 3 (class 10), the behaviour the docs describe (class 11)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from mobeval.cli import main
from mobeval.compare import compare
from mobeval.errors import InputError
from mobeval.jobs import load_job, run_job
from tests.conftest import REPO_ROOT
from tests.test_runs import SAMPLES as RUN_SAMPLES
from tests.test_runs import write_job

SAMPLES = REPO_ROOT / "data_samples"


def one_error(capsys) -> str:
    """The command's one stderr line, ``mobeval: error: ...`` (no traceback, no second line)."""
    error = capsys.readouterr().err
    assert error.startswith("mobeval: error: ") and error.count("\n") == 1, error
    return error


# ---------------------------------------------------------------------------------------------
# Class 6: a run whose unit keys have another type never turns unit means into runs as units


def rewrite_per_unit(folder: Path, change) -> None:
    """The per-unit rows of one result's ``folder`` as ``change(rows)``, in one file."""
    files = sorted(folder.glob("*.parquet"))
    frame = pl.read_parquet(files)
    for file in files:
        file.unlink()
    change(frame).write_parquet(files[0])


@pytest.fixture
def seeds_out(tmp_path) -> Path:
    """Three models by three seeds, each run scored on the same 40 samples."""
    run_job(load_job(write_job(tmp_path)), log=lambda _: None)
    return tmp_path / "out"


def test_runs_whose_unit_keys_differ_in_type_are_refused_not_taken_as_units(seeds_out, capsys):
    assert set(compare(seeds_out, baseline="gru", metrics=["mrr"])["n"]) == {RUN_SAMPLES}
    run = seeds_out / "per_unit/city=tky/model=lstm/run=seed2"
    rewrite_per_unit(run, lambda rows: rows.with_columns(pl.col("sample_id").cast(pl.String)))
    with pytest.raises(InputError) as refused:
        compare(seeds_out, baseline="gru", metrics=["mrr"])
    error = refused.value
    assert error.path == str(run) and error.column == "sample_id" and error.key == "0"
    assert "unit keys of type String where city=tky/model=gru/run=seed1 has Int64" in str(error)
    capsys.readouterr()
    assert main(["compare", str(seeds_out), "--baseline", "gru", "--runs", "mean"]) == 2
    assert f"{run}: column 'sample_id': unit keys of type String" in one_error(capsys)
    assert not (seeds_out / "compare").exists()
