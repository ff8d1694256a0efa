"""Inputs at fsspec URLs in the local engine, with fsspec's in-memory file system
(``memory://``, no network): Parquet files, directories and globs, CSV.gz and RecBole files
give the numbers of the same local files; unknown schemes, missing packages and missing files
are one clear InputError. A server that stalls (headers, then nothing: a local HTTP server
thread) is an error naming the URL within the URL timeout, on every face."""

from __future__ import annotations

import http.server
import importlib.util
import threading
import time
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
from mobeval.io.inputs import as_source  # noqa: E402
from tests.conftest import REPO_ROOT  # noqa: E402

SAMPLES = REPO_ROOT / "data_samples"
TARGETS = SAMPLES / "logits/targets.npy"
RATINGS, MF = SAMPLES / "recs/ratings.parquet", SAMPLES / "recs/mf.parquet"


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


# --------------------------------------------------------------------------------------------
# A server that stalls: the URL timeout, on every face


class Stalling(http.server.BaseHTTPRequestHandler):
    """Answers HEAD with a length, and GET with its headers, then nothing until released."""

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "100000")
        self.end_headers()

    def do_GET(self):
        self.do_HEAD()
        self.wfile.flush()
        self.server.released.wait(60)

    def log_message(self, *args):
        pass


@pytest.fixture
def stalled():
    """The base URL of a local HTTP server thread that stalls on every GET."""
    pytest.importorskip("aiohttp")  # fsspec's HTTP file system runs on it
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stalling)
    server.daemon_threads = True
    server.released = threading.Event()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.released.set()
    server.shutdown()
    server.server_close()


def _within(seconds: float, call) -> str:
    """The message of the InputError ``call`` raises, checked to come within ``seconds``."""
    started = time.monotonic()
    with pytest.raises(InputError) as caught:
        call()
    assert time.monotonic() - started < seconds, "waited past the URL timeout"
    return str(caught.value)


@pytest.mark.parametrize(
    "name, read",
    [
        ("truth.parquet", lambda url: evaluate_nextloc(url, url, url_timeout=1)),
        ("ratings.csv", lambda url: evaluate_recs(url, url, url_timeout=1)),
        ("qrels.txt", lambda url: evaluate_recs(url, url, url_timeout=1)),
        (
            "gru.npy",
            lambda url: evaluate_logits(url, SAMPLES / "logits/targets.npy", url_timeout=1),
        ),
    ],
)
def test_a_stalled_server_in_python(stalled, name, read):
    message = _within(10, lambda: read(f"{stalled}/{name}"))
    assert message.startswith(f"{stalled}/{name}: no answer within 1 s"), message


def test_a_stalled_server_in_trec_eval_and_the_cli(stalled, capsys):
    from mobeval.cli import main

    for argv in (
        ["trec_eval", "--url-timeout", "1", f"{stalled}/qrels.txt", f"{stalled}/run.txt"],
        ["recs", "--ratings", f"{stalled}/r.parquet", "--recs", f"{stalled}/m.parquet"],
    ):
        argv += ["--url-timeout", "1"] if argv[0] == "recs" else []
        started = time.monotonic()
        assert main(argv) == 2
        assert time.monotonic() - started < 10
        err = capsys.readouterr().err
        assert err.startswith(f"mobeval: error: {stalled}/") and "no answer within 1 s" in err


def test_a_stalled_server_in_a_job(stalled, tmp_path, capsys):
    from mobeval.cli import main

    job = tmp_path / "job.toml"
    job.write_text(
        f'out = "{tmp_path / "out"}"\nurl_timeout = 1\n[[tasks]]\ntype = "recs"\n'
        f'truth = "{stalled}/ratings.parquet"\n[tasks.models]\nmf = "{stalled}/mf.parquet"\n'
    )
    started = time.monotonic()
    assert main(["run", str(job), "--quiet"]) == 2
    assert time.monotonic() - started < 10
    err = capsys.readouterr().err
    assert f"{stalled}/ratings.parquet: no answer within 1 s" in err, err
    assert not list((tmp_path / "out").glob("*/city=*"))


def test_the_timeout_reaches_the_http_client():
    """Without an option, an HTTP file system waits DEFAULT_URL_TIMEOUT seconds to connect and
    between reads; url_timeout() changes it for the reads in its block."""
    pytest.importorskip("aiohttp")
    from mobeval.io.remote import DEFAULT_URL_TIMEOUT, filesystem, url_timeout

    def waits(fs):
        timeout = fs.client_kwargs["timeout"]
        return timeout.connect, timeout.sock_read

    assert waits(filesystem("http://127.0.0.1:9/x")[0]) == (DEFAULT_URL_TIMEOUT,) * 2
    with url_timeout(2.5):
        assert waits(filesystem("http://127.0.0.1:9/x")[0]) == (2.5, 2.5)


@pytest.mark.parametrize("value", [0, -1, float("nan"), float("inf"), "30", True])
def test_a_wrong_timeout_is_named_on_every_face(value, tmp_path, capsys):
    from mobeval.cli import main
    from mobeval.errors import ConfigError
    from mobeval.jobs import load_job

    with pytest.raises(ConfigError, match=r"^url_timeout: .* is not a positive number"):
        evaluate_recs(RATINGS, MF, url_timeout=value)
    job = tmp_path / "job.toml"
    toml = {True: "true", "30": '"30"'}.get(value, repr(value))  # nan, inf: TOML floats
    job.write_text(
        f'out = "out"\nurl_timeout = {toml}\n[[tasks]]\ntype = "recs"\n'
        f'truth = "{RATINGS}"\n[tasks.models]\nmf = "{MF}"\n'
    )
    with pytest.raises(ConfigError, match=r"job\.toml: url_timeout: .* is not a positive number"):
        load_job(job)
    if isinstance(value, float) or value in (0, -1):
        argv = ["trec_eval", "--url-timeout", str(value), "q", "r"]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("mobeval: error: --url-timeout: ") and "positive number" in err
