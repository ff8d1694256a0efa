"""A result given no city is filed under the name of the folder its truth lies in (a plain
name), on every face and engine entry: ``data/tky/truth.parquet`` -> ``tky``, a MovieLens
folder -> its name; ``default`` only where there is no folder (a Python object). A city given
always wins."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import test_job_validation as job_validation

from mobeval.cli import main
from mobeval.engines.base import default_city_name
from mobeval.jobs import load_job, run_job

FILES, API = job_validation.FILES, job_validation.API
inputs = job_validation.inputs  # the fixture: one small valid input of every family


def _copied(inputs: Path, family: str, folder: Path) -> tuple[Path, Path]:
    folder.mkdir(parents=True)
    truth, model = FILES[family][:2]
    for name in (truth, model):
        shutil.copy(inputs / name, folder / name)
    return folder / truth, folder / model


def _cities(out: Path) -> list[str]:
    return sorted(json.loads((out / "manifest.json").read_text())["results"])


@pytest.mark.parametrize("family", sorted(FILES))
@pytest.mark.parametrize(
    ("folder", "city"),
    [("tky", "tky"), ("ml-latest-small", "ml-latest-small"), ("my data (v2)", "my_data__v2_")],
)
def test_the_command_line_names_the_city_after_the_truths_folder(
    tmp_path, inputs, capsys, family, folder, city
):
    truth, model = _copied(inputs, family, tmp_path / "data" / folder)
    _, _, truth_flag, model_flag = FILES[family]
    out = tmp_path / "out"
    argv = [family, truth_flag, str(truth), model_flag, str(model), "--out", str(out), "--quiet"]
    assert main(argv) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.startswith(f"city={city}\n")
    assert _cities(out) == [f"city={city}/model={model.name.split('.')[0]}"]
    assert main([*argv, "--city", "osaka"]) == 0  # given: as given
    assert f"city=osaka/model={model.name.split('.')[0]}" in _cities(out)


def test_a_relative_path_in_the_current_folder_names_it(tmp_path, inputs, capsys, monkeypatch):
    truth, model = _copied(inputs, "recs", tmp_path / "movielens")
    monkeypatch.chdir(truth.parent)
    assert main(["recs", "--ratings", truth.name, "--recs", model.name, "--quiet"]) == 0
    assert capsys.readouterr().out.startswith("city=movielens\n")


@pytest.mark.parametrize("family", sorted(FILES))
def test_python_names_the_city_after_the_truths_folder(tmp_path, inputs, family):
    evaluate, truth_argument, model_argument = API[family]
    truth, model = _copied(inputs, family, tmp_path / "nyc")
    assert evaluate(**{truth_argument: truth, model_argument: model}, progress=False).city == "nyc"


def test_a_python_object_is_filed_under_default(tmp_path, inputs):
    evaluate, truth_argument, model_argument = API["recs"]
    ratings = pl.read_parquet(inputs / FILES["recs"][0])
    result = evaluate(**{truth_argument: ratings, model_argument: inputs / FILES["recs"][1]})
    assert result.city == "default"


def test_logits_whose_targets_are_a_column_take_the_logits_folder(tmp_path, inputs, capsys):
    folder = tmp_path / "foursquare"
    folder.mkdir()
    logits = np.load(inputs / "logits.npy")
    pl.DataFrame(
        {"logits": logits.tolist(), "target": np.load(inputs / "targets.npy")}
    ).write_parquet(folder / "gru.parquet")
    argv = ["logits", "--logits", str(folder / "gru.parquet"), "--targets", "target", "--quiet"]
    assert main(argv) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.startswith("city=foursquare\n")


def test_a_job_task_without_a_city_names_it_after_its_truths_folder(tmp_path, inputs):
    truth, model = _copied(inputs, "nextloc", tmp_path / "nyc")
    job = tmp_path / "job.toml"
    job.write_text(
        f'out = "{tmp_path / "out"}"\n[[tasks]]\ntype = "nextloc"\ntruth = "nyc/{truth.name}"\n'
        f'models = {{ m = "nyc/{model.name}" }}\n'
    )
    spec = load_job(job)
    assert spec.tasks[0].city == "nyc"
    (evaluation,) = run_job(spec, progress=False, log=lambda _: None)
    assert evaluation.city == "nyc" and _cities(tmp_path / "out") == ["city=nyc/model=m"]


@pytest.mark.parametrize(
    ("path", "city"),
    [
        ("s3://bucket/tky/*.parquet", "tky"),
        ("https://example.org/data/ml-100k/u.data", "ml-100k"),
        ("s3://bucket/truth.parquet", "bucket"),
        ("/truth.parquet", "default"),
        ("data/tky/truth/", "tky"),  # a folder of parts: the folder it lies in
    ],
)
def test_paths_and_urls(path, city):
    assert default_city_name(path) == city
