"""GEO-BLEU / DTW against the reference's own outputs (golden data from yahoojapan/geobleu)."""

import json
import math

import numpy as np
import polars as pl
import pytest
from conftest import GOLDEN

from mobeval.errors import InputError
from mobeval.metrics.trajectory import dtw, dtw_uid, geobleu, geobleu_uid
from mobeval.tasks.trajectory import score_trajectory_frame

RTOL = 1e-12
CASES_FILE = GOLDEN / "geobleu" / "cases.json"
CASES = (
    json.loads(CASES_FILE.read_text()) if CASES_FILE.is_file() else {"cases": [], "orig_pairs": []}
)


def _float(value):
    return float(value) if isinstance(value, str) else value


def _load(golden_dir, name):
    folder = golden_dir / "geobleu" / name
    return {f: pl.read_parquet(folder / f"{f}.parquet") for f in
            ("generated", "reference", "expected", "expected_by_day")}  # fmt: skip


@pytest.mark.parametrize("case", CASES["cases"], ids=lambda c: c["name"])
def test_golden_case(golden_dir, case):
    data = _load(golden_dir, case["name"])
    error_uids = sorted(int(u) for u in case.get("error_uids", {}))
    if error_uids:
        with pytest.raises(InputError) as info:
            score_trajectory_frame(data["generated"], data["reference"])
        assert f"{len(error_uids)} uid(s)" in str(info.value)
        for uid in error_uids:
            assert f"uid {uid}:" in str(info.value)
    scores = score_trajectory_frame(data["generated"], data["reference"], on_mismatch="skip")
    assert scores.n_skipped_uids == len(error_uids)
    assert scores.skipped_uids.to_list() == error_uids

    expected = data["expected"].sort("uid")
    assert scores.per_uid["uid"].to_list() == expected["uid"].to_list()
    for metric in ("geobleu", "dtw"):
        np.testing.assert_allclose(
            scores.per_uid[metric].to_numpy(), expected[metric].to_numpy(), rtol=RTOL, atol=0
        )
    by_day = data["expected_by_day"].sort("uid", "d")
    assert (
        scores.per_day.select("uid", "d", "n_steps").rows()
        == by_day.select("uid", "d", "n_steps").rows()
    )
    for metric in ("geobleu", "dtw"):
        np.testing.assert_allclose(
            scores.per_day[metric].to_numpy(), by_day[metric].to_numpy(), rtol=RTOL, atol=0
        )
    n_steps = by_day.group_by("uid").agg(pl.col("n_steps").sum(), pl.len()).sort("uid")
    assert scores.per_uid["n_steps"].to_list() == n_steps["n_steps"].to_list()
    assert scores.per_uid["n_days"].to_list() == n_steps["len"].to_list()
    if "mean_geobleu" in case:
        assert math.isclose(scores.per_uid["geobleu"].mean(), case["mean_geobleu"], rel_tol=RTOL)


@pytest.mark.parametrize("case", CASES["cases"][:2], ids=lambda c: c["name"])
def test_golden_uid_api(golden_dir, case):
    """The per-uid Python API (calc_geobleu_single / calc_dtw_single with 5-tuples)."""
    data = _load(golden_dir, case["name"])
    for uid, gb, dt in data["expected"].iter_rows():
        gen = data["generated"].filter(pl.col("uid") == uid).rows()
        ref = data["reference"].filter(pl.col("uid") == uid).rows()
        assert math.isclose(geobleu_uid(gen, ref), gb, rel_tol=RTOL)
        assert math.isclose(dtw_uid(gen, ref), dt, rel_tol=RTOL)
        # 4-tuples, as in the README example
        assert geobleu_uid([r[1:] for r in gen], [r[1:] for r in ref]) == geobleu_uid(gen, ref)


def test_golden_error_uids_raise_like_reference(golden_dir):
    case = next(c for c in CASES["cases"] if c.get("error_uids"))
    data = _load(golden_dir, case["name"])
    for uid, message in case["error_uids"].items():
        # the golden run passed each side sorted by (d, t)
        gen = data["generated"].filter(pl.col("uid") == int(uid)).sort("d", "t").rows()
        ref = data["reference"].filter(pl.col("uid") == int(uid)).sort("d", "t").rows()
        with pytest.raises(ValueError) as info:
            geobleu_uid(gen, ref)
        reference_text = message.removeprefix("ValueError: ").rstrip(".")
        assert str(info.value).startswith(reference_text)


@pytest.mark.parametrize("pair", CASES["orig_pairs"], ids=lambda p: p["name"])
def test_orig_pairs(pair):
    gen, ref = pair["generated"], pair["reference"]
    expected = _float(pair["expected"])
    if pair.get("expected_error"):
        with pytest.raises(ValueError):
            geobleu(gen, ref, max_n=pair["max_n"], beta=pair["beta"])
    else:
        value = geobleu(gen, ref, max_n=pair["max_n"], beta=pair["beta"])
        if math.isnan(expected):
            assert math.isnan(value)
        else:
            assert math.isclose(value, expected, rel_tol=RTOL)
    value = dtw(gen, ref, scale=pair["dtw_scale_factor"])
    expected_dtw = _float(pair["expected_dtw"])
    assert value == expected_dtw or math.isclose(value, expected_dtw, rel_tol=RTOL)
