"""mobeval challenge: the scoring programs it writes, run as each platform runs them.

* Codabench: the program folder at ``app/program``, the reference data at ``app/input/ref``, the
  submission at ``app/input/res``, ``app/output`` empty; the command of the program's
  ``metadata`` with ``$program``, ``$input``, ``$output`` replaced as Codabench's compute worker
  replaces them (``replace_legacy_metadata_command``), run from ``app/program``; the scores read
  from ``scores.json``.
* CodaLab: ``input/ref``, ``input/res``, ``program``, ``output`` side by side, the program run
  as ``python3 program/score.py input output``; the scores read from ``scores.txt``.
* EvalAI: the evaluation script unpacked as ``challenge_data/challenge_1``, imported by that
  name and its ``evaluate(annotation, submission, phase, submission_metadata=...)`` called, as
  EvalAI's submission worker does.

Each task with a correct, a broken and an empty submission: a correct one scores mobeval's own
numbers (``evaluate_*`` in this process), a broken or empty one never a score better than the
worst (or no score and a failure), with the reason shown.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mobeval.cli import main

ROOT = Path(__file__).resolve().parents[1]
HUMOB = ROOT / "data_samples" / "humob"
RECS = ROOT / "data_samples" / "recs"
NEXTLOC = ROOT / "data_samples" / "nextloc" / "tky"
#: The largest whole number of Codabench's score column (DecimalField(20, 10)).
CODABENCH_MAX = 10**10 - 1


def _env() -> dict[str, str]:
    """The environment of a platform's image: ``python3`` is the one with mobeval installed."""
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bin_dir + os.pathsep + os.environ["PATH"]}


def _program(tmp_path: Path, *options: str) -> Path:
    bundle = tmp_path / "bundle"
    assert main(["challenge", *options, str(bundle)]) == 0
    return bundle


def _lay_out(root: Path, bundle: Path, program: str, ref: dict, res: dict) -> Path:
    """``root/input/ref``, ``root/input/res`` (``{name: source path or bytes}``), the scoring
    program at ``root/<program>``, ``root/output`` empty."""
    shutil.copytree(bundle / "scoring_program", root / program)
    for folder, files in (("ref", ref), ("res", res)):
        (root / "input" / folder).mkdir(parents=True)
        for name, source in files.items():
            target = root / "input" / folder / name
            if isinstance(source, bytes):
                target.write_bytes(source)
            else:
                shutil.copy(source, target)
    (root / "output").mkdir()
    return root


def _codabench(tmp_path: Path, bundle: Path, ref: dict, res: dict):
    app = _lay_out(tmp_path / "app", bundle, "program", ref, res)
    metadata = (app / "program" / "metadata").read_text()
    command = next(line for line in metadata.splitlines() if line.startswith("command:"))
    command = command.removeprefix("command:").strip()
    for variable, folder in (("$input", "input"), ("$output", "output"), ("$program", "program")):
        command = command.replace(variable, str(app / folder))
    run = subprocess.run(
        shlex.split(command), cwd=app / "program", capture_output=True, text=True, env=_env()
    )
    return run, app / "output"


def _codalab(tmp_path: Path, bundle: Path, ref: dict, res: dict):
    root = _lay_out(tmp_path / "submission", bundle, "program", ref, res)
    argv = ["python3", "program/score.py", "input", "output"]
    run = subprocess.run(argv, cwd=root, capture_output=True, text=True, env=_env())
    return run, root / "output"


def _evalai(tmp_path: Path, bundle: Path, annotation: Path, submission: Path):
    """EvalAI's worker: the script imported as challenge_data.challenge_1, evaluate() called."""
    shutil.copytree(bundle / "evaluation_script", tmp_path / "challenge_data" / "challenge_1")
    worker = textwrap.dedent(
        f"""
        import importlib, json, sys
        sys.path.insert(0, {str(tmp_path)!r})
        module = importlib.import_module("challenge_data.challenge_1")
        output = module.evaluate({str(annotation)!r}, {str(submission)!r}, "test",
                                 submission_metadata={{"id": 123, "status": "running"}})
        print("RESULT " + json.dumps(output))
        """
    )
    return subprocess.run(
        [sys.executable, "-c", worker], cwd=tmp_path, capture_output=True, text=True, env=_env()
    )


