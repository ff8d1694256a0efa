"""Each common mistake's message names the next step, as the face that made it spells it:
truth and predictions swapped, a column under another name (``--columns truth.location=poi`` /
``columns={'truth.location': 'poi'}``), string location ids (where the recipe is), a k beyond a list
under ``libcity`` (``--k-beyond-list allow`` / ``k_beyond_list='allow'``)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from mobeval import evaluate_nextloc
from mobeval.cli import main
from mobeval.errors import InputError

TRUTH = pl.DataFrame({"sample_id": [1, 2, 3], "location": [10, 20, 30]})
PRED = pl.DataFrame(
    {
        "sample_id": [1, 1, 2, 2, 3],
        "location": [10, 11, 21, 20, 30],
        "score": [0.9, 0.1, 0.8, 0.2, 1.0],
    }
)


def _write(folder: Path, truth: pl.DataFrame, pred: pl.DataFrame) -> tuple[Path, Path]:
    truth.write_parquet(folder / "truth.parquet")
    pred.write_parquet(folder / "pred.parquet")
    return folder / "truth.parquet", folder / "pred.parquet"


def _cli_error(capsys, truth: Path, pred: Path, *more: str) -> str:
    code = main(["nextloc", "--truth", str(truth), "--pred", str(pred), *more, "--quiet"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", err
    (line,) = err.splitlines()
    return line


def _python_error(truth, pred, **options) -> str:
    with pytest.raises(InputError) as info:
        evaluate_nextloc(truth, pred, progress=False, **options)
    return str(info.value)


def test_swapped_inputs_say_so(tmp_path, capsys):
    truth, pred = _write(tmp_path, TRUTH, PRED)
    swapped = "then the truth and the predictions are swapped: give each to the other"
    line = _cli_error(capsys, pred, truth)
    assert (
        line.startswith(f"mobeval: error: {truth}: column 'rank': missing column")
        and swapped in line
    )
    assert swapped in _python_error(pred, truth)


@pytest.mark.parametrize(
    ("side", "frame", "theirs"),
    [
        ("truth", TRUTH.rename({"location": "poi"}), "poi"),
        ("truth", TRUTH.rename({"location": "venue"}).with_columns(day=pl.lit(1)), "venue"),
        ("truth", TRUTH.rename({"location": "cell"}).with_columns(day=pl.lit(1)), "YOUR_COLUMN"),
        ("pred", PRED.rename({"location": "poi"}), "poi"),
    ],
)
def test_a_column_under_another_name_names_the_mapping(tmp_path, capsys, side, frame, theirs):
    truth, pred = _write(
        tmp_path, frame if side == "truth" else TRUTH, frame if side == "pred" else PRED
    )
    line = _cli_error(capsys, truth, pred)
    message = _python_error(truth, pred)
    assert line.endswith(f"as 'location' with --columns {side}.location={theirs}"), line
    assert message.endswith(f"as 'location' with columns={{'{side}.location': '{theirs}'}}")
    assert str(tmp_path / f"{side}.parquet") in line


def test_a_mapping_to_a_column_the_file_lacks_says_none_is_needed(tmp_path, capsys):
    truth, pred = _write(tmp_path, TRUTH, PRED)
    line = _cli_error(capsys, truth, pred, "--columns", "location=poi")
    assert f"neither {truth} nor {pred} has a column 'poi'" in line
    assert line.endswith("both have 'location' itself: no mapping is needed"), line
    line = _cli_error(capsys, truth, pred, "--columns", "pred.location=poi")
    assert f"{pred}: column 'poi': missing column, read as 'location'" in line
    assert line.endswith("the file has 'location' itself: no mapping is needed"), line


@pytest.mark.parametrize("side", ["truth", "pred"])
def test_string_location_ids_point_to_the_recipe(tmp_path, capsys, side):
    as_text = pl.col("location").cast(pl.String)
    frames = {"truth": TRUTH, "pred": PRED}
    frames[side] = frames[side].with_columns(as_text)
    truth, pred = _write(tmp_path, frames["truth"], frames["pred"])
    for message in (_cli_error(capsys, truth, pred), _python_error(truth, pred)):
        assert (
            f"{side}.parquet: column 'location': expected integer values, found String" in message
        )
        assert (
            "map each string id to one integer, the same in the truth and the predictions"
            in message
        )
        assert "docs/troubleshooting.md, 'Location ids that are strings'" in message
    page = (Path(__file__).parents[1] / "docs" / "troubleshooting.md").read_text()
    assert "### Location ids that are strings" in page


@pytest.mark.parametrize("k", ["3", "2,5"])
def test_k_beyond_a_list_under_libcity_names_the_option_that_allows_it(tmp_path, capsys, k):
    truth, pred = _write(tmp_path, TRUTH, PRED)
    line = _cli_error(capsys, truth, pred, "--convention", "libcity", "--k", k)
    assert "--k-beyond-list allow scores such a list with what it has, or lower k" in line, line
    cutoffs = [int(c) for c in k.split(",")]
    message = _python_error(truth, pred, convention="libcity", k=cutoffs)
    assert "k_beyond_list='allow' scores such a list" in message
    evaluate_nextloc(
        truth, pred, convention="libcity", k=cutoffs, k_beyond_list="allow", progress=False
    )
    assert (
        main(
            [
                "nextloc",
                "--truth",
                str(truth),
                "--pred",
                str(pred),
                "--convention",
                "libcity",
                "--k",
                k,
                "--k-beyond-list",
                "allow",
                "--quiet",
            ]
        )
        == 0
    )
