"""Recommendation metrics against the peers' own material (issue 9, items 1-4).

Each case is small and ours; its expected values are what the peer's authors wrote in their tests,
what the peer's code provably computes (the file is cited), or what the peer printed when run
privately on the same case (pytrec_eval-terrier 0.5.11, trec_eval 10.0, ranx 0.3.21,
ir_measures 0.4.3, ClayRS 0.5.1), next to a plain-Python oracle of the formula. No peer code or
data is copied here.
"""

from __future__ import annotations

import json
import math

import polars as pl
import pytest

from mobeval.api import evaluate_recs
from mobeval.cli import main
from mobeval.errors import InputError
from mobeval.metrics.recs import OPTION_CHOICES, RECS_PRESETS
from mobeval.tasks.recs import score_recs_frame

EXACT = 1e-15


def _frames(run: dict, qrels: dict, score=True):
    """``run``: user -> [(item, score)] in row order; ``qrels``: user -> {item: rating}."""
    rows = [(u, i, float(s)) for u, lst in run.items() for i, s in lst]
    recs = pl.DataFrame(rows, schema=["user_id", "item_id", "score"], orient="row")
    truth = pl.DataFrame(
        [(u, i, float(r)) for u, d in qrels.items() for i, r in d.items()],
        schema=["user_id", "item_id", "rating"],
        orient="row",
    )
    return (recs if score else recs.drop("score")), truth


def _per_user(recs, truth, metrics, convention, **options) -> dict:
    got = score_recs_frame(recs, truth, metrics=metrics, convention=convention, **options)
    return {row.pop("user_id"): row for row in got.per_user.iter_rows(named=True)}


def _summary(recs, truth, metrics, convention, **options) -> dict:
    got = score_recs_frame(recs, truth, metrics=metrics, convention=convention, **options)
    return dict(got.summary().select("metric", "value").iter_rows())


def _assert_per_user(got: dict, want: dict, tolerance: float) -> None:
    """Every value of ``want`` (user -> metric -> value) in ``got`` within ``tolerance``."""
    for user, values in want.items():
        for name, value in values.items():
            assert got[user][name] == pytest.approx(value, abs=tolerance), (user, name)


def _dcg(gains):
    return math.fsum(g / math.log2(i + 2) for i, g in enumerate(gains))


# ------------------------------------------------------------ 1. negative judgments (trec_eval)
# Shaped like usnistgov/trec_eval test/qrels.rel_level (judgments -1 .. 4). In trec_eval's
# form_res_rels.c a judgment < 0 is "in pool, but unjudged": it is left out of rel_levels (so of
# num_rel and of the ideal DCG), and m_ndcg.c / m_ndcg_cut.c add a gain only when it is > 0.
QRELS_NEG = {
    "q1": {"d1": -1, "d2": 2, "d3": -1, "d4": 1, "d5": 0, "d7": 4},
    "q2": {"d1": -1, "d2": -1, "d3": 1},
    "q3": {"d1": -1, "d2": 0},
}
RUN_NEG = {
    "q1": [("d1", 0.9), ("d3", 0.8), ("d2", 0.7), ("d6", 0.6), ("d4", 0.5), ("d5", 0.4)],
    "q2": [("d1", 0.9), ("d2", 0.8), ("d3", 0.7)],
    "q3": [("d1", 0.9), ("d2", 0.8)],
}
# pytrec_eval.RelevanceEvaluator(QRELS_NEG, {...}).evaluate(RUN_NEG), relevance_level 1, as printed
PYTREC_NEG = {
    "q1": {
        "ndcg": 0.24069535286573285,
        "ndcg@3": 0.17355508213282722,
        "ndcg@2": 0.0,
        "map": 0.24444444444444446,
        "r-precision": 1 / 3,
        "precision@5": 0.4,
        "recall@5": 2 / 3,
    },
    "q2": {
        "ndcg": 0.5,
        "ndcg@3": 0.5,
        "ndcg@2": 0.0,
        "map": 1 / 3,
        "r-precision": 0.0,
        "precision@5": 0.2,
        "recall@5": 1.0,
    },
    "q3": {
        "ndcg": 0.0,
        "ndcg@3": 0.0,
        "ndcg@2": 0.0,
        "map": 0.0,
        "r-precision": 0.0,
        "precision@5": 0.0,
        "recall@5": 0.0,
    },
}


