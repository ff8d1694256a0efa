"""The sorted stream's reads (mobeval.engines.local): a batch whose columns are already the
canonical ones is handed on as it is, not through a Polars query."""

from __future__ import annotations

import polars as pl
import pytest

from mobeval.engines.local import _canonical, _names_only
from mobeval.errors import InputError


def test_bare_columns_hand_each_batch_on_as_it_is():
    """A select of bare columns, in the batches' order: the batches themselves (fails before:
    each went through ``select``, a new frame)."""
    batches = [
        pl.DataFrame({"u": [1, 1, 2], "x": [0.5, 1.5, 2.5]}),
        pl.DataFrame({"u": [3], "x": [4.0]}),
    ]
    select = [pl.col("u"), pl.col("x")]
    frames = list(_canonical(iter(batches), select, ["u"], "in.parquet", ["u", "x"]))
    assert all(f is b for f, b in zip(frames, batches, strict=True))


@pytest.mark.parametrize(
    "select",
    [
        [pl.col("x"), pl.col("u")],
        [pl.col("u").cast(pl.Int32), pl.col("x")],
        [pl.col("u").alias("v"), pl.col("x")],
        [pl.all()],
    ],
)
def test_other_selects_still_select(select):
    """Another order, a cast, a rename or a selector: each batch goes through ``select``."""
    batch = pl.DataFrame({"u": [1, 2], "x": [0.5, 1.5]})
    (frame,) = _canonical(iter([batch]), select, ["u"], "in.parquet", ["u", "x"])
    assert frame.equals(batch.select(select))


def test_names_only():
    assert _names_only([pl.col("a"), pl.col("b")]) == ["a", "b"]
    assert _names_only([pl.col("a", "b")]) is None
    assert _names_only([pl.col("a").cast(pl.Int64)]) is None


def test_a_null_key_is_still_refused():
    batch = pl.DataFrame({"u": [1, None], "x": [0.5, 1.5]})
    with pytest.raises(InputError, match="null key value"):
        list(_canonical(iter([batch]), [pl.col("u"), pl.col("x")], ["u"], "in.parquet", ["u", "x"]))
