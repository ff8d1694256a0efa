"""Corrections for multiple comparisons over a family of p-values that the user chooses
(``family``): every p-value of a city (``all``: metrics x pairs x tests) or those of one metric
(``metric``: pairs x tests). Holm's step-down, Bonferroni's, Benjamini-Hochberg's and
Benjamini-Yekutieli's false discovery rate, or none; as ``statsmodels.stats.multitest.
multipletests`` computes them (``holm``, ``bonferroni``, ``fdr_bh``, ``fdr_by``).

With the m p-values of a family sorted, ``p_(1) <= ... <= p_(m)``:

* Bonferroni: ``min(1, m p_i)``;
* Holm (1979): ``max_{j <= i} min(1, (m - j + 1) p_(j))``;
* Benjamini & Hochberg (1995): ``min_{j >= i} min(1, m p_(j) / j)``;
* Benjamini & Yekutieli (2001): BH's times ``c(m) = sum_{i=1}^m 1/i`` (any dependence).

Tukey's HSD p-values are already adjusted over the pairs of a metric (the studentized range of
all the city's models): they are left as they are by every correction.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from mobeval.compare.names import P_COLUMNS, TESTS
from mobeval.errors import ConfigError

CORRECTIONS = ("holm", "bonferroni", "bh", "by", "none")
#: The families a correction runs over: every p-value of a city, or those of one metric.
FAMILIES = ("all", "metric")
#: The tests whose p-values are already adjusted over the pairs of a metric.
ADJUSTED_TESTS = ("tukey",)


def adjust(pvalues: Sequence[float], method: str) -> np.ndarray:
    """The p-values of one family adjusted by ``method`` (module docstring); NaN p-values are
    left out of the family and stay NaN."""
    if method not in CORRECTIONS:
        raise ConfigError(f"--correction: {method!r} is not one of {', '.join(CORRECTIONS)}")
    p = np.asarray(pvalues, dtype=np.float64)
    out = p.copy()
    valid = np.flatnonzero(~np.isnan(p))
    m = valid.size
    if method == "none" or m == 0:
        return out
    if method == "bonferroni":
        out[valid] = np.minimum(1.0, p[valid] * m)
        return out
    order = valid[np.argsort(p[valid], kind="stable")]
    rank = np.arange(1, m + 1, dtype=np.float64)
    if method == "holm":
        out[order] = np.maximum.accumulate(np.minimum(1.0, p[order] * (m - rank + 1)))
        return out
    factor = float(np.sum(1.0 / rank)) if method == "by" else 1.0
    scaled = p[order] * (m * factor / rank)
    out[order] = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    return out


def corrected(frame: pl.DataFrame, tests: list[str], correction: str, family: str) -> pl.DataFrame:
    """The city's frame with ``<p column>_corrected`` for every test run (each family adjusted
    by ``correction``; Tukey's left as it is) and ``family_size``: the p-values in the row's
    family."""
    if family not in FAMILIES:
        raise ConfigError(f"--family: {family!r}: choose among {', '.join(FAMILIES)}")
    columns = [P_COLUMNS[t] for t in TESTS if t in tests and t not in ADJUSTED_TESTS]
    groups = (
        [np.arange(frame.height)]
        if family == "all"
        else [np.asarray(rows) for rows in frame.with_row_index("__i").group_by(
            "metric", maintain_order=True).agg("__i")["__i"].to_list()]
    )  # fmt: skip
    adjusted = {c: np.full(frame.height, np.nan) for c in columns}
    sizes = np.zeros(frame.height, dtype=np.int64)
    for rows in groups:
        if not columns or rows.size == 0:
            continue
        pooled = np.concatenate(
            [frame[c].cast(pl.Float64).fill_null(np.nan).to_numpy()[rows] for c in columns]
        )
        values = adjust(pooled, correction).reshape(len(columns), rows.size)
        for i, c in enumerate(columns):
            adjusted[c][rows] = values[i]
        sizes[rows] = int(np.count_nonzero(~np.isnan(pooled)))
    return frame.with_columns(
        *(pl.Series(f"{c}_corrected", adjusted[c], dtype=pl.Float64) for c in columns),
        *(pl.col(P_COLUMNS[t]).alias(f"{P_COLUMNS[t]}_corrected") for t in ADJUSTED_TESTS
          if t in tests),
        pl.Series("family_size", sizes, dtype=pl.Int64),
    )  # fmt: skip
