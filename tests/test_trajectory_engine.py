"""Trajectory scoring through the streaming engine: golden values for any chunk size and row order,
CSV / CSV.gz (header or not), bad input, the CLI and job files."""

import json

import numpy as np
import polars as pl
import pytest

from mobeval.api import evaluate_trajectory
from mobeval.cli import main
from mobeval.errors import InputError
from tests.conftest import GOLDEN, REPO_ROOT

RTOL = 1e-12
CASES = json.loads((GOLDEN / "geobleu" / "cases.json").read_text())["cases"]


def folder(name):
    return GOLDEN / "geobleu" / name


def assert_matches_expected(result, name, skipped=()):
    expected = pl.read_parquet(folder(name) / "expected.parquet").sort("uid")
    by_day = pl.read_parquet(folder(name) / "expected_by_day.parquet").sort("uid", "d")
    per_uid = result.tables["per_unit"].sort("uid")
    per_day = result.tables["per_day"].sort("uid", "d")
    assert per_uid["uid"].to_list() == expected["uid"].to_list()
    assert (
        per_day.select("uid", "d", "n_steps").rows() == by_day.select("uid", "d", "n_steps").rows()
    )
    for metric in ("geobleu", "dtw"):
        np.testing.assert_allclose(per_uid[metric], expected[metric], rtol=RTOL, atol=0)
        np.testing.assert_allclose(per_day[metric], by_day[metric], rtol=RTOL, atol=0)
    assert result.value("uids_skipped") == len(skipped)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
@pytest.mark.parametrize("chunk_rows", [97, 10**6])
def test_golden_through_the_engine(case, chunk_rows):
    name = case["name"]
    skipped = case.get("error_uids", {})
    result = evaluate_trajectory(
        folder(name) / "reference.parquet",
        folder(name) / "generated.parquet",
        chunk_rows=chunk_rows,
        on_mismatch="skip" if skipped else "error",
    )
    assert_matches_expected(result, name, skipped)
    if "bulk_geobleu" in case and not skipped:
        assert result.value("geobleu") == pytest.approx(case["bulk_geobleu"], rel=RTOL)
        assert result.value("dtw") == pytest.approx(case["mean_dtw"], rel=RTOL)


def test_mismatched_uids_are_all_listed_with_their_count():
    case = next(c for c in CASES if c.get("error_uids"))
    with pytest.raises(InputError) as info:
        evaluate_trajectory(
            folder(case["name"]) / "reference.parquet",
            folder(case["name"]) / "generated.parquet",
            chunk_rows=50,
        )
    message = str(info.value)
    assert f"{len(case['error_uids'])} uid(s)" in message
    for uid in case["error_uids"]:
        assert f"uid {uid}:" in message


def test_csv_gz_with_and_without_header_equal_parquet(tmp_path):
    name = "random_realistic"
    reference = pl.read_parquet(folder(name) / "reference.parquet")
    generated = pl.read_parquet(folder(name) / "generated.parquet")
    reference.write_csv(tmp_path / "reference.csv.gz", compression="gzip")
    generated.write_csv(tmp_path / "generated.csv.gz", compression="gzip", include_header=False)
    from_csv = evaluate_trajectory(
        tmp_path / "reference.csv.gz", tmp_path / "generated.csv.gz", chunk_rows=5000
    )
    assert_matches_expected(from_csv, name)


def test_out_of_grid_rows_are_counted_then_scored_on_request():
    reference = pl.read_parquet(folder("random_realistic") / "reference.parquet")
    generated = pl.read_parquet(folder("random_realistic") / "generated.parquet")
    masked = generated.with_columns(
        pl.when(pl.col("uid") == 1003).then(999).otherwise(pl.col("x")).alias("x")
    )
    n_masked = generated.filter(pl.col("uid") == 1003).height
    with pytest.raises(InputError, match=f"{n_masked} row"):
        evaluate_trajectory(reference, masked, chunk_rows=3000)
    scored = evaluate_trajectory(reference, masked, chunk_rows=3000, out_of_grid="score")
    assert scored.value("rows_out_of_grid") == n_masked
    per_uid = scored.tables["per_unit"].filter(pl.col("uid") == 1003)
    assert per_uid["geobleu"][0] == 0.0


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda f: f.with_columns(pl.col("x").cast(pl.Float64) + 0.5), "non-integer"),
        (lambda f: pl.concat([f, f.head(1)]), "duplicate (uid, d, t)"),
        (lambda f: f.drop("y"), "column 'y'"),
        (lambda f: f.clear(), "no rows"),
    ],
)
def test_bad_generated_input(tmp_path, mutate, message):
    reference = pl.read_parquet(folder("readme_bulk_example") / "reference.parquet")
    generated = pl.read_parquet(folder("readme_bulk_example") / "generated.parquet")
    path = tmp_path / "generated.parquet"
    mutate(generated).write_parquet(path)
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        evaluate_trajectory(reference, path)


