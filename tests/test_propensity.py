"""Propensity-scored precision and recall at k (mobeval.tasks.propensity) against pyxclib's
``xc_metrics.psprecision`` / ``psrecall`` and ``compute_inv_propesity`` (tests/golden/README.md),
and given propensities against a plain-Python oracle of the paper's formulas."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest

from mobeval.errors import InputError
from mobeval.tasks.propensity import given_propensities, inverse_propensities, propensity_scored
from tests.conftest import GOLDEN

FOLDER = GOLDEN / "propensity"
EXPECTED = json.loads((FOLDER / "expected.json").read_text())
TRAIN, TRUTH, RECS = (pl.read_csv(FOLDER / f"{n}.csv") for n in ("train", "truth", "recs"))


def _avx512() -> bool:
    """Whether numpy runs its AVX-512 kernels on this CPU."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # numpy 1.x
        from numpy.core._multiarray_umath import __cpu_features__
    return bool(__cpu_features__.get("AVX512F"))


#: numpy's ``power`` (pyxclib's, and :func:`~mobeval.tasks.propensity.inverse_propensity`'s)
#: takes its AVX-512 path where the CPU has one and libm's ``pow`` elsewhere, and the two differ
#: by a unit in the last place for some arguments (4 of these 40 weights on an AMD EPYC without
#: AVX-512); pyxclib's values were computed on an AVX-512 CPU: the same bits there, within a
#: unit in the last place elsewhere.
TOLERANCE = 0.0 if _avx512() else 1e-15


@pytest.mark.parametrize("preset", ["default", "amazon"])
def test_pyxclib_bit_for_bit(preset):
    """Each item's 1 / p_l and PSP@k, PSR@k for k = 1..10 as pyxclib returned them."""
    expected = EXPECTED[preset]
    weights, unseen = inverse_propensities(TRAIN, expected["A"], expected["B"])
    got = dict(zip(weights["item_id"], weights["weight"], strict=True))
    assert got == pytest.approx(expected["inv_propensity"], rel=TOLERANCE, abs=0)
    for k in range(1, 11):
        scores = propensity_scored(RECS, TRUTH, weights, k, unseen)
        assert scores.psp == pytest.approx(expected["psp"][k - 1], rel=TOLERANCE, abs=0), k
        assert scores.psr == pytest.approx(expected["psr"][k - 1], rel=TOLERANCE, abs=0), k


def user_weights(weight: dict, k: int) -> list[tuple[float, float, int]]:
    """Per user (first appearance in the lists, then in the truth): the weights of its relevant
    items among its first ``k`` (by score, descending) and of its best ``k``, each added in rank
    order, and its number of relevant items."""
    relevant: dict = {}
    for user, item in TRUTH.select("user_id", "item_id").iter_rows():
        relevant.setdefault(user, set()).add(item)
    lists: dict = {}
    for user, item, score in RECS.iter_rows():
        lists.setdefault(user, []).append((-score, item))
    rows = []
    for user in dict.fromkeys([*lists, *relevant]):
        mine = relevant.get(user, set())
        top = [item for _, item in sorted(lists.get(user, []))[:k]]
        gained = sum(weight[item] for item in top if item in mine)
        best = sum(sorted((weight[item] for item in mine), reverse=True)[:k])
        rows.append((gained, best, len(mine)))
    return rows


def _oracle(propensity: dict, k: int) -> tuple[float, float]:
    """The paper's PSP@k and PSR@k, normalised by the best top k, in plain Python."""
    sums = [0.0, 0.0, 0.0, 0.0]
    for gained, best, relevant in user_weights({i: 1 / p for i, p in propensity.items()}, k):
        size = max(relevant, 1)
        for i, value in enumerate((gained / k, gained / size, best / k, best / size)):
            sums[i] += value
    return sums[0] / sums[2], sums[1] / sums[3]


def test_given_propensities_are_the_papers_formula():
    propensity = {f"i{j}": 1 / (1 + 0.1 * j) for j in range(40)}
    table = pl.DataFrame({"item_id": list(propensity), "propensity": list(propensity.values())})
    weights, unseen = given_propensities(table)
    for k in (1, 3, 10):
        scores = propensity_scored(RECS, TRUTH, weights, k, unseen)
        psp, psr = _oracle(propensity, k)
        assert math.isclose(scores.psp, psp, rel_tol=1e-12)
        assert math.isclose(scores.psr, psr, rel_tol=1e-12)


def test_an_item_without_a_given_propensity_is_named():
    table = pl.DataFrame({"item_id": ["i0"], "propensity": [0.5]})
    weights, unseen = given_propensities(table, "p.csv")
    said = "p.csv: column 'item_id': a relevant item without a propensity"
    with pytest.raises(InputError, match=said):
        propensity_scored(RECS, TRUTH, weights, 5, unseen, path="p.csv")


def test_a_propensity_outside_0_1_is_refused():
    table = pl.DataFrame({"item_id": ["i0", "i1"], "propensity": [0.5, 0.0]})
    with pytest.raises(InputError, match=r"\(0, 1\], not 0.0 \(first offending key: i1\)"):
        given_propensities(table, "p.csv")
