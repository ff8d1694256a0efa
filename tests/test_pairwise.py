"""pairwise_sum is numpy's pairwise summation: np.mean to the bit, also from Numba's cache; the
moments of paired differences built on it (kernels/moments.py) are NumPy's to the bit too."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from mobeval.kernels.geobleu import mean_rows
from mobeval.kernels.moments import difference_moments, difference_moments_pairs
from mobeval.kernels.pairwise import pairwise_sum


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equals_numpy_mean_across_every_split(seed):
    rng = np.random.default_rng(seed)
    # magnitudes spread over many binades, so the order of additions shows in the last bits
    values = rng.standard_normal(5000) * 10.0 ** rng.integers(-8, 9, 5000)
    sizes = [*range(0, 300), 511, 512, 513, 1000, 1024, 1031, 2048, 4097, 5000]
    for n in sizes:
        for start in (0, 3):
            if start + n > values.size:
                continue
            expected = np.add.reduce(values[start : start + n]) if n else 0.0
            assert pairwise_sum(values, start, n) == expected, (n, start)


def test_mean_rows_of_a_cached_kernel_in_a_fresh_process(tmp_path):
    """A kernel calling pairwise_sum, compiled into an empty cache by one process and loaded
    from it by the next, gives np.mean's values (a recursive pairwise_sum could not be loaded)."""
    script = textwrap.dedent(
        """
        import numpy as np
        from mobeval.kernels.geobleu import mean_rows
        rng = np.random.default_rng(7)
        values = rng.standard_normal((50, 700))
        counts = rng.integers(1, 700, 50)
        got = mean_rows(values, counts)
        want = np.array([np.mean(v[:c]) for v, c in zip(values, counts)])
        assert (got == want).all()
        print("ok")
        """
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    for _ in range(2):  # the first run fills the cache, the second loads from it
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
    assert mean_rows is not None


def _numpy_moments(a, b):
    d = b - a
    return np.sum(d), np.sum((d - np.mean(d)) ** 2)


def _same_bits(x, y):
    return np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True)


@pytest.mark.parametrize("n", [1, 2, 7, 8, 127, 128, 129, 1000, 4097, 100_003])
def test_difference_moments_equal_numpy_for_every_pair(n):
    rng = np.random.default_rng(n)
    # three models on lattice values (metrics at a cut-off: many equal differences) and two on
    # values spread over many binades, so that the order of additions shows in the last bits
    columns = np.vstack(
        [rng.integers(0, 6, (3, n)) / 5.0]
        + [rng.standard_normal((2, n)) * 10.0 ** rng.integers(-8, 9, (2, n))]
    )
    pairs = [(i, j) for i in range(5) for j in range(5) if i != j]
    firsts = np.array([i for i, _ in pairs], dtype=np.int64)
    seconds = np.array([j for _, j in pairs], dtype=np.int64)
    totals, squares = difference_moments_pairs(columns, firsts, seconds)
    for p, (i, j) in enumerate(pairs):
        expected = _numpy_moments(columns[i], columns[j])
        assert _same_bits((totals[p], squares[p]), expected), (n, i, j)
        assert _same_bits(difference_moments(columns[i], columns[j]), expected), (n, i, j)
    # the pairs in reverse order: each pair's numbers whatever the block it falls in
    back = difference_moments_pairs(columns, firsts[::-1].copy(), seconds[::-1].copy())
    assert _same_bits(back[0][::-1], totals) and _same_bits(back[1][::-1], squares)


def test_difference_moments_of_non_finite_values_are_numpys():
    a = np.array([0.0, 1.0, 2.0, 3.0])
    with np.errstate(invalid="ignore"):
        for b in (
            np.array([1.0, np.inf, 2.0, 0.0]),
            np.array([np.inf, -np.inf, 0.0, 0.0]),
            np.array([np.nan, 1.0, 2.0, 3.0]),
        ):
            assert _same_bits(difference_moments(a, b), _numpy_moments(a, b))
    assert difference_moments(np.empty(0), np.empty(0)) == (0.0, 0.0)