def test_negative_judgments_are_gain_zero_and_not_relevant_under_trec_eval():
    recs, truth = _frames(RUN_NEG, QRELS_NEG)
    got = _per_user(recs, truth, list(PYTREC_NEG["q1"]), "trec_eval")
    _assert_per_user(got, PYTREC_NEG, EXACT)
    # the plain formula: DCG of the gains > 0 in score order, ideal DCG of the judgments > 0
    ideal = _dcg([4, 2, 1])
    assert got["q1"]["ndcg"] == pytest.approx(_dcg([0, 0, 2, 0, 1, 0]) / ideal, abs=EXACT)
    assert got["q1"]["ndcg@3"] == pytest.approx(_dcg([0, 0, 2]) / ideal, abs=EXACT)


def test_negative_judgments_with_relevance_level_zero():
    # trec_eval -q -l0 -m num_rel -m recall.5 -m P.5 -m map -m Rprec -m ndcg (trec_eval 10.0 on
    # this case; it prints 4 decimals): num_rel q1 = 4 (levels 0, 1, 2, 4; never the -1s)
    printed = {
        "q1": {"map": 0.3083, "r-precision": 0.25, "precision@5": 0.4, "recall@5": 0.5},
        "q2": {"map": 0.3333, "r-precision": 0.0, "precision@5": 0.2, "recall@5": 1.0},
        "q3": {"map": 0.5, "r-precision": 0.0, "precision@5": 0.2, "recall@5": 1.0},
    }
    recs, truth = _frames(RUN_NEG, QRELS_NEG)
    names = [*printed["q1"], "ndcg"]
    got = _per_user(recs, truth, names, "trec_eval", relevant_threshold=0.0)
    _assert_per_user(got, printed, 5e-5)
    assert got["q1"]["map"] == pytest.approx((1 / 3 + 2 / 5 + 3 / 6) / 4, abs=EXACT)
    assert got["q3"]["ndcg"] == 0.0  # the one relevant item has gain 0
    summary = _summary(recs, truth, ["map"], "trec_eval", relevant_threshold=0.0)
    assert summary["map"] == pytest.approx(0.3806, abs=5e-5)  # trec_eval's "all" line


def test_negative_gain_keep_is_opt_in_and_every_preset_clamps():
    assert all(p.negative_gain == "zero" for p in RECS_PRESETS.values())
    assert OPTION_CHOICES["negative_gain"] == ("zero", "keep")
    recs, truth = _frames(RUN_NEG, QRELS_NEG)
    got = _per_user(recs, truth, ["ndcg"], "trec_eval", negative_gain="keep")
    # as asked: the judgments themselves as gains, the ideal list of every judgment sorted
    want = _dcg([-1, -1, 2, 0, 1, 0]) / _dcg([4, 2, 1, 0, -1, -1])
    assert got["q1"]["ndcg"] == pytest.approx(want, abs=EXACT) and want < 0
    # exponential gains (ranx's ndcg_burges): 2^-1 - 1 < 0 counts 0 as well
    got = _per_user(recs, truth, ["ndcg"], "trec_eval", gain="exponential")
    want = _dcg([0, 0, 3, 0, 1, 0]) / _dcg([15, 3, 1])
    assert got["q1"]["ndcg"] == pytest.approx(want, abs=EXACT)
    # ClayRS's ideal list (the rated recommended items): a negative rating counts 0 there too
    recs, truth = _frames({"u": [("a", 1), ("b", 1), ("c", 1)]}, {"u": {"a": -1, "b": 2, "c": 1}})
    got = _per_user(recs, truth, ["ndcg"], "clayrs")
    assert got["u"]["ndcg"] == pytest.approx(_dcg([0, 2, 1]) / _dcg([2, 1, 0]), abs=EXACT)
    got = _per_user(recs, truth, ["ndcg"], "clayrs", negative_gain="keep")
    assert got["u"]["ndcg"] == pytest.approx(_dcg([-1, 2, 1]) / _dcg([2, 1, -1]), abs=EXACT)


