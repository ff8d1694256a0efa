"""ranx's order among tied scores, and where the ``ranx`` preset holds (issue 9, item 8).

ranx sorts a query's run with Numba's ``np.argsort`` (ranx 0.3.21: ``Run`` ->
``ranx/data_structures/common.py: sort_dict_by_value``, the negated scores; a plain dict given to
``evaluate`` -> ``ranx/utils.py: descending_sort``, ``np.argsort(scores)[::-1]``). Numba's sort is
an insertion sort (stable) on fewer than 16 items and an unstable quicksort beyond
(``numba/misc/quicksort.py``, ``SMALL_QUICKSORT = 15``): so ranx keeps the input order of tied
documents only in lists of up to 15 items. Our ``ranx`` tie policy runs that same Numba sort on
longer tied lists; ``input`` does not.

The expected ranks below were printed by ranx 0.3.21 (numba 0.68.1) for all-tied lists, one query
per position of the relevant document, ``mrr`` -> rank. The last test runs ranx itself when it is
installed (``pip install 'mobeval[bench]'``) and is skipped otherwise.
"""

from __future__ import annotations

import random

import polars as pl
import pytest

from mobeval.api import evaluate_nextloc


def ranks(scores: list[float], ties: str) -> list[int]:
    """Rank of the document at each input position when it is the relevant one (one sample per
    position, every sample holding the same list in the same order)."""
    n = len(scores)
    rows = [(s, loc, scores[loc]) for s in range(n) for loc in range(n)]
    predictions = pl.DataFrame(
        rows,
        schema={"sample_id": pl.Int64, "location": pl.Int64, "score": pl.Float64},
        orient="row",
    )
    truth = pl.DataFrame({"sample_id": list(range(n)), "location": list(range(n))})
    result = evaluate_nextloc(truth, predictions, k=[1], metrics=["mrr"], ties=ties)
    per_unit = result.per_unit.sort("sample_id")
    return [int(r) for r in per_unit["rank"]]


# ranx 0.3.21, Run({"q": {doc_i: 1.0 for i in range(n)}}), evaluate(qrels, run, "mrr")
RUN_ALL_TIED = {
    15: list(range(1, 16)),
    16: [15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 16],
    17: [16, 15, 14, 13, 12, 11, 10, 17, 9, 7, 6, 5, 4, 3, 2, 1, 8],
    20: [19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 20],
}
# the same with plain dicts given to evaluate(qrels_dict, run_dict, "mrr")
DICT_ALL_TIED = {
    15: list(range(15, 0, -1)),
    16: [*range(2, 17), 1],
    17: [2, 3, 4, 5, 6, 7, 8, 1, 9, 11, 12, 13, 14, 15, 16, 17, 10],
}
# ranx 0.3.21 on one list with three tie groups (scores in input order), Run built once, and the
# same Run evaluated with make_comparable=True (which sorts it a second time)
MIXED = [2.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 1.0, 2.0, 1.0, 1.0, 2.0, 2.0, 1.0]
MIXED += [1.0, 1.0, 2.0]
MIXED_RUN = [6, 11, 8, 19, 20, 15, 16, 17, 18, 5, 7, 3, 9, 10, 2, 1, 12, 13, 14, 4]
MIXED_COMPARABLE = [6, 10, 13, 19, 20, 15, 16, 17, 18, 5, 14, 3, 12, 11, 2, 1, 9, 8, 7, 4]


@pytest.mark.parametrize("n", sorted(RUN_ALL_TIED))
def test_ranx_run_order_on_all_tied_lists(n):
    assert ranks([1.0] * n, "ranx") == RUN_ALL_TIED[n]


@pytest.mark.parametrize("n", sorted(DICT_ALL_TIED))
def test_ranx_plain_dict_order_on_all_tied_lists(n):
    assert ranks([1.0] * n, "ranx_dict") == DICT_ALL_TIED[n]


def test_mixed_ties_once_and_after_make_comparable():
    assert ranks(MIXED, "ranx") == MIXED_RUN
    assert ranks(MIXED, "ranx_comparable") == MIXED_COMPARABLE


def test_the_boundary_input_order_holds_up_to_15_items_only():
    # up to 15 items ranx's order among ties is the input order: the preset and `input` agree
    for n in range(1, 16):
        assert ranks([1.0] * n, "ranx") == ranks([1.0] * n, "input") == list(range(1, n + 1))
    # from 16 on, the input order is not ranx's
    assert ranks([1.0] * 16, "input") != RUN_ALL_TIED[16]
    # the preset uses the ranx policy
    truth = pl.DataFrame({"sample_id": [0], "location": [0]})
    rows = [(0, loc, 1.0) for loc in range(16)]
    predictions = pl.DataFrame(rows, schema=["sample_id", "location", "score"], orient="row")
    preset = evaluate_nextloc(truth, predictions, k=[1], metrics=["mrr"], convention="ranx")
    assert preset.value("mrr") == pytest.approx(1 / RUN_ALL_TIED[16][0])


def test_against_ranx_itself():
    ranx = pytest.importorskip("ranx")
    rng = random.Random(5)
    for _ in range(30):
        n = rng.randint(1, 40)
        scores = [float(rng.randint(0, 3)) for _ in range(n)]
        docs = [f"d{i}" for i in range(n)]
        # one query per position of the relevant document, every query holding the same list
        queries = [f"q{t:03d}" for t in range(n)]  # string order = position order
        run_dict = {q: dict(zip(docs, scores, strict=True)) for q in queries}
        qrels_dict = {q: {docs[t]: 1} for t, q in enumerate(queries)}
        options = {"return_mean": False}
        want = {
            "ranx": ranx.evaluate(ranx.Qrels(qrels_dict), ranx.Run(run_dict), "mrr", **options),
            "ranx_comparable": ranx.evaluate(
                ranx.Qrels(qrels_dict), ranx.Run(run_dict), "mrr", make_comparable=True, **options
            ),
            "ranx_dict": ranx.evaluate(qrels_dict, run_dict, "mrr", **options),
        }
        for ties, values in want.items():
            assert ranks(scores, ties) == [round(1 / v) for v in values], (ties, scores)
