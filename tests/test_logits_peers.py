"""Logits scores against the peers' own tests (issue 9: items 5, 6 and the logits part of 9).

* scikit-learn 1.9.1 (``scikit-learn/scikit-learn``): cases taken from
  ``sklearn/metrics/tests/test_ranking.py`` and the ``f1_score`` docstring, with the values their
  authors wrote. ``--convention sklearn`` models ``labels=range(C)``: the class of column j is j.
* ``--ties average`` is one thing in both task families: the expectation of each metric over every
  order of the tied candidates, checked against a plain oracle that enumerates those orders.
* The README's logits commands, run as written.
"""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from mobeval.api import evaluate_nextloc
from mobeval.cli import main
from mobeval.errors import InputError
from mobeval.tasks.logits import score_logits

REPO_ROOT = Path(__file__).resolve().parents[1]


def values(x, y, k=(1,), convention="sklearn", **options) -> dict[str, float]:
    summary = score_logits(
        np.asarray(x, dtype=np.float64), np.asarray(y), k=k, convention=convention, **options
    ).summary
    return dict(zip(summary["metric"], summary["value"], strict=True))


# --- top_k_accuracy_score -------------------------------------------------------------------

# test_ranking.py::test_top_k_accuracy_score
SCORES_NO_TIES = [
    [0.4, 0.3, 0.2, 0.1],
    [0.1, 0.3, 0.4, 0.2],
    [0.4, 0.1, 0.2, 0.3],
    [0.3, 0.2, 0.4, 0.1],
]


@pytest.mark.parametrize("k, true_score", [(1, 0.25), (2, 0.5), (3, 0.75)])
def test_top_k_accuracy_score(k, true_score):
    got = values(SCORES_NO_TIES, [0, 1, 2, 3], k=(k,), metrics="acc@k")
    assert got[f"acc@{k}"] == pytest.approx(true_score)


# test_ranking.py::test_top_k_accuracy_score_ties: "highest indices labels are chosen first"
SCORES_TIES = [[5, 5, 7, 0], [1, 5, 5, 5], [0, 0, 3, 3], [1, 1, 1, 1]]


@pytest.mark.parametrize("k, true_score", [(1, 0.25), (2, 0.5), (3, 1.0)])
def test_top_k_accuracy_score_ties(k, true_score):
    got = values(SCORES_TIES, [0, 1, 2, 3], k=(k,), metrics="acc@k")
    assert got[f"acc@{k}"] == pytest.approx(true_score)
    # the same tie rule by name, under any convention
    named = values(
        SCORES_TIES, [0, 1, 2, 3], k=(k,), metrics="acc@k", convention="mobeval", ties="index_desc"
    )
    assert named[f"acc@{k}"] == pytest.approx(true_score)


def test_top_k_tie_rule_is_not_the_default_one():
    # the lower-index / optimistic rules give other numbers on the same case (the test can fail)
    assert values(SCORES_TIES, [0, 1, 2, 3], metrics="acc@1", convention="mobeval")["acc@1"] == 0.75
    assert values(SCORES_TIES, [0, 1, 2, 3], metrics="acc@1", ties="index")["acc@1"] == 0.5


# test_ranking.py::test_top_k_accuracy_score_multiclass_with_labels (labels = [0, 1, 2, 3], k=2)
@pytest.mark.parametrize(
    "y_true, true_score", [([0, 1, 1, 2], 0.75), ([0, 1, 1, 1], 0.5), ([1, 1, 1, 1], 0.5)]
)
def test_top_k_accuracy_score_with_labels(y_true, true_score):
    assert values(SCORES_NO_TIES, y_true, k=(2,), metrics="acc@k")["acc@2"] == pytest.approx(
        true_score
    )


# test_ranking.py::test_top_k_accuracy_score_warning: k >= n_classes gives a perfect score
@pytest.mark.parametrize("k", [4, 5])
def test_top_k_accuracy_score_k_beyond_classes(k):
    scores = [
        [0.4, 0.3, 0.2, 0.1],
        [0.1, 0.4, 0.3, 0.2],
        [0.2, 0.1, 0.4, 0.3],
        [0.3, 0.2, 0.1, 0.4],
    ]
    assert values(scores, [0, 1, 2, 3], k=(k,), metrics="acc@k")[f"acc@{k}"] == 1.0


