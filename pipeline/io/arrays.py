"""NumPy arrays handed to the Numba kernels.

Numba compiles one specialisation per argument type, and a read-only array is a different type from
a writable one. Polars gives read-only views when it can avoid a copy (a single-chunk column) and
fresh writable arrays otherwise, so the same kernel would compile twice, and a cache warmed on a
small file would compile again on a large one. Every array crossing into a kernel goes through
:func:`kernel_array`: C-contiguous, read-only (marking an array read-only never copies it), of one
dtype.
"""

from __future__ import annotations

import numpy as np
import polars as pl


def kernel_array(values: pl.Series | np.ndarray, dtype) -> np.ndarray:
    """``values`` as a C-contiguous, read-only array of ``dtype`` (copied only when needed)."""
    array = values.to_numpy() if isinstance(values, pl.Series) else values
    array = np.ascontiguousarray(array, dtype=dtype)
    if array.flags.writeable:
        array = array.view()  # a view, so the caller's own array stays writable
        array.flags.writeable = False
    return array
