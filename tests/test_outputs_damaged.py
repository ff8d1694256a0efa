"""A damaged OUT folder read by ``mobeval compare`` and ``mobeval report``: a truncated or
rewritten Parquet file, a summary without its columns, a per-unit file without a metric, a
stored comparison that is not Parquet. Each is one ``mobeval: error:`` line naming the file (exit
2), never an internal error, and nothing is written; except that a report whose comparison cannot
be computed is still written, its note naming the file (as for a result scored without per-unit
values)."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from mobeval.cli import main

RESULT = "city=tky/model=popularity"


@pytest.fixture(scope="module")
def scored(nextloc_sample_out, tmp_path_factory):
    """The next-location sample job's OUT, with the stored comparison of city tky."""
    out = tmp_path_factory.mktemp("damaged") / "out"
    shutil.copytree(nextloc_sample_out, out)
    assert main(["compare", str(out), "--city", "tky", "--resamples", "50"]) == 0
    return out


def only_part(out: Path, section: str) -> Path:
    (part,) = sorted((out / section / RESULT).glob("*.parquet"))
    return part


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])


def rewrite(path: Path, change) -> None:
    change(pl.read_parquet(path)).write_parquet(path)


DAMAGES = {
    "truncated per-unit file": (
        lambda out: truncate(only_part(out, "per_unit")),
        lambda out: only_part(out, "per_unit"),
        "not a readable mobeval output file",
    ),
    "truncated summary": (
        lambda out: truncate(only_part(out, "summary")),
        lambda out: only_part(out, "summary"),
        "not a readable mobeval output file",
    ),
    "summary without n": (
        lambda out: rewrite(only_part(out, "summary"), lambda f: f.drop("n")),
        lambda out: out / "summary" / RESULT,
        "column 'n'",
    ),
    "summary values as text": (
        lambda out: rewrite(
            only_part(out, "summary"), lambda f: f.with_columns(pl.col("value").cast(pl.String))
        ),
        lambda out: out / "summary" / RESULT,
        "column 'value'",
    ),
    "per-unit file without its key": (
        lambda out: rewrite(only_part(out, "per_unit"), lambda f: f.drop("sample_id")),
        lambda out: out / "per_unit" / RESULT,
        "column 'sample_id'",
    ),
}


@pytest.mark.parametrize("command", ["compare", "report"])
@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_damaged_result_is_one_line_naming_the_file(scored, damage, command, tmp_path, capsys):
    out = tmp_path / "out"
    shutil.copytree(scored, out)
    shutil.rmtree(out / "compare")  # report compares again, reading every per-unit file
    change, named, words = DAMAGES[damage]
    change(out)
    report = tmp_path / "report.html"
    argv = {
        "compare": ["compare", str(out), "--city", "tky", "--resamples", "50"],
        "report": ["report", str(out), "--no-plots", "--output", str(report)],
    }[command]
    capsys.readouterr()
    if command == "report" and "per-unit" in damage:
        # the report is written without significance markers, and says why, naming the file
        assert main(argv) == 0
        assert f"no significance markers: {named(out)}" in report.read_text()
        return
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mobeval: error: {named(out)}") and words in err, err
    assert len(err.splitlines()) == 1 and "internal error" not in err
    assert not report.exists() and not (out / "compare").exists()


def test_stored_comparison_that_is_not_parquet(scored, tmp_path, capsys):
    out = tmp_path / "out"
    shutil.copytree(scored, out)
    stored = out / "compare" / "city=tky" / "part-0.parquet"
    stored.write_bytes(b"PAR1 not really")
    report = tmp_path / "report.html"
    capsys.readouterr()
    assert main(["report", str(out), "--no-plots", "--output", str(report)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mobeval: error: {stored}: not a readable mobeval output file"), err
    assert not report.exists()
