"""ClayRS's two statistical tests as compare's ``ttest-ind`` and ``ranksums``: scipy's
``ttest_ind`` / ``ranksums`` on random inputs (1e-12 relative), ClayRS 0.5.1's own ``Ttest`` and
``Wilcoxon`` on the cases of its test_statistical_tests.py (golden values it returned,
tests/golden/clayrs_stats), and compare's columns and corrections on a scored OUT."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

scipy_stats = pytest.importorskip("scipy.stats")

from conftest import GOLDEN  # noqa: E402

from mobeval.cli import main  # noqa: E402
from mobeval.compare import adjust, compare  # noqa: E402
from mobeval.compare.significance import pooled_t, rank_sum  # noqa: E402
from tests.helpers import logits_out, per_unit_column  # noqa: E402

GOLD = json.loads((GOLDEN / "clayrs_stats" / "expected.json").read_text())
MODELS = ["a", "b", "c"]


def _same(ours: float, theirs: float) -> bool:
    """Equal to 1e-12 relative, NaN to NaN."""
    if math.isnan(theirs):
        return math.isnan(ours)
    return math.isclose(ours, theirs, rel_tol=1e-12, abs_tol=0.0)


def _ours(test: str, a, b) -> float:
    """Our p-value of ``test`` (``ttest-ind`` or ``ranksums``) of two samples, the t from the
    samples' sizes, means and squared deviations as compare hands them."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if test == "ranksums":
        return rank_sum(a, b)
    with np.errstate(invalid="ignore"):
        ma, mb = (np.mean(a), np.mean(b)) if a.size and b.size else (math.nan, math.nan)
    return pooled_t(a.size, ma, np.sum((a - ma) ** 2), b.size, mb, np.sum((b - mb) ** 2))


def _scipy(test: str, a, b) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        function = scipy_stats.ranksums if test == "ranksums" else scipy_stats.ttest_ind
        return float(function(a, b).pvalue)


def _samples():
    rng = np.random.default_rng(23)
    for n in (2, 3, 5, 17, 60, 400):
        for m in (n, max(2, n // 2)):
            yield rng.normal(0.4, 0.2, n), rng.normal(0.45, 0.3, m)  # continuous
            yield np.round(rng.uniform(0, 1, n), 1), np.round(rng.uniform(0, 1, m), 1)  # ties
            yield rng.integers(0, 2, n).astype(float), rng.integers(0, 2, m).astype(float)
    yield np.ones(5), np.ones(5)  # both constant and equal: 0/0
    yield np.zeros(4), np.ones(4)  # constant and different
    yield np.array([0.3]), np.array([0.5])  # no degree of freedom
    yield np.array([1e9 + 0.1, 1e9 + 0.3, 1e9]), np.array([1e9 + 0.2, 1e9 - 0.1, 1e9 + 0.4])


@pytest.mark.parametrize("test", ["ttest-ind", "ranksums"])
def test_unpaired_tests_equal_scipy(test):
    for a, b in _samples():
        ours, theirs = _ours(test, a, b), _scipy(test, a, b)
        assert _same(ours, theirs), (test, a, b, ours, theirs)


@pytest.mark.parametrize("case", sorted(GOLD["cases"]))
@pytest.mark.parametrize(("test", "clayrs"), [("ttest-ind", "Ttest"), ("ranksums", "Wilcoxon")])
def test_equal_clayrs_ttest_and_wilcoxon_on_its_own_cases(case, test, clayrs):
    """ClayRS's PairedTest: the users both systems have, a user left out where either value is
    NaN, then its test on the two columns (systems in ClayRS's order: the earlier first)."""
    gold = GOLD["cases"][case]
    systems = gold["systems"]
    assert gold[clayrs]
    for pair, metrics in gold[clayrs].items():
        first, second = (systems[int(i)] for i in pair.split(":"))
        for metric, expected in metrics.items():
            if metric not in first or metric not in second:
                assert math.isnan(expected["pvalue"])
                continue
            theirs = dict(zip(second["user_id"], second[metric], strict=True))
            rows = [
                (x, theirs[user])
                for user, x in zip(first["user_id"], first[metric], strict=True)
                if user in theirs and x is not None and theirs[user] is not None
            ]
            a, b = [x for x, _ in rows], [y for _, y in rows]
            ours = _ours(test, a, b) if rows else math.nan
            assert _same(ours, expected["pvalue"]), (case, pair, metric, ours, expected)


@pytest.fixture(scope="module")
def three_models(tmp_path_factory):
    """A logits OUT of three models on 50 rows (one city)."""
    return logits_out(
        tmp_path_factory.mktemp("three"),
        MODELS,
        rows=50,
        classes=8,
        seed=5,
        step=0.5,
        cutoffs=(1, 3),
    )


def test_compare_unpaired_columns_equal_scipy_and_are_corrected(three_models):
    tests = "paired-t,ttest-ind,ranksums"
    table = compare(three_models, tests=tests, metrics="acc@3,mrr", resamples=0, log=None)
    assert table.height == 6
    for row in table.iter_rows(named=True):
        a, b = (
            per_unit_column(three_models, row[side], row["metric"])
            for side in ("baseline", "model")
        )
        assert _same(row["p_ttest_ind"], _scipy("ttest-ind", a, b))
        assert _same(row["p_ranksums"], _scipy("ranksums", a, b))
    # one family (the city's): the three tests' p-values corrected together
    raw = table.select("p_t", "p_ttest_ind", "p_ranksums").to_numpy().T.ravel()
    expected = adjust(raw, "holm").reshape(3, -1)
    for i, column in enumerate(("p_t", "p_ttest_ind", "p_ranksums")):
        assert np.array_equal(table[f"{column}_corrected"].to_numpy(), expected[i])
    assert (table["family_size"] == 18).all()
    alone = compare(three_models, tests="wilcoxon", metrics="mrr", resamples=0, log=None)
    assert alone["p_ttest_ind"].is_null().all() and "p_ranksums_corrected" not in alone.columns


def test_cli_prints_the_unpaired_tests(three_models, capsys):
    args = ["compare", str(three_models), "--tests", "ttest-ind,ranksums", "--metrics", "mrr"]
    assert main([*args, "--pairs", "a:c", "--resamples", "0"]) == 0
    printed = capsys.readouterr().out
    assert "p t-ind" in printed and "p rank-sum" in printed
    assert "p t-test" not in printed and "p wilcoxon" not in printed


@pytest.mark.parametrize(("test", "unpaired"), [("ttest-ind", True), ("paired-t", False)])
def test_the_reports_methods_say_whether_the_test_was_paired(three_models, test, unpaired):
    from mobeval.report import Report

    report = Report(three_models, metrics="mrr", baseline="a", test=test, plots=False)
    text = "\n".join(report.comparison_text())
    assert ("tested unpaired on the units both share" in text) == unpaired
    assert ("paired by" in text) == (not unpaired)
