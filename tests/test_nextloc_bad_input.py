"""Bad input: one clear message naming the file, the column and the first offending key; a non-zero
exit; and no output at all."""

import polars as pl
import pytest

from mobeval.cli import main

TRUTH = pl.DataFrame({"sample_id": [1, 2, 3], "location": [10, 20, 30]})
PREDICTIONS = pl.DataFrame(
    {
        "sample_id": [1, 1, 2, 2, 3, 3],
        "location": [10, 11, 20, 21, 31, 30],
        "score": [0.9, 0.1, 0.8, 0.2, 0.7, 0.3],
    }
)


def run_cli(tmp_path, truth, predictions, *extra):
    truth_path, pred_path = tmp_path / "truth.parquet", tmp_path / "pred.parquet"
    for frame, path in ((truth, truth_path), (predictions, pred_path)):
        if isinstance(frame, pl.DataFrame):
            frame.write_parquet(path)
        else:
            path.write_bytes(frame)
    out = tmp_path / "out"
    code = main(
        [
            "nextloc",
            "--truth",
            str(truth_path),
            "--pred",
            str(pred_path),
            "--k",
            "1,2",
            "--out",
            str(out),
            "--quiet",
            *extra,
        ]
    )
    return code, out, truth_path, pred_path


def assert_rejected(capsys, code, out, *fragments):
    message = capsys.readouterr().err
    assert code == 2, message
    for fragment in fragments:
        assert fragment in message, message
    assert not (out / "summary").exists()
    assert not (out / "per_unit").exists()
    assert not list(out.glob(".staging/**/*.parquet"))


def test_good_input_is_accepted(tmp_path, capsys):
    code, out, _, _ = run_cli(tmp_path, TRUTH, PREDICTIONS)
    assert code == 0
    assert (out / "summary" / f"city={tmp_path.name}" / "model=pred").is_dir()
    assert "acc@1" in capsys.readouterr().out


def test_missing_column(tmp_path, capsys):
    code, out, _, pred = run_cli(tmp_path, TRUTH, PREDICTIONS.drop("score"))
    assert_rejected(capsys, code, out, str(pred), "'rank'", "need 'score' or 'rank'")


def test_mistyped_location(tmp_path, capsys):
    bad = PREDICTIONS.with_columns(pl.col("location").cast(pl.String))
    code, out, _, pred = run_cli(tmp_path, TRUTH, bad)
    assert_rejected(capsys, code, out, str(pred), "column 'location'", "expected integer")


def test_mistyped_truth_location(tmp_path, capsys):
    bad = TRUTH.with_columns(pl.col("location").cast(pl.Float64))
    code, out, truth, _ = run_cli(tmp_path, bad, PREDICTIONS)
    assert_rejected(capsys, code, out, str(truth), "column 'location'")


@pytest.mark.parametrize("value", [None, float("nan")])
def test_null_or_nan_score(tmp_path, capsys, value):
    bad = PREDICTIONS.with_columns(
        pl.when(pl.col("location") == 21).then(value).otherwise(pl.col("score")).alias("score")
    )
    code, out, _, pred = run_cli(tmp_path, TRUTH, bad)
    assert_rejected(capsys, code, out, str(pred), "column 'score'", "sample_id=2")


def test_duplicate_location_in_one_list(tmp_path, capsys):
    bad = PREDICTIONS.with_columns(
        pl.when(pl.col("location") == 31).then(30).otherwise(pl.col("location")).alias("location")
    )
    code, out, _, pred = run_cli(tmp_path, TRUTH, bad)
    assert_rejected(capsys, code, out, str(pred), "column 'location'", "twice", "sample_id=3")


def test_duplicate_truth_row(tmp_path, capsys):
    bad = pl.concat([TRUTH, TRUTH.slice(1, 1)]).sort("sample_id")
    code, out, truth, _ = run_cli(tmp_path, bad, PREDICTIONS)
    assert_rejected(capsys, code, out, str(truth), "duplicate key", "sample_id=2")


