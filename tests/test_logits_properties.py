"""Logits metrics vs a plain-Python oracle on tie-heavy random matrices; chunk-size invariance."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mobeval.errors import InputError
from mobeval.kernels.logits import cross_entropy_error_bound
from mobeval.tasks.logits import score_logits

SETTINGS = settings(max_examples=30, deadline=None)


def _ranks(row, t, ties):
    """The target's equally likely ranks: one, or under "average" every place of its tie group."""
    order = sorted(range(len(row)), key=lambda j: (-row[j], j))
    greater = sum(v > row[t] for v in row)
    equal = sum(v == row[t] for v in row)
    if ties == "average":
        return list(range(greater + 1, greater + equal + 1))
    return [
        {
            "optimistic": 1 + greater,
            "pessimistic": greater + equal,
            "index": order.index(t) + 1,
            "index_desc": sorted(range(len(row)), key=lambda j: (-row[j], -j)).index(t) + 1,
        }[ties]
    ]


def _mean(values):
    return math.fsum(values) / len(values)


def _f1(y, pred, weighted):
    labels = sorted(set(y) | set(pred))
    scores, weights = [], []
    for c in labels:
        tp = sum(a == c and b == c for a, b in zip(y, pred, strict=True))
        n_true, n_pred = y.count(c), pred.count(c)
        scores.append(2 * tp / (n_true + n_pred))
        weights.append(n_true)
    if weighted:
        return math.fsum(s * w for s, w in zip(scores, weights, strict=True)) / sum(weights)
    return math.fsum(scores) / len(scores)


def _oracle(x, y, ks, ties, ignore):
    rows = [i for i in range(len(y)) if y[i] != ignore]
    out = {}
    ranks = [_ranks([float(v) for v in x[i]], y[i], ties) for i in rows]
    n_classes = x.shape[1]
    for k in ks:
        acc = [_mean([r <= min(k, n_classes) for r in rs]) for rs in ranks]
        ndcg = [_mean([1 / math.log2(r + 1) if r <= k else 0.0 for r in rs]) for rs in ranks]
        out[f"acc@{k}"] = math.fsum(acc) / len(rows)
        out[f"ndcg@{k}"] = math.fsum(ndcg) / len(rows)
    out["mrr"] = math.fsum(_mean([1 / r for r in rs]) for rs in ranks) / len(rows)
    pred = [max(range(n_classes), key=lambda j, i=i: (float(x[i][j]), -j)) for i in rows]
    truth = [int(y[i]) for i in rows]
    out["f1_weighted"] = _f1(truth, pred, True)
    out["f1_macro"] = _f1(truth, pred, False)
    ce = []
    for i in rows:
        row = [float(v) for v in x[i]]
        m = max(row)
        ce.append(math.log(math.fsum(math.exp(v - m) for v in row)) + m - row[y[i]])
    out["cross_entropy"] = math.fsum(ce) / len(rows)
    return out


@st.composite
def problems(draw):
    n = draw(st.integers(1, 20))
    c = draw(st.integers(1, 12))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    values = draw(st.lists(st.integers(-3, 3), min_size=n * c, max_size=n * c))
    x = (np.array(values, dtype=np.float64).reshape(n, c) / 2).astype(dtype)
    y = np.array(draw(st.lists(st.integers(0, c - 1), min_size=n, max_size=n)), dtype=np.int64)
    return x, y


@SETTINGS
@given(
    problems(),
    st.sampled_from(["optimistic", "pessimistic", "average", "index", "index_desc"]),
    st.integers(2, 10),
    st.booleans(),
)
def test_vs_oracle_and_chunk_invariance(problem, ties, chunk_rows, use_ignore):
    x, y = problem
    ignore = int(y[0]) if use_ignore else None
    if ignore is not None and (y == ignore).all():
        return
    ks = (1, 2, 5, 20)
    whole = score_logits(x, y, k=ks, ties=ties, ignore_target=ignore, chunk_rows=len(y))
    chunked = score_logits(x, y, k=ks, ties=ties, ignore_target=ignore, chunk_rows=chunk_rows)
    assert whole.summary.equals(chunked.summary)
    want = _oracle(x, y, ks, ties, ignore)
    got = dict(zip(whole.summary["metric"], whole.summary["value"], strict=True))
    assert set(got) == set(want)
    for name, value in want.items():
        tol = 1e-12
        if name == "cross_entropy" and x.dtype == np.float32:  # float32 terms, as torch
            tol = cross_entropy_error_bound(x.shape[1], value)
        assert abs(got[name] - value) <= tol, (name, got[name], value)
    assert whole.summary["n"][0] == sum(1 for t in y if t != ignore)


def test_percent_and_per_sample(tmp_path):
    x = np.array([[0.0, 2.0, 1.0], [3.0, 3.0, 1.0]], dtype=np.float32)
    y = np.array([2, 1])
    got = score_logits(x, y, k=(1, 2), percent=True, per_sample=True, ties="index")
    values = dict(zip(got.summary["metric"], got.summary["value"], strict=True))
    assert values["acc@1"] == 0.0 and values["acc@2"] == 100.0
    assert values["mrr"] == pytest.approx(100 * (1 / 2 + 1 / 2) / 2)
    assert got.per_sample["rank"].to_list() == [2.0, 2.0]
    assert got.per_sample["top1"].to_list() == [1, 0]
    assert values["cross_entropy"] < 5  # never in percent


def test_files_npy_and_parquet_agree(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 7)).astype(np.float32)
    y = rng.integers(0, 7, size=50)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    fixed = pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), 7)
    pq.write_table(pa.table({"logits": fixed, "target": y}), tmp_path / "fixed.parquet")
    float32_lists = pl.Series(x.tolist(), dtype=pl.List(pl.Float32))  # the precision of x
    pl.DataFrame({"logits": float32_lists, "y": y}).write_parquet(tmp_path / "list.parquet")
    ref = score_logits(x, y).summary
    assert score_logits(tmp_path / "x.npy", tmp_path / "y.npy", chunk_rows=9).summary.equals(ref)
    assert score_logits(str(tmp_path / "fixed.parquet"), "target", chunk_rows=8).summary.equals(ref)
    assert score_logits(
        tmp_path / "list.parquet", tmp_path / "y.npy", chunk_rows=13
    ).summary.equals(ref)


def test_bad_inputs(tmp_path):
    x = np.zeros((3, 4), dtype=np.float32)
    with pytest.raises(InputError, match="row 2"):
        score_logits(x, np.array([0, 1, 4]))
    with pytest.raises(InputError, match="float32 or float64"):
        score_logits(x.astype(np.int32), np.array([0, 1, 2]))
    bad = x.copy()
    bad[1, 3] = np.nan
    with pytest.raises(InputError, match="NaN.*row 1"):
        score_logits(bad, np.array([0, 1, 2]))
    with pytest.raises(InputError, match="3 logits rows but 2 targets"):
        score_logits(x, np.array([0, 1]))
    with pytest.raises(InputError, match="integer"):
        score_logits(x, np.array([0.0, 1.0, 2.0]))
    pl.DataFrame({"logits": [[0.0, 1.0], [0.0, 1.0, 2.0]], "y": [0, 1]}).write_parquet(
        tmp_path / "ragged.parquet"
    )
    with pytest.raises(InputError, match=r"ragged.parquet: column 'logits'.*row 1"):
        score_logits(tmp_path / "ragged.parquet", "y")
    # padding rows may carry any target, even one outside the class range
    ok = score_logits(x, np.array([0, -1, -1]), ignore_target=-1)
    assert ok.summary["n"][0] == 1
