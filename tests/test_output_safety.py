"""The output folder: names that cannot escape it, one run at a time, kills, moves and the manifest.

Concurrency and kill tests are deterministic: the lock is held by this process, or a run in a
subprocess stops (or SIGKILLs itself) inside ``StagedResult.add_part`` through a patch made by a
small driver script, and tells this process through a pipe.
"""

import fcntl
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from mobeval.api import (
    Evaluation,
    Manifest,
    default_model_name,
    evaluate_nextloc,
    evaluate_recs,
)
from mobeval.cli import main
from mobeval.errors import ConfigError, MobevalError, OutputInUse
from mobeval.families import FAMILIES
from mobeval.io import leftovers
from mobeval.io.objects import object_source
from mobeval.io.scratch import ScratchFolder
from mobeval.io.writers import (
    PLAIN_NAME,
    STAGING,
    check_inputs_apart,
    check_name,
    output_lock,
    plain_name,
    remove_staged,
)
from mobeval.jobs import load_job, run_job
from tests.conftest import REPO_ROOT

SAMPLES = REPO_ROOT / "data_samples"
TKY = SAMPLES / "nextloc" / "tky"
SAMPLE_JOB = REPO_ROOT / "jobs" / "nextloc_sample.toml"
SAMPLE_RESULTS = {
    ("tky", "markov"),
    ("tky", "popularity"),
    ("nyc", "markov"),
    ("nyc", "popularity"),
}

