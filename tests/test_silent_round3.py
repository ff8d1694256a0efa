"""Issue 36's silently-wrong and crash classes: a test design never switched by a key's type
(class 6), values taken as given or refused (class 7), user and I/O errors as one line and exit
2, never a traceback or exit 3 (class 10), the behaviour the docs describe (class 11)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from mobeval.cli import main
from mobeval.compare import compare
from mobeval.errors import InputError
from mobeval.jobs import load_job, run_job
from tests.conftest import REPO_ROOT
from tests.test_runs import SAMPLES as RUN_SAMPLES
from tests.test_runs import write_job

SAMPLES = REPO_ROOT / "data_samples"


def one_error(capsys) -> str:
    """The command's one stderr line, ``mobeval: error: ...`` (no traceback, no second line)."""
    error = capsys.readouterr().err
    assert error.startswith("mobeval: error: ") and error.count("\n") == 1, error
    return error


# ---------------------------------------------------------------------------------------------
# Class 6: a run whose unit keys have another type never turns unit means into runs as units


def rewrite_per_unit(folder: Path, change) -> None:
    """The per-unit rows of one result's ``folder`` as ``change(rows)``, in one file."""
    files = sorted(folder.glob("*.parquet"))
    frame = pl.read_parquet(files)
    for file in files:
        file.unlink()
    change(frame).write_parquet(files[0])


@pytest.fixture
def seeds_out(tmp_path) -> Path:
    """Three models by three seeds, each run scored on the same 40 samples."""
    run_job(load_job(write_job(tmp_path)), log=lambda _: None)
    return tmp_path / "out"


def test_runs_whose_unit_keys_differ_in_type_are_refused_not_taken_as_units(seeds_out, capsys):
    assert set(compare(seeds_out, baseline="gru", metrics=["mrr"])["n"]) == {RUN_SAMPLES}
    run = seeds_out / "per_unit/city=tky/model=lstm/run=seed2"
    rewrite_per_unit(run, lambda rows: rows.with_columns(pl.col("sample_id").cast(pl.String)))
    with pytest.raises(InputError) as refused:
        compare(seeds_out, baseline="gru", metrics=["mrr"])
    error = refused.value
    assert error.path == str(run) and error.column == "sample_id" and error.key == "0"
    assert "unit keys of type String where city=tky/model=gru/run=seed1 has Int64" in str(error)
    capsys.readouterr()
    assert main(["compare", str(seeds_out), "--baseline", "gru", "--runs", "mean"]) == 2
    assert f"{run}: column 'sample_id': unit keys of type String" in one_error(capsys)
    assert not (seeds_out / "compare").exists()


# ---------------------------------------------------------------------------------------------
# Class 7: every value taken as given or refused

RECS = SAMPLES / "recs"


@pytest.mark.parametrize("option", ["train", "catalogue"])
def test_float_item_ids_of_a_population_input_are_refused_not_cut_to_integers(
    option, tmp_path, capsys
):
    path = tmp_path / f"{option}.parquet"
    train = pl.read_parquet(RECS / "train.parquet")
    train.with_columns(pl.col("item_id") + 0.5).write_parquet(path)
    metric = "avg_popularity@5" if option == "train" else "coverage@5"
    argv = ["recs", "--ratings", str(RECS / "ratings.parquet"), "--recs", str(RECS / "mf.parquet")]
    assert main([*argv, f"--{option}", str(path), "--metrics", metric, "--quiet"]) == 2
    first = train["item_id"][0] + 0.5
    error = one_error(capsys)
    assert f"{path}: column 'item_id': ids must be integers or strings, found Float64" in error
    assert f"(first offending key: {first})" in error


def test_text_item_ids_of_the_training_data_are_compared_as_text_never_read_as_numbers(tmp_path):
    """Ids typed differently in two inputs are compared as text (as the ratings' and the
    lists' are): the text '0375' is no item 375, so no list item has a popularity."""
    from mobeval.api import evaluate_recs

    path = tmp_path / "train.parquet"
    pl.read_parquet(RECS / "train.parquet").with_columns(
        ("0" + pl.col("item_id").cast(pl.String)).alias("item_id")
    ).write_parquet(path)
    result = evaluate_recs(
        RECS / "ratings.parquet", RECS / "mf.parquet", metrics=["avg_popularity@5"], train=str(path)
    )
    assert result.summary.filter(pl.col("metric") == "avg_popularity@5")["value"].item() == 0


