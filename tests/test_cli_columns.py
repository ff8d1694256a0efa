"""Column mapping per input on every family (``columns``: :mod:`mobeval.io.columns`).

The oracle of every rename is the same data with our own column names: a renamed run must give
the same summary, bit for bit. Each face spells the mapping its own way (``--columns
truth.user_id=userId``, ``columns = { truth = { user_id = "userId" } }``, ``columns={"truth":
{"user_id": "userId"}}`` or ``{"truth.user_id": "userId"}``); wrong mappings (an unknown input
or column, two columns of one name) and missing columns say what to type next."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from mobeval import evaluate_logits, evaluate_nextloc, evaluate_recs, evaluate_trajectory
from mobeval.cli import main
from mobeval.errors import ConfigError, InputError, OptionError
from mobeval.jobs import load_job, run_job
from tests.conftest import REPO_ROOT

NEXTLOC = REPO_ROOT / "data_samples" / "nextloc" / "tky"
RECS = REPO_ROOT / "data_samples" / "recs"
#: MovieLens' spellings of the recommendation columns (ratings.csv: userId,movieId,rating).
MOVIELENS = {"user_id": "userId", "item_id": "movieId"}


def _nextloc_files(folder: Path) -> dict[str, Path]:
    """The tky sample (first 300 samples) with our names, and with the truth's location as
    ``poi``, the predictions' as ``venue`` and their score as ``logit``."""
    truth = pl.read_parquet(NEXTLOC / "truth.parquet").head(300)
    pred = pl.read_parquet(NEXTLOC / "markov.parquet").filter(
        pl.col("sample_id").is_in(truth["sample_id"].implode())
    )
    files = {
        "truth": truth,
        "pred": pred,
        "truth_poi": truth.rename({"location": "poi"}),
        "pred_venue": pred.rename({"location": "venue", "score": "logit"}),
        "pred_poi": pred.rename({"location": "poi"}),
    }
    for name, frame in files.items():
        frame.write_parquet(folder / f"{name}.parquet")
    return {name: folder / f"{name}.parquet" for name in files}


def _recs_files(folder: Path) -> dict[str, Path]:
    """The recs sample as CSV with our names, and MovieLens-style (``userId``, ``movieId``)."""
    ratings = pl.read_parquet(RECS / "ratings.parquet")
    lists = pl.read_parquet(RECS / "mf.parquet")
    frames = {
        "ratings": ratings,
        "lists": lists,
        "ml_ratings": ratings.rename(MOVIELENS),
        "ml_lists": lists.rename({"user_id": "user", "item_id": "item"}),
    }
    for name, frame in frames.items():
        frame.write_csv(folder / f"{name}.csv")
    return {name: folder / f"{name}.csv" for name in frames}


