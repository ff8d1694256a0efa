"""Trackers (issue 35): results logged to a real local MLflow tracking store (SQLite, read back
with MlflowClient) and to W&B's offline run files (the ``.wandb`` log read record by record), from
Python, the command line and a job file. The ``mlflow`` and ``wandb`` extras are optional: their
tests are skipped where they are not installed; the key mapping's are not."""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import pickle
import re
import struct
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import mobeval
from mobeval.errors import ConfigError, MobevalError
from mobeval.track import metric_name, mlflow_key, parse_target
from tests.conftest import REPO_ROOT

TKY = REPO_ROOT / "data_samples" / "nextloc" / "tky"
LOGITS = REPO_ROOT / "data_samples" / "logits"
#: MLflow's rule for a metric key on Linux and macOS (mlflow.utils.validation).
MLFLOW_KEY = re.compile(r"^[/\w.\- :]*$")


# --------------------------------------------------------------------------- MLflow's keys


def test_mlflow_keys_of_mobeval_names():
    assert mlflow_key("acc@5") == "acc_at_5"
    assert mlflow_key("pop_ratio@10:popular:recs") == "pop_ratio_at_10:popular:recs"
    assert mlflow_key("P(rel=2)@5") == "P_x28_rel_x3d_2_x29__at_5"
    assert mlflow_key("iprec_at_recall_0.10") == "iprec_x5f_at_recall_0.10"
    assert mlflow_key("memorised@50%") == "memorised_at_50_x25_"
    assert mlflow_key("ndcg_cut_10") == "ndcg_cut_10"  # nothing to map: as it is
    for name in ("acc@5", "P(rel=2)@5", "iprec_at_recall_0.10", "jsd_radius@d=74", "a__at_"):
        assert metric_name(mlflow_key(name)) == name


@given(st.text(alphabet=st.sampled_from("_@ax0123456789fA:=(%é"), max_size=12) | st.text())
def test_every_name_has_a_key_mlflow_takes_and_reads_back(name):
    key = mlflow_key(name)
    assert MLFLOW_KEY.match(key) and " " not in key
    assert metric_name(key) == name


def test_the_keys_pass_mlflows_own_check():
    validation = pytest.importorskip("mlflow.utils.validation")
    for name in ("acc@5", "P(rel=2)@5", "gini@10:low", "memorised@50%", "nDCG(dcg='exp-log2')@10"):
        assert validation.validate_param_and_metric_name(mlflow_key(name))


# --------------------------------------------------------------------------- targets


def test_a_target_names_a_tracker_and_its_place():
    with pytest.raises(ConfigError, match=r"--track: 'tensorboard:runs': expected mlflow"):
        parse_target("tensorboard:runs")


def test_a_tracker_not_installed_names_its_extra(monkeypatch):
    import mobeval.track as track

    real = track.importlib.util.find_spec
    monkeypatch.setattr(
        track.importlib.util, "find_spec", lambda n: None if n == "wandb" else real(n)
    )
    with pytest.raises(ConfigError, match=r"--track: .*pip install 'mobeval\[wandb\]'"):
        parse_target("wandb:tky")


def test_an_accumulator_carries_its_options_through_a_pickle():
    metric = mobeval.LogitsAccumulator(k=[1, 5], model="gru")
    metric.update(np.load(LOGITS / "gru.npy"), np.load(LOGITS / "targets.npy"))
    gathered = pickle.loads(pickle.dumps(metric))
    config = {"type": "logits", "city": "default", "model": "gru", "k": [1, 5]}
    assert gathered.compute().config == config


# --------------------------------------------------------------------------- shared oracles


def _summary(out, model: str) -> dict[str, float]:
    """The result's summary as written under OUT: metric -> value."""
    frame = pl.read_parquet(out / "summary" / "city=tky" / f"model={model}")
    return dict(zip(frame["metric"], frame["value"], strict=True))


def _digest(fingerprint: list[dict]) -> str:
    kept = [{k: v for k, v in f.items() if k not in ("path", "mtime")} for f in fingerprint]
    return hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).hexdigest()[:16]


