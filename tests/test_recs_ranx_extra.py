"""ranx's unnormalised DCG (both gains), hits@k and return_std: ranx's own test cases
(AmenRa/ranx tests/unit/ranx/metrics_test.py test_hits, test_dcg_jarvelin, test_dcg_burges;
tests/unit/ranx/meta/evaluate_test.py test_std), translated with plain-Python oracles, and
ranx 0.3.21's values on hand-made lists (repeated items, tied scores, a query with no relevant
item: tests/golden/ranx_extra, see tests/golden/README.md)."""

from __future__ import annotations

import json
import math
import statistics

import polars as pl
import pytest

from mobeval.api import evaluate_recs
from mobeval.tasks.recs import score_recs_frame
from tests.conftest import GOLDEN

EXACT = 1e-9
# ranx: relevant when rel >= 1 (rel_lvl), gains the judgments, a run held as a dict, its sort
RANX = dict(convention="ranx")


def frames(lists: dict, truth: dict) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Lists in rank order (``order="input"``) and judgments, one row per (user, item)."""
    recs = [(u, i) for u, items in lists.items() for i in items]
    rated = [(u, i, float(r)) for u, judged in truth.items() for i, r in judged.items()]
    return (
        pl.DataFrame(recs, schema=["user_id", "item_id"], orient="row"),
        pl.DataFrame(rated, schema=["user_id", "item_id", "rating"], orient="row"),
    )


def per_user(lists, truth, metrics) -> dict:
    recs, ratings = frames(lists, truth)
    got = score_recs_frame(recs, ratings, metrics=metrics, **RANX, order="input").per_user
    return {row.pop("user_id"): row for row in got.to_dicts()}


def test_hits_of_ranx_own_test():
    lists = {1: [1, 2, 3, 4, 5, 7], 2: [1, 2, 4, 3, 5, 7]}
    truth = {1: {1: 1, 4: 1, 5: 1, 6: 1}, 2: {1: 1, 4: 1, 6: 1}}
    got = per_user(lists, truth, ["hits@5"])
    assert (got[1]["hits@5"] + got[2]["hits@5"]) / 2 == 2.5


RANX_DCG_TRUTH = {1: {2: 5, 4: 4, 5: 3, 10: 2}}
RANX_DCG_LISTS = [[1, 2, 3, 4, 5], [10, 5, 2, 4, 3], [1, 3, 6, 7, 8]]


@pytest.mark.parametrize("lst", RANX_DCG_LISTS)
def test_dcg_jarvelin_and_burges_of_ranx_own_tests(lst):
    got = per_user({1: lst}, RANX_DCG_TRUTH, ["dcg@10", "dcg_burges@10"])[1]
    rel = [RANX_DCG_TRUTH[1].get(item, 0) for item in lst]
    jarvelin = sum(r / math.log2(i + 2) for i, r in enumerate(rel))
    burges = sum((2**r - 1) / math.log2(i + 2) for i, r in enumerate(rel))
    assert got["dcg@10"] == pytest.approx(jarvelin, abs=EXACT)
    assert got["dcg_burges@10"] == pytest.approx(burges, abs=EXACT)


def test_std_of_ranx_own_test():
    truth = {"q_1": {"d_12": 5, "d_25": 3}, "q_2": {"d_11": 6, "d_22": 1}}
    lists = {
        "q_1": ["d_12", "d_23", "d_25", "d_36", "d_32", "d_35"],
        "q_2": ["d_12", "d_11", "d_25", "d_36", "d_22", "d_35"],
    }
    recs, ratings = frames(lists, truth)
    result = evaluate_recs(ratings, recs, metrics=["map@5", "mrr"], k=None, **RANX, order="input")
    for metric in ("map@5", "mrr"):
        values = result.per_unit[metric].to_list()
        row = result.summary.filter(pl.col("metric") == metric)
        assert row["std"].item() == pytest.approx(statistics.pstdev(values), abs=EXACT)
        assert row["value"].item() == pytest.approx(statistics.fmean(values), abs=EXACT)


def golden(folder: str):
    folder = GOLDEN / folder
    recs = pl.read_csv(folder / "run.csv")
    ratings = pl.read_csv(folder / "qrels.csv")
    return recs, ratings, json.loads((folder / "expected.json").read_text())


# ranx_extra: repeated items, ties that do not change a value, a query without relevant items;
# ranx_ties: tied scores across relevance levels, on short lists (file order) and on lists of
# more than 15 items (Numba's quicksort), and a repeated item whose last score ties it
@pytest.mark.parametrize("folder", ["ranx_extra", "ranx_ties"])
@pytest.mark.parametrize("chunk_rows", [3, 10**6])
def test_ranx_values_per_query_mean_and_std(folder, chunk_rows):
    recs, ratings, expected = golden(folder)
    for name in expected["mean"]:
        metric, options = name, {}
        if name.startswith("ndcg_burges"):  # mobeval's ndcg under Burges' gain
            metric, options = name.replace("ndcg_burges", "ndcg"), {"gain": "exponential"}
        result = evaluate_recs(
            ratings, recs, metrics=[metric], k=None, **RANX, **options, chunk_rows=chunk_rows
        )
        got = dict(zip(result.per_unit["user_id"], result.per_unit[metric], strict=True))
        for query, value in expected["per_query"][name].items():
            assert got[query] == pytest.approx(value, abs=EXACT), (name, query)
        row = result.summary.filter(pl.col("metric") == metric)
        assert row["value"].item() == pytest.approx(expected["mean"][name], abs=EXACT), name
        assert row["std"].item() == pytest.approx(expected["std"][name], abs=EXACT), name