def _scores_txt(output: Path) -> dict[str, float]:
    """CodaLab's scores.txt: ``key: value`` lines."""
    lines = (output / "scores.txt").read_text().splitlines()
    return {key: float(value) for key, value in (line.split(": ") for line in lines)}


def _summary(result) -> dict[str, float]:
    return dict(result.summary.select("metric", "value").iter_rows())


def _without_uid(source: Path, uid: str, target: Path) -> Path:
    """``source`` (CSV.gz) without the rows of ``uid``, plain Python."""
    lines = gzip.decompress(source.read_bytes()).decode().splitlines(keepends=True)
    target.write_text("".join(line for line in lines if line.split(",")[0] != uid))
    return target


def _broken_trajectory(tmp_path: Path) -> bytes:
    """The weekly_repeat submission with its third line cut to four fields."""
    lines = gzip.decompress((HUMOB / "weekly_repeat.csv.gz").read_bytes()).decode().splitlines()
    lines[2] = ",".join(lines[2].split(",")[:4])
    return ("\n".join(lines) + "\n").encode()


# --------------------------------------------------------------------------- Codabench


@pytest.fixture(scope="module")
def gis_cup(tmp_path_factory) -> Path:
    options = ["--task", "gis-cup", "--city", "test", "--truth", "reference.csv.gz"]
    return _program(tmp_path_factory.mktemp("gis"), *options)


def test_codabench_scores_a_correct_submission(gis_cup, tmp_path):
    from mobeval.api import evaluate_trajectory

    ref = {"reference.csv.gz": HUMOB / "reference_test.csv.gz"}
    run, output = _codabench(tmp_path, gis_cup, ref, {"sub.csv.gz": HUMOB / "weekly_repeat.csv.gz"})
    assert run.returncode == 0, run.stderr
    expected = _summary(
        evaluate_trajectory(
            HUMOB / "reference_test.csv.gz",
            HUMOB / "weekly_repeat.csv.gz",
            convention="humob2025",
            per_unit=False,
        )
    )
    scores = json.loads((output / "scores.json").read_text())
    assert scores == {"geobleu": expected["geobleu"], "dtw": expected["dtw"]}
    assert list(scores) == ["geobleu", "dtw"]  # the primary column first
    assert "metadata" not in os.listdir(output)  # Codabench's worker writes it, and fails if there
    assert "valid" in (output / "detailed_results.html").read_text()


@pytest.mark.parametrize("case", ["broken", "no file", "empty file"])
def test_codabench_ranks_a_failed_submission_last(gis_cup, tmp_path, case):
    res = {
        "broken": {"sub.csv": _broken_trajectory(tmp_path)},
        "no file": {},
        "empty file": {"sub.csv": b""},
    }[case]
    ref = {"reference.csv.gz": HUMOB / "reference_test.csv.gz"}
    run, output = _codabench(tmp_path, gis_cup, ref, res)
    assert run.returncode == 0, run.stderr  # scored: the worst values, never n/a
    scores = json.loads((output / "scores.json").read_text())
    assert scores == {"geobleu": -CODABENCH_MAX, "dtw": CODABENCH_MAX}
    reason = {
        "broken": "The number of columns must be 5 (found 4)",
        "no file": "the submission holds no file",
        "empty file": "uid 50 of task 2025:test is missing from the submission",
    }[case]
    details = (output / "detailed_results.html").read_text()
    assert "invalid submission" in details and reason in details
    assert reason in run.stderr and "INVALID" in run.stdout


def test_codabench_missing_reference_is_the_organisers(gis_cup, tmp_path):
    run, output = _codabench(tmp_path, gis_cup, {"other.csv": b"uid,d,t,x,y\n"}, {})
    assert run.returncode == 2
    assert "reference.csv.gz: no such reference file" in run.stderr and "other.csv" in run.stderr
    assert os.listdir(output) == []


