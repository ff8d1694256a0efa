"""Recommendation metrics vs a plain-Python oracle written from the spec, on random small inputs
(duplicates, empty lists, users on one side only), plus chunk invariance of the summary."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobeval.errors import ConfigError, InputError
from mobeval.metrics.recs import RECS_PRESETS, parse_recs_metrics
from mobeval.tasks.recs import finalize, score_recs_frame

METRICS = ["precision", "recall", "f1", "f2", "map", "mrr", "ndcg", "hit_rate"]
EXTRA = ["r-precision", "mse", "mae", "rmse"]
CUTOFFS = [1, 3]
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ----------------------------------------------------------------------------- oracle


def _gain(r, relevant, o):
    if o["gain"] == "binary":
        return 1.0 if relevant else 0.0
    t = -math.inf if o["gain_threshold"] is None else o["gain_threshold"]
    if r < t:
        return 0.0
    if o["gain"] == "linear":
        return r
    if o["gain"] == "exponential":
        return 2.0**r - 1.0
    return 2.0 ** (r - t + 1.0) - 1.0


def _dcg(gains, base):
    return math.fsum(g / (math.log(i + 2) / math.log(base)) for i, g in enumerate(gains))


def _relevant(truth, o):
    """A user's relevance threshold (user_mean: the mean of their ratings; None: every rated item)
    and their relevant items (rated at or above it)."""
    ratings = list(truth.values())
    thr = o["relevant_threshold"]
    if thr == "user_mean":
        thr = sum(ratings) / len(ratings) if ratings else math.inf
    elif thr is None:
        thr = -math.inf
    return thr, {i for i, r in truth.items() if r >= thr}


def _oracle_user(lst, truth, o, k):
    """Every metric of one user at cutoff k (None = whole list), straight from the definitions."""
    thr, rel = _relevant(truth, o)
    undefined = 0.0 if o["no_relevant"] == "zero" else math.nan
    cut = lst if k is None else lst[:k]
    dup = o["duplicates"]
    tp = sum(i in rel for i in cut) if dup == "count_each" else len(set(cut) & rel)
    den = len(cut) if (o["precision_denominator"] == "list_length" or k is None) else k
    out = {"_tp": tp, "_den": den, "_rel": len(rel)}
    hits, ap, first = 0, 0.0, None
    gains_list = []
    for p, i in enumerate(cut):
        if i in rel:
            hits += 1
            ap += hits / (p + 1)
        if i in rel and first is None:
            first = p
        gains_list.append(_gain(truth[i], i in rel, o) if i in truth else 0.0)
    rated = [_gain(truth[i], i in rel, o) for i in lst if i in truth]
    if o["idcg"] == "retrieved_rated":
        actual = rated if k is None else rated[:k]
        ideal = sorted(rated, reverse=True)[: len(rated) if k is None else k]
        idcg = _dcg(ideal, o["log_base"])
        out["ndcg"] = math.nan if not rated or idcg == 0 else _dcg(actual, o["log_base"]) / idcg
    else:
        ideal = sorted((_gain(r, r >= thr, o) for r in truth.values()), reverse=True)
        idcg = _dcg(ideal if k is None else ideal[:k], o["log_base"])
        out["ndcg"] = _dcg(gains_list, o["log_base"]) / idcg if idcg > 0 else undefined
    if not rel:
        out.update(precision=undefined, recall=undefined, map=undefined, mrr=undefined)
        out.update(hit_rate=undefined, f1=undefined, f2=undefined)
        return out
    p_ = tp / den if den else 0.0
    r_ = tp / len(rel)
    d = {"relevant": len(rel), "min_k_relevant": min(k or math.inf, len(rel)), "hits": hits}[
        o["ap_denominator"]
    ]
    out.update(precision=p_, recall=r_, map=ap / d if d else 0.0, hit_rate=float(tp > 0))
    out["mrr"] = 1.0 / (first + 1) if first is not None else 0.0
    for name, b in (("f1", 1.0), ("f2", 2.0)):
        w = b * b if o["f_beta"] == "squared" else b  # linear: trec_eval's set_F.b
        out[name] = (1 + w) * p_ * r_ / (w * p_ + r_) if (w * p_ + r_) > 0 else 0.0
    return out


def _oracle_extra(lst, truth, scores, o):
    _, rel = _relevant(truth, o)
    r_len = len(rel)
    cut = lst[:r_len]
    tp = sum(i in rel for i in cut) if o["duplicates"] == "count_each" else len(set(cut) & rel)
    den = r_len if o["precision_denominator"] == "k" else min(r_len, len(lst))
    undefined = 0.0 if o["no_relevant"] == "zero" else math.nan
    out = {"_rp_tp": tp, "_rp_den": den}
    out["r-precision"] = (tp / den if den else 0.0) if rel else undefined
    # each rated item once, with its first copy's score (ClayRS pairs them with
    # numpy_indexed.indices, which returns the first match); count_each: one error per copy
    pairs, paired = [], set()
    for i, s in zip(lst, scores, strict=True):
        if i in truth and (o["duplicates"] == "count_each" or i not in paired):
            pairs.append((i, s))
            paired.add(i)
    diffs = [s - truth[i] for i, s in pairs]
    n = len(diffs)
    out["mse"] = math.fsum(d * d for d in diffs) / n if n else math.nan
    out["mae"] = math.fsum(abs(d) for d in diffs) / n if n else math.nan
    out["rmse"] = math.sqrt(out["mse"]) if n else math.nan
    return out


def _oracle(recs, truth, scores, o, names):
    """Per-user dict and system values, in the convention's averaging."""
    users = sorted(set(recs) | set(truth))
    if o["denominator"] == "users_in_both":
        users = [u for u in users if recs.get(u) and truth.get(u)]
    elif o["denominator"] == "users_in_truth":
        users = [u for u in users if truth.get(u)]
    per = {}
    for u in users:
        lst, tr = recs.get(u, []), truth.get(u, {})
        row = dict(_oracle_extra(lst, tr, scores.get(u, []), o))
        for k in [*CUTOFFS, None]:
            for m, v in _oracle_user(lst, tr, o, k).items():
                row[m if k is None else f"{m}@{k}"] = v
        per[u] = row
    system = {}
    n_relevant = sum(1 for u in users if per[u]["_rel"] > 0)
    for name in names:
        fam = name.split("@")[0]
        vals = [per[u][name] for u in users]
        ok = [v for v in vals if not math.isnan(v)]
        if o["averaging"] == "micro" and fam in ("precision", "recall", "f1", "f2", "r-precision"):
            suffix = name[len(fam) :]
            keep = [u for u in users if not math.isnan(per[u][name])]
            if fam == "r-precision":
                tp, den = (sum(per[u][c] for u in keep) for c in ("_rp_tp", "_rp_den"))
            else:
                tp, den = (sum(per[u][c + suffix] for u in keep) for c in ("_tp", "_den"))
            rel = sum(per[u]["_rel"] for u in keep)
            p_, r_ = (tp / den if den else 0.0), (tp / rel if rel else 0.0)
            b = {"f1": 1.0, "f2": 2.0}.get(fam)
            if b is not None and o["f_beta"] == "squared":
                b = b * b  # the weight of recall: b^2, or b itself (trec_eval's set_F)
            if fam in ("precision", "r-precision"):
                system[name] = p_
            elif fam == "recall":
                system[name] = r_
            else:
                system[name] = (1 + b) * p_ * r_ / (b * p_ + r_) if b * p_ + r_ else 0.0
        elif o["denominator"] == "users_with_relevant" and fam not in ("mse", "mae", "rmse"):
            system[name] = math.fsum(ok) / n_relevant if n_relevant else math.nan
        else:
            system[name] = math.fsum(ok) / len(ok) if ok else math.nan
    return per, system