# ------------------------------------------------------------------- 2. F-measure with a beta
# usnistgov/trec_eval m_set_F.c: set_F.x = (x + 1) P R / (R + x P) over the whole retrieved set,
# 0 when nothing relevant is retrieved. pytrec_eval.RelevanceEvaluator(QRELS_NEG, {"set_F.x"}):
PYTREC_SET_F = {
    "q1": {"f1": 0.4444444444444444, "f0.5": 0.4, "f2": 0.5, "f0.25": 0.3703703703703703},
    "q2": {
        "f1": 0.5,
        "f0.5": 0.42857142857142855,
        "f2": 0.6000000000000001,
        "f0.25": 0.3846153846153846,
    },
    "q3": {"f1": 0.0, "f0.5": 0.0, "f2": 0.0, "f0.25": 0.0},
}


def test_trec_eval_set_F_does_not_square_its_parameter():
    recs, truth = _frames(RUN_NEG, QRELS_NEG)
    got = _per_user(recs, truth, list(PYTREC_SET_F["q1"]), "trec_eval")
    _assert_per_user(got, PYTREC_SET_F, 1e-15)
    # q1: P = 2/6, R = 2/3
    p, r = 2 / 6, 2 / 3
    assert got["q1"]["f0.5"] == pytest.approx(1.5 * p * r / (r + 0.5 * p), abs=EXACT)
    # trec_eval -m set_F.0.5 prints "all 0.2762" on this case
    assert _summary(recs, truth, ["f0.5"], "trec_eval")["f0.5"] == pytest.approx(0.2762, abs=5e-5)
    # the textbook weight on request
    got = _per_user(recs, truth, ["f2"], "trec_eval", f_beta="squared")
    assert got["q1"]["f2"] == pytest.approx(5 * p * r / (4 * p + r), abs=EXACT)


# swapUniba/ClayRS v0.5.1 test/evaluation/metrics/test_classification_metrics.py, TestFMeasure
# (beta=2, relevant_threshold=3): the authors' lists and their expectations
# fscore(2, 2/8, 2/2) for u1 and fscore(2, 3/4, 3/3) for u2, with fscore = (1 + b^2) P R /
# (b^2 P + R) as in clayrs/evaluation/metrics/classification_metrics.py.
CLAYRS_PRED = {
    "u1": [("i2", 650), ("i1", 600), ("i4", 500), ("i5", 400), ("i6", 300), ("i3", 220)]
    + [("i8", 100), ("i9", 50)],
    "u2": [("i4", 350), ("i6", 200), ("i1", 100), ("i8", 50)],
}
CLAYRS_TRUTH = {
    "u1": {"i1": 3, "i2": 2, "i3": 3, "i4": 1, "i6": 2},
    "u2": {"i1": 4, "i8": 3, "i4": 3},
}


def _clayrs_fscore(beta, p, r):
    b2 = beta**2
    den = b2 * p + r
    return (1 + b2) * (p * r / den) if den else 0.0


@pytest.mark.parametrize("beta", [2.0, 3.2])
def test_clayrs_fmeasure_squares_beta(beta):
    recs, truth = _frames(CLAYRS_PRED, CLAYRS_TRUTH, score=False)
    name = f"f{beta:g}"
    got = _per_user(recs, truth, [name], "clayrs", relevant_threshold=3.0)
    want = {"u1": _clayrs_fscore(beta, 2 / 8, 1.0), "u2": _clayrs_fscore(beta, 3 / 4, 1.0)}
    for u, value in want.items():
        assert got[u][name] == pytest.approx(value, abs=EXACT)
    summary = _summary(recs, truth, [name], "clayrs", relevant_threshold=3.0)
    assert summary[name] == pytest.approx((want["u1"] + want["u2"]) / 2, abs=EXACT)
    # the same lists with trec_eval's weight: (1 + b) P R / (b P + R)
    got = _per_user(recs, truth, [name], "clayrs", relevant_threshold=3.0, f_beta="linear")
    p = 2 / 8
    assert got["u1"][name] == pytest.approx((1 + beta) * p / (beta * p + 1), abs=EXACT)