def test_max_distance_0_is_refused_as_minus_1_is_never_the_default(capsys):
    humob = SAMPLES / "humob"
    argv = ["trajectory", "--reference", str(humob / "reference_test.csv.gz")]
    argv += ["--generated", str(humob / "weekly_repeat.csv.gz"), "--metrics", "distance"]
    for value in ("0", "-1", "0.0"):
        assert main([*argv, "--max-distance", value, "--quiet"]) == 2
        assert one_error(capsys).startswith("mobeval: error: --max-distance: must be a finite")


@pytest.mark.parametrize(
    ("family", "entry", "input_name"),
    [
        ("recs", "ratings.rank=position", "ratings"),
        ("recs", "truth.score=position", "truth"),
        ("nextloc", "truth.score=position", "truth"),
        ("logits", "targets.logits=position", "targets"),
    ],
)
def test_a_columns_entry_its_input_cannot_hold_is_refused_not_ignored(
    family, entry, input_name, tmp_path, capsys
):
    """The file has the named column, so nothing else would catch an entry never read."""
    truth = {
        "recs": ("--ratings", RECS / "ratings.parquet", "--recs", RECS / "mf.parquet"),
        "nextloc": (
            "--truth",
            SAMPLES / "nextloc/tky/truth.parquet",
            "--pred",
            SAMPLES / "nextloc/tky/markov.parquet",
        ),
    }.get(family)
    if truth is None:
        import numpy as np

        pl.DataFrame({"target": [0, 1], "position": [1, 2]}).write_parquet(tmp_path / "t.parquet")
        np.save(tmp_path / "l.npy", np.zeros((2, 3), dtype=np.float32))
        truth = ("--targets", tmp_path / "t.parquet", "--logits", tmp_path / "l.npy")
    else:
        flag, path = truth[:2]
        with_column = tmp_path / path.name
        pl.read_parquet(path).with_columns(position=pl.lit(1)).write_parquet(with_column)
        truth = (flag, with_column, *truth[2:])
    argv = [family, *map(str, truth), "--columns", entry, "--quiet"]
    assert main(argv) == 2
    ours = entry.split(".")[1].split("=")[0]
    assert f"--columns: '{ours}' (in '{entry.split('=')[0]}') is not a column of " in (
        line := one_error(capsys)
    )
    assert f"'s {input_name} input, which holds" in line


def test_a_model_whose_distributions_cannot_be_read_is_exit_2_not_left_out_of_the_figure(
    tmp_path, capsys
):
    from tests.test_population import _city

    gen, ref = _city()
    ref.write_parquet(tmp_path / "ref.parquet")
    out = tmp_path / "out"
    for model in ("near", "far"):
        gen.write_parquet(tmp_path / f"{model}.parquet")
        argv = ["trajectory", "--reference", str(tmp_path / "ref.parquet"), "--city", "c"]
        argv += ["--generated", str(tmp_path / f"{model}.parquet"), "--out", str(out)]
        assert main([*argv, "--metrics", "geobleu,distance", "--quiet"]) == 0
    (part,) = (out / "distributions/city=c/model=far").glob("*.parquet")
    part.write_bytes(b"not parquet")
    capsys.readouterr()
    assert main(["report", str(out), "--format", "markdown"]) == 2
    assert f"{part}" in one_error(capsys)
    assert not (out / "report").exists()


@pytest.mark.parametrize("name", ["city", "model"])
def test_an_empty_name_given_to_the_api_is_refused_not_read_as_the_default(name, tmp_path):
    from mobeval.api import evaluate_nextloc
    from mobeval.errors import ConfigError

    tky = SAMPLES / "nextloc/tky"
    out = tmp_path / "out"
    with pytest.raises(ConfigError, match=f"^{name}: '' is not a plain name"):
        evaluate_nextloc(tky / "truth.parquet", tky / "markov.parquet", out=out, **{name: ""})
    assert not out.exists()


# ---------------------------------------------------------------------------------------------
# Class 10: user and I/O errors are one line and exit 2, never a traceback or exit 3


