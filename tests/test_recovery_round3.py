"""Nothing lost, round three (issue 36): recovery that never deletes, names that never collide,
a quick comparison that never erases the full one, and results read only inside OUT."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mobeval.cli import main
from mobeval.errors import ConfigError
from mobeval.io.writers import STAGING, output_lock
from tests.conftest import REPO_ROOT
from tests.test_output_safety import nextloc_args, snapshot

TKY = REPO_ROOT / "data_samples" / "nextloc" / "tky"


# ---------------------------------------------------------------------------------------------
# 1. A refused commit journal: nothing deleted, every path checked whole


@pytest.fixture
def killed_commit(tmp_path) -> Path:
    """An OUT as a commit killed after its first move leaves it: the old summary of
    tky/markov moved aside into the staging area, its journal beside."""
    out = tmp_path / "out"
    assert main(nextloc_args(out)) == 0
    result = "city=tky/model=markov"
    aside = out / STAGING / result
    aside.mkdir(parents=True)
    (out / "summary" / result).rename(aside / "replaced-summary")
    return out


def write_journal(out: Path, plan: object) -> Path:
    journal = out / STAGING / "commit-0.json"
    journal.write_text(plan if isinstance(plan, str) else json.dumps(plan))
    return journal


def moves(**changed) -> list[dict]:
    """The journal a commit of tky/markov writes (:func:`commit_result`), ``changed`` in its
    summary move."""
    plan = [
        {
            "final": f"{section}/city=tky/model=markov",
            "aside": f"{STAGING}/city=tky/model=markov/replaced-{section}",
            "staged": None,
        }
        for section in ("per_unit", "summary")
    ]
    plan[-1] |= changed
    return plan


REFUSED = {
    "damaged": "[{",
    "aside of the staging area itself": moves(aside=STAGING),
    "aside one level up": moves(aside=f"{STAGING}/../replaced-summary"),
    "aside of another section": moves(aside=f"{STAGING}/city=tky/model=markov/replaced-per_unit"),
    "final a whole section": moves(final="summary"),
    "final a whole city": moves(final="summary/city=tky"),
    "final through ..": moves(final="summary/city=tky/model=markov/../../city=x/model=y"),
    "final outside the sections": moves(final="compare/city=tky/model=markov"),
    "staged the staging area itself": moves(staged=STAGING),
    "staged outside it": moves(staged="per_unit/city=tky/model=markov"),
    "two results": moves(final="summary/city=tky/model=other"),
    "not a list": {"final": "summary/city=tky/model=markov"},
}


@pytest.mark.parametrize("plan", REFUSED.values(), ids=REFUSED.keys())
def test_a_refused_journal_leaves_the_staging_area_and_the_result_set_aside(killed_commit, plan):
    """The journal is refused, naming it; nothing moves and nothing is deleted: the journal
    and the old summary moved aside are still there for the user to put back."""
    out = killed_commit
    journal = write_journal(out, plan)
    before = snapshot(out)
    refused = r"commit-0.json: not a commit journal mobeval wrote"
    with pytest.raises(ConfigError, match=refused), output_lock(out):
        pass
    after = snapshot(out)
    after.pop(".lock", None)  # the lock's own file, removed or not as it is left
    before.pop(".lock", None)
    assert after == before
    assert journal.is_file()
    assert (out / STAGING / "city=tky/model=markov/replaced-summary").is_dir()


def test_a_refused_journal_stops_the_next_run_with_exit_2(killed_commit, capsys):
    out = killed_commit
    write_journal(out, moves(aside=STAGING))
    before = snapshot(out)
    assert main(nextloc_args(out)) == 2
    error = capsys.readouterr().err
    assert "commit-0.json: not a commit journal mobeval wrote" in error
    assert "Traceback" not in error
    assert snapshot(out) == before


# ---------------------------------------------------------------------------------------------
# 5. compare and report read results only inside OUT


@pytest.fixture
def scored_out(tmp_path, nextloc_sample_out) -> Path:
    out = tmp_path / "out"
    shutil.copytree(nextloc_sample_out, out)
    return out


def moved_outside(out: Path, relative: str) -> Path:
    """``OUT/relative`` moved beside OUT and a link to it left in its place."""
    elsewhere = out.parent / "elsewhere" / relative
    elsewhere.parent.mkdir(parents=True, exist_ok=True)
    (out / relative).rename(elsewhere)
    (out / relative).symlink_to(elsewhere)
    return elsewhere


READERS = {
    "compare": ["compare", "--city", "tky"],
    "report": ["report", "--format", "markdown", "--no-plots", "--no-compare"],
}


@pytest.mark.parametrize("reader", READERS.values(), ids=READERS.keys())
@pytest.mark.parametrize(
    "moved",
    ["", "/city=tky", "/city=tky/model=markov", "/city=tky/model=markov/part-00000.parquet"],
)
def test_results_linked_from_outside_out_are_refused(scored_out, capsys, reader, moved):
    """The summary and per-unit folders, or a file of them, are links to elsewhere: refused."""
    for section in ("summary", "per_unit"):
        moved_outside(scored_out, section + moved)
    before = snapshot(scored_out)
    assert main([reader[0], str(scored_out), *reader[1:]]) == 2
    error = capsys.readouterr().err
    assert f"{scored_out / 'manifest.json'}" in error
    assert "city=tky/model=markov" in error
    assert "outside the output folder" in error
    assert "Traceback" not in error
    assert snapshot(scored_out) == before


@pytest.mark.parametrize("reader", READERS.values(), ids=READERS.keys())
@pytest.mark.parametrize(
    "recorded", ["../elsewhere/per_unit/city=tky/model=markov", "/elsewhere/per_unit/x"]
)
def test_a_manifest_whose_outputs_point_outside_out_is_refused(
    scored_out, capsys, reader, recorded
):
    manifest = json.loads((scored_out / "manifest.json").read_text())
    manifest["results"]["city=tky/model=markov"]["outputs"]["per_unit"] = recorded
    (scored_out / "manifest.json").write_text(json.dumps(manifest))
    assert main([reader[0], str(scored_out), *reader[1:]]) == 2
    error = capsys.readouterr().err
    assert f"{scored_out / 'manifest.json'}" in error
    assert recorded in error
    assert "outside the output folder" in error


# ---------------------------------------------------------------------------------------------
# 3. A model name mobeval chose never replaces another input's result

TREC = REPO_ROOT / "data_samples" / "trec"


def trec_runs(folder: Path) -> dict[str, Path]:
    """Two TREC runs of the sample qrels' queries: the sample's (bm25 scores) and one that
    ranks the same documents by the reciprocal of their rank."""
    lines = gzip.decompress((TREC / "run.txt.gz").read_bytes()).decode().splitlines()
    other = [" ".join([*f.split()[:4], repr(1 / int(f.split()[3])), "knn"]) for f in lines]
    runs = {"bpr": "\n".join(lines) + "\n", "itemknn": "\n".join(other) + "\n"}
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in runs.items():
        (folder / f"{name}.run").write_text(text)
    return {name: folder / f"{name}.run" for name in runs}


def score_trec(out: Path, run: Path, *extra: str) -> int:
    ratings = ["--ratings", str(TREC / "qrels.txt"), "--recs", str(run)]
    return main(["recs", *ratings, "--input-format", "trec", "--out", str(out), "--quiet", *extra])


def models_in(out: Path) -> list[str]:
    return sorted(p.name for p in out.glob("summary/city=*/model=*"))


def test_two_trec_runs_scored_into_one_out_keep_two_results(tmp_path, capsys):
    runs, out = trec_runs(tmp_path / "runs"), tmp_path / "out"
    assert score_trec(out, runs["bpr"]) == 0
    assert score_trec(out, runs["itemknn"]) == 0
    assert models_in(out) == ["model=bpr.run", "model=itemknn.run"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert sorted(manifest["results"]) == ["city=trec/model=bpr.run", "city=trec/model=itemknn.run"]


def test_another_file_of_the_same_name_is_refused_naming_both_and_model(tmp_path, capsys):
    """``a/bpr.run`` then ``b/bpr.run`` (other scores): the second is refused before any work,
    exit 2, naming both files and --model; --model bpr.run replaces, --model NAME keeps both."""
    first = trec_runs(tmp_path / "a")["bpr"]
    second = tmp_path / "b" / "bpr.run"
    second.parent.mkdir()
    shutil.copy(trec_runs(tmp_path / "other")["itemknn"], second)
    out = tmp_path / "out"
    assert score_trec(out, first) == 0
    before = snapshot(out)
    capsys.readouterr()
    assert score_trec(out, second) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith(f"mobeval: error: {second}: ")
    assert str(first) in error and "--model" in error
    assert snapshot(out) == before
    assert score_trec(out, second, "--model", "knn") == 0
    assert models_in(out) == ["model=bpr.run", "model=knn"]
    assert score_trec(out, second, "--model", "bpr.run") == 0
    manifest = json.loads((out / "manifest.json").read_text())
    recorded = manifest["results"]["city=trec/model=bpr.run"]["inputs"]["predictions"]
    assert [part["path"] for part in recorded] == [str(second)]


def test_the_same_input_scored_again_replaces_its_result(tmp_path, capsys):
    """The same file changed, then a copy of it elsewhere: the same input, replaced as before;
    a different file of that name is refused (exit 2)."""
    runs, out = trec_runs(tmp_path / "a"), tmp_path / "out"
    assert score_trec(out, runs["bpr"]) == 0
    runs["bpr"].write_text(runs["itemknn"].read_text())
    assert score_trec(out, runs["bpr"]) == 0
    copy = tmp_path / "copy" / "bpr.run"
    copy.parent.mkdir()
    shutil.copy(runs["bpr"], copy)
    assert score_trec(out, copy) == 0
    assert score_trec(out, trec_runs(tmp_path / "b")["bpr"]) == 2
    assert models_in(out) == ["model=bpr.run"]


FAMILY_INPUTS = {
    "nextloc": (
        ["nextloc", "--truth", str(TKY / "truth.parquet"), "--pred"],
        (TKY / "markov.parquet", TKY / "popularity.parquet"),
    ),
    "logits": (
        ["logits", "--targets", str(REPO_ROOT / "data_samples/logits/targets.npy"), "--logits"],
        (
            REPO_ROOT / "data_samples/logits/gru.npy",
            REPO_ROOT / "data_samples/logits/popularity.npy",
        ),
    ),
}


@pytest.mark.parametrize("family", FAMILY_INPUTS)
def test_every_family_refuses_a_chosen_name_taken_by_another_input(tmp_path, capsys, family):
    """Two files of one name (``a/m.<ext>`` and ``b/m.<ext>``, other content): the second is
    refused, exit 2, OUT as it was."""
    command, (one, other) = FAMILY_INPUTS[family]
    first, second = tmp_path / "a" / f"m{one.suffix}", tmp_path / "b" / f"m{one.suffix}"
    for source, target in ((one, first), (other, second)):
        target.parent.mkdir()
        shutil.copy(source, target)
    out = tmp_path / "out"
    assert main([*command, str(first), "--out", str(out), "--quiet"]) == 0
    before = snapshot(out)
    capsys.readouterr()
    assert main([*command, str(second), "--out", str(out), "--quiet"]) == 2
    error = capsys.readouterr().err
    assert str(first) in error and str(second) in error and "--model" in error
    assert snapshot(out) == before


# ---------------------------------------------------------------------------------------------
# 4. A quick comparison never erases the full one


def compare_part(out: Path, city: str = "tky") -> Path:
    return out / "compare" / f"city={city}" / "part-0.parquet"


QUICK_LOOKS = {
    "some metrics": ["--metrics", "acc@1,mrr"],
    "one test": ["--tests", "paired-t"],
    "leaderboard of some metrics": ["--view", "leaderboard", "--metrics", "acc@1"],
}


@pytest.mark.parametrize("quick", QUICK_LOOKS.values(), ids=QUICK_LOOKS.keys())
def test_a_quick_comparison_keeps_the_full_one_and_says_so(scored_out, capsys, quick):
    assert main(["compare", str(scored_out), "--city", "tky"]) == 0
    full = compare_part(scored_out).read_bytes()
    capsys.readouterr()
    assert main(["compare", str(scored_out), "--city", "tky", *quick]) == 0
    error = capsys.readouterr().err
    assert f"{compare_part(scored_out).parent} kept" in error
    assert compare_part(scored_out).read_bytes() == full


def test_a_comparison_that_covers_the_stored_one_replaces_it(scored_out, capsys):
    """A quick look stored first (nothing to keep), then the full comparison over it."""
    assert main(["compare", str(scored_out), "--city", "tky", "--metrics", "acc@1"]) == 0
    quick = compare_part(scored_out).read_bytes()
    assert main(["compare", str(scored_out), "--city", "tky"]) == 0
    assert compare_part(scored_out).read_bytes() != quick
    assert main(["compare", str(scored_out), "--city", "tky", "--metrics", "acc@1"]) == 0
    assert "kept" in capsys.readouterr().err


def test_the_report_says_on_stderr_which_metrics_a_stored_comparison_did_not_test(
    scored_out, capsys
):
    """OUT/compare holds acc@1 and mrr only: the report marks the other metrics not tested,
    and says so on stderr, naming them."""
    assert main(["compare", str(scored_out), "--city", "tky", "--metrics", "acc@1,mrr"]) == 0
    capsys.readouterr()
    command = ["report", str(scored_out), "--format", "markdown", "--no-plots", "--city", "tky"]
    assert main(command) == 0
    error = capsys.readouterr().err
    assert "note: city=tky: OUT/compare/city=tky did not compare acc@5, acc@10," in error
    assert "marked not tested" in error


@pytest.fixture
def three_models(tmp_path) -> Path:
    """An OUT of one city (tky), three models: markov, popularity and markov again."""
    out = tmp_path / "three"
    preds = {"markov": "markov", "popularity": "popularity", "again": "markov"}
    for model, pred in preds.items():
        command = ["nextloc", "--truth", str(TKY / "truth.parquet"), "--city", "tky"]
        command += ["--pred", str(TKY / f"{pred}.parquet"), "--model", model]
        assert main([*command, "--out", str(out), "--quiet"]) == 0
    return out


def test_a_leaderboard_of_baseline_pairs_is_refused_before_anything_is_written(
    three_models, capsys
):
    capsys.readouterr()
    view = ["--view", "leaderboard", "--pairs", "baseline"]
    assert main(["compare", str(three_models), *view]) == 2
    assert "compare with --pairs all" in capsys.readouterr().err
    assert not (three_models / "compare").exists()


def test_the_leaderboard_keeps_a_comparison_corrected_over_another_family(three_models, capsys):
    """The job's comparison against a baseline (a family of 2 pairs); the leaderboard compares
    all 3 pairs, whose Holm correction would change the stored pairs' p-values: kept."""
    assert main(["compare", str(three_models), "--baseline", "markov"]) == 0
    stored = compare_part(three_models).read_bytes()
    capsys.readouterr()
    assert main(["compare", str(three_models), "--view", "leaderboard"]) == 0
    assert "corrected over a family of" in capsys.readouterr().err
    assert compare_part(three_models).read_bytes() == stored


