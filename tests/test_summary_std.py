"""The ``std`` column of every summary: the population standard deviation (ddof 0, numpy.std as
ranx's ``return_std``) of the per-unit values, exact, the same bits for any chunking; null for
counts and for values that are not a mean over units; an old summary without it still prints."""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import polars as pl
import pytest

from mobeval.api import evaluate_nextloc, evaluate_recs
from mobeval.cli import print_summaries
from mobeval.kernels.exact_sum import ExactColumnSums, sqrt_ratio
from tests.conftest import REPO_ROOT


def exact_pstdev(values: list[float]) -> float:
    """The oracle: the variance in exact rationals, its root rounded once (checked below)."""
    xs = [Fraction(v) for v in values]
    mean = sum(xs) / len(xs)
    var = sum((x - mean) ** 2 for x in xs) / len(xs)
    return sqrt_of(var)


def sqrt_of(ratio: Fraction) -> float:
    """The float nearest sqrt(ratio), by bisection over floats (plain, slow, obviously right)."""
    lo, hi = 0.0, max(1.0, float(ratio))
    while math.nextafter(lo, math.inf) < hi:
        mid = lo + (hi - lo) / 2
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if Fraction(mid) ** 2 <= ratio else (lo, mid)
    # of lo and hi (adjacent floats, lo^2 <= ratio < hi^2) the nearer root
    return lo if ratio - Fraction(lo) ** 2 <= Fraction(hi) ** 2 - ratio else hi


def folded(values: np.ndarray, cuts: list[int]) -> ExactColumnSums:
    sums = ExactColumnSums([f"c{j}" for j in range(values.shape[1])])
    for part in np.split(values, cuts):
        piece = ExactColumnSums(sums.names)
        piece.add(part[::-1])
        sums.merge(piece)
    return sums


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_std_is_the_exact_population_sd_for_any_chunking(seed):
    rng = np.random.default_rng(seed)
    values = np.column_stack(
        [
            rng.random(500),
            rng.normal(size=500) * 1e6 + 1e9,  # a large mean: cancellation in sum v^2 - n m^2
            np.where(rng.random(500) < 0.3, np.nan, rng.integers(0, 5, 500) / 7),
            np.full(500, 0.1),  # constant: exactly 0
        ]
    )
    whole = folded(values, [])
    for cuts in ([1], [7, 200, 201], list(range(3, 500, 50))):
        assert whole.stds().tobytes() == folded(values, cuts).stds().tobytes()
    for j in range(values.shape[1]):
        column = [v for v in values[:, j] if not math.isnan(v)]
        assert whole.stds()[j] == exact_pstdev(column), j
        assert whole.stds()[j] == pytest.approx(np.std(column), rel=1e-9)
    assert whole.stds()[3] == 0.0


def test_std_of_no_value_or_an_infinite_value_is_nan():
    sums = ExactColumnSums(["empty", "inf", "one"])
    sums.add(np.array([[np.nan, np.inf, 3.0], [np.nan, 1.0, np.nan]]))
    stds = sums.stds()
    assert math.isnan(stds[0]) and math.isnan(stds[1]) and stds[2] == 0.0


@pytest.mark.parametrize(
    "ratio", [Fraction(2), Fraction(1, 3), Fraction(10**40 + 1, 7), Fraction(3, 10**300)]
)
def test_sqrt_ratio_is_correctly_rounded(ratio):
    assert sqrt_ratio(ratio.numerator, ratio.denominator) == sqrt_of(ratio)


def test_recs_std_is_the_sd_of_the_per_user_values_for_any_chunk_size():
    ratings = REPO_ROOT / "data_samples/recs/ratings.parquet"
    recs = REPO_ROOT / "data_samples/recs/mf.parquet"
    options = dict(metrics=["ndcg@10", "map@10", "precision@5"], convention="trec_eval")
    whole = evaluate_recs(ratings, recs, **options)
    small = evaluate_recs(ratings, recs, chunk_rows=97, **options)
    assert whole.summary.equals(small.summary)
    for metric in options["metrics"]:
        std = whole.summary.filter(pl.col("metric") == metric)["std"].item()
        assert std == exact_pstdev(whole.per_unit[metric].to_list()), metric
    assert whole.summary.filter(pl.col("metric") == "users")["std"].item() is None


def test_micro_averages_and_aggregated_f1_have_no_std():
    ratings = REPO_ROOT / "data_samples/recs/ratings.parquet"
    recs = REPO_ROOT / "data_samples/recs/mf.parquet"
    micro = evaluate_recs(ratings, recs, metrics=["precision@5", "ndcg@5"], averaging="micro")
    stds = dict(zip(micro.summary["metric"], micro.summary["std"], strict=True))
    assert stds["precision@5"] is None and stds["ndcg@5"] is not None  # nDCG stays macro
    truth = REPO_ROOT / "data_samples/nextloc/tky/truth.parquet"
    pred = REPO_ROOT / "data_samples/nextloc/tky/markov.parquet"
    libcity = evaluate_nextloc(truth, pred, k=[5], metrics=["f1@k", "acc@k"], convention="libcity")
    stds = dict(zip(libcity.summary["metric"], libcity.summary["std"], strict=True))
    assert stds["f1@5"] is None
    acc = libcity.per_unit["acc@5"].to_list()
    assert stds["acc@5"] == exact_pstdev(acc)


def test_a_summary_written_without_std_still_prints(monkeypatch):
    old = pl.DataFrame({"metric": ["ndcg@10", "users"], "value": [0.5, 3.0], "n": [3, 3]})
    evaluation = SimpleNamespace(
        city="c",
        model="m",
        run=None,
        partition=None,
        label="m",
        summary=old,
        tables={},
        outputs={},
        seconds=0.0,
        resumed=False,
    )
    result = ("recs", {"metrics": ["ndcg@10"]}, evaluation)
    printed = {}
    for fmt in ("csv", "json", "table"):
        out = io.StringIO()
        monkeypatch.setattr(sys, "stdout", out)
        print_summaries([result], fmt, job=False)
        printed[fmt] = out.getvalue()
    rows = list(csv.DictReader(io.StringIO(printed["csv"])))
    assert [r["std"] for r in rows] == ["", ""]
    assert json.loads(printed["json"])["std"] == {}
    assert "ndcg@10" in printed["table"]


def test_a_column_left_out_of_spread_keeps_its_sum_and_count_and_has_no_std():
    """``spread`` names the columns whose squares are summed (recs: the metrics, not the counts
    behind them): the others' sums and counts are as before, their std NaN."""
    rng = np.random.default_rng(3)
    values = np.column_stack([rng.random(300), (rng.random(300) > 0.5) * 1.0, rng.random(300)])
    values[::7, 2] = 0.0
    values[5, 1] = np.nan
    part = ExactColumnSums(["m", "count", "n"], spread=["m", "n"])
    part.add(values[:100])
    rest = ExactColumnSums(part.names, spread=["m", "n"])
    rest.add(values[100:])
    part.merge(rest)
    stds = part.stds()
    assert math.isnan(stds[1])
    for c in (0, 2):
        assert stds[c] == exact_pstdev(values[:, c].tolist())
    for c in range(3):
        kept = [v for v in values[:, c].tolist() if not math.isnan(v)]
        assert part.sums()[c] == float(sum(Fraction(v) for v in kept))
        assert part.counts[c] == len(kept)
