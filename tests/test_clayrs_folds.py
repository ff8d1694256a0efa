"""ClayRS's per-fold and mean system rows (``MetricEvaluator.eval_metrics``: ``sys - fold<i>``,
``sys - mean``, NaN folds left out of the mean) reproduced by ``compare --view folds`` over the
runs of one model, on ClayRS's own test inputs (tests/golden/clayrs_folds/, README there)."""

import json
import math
import subprocess
import sys

import pytest

from mobeval import api
from mobeval.compare import fold_rows
from mobeval.errors import ConfigError

METRICS = ["precision", "recall", "f1", "ndcg", "mrr", "map", "mae", "mse"]
TOL = 1e-9


def _score_folds(golden, out, folds):
    """Each fold a run of model ``sys`` (ClayRS's evaluator scores the users of both sides:
    require_same_users off; its metrics without a cutoff: the whole list), recorded in OUT's
    manifest as the command line records it."""
    options = {"metrics": METRICS, "k": None, "require_same_users": False}
    manifest = api.Manifest(out, {"command": "recs", **options})
    for i in folds:
        evaluation = api.evaluate_recs(
            golden / f"fold{i}_ratings.csv", golden / f"fold{i}_recs.csv",
            out=out, city="clayrs", model="sys", run=f"fold{i}", **options,
        )  # fmt: skip
        manifest.record(evaluation, options, "recs")


def _same(got, expected) -> bool:
    if expected is None:
        return math.isnan(got)
    return abs(got - expected) <= TOL


@pytest.mark.parametrize(("case", "folds"), [("folds_1_2", (1, 2)), ("folds_1_2_3", (1, 2, 3))])
def test_fold_and_mean_rows_are_clayrs(golden_dir, tmp_path, case, folds):
    golden = golden_dir / "clayrs_folds"
    expected = json.loads((golden / "expected.json").read_text())["cases"][case]["system"]
    _score_folds(golden, tmp_path, folds)
    table = fold_rows(tmp_path)
    assert table["run"].to_list() == [f"fold{i}" for i in folds] + ["mean"]
    assert table.columns == ["city", "model", "run", *METRICS]
    for row in table.iter_rows(named=True):
        want = expected[f"sys - {row['run']}"]
        bad = {m: (row[m], want[m]) for m in METRICS if not _same(row[m], want[m])}
        assert not bad, (row["run"], bad)


def test_the_command_line_prints_the_same_rows(golden_dir, tmp_path):
    golden = golden_dir / "clayrs_folds"
    expected = json.loads((golden / "expected.json").read_text())["cases"]["folds_1_2_3"]
    _score_folds(golden, tmp_path, (1, 2, 3))
    command = [sys.executable, "-m", "mobeval", "compare", str(tmp_path), "--view", "folds"]
    done = subprocess.run([*command, "--format", "json", "--metrics", "ndcg,mae"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    rows = json.loads(done.stdout)["rows"]
    assert [row["run"] for row in rows] == ["fold1", "fold2", "fold3", "mean"]
    for row in rows:
        want = expected["system"][f"sys - {row['run']}"]
        for metric in ("ndcg", "mae"):
            got = math.nan if row[metric] is None else row[metric]
            assert _same(got, want[metric]), (row, want)
    table = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    assert "city=clayrs: sys, each run and the mean over runs (NaN runs left out)" in table


def test_an_unknown_metric_is_refused(golden_dir, tmp_path):
    _score_folds(golden_dir / "clayrs_folds", tmp_path, (1,))
    with pytest.raises(ConfigError, match="no metric 'acc@1'"):
        fold_rows(tmp_path, metrics=["acc@1"])