# ---------------------------------------------------------------------------------------------
# 2. What a killed report --output left beside its output: removed by any later run

KILLED_REPORT = """
import os, signal, sys
from mobeval import cli, report

def killed(self, *args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

report.Report.to_markdown = killed
sys.exit(cli.main(sys.argv[1:]))
"""


def run_mobeval(tmp_path: Path, *args: str, driver: str | None = None):
    """``mobeval args`` (or ``driver`` with them) in a fresh process whose temporary folder is
    ``tmp_path/tmp`` (where the scratch folders' records go)."""
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir(exist_ok=True)
    head = [sys.executable, "-c", driver] if driver else [sys.executable, "-m", "mobeval"]
    return subprocess.run([*head, *args], capture_output=True, text=True, env=env, cwd=REPO_ROOT)


@pytest.fixture
def killed_report(scored_out, tmp_path) -> Path:
    """A report of OUT to ``tmp_path/paper/r.md`` killed (SIGKILL) while it renders: its
    staging folder is left beside the output; returns it."""
    target = tmp_path / "paper" / "r.md"
    args = ["report", str(scored_out), "--format", "markdown", "--no-plots", "--no-compare"]
    killed = run_mobeval(tmp_path, *args, "--output", str(target), driver=KILLED_REPORT)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    [left] = target.parent.glob(".report-*")
    return left


