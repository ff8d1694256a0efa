"""kernels.heapsort.sort_indices against NumPy's stable argsort (the plain oracle)."""

from __future__ import annotations

import numpy as np
import pytest

from mobeval.kernels.heapsort import sort_indices


@pytest.mark.parametrize("n", [*range(0, 34), 257, 4096, 4099])
def test_sort_indices_is_the_stable_argsort(n):
    rng = np.random.default_rng(n)
    for keys in (
        rng.integers(0, 4, n),  # many ties: the index breaks them
        rng.integers(-(2**62), 2**62, n),
        rng.random(n),
        np.round(rng.normal(size=n), 1),
        np.arange(n)[::-1].astype(np.float64),  # descending: every entry moves
    ):
        order = np.arange(n)
        sort_indices(keys, order)
        assert order.tolist() == np.argsort(keys, kind="stable").tolist()


def test_sort_indices_sorts_a_given_subset_of_indices():
    keys = np.array([5.0, 1.0, 4.0, 1.0, 3.0])
    order = np.array([4, 3, 0, 1])  # index 2 left out
    sort_indices(keys, order)
    assert order.tolist() == [1, 3, 4, 0]
