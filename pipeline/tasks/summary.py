"""The summary table every family writes: one row per metric, then the family's counts.

Columns: ``metric`` (String), ``value`` (Float64: the city value, e.g. the mean over units),
``n`` (Int64: the units it is taken over, or the count itself) and ``std`` (Float64: the
population standard deviation of the per-unit values whose mean is ``value``,
``sqrt(sum_u (v_u - value)^2 / n)``, ddof 0 as ``numpy.std`` and ranx's ``evaluate(...,
return_std=True)``; from exact sums, :meth:`mobeval.kernels.exact_sum.ExactColumnSums.stds`).
``std`` is null where ``value`` is not such a mean (a count, a micro average, an F1 of summed
counts) and where no unit has a value.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import polars as pl

SCHEMA = {"metric": pl.String, "value": pl.Float64, "n": pl.Int64, "std": pl.Float64}


def summary_frame(rows: Iterable[tuple[str, float, int, float | None]]) -> pl.DataFrame:
    """The summary of ``(metric, value, n, std)`` rows; a NaN ``std`` (no unit) becomes null."""
    return pl.DataFrame(
        [
            (metric, float(value), int(n), None if std is None or math.isnan(std) else float(std))
            for metric, value, n, std in rows
        ],
        schema=SCHEMA,
        orient="row",
    )


def count_row(metric: str, count: int) -> tuple[str, float, int, None]:
    """A count's row: its value as a float, itself as ``n``, no ``std``."""
    return (metric, float(count), int(count), None)