@pytest.mark.parametrize("k", ["0", "-1"])
def test_k_below_one(tmp_path, capsys, k):
    code, out, _, _ = run_cli(tmp_path, TRUTH, PREDICTIONS, "--k", k)
    assert_rejected(capsys, code, out, "--k: must be integers >= 1")


def test_k_not_a_number(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        run_cli(tmp_path, TRUTH, PREDICTIONS, "--k", "x")
    assert exit_info.value.code == 2
    assert "expected integers like 1,5,10" in capsys.readouterr().err


def test_empty_truth(tmp_path, capsys):
    code, out, truth, _ = run_cli(tmp_path, TRUTH.clear(), PREDICTIONS.clear())
    assert_rejected(capsys, code, out, str(truth), "no rows")


def test_empty_predictions(tmp_path, capsys):
    code, out, _, pred = run_cli(tmp_path, TRUTH, PREDICTIONS.clear())
    assert_rejected(capsys, code, out, str(pred), "no rows")


def test_corrupt_parquet(tmp_path, capsys):
    code, out, _, pred = run_cli(tmp_path, TRUTH, b"this is not parquet at all" * 10)
    assert_rejected(capsys, code, out, str(pred), "Parquet")


def test_truncated_parquet(tmp_path, capsys):
    PREDICTIONS.write_parquet(tmp_path / "whole.parquet")
    data = (tmp_path / "whole.parquet").read_bytes()
    code, out, _, pred = run_cli(tmp_path, TRUTH, data[: len(data) // 2])
    assert_rejected(capsys, code, out, str(pred), "Parquet")


def test_predictions_without_truth(tmp_path, capsys):
    code, out, _, pred = run_cli(tmp_path, TRUTH.filter(pl.col("sample_id") != 2), PREDICTIONS)
    assert_rejected(capsys, code, out, str(pred), "not in the truth", "sample_id=2")


def test_predictions_without_truth_dropped_on_request(tmp_path, capsys):
    code, out, _, _ = run_cli(
        tmp_path, TRUTH.filter(pl.col("sample_id") != 2), PREDICTIONS, "--drop-unmatched"
    )
    assert code == 0
    summary = pl.read_parquet(out / "summary" / f"city={tmp_path.name}" / "model=pred")
    dropped = summary.filter(pl.col("metric") == "predictions_without_truth_dropped")
    assert dropped["value"][0] == 1


def test_truth_without_predictions_counts_as_miss(tmp_path, capsys):
    code, out, _, _ = run_cli(tmp_path, TRUTH, PREDICTIONS.filter(pl.col("sample_id") != 3))
    assert code == 0
    summary = dict(pl.read_parquet(out / "summary").select("metric", "value").iter_rows())
    assert summary["samples_without_predictions"] == 1
    assert summary["acc@1"] == pytest.approx(2 / 3)


def test_libcity_rejects_k_beyond_the_list(tmp_path, capsys):
    code, out, _, pred = run_cli(
        tmp_path, TRUTH, PREDICTIONS, "--k", "5", "--convention", "libcity"
    )
    assert_rejected(capsys, code, out, str(pred), "k=5 exceeds", "sample_id=1")


def test_unknown_metric(tmp_path, capsys):
    code, out, _, _ = run_cli(tmp_path, TRUTH, PREDICTIONS, "--metrics", "ndcg@k,bleu")
    assert_rejected(capsys, code, out, "unknown metric 'bleu'")


def test_error_in_a_late_chunk_leaves_no_output(tmp_path, capsys):
    """The bad sample is the last one, so earlier chunks were already scored and staged."""
    rows = pl.DataFrame({"sample_id": list(range(100)), "location": [1] * 100})
    predictions = pl.DataFrame(
        {"sample_id": list(range(100)), "location": [1] * 100, "score": [1.0] * 99 + [float("nan")]}
    )
    code, out, _, pred = run_cli(tmp_path, rows, predictions, "--chunk-rows", "7")
    assert_rejected(capsys, code, out, str(pred), "sample_id=99")
