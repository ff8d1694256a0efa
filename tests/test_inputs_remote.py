"""Inputs at fsspec URLs in the local engine, with fsspec's in-memory file system
(``memory://``, no network): Parquet files, directories and globs, CSV.gz and RecBole files
give the numbers of the same local files; unknown schemes, missing packages and missing files
are one clear InputError."""

from __future__ import annotations

import importlib.util
import uuid

import pytest

fsspec = pytest.importorskip("fsspec")
from fsspec.implementations.memory import MemoryFileSystem  # noqa: E402

from mobeval.api import (  # noqa: E402
    evaluate_logits,
    evaluate_nextloc,
    evaluate_recs,
    evaluate_trajectory,
)
from mobeval.errors import InputError  # noqa: E402
from mobeval.io.sources import as_source  # noqa: E402
from tests.conftest import REPO_ROOT  # noqa: E402

SAMPLES = REPO_ROOT / "data_samples"


@pytest.fixture
def bucket():
    """A fresh folder of the in-memory file system, removed afterwards."""
    fs = fsspec.filesystem("memory")
    root = f"memory://bucket-{uuid.uuid4().hex[:8]}"
    yield fs, root
    fs.rm(root, recursive=True)


def _put(fs, local, url):
    with fs.open(url, "wb") as stream:
        stream.write(local.read_bytes())


def test_parquet_files_at_urls(bucket):
    fs, root = bucket
    truth, markov = SAMPLES / "nextloc/tky/truth.parquet", SAMPLES / "nextloc/tky/markov.parquet"
    _put(fs, truth, f"{root}/truth.parquet")
    _put(fs, markov, f"{root}/preds/markov.parquet")
    expected = evaluate_nextloc(truth, markov, k=[1, 5])
    got = evaluate_nextloc(f"{root}/truth.parquet", f"{root}/preds/markov.parquet", k=[1, 5])
    assert got.summary.equals(expected.summary)
    assert got.model == "markov"
    fingerprint = got.inputs["predictions"][0]
    assert fingerprint["path"] == f"{root}/preds/markov.parquet"
    assert fingerprint["size"] == markov.stat().st_size
    assert set(fingerprint) >= {"mtime", "sha256_footer"}
    for spec in (f"{root}/preds", f"{root}/preds/*.parquet"):  # a directory, a glob
        assert evaluate_nextloc(f"{root}/truth.parquet", spec, k=[1, 5]).summary.equals(
            expected.summary
        )


def test_csv_gz_and_recbole_at_urls(bucket):
    fs, root = bucket
    reference, generated = (
        SAMPLES / "humob/reference_test.csv.gz",
        SAMPLES / "humob/weekly_repeat.csv.gz",
    )
    _put(fs, reference, f"{root}/reference.csv.gz")
    _put(fs, generated, f"{root}/generated.csv.gz")
    expected = evaluate_trajectory(reference, generated).summary
    got = evaluate_trajectory(f"{root}/reference.csv.gz", f"{root}/generated.csv.gz")
    assert got.summary.equals(expected)

    ratings, lists = SAMPLES / "recbole/ratings.inter", SAMPLES / "recbole/bpr.tsv"
    _put(fs, ratings, f"{root}/ratings.inter")
    _put(fs, lists, f"{root}/bpr.tsv")
    assert as_source(f"{root}/bpr.tsv").format == "recbole"  # told by its header
    got = evaluate_recs(f"{root}/ratings.inter", f"{root}/bpr.tsv", cutoffs=[5, 10])
    assert got.summary.equals(evaluate_recs(ratings, lists, cutoffs=[5, 10]).summary)


def test_url_errors(bucket):
    fs, root = bucket
    with pytest.raises(InputError, match="unknown URL scheme nosuch://"):
        as_source("nosuch://bucket/file.parquet")
    with pytest.raises(InputError, match="no such file or directory") as caught:
        as_source(f"{root}/missing.parquet")
    assert f"{root}/missing.parquet" in str(caught.value)
    with pytest.raises(InputError, match="no file matches"):
        as_source(f"{root}/*.parquet")
    fs.pipe(f"{root}/notes.bin", b"\x00\x01")
    with pytest.raises(InputError, match="unknown file type"):
        as_source(f"{root}/notes.bin")


