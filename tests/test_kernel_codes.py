"""Kernel codes are checked before a kernel runs, and how a metric is aggregated is declared in
its family's metric table, not guessed from its name."""

from __future__ import annotations

import numpy as np
import pytest

from mobeval.kernels import topk
from mobeval.metrics.nextloc import AGGREGATION, NextlocConvention, expand_metrics
from mobeval.tasks import logits


def test_an_unknown_topk_code_is_refused():
    lo = hi = np.array([1.0, 2.0])
    with pytest.raises(ValueError, match=r"unknown top-K metric code\(s\) \[7\]"):
        topk.single_target_metrics(lo, hi, np.array([topk.NDCG, 7]), np.array([5, 5]))
    with pytest.raises(ValueError, match="negative"):
        topk.single_target_metrics(lo, hi, np.array([topk.ACC]), np.array([-1]))
    values = topk.single_target_metrics(lo, hi, np.array([topk.NDCG]), np.array([5]))
    assert values[:, 0].tolist() == [1.0, 1.0 / np.log2(3.0)]


def test_every_code_is_a_metric_and_the_other_way_round():
    from mobeval.metrics.nextloc import CUTOFF_METRICS, UNCUT_METRICS

    assert set(CUTOFF_METRICS.values()) | set(UNCUT_METRICS.values()) == topk.CODES


def test_f1_aggregation_is_declared_in_the_table():
    columns = expand_metrics(["f1@k", "acc@k", "mrr"], [1, 5])
    ways = [columns.aggregation(j, NextlocConvention()) for j in range(len(columns.names))]
    assert dict(zip(columns.names, ways, strict=True)) == {
        "f1@1": "hits",
        "f1@5": "hits",
        "acc@1": "mean",
        "acc@5": "mean",
        "mrr": "mean",
    }
    mean = NextlocConvention(f1="mean")
    assert {columns.aggregation(j, mean) for j in range(len(columns.names))} == {"mean"}
    assert AGGREGATION == {topk.F1: "hits"}


def test_logits_f1_aggregation_is_declared():
    accumulator = logits.LogitsAccumulator(["acc@1", "f1_macro", "f1_weighted", "mrr"])
    assert accumulator._sum_names == ["acc@1", "mrr"]
    assert set(logits.AGGREGATION) == {"f1_weighted", "f1_macro"}


def test_recs_kernel_rules_are_named_and_checked():
    from mobeval.kernels import recs as K

    rules = K.StatsRules(
        rel_threshold=np.float64(4),
        user_mean_threshold=np.bool_(False),
        gain_mode=K.GAIN_LINEAR,
        gain_threshold=-np.inf,
        clamp_negative=True,
        idcg_rated=False,
        dup_mode=K.DUP_EACH,
        check_duplicates=True,
        precision_over_k=True,
        ap_mode=K.AP_RELEVANT,
        nan_if_no_relevant=False,
    ).checked()
    assert type(rules.rel_threshold) is float and type(rules.user_mean_threshold) is bool
    with pytest.raises(ValueError, match="ap_mode=7"):
        rules._replace(ap_mode=7).checked()
