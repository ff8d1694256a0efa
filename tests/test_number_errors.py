"""A field that should be a number and is not: the message names the file, the column, the value
and where it is (its line, or its key), whichever reader meets it first: Arrow's CSV reader after
its first block, the recs family's typed columns, the HuMob dataset reader of ``validate``."""

import gzip
import re
from pathlib import Path

import polars as pl
import pytest

from mobeval.cli import EXIT_BAD_INPUT, main

SAMPLES = Path(__file__).resolve().parent.parent / "data_samples"


def error_line(capsys) -> str:
    return capsys.readouterr().err.strip().splitlines()[-1]


def numbered(path: Path) -> list[str]:
    """The file's lines, line 1 first (gunzipped)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as handle:
        return handle.read().splitlines()


@pytest.mark.parametrize(("field", "said"), [("x", "'x' is not an integer"), ("", "is empty")])
@pytest.mark.parametrize("bad_line", [2, 9])
def test_validate_dataset_names_the_line_and_column(tmp_path, capsys, field, said, bad_line):
    lines = numbered(SAMPLES / "humob" / "city_test_challengedata.csv.gz")[:12]
    fields = lines[bad_line - 1].split(",")
    fields[2] = field  # column t
    lines[bad_line - 1] = ",".join(fields)
    dataset = tmp_path / "dataset.csv"
    dataset.write_text("\n".join(lines) + "\n")
    submission = str(SAMPLES / "humob" / "weekly_repeat.csv.gz")
    argv = ["validate", "--task", "2025:test", "--dataset", str(dataset)]
    assert main([*argv, "--submission", submission]) == EXIT_BAD_INPUT
    message = error_line(capsys)
    assert f"dataset.csv: cannot read the dataset as uid,d,t,x,y: line {bad_line}, column 't'" in (
        message
    )
    assert said in message


def ratings_with_text(tmp_path: Path, row: int, value: str, copies: int) -> Path:
    """The sample ratings (``copies`` times, as other users) written as CSV with ``value`` as the
    rating of data row ``row`` (0-based; line ``row + 2``)."""
    ratings = pl.read_parquet(SAMPLES / "recs" / "ratings.parquet")
    ratings = pl.concat(
        [ratings.with_columns(pl.col("user_id") + copy * 10**6) for copy in range(copies)]
    ).with_columns(pl.col("rating").cast(pl.String))
    ratings = ratings.with_columns(
        pl.when(pl.int_range(pl.len()) == row)
        .then(pl.lit(value))
        .otherwise(pl.col("rating"))
        .alias("rating")
    )
    path = tmp_path / "ratings.csv"
    ratings.write_csv(path)
    return path


def test_recs_text_rating_names_value_and_key(tmp_path, capsys):
    path = ratings_with_text(tmp_path, 40, "4x", copies=1)
    user, item = numbered(path)[41].split(",")[:2]
    recs = str(SAMPLES / "recs" / "mf.parquet")
    assert main(["recs", "--ratings", str(path), "--recs", recs, "--quiet"]) == EXIT_BAD_INPUT
    message = error_line(capsys)
    assert "ratings.csv: column 'rating': must be numeric: '4x' is not a number" in message
    assert f"first offending key: ({user}, {item})" in message


def test_recs_text_beyond_arrows_first_block_names_its_line(tmp_path, capsys):
    """The first megabyte all numbers, '4x' far after it: Arrow's reader fails at that block;
    the message names the value and the line, found by reading the column again as text."""
    path = ratings_with_text(tmp_path, 150_000, "4x", copies=30)
    line = next(n for n, text in enumerate(numbered(path), start=1) if text.endswith(",4x"))
    recs = str(SAMPLES / "recs" / "mf.parquet")
    argv = ["recs", "--ratings", str(path), "--recs", recs, "--quiet", "--chunk-rows", "1000"]
    assert main(argv) == EXIT_BAD_INPUT
    message = error_line(capsys)
    assert "column 'rating'" in message
    assert re.search(rf"invalid value '4x' at line {line}\b", message), message


def test_recbole_bad_float_names_its_line(tmp_path, capsys):
    lines = numbered(SAMPLES / "recbole" / "ratings.inter")
    bad = 5
    fields = lines[bad - 1].split("\t")
    fields[2] = "abc"
    lines[bad - 1] = "\t".join(fields)
    ratings = tmp_path / "ratings.inter"
    ratings.write_text("\n".join(lines) + "\n")
    recs = str(SAMPLES / "recbole" / "bpr.tsv")
    assert main(["recs", "--ratings", str(ratings), "--recs", recs, "--quiet"]) == EXIT_BAD_INPUT
    message = error_line(capsys)
    assert "ratings.inter: column 'rating'" in message
    assert f"invalid value 'abc' at line {bad})" in message
