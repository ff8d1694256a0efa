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

from mobeval.errors import InputError

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


def require_scored(
    summary: pl.DataFrame,
    *,
    counts: Iterable[str],
    units: str | None,
    truth: object,
    predictions: object,
    column: str | None,
) -> None:
    """Refuse a result that scored no unit, because each unit was on one side only and left out
    (``--missing skip``, ``--skip-mismatched``, a convention that skips them) or was ignored
    (``--ignore-target``): its values would all be NaN, and this says why instead, naming both
    inputs (``truth``, ``predictions``: their labels, or None for an array) and the counts that
    tell where the units went. No unit scored: the ``units`` count row is 0 (a family whose
    scored unit may have no value, as ClayRS's user without a relevant item), else every metric
    (the rows that are not the family's ``counts``) is taken over ``n = 0`` units."""
    counts = list(counts)
    if units is not None:
        scored = summary.filter(pl.col("metric") == units)["n"].sum()
    else:
        scored = summary.filter(~pl.col("metric").is_in(counts))["n"].max() or 0
    if scored > 0 or summary.height == 0:
        return
    told = summary.filter(pl.col("metric").is_in(counts) & (pl.col("value") > 0))
    left = ", ".join(f"{m} = {int(v)}" for m, v in told.select("metric", "value").iter_rows())
    against = f" against {truth}" if truth is not None and truth != predictions else ""
    raise InputError(
        f"no unit was scored{against}: each was on one side only or left out by an option"
        + (f" ({left})" if left else "")
        + "; every metric would be NaN",
        path=predictions,
        column=column,
    )