# ----------------------------------------------------------------------------- data


@st.composite
def datasets(draw, same_users=False):
    n_users = draw(st.integers(1, 5))
    recs, truth, scores = {}, {}, {}
    for u in range(n_users):
        items = st.integers(0, 9)
        lst = draw(st.lists(items, min_size=0 if not same_users else 1, max_size=8))
        tr_items = draw(
            st.lists(items, min_size=0 if not same_users else 1, max_size=7, unique=True)
        )
        if lst or same_users:
            recs[u] = lst
            scores[u] = [float(draw(st.integers(0, 10))) / 2 for _ in lst]
        if tr_items or same_users:
            truth[u] = {i: float(draw(st.integers(1, 5))) for i in tr_items}
    return recs, truth, scores


def _frames(recs, truth, scores):
    rows = [
        (u, i, s, p + 1)
        for u in recs
        for p, (i, s) in enumerate(zip(recs[u], scores[u], strict=True))
    ]
    rec_df = pl.DataFrame(
        rows,
        schema={"user_id": pl.Int64, "item_id": pl.Int64, "score": pl.Float64, "rank": pl.Int32},
        orient="row",
    )
    trows = [(u, i, r) for u in truth for i, r in truth[u].items()]
    tru_df = pl.DataFrame(
        trows, schema={"user_id": pl.Int64, "item_id": pl.Int64, "rating": pl.Float64}, orient="row"
    )
    # shuffle users' blocks around: 'input' order must only keep each user's own row order
    return rec_df.sort("user_id", descending=True, maintain_order=True), tru_df.sample(
        fraction=1.0, shuffle=True, seed=1
    )


