"""Where a key-sorted stream of integer keys can be cut into chunks of whole units: one read-only
pass over a batch's keys, nothing written per row."""

from __future__ import annotations

import numpy as np

from mobeval.kernels.blocks import readonly
from mobeval.kernels.jit import njit


def last_unit_start(keys) -> tuple[int, bool]:
    """For ``keys`` (n_rows >= 1 x n_columns int64, compared lexicographically): the last row
    whose key differs from the previous row's (0 if none: row 0 starts the batch's first unit),
    and whether some row's key is below the previous row's (the batch is not sorted)."""
    last, decreased = _last_unit_start(readonly(keys, np.int64))
    return int(last), bool(decreased)


@njit(cache=True)
def _last_unit_start(keys):
    last = 0
    decreased = False
    for row in range(1, keys.shape[0]):
        for column in range(keys.shape[1]):
            a = keys[row, column]
            b = keys[row - 1, column]
            if a != b:
                last = row
                if a < b:
                    decreased = True
                break
    return last, decreased
