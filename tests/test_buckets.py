"""Hash buckets (kernels.buckets, io.chunking): every unit in one bucket, rows grouped stably, and
unsorted input scored in memory or over buckets gives the sorted input's numbers."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from mobeval.api import evaluate_nextloc
from mobeval.io.chunking import bucket_ids
from mobeval.kernels.buckets import bucket_order, key_buckets


def _readonly(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


@pytest.mark.parametrize("seed", range(20))
def test_bucket_order_is_a_stable_grouping_by_bucket(seed):
    rng = np.random.default_rng(seed)
    n_buckets = int(rng.integers(1, 9))
    buckets = _readonly(rng.integers(0, n_buckets, size=int(rng.integers(0, 200))))
    order, bounds = bucket_order(buckets, n_buckets)
    expected = sorted(range(len(buckets)), key=lambda row: buckets[row])  # Python's sort: stable
    assert order.tolist() == expected
    for bucket in range(n_buckets):
        assert bounds[bucket + 1] - bounds[bucket] == int((buckets == bucket).sum())
    assert bounds[0] == 0 and bounds[-1] == len(buckets)


@pytest.mark.parametrize("columns", [1, 3])
def test_equal_keys_share_a_bucket_and_buckets_are_used(columns):
    rng = np.random.default_rng(columns)
    extremes = [np.iinfo(np.int64).min, -1, 0, 1, np.iinfo(np.int64).max]
    values = rng.choice(np.array(extremes + list(range(-50, 50)), dtype=np.int64), (400, columns))
    keys = _readonly(np.concatenate([values, values[::-1]]))
    buckets = key_buckets(keys, 7)
    assert buckets.min() >= 0 and buckets.max() < 7
    assert len(set(buckets.tolist())) == 7
    first = {}
    for row, bucket in zip(map(tuple, keys.tolist()), buckets.tolist(), strict=True):
        assert first.setdefault(row, bucket) == bucket


def test_string_keys_share_a_bucket():
    frame = pl.DataFrame({"user": ["a", "b", "c", "a", "b", "c"] * 10, "x": range(60)})
    buckets = bucket_ids(frame, ["user"], 5)
    by_user = {}
    for user, bucket in zip(frame["user"], buckets.tolist(), strict=True):
        assert by_user.setdefault(user, bucket) == bucket


@pytest.mark.parametrize("chunk_rows", [7, 50, 10**6], ids=["buckets", "few-buckets", "in-memory"])
def test_unsorted_input_gives_the_sorted_numbers(chunk_rows):
    rng = np.random.default_rng(5)
    n_samples, candidates = 60, 6
    truth = pl.DataFrame(
        {"sample_id": np.arange(n_samples) - 30, "location": rng.integers(0, 8, n_samples)}
    )
    predictions = pl.DataFrame(
        {
            "sample_id": np.repeat(np.arange(n_samples) - 30, candidates),
            "location": np.tile(np.arange(candidates), n_samples),
            "score": rng.integers(0, 3, n_samples * candidates).astype(float),
        }
    )
    options = {"k": [1, 3], "metrics": ["acc@k", "ndcg@k", "mrr"], "ties": "input"}
    whole = evaluate_nextloc(truth, predictions, chunk_rows=10**6, **options)
    order = rng.permutation(n_samples) - 30  # samples shuffled, each one's rows in input order
    shuffled = pl.concat([predictions.filter(pl.col("sample_id") == s) for s in order.tolist()])
    again = evaluate_nextloc(
        truth.reverse(), shuffled, chunk_rows=chunk_rows, progress=False, **options
    )
    assert again.summary.equals(whole.summary)
    assert again.per_unit.sort("sample_id").equals(whole.per_unit)
