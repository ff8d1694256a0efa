"""The bootstrap confidence interval of a mean paired difference (percentile method, the
resampled units drawn by :mod:`mobeval.kernels.resampling`)."""

from __future__ import annotations

import math

import numpy as np

from mobeval.errors import ConfigError
from mobeval.kernels import resampling


def bootstrap_ci(
    d: np.ndarray, resamples: int, seed: int, confidence: float
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``d`` (NaN when there is nothing to
    resample)."""
    low, high = bootstrap_cis(np.asarray(d, dtype=np.float64)[:, None], resamples, seed, confidence)
    return float(low[0]), float(high[0])


def bootstrap_cis(
    d: np.ndarray, resamples: int, seed: int, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`bootstrap_ci` of every column of ``d`` (float64[n, m]), with the same resampled
    units for every column (the same numbers as one by one)."""
    d = np.ascontiguousarray(d, dtype=np.float64)
    n, columns = d.shape
    if n == 0 or resamples < 1:
        return np.full(columns, math.nan), np.full(columns, math.nan)
    if n >= 2**32:
        raise ConfigError(f"{n} units: the bootstrap takes at most 2^32 - 1")
    return resampling.percentile_interval(
        resampling.bootstrap_means(d, resamples, seed), confidence
    )
