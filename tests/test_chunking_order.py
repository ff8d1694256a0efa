"""Hash buckets are read back in key order by sorting runs of equal keys (io.chunking)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from mobeval.io.chunking import grouped_order, read_bucket, write_buckets
from mobeval.kernels.keys import unit_count, unit_offsets


def _stable_order(keys: np.ndarray) -> list[int]:
    """Python's sort is stable: the oracle."""
    return sorted(range(keys.shape[0]), key=lambda i: tuple(keys[i].tolist()))


@pytest.mark.parametrize("seed", range(40))
def test_grouped_order_is_the_stable_sort(seed):
    rng = np.random.default_rng(seed)
    n, columns = int(rng.integers(1, 50)), int(rng.integers(1, 4))
    keys = rng.integers(-3, 4, size=(n, columns)).astype(np.int64)
    keys = np.repeat(keys, rng.integers(1, 5, size=n), axis=0)  # runs, as buckets hold them
    keys.flags.writeable = False
    assert grouped_order(keys).tolist() == _stable_order(keys)


@pytest.mark.parametrize("seed", range(20))
def test_unit_count_counts_the_runs_of_equal_keys(seed):
    rng = np.random.default_rng(seed)
    n, columns = int(rng.integers(0, 60)), int(rng.integers(1, 4))
    keys = rng.integers(-2, 2, size=(n, columns)).astype(np.int64)
    runs = sum(1 for i in range(n) if i == 0 or keys[i].tolist() != keys[i - 1].tolist())
    assert unit_count(keys) == runs == len(unit_offsets(keys)) - 1


def test_a_bucket_comes_back_sorted_with_each_units_rows_in_input_order(tmp_path):
    rng = np.random.default_rng(1)
    units = rng.permutation(300)
    batches = [
        pl.DataFrame({"uid": np.repeat(part, 3), "row": np.arange(len(part) * 3) + 10_000 * i})
        for i, part in enumerate(np.array_split(np.concatenate([units, units[:50]]), 7))
    ]
    buckets = write_buckets(iter(batches), ["uid"], 4, tmp_path)
    whole = pl.concat(batches)
    seen = 0
    for written in buckets:
        bucket = read_bucket(written, ["uid"])
        expected = whole.filter(pl.col("uid").is_in(bucket["uid"].unique().implode()))
        assert bucket.equals(expected.sort("uid", maintain_order=True))
        seen += bucket.height
    assert seen == whole.height
