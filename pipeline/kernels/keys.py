"""Unit boundaries of integer keys: one sequential pass, no temporaries."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def key_order(keys):
    """Per row of ``keys`` (n_rows x n_columns int64): 1, 0 or -1 as the row's key is above, equal
    to
    or below the previous row's, compared lexicographically; the first row gets 1."""
    n_rows, n_columns = keys.shape
    order = np.ones(n_rows, dtype=np.int8)
    for row in range(1, n_rows):
        sign = 0
        for column in range(n_columns):
            a = keys[row, column]
            b = keys[row - 1, column]
            if a != b:
                sign = 1 if a > b else -1
                break
        order[row] = sign
    return order