@pytest.fixture(scope="module")
def tky_out(tmp_path_factory):
    """An OUT of two next-location models of tky, written by evaluate_nextloc(out=...)."""
    out = tmp_path_factory.mktemp("track") / "out"
    for model in ("markov", "popularity"):
        mobeval.evaluate_nextloc(TKY / "truth.parquet", TKY / f"{model}.parquet", out=out, k=[1, 5])
    return out


# --------------------------------------------------------------------------- MLflow


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A SQLite tracking store (made once: MLflow builds its tables in seconds) and the
    experiment ``tky`` with its artifacts beside it."""
    pytest.importorskip("mlflow")
    pytest.importorskip("sqlalchemy")
    from mlflow.tracking import MlflowClient

    folder = tmp_path_factory.mktemp("mlflow")
    uri = f"sqlite:///{folder / 'mlflow.db'}"
    with contextlib.chdir(folder):  # the Default experiment's artifacts: ./mlruns, made here
        MlflowClient(uri).create_experiment("tky", artifact_location=(folder / "art").as_uri())
    return uri


def _artifact(client, run_id: str, name: str, folder) -> str:
    return Path(client.download_artifacts(run_id, name, str(folder))).read_text()


def test_an_out_goes_to_mlflow_one_run_a_result(store, tky_out, tmp_path):
    from mlflow.tracking import MlflowClient

    ids = mobeval.to_mlflow(tky_out, store, experiment="tky")
    client = MlflowClient(store)
    manifest = json.loads((tky_out / "manifest.json").read_text())["results"]
    for run_id, model in zip(ids, ("markov", "popularity"), strict=True):
        run = client.get_run(run_id)
        entry = manifest[f"city=tky/model={model}"]
        assert run.info.run_name == f"tky/{model}" and run.info.status == "FINISHED"
        metrics = {metric_name(k): v for k, v in run.data.metrics.items()}
        assert metrics == _summary(tky_out, model)
        assert "acc_at_5" in run.data.metrics
        resolved = {
            k: v if isinstance(v, str) else json.dumps(v) for k, v in entry["resolved"].items()
        }
        assert run.data.params == resolved
        assert (
            run.data.tags["mobeval.model"] == model and run.data.tags["mobeval.task"] == "nextloc"
        )
        for role in ("truth", "predictions"):
            assert run.data.tags[f"mobeval.input.{role}"] == _digest(entry["inputs"][role])
        assert sorted(a.path for a in client.list_artifacts(run_id)) == [
            "mobeval.json",
            "report.html",
        ]
        record = json.loads(_artifact(client, run_id, "mobeval.json", tmp_path))
        assert record["inputs"] == entry["inputs"] and record["config"] == entry["config"]
        report = _artifact(client, run_id, "report.html", tmp_path)
        assert "<table" in report and "popularity" in report and "markov" in report


def test_a_training_loop_logs_each_epoch_into_the_active_run(store, monkeypatch):
    import mlflow
    from mlflow.tracking import MlflowClient

    logits, targets = np.load(LOGITS / "gru.npy"), np.load(LOGITS / "targets.npy")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", store)
    mlflow.set_tracking_uri(store)
    mlflow.set_experiment("tky")
    with mlflow.start_run(run_name="gru training") as run:
        for epoch in range(2):
            metric = mobeval.LogitsAccumulator(k=[1, 5], model="gru")
            metric.update(logits[: 500 * (epoch + 1)], targets[: 500 * (epoch + 1)])
            [logged] = mobeval.to_mlflow(metric.compute(), step=epoch, params={"lr": 0.1})
            assert logged == run.info.run_id
        with pytest.raises(ConfigError, match="2 results, one MLflow run each"):
            mobeval.to_mlflow([metric.compute(), metric.compute()])
    client = MlflowClient(store)
    history = client.get_metric_history(run.info.run_id, "acc_at_5")
    expected = [
        mobeval.evaluate_logits(logits[:n], targets[:n], k=[1, 5]).value("acc@5")
        for n in (500, 1000)
    ]
    assert [(m.step, m.value) for m in history] == list(enumerate(expected))
    params = client.get_run(run.info.run_id).data.params
    assert params["k"] == "[1, 5]" and params["lr"] == "0.1" and params["ties"] == "optimistic"


# --------------------------------------------------------------------------- W&B offline


def _wandb_records(run_dir) -> list:
    """The records of a run's ``.wandb`` log: W&B's transaction log (LevelDB's log format: a
    7-byte header ``:W&B``, magic, version; 32 KiB blocks of records, each a 7-byte header
    (CRC-32, length, type: 1 whole, 2 first, 3 middle, 4 last part) and its bytes)."""
    from wandb.proto import wandb_internal_pb2

    [path] = glob.glob(f"{run_dir}/*.wandb")
    data, block, position, parts, records = Path(path).read_bytes(), 32768, 7, b"", []
    assert data[:4] == b":W&B"
    while position + 7 <= len(data):
        if block - position % block < 7:  # too little room left for a header: the block's end
            position += block - position % block
            continue
        _, length, kind = struct.unpack("<IHB", data[position : position + 7])
        parts += data[position + 7 : position + 7 + length]
        position += 7 + length
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(parts)
            records.append(record)
            parts = b""
    return records


def _history(records) -> list[dict]:
    return [
        {item.nested_key[0]: json.loads(item.value_json) for item in r.history.item}
        for r in records
        if r.WhichOneof("record_type") == "history"
    ]


def test_a_result_goes_to_wandb_offline(tky_out, tmp_path, monkeypatch):
    wandb = pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    markov = mobeval.evaluate_nextloc(
        TKY / "truth.parquet", TKY / "markov.parquet", out=tky_out, k=[1, 5]
    )
    [run_id] = mobeval.to_wandb(markov, "tky", dir=str(tmp_path))
    wandb.teardown()  # the run's log written whole (finish returns before W&B's core flushes it)
    [run_dir] = glob.glob(f"{tmp_path}/wandb/offline-run-*-{run_id}")
    records = _wandb_records(run_dir)
    [run] = [r.run for r in records if r.WhichOneof("record_type") == "run"]
    assert run.project == "tky" and run.display_name == "tky/markov"
    assert sorted(run.tags) == ["nextloc", "tky"]
    config = {item.key: json.loads(item.value_json) for item in run.config.update}
    assert config["k"] == "[1, 5]" and config["convention"] == "mobeval"
    manifest = json.loads((tky_out / "manifest.json").read_text())["results"]
    inputs = manifest["city=tky/model=markov"]["inputs"]
    assert config["mobeval"]["input.truth"] == _digest(inputs["truth"])
    [history] = _history(records)
    assert {k: v for k, v in history.items() if not k.startswith("_")} == _summary(
        tky_out, "markov"
    )
    files = sorted(p.rsplit("/", 1)[-1] for p in glob.glob(f"{run_dir}/files/*"))
    assert {"mobeval.json", "report.html"} <= set(files)


def test_wandb_epochs_go_into_the_active_run(tmp_path, monkeypatch):
    wandb = pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_SILENT", "true")
    logits, targets = np.load(LOGITS / "gru.npy"), np.load(LOGITS / "targets.npy")
    run = wandb.init(project="tky", mode="offline", dir=str(tmp_path), name="training")
    try:
        for epoch in range(2):
            metric = mobeval.LogitsAccumulator(k=[1, 5])
            metric.update(logits[: 500 * (epoch + 1)], targets[: 500 * (epoch + 1)])
            assert mobeval.to_wandb(metric.compute(), step=epoch) == [run.id]
    finally:
        run.finish()
        wandb.teardown()
    [run_dir] = glob.glob(f"{tmp_path}/wandb/offline-run-*-{run.id}")
    steps = [(h["_step"], h["acc@5"]) for h in _history(_wandb_records(run_dir))]
    expected = [
        mobeval.evaluate_logits(logits[:n], targets[:n], k=[1, 5]).value("acc@5")
        for n in (500, 1000)
    ]
    assert steps == list(enumerate(expected))


# --------------------------------------------------------------------------- command line, jobs


def _cli(*arguments: str) -> int:
    from mobeval.cli import main

    return main([str(a) for a in arguments])


def test_the_command_line_tracks_a_scored_result(store, tmp_path, capsys, monkeypatch):
    from mlflow.tracking import MlflowClient

    monkeypatch.chdir(tmp_path)  # whatever MLflow writes beside it

    out = tmp_path / "out"
    code = _cli(
        "nextloc", "--truth", TKY / "truth.parquet", "--pred", TKY / "popularity.parquet",
        "--k", "1,5", "--out", out, "--quiet", "--track", store,
    )  # fmt: skip
    assert code == 2
    assert "--track: 'sqlite" in capsys.readouterr().err  # a store without its tracker: refused
    assert not out.exists()  # before any work
    code = _cli(
        "nextloc", "--truth", TKY / "truth.parquet", "--pred", TKY / "popularity.parquet",
        "--k", "1,5", "--out", out, "--quiet", "--track", f"mlflow:{store}",
    )  # fmt: skip
    assert code == 0
    [line] = [line for line in capsys.readouterr().err.splitlines() if "logged to" in line]
    run_id = re.fullmatch(rf"tky/popularity: logged to mlflow:{store} \(run (\w+)\)", line)[1]
    run = MlflowClient(store).get_run(run_id)
    assert run.info.experiment_id == "0"  # MLflow's Default: no experiment named
    assert {metric_name(k): v for k, v in run.data.metrics.items()} == _summary(out, "popularity")
    artifacts = sorted(a.path for a in MlflowClient(store).list_artifacts(run_id))
    assert artifacts == ["mobeval.json", "report.html"]


def test_mobeval_track_logs_every_result_of_an_out_to_wandb(tky_out, tmp_path, monkeypatch):
    wandb = pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    assert _cli("track", tky_out, "--to", "wandb:tky") == 0
    wandb.teardown()
    runs = {}
    for run_dir in glob.glob(f"{tmp_path}/wandb/offline-run-*"):
        records = _wandb_records(run_dir)
        [run] = [r.run for r in records if r.WhichOneof("record_type") == "run"]
        [history] = _history(records)
        runs[run.display_name] = {k: v for k, v in history.items() if not k.startswith("_")}
    assert runs == {f"tky/{m}": _summary(tky_out, m) for m in ("markov", "popularity")}


def test_a_job_files_track_logs_its_results(store, tmp_path, monkeypatch):
    from mlflow.tracking import MlflowClient

    from mobeval.jobs import load_job, run_job

    monkeypatch.chdir(tmp_path)  # whatever MLflow writes beside it
    job = tmp_path / "job.toml"
    tasks = f"""