@pytest.mark.parametrize("first, second", [("--run=s1", None), (None, "--run=s1")])
def test_a_refused_mix_of_runs_and_a_plain_result_prints_one_line(first, second, tmp_path):
    """The lock taken before the refusal is let go at once: nothing left for the garbage
    collector to close after the lock's owner has gone ('Exception ignored ... KeyError')."""
    import subprocess
    import sys

    tky = SAMPLES / "nextloc/tky"
    argv = [sys.executable, "-m", "mobeval", "nextloc", "--truth", str(tky / "truth.parquet")]
    argv += ["--pred", str(tky / "markov.parquet"), "--k", "1", "--out", str(tmp_path / "out")]
    argv += ["--model", "m", "--quiet"]
    done = subprocess.run([*argv, *filter(None, [first])], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([*argv, *filter(None, [second])], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.startswith("mobeval: error: ") and done.stderr.count("\n") == 1, done.stderr


def test_report_on_a_long_tail_part_without_its_count_is_exit_2_naming_it(tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["recs", "--ratings", str(RECS / "ratings.parquet"), "--recs", str(RECS / "mf.parquet")]
    argv += ["--metrics", "ndcg@5,long_tail@5", "--out", str(out), "--quiet"]
    assert main(argv) == 0
    (part,) = (out / "long_tail/city=recs/model=mf").glob("*.parquet")
    pl.read_parquet(part).drop("count").write_parquet(part)
    capsys.readouterr()
    assert main(["report", str(out), "--format", "markdown"]) == 2
    assert f"{part}: column 'count': column missing from this output file" in one_error(capsys)
    assert not (out / "report").exists()


# ---------------------------------------------------------------------------------------------
# Class 11: the behaviour the docs describe


def _with_nan_units(out: Path, model: str, samples: range) -> None:
    """``model``'s mrr of ``samples`` made NaN (no value), its summary the mean over the rest."""
    folder = out / "per_unit/city=tky" / f"model={model}"
    rewrite_per_unit(
        folder,
        lambda rows: rows.with_columns(
            pl.when(pl.col("sample_id").is_in(list(samples)))
            .then(float("nan"))
            .otherwise(pl.col("mrr"))
            .alias("mrr")
        ),
    )
    values = [v for v in pl.read_parquet(folder)["mrr"] if v == v]
    (summary,) = (out / "summary/city=tky" / f"model={model}").glob("*.parquet")
    pl.read_parquet(summary).with_columns(
        pl.when(pl.col("metric") == "mrr")
        .then(sum(values) / len(values))
        .otherwise(pl.col("value"))
        .alias("value"),
        pl.when(pl.col("metric") == "mrr").then(len(values)).otherwise(pl.col("n")).alias("n"),
    ).write_parquet(summary)


def test_units_nan_on_one_side_are_left_out_of_both_and_said(tmp_path, nextloc_sample_out):
    import shutil

    out = tmp_path / "out"
    shutil.copytree(nextloc_sample_out, out)
    _with_nan_units(out, "markov", range(5))
    _with_nan_units(out, "popularity", range(3, 10))
    notes = []
    row = compare(out, city="tky", metrics=["mrr"], log=notes.append).row(0, named=True)
    kept = {}
    for model in ("markov", "popularity"):
        rows = pl.read_parquet(out / "per_unit/city=tky" / f"model={model}")
        kept[model] = dict(zip(rows["sample_id"], rows["mrr"], strict=True))
    both = [s for s in kept["markov"] if kept["markov"][s] == kept["markov"][s]]
    both = [s for s in both if kept["popularity"][s] == kept["popularity"][s]]
    assert row["n"] == len(both) == 3000 - 10
    mean = sum(kept["markov"][s] for s in both) / len(both)
    assert row["mean_baseline"] == pytest.approx(mean, rel=1e-12)
    assert any(
        "left out of both sides: mrr, markov vs popularity: 3 only in markov, 5 only in "
        "popularity (2990 paired)" in note
        for note in notes
    ), notes


def test_a_markdown_title_holding_html_or_markdown_is_written_as_text(tmp_path, nextloc_sample_out):
    import html
    import re
    import shutil

    out = tmp_path / "out"
    shutil.copytree(nextloc_sample_out, out)
    title = "<script>alert(1)</script> *a* [b](c) d_e & #1"
    argv = ["report", str(out), "--format", "markdown", "--no-plots", "--title", title]
    assert main(argv) == 0
    heading = (out / "report/report.md").read_text().splitlines()[0]
    assert "<" not in heading and ">" not in heading
    # read back as a Markdown viewer does: a backslash before punctuation, then the entities
    text = html.unescape(re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", heading.removeprefix("# ")))
    assert text == title
    for markup in ("*a*", "[b]", "d_e"):
        assert markup not in heading


def test_a_boolean_resamples_is_refused_without_a_hint_about_class_ids():
    from mobeval.api import evaluate_recs
    from mobeval.errors import OptionError

    with pytest.raises(OptionError) as refused:
        evaluate_recs(
            RECS / "ratings.parquet",
            RECS / "mf.parquet",
            metrics=["gini@5"],
            catalogue=str(RECS / "catalogue.parquet"),
            population_resamples=True,
        )
    assert str(refused.value) == "population_resamples=True: expected an integer, got bool True"