def test_two_classes_refused_as_scikit_learn_refuses_them():
    # top_k_accuracy_score raises "`y_true` is binary while y_score is 2d with 2 classes" for any
    # two-column score matrix (test_ranking.py::test_top_k_accuracy_score_error has the 3-column
    # form); its binary case (test_top_k_accuracy_score_binary) thresholds a 1-D score instead
    x = [[0.2, 0.8], [0.6, 0.4]]
    with pytest.raises(InputError, match="fewer than 3 columns"):
        values(x, [1, 0], metrics="acc@1")
    # other metrics, and other conventions, score two classes
    assert values(x, [1, 0], metrics="mrr")["mrr"] == 1.0
    assert values(x, [1, 0], metrics="acc@1", convention="mobeval")["acc@1"] == 1.0


# --- label_ranking_average_precision_score (one relevant label: mean reciprocal rank) ----------

# test_ranking.py::check_lrap_toy, the cases with one relevant label (ties included)
LRAP_TOY = [
    ([0, 0, 1], [0.25, 0.5, 0.75], 1),
    ([0, 1, 0], [0.25, 0.5, 0.75], 1 / 2),
    ([1, 0, 0], [0.25, 0.5, 0.75], 1 / 3),
    ([0, 0, 1], [0.75, 0.5, 0.25], 1 / 3),
    ([0, 1, 0], [0.75, 0.5, 0.25], 1 / 2),
    ([1, 0, 0], [0.75, 0.5, 0.25], 1),
    ([0, 0, 1], [0.5, 0.75, 0.25], 1 / 3),
    ([0, 1, 0], [0.5, 0.75, 0.25], 1),
    ([1, 0, 0], [0.5, 0.75, 0.25], 1 / 2),
    ([1, 0], [0.5, 0.5], 0.5),
    ([0, 1], [0.5, 0.5], 0.5),
    ([0, 0, 1], [0.25, 0.5, 0.5], 0.5),
    ([0, 1, 0], [0.25, 0.5, 0.5], 0.5),
    ([1, 0, 0], [0.25, 0.5, 0.5], 1 / 3),
]


@pytest.mark.parametrize("y_true, y_score, expected", LRAP_TOY)
def test_mrr_is_lrap_of_one_relevant_label(y_true, y_score, expected):
    target = y_true.index(1)
    assert values([y_score], [target], metrics="mrr")["mrr"] == pytest.approx(expected)


# test_ranking.py::check_lrap_only_ties: all scores tied, one relevant label -> 1 / n_labels
@pytest.mark.parametrize("n_labels", range(2, 10))
def test_mrr_only_ties(n_labels):
    for pos in range(n_labels - 1):
        got = values(np.ones((1, n_labels)), [pos], metrics="mrr")["mrr"]
        assert got == pytest.approx(1 / n_labels)


# --- ndcg_score on one-hot targets ----------------------------------------------------------


def test_ndcg_ties_average_the_gain_over_the_tie_group():
    # test_ranking.py::test_dcg_ties: with every score tied, DCG = discounts.sum() * y_true.mean();
    # with the scores of the last two labels raised, DCG = discounts[:2].sum() * mean(their gains)
    # + discounts[2:].sum() * mean(the other gains). One-hot y_true: IDCG = 1.
    discounts = 1 / np.log2(np.arange(2, 7))
    for target in range(5):
        got = values(np.zeros((1, 5)), [target], k=(5,), metrics="ndcg@k")["ndcg@5"]
        assert got == pytest.approx(discounts.sum() / 5)
    raised = np.zeros((1, 5))
    raised[0, 3:] = 1
    for target in range(5):
        want = discounts[:2].sum() / 2 if target >= 3 else discounts[2:].sum() / 3
        got = values(raised, [target], k=(5,), metrics="ndcg@k")["ndcg@5"]
        assert got == pytest.approx(want)


def test_ndcg_toy_examples():
    # test_ranking.py::test_ndcg_toy_examples: y_true = 3 * eye(7)[:5], scores 6..0 in every row;
    # per-sample nDCG 1 / log2(arange(2, 7)), ndcg_score their mean
    y_score = np.tile(np.arange(6, -1, -1), (5, 1))
    got = values(y_score, [0, 1, 2, 3, 4], k=(7,), metrics="ndcg@k")["ndcg@7"]
    assert got == pytest.approx((1 / np.log2(np.arange(2, 7))).mean())


# --- f1_score -------------------------------------------------------------------------------