# --------------------------------------------------------------------------- CodaLab


@pytest.fixture(scope="module")
def humob_dtw(tmp_path_factory) -> Path:
    options = ["--task", "humob-dtw", "--city", "test", "--truth", "truth.csv"]
    return _program(tmp_path_factory.mktemp("dtw"), *options, "--on-invalid", "fail")


def test_codalab_scores_a_correct_submission(humob_dtw, tmp_path):
    """HuMob 2024's test city holds uids 50..59: uid 60 of the samples left out of both."""
    from mobeval.api import evaluate_trajectory

    truth = _without_uid(HUMOB / "reference_test.csv.gz", "60", tmp_path / "truth.csv")
    submission = _without_uid(HUMOB / "weekly_repeat.csv.gz", "60", tmp_path / "sub.csv")
    run, output = _codalab(tmp_path, humob_dtw, {"truth.csv": truth}, {"sub.csv": submission})
    assert run.returncode == 0, run.stderr
    expected = _summary(
        evaluate_trajectory(truth, submission, convention="humob2024", per_unit=False)
    )
    assert _scores_txt(output) == {"dtw": expected["dtw"], "geobleu": expected["geobleu"]}
    assert json.loads((output / "scores.json").read_text()) == _scores_txt(output)


@pytest.mark.parametrize("case", ["broken", "no file"])
def test_codalab_fails_a_failed_submission(humob_dtw, tmp_path, case):
    truth = _without_uid(HUMOB / "reference_test.csv.gz", "60", tmp_path / "truth.csv")
    res = {"broken": {"sub.csv.gz": HUMOB / "weekly_repeat.csv.gz"}, "no file": {}}[case]
    run, output = _codalab(tmp_path, humob_dtw, {"truth.csv": truth}, res)
    assert run.returncode == 1  # the platform marks it Failed
    assert sorted(os.listdir(output)) == ["detailed_results.html"]  # no score to rank
    reason = {"broken": "uid 60", "no file": "the submission holds no file"}[case]
    assert reason in run.stderr and reason in (output / "detailed_results.html").read_text()


def test_codalab_recs_leaderboard(tmp_path):
    from mobeval.api import evaluate_recs

    bundle = _program(
        tmp_path,
        "--task",
        "recs",
        "--metrics",
        "ndcg@10,map@10,mrr@5",
        "--truth",
        "ratings.parquet",
    )
    ref = {"ratings.parquet": RECS / "ratings.parquet"}
    run, output = _codalab(tmp_path / "ok", bundle, ref, {"mf.parquet": RECS / "mf.parquet"})
    assert run.returncode == 0, run.stderr
    expected = _summary(
        evaluate_recs(
            RECS / "ratings.parquet", RECS / "mf.parquet", metrics=["ndcg@10", "map@10", "mrr@5"]
        )
    )
    assert _scores_txt(output) == {m: expected[m] for m in ("ndcg@10", "map@10", "mrr@5")}
    for case, content, reason in [
        ("broken", b"user_id,item\n1,2\n", "item_id"),
        ("empty", b"", "Empty CSV file"),
    ]:
        run, output = _codalab(tmp_path / case, bundle, ref, {"recs.csv": content})
        assert run.returncode == 0, run.stderr
        assert set(_scores_txt(output).values()) == {-CODABENCH_MAX}
        assert reason in (output / "detailed_results.html").read_text(), case


# --------------------------------------------------------------------------- EvalAI


@pytest.fixture(scope="module")
def nextloc(tmp_path_factory) -> Path:
    options = ["--task", "nextloc", "--metrics", "acc@1,ndcg@10,mrr", "--truth", "truth.parquet"]
    return _program(tmp_path_factory.mktemp("nextloc"), *options, "--convention", "libcity")