[[tasks]]
type = "nextloc"
city = "tky"
truth = "{TKY / "truth.parquet"}"
k = [1, 5]
models = {{ markov = "{TKY / "markov.parquet"}" }}
"""
    job.write_text(f'out = "out"\ntrack = "mlflow:sqlite"\n{tasks}')
    with pytest.raises(MobevalError, match=r"^mlflow:sqlite: logging failed: "):
        run_job(load_job(job), log=lambda _: None)  # a file store MLflow 3 refuses: named
    job.write_text(f'out = "out"\ntrack = ["wandb", 5]\n{tasks}')
    with pytest.raises(ConfigError, match=r"job.toml: track: expected a string or an array"):
        load_job(job)
    job.write_text(
        f'out = "out"\ntrack = ["{store.replace("sqlite", "mlflow:sqlite", 1)}"]\n{tasks}'
    )
    lines = []
    run_job(load_job(job), log=lines.append)
    [run_id] = [line.rsplit("(run ", 1)[1].rstrip(")") for line in lines if "logged to" in line]
    run = MlflowClient(store).get_run(run_id)
    assert run.info.run_name == "tky/markov" and run.data.params["k"] == "[1, 5]"
    assert run.data.metrics["acc_at_5"] == _summary(tmp_path / "out", "markov")["acc@5"]