LATER_RUNS = {
    "a report elsewhere": ["report", "{out}", "--format", "html", "--no-plots", "--no-compare"],
    "a comparison": ["compare", "{out}", "--city", "tky"],
    "a scoring run": nextloc_args(Path("{out}")),
}


@pytest.mark.parametrize("later", LATER_RUNS.values(), ids=LATER_RUNS.keys())
def test_what_a_killed_report_left_beside_its_output_goes_with_any_later_run(
    killed_report, scored_out, tmp_path, later
):
    args = [arg.replace("{out}", str(scored_out)) for arg in later]
    done = run_mobeval(tmp_path, *args)
    assert done.returncode == 0, done.stderr
    assert not killed_report.exists()
    assert list((tmp_path / "paper").iterdir()) == []


def test_folders_of_the_users_named_like_a_staging_folder_are_never_removed(
    killed_report, scored_out, tmp_path
):
    """Beside the report: the leftover removed by hand and a folder of the user's made under
    its name, and another folder named like a report's staging folder: neither is one mobeval
    made (no mark of it), so the next report there keeps both."""
    shutil.rmtree(killed_report)
    killed_report.mkdir()
    (killed_report / "notes.txt").write_text("mine")
    (killed_report.parent / ".report-drafts").mkdir()
    (killed_report.parent / ".report-drafts" / "draft.md").write_text("mine too")
    args = ["report", str(scored_out), "--format", "markdown", "--no-plots", "--no-compare"]
    done = run_mobeval(tmp_path, *args, "--output", str(killed_report.parent / "r.md"))
    assert done.returncode == 0, done.stderr
    assert (killed_report / "notes.txt").read_text() == "mine"
    assert (killed_report.parent / ".report-drafts" / "draft.md").read_text() == "mine too"
