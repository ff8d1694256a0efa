"""A chunk's checks in one read-only pass over its columns: whether the key column never
decreases, and the first value that is not finite (NaN or infinite), where Polars took a pass
(and a frame) for each.
"""

from __future__ import annotations

import numpy as np

from mobeval.kernels.blocks import readonly
from mobeval.kernels.jit import njit

_EXPONENT = np.int64(0x7FF0000000000000)  # a float64's exponent bits


def scan_rows(keys, values=None) -> tuple[int, int]:
    """``(decreasing, not_finite)``: the first row whose ``keys`` entry (int64; None: no keys,
    their order known already) is below the previous row's, and the first row of ``values``
    (float64, as long as ``keys``; None: no values) that is NaN or infinite; -1 where there is
    none."""
    keys = readonly(np.empty(0, np.int64) if keys is None else keys, np.int64)
    given = values is not None
    values = readonly(values if given else keys[:0], np.float64)
    decreasing, not_finite = _scan_rows(keys, values.view(np.int64), given)
    return int(decreasing), int(not_finite)


@njit(nogil=True, cache=True)
def _scan_rows(keys, bits, given):
    """A branch-free pass that only tells whether a row fails (LLVM vectorises it: the values'
    bits as int64, compared as integers), then the first failing row, looked for only when there
    is one."""
    decreased = 0
    for row in range(1, keys.shape[0]):
        decreased += keys[row] < keys[row - 1]
    wrong = 0
    if given:  # NaN and the infinities: every exponent bit set
        for row in range(bits.shape[0]):
            wrong += (bits[row] & _EXPONENT) == _EXPONENT
    decreasing = -1
    not_finite = -1
    for row in range(max(keys.shape[0], bits.shape[0]) if decreased or wrong else 0):
        if decreased and decreasing < 0 and row > 0 and keys[row] < keys[row - 1]:
            decreasing = row
        if wrong and not_finite < 0 and (bits[row] & _EXPONENT) == _EXPONENT:
            not_finite = row
    return decreasing, not_finite
