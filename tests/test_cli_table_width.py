"""Every table the command line prints fits the terminal's width (80 columns when it is not
known): wide tables are split into tables that each keep the metric column; ``--format csv`` /
``json`` / ``markdown`` stay whole."""

from __future__ import annotations

import os
import shutil

import polars as pl
import pytest

from mobeval.cli import main
from tests.conftest import REPO_ROOT

NEXTLOC = REPO_ROOT / "data_samples" / "nextloc" / "tky"


def _widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


def _job(tmp_path, models: int) -> str:
    """A job of one city and ``models`` models (copies of the two sample models)."""
    lines = [
        'out = "out"',
        "[[tasks]]",
        'type = "nextloc"',
        'city = "tky"',
        f'truth = "{NEXTLOC / "truth.parquet"}"',
        'convention = "libcity"',
        "[tasks.models]",
    ]
    samples = ["markov", "popularity"]
    lines += [f'model_{i} = "{NEXTLOC / (samples[i % 2] + ".parquet")}"' for i in range(models)]
    path = tmp_path / "job.toml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _printed(capsys, argv) -> str:
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_a_five_model_summary_fits_the_terminal(tmp_path, capsys, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    printed = _printed(capsys, ["run", _job(tmp_path, 5), "--quiet"])
    assert _widest(printed) <= columns
    for i in range(5):  # every model is shown, each value once
        assert printed.count(f"model_{i}") == 1
    assert printed.count("acc@1 ") == printed.count("metric")  # the metric column in each piece


def test_without_a_terminal_tables_fit_80_columns(tmp_path, capsys, monkeypatch):
    def no_terminal(*_):
        raise OSError("not a terminal")

    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(os, "get_terminal_size", no_terminal)  # output to a file or a pipe
    printed = _printed(capsys, ["run", _job(tmp_path, 5), "--quiet"])
    assert 60 < _widest(printed) <= 80


def test_machine_formats_stay_whole(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    job = _job(tmp_path, 5)
    printed = _printed(capsys, ["run", job, "--quiet", "--format", "markdown"])
    header = next(line for line in printed.splitlines() if "metric" in line)
    assert all(f"model_{i}" in header for i in range(5))  # one table, every model
    printed = _printed(capsys, ["run", job, "--quiet", "--resume", "--format", "csv"])
    assert printed.splitlines()[0] == "city,model,metric,value,n,std"


@pytest.mark.parametrize("columns", [80, 100])
def test_compare_fits_the_terminal(nextloc_sample_out, tmp_path, capsys, monkeypatch, columns):
    out = tmp_path / "out"
    shutil.copytree(nextloc_sample_out, out)
    monkeypatch.setenv("COLUMNS", str(columns))
    argv = ["compare", str(out), "--baseline", "popularity", "--resamples", "200"]
    printed = _printed(capsys, [*argv, "--permutations", "200"])
    assert _widest(printed) <= columns
    written = pl.read_parquet(out / "compare" / "city=tky" / "part-0.parquet")
    for name in ("p t-test", "p wilcoxon", "p random.", "95% CI", "rel %"):
        assert printed.count(name) == 2  # once per city
    pieces = printed.count("│ metric ")  # the tables of both cities, as many as the width needs
    for metric in written["metric"]:  # each metric in every piece of each city's table
        assert printed.count(f"│ {metric} ") == pieces
    assert "city=tky: markov vs popularity, 3,000 samples paired" in printed
