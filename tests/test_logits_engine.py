"""Logits through evaluate_logits and the CLI: golden values for any chunk size, .npy / Parquet /
in-memory inputs alike, outputs written whole or not at all, bad input, and the sample job."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest

from mobeval.api import evaluate_logits
from mobeval.cli import main
from tests.conftest import GOLDEN, REPO_ROOT
from tests.test_logits_golden import _TIES, TOL, _metric, scored_as_expected

FOLDER = GOLDEN / "ranking" / "logits_basic"
SAMPLES = REPO_ROOT / "data_samples" / "logits"


@pytest.mark.parametrize("ties", ["optimistic", "pessimistic", "index"])
@pytest.mark.parametrize("chunk_rows", [200 * 7, 10**8])
def test_golden_through_evaluate_logits(ties, chunk_rows):
    expected = json.loads((FOLDER / "expected.json").read_text())["expected"]
    result = evaluate_logits(**scored_as_expected(FOLDER, ties), chunk_rows=chunk_rows)
    checked = 0
    for entry in expected:
        if _TIES.get(entry["system"], "optimistic") != ties:
            continue
        assert abs(result.value(_metric(entry)) - entry["value"]) <= TOL, entry
        checked += 1
    assert checked
    assert result.per_unit["row"].to_list() == list(range(2000))


def plain_python_scores(logits: np.ndarray, targets: np.ndarray, k: int) -> dict[str, float]:
    """acc@k, mrr and ndcg@k with the optimistic rank (1 + classes scored strictly higher)."""
    acc = rr = dcg = 0.0
    for row, target in zip(logits.tolist(), targets.tolist(), strict=True):
        rank = 1 + sum(1 for value in row if value > row[target])
        acc += rank <= k
        rr += 1.0 / rank
        dcg += 1.0 / math.log2(rank + 1) if rank <= k else 0.0
    n = len(targets)
    return {f"acc@{k}": acc / n, "mrr": rr / n, f"ndcg@{k}": dcg / n}


def test_sample_against_a_plain_python_oracle():
    logits, targets = np.load(SAMPLES / "gru.npy"), np.load(SAMPLES / "targets.npy")
    want = plain_python_scores(logits, targets, 5)
    result = evaluate_logits(SAMPLES / "gru.npy", SAMPLES / "targets.npy", k=[5], chunk_rows=999)
    for metric, value in want.items():
        assert result.value(metric) == pytest.approx(value, abs=1e-12), metric


def test_same_bits_for_any_chunk_size_and_any_input_form(tmp_path):
    logits, targets = np.load(SAMPLES / "gru.npy"), np.load(SAMPLES / "targets.npy")
    first = evaluate_logits(SAMPLES / "gru.npy", SAMPLES / "targets.npy")
    # float32 in both forms: cross-entropy is computed in the logits' precision
    pl.DataFrame(
        {"logits": pl.Series(logits.tolist(), dtype=pl.List(pl.Float32)), "target": targets}
    ).write_parquet(tmp_path / "l.parquet")
    pl.DataFrame({"target": targets}).write_parquet(tmp_path / "targets.parquet")
    for chunk_rows in (80 * 7, 80 * 333 + 5, 10**8):
        for inputs in (
            (SAMPLES / "gru.npy", SAMPLES / "targets.npy"),
            (logits, targets),
            (str(tmp_path / "l.parquet"), "target"),
            (tmp_path / "l.parquet", tmp_path / "targets.parquet"),
        ):
            again = evaluate_logits(*inputs, chunk_rows=chunk_rows)
            assert again.summary.equals(first.summary), (chunk_rows, inputs)
            assert again.per_unit.equals(first.per_unit), (chunk_rows, inputs)


def test_outputs_are_written_whole(tmp_path):
    result = evaluate_logits(
        SAMPLES / "gru.npy", SAMPLES / "targets.npy", out=tmp_path, city="c", chunk_rows=8000
    )
    assert result.model == "gru"
    assert set(result.outputs) == {"per_unit", "summary"}
    per_unit = pl.read_parquet(tmp_path / "per_unit" / "city=c" / "model=gru")
    assert per_unit.height == 1000
    assert len(list((tmp_path / "per_unit" / "city=c" / "model=gru").iterdir())) == 10
    summary = pl.read_parquet(tmp_path / "summary" / "city=c" / "model=gru")
    assert summary.equals(result.summary)


def write_bad(tmp_path, name: str) -> tuple[str, str]:
    """(logits, targets) arguments of a broken input named ``name``."""
    logits, targets = np.load(SAMPLES / "gru.npy"), np.load(SAMPLES / "targets.npy")
    good_targets = str(SAMPLES / "targets.npy")
    if name == "ragged":
        rows = logits.tolist()
        rows[700] = rows[700][:79]
        path = tmp_path / "ragged.parquet"
        pl.DataFrame({"logits": rows, "target": targets}).write_parquet(path)
        return str(path), "target"
    if name == "out_of_range":
        targets[640] = 80
        np.save(tmp_path / "targets.npy", targets)
        return str(SAMPLES / "gru.npy"), str(tmp_path / "targets.npy")
    if name == "integer_logits":
        np.save(tmp_path / "int.npy", (logits * 10).astype(np.int32))
        return str(tmp_path / "int.npy"), good_targets
    if name == "nan_logits":
        logits[333, 5] = np.nan
        np.save(tmp_path / "nan.npy", logits)
        return str(tmp_path / "nan.npy"), good_targets
    assert name == "fewer_targets"
    np.save(tmp_path / "targets.npy", targets[:-1])
    return str(SAMPLES / "gru.npy"), str(tmp_path / "targets.npy")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "ragged",
            "ragged.parquet: column 'logits': row width differs from the first row's 80 "
            "(first offending key: row 700)",
        ),
        (
            "out_of_range",
            "targets.npy: target 80 outside [0, 80) (the logits have 80 classes) "
            "(first offending key: row 640)",
        ),
        ("integer_logits", "int.npy: logits must be float32 or float64, not int32"),
        ("nan_logits", "nan.npy: NaN or +inf in the logits row (first offending key: row 333)"),
        ("fewer_targets", "targets.npy: 1000 logits rows but 999 targets"),
    ],
)
def test_bad_input_through_the_cli(tmp_path, capsys, name, message):
    logits, targets = write_bad(tmp_path, name)
    out = tmp_path / "out"
    argv = ["logits", "--logits", logits, "--targets", targets, "--out", str(out), "--quiet"]
    assert main([*argv, "--chunk-rows", "8000"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("mobeval: error: ") and message in error
    for section in ("summary", "per_unit"):
        assert not (out / section).exists()


def test_cli_prints_and_records(tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["logits", "--logits", str(SAMPLES / "popularity.npy")]
    argv += ["--targets", str(SAMPLES / "targets.npy"), "--k", "1,5", "--ties", "average"]
    assert main([*argv, "--percent", "--ignore-target", "0", "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "acc@5" in printed and "popularity" in printed
    want = evaluate_logits(
        SAMPLES / "popularity.npy",
        SAMPLES / "targets.npy",
        k=[1, 5],
        ties="average",
        percent=True,
        ignore_target=0,
    )
    summary = pl.read_parquet(out / "summary" / f"city={SAMPLES.name}" / "model=popularity")
    assert summary.equals(want.summary)
    assert want.value("acc@5") > 1  # in percent
    n_zero = int((np.load(SAMPLES / "targets.npy") == 0).sum())
    assert summary["n"][0] == 1000 - n_zero
    entry = json.loads((out / "manifest.json").read_text())["results"][
        f"city={SAMPLES.name}/model=popularity"
    ]
    assert entry["task"] == "logits" and entry["config"]["ties"] == "average"


def test_sample_logits_job_and_resume(tmp_path, capsys):
    job = str(REPO_ROOT / "jobs" / "logits_sample.toml")
    out = str(tmp_path / "out")
    assert main(["run", job, "--out", out, "--quiet"]) == 0
    assert "city=sample" in capsys.readouterr().out
    summary = pl.read_parquet(tmp_path / "out" / "summary" / "city=sample" / "model=gru")
    want = evaluate_logits(SAMPLES / "gru.npy", SAMPLES / "targets.npy", percent=True)
    assert summary.equals(want.summary)
    assert main(["run", job, "--out", out, "--quiet", "--resume"]) == 0
    assert capsys.readouterr().err.count("complete, resumed from OUT (--resume)") == 2