def test_micro_fmeasure_uses_the_same_weight():
    recs, truth = _frames(CLAYRS_PRED, CLAYRS_TRUTH, score=False)
    # micro: P = (2 + 3) / (8 + 4), R = (2 + 3) / (2 + 3)
    p, r = 5 / 12, 1.0
    for f_beta, w in (("squared", 4.0), ("linear", 2.0)):
        got = _summary(
            recs, truth, ["f2"], "clayrs", relevant_threshold=3.0, averaging="micro", f_beta=f_beta
        )
        assert got["f2"] == pytest.approx((1 + w) * p * r / (w * p + r), abs=EXACT)


# ---------------------------------------------------- 3. ClayRS MSE / MAE / RMSE, item repeated
# swapUniba/ClayRS v0.5.1 test/evaluation/metrics/test_error_metrics.py (pred_w_new_items, truth),
# with one item repeated per user. clayrs/evaluation/metrics/error_metrics.py pairs each truth item
# with npi.indices(prediction_items, truth_items): numpy_indexed's indices returns the FIRST
# matching position (stable sort, searchsorted side='left'), so every rated item counts once,
# with the score of its first copy. ClayRS 0.5.1 run on this case printed the values below.
ERR_PRED = {
    "u1": [("i2", 3.23), ("i1", 2.33), ("i4", 1.58), ("i2", 4.5), ("i6", 3.32), ("i3", 4.8)],
    "u2": [("i4", 4.1), ("i8", 1.57), ("i4", 2.0), ("i1", 2.8)],
}
ERR_TRUTH = {
    "u1": {"i1": 3, "i2": 2, "i3": 3, "i4": 1, "i6": 2},
    "u2": {"i1": 4, "i8": 2, "i4": 3},
}
CLAYRS_PRINTED = {
    "mse": {"u1": 1.45611999999999964, "u2": 0.94496666666666640, "sys": 1.20054333333333307},
    "mae": {"u1": 1.11999999999999988, "u2": 0.90999999999999981, "sys": 1.01499999999999990},
    "rmse": {"u1": 1.20669797381117694, "u2": 0.97209395979332491, "sys": 1.08939596680225081},
    "ndcg": {"u1": 0.90010399369884087, "u2": 0.90676479732382309, "sys": 0.90343439551133198},
}


def test_clayrs_error_metrics_pair_each_rated_item_with_its_first_copy():
    recs, truth = _frames(ERR_PRED, ERR_TRUTH)
    names = list(CLAYRS_PRINTED)
    got = _per_user(recs, truth, names, "clayrs")
    summary = _summary(recs, truth, names, "clayrs")
    for name, want in CLAYRS_PRINTED.items():
        for u in ("u1", "u2"):
            assert got[u][name] == pytest.approx(want[u], abs=1e-14), (u, name)
        assert summary[name] == pytest.approx(want["sys"], abs=1e-14), name
    # as the ClayRS tests write it: the predicted scores of the truth items, first copies
    pairs = {"u1": [(2.33, 3), (3.23, 2), (4.8, 3), (1.58, 1), (3.32, 2)]}
    pairs["u2"] = [(2.8, 4), (1.57, 2), (4.1, 3)]
    for u, ps in pairs.items():
        mse = math.fsum((s - r) ** 2 for s, r in ps) / len(ps)
        assert got[u]["mse"] == pytest.approx(mse, abs=1e-14)
        assert got[u]["mae"] == pytest.approx(math.fsum(abs(s - r) for s, r in ps) / len(ps))


def test_count_each_adds_one_error_per_copy():
    recs, truth = _frames(ERR_PRED, ERR_TRUTH)
    got = _per_user(recs, truth, ["mae"], "clayrs", duplicates="count_each")
    ps = [(3.23, 2), (2.33, 3), (1.58, 1), (4.5, 2), (3.32, 2), (4.8, 3)]
    assert got["u1"]["mae"] == pytest.approx(math.fsum(abs(s - r) for s, r in ps) / 6, abs=1e-14)


