"""SortedUnitChunks (io.chunking) cuts a sorted stream into chunks of whole units, as a plain
Python cutter does (a large batch where it lies, its chunk a view of the batch), and refuses a
stream whose keys decrease (kernels.cuts)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from mobeval.io.chunking import NotSorted, SortedUnitChunks
from mobeval.kernels.cuts import unit_bounds


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
        assert pl.concat(grouped)["k"].to_list() == pl.concat(batches)["k"].to_list()


def test_unit_bounds():
    keys = np.array([[1, 0], [1, 0], [1, 1], [2, -5], [2, -5]], dtype=np.int64)
    assert unit_bounds(keys) == (0, 3, False)
    assert unit_bounds(keys, np.array([1, 0])) == (2, 3, False)
    assert unit_bounds(keys[:2], np.array([1, 0])) == (-1, -1, False)
    assert unit_bounds(keys[:2], np.array([1, 1])) == (0, 0, True)
    assert unit_bounds(keys[::-1].copy()) == (0, 3, True)


def _plain_bounds(keys: list[int], previous: int | None) -> tuple[int, int, bool]:
    """The first and last row whose key differs from the row before (row 0: from ``previous``,
    always a start without one) and whether a key falls below the row before."""
    before = [previous, *keys[:-1]]
    starts = [r for r, (k, b) in enumerate(zip(keys, before, strict=True)) if b is None or k != b]
    falls = any(b is not None and k < b for k, b in zip(keys, before, strict=True))
    return (starts[0], starts[-1], falls) if starts else (-1, -1, falls)


def test_one_key_column_bounds_as_a_plain_scan():
    """One key column takes its own kernel (fails before: there was none); its answers are
    the plain scan's, sorted or not, following a previous key or not."""
    from mobeval.kernels.cuts import _column_bounds

    rng = np.random.default_rng(37)
    for _ in range(2000):
        n = int(rng.integers(1, 12))
        keys = rng.integers(0, 4, n)
        if rng.random() < 0.6:
            keys = np.sort(keys)
        previous = None if rng.random() < 0.3 else int(rng.integers(0, 4))
        column = keys.astype(np.int64)
        known = previous is not None
        got = _column_bounds(column, np.int64(previous if known else column[0]), known)
        expected = _plain_bounds(column.tolist(), previous)
        assert (int(got[0]), int(got[1]), bool(got[2])) == expected, (keys, previous)
        two = None if previous is None else np.array([previous], np.int64)
        assert unit_bounds(column.reshape(-1, 1), two) == expected


def _plain_in_place(keys: list[tuple], sizes: list[int], chunk_rows: int, in_place: int):
    """(length, cut in place) of each chunk: a batch of ``in_place`` rows or more that starts a
    unit gives the rows pending and its rows before its first unit start (if any rows), then its
    rows from its first unit start: to the batch's end when the next batch starts a unit at its
    first row or there is none (cut in place), else to its last unit start (cut in place), its
    rows from the last carrying over. Smaller batches gather as in :func:`_plain_chunks`."""
    chunks, pending, position, previous = [], [], 0, None
    held = None  # (rows from the first unit start to the last, rows from the last to the end)
    for size in sizes:
        batch = keys[position : position + size]
        position += size
        starts = [i for i in range(size) if batch[i] != (batch[i - 1] if i else previous)]
        previous = batch[-1]
        if held is not None:
            if starts and starts[0] == 0:
                chunks.append((held[0] + held[1], True))
                pending = []
            elif held[0]:
                chunks.append((held[0], True))
            held = None
        if size >= in_place and starts:
            if pending:
                chunks.append((len(pending) + starts[0], False))
            held = (starts[-1] - starts[0], size - starts[-1])
            pending = batch[starts[-1] :]
            continue
        pending += batch
        if len(pending) < chunk_rows:
            continue
        cut = [i for i in range(1, len(pending)) if pending[i] != pending[i - 1]]
        if cut:
            chunks.append((cut[-1], False))
            pending = pending[cut[-1] :]
    if held is not None:
        return chunks + [(held[0] + held[1], True)]
    return chunks + ([(len(pending), False)] if pending else [])


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("key_type", [pl.Int64, pl.String])
def test_large_batches_are_cut_in_place(seed, key_type):
    rng = np.random.default_rng(seed)
    units = np.unique(rng.integers(-9, 9, size=(int(rng.integers(1, 20)), 2)), axis=0)
    keys = np.repeat(units, rng.integers(1, 5, size=len(units)), axis=0)
    cuts = np.sort(rng.choice(np.arange(1, len(keys)), size=min(4, len(keys) - 1), replace=False))
    bounds = [0, *cuts.tolist(), len(keys)]
    if key_type == pl.String:  # text keys that sort as the integers do
        keys = keys + 50  # two digits each
    batches = [  # each batch its own buffers, as a reader decodes them
        pl.DataFrame(
            {"k0": keys[a:b, 0].copy(), "k1": keys[a:b, 1].copy(), "row": np.arange(a, b)}
        ).cast({"k0": key_type, "k1": key_type})
        for a, b in zip(bounds, bounds[1:], strict=False)
    ]
    chunk_rows, in_place = int(rng.integers(1, 12)), int(rng.integers(1, 6))
    chunks = list(SortedUnitChunks(iter(batches), ["k0", "k1"], chunk_rows, in_place_rows=in_place))
    expected = _plain_in_place(
        list(map(tuple, keys.tolist())), np.diff(bounds).tolist(), chunk_rows, in_place
    )
    assert [c.height for c in chunks] == [length for length, _ in expected]
    assert pl.concat(chunks)["row"].to_list() == list(range(len(keys)))
    assert all(c.n_chunks() == 1 for c in chunks)
    for chunk, (_, in_place_cut) in zip(chunks, expected, strict=True):
        rows = chunk["row"].to_numpy()
        if in_place_cut:  # a view of its batch's buffer, no copy
            assert any(np.shares_memory(rows, b["row"].to_numpy()) for b in batches)


def test_a_held_slice_comes_before_the_next_batchs_error():
    """A large batch's slice waits for the next batch (does the batch end a unit?): where that
    read fails, the slice is yielded first, then the error, as the rows come in the file."""

    def batches():
        yield pl.DataFrame({"k": [1, 1, 2, 2, 3, 3], "row": range(6)})
        raise OSError("the second batch cannot be read")

    chunks = SortedUnitChunks(batches(), ["k"], chunk_rows=100, in_place_rows=2)
    got = []
    with pytest.raises(OSError, match="second batch"):
        for chunk in chunks:
            got.append(chunk["row"].to_list())
    assert got == [[0, 1, 2, 3]]  # units 1 and 2; unit 3 may go on in the batch not read


def test_a_batch_ending_a_unit_is_one_slice():
    """Batches that end where units end (row groups of whole units) give one chunk each, a view
    of the batch: no seam chunk of the last unit alone."""
    batches = [
        pl.DataFrame({"k": [1, 1, 2, 2], "row": [0, 1, 2, 3]}),
        pl.DataFrame({"k": [3, 3, 4, 4], "row": [4, 5, 6, 7]}),
        pl.DataFrame({"k": [5, 5, 6], "row": [8, 9, 10]}),
    ]
    chunks = list(SortedUnitChunks(iter(batches), ["k"], chunk_rows=100, in_place_rows=2))
    assert [c["row"].to_list() for c in chunks] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10]]
    for chunk, batch in zip(chunks, batches, strict=True):
        assert np.shares_memory(chunk["row"].to_numpy(), batch["row"].to_numpy())