def _options(preset, **over):
    o = {f: getattr(RECS_PRESETS[preset], f) for f in RECS_PRESETS[preset].__dataclass_fields__}
    o.update(over)
    return o


def _close(a, b):
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12


def _check(recs, truth, scores, preset, **over):
    o = _options(preset, **over)
    names = [s.name for s in parse_recs_metrics(METRICS + EXTRA, CUTOFFS)]
    names += [s.name for s in parse_recs_metrics(METRICS)]
    rec_df, tru_df = _frames(recs, truth, scores)
    if o["duplicates"] == "drop":
        recs, scores = _as_dicts(recs, scores)
    per, system = _oracle(recs, truth, scores, o, names)
    if o["no_relevant"] == "error_if_all_nan":
        all_nan = all(math.isnan(per[u]["precision"]) for u in per)
        if all_nan:
            with pytest.raises(InputError, match="No user has a rating above"):
                score_recs_frame(rec_df, tru_df, metrics=names, convention=preset, **over).summary()
            return
    got = score_recs_frame(rec_df, tru_df, metrics=names, convention=preset, **over)
    summary = dict(zip(got.summary()["metric"], got.summary()["value"], strict=True))
    for name in names:
        assert _close(summary[name], system[name]), (name, summary[name], system[name], o)
    assert got.per_user["user_id"].to_list() == sorted(per)
    for name in names:
        for u, v in zip(got.per_user["user_id"], got.per_user[name], strict=True):
            assert _close(v, per[u][name]), (name, u, v, per[u][name])


# ----------------------------------------------------------------------------- tests


@SETTINGS
@given(datasets(same_users=True), st.sampled_from(["user_mean", 3.0, 6.0]), st.booleans())
def test_clayrs_vs_oracle(data, threshold, micro):
    recs, truth, scores = data
    over = {"relevant_threshold": threshold, "averaging": "micro" if micro else "macro"}
    _check(recs, truth, scores, "clayrs", **over)


@SETTINGS
@given(datasets(), st.sampled_from(["relison", "relison_unweighted"]), st.booleans())
def test_relison_vs_oracle(data, preset, min_k):
    recs, truth, scores = data
    if preset == "relison_unweighted":
        truth = {u: dict.fromkeys(tr, 1.0) for u, tr in truth.items()}
    over = {"ap_denominator": "min_k_relevant"} if min_k else {}
    _check(recs, truth, scores, preset, **over)


def _as_dicts(recs, scores):
    """Each user's list as a dict filled row by row holds it (``d[item] = (score, rank)``: ranx,
    pytrec_eval, ir_measures), ranked by the rank each entry kept (``order="rank"``)."""
    lists, kept_scores = {}, {}
    for u, lst in recs.items():
        entries = {}
        for rank, (item, score) in enumerate(zip(lst, scores[u], strict=True), 1):
            entries[item] = (score, rank)
        ranked = sorted(entries.items(), key=lambda entry: entry[1][1])
        lists[u] = [item for item, _ in ranked]
        kept_scores[u] = [score for _, (score, _) in ranked]
    return lists, kept_scores


@SETTINGS
@given(
    datasets(),
    st.sampled_from(["count_each", "drop"]),
    st.sampled_from(["binary", "linear", "exponential"]),
    st.sampled_from(["users_in_both", "users_in_truth", "users_with_relevant"]),
    st.sampled_from(["relevant", "hits"]),
    st.sampled_from([2.0, 10.0]),
)
def test_trec_eval_family_vs_oracle(data, dup, gain, denominator, ap, base):
    recs, truth, scores = data
    over = dict(
        duplicates=dup,
        gain=gain,
        denominator=denominator,
        ap_denominator=ap,
        log_base=base,
        relevant_threshold=3.0,
        order="rank",
        no_relevant="nan_skip" if ap == "hits" else "zero",
    )
    _check(recs, truth, scores, "trec_eval", **over)


