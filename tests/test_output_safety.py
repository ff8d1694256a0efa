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
import threading
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from mobeval.api import Evaluation, Manifest, default_model_name, evaluate_nextloc
from mobeval.cli import main
from mobeval.errors import ConfigError, MobevalError, OutputInUse
from mobeval.io.writers import (
    PLAIN_NAME,
    STAGING,
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
    assert (tmp_path / "out" / "summary" / "city=default" / "model=my_model__v2_").is_dir()


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
    assert "tky/popularity: complete, skipped (--resume)" in resumed.stderr
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
    assert sorted(line.split(":")[0] for line in log if "skipped" in line) == [
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
    assert sum("skipped" in line for line in log) == 3
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
    assert sum("skipped" in line for line in log) == 3
    assert any(line.startswith("tky/markov: done") for line in log)
    assert_same_outputs(out, nextloc_sample_out)


def test_manifest_has_the_mode_of_the_data_files(tmp_path):
    out = tmp_path / "out"
    assert main(nextloc_args(out)) == 0
    part = out / "summary" / "city=default" / "model=markov" / "part-00000.parquet"
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
        if Path(path).name.startswith("replaced-"):
            section = Path(path).name.removeprefix("replaced-")
            final = out / section / "city=default" / "model=markov"
            seen.append((section, Path(path).is_dir(), final.is_dir()))
        remove(path, root)

    monkeypatch.setattr(writers, "remove_staged", watching)
    assert main([*nextloc_args(out), "--k", "1,5"]) == 0
    assert sorted(seen) == [("per_unit", True, True), ("summary", True, True)]
    summary = pl.read_parquet(out / "summary" / "city=default" / "model=markov")
    assert "acc@5" in summary["metric"].to_list()
    assert_no_leftovers(out)


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
