"""Job files whose inputs are URLs, on the local engine, with fsspec's in-memory file system
(``memory://``, no network): the URLs are kept as given (never joined to the job file's folder),
read through the same io code as the API's inputs, and looked for before any model runs, with
the same one-line errors as local paths."""

from __future__ import annotations

import json
import uuid

import pytest

fsspec = pytest.importorskip("fsspec")

from mobeval.api import evaluate_logits, evaluate_nextloc  # noqa: E402
from mobeval.cli import main  # noqa: E402
from mobeval.errors import ConfigError  # noqa: E402
from mobeval.jobs import load_job, run_job  # noqa: E402
from tests.conftest import REPO_ROOT  # noqa: E402

SAMPLES = REPO_ROOT / "data_samples"


@pytest.fixture
def bucket():
    """A fresh folder of the in-memory file system holding copies of sample files, removed
    afterwards."""
    fs = fsspec.filesystem("memory")
    root = f"memory://jobs-{uuid.uuid4().hex[:8]}"
    for local, name in (
        ("nextloc/tky/truth.parquet", "truth.parquet"),
        ("nextloc/tky/markov.parquet", "preds/markov.parquet"),
        ("logits/gru.npy", "gru.npy"),
        ("logits/targets.npy", "targets.npy"),
        ("trec/qrels.txt", "qrels.test"),
        ("trec/run.txt.gz", "bm25.run"),
    ):
        fs.pipe(f"{root}/{name}", (SAMPLES / local).read_bytes())
    yield root
    fs.rm(root, recursive=True)


def _job(tmp_path, text: str):
    path = tmp_path / "jobs" / "job.toml"
    path.parent.mkdir()
    path.write_text('out = "../out"\n' + text)
    return path


def _nextloc_job(tmp_path, root: str, markov: str | None = None):
    local = SAMPLES / "nextloc/tky/markov.parquet"
    return _job(
        tmp_path,
        f"""
[[tasks]]
type = "nextloc"
city = "tky"
truth = "{root}/truth.parquet"
k = [1, 5]
[tasks.models]
markov = "{markov or f"{root}/preds/markov.parquet"}"
local = "{local}"
""",
    )


def test_urls_kept_as_given_and_scored_as_local_files(tmp_path, bucket):
    job = load_job(_nextloc_job(tmp_path, bucket))
    task = job.tasks[0]
    assert task.truth == f"{bucket}/truth.parquet"  # not joined to the job file's folder
    assert task.models["markov"] == f"{bucket}/preds/markov.parquet"
    results = {e.model: e for e in run_job(job, log=lambda _: None)}
    tky = SAMPLES / "nextloc/tky"
    expected = evaluate_nextloc(tky / "truth.parquet", tky / "markov.parquet", k=[1, 5])
    assert results["markov"].summary.equals(expected.summary)
    assert results["local"].summary.equals(expected.summary)
    manifest = json.loads((tmp_path / "out/manifest.json").read_text())
    inputs = manifest["results"]["city=tky/model=markov"]["inputs"]
    assert inputs["predictions"][0]["path"] == f"{bucket}/preds/markov.parquet"
    logged = []
    again = run_job(job, resume=True, log=logged.append)  # fingerprints of the URLs match
    assert [(e.model, e.resumed) for e in again] == [("markov", True), ("local", True)]
    assert logged == [
        "tky/markov: complete, resumed from OUT (--resume)",
        "tky/local: complete, resumed from OUT (--resume)",
    ]


def test_a_missing_url_is_named_before_any_model_runs(tmp_path, bucket, capsys):
    missing = f"{bucket}/preds/missing.parquet"
    path = _nextloc_job(tmp_path, bucket, markov=missing)
    job = load_job(path)
    with pytest.raises(ConfigError) as caught:
        run_job(job, log=lambda _: None)
    assert str(caught.value) == (
        f"{path}: tasks[0].models.markov: {missing}: no such file or directory"
    )
    assert not (tmp_path / "out").exists()  # the truth and the local model did not run
    assert main(["run", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == f"mobeval: error: {caught.value}\n"


def test_a_scheme_the_local_engine_cannot_open_points_to_spark(tmp_path, bucket):
    path = _nextloc_job(tmp_path, bucket, markov="nosuch://lake/markov.parquet")
    with pytest.raises(ConfigError) as caught:
        run_job(load_job(path), log=lambda _: None)
    message = str(caught.value)
    assert message.startswith(f"{path}: tasks[0].models.markov: nosuch://lake/markov.parquet: ")
    assert "unknown URL scheme nosuch://" in message and "--engine spark" in message


def test_a_hadoop_path_is_left_to_spark(tmp_path, bucket):
    """``dbfs:/...`` (a scheme and one slash) is no fsspec URL: kept as given, and refused by the
    local engine before any model runs."""
    path = _nextloc_job(tmp_path, bucket, markov="dbfs:/Volumes/lake/markov.parquet")
    job = load_job(path)
    assert job.tasks[0].models["markov"] == "dbfs:/Volumes/lake/markov.parquet"
    with pytest.raises(ConfigError) as caught:
        run_job(job, log=lambda _: None)
    assert str(caught.value) == (
        f"{path}: tasks[0].models.markov: dbfs:/Volumes/lake/markov.parquet: a path on another "
        "file system; the local engine cannot read it (run the job with --engine spark)"
    )
    assert not (tmp_path / "out").exists()


def test_logits_and_trec_files_at_urls(tmp_path, bucket):
    path = _job(
        tmp_path,
        f"""
[[tasks]]
type = "logits"
truth = "{bucket}/targets.npy"
[tasks.models]
gru = "{bucket}/gru.npy"

[[tasks]]
type = "recs"
city = "trec"
truth = "{bucket}/qrels.test"
convention = "trec_eval"
metrics = ["precision@5", "ndcg@10"]
[tasks.models]
bm25 = "{bucket}/bm25.run"
""",
    )
    results = {e.model: e for e in run_job(load_job(path), log=lambda _: None)}
    logits = evaluate_logits(SAMPLES / "logits/gru.npy", SAMPLES / "logits/targets.npy")
    assert results["gru"].summary.equals(logits.summary)
    trec = SAMPLES / "trec"
    from mobeval.api import evaluate_recs

    recs = evaluate_recs(
        trec / "qrels.txt",
        trec / "run.txt.gz",
        convention="trec_eval",
        metrics=["precision@5", "ndcg@10"],
    )
    assert results["bm25"].summary.equals(recs.summary)
    path.write_text(path.read_text().replace(f"{bucket}/gru.npy", f"{bucket}/nothing.npy"))
    with pytest.raises(ConfigError) as caught:
        run_job(load_job(path), log=lambda _: None)
    assert str(caught.value) == f"{path}: tasks[0].models.gru: {bucket}/nothing.npy: no such file"


def test_a_local_trec_file_of_any_name_passes_the_job_check(tmp_path):
    """A TREC file is told by its first line (as the API tells it), not by a suffix."""
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "qrels.test").write_bytes((SAMPLES / "trec/qrels.txt").read_bytes())
    (folder / "bm25.run").write_bytes((SAMPLES / "trec/run.txt.gz").read_bytes())
    path = _job(
        tmp_path,
        """
[[tasks]]
type = "recs"
truth = "../data/qrels.test"
convention = "trec_eval"
[tasks.models]
bm25 = "../data/bm25.run"
""",
    )
    assert load_job(path).tasks[0].models["bm25"].resolve() == folder / "bm25.run"
