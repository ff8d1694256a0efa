"""SortedLookup (io.chunking): a key-sorted truth consumed in key order hands out, for each cut
key, the rows up to it, as a plain Python filter does; a key that falls (within a batch or
across two) is NotSorted, with or without ``unique``, for integer keys (the order read in one
pass, :func:`mobeval.kernels.cuts.unit_bounds`) and for text keys alike."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from mobeval.errors import InputError
from mobeval.io.chunking import NotSorted, SortedLookup


def _batches(frame: pl.DataFrame, rng) -> list[pl.DataFrame]:
    """``frame`` cut into batches of random sizes (some empty)."""
    cuts = sorted(rng.integers(0, frame.height + 1, size=4).tolist())
    bounds = [0, *cuts, frame.height]
    return [frame.slice(a, b - a) for a, b in zip(bounds, bounds[1:], strict=False)]


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("columns", [1, 2])
@pytest.mark.parametrize("text", [False, True])
def test_rows_through_each_cut_are_a_plain_filters(seed, columns, text):
    rng = np.random.default_rng(seed)
    keys = np.sort(rng.integers(0, 6, size=(int(rng.integers(1, 40)), columns)), axis=0)
    keys = np.unique(keys, axis=0).repeat(rng.integers(1, 4, size=1), axis=0)
    rows = sorted(map(tuple, keys.tolist()))
    if text:  # the text's order is the integers' (one digit)
        rows = [tuple(str(v) for v in row) for row in rows]
    names = [f"k{j}" for j in range(columns)]
    frame = pl.DataFrame(rows, schema=names, orient="row").with_row_index("row")
    lookup = SortedLookup(iter(_batches(frame, rng)), names, "truth", unique=False)
    cuts = sorted({rows[i] for i in rng.integers(0, len(rows), size=3).tolist()})
    done = 0
    for cut in cuts:
        part = lookup.take_through(cut)
        expected = [i for i, row in enumerate(rows) if row <= cut and i >= done]
        assert part["row"].to_list() == expected
        done += len(expected)
    rest = lookup.take_through(None)
    assert rest["row"].to_list() == list(range(done, len(rows)))


@pytest.mark.parametrize("unique", [False, True])
@pytest.mark.parametrize("key_type", [pl.Int64, pl.String])
@pytest.mark.parametrize(
    "batches",
    [[[1, 2, 1]], [[1, 3], [2, 4]], [[1, 2], [], [0]]],
    ids=["within", "across", "across an empty batch"],
)
def test_a_falling_key_is_not_sorted(unique, key_type, batches):
    frames = [
        pl.DataFrame({"k": keys}, schema={"k": pl.Int64}).cast({"k": key_type}) for keys in batches
    ]
    lookup = SortedLookup(iter(frames), ["k"], "truth", unique=unique)
    with pytest.raises(NotSorted):
        lookup.take_through(None)


@pytest.mark.parametrize("key_type", [pl.Int64, pl.String])
def test_a_unit_across_batches_is_one_units_rows(key_type):
    """Without ``unique`` a key may go on in the next batch (a user's ratings); with it, the
    second row of a key is an InputError naming the key."""
    frames = [pl.DataFrame({"k": [1, 2]}), pl.DataFrame({"k": [2, 2, 3]})]
    frames = [frame.cast({"k": key_type}) for frame in frames]
    lookup = SortedLookup(iter(frames), ["k"], "truth", unique=False)
    cut = ("2",) if key_type == pl.String else (2,)
    assert lookup.take_through(cut)["k"].cast(pl.Int64).to_list() == [1, 2, 2, 2]
    with pytest.raises(InputError, match="duplicate key"):
        SortedLookup(iter(frames), ["k"], "truth", unique=True).take_through(None)
