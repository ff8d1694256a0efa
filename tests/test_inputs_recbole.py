"""RecBole atomic files (``.inter``, typed tab-separated headers) as ratings and lists for recs.

The oracle reads the file as RecBole's ``Dataset._load_feat`` does (pandas ``read_csv`` with a
tab delimiter, ``float`` columns as float64, every other type as str) and hands the frame to
the same evaluation; mobeval's own streamed reader must give the same numbers."""

from __future__ import annotations

import gzip
import shutil

import polars as pl
import pytest

from mobeval.api import evaluate_recs
from mobeval.errors import InputError
from mobeval.io.inputs import as_source
from tests.conftest import REPO_ROOT

SAMPLES = REPO_ROOT / "data_samples" / "recbole"
RATINGS = SAMPLES / "ratings.inter"
LISTS = SAMPLES / "bpr.tsv"
OPTIONS = {"cutoffs": [1, 5, 10], "metrics": ["precision", "recall", "ndcg", "map", "mrr"]}


def recbole_read(path) -> pl.DataFrame:
    """The atomic file as RecBole loads it: header ``name:type``, pandas with a tab delimiter,
    ``float`` -> float64, ``token`` -> str (RecBole's ``_load_feat``)."""
    pd = pytest.importorskip("pandas")
    with open(path) as stream:
        header = stream.readline().rstrip("\n").split("\t")
    names = [field.split(":")[0] for field in header]
    dtype = {field: float if field.endswith(":float") else str for field in header}
    frame = pd.read_csv(path, delimiter="\t", usecols=header, dtype=dtype)
    frame.columns = names
    return pl.from_pandas(frame)


@pytest.mark.parametrize("convention", ["clayrs", "trec_eval"])
def test_inter_files_read_as_recbole_reads_them(convention):
    """Ratings from an ``.inter`` file and lists from a typed-header ``.tsv``: mobeval's reader
    (streamed, in 100-row chunks) gives the numbers of the frames RecBole's reader makes."""
    ours = evaluate_recs(RATINGS, LISTS, convention=convention, chunk_rows=100, **OPTIONS)
    oracle = evaluate_recs(
        recbole_read(RATINGS), recbole_read(LISTS), convention=convention, **OPTIONS
    )
    assert ours.summary.equals(oracle.summary)
    assert ours.per_unit.sort("user_id").equals(oracle.per_unit.sort("user_id"))
    assert ours.value("users") == 50


def test_tokens_are_strings_floats_are_floats():
    """RecBole keeps a token as text: ids are strings, ``rating`` and ``timestamp`` float64."""
    schema = as_source(RATINGS).schema()
    assert schema == {
        "user_id": pl.String,
        "item_id": pl.String,
        "rating": pl.Float64,
        "timestamp": pl.Float64,
    }


def test_told_by_content_and_gzip(tmp_path):
    """The typed header makes a RecBole file whatever its name; ``.inter.gz`` is gunzipped."""
    plain = tmp_path / "ratings.txt"
    shutil.copy(RATINGS, plain)
    packed = tmp_path / "ratings.inter.gz"
    packed.write_bytes(gzip.compress(RATINGS.read_bytes()))
    expected = evaluate_recs(RATINGS, LISTS, **OPTIONS).summary
    for path in (plain, packed):
        assert as_source(path).format == "recbole"
        assert evaluate_recs(path, LISTS, **OPTIONS).summary.equals(expected)


def test_directory_of_inter_files(tmp_path):
    """A directory of atomic files with one header is one input, read file after file."""
    lines = RATINGS.read_text().splitlines(keepends=True)
    header, rows = lines[0], lines[1:]
    half = len(rows) // 2
    (tmp_path / "part-0.inter").write_text(header + "".join(rows[:half]))
    (tmp_path / "part-1.inter").write_text(header + "".join(rows[half:]))
    got = evaluate_recs(tmp_path, LISTS, **OPTIONS).summary
    assert got.equals(evaluate_recs(RATINGS, LISTS, **OPTIONS).summary)


def _error(ratings, lists=LISTS) -> str:
    with pytest.raises(InputError) as caught:
        evaluate_recs(ratings, lists, **OPTIONS)
    return str(caught.value)


def test_bad_atomic_files(tmp_path):
    untyped = tmp_path / "untyped.inter"
    untyped.write_text("user_id\titem_id\trating\n1\t2\t3\n")
    assert "RecBole" in _error(untyped) and str(untyped) in _error(untyped)

    short = tmp_path / "short.inter"
    short.write_text("user_id:token\titem_id:token\trating:float\n1\t2\t3\n1\t5\n")
    message = _error(short)
    assert str(short) in message and "columns" in message

    text = tmp_path / "text.inter"
    text.write_text("user_id:token\titem_id:token\trating:float\n1\t2\tfive\n")
    message = _error(text)
    assert str(text) in message and "rating" in message

    other = tmp_path / "dir"
    other.mkdir()
    (other / "a.inter").write_text("user_id:token\titem_id:token\trating:float\n1\t2\t3\n")
    (other / "b.inter").write_text("user_id:token\trating:float\titem_id:token\n1\t3\t2\n")
    assert "header differs" in _error(other)

    mixed = tmp_path / "mixed"
    mixed.mkdir()
    shutil.copy(RATINGS, mixed / "a.inter")
    pl.DataFrame({"user_id": ["1"], "item_id": ["2"], "rating": [3.0]}).write_parquet(
        mixed / "b.parquet"
    )
    assert "mixes file formats" in _error(mixed)


def test_missing_column_names_the_file(tmp_path):
    """An atomic file without the column a task needs: the usual message, naming the file."""
    no_rating = tmp_path / "no_rating.inter"
    no_rating.write_text("user_id:token\titem_id:token\n1\t2\n")
    message = _error(no_rating)
    assert str(no_rating) in message and "'rating'" in message
