"""Borrowed views of a kernel's arrays (:func:`mobeval.kernels.borrow.borrowed`): the same data,
shape and strides, writes seen by the owner, and no memory record (so nothing counted), checked
against NumPy and against the records of the arrays as given."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from numba import types
from numba.core import cgutils
from numba.core.errors import TypingError
from numba.extending import intrinsic

from mobeval.kernels.borrow import borrowed


@intrinsic
def _record_address(typingctx, array):
    """The address of ``array``'s memory record (0: none), read from the array's own struct."""

    def codegen(context, builder, signature, args):
        struct = context.make_array(array)(context, builder, value=args[0])
        return builder.ptrtoint(struct.meminfo, cgutils.intp_t)

    return types.intp(array), codegen


@numba.njit
def _records(a, b):
    """The records of ``a`` and ``b`` as given, then of their borrowed views and of a slice of
    one."""
    given = (_record_address(a), _record_address(b))
    a, b = borrowed(a, b)
    return given, (_record_address(a), _record_address(b), _record_address(a[1:]))


@numba.njit
def _running_sums(values, out):
    """``out[i]`` = the sum of ``values[:i + 1]``, read through slices of a borrowed view and
    written through another; returns the total."""
    values, out = borrowed(values, out)
    total = 0.0
    for i in range(values.shape[0]):
        total += values[i : i + 1].sum()
        out[i] = total
    return total


@numba.njit
def _shape_and_strides(grid):
    grid = borrowed(grid)
    return grid.shape, grid.strides, grid[1, 1]


def test_a_borrowed_view_has_no_record_where_the_array_had_one():
    given, views = _records(np.arange(5.0), np.zeros(3, dtype=np.int64))
    assert all(address != 0 for address in given)
    assert views == (0, 0, 0)


def test_reads_and_writes_go_through_a_borrowed_view():
    rng = np.random.default_rng(5)
    values = rng.normal(size=257)
    out = np.zeros_like(values)
    total = _running_sums(values, out)
    expected, running = [], 0.0
    for x in values.tolist():
        running += x
        expected.append(running)
    assert out.tolist() == expected
    assert total == expected[-1]


def test_a_strided_array_keeps_its_shape_and_strides():
    grid = np.arange(48, dtype=np.int64).reshape(6, 8)[::2, 1::3]
    shape, strides, value = _shape_and_strides(grid)
    assert shape == grid.shape
    assert strides == grid.strides
    assert value == grid[1, 1]


def test_only_arrays_are_borrowed():
    @numba.njit
    def borrow_a_number(x):
        return borrowed(x)

    with pytest.raises(TypingError):
        borrow_a_number(3)