def test_f1_docstring_example():
    # sklearn.metrics.f1_score docstring: y_true [0, 1, 2, 0, 1, 2], y_pred [0, 2, 1, 0, 0, 1]:
    # per class [0.8, 0, 0], macro 0.267, weighted 0.267
    y_pred = [0, 2, 1, 0, 0, 1]
    x = np.eye(3)[y_pred]  # argmax = y_pred
    got = values(x, [0, 1, 2, 0, 1, 2], metrics="f1_macro,f1_weighted")
    assert got["f1_macro"] == pytest.approx(0.8 / 3)
    assert got["f1_weighted"] == pytest.approx(0.8 / 3)


# --- --ties average is the same expectation in both task families --------------------------


def expectation(row: list[float], target: int, metric: str) -> float:
    """Mean of the metric over every order of the classes tied with the target."""
    greater = sum(v > row[target] for v in row)
    tied = [j for j, v in enumerate(row) if v == row[target]]
    outcomes = []
    for order in itertools.permutations(tied):
        r = greater + order.index(target) + 1
        name, _, k = metric.partition("@")
        if name == "acc":
            outcomes.append(1.0 if r <= int(k) else 0.0)
        elif name == "mrr":
            outcomes.append(1 / r)
        else:
            outcomes.append(1 / math.log2(r + 1) if r <= int(k) else 0.0)
    return math.fsum(outcomes) / len(outcomes)


def test_four_way_tie():
    # the example: the target tied with three others for first place
    got = values([[1.0, 1.0, 1.0, 1.0, 0.0]], [2], k=(1,), ties="average", convention="mobeval")
    assert got["acc@1"] == pytest.approx(0.25)
    assert got["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 4) / 4)


def test_average_ties_agree_across_families_and_with_the_oracle():
    rng = np.random.default_rng(9)
    n, c = 60, 7
    x = rng.integers(0, 3, size=(n, c)).astype(np.float64)  # ties of up to 7 classes
    y = rng.integers(0, c, size=n)
    metrics = ["acc@1", "acc@3", "mrr", "ndcg@3"]
    logits = score_logits(x, y, k=(1, 3), metrics=metrics, ties="average", per_sample=True)
    # the same data as next-location candidate lists: location j scored x[i, j]
    rows = [(i, j, float(x[i, j])) for i in range(n) for j in range(c)]
    predictions = pl.DataFrame(
        rows,
        schema={"sample_id": pl.Int64, "location": pl.Int64, "score": pl.Float64},
        orient="row",
    )
    truth = pl.DataFrame({"sample_id": list(range(n)), "location": y.tolist()})
    nextloc = evaluate_nextloc(truth, predictions, k=[1, 3], metrics=metrics, ties="average")
    per_unit = nextloc.per_unit.sort("sample_id")
    for name in metrics:
        oracle = [expectation(x[i].tolist(), int(y[i]), name) for i in range(n)]
        np.testing.assert_allclose(logits.per_sample[name].to_numpy(), oracle, rtol=0, atol=1e-15)
        np.testing.assert_allclose(per_unit[name].to_numpy(), oracle, rtol=0, atol=1e-15)
        assert logits.summary.filter(pl.col("metric") == name)["value"][0] == nextloc.value(name)


# --- the logits page's commands (docs/logits.md) ----------------------------------------------


def readme_logits_section() -> str:
    """The documentation's logits page, where the README's logits section moved."""
    return (REPO_ROOT / "docs" / "logits.md").read_text()


def printed_values(text: str) -> dict[str, float]:
    return {m: float(v) for m, v in re.findall(r"│ (\w+(?:@\d+)?)\s+┆ ([\d.]+)\s+│", text)}


def test_readme_logits_commands_as_written(tmp_path, capsys, monkeypatch):
    section = readme_logits_section()
    command = re.search(r"```bash\n(mobeval logits .*?)\n```", section, re.S).group(1)
    argv = command.replace("\\\n", " ").split()[1:]
    table = printed_values(section)
    assert len(table) == 10
    monkeypatch.chdir(REPO_ROOT)
    out = tmp_path / "out"
    argv[argv.index("--out") + 1] = str(out)
    assert main(argv) == 0
    assert printed_values(capsys.readouterr().out) == table
    # "--metrics acc@k,mrr picks some": acc@k expands to every --k
    assert "`--metrics acc@k,mrr`" in section
    assert main([*argv, "--metrics", "acc@k,mrr", "--out", str(tmp_path / "some")]) == 0
    some = printed_values(capsys.readouterr().out)
    assert some == {name: table[name] for name in ("acc@1", "acc@5", "acc@10", "mrr")}
