"""Print-only runs: ``per_unit=False`` (and the command line without ``--out``) give the summary
alone, the same numbers, and hold no per-unit value: every chunk's per-unit table is let go as it
comes, so memory stays one chunk's whatever the input's size (peak RSS: BENCHMARKS.md,
``benchmarks/rss_print_only.py``)."""

from __future__ import annotations

import pytest

from mobeval.api import evaluate_logits, evaluate_nextloc, evaluate_recs, evaluate_trajectory
from mobeval.cli import main
from mobeval.engines import base
from mobeval.errors import ConfigError
from tests.conftest import REPO_ROOT

SAMPLES = REPO_ROOT / "data_samples"
CASES = {
    "nextloc": (
        evaluate_nextloc,
        SAMPLES / "nextloc/tky/truth.parquet",
        SAMPLES / "nextloc/tky/markov.parquet",
        {"k": [1, 5]},
    ),
    "trajectory": (
        evaluate_trajectory,
        SAMPLES / "humob/reference_test.csv.gz",
        SAMPLES / "humob/weekly_repeat.csv.gz",
        {},
    ),
    "recs": (
        evaluate_recs,
        SAMPLES / "recs/ratings.parquet",
        SAMPLES / "recs/mf.parquet",
        {"cutoffs": [5, 10]},
    ),
    "logits": (evaluate_logits, SAMPLES / "logits/gru.npy", SAMPLES / "logits/targets.npy", {}),
}


@pytest.fixture
def parts_kept(monkeypatch):
    """Every per-unit part handed to the in-memory sink during a run, as (section, rows)."""
    kept = []
    original = base._InMemory.add_part

    def add_part(self, section, frame):
        kept.append((section, frame.height))
        original(self, section, frame)

    monkeypatch.setattr(base._InMemory, "add_part", add_part)
    return kept


@pytest.mark.parametrize("family", sorted(CASES))
def test_summary_alone_same_numbers_nothing_held(family, parts_kept):
    evaluate, truth, predictions, options = CASES[family]
    whole = evaluate(truth, predictions, chunk_rows=5_000, **options)
    assert whole.per_unit is not None and whole.per_unit.height > 0
    assert parts_kept  # the check sees the parts of a run that keeps them
    parts_kept.clear()
    alone = evaluate(truth, predictions, chunk_rows=5_000, per_unit=False, **options)
    assert alone.summary.equals(whole.summary)
    assert alone.tables == {} and alone.per_unit is None and alone.outputs == {}
    assert parts_kept == []  # not one chunk's per-unit table was kept, even for a while


def test_per_unit_false_is_refused_where_it_cannot_hold(tmp_path):
    evaluate, truth, predictions, options = CASES["nextloc"]
    with pytest.raises(ConfigError, match="per_unit=False is for runs without out="):
        evaluate(truth, predictions, out=tmp_path / "out", per_unit=False, **options)
    assert not (tmp_path / "out").exists()
    with pytest.raises(ConfigError, match="per_unit must be True or False, got 'no'"):
        evaluate(truth, predictions, per_unit="no", **options)


def test_the_command_line_without_out_keeps_no_per_unit_value(parts_kept, capsys):
    _, truth, predictions, _ = CASES["nextloc"]
    code = main(
        ["nextloc", "--truth", str(truth), "--pred", str(predictions), "--k", "1,5", "--quiet"]
    )
    assert code == 0
    assert parts_kept == []
    printed = capsys.readouterr().out
    expected = evaluate_nextloc(truth, predictions, k=[1, 5]).value("acc@5")
    assert f"{expected:.6f}" in printed