# -------------------------------------------------- 4. duplicates the way dict-based tools see them
# A run held as a dict keeps one entry per document: ranx Run.from_df builds {doc: score} row by
# row and Run.from_file does run[q][doc] = score (AmenRa/ranx ranx/data_structures/run.py);
# ir_measures' RunConverter.as_dict_of_dict does result[q][doc] = score (terrierteam/ir_measures
# ir_measures/util.py) before pytrec_eval (cvangysel/pytrec_eval) sees it. So the LAST row's score
# stays, at the place (insertion order) of the FIRST row. Values printed by ranx.evaluate
# (Run.from_df), pytrec_eval (a dict filled from the rows) and ir_measures.iter_calc (ScoredDoc
# rows): all three agree.
DUP_RUN = {
    "q1": [("a", 0.5), ("x", 0.9), ("b", 0.8), ("a", 0.95), ("c", 0.7), ("y", 0.6)],
    "q2": [("d", 0.3), ("z", 0.9), ("d", 0.2), ("e", 0.1)],
}
DUP_QRELS = {"q1": {"a": 1, "b": 2, "c": 1}, "q2": {"d": 1, "e": 1}}
DICT_TOOLS = {
    "q1": {
        "ndcg@3": 0.6387878864795979,
        "precision@2": 0.5,
        "map": 0.8055555555555555,
        "mrr": 1.0,
        "recall@3": 2 / 3,
    },
    "q2": {
        "ndcg@3": 0.6934264036172708,
        "precision@2": 0.5,
        "map": 0.5833333333333333,
        "mrr": 0.5,
        "recall@3": 1.0,
    },
}
# ranx with every score equal keeps insertion order (lists this short): q1 a x b c y, q2 d z e
RANX_TIED = {
    "q1": {"ndcg@3": 0.63878789, "map": 0.80555556, "mrr": 1.0},
    "q2": {"ndcg@3": 0.91972079, "map": 0.83333333, "mrr": 1.0},
}


def test_drop_keeps_the_last_score_like_ranx_pytrec_eval_and_ir_measures():
    recs, truth = _frames(DUP_RUN, DUP_QRELS)
    got = _per_user(recs, truth, list(DICT_TOOLS["q1"]), "trec_eval", duplicates="drop")
    _assert_per_user(got, DICT_TOOLS, EXACT)
    # q1 as a dict: a 0.95, x 0.9, b 0.8, c 0.7, y 0.6 (the first copy's 0.5 would put a last)
    assert got["q1"]["ndcg@3"] == pytest.approx(_dcg([1, 0, 2]) / _dcg([2, 1, 1]), abs=EXACT)


def test_drop_keeps_the_first_place_and_moves_the_rest_up():
    recs, truth = _frames(DUP_RUN, DUP_QRELS)
    recs = recs.with_columns(pl.lit(1.0).alias("score"))
    names = list(RANX_TIED["q1"])
    got = _per_user(recs, truth, names, "trec_eval", duplicates="drop", order="input")
    _assert_per_user(got, RANX_TIED, 5e-9)
    assert got["q2"]["map"] == pytest.approx((1 + 2 / 3) / 2, abs=EXACT)  # d z e


