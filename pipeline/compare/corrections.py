"""Corrections for multiple comparisons over every p-value of a city (models x metrics x
tests): Holm's step-down, Bonferroni's, or none."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from mobeval.compare.significance import P_COLUMNS, TESTS
from mobeval.errors import ConfigError

CORRECTIONS = ("holm", "bonferroni", "none")


def adjust(pvalues: Sequence[float], method: str) -> np.ndarray:
    """Holm's step-down or Bonferroni's correction (``none``: unchanged); NaN p-values are left
    out of the family and stay NaN."""
    p = np.asarray(pvalues, dtype=np.float64)
    out = p.copy()
    valid = np.flatnonzero(~np.isnan(p))
    m = valid.size
    if method == "none" or m == 0:
        return out
    if method == "bonferroni":
        out[valid] = np.minimum(1.0, p[valid] * m)
        return out
    if method != "holm":
        raise ConfigError(f"--correction: {method!r} is not one of {', '.join(CORRECTIONS)}")
    order = valid[np.argsort(p[valid], kind="stable")]
    scaled = np.minimum(1.0, p[order] * (m - np.arange(m)))
    out[order] = np.maximum.accumulate(scaled)
    return out


def corrected(frame: pl.DataFrame, tests: list[str], correction: str) -> pl.DataFrame:
    """The corrected p-values over every p-value of the city's frame (models x metrics x tests)."""
    columns = [P_COLUMNS[t] for t in TESTS if t in tests]
    if not columns or frame.height == 0:
        return frame
    pooled = np.concatenate(
        [frame[c].cast(pl.Float64).fill_null(np.nan).to_numpy() for c in columns]
    )
    adjusted = adjust(pooled, correction).reshape(len(columns), frame.height)
    return frame.with_columns(
        pl.Series(f"{c}_corrected", adjusted[i], dtype=pl.Float64) for i, c in enumerate(columns)
    )