@SETTINGS
@given(datasets(), st.integers(1, 4))
def test_chunks_of_whole_users_give_the_same_bits(data, n_chunks):
    recs, truth, scores = data
    rec_df, tru_df = _frames(recs, truth, scores)
    names = METRICS + EXTRA
    kw = dict(metrics=names, cutoffs=CUTOFFS, convention="relison", averaging="micro")
    whole = score_recs_frame(rec_df, tru_df, **kw)
    users = sorted(set(recs) | set(truth))
    parts = [users[i::n_chunks] for i in range(n_chunks)]
    state = None
    for part in parts:
        sub = score_recs_frame(
            rec_df.filter(pl.col("user_id").is_in(part)),
            tru_df.filter(pl.col("user_id").is_in(part)),
            **kw,
        ).state
        if state is None:
            state = sub
        else:
            state.merge(sub)
    a, b = finalize(state), whole.summary()
    assert a["metric"].to_list() == b["metric"].to_list()
    np.testing.assert_array_equal(a["value"].to_numpy(), b["value"].to_numpy())
    assert a["n"].to_list() == b["n"].to_list()


def test_trec_eval_sorts_by_score_then_id_string_descending():
    recs = pl.DataFrame({"user_id": [1, 1, 1], "item_id": [9, 10, 8], "score": [1.0, 1.0, 2.0]})
    truth = pl.DataFrame({"user_id": [1], "item_id": [9], "rating": [1.0]})
    # order: 8 (2.0), then the tie 9 vs 10 as strings descending: "9" > "10"
    got = score_recs_frame(recs, truth, metrics=["mrr"], convention="trec_eval").summary()
    assert got["value"][0] == 0.5
    asc = score_recs_frame(
        recs, truth, metrics=["mrr"], convention="trec_eval", order="score_id_asc"
    ).summary()
    assert asc["value"][0] == 0.5  # 8, 9, 10 numerically
    truth10 = truth.with_columns(pl.lit(10).alias("item_id"))
    got10 = score_recs_frame(recs, truth10, metrics=["mrr"], convention="trec_eval").summary()
    assert got10["value"][0] == 1 / 3


def test_user_mean_threshold_sums_like_numpy():
    ratings = [0.1] * 9 + [0.7, 0.3] * 7
    truth = pl.DataFrame(
        {"user_id": [1] * len(ratings), "item_id": range(len(ratings)), "rating": ratings}
    )
    recs = pl.DataFrame({"user_id": [1], "item_id": [0]})
    mean = np.mean(np.array(ratings))
    n_rel = sum(r >= mean for r in ratings)
    got = score_recs_frame(recs, truth, metrics=["recall"], convention="clayrs").per_user
    assert got["recall"][0] == (1 / n_rel if mean <= 0.1 else 0.0)


def test_bad_inputs_name_file_column_and_key():
    recs = pl.DataFrame({"user_id": [1, 1, 2], "item_id": [1, 1, 3], "score": [1.0, 0.5, 2.0]})
    truth = pl.DataFrame({"user_id": [1, 2], "item_id": [1, 3], "rating": [5.0, 4.0]})
    with pytest.raises(InputError, match=r"recs.parquet: column 'item_id'.*\(1, 1\)"):
        score_recs_frame(
            recs, truth, metrics="map", convention="trec_eval", path_recs="recs.parquet"
        )
    nan_truth = truth.with_columns(pl.Series("rating", [5.0, float("nan")]))
    with pytest.raises(InputError, match=r"t.parquet: column 'rating'.*\(2, 3\)"):
        score_recs_frame(
            recs, nan_truth, metrics="map", convention="clayrs", path_ratings="t.parquet"
        )
    with pytest.raises(InputError, match=r"column 'user_id'.*first offending key: 2"):
        score_recs_frame(recs, truth.head(1), metrics="map", convention="clayrs")
    with pytest.raises(InputError, match="rated twice"):
        score_recs_frame(recs, pl.concat([truth, truth]), metrics="map", convention="clayrs")
    with pytest.raises(InputError, match="missing column"):
        score_recs_frame(recs.drop("score"), truth, metrics="rmse", convention="clayrs")
    with pytest.raises(ConfigError):
        score_recs_frame(recs, truth, metrics="precision@0", convention="clayrs")
    with pytest.raises(ConfigError):
        score_recs_frame(recs, truth, metrics="rmse@3", convention="clayrs")
    with pytest.raises(ConfigError):
        score_recs_frame(recs, truth, metrics="map", convention="nope")
    with pytest.raises(ConfigError):
        score_recs_frame(recs, truth, metrics="map", convention="clayrs", gain="square")


def test_metric_grid_expands_every_combination():
    names = [s.name for s in parse_recs_metrics(["precision", "ndcg", "map@5", "rmse"], [1, 5, 10])]
    assert names == [
        "precision@1",
        "precision@5",
        "precision@10",
        "ndcg@1",
        "ndcg@5",
        "ndcg@10",
        "map@5",
        "rmse",
    ]
    assert [s.name for s in parse_recs_metrics(["F2@3", "fmeasure"], None, beta=0.5)] == [
        "f2@3",
        "f0.5",
    ]
