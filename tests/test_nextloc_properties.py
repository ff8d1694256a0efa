"""Property tests: the engine against a plain-Python oracle; invariance to chunking and order."""

import math

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobeval.api import evaluate_nextloc
from tests.oracles import sample_value

METRICS = ["acc@k", "precision@k", "recall@k", "f1@k", "mrr@k", "map@k", "ndcg@k", "mrr", "ndcg"]
KS = [1, 2, 5]


@st.composite
def datasets(draw):
    """Samples with unique candidate locations, small integer scores (many ties), target maybe not
    in the list."""
    n_samples = draw(st.integers(1, 12))
    rows, truth = [], []
    for sample in range(n_samples):
        locations = draw(st.lists(st.integers(0, 30), min_size=1, max_size=12, unique=True))
        scores = draw(
            st.lists(st.integers(-3, 3), min_size=len(locations), max_size=len(locations))
        )
        target = draw(st.one_of(st.sampled_from(locations), st.integers(0, 30)))
        truth.append((sample, target))
        rows.extend(
            (sample, loc, float(score)) for loc, score in zip(locations, scores, strict=True)
        )
    return rows, truth


def frames(rows, truth):
    predictions = pl.DataFrame(
        rows,
        schema={"sample_id": pl.Int64, "location": pl.Int64, "score": pl.Float64},
        orient="row",
    )
    truth_frame = pl.DataFrame(
        truth, schema={"sample_id": pl.Int64, "location": pl.Int64}, orient="row"
    )
    return truth_frame, predictions


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=datasets(),
    ties=st.sampled_from(
        ["id_asc", "id_desc_str", "id_asc_str", "input", "optimistic", "pessimistic", "average"]
    ),
)
def test_matches_plain_python_oracle(data, ties):
    rows, truth = data
    truth_frame, predictions = frames(rows, truth)
    result = evaluate_nextloc(
        truth_frame, predictions, k=KS, metrics=METRICS, ties=ties, convention="ranx"
    )
    per_unit = {row["sample_id"]: row for row in result.per_unit.iter_rows(named=True)}
    for sample, target in truth:
        candidates = [(loc, score) for s, loc, score in rows if s == sample]
        for name in result.summary["metric"]:
            if name.startswith(("samples", "predictions")):
                continue
            expected = sample_value(name, candidates, target, ties)
            assert per_unit[sample][name] == pytest.approx(expected, abs=1e-12), (name, sample)
    for name in ("acc@5", "mrr", "ndcg@2"):
        mean = sum(
            sample_value(name, [(loc, sc) for s, loc, sc in rows if s == sample], target, ties)
            for sample, target in truth
        ) / len(truth)
        assert result.value(name) == pytest.approx(mean, abs=1e-12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets(), chunk_rows=st.integers(1, 40), seed=st.integers(0, 1000))
def test_same_numbers_for_any_chunk_size_and_row_order(data, chunk_rows, seed):
    rows, truth = data
    truth_frame, predictions = frames(rows, truth)
    whole = evaluate_nextloc(truth_frame, predictions, k=KS, metrics=METRICS, chunk_rows=10**6)
    chunked = evaluate_nextloc(
        truth_frame, predictions, k=KS, metrics=METRICS, chunk_rows=chunk_rows
    )
    shuffled = evaluate_nextloc(
        truth_frame.sample(fraction=1.0, shuffle=True, seed=seed),
        predictions.sample(fraction=1.0, shuffle=True, seed=seed),
        k=KS,
        metrics=METRICS,
        chunk_rows=chunk_rows,
        ties="id_asc",
    )
    assert chunked.summary.equals(whole.summary)
    assert shuffled.summary.equals(whole.summary)
    assert chunked.per_unit.equals(whole.per_unit)
    assert shuffled.per_unit.sort("sample_id").equals(whole.per_unit)


def test_list_form_equals_long_form():
    rows = [(0, 5, 3.0), (0, 7, 2.0), (0, 1, 1.0), (1, 2, 9.0), (1, 3, 8.0)]
    truth = [(0, 7), (1, 4)]
    truth_frame, long = frames(rows, truth)
    lists = long.group_by("sample_id", maintain_order=True).agg(
        pl.col("location").alias("locations"), pl.col("score").alias("scores")
    )
    ranked_lists = lists.drop("scores")
    a = evaluate_nextloc(truth_frame, long, k=[1, 2]).summary
    b = evaluate_nextloc(truth_frame, lists, k=[1, 2]).summary
    c = evaluate_nextloc(truth_frame, ranked_lists, k=[1, 2]).summary
    assert a.equals(b) and a.equals(c)
    assert math.isclose(a.filter(pl.col("metric") == "mrr")["value"][0], (1 / 2 + 0) / 2)


def test_multi_column_key():
    truth = pl.DataFrame({"uid": [1, 1, 2], "d": [3, 3, 3], "t": [0, 1, 0], "location": [4, 5, 6]})
    predictions = pl.DataFrame(
        {
            "uid": [1, 1, 1, 1, 2],
            "d": [3, 3, 3, 3, 3],
            "t": [0, 0, 1, 1, 0],
            "location": [4, 9, 9, 5, 1],
            "rank": [1, 2, 1, 2, 1],
        }
    )
    result = evaluate_nextloc(
        truth, predictions, key=["uid", "d", "t"], k=[1, 2], metrics=["acc@k", "mrr"], chunk_rows=2
    )
    assert result.value("acc@1") == pytest.approx(1 / 3)
    assert result.value("acc@2") == pytest.approx(2 / 3)
    assert result.value("mrr") == pytest.approx((1 + 0.5 + 0) / 3)


def test_missing_predictions_count_as_misses_or_are_skipped():
    truth = pl.DataFrame({"sample_id": [0, 1, 2], "location": [1, 2, 3]})
    predictions = pl.DataFrame({"sample_id": [0, 2], "location": [1, 3], "score": [1.0, 1.0]})
    miss = evaluate_nextloc(truth, predictions, k=[1], metrics=["acc@k"])
    assert miss.value("acc@1") == pytest.approx(2 / 3)
    assert miss.value("samples_without_predictions") == 1
    skip = evaluate_nextloc(truth, predictions, k=[1], metrics=["acc@k"], convention="trec_eval")
    assert skip.value("acc@1") == 1.0
    assert skip.summary.filter(pl.col("metric") == "acc@1")["n"][0] == 2


def test_unmatched_predictions_dropped_and_counted():
    truth = pl.DataFrame({"sample_id": [0], "location": [1]})
    predictions = pl.DataFrame({"sample_id": [0, 5], "location": [1, 3], "score": [1.0, 1.0]})
    result = evaluate_nextloc(truth, predictions, k=[1], metrics=["acc@k"], unmatched="drop")
    assert result.value("acc@1") == 1.0
    assert result.value("predictions_without_truth_dropped") == 1
    assert result.per_unit.height == 1
