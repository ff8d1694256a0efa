"""pairwise_sum is numpy's pairwise summation: np.mean to the bit, also from Numba's cache."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from mobeval.kernels.geobleu import mean_rows
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
