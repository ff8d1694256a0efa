"""Job files, resume after a failure or a kill, thread-count invariance, and every input format."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from mobeval.api import evaluate_nextloc
from mobeval.errors import ConfigError
from mobeval.jobs import load_job, run_job
from tests.conftest import REPO_ROOT

SAMPLES = REPO_ROOT / "data_samples" / "nextloc"


def write_job(path: Path, models: dict, out: str = "out", extra: str = "") -> Path:
    lines = [
        f'out = "{out}"',
        extra,
        "[[tasks]]",
        'type = "nextloc"',
        'city = "tky"',
        f'truth = "{SAMPLES / "tky" / "truth.parquet"}"',
        "k = [1, 5, 10]",
        "[tasks.models]",
    ]
    lines += [f'{name} = "{value}"' for name, value in models.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def read_outputs(out: Path) -> dict:
    """Every Parquet output, keyed by its path relative to out (manifest excluded)."""
    return {
        str(p.relative_to(out)): pl.read_parquet(p)
        for p in sorted(out.rglob("*.parquet"))
        if ".staging" not in p.parts
    }


def assert_same_outputs(a: Path, b: Path) -> None:
    left, right = read_outputs(a), read_outputs(b)
    assert left.keys() == right.keys()
    for name in left:
        assert left[name].equals(right[name]), name


def test_sample_job_runs_and_matches_the_api(tmp_path):
    job = load_job(REPO_ROOT / "jobs" / "nextloc_sample.toml", out=tmp_path / "out")
    results = run_job(job, log=lambda _: None)
    assert {(r.city, r.model) for r in results} == {
        ("tky", "markov"),
        ("tky", "popularity"),
        ("nyc", "markov"),
        ("nyc", "popularity"),
    }
    direct = evaluate_nextloc(
        SAMPLES / "nyc" / "truth.parquet", SAMPLES / "nyc" / "markov.parquet", convention="libcity"
    )
    written = pl.read_parquet(tmp_path / "out" / "summary" / "city=nyc" / "model=markov")
    assert written.equals(direct.summary)
    manifest = (tmp_path / "out" / "manifest.json").read_text()
    assert '"city=nyc/model=markov"' in manifest and "sha256_footer" in manifest


def test_resume_after_failure_recomputes_only_what_is_missing(tmp_path):
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"not parquet")
    models = {"markov": SAMPLES / "tky" / "markov.parquet", "popularity": broken}
    job = load_job(write_job(tmp_path / "job.toml", models))
    with pytest.raises(Exception, match="Parquet"):
        run_job(job, log=lambda _: None)
    first = job.out / "summary" / "city=tky" / "model=markov"
    assert first.is_dir() and not (job.out / "summary" / "city=tky" / "model=popularity").exists()
    stamp = os.stat(next(first.iterdir())).st_mtime_ns
    shutil.copy(SAMPLES / "tky" / "popularity.parquet", broken)
    log = []
    run_job(load_job(job.path), resume=True, log=log.append)
    assert "tky/markov: complete, resumed from OUT (--resume)" in log
    assert os.stat(next(first.iterdir())).st_mtime_ns == stamp
    clean = load_job(job.path, out=tmp_path / "clean")
    run_job(clean, log=lambda _: None)
    assert_same_outputs(job.out, clean.out)


def test_resume_redoes_a_result_whose_inputs_changed(tmp_path):
    predictions = tmp_path / "markov.parquet"
    shutil.copy(SAMPLES / "tky" / "markov.parquet", predictions)
    job = load_job(write_job(tmp_path / "job.toml", {"markov": predictions}))
    run_job(job, log=lambda _: None)
    pl.read_parquet(predictions).head(1000).write_parquet(predictions)
    log = []
    run_job(load_job(job.path), resume=True, log=log.append)
    assert not any("resumed" in line for line in log)


def test_killed_job_resumes_to_identical_outputs(tmp_path):
    """SIGKILL a real run in the middle, resume it, and compare with an uninterrupted run."""
    big = tmp_path / "big"
    big.mkdir()
    n_samples, n_candidates = 200_000, 10
    samples = np.arange(n_samples)
    pl.DataFrame({"sample_id": samples, "location": samples % 97}).write_parquet(
        big / "truth.parquet"
    )
    models = {}
    for index in range(4):
        offsets = (np.arange(n_candidates) * (index + 2)) % 97
        locations = (samples[:, None] % 97 + offsets[None, :] + index) % 97
        frame = pl.DataFrame(
            {
                "sample_id": np.repeat(samples, n_candidates),
                "location": locations.ravel(),
                "score": -np.tile(np.arange(n_candidates, dtype=float), n_samples),
            }
        )
        models[f"m{index}"] = big / f"m{index}.parquet"
        frame.write_parquet(models[f"m{index}"])
    job_path = tmp_path / "job.toml"
    job_path.write_text(
        "\n".join(
            [
                'out = "out"',
                "chunk_rows = 100000",
                "[[tasks]]",
                'type = "nextloc"',
                f'truth = "{big / "truth.parquet"}"',
                "k = [1, 5]",
                "[tasks.models]",
                *[f'{name} = "{path}"' for name, path in models.items()],
            ]
        )
        + "\n"
    )
    command = [sys.executable, "-m", "mobeval.cli", "run", str(job_path), "--quiet"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    out = tmp_path / "out"
    deadline = time.time() + 120
    while time.time() < deadline and process.poll() is None:
        if (out / "summary" / "city=big" / "model=m0").is_dir():
            break
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL, "the job finished before it could be killed"
    assert not (out / "summary" / "city=big" / "model=m3").exists()
    subprocess.run([*command, "--resume"], check=True, capture_output=True)
    subprocess.run([*command, "--out", str(tmp_path / "clean")], check=True, capture_output=True)
    assert_same_outputs(out, tmp_path / "clean")
    assert not list((out / ".staging").rglob("*.parquet"))


def test_same_numbers_with_one_or_two_threads(tmp_path):
    script = (
        "import sys; from mobeval.api import evaluate_nextloc; "
        f"r = evaluate_nextloc('{SAMPLES / 'tky' / 'truth.parquet'}', "
        f"'{SAMPLES / 'tky' / 'markov.parquet'}', k=[1, 5, 10], chunk_rows=5000); "
        "r.summary.write_parquet(sys.argv[1]); r.per_unit.write_parquet(sys.argv[2])"
    )
    paths = {}
    for threads in ("1", "2"):
        environment = {**os.environ, "NUMBA_NUM_THREADS": threads}
        paths[threads] = (tmp_path / f"s{threads}.parquet", tmp_path / f"u{threads}.parquet")
        subprocess.run(
            [sys.executable, "-c", script, *map(str, paths[threads])],
            check=True,
            env=environment,
            cwd=REPO_ROOT,
        )
    for one, two in zip(paths["1"], paths["2"], strict=True):
        assert pl.read_parquet(one).equals(pl.read_parquet(two))


def test_csv_directory_and_glob_inputs_agree(tmp_path):
    truth = SAMPLES / "tky" / "truth.parquet"
    predictions = pl.read_parquet(SAMPLES / "tky" / "markov.parquet")
    reference = evaluate_nextloc(truth, predictions).summary
    predictions.write_csv(tmp_path / "markov.csv")
    parts = tmp_path / "parts"
    parts.mkdir()
    for index, part in enumerate(predictions.partition_by("sample_id", maintain_order=True)[:50]):
        part.write_parquet(parts / f"p{index:03d}.parquet")
    rest = predictions.filter(pl.col("sample_id") >= 50)
    rest.write_parquet(parts / "z_rest.parquet")
    assert evaluate_nextloc(truth, tmp_path / "markov.csv").summary.equals(reference)
    assert evaluate_nextloc(truth, parts).summary.equals(reference)
    assert evaluate_nextloc(truth, str(parts / "*.parquet")).summary.equals(reference)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('out = "o"\n', r"no \[\[tasks\]\]"),
        ('out = "o"\n[[tasks]]\ntype = "bleu"\n', "type 'bleu'"),
        (
            'out = "o"\n[[tasks]]\ntype = "nextloc"\ntruth = "t"\nmodels = {a = "p"}\nkk = 1\n',
            "unknown key 'kk'",
        ),
        ("out = [\n", "not valid TOML"),
        ('[[tasks]]\ntype = "nextloc"\ntruth = "t"\nmodels = {a = "p"}\n', "no 'out'"),
    ],
)
def test_bad_job_files(tmp_path, text, message):
    path = tmp_path / "job.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_job(path)


@pytest.mark.parametrize("option", ["catalogue", "train", "original_ratings"])
def test_a_file_option_is_relative_to_the_job_file(tmp_path, monkeypatch, option):
    """A recs task's catalogue / train / original_ratings is a path like its truth: relative
    to the job file's folder, whatever the folder the job is run from."""
    data = tmp_path / "data"
    shutil.copytree(REPO_ROOT / "data_samples" / "recs", data)
    (tmp_path / "jobs").mkdir()
    job = tmp_path / "jobs" / "job.toml"
    job.write_text(
        "\n".join(
            [
                'out = "../out"',
                "[[tasks]]",
                'type = "recs"',
                'truth = "../data/ratings.parquet"',
                f'{option} = "../data/train.parquet"',
                "[tasks.models]",
                'mf = "../data/mf.parquet"',
            ]
        )
        + "\n"
    )
    elsewhere = tmp_path / "elsewhere" / "deeper"  # where ../data is no folder
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    (task,) = load_job(job).tasks
    assert Path(task.options[option]).resolve() == (data / "train.parquet").resolve()


def test_resume_redoes_a_result_whose_file_option_changed(tmp_path):
    """A recs task's catalogue is an input of its results: changed, --resume scores them again
    (the manifest records its fingerprint beside the truth's and the predictions')."""
    data = tmp_path / "data"
    shutil.copytree(REPO_ROOT / "data_samples" / "recs", data)
    job = tmp_path / "job.toml"
    job.write_text(
        "\n".join(
            [
                'out = "out"',
                "[[tasks]]",
                'type = "recs"',
                'truth = "data/ratings.parquet"',
                'metrics = ["coverage@10"]',
                'catalogue = "data/catalogue.parquet"',
                "[tasks.models]",
                'mf = "data/mf.parquet"',
            ]
        )
        + "\n"
    )
    run_job(load_job(job), log=lambda _: None)
    log = []
    run_job(load_job(job), resume=True, log=log.append)
    assert any("resumed" in line for line in log)  # nothing changed: resumed
    catalogue = data / "catalogue.parquet"
    pl.concat([pl.read_parquet(catalogue)] * 2).unique().head(5).write_parquet(catalogue)
    log = []
    run_job(load_job(job), resume=True, log=log.append)
    assert not any("resumed" in line for line in log)
