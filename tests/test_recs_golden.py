"""Every entry of the recommendation golden cases, reproduced by the matching preset and options.

ranx is not a preset of ours: the spec (ranking_conventions.md) says ranx agrees with trec_eval
wherever scores have no ties, and these cases have unique scores, so ranx entries are checked with
the ``trec_eval`` preset (``order="rank"`` where ranx was fed the rank order).
"""

from __future__ import annotations

import json
import math
import re

import polars as pl
import pytest

from mobeval.errors import InputError
from mobeval.tasks.recs import score_recs_frame

TOL = 1e-9
CASES = ("rec_ratings_basic", "people_rec_basic")

_TREC_NAMES = {
    "P": "precision",
    "recall": "recall",
    "map_cut": "map",
    "ndcg_cut": "ndcg",
    "Rprec": "r-precision",
    "recip_rank": "mrr",
}
_RANKSYS_NAMES = {"P": "precision", "R": "recall", "nDCG": "ndcg"}


def _load(golden_dir, case):
    folder = golden_dir / "ranking" / case
    expected = json.loads((folder / "expected.json").read_text())["expected"]
    recs = pl.read_parquet(folder / "recs.parquet")
    ratings = pl.read_parquet(folder / "ratings.parquet")
    return expected, recs, ratings


def _relevance(params: dict) -> dict:
    """ranx / trec_eval qrels: binary 'rating>=t' or graded 'int(rating)' (every rating >= 1)."""
    m = re.fullmatch(r"binary rating>=([\d.]+)", params["relevance"])
    if m:
        return {"relevant_threshold": float(m.group(1)), "gain": "binary"}
    assert params["relevance"] == "graded = int(rating)"
    return {"relevant_threshold": 1.0, "gain": "linear"}


def _call(entry: dict) -> tuple[str, dict, str]:
    """(preset, option overrides, our metric name) for one golden entry."""
    system, metric, params = entry["system"], entry["metric"], entry["params"]
    if system == "ranx":
        options = _relevance(params)
        if metric == "ndcg_burges":
            metric, options["gain"] = "ndcg", "exponential"
        if entry["input_used"] == "rank":
            options["order"] = "rank"
        k = params.get("k")
        return "trec_eval", options, metric if k is None else f"{metric}@{k}"
    if system.startswith("pytrec_eval"):
        options = _relevance(params)
        m = re.fullmatch(r"([A-Za-z_]+?)(?:_(\d+))?", metric)
        k = m.group(2) or params.get("k")
        name = _TREC_NAMES[m.group(1)]
        return "trec_eval", options, name if k is None else f"{name}@{k}"
    if system.startswith("ClayRS"):
        options = {}
        thr = params.get("relevant_threshold")
        if thr is not None and not str(thr).startswith("user_mean"):
            options["relevant_threshold"] = float(thr)
        if "sys_average" in params:
            options["averaging"] = params["sys_average"]
        if "gains" in params:
            options["gain"] = params["gains"]
            options["log_base"] = {"log2": 2.0, "log": math.e, "log10": 10.0}[
                params["discount_log"]
            ]
        head = metric.split(" - ")[0]
        head = {"MAPAtK": "map", "R-Precision": "r-precision"}.get(head, head).lower()
        if "@" not in head and params.get("k") is not None:
            head = f"{head}@{params['k']}"
        return "clayrs", options, head
    # RankSys 0.4.3 / RELISON, averaged over the 80 test users with preferences
    preset = "relison" if params["test_weights"] == "graded_edge_weights" else "relison_unweighted"
    options = {}
    if metric == "RankSysAP":
        options["ap_denominator"] = "min_k_relevant"
        metric = "map"
    elif metric == "RELISON_TRECAP":
        metric = "map"
    else:
        metric = _RANKSYS_NAMES[metric]
    return preset, options, f"{metric}@{params['cutoff']}"


def _entries(golden_dir):
    for case in CASES:
        expected, recs, ratings = _load(golden_dir, case)
        for i, entry in enumerate(expected):
            yield case, i, entry, recs, ratings


def _same(a, b) -> bool:
    if b is None:
        return a is None or math.isnan(a)
    return a is not None and not math.isnan(a) and abs(a - b) <= TOL


@pytest.mark.parametrize("case", CASES)
def test_every_entry(golden_dir, case):
    expected, recs, ratings = _load(golden_dir, case)
    checked = 0
    for i, entry in enumerate(expected):
        preset, options, metric = _call(entry)
        where = f"{case}[{i}] {entry['system']} {entry['metric']} {entry['params']}"
        if entry.get("error"):
            with pytest.raises(InputError, match="No user has a rating above the given threshold"):
                score_recs_frame(
                    recs, ratings, metrics=[metric], convention=preset, **options
                ).summary()
            checked += 1
            continue
        scores = score_recs_frame(recs, ratings, metrics=[metric], convention=preset, **options)
        summary = scores.summary()
        assert summary["metric"].to_list() == [metric], where
        assert _same(summary["value"][0], entry["value"]), (where, summary["value"][0])
        if entry.get("per_id") and not entry.get("note", "").startswith("per_id holds"):
            got = dict(
                zip(
                    (str(u) for u in scores.per_user["user_id"]),
                    scores.per_user[metric].to_list(),
                    strict=True,
                )
            )
            assert set(got) == set(entry["per_id"]), where
            bad = [u for u, v in entry["per_id"].items() if not _same(got[u], v)]
            assert not bad, (where, bad[:5], [(got[u], entry["per_id"][u]) for u in bad[:5]])
        checked += 1
    assert checked == len(expected)
