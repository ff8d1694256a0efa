"""The recs kernel's ``2^x`` of the exponential gains (:func:`mobeval.kernels.recs._pow2`): an
integer's power read from a table, the same bits as the power computed (Python's exact ``2.0 **
k``), at and beyond the table's ends; any other ``x`` (fractions, NaN, infinities, huge values)
as Numba's ``2.0 ** x``; and the gains built on it."""

import math

import numpy as np
import pytest
from numba import njit

from mobeval.kernels import recs as K


@njit
def _computed(x):
    return 2.0**x


@pytest.mark.parametrize("k", range(-K.POW2_LIMIT - 6, K.POW2_LIMIT + 7))
def test_an_integer_power_is_exact(k):
    assert K._pow2(float(k)) == 2.0**k
    assert K._gain(float(k), True, K.GAIN_EXPONENTIAL, -np.inf, False) == 2.0**k - 1.0


def test_any_other_exponent_is_computed():
    xs = [0.5, -0.5, 3.25, 63.999, 64.5, -64.5, 1e6, -1e6, math.inf, -math.inf, -0.0, 1e-300]
    xs += list(np.random.default_rng(0).uniform(-80, 80, size=2000))
    for x in xs:
        got, want = K._pow2(x), _computed(x)
        assert got == want or (math.isnan(got) and math.isnan(want)), x
    assert math.isnan(K._pow2(math.nan))


@pytest.mark.parametrize("threshold", [1.0, 3.0, 4.5])
def test_relison_gains_are_powers_above_the_threshold(threshold):
    for rating in np.arange(-2.0, 7.0, 0.5):
        got = K._gain(rating, True, K.GAIN_RELISON, threshold, True)
        want = 0.0 if rating < threshold else max(_computed(rating - threshold + 1.0) - 1.0, 0.0)
        assert got == want