def test_first_only_is_refused_on_every_face_naming_drop(tmp_path, capsys):
    # first_only kept a later copy's slot as a miss (d z (d) e), which no reference does
    recs, truth = _frames(DUP_RUN, DUP_QRELS)
    recs.write_parquet(tmp_path / "run.parquet")
    truth.write_parquet(tmp_path / "qrels.parquet")
    with pytest.raises(ValueError, match="'first_only' was removed: .*'drop'"):
        evaluate_recs(truth, recs, metrics=["map"], duplicates="first_only")
    argv = ["recs", "--ratings", str(tmp_path / "qrels.parquet")]
    argv += ["--recs", str(tmp_path / "run.parquet"), "--duplicates", "first_only"]
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    assert "'first_only' was removed" in capsys.readouterr().err
    job = tmp_path / "job.toml"
    job.write_text(
        'out = "job_out"\n[[tasks]]\ntype = "recs"\ncity = "c"\ntruth = "qrels.parquet"\n'
        'duplicates = "first_only"\n[tasks.models]\nrun = "run.parquet"\n'
    )
    assert main(["run", str(job), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "duplicates" in err and "'first_only' was removed" in err and "'drop'" in err
    assert not (tmp_path / "job_out").exists()


def test_drop_takes_the_last_rows_rank_under_order_rank():
    recs = pl.DataFrame({"user_id": [1, 1, 1, 1], "item_id": [7, 8, 7, 9], "rank": [1, 2, 4, 3]})
    truth = pl.DataFrame({"user_id": [1], "item_id": [7], "rating": [1.0]})
    # {7: rank 4, 8: rank 2, 9: rank 3} -> 8, 9, 7
    got = _per_user(recs, truth, ["mrr"], "trec_eval", duplicates="drop", order="rank")
    assert got[1]["mrr"] == pytest.approx(1 / 3, abs=EXACT)


def test_trec_eval_rejects_duplicates_and_names_drop():
    # usnistgov/trec_eval form_res_rels.c: "duplicate docs" is an error
    recs, truth = _frames(DUP_RUN, DUP_QRELS)
    with pytest.raises(InputError, match="duplicates='drop'"):
        score_recs_frame(recs, truth, metrics=["map"], convention="trec_eval")


# ------------------------------------------------------ the options through API, engine, CLI, job
def test_new_options_reach_the_engine_the_cli_the_job_and_the_manifest(tmp_path):
    recs, truth = _frames(DUP_RUN, DUP_QRELS)
    recs.write_parquet(tmp_path / "run.parquet")
    truth.write_parquet(tmp_path / "qrels.parquet")
    options = {"duplicates": "drop", "f_beta": "squared", "negative_gain": "keep"}
    metrics = ["map@10", "f2@10", "ndcg@3"]
    want = _summary(recs, truth, metrics, "trec_eval", **options)
    assert want["map@10"] == pytest.approx((0.8055555555555555 + 0.5833333333333333) / 2, abs=EXACT)
    streamed = evaluate_recs(
        tmp_path / "qrels.parquet",
        tmp_path / "run.parquet",
        metrics=metrics,
        convention="trec_eval",
        chunk_rows=3,
        **options,
    ).summary
    assert dict(streamed.select("metric", "value").iter_rows())["map@10"] == want["map@10"]

    out = tmp_path / "cli"
    argv = ["recs", "--ratings", str(tmp_path / "qrels.parquet")]
    argv += ["--recs", str(tmp_path / "run.parquet"), "--out", str(out), "--quiet"]
    argv += ["--convention", "trec_eval", "--metrics", ",".join(metrics), "--city", "c"]
    argv += ["--duplicates", "drop", "--f-beta", "squared", "--negative-gain", "keep"]
    assert main(argv) == 0
    summary = pl.read_parquet(out / "summary" / "city=c" / "model=run")
    assert dict(summary.select("metric", "value").iter_rows())["f2@10"] == want["f2@10"]
    config = json.loads((out / "manifest.json").read_text())["results"]["city=c/model=run"]
    assert {k: config["config"][k] for k in options} == options

    job = tmp_path / "job.toml"
    job.write_text(
        'out = "job_out"\n[[tasks]]\ntype = "recs"\ncity = "c"\ntruth = "qrels.parquet"\n'
        'metrics = ["map@10", "f2@10", "ndcg@3"]\nconvention = "trec_eval"\n'
        'duplicates = "drop"\nf_beta = "squared"\nnegative_gain = "keep"\n'
        '[tasks.models]\nrun = "run.parquet"\n'
    )
    assert main(["run", str(job), "--quiet"]) == 0
    summary = pl.read_parquet(tmp_path / "job_out" / "summary" / "city=c" / "model=run")
    values = dict(summary.select("metric", "value").iter_rows())
    assert values["map@10"] == want["map@10"] and values["f2@10"] == want["f2@10"]