def _cli(case: str, *more: str) -> int:
    """``mobeval trajectory`` on a golden case's two files (quiet), with ``more`` arguments."""
    files = ["--reference", str(folder(case) / "reference.parquet")]
    files += ["--generated", str(folder(case) / "generated.parquet")]
    return main(["trajectory", *files, *more, "--quiet"])


def test_cli_writes_every_section(tmp_path, capsys):
    out = tmp_path / "out"
    code = _cli("readme_bulk_example", "--city", "X", "--model", "m", "--out", str(out))
    assert code == 0
    for section in ("summary", "per_unit", "per_day"):
        assert (out / section / "city=X" / "model=m").is_dir()
    summary = pl.read_parquet(out / "summary" / "city=X" / "model=m")
    case = next(c for c in CASES if c["name"] == "readme_bulk_example")
    value = summary.filter(pl.col("metric") == "geobleu")["value"][0]
    assert value == pytest.approx(case["bulk_geobleu"], rel=RTOL)
    assert "geobleu" in capsys.readouterr().out


def test_cli_rejects_a_mismatch_with_no_output(tmp_path, capsys):
    out = tmp_path / "out"
    code = _cli("mismatched_steps", "--out", str(out))
    assert code == 2
    assert "uid 11001" in capsys.readouterr().err
    assert not (out / "summary").exists()


def test_sample_trajectory_job_and_validator(tmp_path, capsys):
    code = main(
        [
            "run",
            str(REPO_ROOT / "jobs" / "trajectory_sample.toml"),
            "--out",
            str(tmp_path / "out"),
            "--quiet",
        ]
    )
    assert code == 0
    assert (tmp_path / "out" / "per_day" / "city=test" / "model=weekly_repeat").is_dir()
    samples = REPO_ROOT / "data_samples" / "humob"
    code = main(
        [
            "validate",
            "--task",
            "2025:test",
            "--dataset",
            str(samples / "city_test_challengedata.csv.gz"),
            "--submission",
            str(samples / "weekly_repeat.csv.gz"),
        ]
    )
    assert code == 0
    assert "Validation finished without errors!" in capsys.readouterr().out


@pytest.mark.parametrize("order", [None, ["uid"], ["uid", "d"], ["uid", "t"], ["uid", "d", "t"]])
def test_checked_rows_are_in_uid_d_t_order_whatever_the_input_order(order):
    """The check sorts a chunk only when it is out of (uid, d, t) order: a chunk sorted by uid
    alone, by (uid, d), by (uid, t), fully or not at all comes out as the sorted frame."""
    from mobeval.tasks.trajectory import _clean

    rng = np.random.default_rng(7)
    steps = rng.choice(4 * 3 * 6, size=40, replace=False)  # distinct (uid, d, t)
    frame = pl.DataFrame(
        {"uid": steps // 18, "d": steps // 6 % 3, "t": steps % 6, "x": steps, "y": steps + 1}
    ).sample(fraction=1.0, shuffle=True, seed=1)
    if order:
        frame = frame.sort(order, maintain_order=True)
    expected = sorted(frame.iter_rows())
    assert _clean(frame, None, "generated").rows() == expected


def test_uids_out_of_order_stream_against_the_reference_in_memory(monkeypatch):
    from tests.test_buckets import _paths_taken

    name = "random_realistic"
    reference = pl.read_parquet(folder(name) / "reference.parquet")
    generated = pl.read_parquet(folder(name) / "generated.parquet")
    reference = reference.filter(
        pl.col("uid").is_in(reference["uid"].unique().sort()[:150].to_list())
    )
    uids = generated["uid"].unique().shuffle(seed=3)  # each uid's rows together, in their order
    order = pl.DataFrame({"uid": uids, "_at": pl.int_range(len(uids), eager=True)})
    grouped = generated.join(order, on="uid").sort("_at", maintain_order=True).drop("_at")
    whole = evaluate_trajectory(reference, generated, chunk_rows=10**6, on_mismatch="skip")
    taken = _paths_taken(monkeypatch)
    again = evaluate_trajectory(reference, grouped, chunk_rows=reference.height, on_mismatch="skip")
    assert taken == ["grouped"]
    assert again.value("uids_skipped") == whole.value("uids_skipped") == 50
    for table in ("per_unit", "per_day"):
        keys = ["uid"] if table == "per_unit" else ["uid", "d"]
        assert again.tables[table].sort(keys).equals(whole.tables[table].sort(keys))
    assert again.summary.equals(whole.summary)