def _summary(capsys, argv: list[str]) -> dict:
    """The summary the command line prints as JSON (exit 0)."""
    assert main([*argv, "--format", "json", "--quiet"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)["summary"]


def _error(capsys, argv: list[str]) -> str:
    """The one line an exit 2 prints, nothing on stdout."""
    code = main([*argv, "--quiet"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", (code, out, err)
    (line,) = err.splitlines()
    return line


# --------------------------------------------------------------------------- per-input renames


def test_nextloc_renames_in_one_input_or_both(tmp_path, capsys):
    f = _nextloc_files(tmp_path)
    plain = _summary(capsys, ["nextloc", "--truth", str(f["truth"]), "--pred", str(f["pred"])])
    one = ["--truth", str(f["truth_poi"]), "--pred", str(f["pred_venue"])]
    columns = "truth.location=poi,pred.location=venue,predictions.score=logit"
    assert _summary(capsys, ["nextloc", *one, "--columns", columns]) == plain
    both = ["--truth", str(f["truth_poi"]), "--pred", str(f["pred_poi"])]
    assert _summary(capsys, ["nextloc", *both, "--columns", "location=poi"]) == plain
    # a plain entry is read where the file has it: the truth's poi, the predictions' location
    mixed = ["--truth", str(f["truth_poi"]), "--pred", str(f["pred"])]
    assert _summary(capsys, ["nextloc", *mixed, "--columns", "location=poi"]) == plain


@pytest.mark.parametrize(
    "columns",
    [
        {"truth": {"location": "poi"}, "pred": {"location": "venue", "score": "logit"}},
        {"truth.location": "poi", "predictions.location": "venue", "pred.score": "logit"},
        {"truth.location": "poi", "location": "venue", "score": "logit"},  # truth's entry wins
    ],
)
def test_python_takes_nested_and_dotted_entries(tmp_path, columns):
    f = _nextloc_files(tmp_path)
    plain = evaluate_nextloc(f["truth"], f["pred"], progress=False).summary
    renamed = evaluate_nextloc(f["truth_poi"], f["pred_venue"], columns=columns, progress=False)
    assert renamed.summary.equals(plain)


def test_two_of_our_columns_swapped_by_the_mapping(tmp_path):
    f = _nextloc_files(tmp_path)
    pred = pl.read_parquet(f["pred"])
    ranked = pred.with_columns(
        rank=pl.len().over("sample_id") - pl.int_range(pl.len()).over("sample_id")
    )
    swapped = ranked.rename({"score": "rank", "rank": "score"})
    plain = evaluate_nextloc(f["truth"], ranked, order_by="rank", progress=False).summary
    renamed = evaluate_nextloc(
        f["truth"],
        swapped,
        columns={"pred.score": "rank", "pred.rank": "score"},
        order_by="rank",
        progress=False,
    )
    assert renamed.summary.equals(plain)
    by_score = evaluate_nextloc(f["truth"], ranked, order_by="score", progress=False).summary
    assert not by_score.equals(plain)  # the two orders differ: the swap is what is tested


def test_a_movielens_ratings_file_works_with_one_flag(tmp_path, capsys):
    f = _recs_files(tmp_path)
    plain = _summary(capsys, ["recs", "--ratings", str(f["ratings"]), "--recs", str(f["lists"])])
    argv = ["recs", "--ratings", str(f["ml_ratings"]), "--recs", str(f["lists"])]
    assert _summary(capsys, [*argv, "--columns", "truth.user_id=userId,truth.item_id=movieId"]) == (
        plain
    )
    both = ["recs", "--ratings", str(f["ml_ratings"]), "--recs", str(f["ml_lists"])]
    mapping = "truth.user_id=userId,ratings.item_id=movieId,recs.user_id=user,pred.item_id=item"
    assert _summary(capsys, [*both, "--columns", mapping]) == plain


def test_recs_per_unit_keeps_our_key_name(tmp_path):
    f = _recs_files(tmp_path)
    plain = evaluate_recs(f["ratings"], f["lists"], progress=False)
    renamed = evaluate_recs(
        f["ml_ratings"],
        f["ml_lists"],
        columns={"ratings": MOVIELENS, "recs": {"user_id": "user", "item_id": "item"}},
        progress=False,
    )
    assert renamed.summary.equals(plain.summary)
    assert renamed.per_unit.equals(plain.per_unit)


def test_trajectory_renames_in_one_input(tmp_path):
    reference = pl.DataFrame(
        {"uid": [1] * 4 + [2] * 3, "d": [60] * 7, "t": [0, 1, 2, 3, 0, 1, 2]}
    ).with_columns(x=pl.col("t") + 5, y=pl.col("uid") * 3)
    generated = reference.with_columns(x=pl.col("x") + pl.col("t") % 2)
    plain = evaluate_trajectory(reference, generated, progress=False)
    theirs = generated.rename({"uid": "user", "x": "col"})
    renamed = evaluate_trajectory(
        reference, theirs, columns={"generated": {"uid": "user", "x": "col"}}, progress=False
    )
    assert renamed.summary.equals(plain.summary)
    with pytest.raises(InputError, match=r"column 'uid': missing column.*'pred.uid': 'user'"):
        evaluate_trajectory(reference, theirs, columns={"generated.x": "col"}, progress=False)


def test_logits_columns_name_the_parquet_columns(tmp_path):
    rng = np.random.default_rng(7)
    logits, targets = rng.normal(size=(40, 6)), rng.integers(0, 6, 40)
    ours, theirs = tmp_path / "ours.parquet", tmp_path / "theirs.parquet"
    pl.DataFrame({"logits": logits.tolist(), "target": targets}).write_parquet(ours)
    pl.DataFrame({"probs": logits.tolist(), "y": targets}).write_parquet(theirs)
    plain = evaluate_logits(ours, "target", progress=False)
    for columns in (
        {"logits": "probs", "target": "y"},
        {"pred.logits": "probs", "truth.target": "y"},
    ):
        assert evaluate_logits(theirs, "y", columns=columns, progress=False).summary.equals(
            plain.summary
        )
    with pytest.raises(OptionError, match="'logits' and logits_column both name one column"):
        evaluate_logits(theirs, "y", columns={"logits": "probs"}, logits_column="p", progress=False)


def test_a_job_file_spells_the_mapping_as_tables(tmp_path):
    f = _recs_files(tmp_path)
    job = tmp_path / "job.toml"
    job.write_text(
        f'out = "{tmp_path / "out"}"\n[[tasks]]\ntype = "recs"\ncity = "ml"\n'
        f'truth = "{f["ml_ratings"]}"\n'
        'columns = { ratings = { user_id = "userId" }, "truth.item_id" = "movieId" }\n'
        f'[tasks.models]\nmf = "{f["lists"]}"\n'
    )
    [result] = run_job(load_job(job), log=lambda _: None)
    assert result.summary.equals(evaluate_recs(f["ratings"], f["lists"], progress=False).summary)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    resolved = manifest["results"]["city=ml/model=mf"]["resolved"]
    assert resolved["columns"] == {"ratings": {"user_id": "userId"}, "truth.item_id": "movieId"}
    # another mapping is another result: --resume scores it again
    job.write_text(job.read_text().replace('"truth.item_id" = "movieId"', "item_id = 'movieId'"))
    log = []
    run_job(load_job(job), resume=True, log=log.append)
    assert not any("resumed" in line for line in log), log
    run_job(load_job(job), resume=True, log=log.append)
    assert any("resumed" in line for line in log), log


# --------------------------------------------------------------------------- wrong mappings


@pytest.mark.parametrize(
    ("family", "columns", "words"),
    [
        (
            "recs",
            "truthh.user_id=userId",
            "unknown input 'truthh' in 'truthh.user_id': the "
            "inputs are truth (or ratings) and pred (or recs)",
        ),
        (
            "nextloc",
            "truth.loc=poi",
            "'loc' (in 'truth.loc') is not a column of next-location "
            "scoring's truth input, which holds location, sample_id",
        ),
        ("recs", "user=userId", "ours are user_id, item_id, rating, rank, score"),
        (
            "trajectory",
            "reference.uid=a,truth.uid=b",
            "'reference.uid' and 'truth.uid' name one column: give one",
        ),
        (
            "nextloc",
            "location=poi,score=poi",
            "'location' and 'score' are both read from truth's column 'poi'",
        ),
    ],
)
def test_a_wrong_mapping_names_what_is_valid(tmp_path, capsys, family, columns, words):
    inputs = {
        "recs": ["--ratings", "r.csv", "--recs", "l.csv"],
        "nextloc": ["--truth", "t.parquet", "--pred", "p.parquet"],
        "trajectory": ["--reference", "a.csv", "--generated", "b.csv"],
    }[family]
    line = _error(capsys, [family, *inputs, "--columns", columns])
    assert line.startswith("mobeval: error: --columns: ") and words in line, line
    with pytest.raises(OptionError, match="unknown input|not a column|give one|both read"):
        pairs = dict(part.split("=") for part in columns.split(","))
        getattr(__import__("mobeval"), f"evaluate_{family}")("a", "b", columns=pairs)


def test_a_mapping_onto_a_column_the_file_has_is_refused(tmp_path, capsys):
    f = _nextloc_files(tmp_path)
    both = pl.read_parquet(f["pred"]).with_columns(pos=pl.col("score"))
    both.write_parquet(tmp_path / "both.parquet")
    line = _error(
        capsys,
        [
            "nextloc",
            "--truth",
            str(f["truth"]),
            "--pred",
            str(tmp_path / "both.parquet"),
            "--columns",
            "pred.score=pos",
        ],
    )
    assert "column 'pos': the mapping reads 'pos' as 'score', and the file has a column " in line


def test_python_type_errors_are_option_errors():
    with pytest.raises(ConfigError, match="a mapping of our name -> your column"):
        evaluate_recs("a", "b", columns={"truth": {"user_id": 3}})


# --------------------------------------------------------------------------- next steps


@pytest.mark.parametrize(
    ("rename", "ours", "theirs"),
    [
        ({"user_id": "userId"}, "user_id", "userId"),
        ({"item_id": "movieId"}, "item_id", "movieId"),
        ({"user_id": "User_ID"}, "user_id", "User_ID"),
        ({"item_id": "venueId"}, "item_id", "venueId"),
    ],
)
def test_a_column_under_a_known_spelling_names_the_flag(tmp_path, capsys, rename, ours, theirs):
    f = _recs_files(tmp_path)
    pl.read_csv(f["ratings"]).rename(rename).write_csv(tmp_path / "theirs.csv")
    argv = ["recs", "--ratings", str(tmp_path / "theirs.csv"), "--recs", str(f["lists"])]
    line = _error(capsys, argv)
    assert f"theirs.csv: column '{ours}': missing column" in line
    assert line.endswith(
        f"the file has '{theirs}': read it as '{ours}' with --columns truth.{ours}={theirs}"
    ), line
    with pytest.raises(InputError) as info:
        evaluate_recs(tmp_path / "theirs.csv", f["lists"], progress=False)
    assert str(info.value).endswith(f"with columns={{'truth.{ours}': '{theirs}'}}")


def test_the_movielens_sample_names_every_column_in_one_flag(capsys):
    ratings = REPO_ROOT / "data_samples" / "movielens" / "ratings.csv"
    lists = RECS / "mf.parquet"
    line = _error(capsys, ["recs", "--ratings", str(ratings), "--recs", str(lists)])
    flag = "truth.user_id=userId,truth.item_id=movieId"
    assert line.endswith(
        f"the file has 'userId', 'movieId': read them as 'user_id', 'item_id' with --columns {flag}"
    ), line
    argv = ["recs", "--ratings", str(ratings), "--recs", str(lists), "--columns", flag]
    plain = ["recs", "--ratings", str(RECS / "ratings.parquet"), "--recs", str(lists)]
    assert _summary(capsys, argv) == _summary(capsys, plain)


@pytest.mark.parametrize("family", ["nextloc", "recs", "trajectory", "logits"])
def test_help_names_each_input_s_prefixes(capsys, family):
    from mobeval.families import FAMILIES

    with pytest.raises(SystemExit):
        main([family, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    start = text.index("--columns COLUMNS your column names")
    words = text[start : text.index(" --", start + 20)]
    for names in FAMILIES[family].inputs.values():
        assert " or ".join(f"{name}." for name in names) in words, words
    for names in FAMILIES[family].column_names.values():
        assert all(ours in words for ours in names)


@pytest.mark.parametrize(
    ("argv", "line_end"),
    [
        (
            [
                "nextloc",
                "--truth",
                str(NEXTLOC / "truth.parquet"),
                "--pred",
                str(NEXTLOC / "markov.parquet"),
                "--key",
                "uid",
            ],
            "missing key column; columns present: ['sample_id', 'location']; both inputs have "
            "'sample_id': if it is the key, --key sample_id",
        ),
        (
            [
                "recs",
                "--ratings",
                str(RECS / "ratings.parquet"),
                "--recs",
                str(RECS / "mf.parquet"),
                "--key",
                "uid",
            ],
            "both inputs have 'user_id': if it is the key, --key user_id",
        ),
    ],
)
def test_a_key_both_inputs_hold_under_another_name_names_it(capsys, argv, line_end):
    line = _error(capsys, argv)
    assert "column 'uid'" in line and line.endswith(line_end), line


def test_swapped_recs_inputs_say_so(tmp_path, capsys):
    f = _recs_files(tmp_path)
    line = _error(capsys, ["recs", "--ratings", str(f["lists"]), "--recs", str(f["ratings"])])
    assert f"{f['lists']}: column 'rating': missing column" in line
    assert "the truth and the predictions are swapped: give each to the other" in line


def test_a_value_error_names_the_file_s_column(tmp_path):
    f = _nextloc_files(tmp_path)
    pl.read_parquet(f["pred_venue"]).with_columns(
        logit=pl.when(pl.int_range(pl.len()) == 3).then(float("nan")).otherwise(pl.col("logit"))
    ).write_parquet(tmp_path / "nan.parquet")
    with pytest.raises(InputError) as info:
        evaluate_nextloc(
            f["truth"],
            tmp_path / "nan.parquet",
            columns={"pred": {"location": "venue", "score": "logit"}},
            progress=False,
        )
    assert info.value.column == "logit" and "(read as 'score' by the columns option)" in str(
        info.value
    )


# --------------------------------------------------------------------------- Spark


@pytest.mark.spark
def test_spark_renames_per_input(tmp_path):
    f = _recs_files(tmp_path)
    columns = {"ratings": MOVIELENS, "recs": {"user_id": "user", "item_id": "item"}}
    local = evaluate_recs(f["ml_ratings"], f["ml_lists"], columns=columns, progress=False)
    spark = evaluate_recs(
        f["ml_ratings"], f["ml_lists"], columns=columns, engine="spark", progress=False
    )
    assert spark.summary.equals(local.summary)
    assert spark.per_unit.sort("user_id").equals(local.per_unit.sort("user_id"))