@pytest.mark.skipif(importlib.util.find_spec("s3fs") is not None, reason="s3fs is installed")
def test_missing_protocol_package_is_named():
    with pytest.raises(InputError, match=r"s3:// needs a package that is not installed.*s3fs"):
        as_source("s3://bucket/ratings.parquet")


class Unreachable(fsspec.AbstractFileSystem):
    """A file system whose server does not answer (as an object store's client raises when its
    endpoint cannot be reached)."""

    protocol = "unreachable"

    def info(self, path, **kwargs):
        raise RuntimeError("Could not connect to the endpoint URL")


def test_unreachable_file_system_is_named():
    fsspec.register_implementation("unreachable", Unreachable, clobber=True)
    with pytest.raises(InputError, match="cannot reach this URL .Could not connect") as caught:
        as_source("unreachable://bucket/ratings.parquet")
    assert "unreachable://bucket/ratings.parquet" in str(caught.value)


def test_trec_files_at_urls(bucket):
    """A TREC qrels and a gzipped run at URLs, told by their first line as local ones are."""
    fs, root = bucket
    qrels, run = SAMPLES / "trec/qrels.txt", SAMPLES / "trec/run.txt.gz"
    _put(fs, qrels, f"{root}/qrels.txt")
    _put(fs, run, f"{root}/run.txt.gz")
    options = {"convention": "trec_eval", "metrics": ["precision@5", "ndcg@10", "map@1000"]}
    got = evaluate_recs(f"{root}/qrels.txt", f"{root}/run.txt.gz", **options)
    assert got.summary.equals(evaluate_recs(qrels, run, **options).summary)
    assert got.inputs["predictions"][0]["path"] == f"{root}/run.txt.gz"


def test_logits_at_urls(bucket):
    """Logits and targets as ``.npy`` files at URLs (read by byte ranges, chunk by chunk) and a
    Parquet logits file with its target column: the numbers of the local files."""
    import numpy as np
    import polars as pl

    fs, root = bucket
    logits, targets = SAMPLES / "logits/gru.npy", SAMPLES / "logits/targets.npy"
    _put(fs, logits, f"{root}/gru.npy")
    _put(fs, targets, f"{root}/targets.npy")
    expected = evaluate_logits(logits, targets)
    got = evaluate_logits(f"{root}/gru.npy", f"{root}/targets.npy", chunk_rows=20_000)
    assert got.summary.equals(expected.summary)
    assert got.inputs["predictions"][0]["path"] == f"{root}/gru.npy"
    table = pl.DataFrame({"logits": np.load(logits), "target": np.load(targets)})
    with fs.open(f"{root}/gru.parquet", "wb") as stream:
        table.write_parquet(stream)
    got = evaluate_logits(f"{root}/gru.parquet", "target", chunk_rows=20_000)
    assert got.summary.equals(expected.summary)
    with pytest.raises(InputError, match="no such file"):
        evaluate_logits(f"{root}/missing.npy", f"{root}/targets.npy")


@pytest.mark.parametrize(
    "name, read",
    [
        ("truth.parquet", lambda url: as_source(url).schema()),
        ("qrels.txt", as_source),  # a TREC file: its first line is read to tell its kind
        ("gru.npy", lambda url: evaluate_logits(url, SAMPLES / "logits/targets.npy")),
    ],
)
def test_read_failure_of_a_file_system_is_named(bucket, monkeypatch, name, read):
    """A file system whose client fails to read a file with its own kind of error (not an
    OSError), as an object store's client does: one InputError naming the URL."""
    fs, root = bucket
    local = {"truth.parquet": "nextloc/tky", "qrels.txt": "trec", "gru.npy": "logits"}[name]
    _put(fs, SAMPLES / local / name, f"{root}/{name}")

    def refuse(self, path, mode="rb", **kwargs):
        raise RuntimeError("SlowDown: please reduce your request rate")

    monkeypatch.setattr(MemoryFileSystem, "_open", refuse)
    with pytest.raises(InputError, match="cannot read this URL .SlowDown") as caught:
        read(f"{root}/{name}")
    assert f"{root}/{name}" in str(caught.value)