def test_evalai_scores_a_correct_submission(nextloc, tmp_path):
    from mobeval.api import evaluate_nextloc

    run = _evalai(tmp_path, nextloc, NEXTLOC / "truth.parquet", NEXTLOC / "markov.parquet")
    assert run.returncode == 0, run.stderr
    output = json.loads(run.stdout.split("RESULT ", 1)[1])
    summary = _summary(
        evaluate_nextloc(
            NEXTLOC / "truth.parquet",
            NEXTLOC / "markov.parquet",
            metrics=["acc@1", "ndcg@10", "mrr"],
            convention="libcity",
        )
    )
    expected = {"test_split": {m: summary[m] for m in ("acc@1", "ndcg@10", "mrr")}}
    assert output == {"result": [expected], "submission_result": expected}


@pytest.mark.parametrize(
    "content, reason",
    [(b"sample_id,where,score\n1,2,0.5\n", "location"), (b"", "Empty CSV file")],
    ids=["broken", "empty"],
)
def test_evalai_fails_a_failed_submission(nextloc, tmp_path, content, reason):
    submission = tmp_path / "submission.csv"
    submission.write_bytes(content)
    run = _evalai(tmp_path, nextloc, NEXTLOC / "truth.parquet", submission)
    assert run.returncode != 0 and "RESULT" not in run.stdout  # EvalAI marks it Failed
    assert "InvalidSubmission: invalid submission:" in run.stderr and reason in run.stderr


# --------------------------------------------------------------------------- the command


def test_the_command_writes_every_platforms_files(gis_cup):
    written = sorted(str(p.relative_to(gis_cup)) for p in gis_cup.rglob("*") if p.is_file())
    assert written == [
        "codabench_leaderboard.yaml",
        "evalai_leaderboard.yaml",
        "evaluation_script/__init__.py",
        "evaluation_script/challenge.json",
        "evaluation_script/main.py",
        "scoring_program/challenge.json",
        "scoring_program/metadata",
        "scoring_program/score.py",
    ]
    leaderboard = (gis_cup / "codabench_leaderboard.yaml").read_text()
    assert 'key: "geobleu"\n        index: 0\n        sorting: desc' in leaderboard
    assert 'key: "dtw"\n        index: 1\n        sorting: asc' in leaderboard
    spec = json.loads((gis_cup / "scoring_program" / "challenge.json").read_text())
    assert spec["validator"] == "2025:test" and spec["options"]["convention"] == "humob2025"


@pytest.mark.parametrize(
    "options, message",
    [
        (["--task", "kaggle", "--truth", "t.csv"], "invalid choice: 'kaggle'"),
        (["--task", "gis-cup", "--truth", "t.csv"], "gis-cup needs the city"),
        (["--task", "gis-cup", "--city", "z", "--truth", "t.csv"], "no city 'z' in 2025"),
        (["--task", "nextloc", "--metrics", "acc@k", "--truth", "t.csv"], "name each cutoff"),
        (["--task", "recs", "--metrics", "zz@3", "--truth", "t.csv"], "unknown recommendation"),
        (["--task", "recs", "--truth", "ref/t.csv"], "a file name in its folder"),
    ],
)
def test_the_command_refuses_what_cannot_score(tmp_path, capsys, options, message):
    try:
        code = main(["challenge", *options, str(tmp_path / "bundle")])
    except SystemExit as usage_error:  # argparse's
        code = usage_error.code
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "bundle").exists()


def test_the_command_never_writes_over_a_folder(tmp_path, capsys):
    (tmp_path / "bundle").mkdir()
    (tmp_path / "bundle" / "mine.txt").write_text("kept")
    code = main(["challenge", "--task", "recs", "--truth", "r.parquet", str(tmp_path / "bundle")])
    assert code == 2 and "not an empty folder" in capsys.readouterr().err
    assert os.listdir(tmp_path / "bundle") == ["mine.txt"]
    assert sorted(os.listdir(tmp_path)) == ["bundle"]  # no staging folder left


def test_worst_is_below_every_score():
    """GEO-BLEU, the ranking metrics: at least 0; DTW, errors: finite: the worst values sit
    beyond them and within Codabench's column (|v| < 10**10)."""
    from mobeval.challenges.tasks import worst

    assert worst("geobleu") == worst("ndcg@10") == -CODABENCH_MAX
    assert worst("dtw") == worst("rmse") == CODABENCH_MAX
    assert math.isfinite(worst("dtw"))
