"""SortedUnitChunks (io.chunking) cuts a sorted stream into chunks of whole units, as a plain
Python cutter does, and refuses a stream whose keys decrease (kernels.cuts)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from mobeval.io.chunking import NotSorted, SortedUnitChunks
from mobeval.kernels.cuts import last_unit_start


def _plain_chunks(keys: list[tuple], batch_sizes: list[int], chunk_rows: int) -> list[int]:
    """Chunk lengths: rows are gathered batch by batch; once chunk_rows are pending, the chunk
    ends before the last unit start among them (if that is not the first pending row)."""
    lengths, pending, position = [], [], 0
    for size in batch_sizes:
        pending += keys[position : position + size]
        position += size
        if len(pending) < chunk_rows:
            continue
        starts = [i for i in range(len(pending)) if i == 0 or pending[i] != pending[i - 1]]
        if starts[-1] == 0:
            continue
        lengths.append(starts[-1])
        pending = pending[starts[-1] :]
    return lengths + ([len(pending)] if pending else [])


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("columns", [1, 2])
def test_chunks_are_the_plain_cutters(seed, columns):
    rng = np.random.default_rng(seed)
    units = np.unique(rng.integers(-5, 5, size=(int(rng.integers(1, 15)), columns)), axis=0)
    keys = np.repeat(units, rng.integers(1, 6, size=len(units)), axis=0)
    frame = pl.DataFrame({f"k{j}": keys[:, j] for j in range(columns)}).with_row_index("row")
    cuts = np.sort(rng.choice(np.arange(1, len(keys)), size=min(3, len(keys) - 1), replace=False))
    sizes = np.diff(np.concatenate([[0], cuts, [len(keys)]])).tolist()
    batches = [
        frame.slice(int(o), s) for o, s in zip(np.cumsum([0, *sizes[:-1]]), sizes, strict=True)
    ]
    chunk_rows = int(rng.integers(1, 12))
    key = [f"k{j}" for j in range(columns)]
    chunks = list(SortedUnitChunks(iter(batches), key, chunk_rows))
    expected = _plain_chunks(list(map(tuple, keys.tolist())), sizes, chunk_rows)
    assert [c.height for c in chunks] == expected
    assert pl.concat(chunks).equals(frame)
    assert all(c.n_chunks() == 1 for c in chunks)


@pytest.mark.parametrize("key_type", [pl.Int64, pl.String])
def test_a_decreasing_key_is_not_sorted_within_and_across_batches(key_type):
    within = [pl.DataFrame({"k": [1, 2, 1]}).cast({"k": key_type})]
    across = [pl.DataFrame({"k": [1, 3]}), pl.DataFrame({"k": [2, 4]})]
    across = [b.cast({"k": key_type}) for b in across]
    for batches in (within, across):
        with pytest.raises(NotSorted):
            list(SortedUnitChunks(iter(batches), ["k"], 10))
        grouped = list(SortedUnitChunks(iter(batches), ["k"], 10, grouped=True))
        assert pl.concat(grouped)["k"].to_list() == sorted(pl.concat(batches)["k"].to_list())


def test_last_unit_start():
    keys = np.array([[1, 0], [1, 0], [1, 1], [2, -5], [2, -5]], dtype=np.int64)
    assert last_unit_start(keys) == (3, False)
    assert last_unit_start(keys[:2]) == (0, False)
    assert last_unit_start(keys[::-1].copy()) == (3, True)
