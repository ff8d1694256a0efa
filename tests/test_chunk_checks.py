"""kernels.chunk_checks.scan_rows: the first decreasing key and the first value that is not
finite, in one pass, as a plain Python loop finds them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mobeval.kernels.chunk_checks import scan_rows

ODD = [np.nan, np.inf, -np.inf, -0.0, 5e-324, 1.7976931348623157e308, -1.5]


def _plain(keys: list[int], values: list[float] | None) -> tuple[int, int]:
    decreasing = next((r for r in range(1, len(keys)) if keys[r] < keys[r - 1]), -1)
    if values is None:
        return decreasing, -1
    return decreasing, next((r for r, v in enumerate(values) if not math.isfinite(v)), -1)


@pytest.mark.parametrize("seed", range(60))
def test_scan_rows_is_the_plain_loop(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    keys = np.sort(rng.integers(-5, 50, size=n))
    if rng.random() < 0.5:  # a key below the one before it
        row = int(rng.integers(0, n))
        keys[row] = keys[row] - int(rng.integers(1, 3))
    values = rng.normal(size=n)
    for _ in range(int(rng.integers(0, 4))):
        values[int(rng.integers(0, n))] = ODD[int(rng.integers(0, len(ODD)))]
    assert scan_rows(keys, values) == _plain(keys.tolist(), values.tolist())
    assert scan_rows(keys) == _plain(keys.tolist(), None)


@pytest.mark.parametrize("seed", range(20))
def test_scan_rows_without_keys_checks_the_values_alone(seed):
    """Keys None (their order known already): only the first value that is not finite."""
    rng = np.random.default_rng(seed)
    values = rng.normal(size=int(rng.integers(0, 300)))
    for _ in range(int(rng.integers(0, 3)) if len(values) else 0):
        values[int(rng.integers(0, len(values)))] = ODD[int(rng.integers(0, 3))]
    assert scan_rows(None, values) == (-1, _plain([], values.tolist())[1])
    assert scan_rows(None) == (-1, -1)