#: A run of the CLI in a subprocess whose ``StagedResult.add_part``, after writing the first part of
#: model argv[2], either SIGKILLs the process (argv[1] == "kill") or prints "staged" and waits for a
#: line on stdin (argv[1] == "pause"); the CLI's arguments follow.
DRIVER = """
import os, signal, sys
from mobeval import cli
from mobeval.io import writers

mode, model = sys.argv[1], sys.argv[2]
add_part = writers.StagedResult.add_part
stopped = []

def hooked(self, section, frame):
    add_part(self, section, frame)
    self._wait()  # the part is written by a thread: on disk once _wait returns
    if self.model == model and not stopped:
        stopped.append(True)
        if mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        print("staged", flush=True)
        sys.stdin.readline()

writers.StagedResult.add_part = hooked
sys.exit(cli.main(sys.argv[3:]))
"""


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` (relative) with its bytes (None for a folder)."""
    if not root.exists():
        return {}
    return {
        str(path.relative_to(root)): None if path.is_dir() else path.read_bytes()
        for path in sorted(root.rglob("*"))
    }


def outputs(out: Path) -> dict[str, pl.DataFrame]:
    """Every result table under ``out`` by its section/city/model folder."""
    tables = {}
    for section in ("summary", "per_unit", "per_day"):
        for folder in sorted(out.glob(f"{section}/city=*/model=*")):
            tables[str(folder.relative_to(out))] = pl.read_parquet(folder)
    return tables


def assert_same_outputs(a: Path, b: Path) -> None:
    left, right = outputs(a), outputs(b)
    assert left and left.keys() == right.keys()
    for name in left:
        assert left[name].equals(right[name]), name


def assert_no_leftovers(out: Path) -> None:
    """No staging area, no lock file, no bucket folder left in ``out``."""
    assert not (out / STAGING).exists()
    assert not (out / ".lock").exists()
    assert not list(out.rglob("mobeval-buckets-*"))


def nextloc_args(out: Path, *extra: str) -> list[str]:
    truth, pred = TKY / "truth.parquet", TKY / "markov.parquet"
    return [
        "nextloc",
        "--truth",
        str(truth),
        "--pred",
        str(pred),
        "--out",
        str(out),
        "--quiet",
        *extra,
    ]


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "mobeval.cli", *args]


# ---------------------------------------------------------------------------------------------
# Names


@pytest.mark.parametrize(
    "name",
    ["x/../../../../victim", "a/b", "..", ".", "", ".hidden", "a\\b", "a\x00b", "tab\there", "é"],
)
def test_check_name_refuses_what_is_not_a_plain_name(name):
    with pytest.raises(ConfigError, match="--model: .* is not a plain name"):
        check_name(name, "--model")


@pytest.mark.parametrize("name", ["tky", "deep-move_v2.1", "a=b", "c++", "-x", "a..b", "x" * 200])
def test_check_name_accepts_plain_names(name):
    assert check_name(name, "model") == name


@pytest.mark.parametrize(
    ("text", "expected"),
    [("my model (v2)", "my_model__v2_"), ("..", "model"), ("a/../b", "a_.._b"), (".x.y", "x.y")],
)
def test_plain_name_is_predictable_and_plain(text, expected):
    assert plain_name(text) == expected
    assert PLAIN_NAME.fullmatch(plain_name(text))


def test_a_model_named_after_an_odd_file_name_gets_a_plain_name(tmp_path):
    odd = tmp_path / ".my model (v2).parquet"
    shutil.copy(TKY / "markov.parquet", odd)
    assert default_model_name(str(odd)) == "my_model__v2_"
    evaluate_nextloc(TKY / "truth.parquet", odd, out=tmp_path / "out", progress=False)
    assert (tmp_path / "out" / "summary" / "city=tky" / "model=my_model__v2_").is_dir()


@pytest.fixture
def victim(tmp_path) -> Path:
    """A folder beside OUT that no run may touch."""
    folder = tmp_path / "victim"
    folder.mkdir()
    (folder / "precious.txt").write_text("keep me")
    return folder


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--model", "x/../../../../victim"),
        ("--model", "../victim"),
        ("--model", ".."),
        ("--city", "a/b"),
        ("--city", "../../escaped"),
        ("--city", "a\\b"),
    ],
)
def test_cli_refuses_names_that_escape(tmp_path, capsys, victim, option, value):
    out = tmp_path / "out"
    before = snapshot(tmp_path)
    code = main([*nextloc_args(out), option, value])
    error = capsys.readouterr().err
    assert code == 2
    assert error.count("\n") == 1 and f"{option}: {value!r} is not a plain name" in error
    assert snapshot(tmp_path) == before  # the victim survives, OUT is not even created


def test_cli_names_are_checked_before_an_existing_out_is_touched(
    tmp_path, nextloc_sample_out, victim
):
    out = tmp_path / "out"
    shutil.copytree(nextloc_sample_out, out)
    before = snapshot(tmp_path)
    assert main([*nextloc_args(out), "--model", "x/../../../../victim"]) == 2
    assert snapshot(tmp_path) == before


def test_an_input_inside_what_out_owns_is_refused_before_anything_moves(
    tmp_path, capsys, nextloc_sample_out
):
    """An input under OUT's result folders would be deleted when its result is replaced: the
    CLI, the Python API and a job file (before any of its models runs) refuse it in one line,
    OUT and the input left as they were. A folder input holding OUT (its results read as input)
    is refused too."""
    out = tmp_path / "out"
    shutil.copytree(nextloc_sample_out, out)
    inside = out / "per_unit" / "city=tky" / "model=markov" / "pred.parquet"
    shutil.copy(TKY / "markov.parquet", inside)
    before = snapshot(tmp_path)
    argv = ["nextloc", "--truth", str(TKY / "truth.parquet"), "--pred", str(inside)]
    assert main([*argv, "--city", "tky", "--model", "markov", "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert error == (
        f"mobeval: error: {inside}: an input inside {out / 'per_unit'}, which mobeval replaces "
        f"whole (the input would be deleted): move it out of the output folder {out}\n"
    )
    with pytest.raises(ConfigError, match="an input inside"):
        evaluate_nextloc(TKY / "truth.parquet", inside, out=out, city="tky", model="markov")
    assert snapshot(tmp_path) == before
    job = job_file(tmp_path, "tky", "first")
    job.write_text(job.read_text() + f'second = "{inside}"\n')
    before = snapshot(tmp_path)
    assert main(["run", str(job), "--quiet"]) == 2
    assert "tasks[0].models.second: " in capsys.readouterr().err
    assert snapshot(tmp_path) == before
    folder = tmp_path / "inputs"
    folder.mkdir()
    shutil.copy(TKY / "markov.parquet", folder)
    with pytest.raises(ConfigError, match="an input folder holding the output folder"):
        evaluate_nextloc(TKY / "truth.parquet", folder, out=folder / "out")
    assert not (folder / "out").exists()
    check_inputs_apart("s3://bucket/out", [folder, Path("."), "s3://bucket/out/per_unit"])


@pytest.mark.parametrize("option", FAMILIES["recs"].file_options)
def test_a_file_option_inside_what_out_owns_is_refused_before_the_first_model_runs(
    tmp_path, capsys, nextloc_sample_out, option
):
    """A recs task's file options (catalogue, train, original_ratings) are inputs of the job
    like its truth and models: one lying inside OUT's results is refused when the job is
    loaded, naming the job field, before an earlier task's model replaces anything in OUT."""
    out = tmp_path / "out"
    shutil.copytree(nextloc_sample_out, out)
    inside = out / "per_unit" / "city=tky" / "model=markov" / "items.parquet"
    shutil.copy(SAMPLES / "recs" / "train.parquet", inside)
    job = job_file(tmp_path, "tky", "markov")  # its model would replace city=tky/model=markov
    recs = SAMPLES / "recs"
    job.write_text(
        job.read_text()
        + "\n".join(
            [
                "[[tasks]]",
                'type = "recs"',
                'city = "ml"',
                f'truth = "{recs / "ratings.parquet"}"',
                'metrics = ["ndcg@10"]',
                f'{option} = "{inside}"',
                "[tasks.models]",
                f'mf = "{recs / "mf.parquet"}"',
            ]
        )
        + "\n"
    )
    before = snapshot(tmp_path)
    assert main(["run", str(job), "--quiet"]) == 2
    error = capsys.readouterr().err
    assert f"tasks[1].{option}: {inside}: an input inside {out / 'per_unit'}" in error
    assert snapshot(tmp_path) == before
    with pytest.raises(ConfigError, match=rf"tasks\[1\]\.{option}: .*an input inside"):
        load_job(job)


def job_file(tmp_path: Path, city: str, model: str) -> Path:
    path = tmp_path / "job.toml"
    path.write_text(
        "\n".join(
            [
                'out = "out"',
                "[[tasks]]",
                'type = "nextloc"',
                f"city = {json.dumps(city)}",
                f'truth = "{TKY / "truth.parquet"}"',
                "[tasks.models]",
                f'{json.dumps(model)} = "{TKY / "markov.parquet"}"',
            ]
        )
        + "\n"
    )
    return path


@pytest.mark.parametrize(
    ("city", "model", "where"),
    [
        ("../../escaped", "markov", "tasks[0].city: '../../escaped'"),
        ("tky/sub", "markov", "tasks[0].city: 'tky/sub'"),
        ("tky", "x/../../../../victim", "tasks[0].models: 'x/../../../../victim'"),
        ("tky", ".", "tasks[0].models: '.'"),
    ],
)
def test_job_files_refuse_names_that_escape(tmp_path, capsys, victim, city, model, where):
    path = job_file(tmp_path, city, model)
    before = snapshot(tmp_path)
    assert main(["run", str(path), "--quiet"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and where in error and "not a plain name" in error
    assert snapshot(tmp_path) == before
    assert not list(tmp_path.parent.rglob("escaped"))


@pytest.mark.parametrize(
    ("city", "model"), [("a/b", None), (None, "../victim"), (None, "x/../../../../victim")]
)
def test_the_api_refuses_names_that_escape(tmp_path, victim, city, model):
    out = tmp_path / "out"
    before = snapshot(tmp_path)
    with pytest.raises(ConfigError, match="is not a plain name"):
        evaluate_nextloc(
            TKY / "truth.parquet", TKY / "markov.parquet", out=out, city=city, model=model
        )
    with pytest.raises(ConfigError, match="is not a plain name"):  # in memory too: one rule
        evaluate_nextloc(TKY / "truth.parquet", TKY / "markov.parquet", city=city, model=model)
    assert snapshot(tmp_path) == before


def test_nothing_outside_the_staging_area_is_ever_deleted(tmp_path, victim):
    out = tmp_path / "out"
    (out / STAGING / "inside").mkdir(parents=True)
    (out / "summary").mkdir()
    (out / STAGING / "link").symlink_to(victim)
    for path in [
        victim,
        out,
        out / "summary",
        out / STAGING,
        out / STAGING / ".." / "summary",
        out / STAGING / "link" / "precious.txt",
        out / STAGING / "link" / ".." / ".." / "victim",
    ]:
        with pytest.raises(RuntimeError, match="refusing to delete"):
            remove_staged(path, out)
    remove_staged(out / STAGING / "link", out)  # the link goes, not what it points to
    remove_staged(out / STAGING / "inside", out)
    assert (victim / "precious.txt").read_text() == "keep me"
    assert (out / "summary").is_dir()
    assert sorted((out / STAGING).iterdir()) == []


# ---------------------------------------------------------------------------------------------
# One run at a time


def hold_lock(out: Path):
    """Take OUT's lock as another process would (its own open file, this pid written in it)."""
    out.mkdir(parents=True, exist_ok=True)
    handle = os.open(out / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.write(handle, f"{os.getpid()}\n".encode())
    return handle


WRITING_COMMANDS = {
    "nextloc": ["--truth", str(TKY / "truth.parquet"), "--pred", str(TKY / "markov.parquet")],
    "trajectory": [
        "--reference",
        str(SAMPLES / "humob" / "reference_test.csv.gz"),
        "--generated",
        str(SAMPLES / "humob" / "weekly_repeat.csv.gz"),
    ],
    "recs": [
        "--ratings",
        str(SAMPLES / "recs" / "ratings.parquet"),
        "--recs",
        str(SAMPLES / "recs" / "mf.parquet"),
    ],
    "logits": [
        "--logits",
        str(SAMPLES / "logits" / "gru.npy"),
        "--targets",
        str(SAMPLES / "logits" / "targets.npy"),
    ],
    "run": [str(SAMPLE_JOB)],
    "run --resume": [str(SAMPLE_JOB), "--resume"],
}


@pytest.mark.parametrize("command", sorted(WRITING_COMMANDS))
def test_every_writing_command_refuses_an_out_in_use(tmp_path, capsys, nextloc_sample_out, command):
    out = tmp_path / "out"
    shutil.copytree(nextloc_sample_out, out)
    handle = hold_lock(out)
    try:
        before = snapshot(tmp_path)
        args = [command.split()[0], *WRITING_COMMANDS[command], "--out", str(out), "--quiet"]
        assert main(args) == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1
        assert f"in use by another mobeval run (pid {os.getpid()})" in error
        assert "wait for it or choose another --out" in error
        assert snapshot(tmp_path) == before
    finally:
        os.close(handle)


def test_the_lock_is_reentrant_in_one_thread_and_exclusive_across_threads(tmp_path):
    refused = []

    def other_thread():
        try:
            with output_lock(tmp_path / "out"):
                refused.append(False)
        except OutputInUse:
            refused.append(True)

    with output_lock(tmp_path / "out"), output_lock(tmp_path / "out"):
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
        assert (tmp_path / "out" / ".lock").read_text() == f"{os.getpid()}\n"
    assert refused == [True]
    assert not (tmp_path / "out").exists()  # created by the lock, left empty: gone again
    with output_lock(tmp_path / "out"):  # released: free again
        pass


def test_a_second_process_is_refused_while_the_first_completes_whole(tmp_path):
    out = tmp_path / "out"
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    first = subprocess.Popen(
        [sys.executable, str(driver), "pause", "markov", "run", str(SAMPLE_JOB), "--out", str(out)]
        + ["--quiet"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
    )
    try:
        assert first.stdout.readline() == "staged\n", first.stderr.read()
        held = snapshot(out)
        assert any(".staging" in name and name.endswith(".parquet") for name in held)
        for extra in ([], ["--resume"]):
            second = subprocess.run(
                cli("run", str(SAMPLE_JOB), "--out", str(out), "--quiet", *extra),
                capture_output=True,
                text=True,
                cwd=REPO_ROOT,
            )
            assert second.returncode == 2, second.stderr
            assert f"in use by another mobeval run (pid {first.pid})" in second.stderr
            assert "Traceback" not in second.stderr
            assert snapshot(out) == held
    finally:
        stdout, stderr = first.communicate("go\n")
    assert first.returncode == 0, stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert {tuple(k.replace("city=", "").split("/model=")) for k in manifest["results"]} == (
        SAMPLE_RESULTS
    )
    clean = tmp_path / "clean"
    run_job(load_job(SAMPLE_JOB, out=clean), log=lambda _: None)
    assert_same_outputs(out, clean)
    assert_no_leftovers(out)


# ---------------------------------------------------------------------------------------------
# Kills, moves, the manifest


def shuffled_job(tmp_path: Path) -> Path:
    """A job whose predictions are not sorted: popularity's 3,000 rows fit in one chunk (sorted in
    memory), markov's 60,000 scattered rows do not (the local engine spills hash buckets)."""
    models = {}
    for name in ("popularity", "markov"):
        models[name] = tmp_path / f"{name}.parquet"
        frame = pl.read_parquet(TKY / f"{name}.parquet")
        frame.sample(fraction=1.0, shuffle=True, seed=1).write_parquet(models[name])
    path = tmp_path / "job.toml"
    lines = ['out = "out"', "chunk_rows = 5000", "[[tasks]]", 'type = "nextloc"', 'city = "tky"']
    lines += [f'truth = "{TKY / "truth.parquet"}"', "[tasks.models]"]
    lines += [f'{name} = "{file}"' for name, file in models.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_killed_run_resumes_to_a_clean_runs_outputs_and_leaves_nothing(tmp_path):
    job = shuffled_job(tmp_path)
    out, temp = tmp_path / "out", tmp_path / "tmp"
    temp.mkdir()
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    environment = {**os.environ, "TMPDIR": str(temp)}
    killed = subprocess.run(
        [sys.executable, str(driver), "kill", "markov", "run", str(job), "--quiet"],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=environment,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert (out / "summary" / "city=tky" / "model=popularity").is_dir()
    assert not (out / "summary" / "city=tky" / "model=markov").exists()
    assert list((out / STAGING).glob("mobeval-buckets-*"))  # what the kill left, in OUT
    assert list((out / STAGING).rglob("part-*.parquet"))
    resumed = subprocess.run(
        cli("run", str(job), "--resume", "--quiet"),
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=environment,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "tky/popularity: complete, resumed from OUT (--resume)" in resumed.stderr
    assert "tky/markov: done" in resumed.stderr
    clean = tmp_path / "clean"
    run_job(load_job(job, out=clean), log=lambda _: None)
    assert_same_outputs(out, clean)
    assert_no_leftovers(out)
    assert list(temp.iterdir()) == []


def test_resume_on_a_copy_skips_what_is_there_and_redoes_what_is_missing(
    tmp_path, nextloc_sample_out
):
    out = tmp_path / "moved"
    shutil.copytree(nextloc_sample_out, out)
    shutil.rmtree(out / "per_unit" / "city=nyc" / "model=markov")
    kept = out / "summary" / "city=tky" / "model=popularity" / "part-00000.parquet"
    stamp = kept.stat().st_mtime_ns
    log = []
    run_job(load_job(SAMPLE_JOB, out=out), resume=True, log=log.append)
    assert sorted(line.split(":")[0] for line in log if "resumed" in line) == [
        "nyc/popularity",
        "tky/markov",
        "tky/popularity",
    ]
    assert any(line.startswith("nyc/markov: done") for line in log)
    assert kept.stat().st_mtime_ns == stamp
    assert_same_outputs(out, nextloc_sample_out)
    manifest = json.loads((out / "manifest.json").read_text())
    recorded = manifest["results"]["city=nyc/model=markov"]["outputs"]
    assert recorded == {
        "per_unit": "per_unit/city=nyc/model=markov",
        "summary": "summary/city=nyc/model=markov",
    }


@pytest.mark.parametrize("damage", ["truncated", "deleted", "added"])
def test_resume_redoes_a_result_whose_files_changed(tmp_path, nextloc_sample_out, damage):
    """A part file truncated, deleted (its folder kept) or a file added since the result was
    committed: the manifest's file sizes no longer match, so --resume scores it again."""
    out = tmp_path / "moved"
    shutil.copytree(nextloc_sample_out, out)
    folder = out / "per_unit" / "city=tky" / "model=popularity"
    part = folder / "part-00000.parquet"
    if damage == "truncated":
        part.write_bytes(part.read_bytes()[:500])
    elif damage == "deleted":
        part.unlink()
    else:
        shutil.copy(part, folder / "part-00001.parquet")
    log = []
    run_job(load_job(SAMPLE_JOB, out=out), resume=True, log=log.append)
    assert sum("resumed" in line for line in log) == 3
    assert any(line.startswith("tky/popularity: done") for line in log)
    assert_same_outputs(out, nextloc_sample_out)


def test_resume_reads_a_manifest_of_absolute_paths_against_the_current_out(
    tmp_path, nextloc_sample_out
):
    """Manifests written before paths were relative name the old OUT; only the sections count."""
    out = tmp_path / "moved"
    shutil.copytree(nextloc_sample_out, out)
    manifest = json.loads((out / "manifest.json").read_text())
    for entry in manifest["results"].values():
        entry["outputs"] = {s: str(nextloc_sample_out / p) for s, p in entry["outputs"].items()}
    (out / "manifest.json").write_text(json.dumps(manifest))
    shutil.rmtree(out / "summary" / "city=tky" / "model=markov")
    log = []
    run_job(load_job(SAMPLE_JOB, out=out), resume=True, log=log.append)
    assert sum("resumed" in line for line in log) == 3
    assert any(line.startswith("tky/markov: done") for line in log)
    assert_same_outputs(out, nextloc_sample_out)


def test_manifest_has_the_mode_of_the_data_files(tmp_path):
    out = tmp_path / "out"
    assert main(nextloc_args(out)) == 0
    part = out / "summary" / "city=tky" / "model=markov" / "part-00000.parquet"
    assert stat.S_IMODE((out / "manifest.json").stat().st_mode) == stat.S_IMODE(part.stat().st_mode)
    assert_no_leftovers(out)


@pytest.mark.parametrize("content", [b"{", b"[]", b'{"results": 3}', b"\xff"])
@pytest.mark.parametrize("command", ["nextloc", "run"])
def test_a_corrupt_manifest_stops_the_run_before_any_work(
    tmp_path, capsys, nextloc_sample_out, content, command
):
    out = tmp_path / "out"
    shutil.copytree(nextloc_sample_out, out)
    (out / "manifest.json").write_bytes(content)
    before = snapshot(out)
    if command == "nextloc":
        args = nextloc_args(out, "--model", "other")
    else:
        args = ["run", str(SAMPLE_JOB), "--resume", "--out", str(out), "--quiet"]
    assert main(args) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "manifest.json: not a readable mobeval manifest" in error
    assert "move it aside or delete it" in error
    assert snapshot(out) == before


def test_a_result_is_not_marked_complete_without_its_files(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    manifest = Manifest(out, {})
    evaluation = Evaluation(
        city="c", model="m", summary=pl.DataFrame(), outputs={"summary": str(out / "x")}
    )
    with pytest.raises(MobevalError, match="summary/city=c/model=m: missing after the commit"):
        manifest.record(evaluation, {}, "nextloc")
    assert not (out / "manifest.json").exists()


def test_a_replaced_result_is_moved_aside_before_it_is_deleted(tmp_path, monkeypatch):
    """Re-running into the same OUT: the old section leaves only once the new one is in place."""
    from mobeval.io import writers

    out = tmp_path / "out"
    assert main([*nextloc_args(out), "--k", "1"]) == 0
    seen = []
    remove = writers.remove_staged

    def watching(path, root):
        if Path(path).name.startswith("replaced-") and Path(path).exists():
            section = Path(path).name.removeprefix("replaced-")
            final = out / section / "city=tky" / "model=markov"
            seen.append((section, Path(path).is_dir(), final.is_dir()))
        remove(path, root)

    monkeypatch.setattr(writers, "remove_staged", watching)
    assert main([*nextloc_args(out), "--k", "1,5"]) == 0
    assert sorted(seen) == [("per_unit", True, True), ("summary", True, True)]
    summary = pl.read_parquet(out / "summary" / "city=tky" / "model=markov")
    assert "acc@5" in summary["metric"].to_list()
    assert_no_leftovers(out)


#: A run of the CLI (argv[2:]) whose commit SIGKILLs the process right after its rename number
#: argv[1] (``LocalMoves.rename``: a section moved aside or into place).
COMMIT_DRIVER = """
import os, signal, sys
from mobeval import cli
from mobeval.io import writers

renames = []

def rename(source, target):
    os.replace(source, target)
    renames.append(target)
    if len(renames) == int(sys.argv[1]):
        os.kill(os.getpid(), signal.SIGKILL)

writers.LocalMoves.rename = staticmethod(rename)
sys.exit(cli.main(sys.argv[2:]))
"""


@pytest.mark.parametrize("renames", [1, 2, 4])
def test_a_kill_mid_commit_leaves_the_old_result_once_out_is_next_used(tmp_path, renames):
    """Killed after the old per-unit section went aside (1), after the new one took its place
    (2), after the new summary too (4: the journal not yet removed): OUT shows a mixture until
    the next run takes its lock, which puts the old result back byte for byte and removes the
    rest."""
    out = tmp_path / "out"
    assert main([*nextloc_args(out), "--k", "1"]) == 0
    before = snapshot(out)
    driver = tmp_path / "driver.py"
    driver.write_text(COMMIT_DRIVER)
    killed = subprocess.run(
        [sys.executable, str(driver), str(renames), *nextloc_args(out, "--k", "1,5")],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert list((out / STAGING).glob("commit-*.json"))
    with output_lock(out):
        pass
    assert snapshot(out) == before
    assert_no_leftovers(out)


def test_a_failed_commit_puts_the_old_result_back(tmp_path, monkeypatch, capsys):
    """The third move of a commit (the old summary going aside) fails: the new per-unit section
    goes back to the staging area, the old one returns; OUT is as it was, exit 1 naming the file."""
    from mobeval.io import writers

    out = tmp_path / "out"
    assert main([*nextloc_args(out), "--k", "1"]) == 0
    before = snapshot(out)
    calls = []

    def failing(source, target):
        calls.append(target)
        if len(calls) == 3:
            raise OSError(5, "Input/output error", source)
        os.replace(source, target)

    monkeypatch.setattr(writers.LocalMoves, "rename", staticmethod(failing))
    assert main([*nextloc_args(out), "--k", "1,5"]) != 0
    assert "Input/output error" in capsys.readouterr().err
    assert snapshot(out) == before
    assert_no_leftovers(out)


def test_a_journal_mobeval_did_not_write_is_refused_and_nothing_moves(tmp_path):
    """A journal naming a path outside the result sections: refused, naming it; the results
    stay as they were, and so does the staging area, the journal with it."""
    out = tmp_path / "out"
    assert main(nextloc_args(out)) == 0
    before = snapshot(out)
    (out / STAGING).mkdir()
    plan = [{"final": "../elsewhere", "aside": f"{STAGING}/x", "staged": None}]
    (out / STAGING / "commit-0.json").write_text(json.dumps(plan))
    refused = r"commit-0.json: not a commit journal.*\.\./elsewhere"
    with pytest.raises(ConfigError, match=refused), output_lock(out):
        pass
    journal = {STAGING: None, f"{STAGING}/commit-0.json": json.dumps(plan).encode()}
    assert snapshot(out) == before | journal


# ---------------------------------------------------------------------------------------------
# chunk_rows: one check everywhere


@pytest.mark.parametrize("value", ["0", "-5"])
def test_cli_refuses_a_chunk_rows_that_is_not_positive(tmp_path, capsys, value):
    out = tmp_path / "out"
    assert main([*nextloc_args(out), "--chunk-rows", value]) == 2
    error = capsys.readouterr().err
    assert f"--chunk-rows must be a positive integer, got {value}" in error
    assert not out.exists()


def test_api_takes_a_numpy_integer_chunk_rows():
    truth, pred = TKY / "truth.parquet", TKY / "markov.parquet"
    expected = evaluate_nextloc(truth, pred, chunk_rows=5000)
    assert evaluate_nextloc(truth, pred, chunk_rows=np.int64(5000)).summary.equals(expected.summary)
    for value in (np.int64(0), np.bool_(True), np.float64(5000)):
        with pytest.raises(ConfigError, match="chunk_rows must be a positive integer"):
            evaluate_nextloc(truth, pred, chunk_rows=value)


@pytest.mark.parametrize("value", [0, -5, 2.5, True])
def test_api_and_job_refuse_a_chunk_rows_that_is_not_positive(tmp_path, value):
    with pytest.raises(ConfigError, match="chunk_rows must be a positive integer"):
        evaluate_nextloc(TKY / "truth.parquet", TKY / "markov.parquet", chunk_rows=value)
    path = job_file(tmp_path, "tky", "markov")
    path.write_text(f"chunk_rows = {json.dumps(value)}\n" + path.read_text())
    with pytest.raises(ConfigError, match="chunk_rows must be a positive integer"):
        load_job(path)


def test_a_section_path_that_cannot_be_made_moves_nothing(tmp_path, capsys):
    """``OUT/summary`` is a file: the run stops with one message, and no other section of the
    result has been moved into place."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary").write_text("not a folder")
    assert main(nextloc_args(out)) == 2
    assert capsys.readouterr().err.startswith("mobeval: error:")
    assert not (out / "per_unit").exists()
    assert (out / "summary").read_text() == "not a folder"


# ---------------------------------------------------------------------------------------------
# What a command may write and remove: inside OUT, never over OUT's own files, never through a
# link that leaves OUT (mobeval.io.writers: checked_destination, report_destination)


def one_error_line(capsys) -> str:
    error = capsys.readouterr().err
    assert error.startswith("mobeval: error:") and error.count("\n") == 1, error
    return error


@pytest.fixture
def scored_out(tmp_path, nextloc_sample_out) -> Path:
    """A copy of the next-location sample job's OUT, in ``tmp_path/out``."""
    out = tmp_path / "out"
    shutil.copytree(nextloc_sample_out, out)
    return out


REPORT = ["--format", "markdown", "--no-plots", "--no-compare"]
OWNED_TARGETS = [
    "manifest.json",
    ".lock",
    ".staging/r.md",
    "summary/r.md",
    "summary/city=tky/model=markov/part-00000.parquet",
    "per_unit/city=tky/model=markov/r.md",
    "compare/r.md",
]


@pytest.mark.parametrize("target", OWNED_TARGETS)
@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_a_report_is_never_written_over_or_under_outs_own_files(scored_out, capsys, target, fmt):
    before = snapshot(scored_out.parent)
    output = scored_out / target
    assert main(["report", str(scored_out), "--format", fmt, "--output", str(output)]) == 2
    assert str(output) in one_error_line(capsys)
    assert snapshot(scored_out.parent) == before


def test_a_report_through_a_link_into_out_is_refused_too(scored_out, capsys):
    link = scored_out.parent / "results"
    link.symlink_to(scored_out / "summary")
    before = snapshot(scored_out)
    assert main(["report", str(scored_out), *REPORT, "--output", str(link / "r.md")]) == 2
    assert "summary belongs to the output folder" in one_error_line(capsys)
    assert snapshot(scored_out) == before


@pytest.mark.parametrize(
    ("name", "fmt"),
    [("report.txt", "html"), ("report.md", "html"), ("report.html", "latex"), ("r", "markdown")],
)
def test_a_report_suffix_must_match_its_format(scored_out, capsys, name, fmt):
    before = snapshot(scored_out.parent)
    output = scored_out.parent / name
    assert main(["report", str(scored_out), "--format", fmt, "--output", str(output)]) == 2
    assert str(output) in one_error_line(capsys)
    assert snapshot(scored_out.parent) == before


@pytest.mark.parametrize("target", ["notes/r.md", "r.md", "report/r.md"])
def test_a_report_may_go_anywhere_else_in_out(scored_out, capsys, target):
    assert main(["report", str(scored_out), *REPORT, "--output", str(scored_out / target)]) == 0
    assert (scored_out / target).read_text().startswith("#")
    assert_no_leftovers(scored_out)


def linked_out(out: Path, name: str, victim: Path) -> None:
    """``out/name`` made a symbolic link to ``victim`` (a folder outside OUT)."""
    (out / name).parent.mkdir(parents=True, exist_ok=True)
    if (out / name).exists():
        shutil.rmtree(out / name)
    (out / name).symlink_to(victim)


LINKED = {
    "compare": ["compare", "{out}", "--resamples", "20"],
    "report": ["report", "{out}", *REPORT],
    "report --output": ["report", "{out}", *REPORT, "--output", "{out}/notes/r.md"],
    "nextloc": nextloc_args(Path("{out}"), "--city", "tky", "--model", "markov"),
    "run --resume": ["run", str(SAMPLE_JOB), "--out", "{out}", "--resume", "--quiet"],
}
#: Which folder of OUT each command goes through (linked out in the test), beside .staging.
LINKED_FOLDERS = {
    "compare": "compare",
    "report": "report",
    "report --output": "notes",
    "nextloc": "summary/city=tky",
    "run --resume": "per_unit",
}


@pytest.mark.parametrize("command", sorted(LINKED))
@pytest.mark.parametrize("linked", ["own folder", ".staging"])
def test_no_command_writes_or_removes_through_a_link_leaving_out(
    scored_out, capsys, victim, command, linked
):
    """The victim holds what the command would write there (a city folder of a comparison, a
    report, a result) and is left as it was: exit 2 naming the link."""
    name = LINKED_FOLDERS[command] if linked == "own folder" else STAGING
    for mimic in ("city=tky", "model=markov", "report.md", "r.md", "city=tky/model=markov"):
        (victim / mimic).mkdir(parents=True, exist_ok=True)
        (victim / mimic / "precious.txt").write_text("keep me")
    if command == "run --resume":  # a result to redo: its files changed
        shutil.rmtree(scored_out / "summary" / "city=tky" / "model=markov")
    linked_out(scored_out, name, victim)
    before = snapshot(victim)
    args = [arg.replace("{out}", str(scored_out)) for arg in LINKED[command]]
    assert main(args) == 2
    error = one_error_line(capsys)
    assert f"{scored_out / name}: a symbolic link" in error
    assert snapshot(victim) == before
    assert not (scored_out / ".lock").exists()


@pytest.mark.parametrize("command", ["nextloc", "compare", "report"])
def test_a_linked_lock_file_is_refused_and_its_target_untouched(
    scored_out, capsys, victim, command
):
    (scored_out / ".lock").symlink_to(victim / "precious.txt")
    args = {
        "nextloc": nextloc_args(scored_out),
        "compare": ["compare", str(scored_out), "--resamples", "20"],
        "report": ["report", str(scored_out), *REPORT],
    }[command]
    before = snapshot(scored_out)
    assert main(args) == 2
    assert f"{scored_out / '.lock'}: a symbolic link" in one_error_line(capsys)
    assert (victim / "precious.txt").read_text() == "keep me"
    assert snapshot(scored_out) == before


# ---------------------------------------------------------------------------------------------
# Every output complete or the command fails: a full disk never gives exit 0


TREC = SAMPLES / "trec"
TREC_EVAL = ["trec_eval", "-q", str(TREC / "qrels.txt"), str(TREC / "run.txt.gz")]

#: Runs argv[2:] with its standard output on file argv[1] limited to 4 KiB (RLIMIT_FSIZE: the
#: first write ends short, as on a nearly full disk, the next fails).
NEARLY_FULL = """
import resource, signal, subprocess, sys

def limited():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

with open(sys.argv[1], "wb") as stdout:
    done = subprocess.run(sys.argv[2:], stdout=stdout, preexec_fn=limited)
sys.exit(done.returncode)
"""

PRINTING = {
    "trec_eval": TREC_EVAL,
    "nextloc": nextloc_args(Path("unused"))[:5] + ["--format", "csv", "--quiet"],
    "recs": ["recs", *WRITING_COMMANDS["recs"], "--quiet", "--format", "json"],
}


@pytest.mark.parametrize("command", sorted(PRINTING))
def test_standard_output_on_a_full_disk_is_exit_2_naming_it(command):
    """``/dev/full``: every write fails with ENOSPC."""
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            cli(*PRINTING[command]), stdout=full, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT
        )
    assert done.returncode == 2, done.stderr
    assert done.stderr == "mobeval: error: <stdout>: No space left on device\n"


def test_standard_output_that_ends_short_is_exit_2_not_a_silent_truncation(tmp_path):
    whole = subprocess.run(cli(*TREC_EVAL), capture_output=True, cwd=REPO_ROOT)
    assert whole.returncode == 0 and len(whole.stdout) > 8192
    driver, output = tmp_path / "nearly_full.py", tmp_path / "stdout.txt"
    driver.write_text(NEARLY_FULL)
    done = subprocess.run(
        [sys.executable, str(driver), str(output), *cli(*TREC_EVAL)],
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr == "mobeval: error: <stdout>: File too large\n"
    assert whole.stdout.startswith(output.read_bytes())


def test_a_write_to_standard_output_that_ends_short_then_fails_is_exit_2(
    tmp_path, monkeypatch, capsys
):
    """A patched ``os.write`` takes half of the first write to standard output, then fails."""
    stdout = open(tmp_path / "stdout.txt", "w")  # noqa: SIM115
    monkeypatch.setattr(sys, "stdout", stdout)
    real_write, calls = os.write, []

    def short_then_full(fd, data):
        if fd != stdout.fileno():
            return real_write(fd, data)
        calls.append(len(data))
        if len(calls) > 1:
            raise OSError(28, os.strerror(28))
        return real_write(fd, data[: len(data) // 2])

    monkeypatch.setattr(os, "write", short_then_full)
    assert main(TREC_EVAL) == 2
    monkeypatch.undo()
    stdout.close()
    assert capsys.readouterr().err == "mobeval: error: <stdout>: No space left on device\n"
    assert len(calls) == 2


@pytest.mark.parametrize("written", ["fails", "short"])
def test_a_lock_whose_pid_cannot_be_written_is_removed(tmp_path, monkeypatch, capsys, written):
    def pwrite(handle, data, offset):
        if written == "fails":
            raise OSError(28, os.strerror(28))
        return 1

    monkeypatch.setattr(os, "pwrite", pwrite)
    out = tmp_path / "out"
    assert main(nextloc_args(out)) == 2
    assert f"{out / '.lock'}: No space left on device" in one_error_line(capsys)
    assert not out.exists()
    existing = tmp_path / "existing"
    existing.mkdir()
    with pytest.raises(OSError, match="No space left on device"), output_lock(existing):
        pass
    assert list(existing.iterdir()) == []


@pytest.mark.parametrize("inside", [True, False])
def test_a_report_that_cannot_be_written_leaves_no_folder_and_nothing_half_written(
    scored_out, monkeypatch, capsys, inside
):
    from tests.test_whole_writes import nearly_full_disk  # the report: a short write, ENOSPC

    nearly_full_disk(monkeypatch, scored_out.parent, "*.md")
    root = scored_out if inside else scored_out.parent / "elsewhere"
    before = snapshot(scored_out.parent)
    output = ["--output", str(root / "reports" / "r.md")]
    assert main(["report", str(scored_out), *REPORT, *(output if not inside else [])]) == 2
    assert "No space left on device" in one_error_line(capsys)
    assert snapshot(scored_out.parent) == before


# ---------------------------------------------------------------------------------------------
# Temporary files and folders: removed on every way out; after kill -9, by the next run

#: Runs the CLI (argv[2:]) with ``Report.to_markdown`` patched to SIGKILL the process (argv[1]
#: == "kill") or to print "rendering" and wait for SIGTERM (argv[1] == "pause").
REPORT_DRIVER = """
import os, signal, sys, time
from mobeval import cli, report

def stopped(self, *args, **kwargs):
    if sys.argv[1] == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    print("rendering", flush=True, file=sys.stderr)
    time.sleep(60)

report.Report.to_markdown = stopped
sys.exit(cli.main(sys.argv[2:]))
"""


def staged_reports(folder: Path) -> list[Path]:
    return sorted(folder.glob(".report-*"))


def test_a_killed_report_outside_out_leaves_a_folder_the_next_report_removes(scored_out):
    driver, target = scored_out.parent / "driver.py", scored_out.parent / "reports" / "r.md"
    driver.write_text(REPORT_DRIVER)
    args = ["report", str(scored_out), *REPORT, "--output", str(target)]
    killed = subprocess.run(
        [sys.executable, str(driver), "kill", *args], capture_output=True, cwd=REPO_ROOT
    )
    assert killed.returncode == -signal.SIGKILL
    assert len(staged_reports(target.parent)) == 1
    again = subprocess.run(cli(*args), capture_output=True, text=True, cwd=REPO_ROOT)
    assert again.returncode == 0, again.stderr
    assert staged_reports(target.parent) == []
    assert target.is_file()


def test_a_terminated_report_removes_its_temporary_folder(scored_out):
    driver, target = scored_out.parent / "driver.py", scored_out.parent / "reports" / "r.md"
    driver.write_text(REPORT_DRIVER)
    args = ["report", str(scored_out), *REPORT, "--output", str(target)]
    running = subprocess.Popen(
        [sys.executable, str(driver), "pause", *args],
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
    )
    assert running.stderr.readline() == "rendering\n"
    assert len(staged_reports(target.parent)) == 1
    running.send_signal(signal.SIGTERM)
    assert running.wait(timeout=60) == 130
    assert running.stderr.read() == "mobeval: interrupted\n"
    assert not target.parent.exists()  # made for the report, removed with it


def test_a_live_temporary_folder_is_never_taken_for_a_leftover(tmp_path):
    """A folder whose lock another run holds stays; one whose lock is free (its process was
    killed) goes when the next folder of its kind is made; each goes when closed."""
    live = ScratchFolder(tmp_path, "mobeval-stream-")
    (live.path / "stream.parquet").write_text("in use")
    left = tmp_path / "mobeval-stream-killed"
    left.mkdir()
    (left / "stream.parquet").write_text("left by kill -9")
    (left / leftovers.MARK).write_text("its token")
    (tmp_path / "other-killed").mkdir()
    with ScratchFolder(tmp_path, "mobeval-stream-") as path:
        assert sorted(tmp_path.iterdir()) == sorted([live.path, path, tmp_path / "other-killed"])
    live.close()
    assert list(tmp_path.iterdir()) == [tmp_path / "other-killed"]


def failing_stream(schema: pa.Schema, batch: pa.RecordBatch):
    """An Arrow stream whose producer fails after its first batch."""

    def batches():
        yield batch
        raise ValueError("the producer failed")

    return pa.RecordBatchReader.from_batches(schema, batches())


def test_an_arrow_stream_whose_producer_fails_leaves_no_spool(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    ratings = pl.read_parquet(SAMPLES / "recs" / "ratings.parquet").to_arrow()
    (batch,) = ratings.slice(0, 100).to_batches()
    for _ in range(2):
        with pytest.raises((MobevalError, ValueError), match="producer failed"):
            evaluate_recs(failing_stream(ratings.schema, batch), SAMPLES / "recs" / "mf.parquet")
        assert list(tmp_path.iterdir()) == []
    stream = object_source(pa.RecordBatchReader.from_batches(ratings.schema, [batch]))
    assert len(list(tmp_path.glob("mobeval-stream-*/stream.parquet"))) == 1
    del stream
    assert list(tmp_path.iterdir()) == []
