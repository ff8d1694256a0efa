"""How an :class:`~mobeval.engines.base.Evaluation` shows itself in a notebook and hands its
summary to a data-frame library: one long table (``city``, ``model``, ``run``, then the
summary's ``metric``, ``value``, ``n``, ``std``) that results concatenate into a paper's table
(``pl.concat([e.to_polars() for e in results])``), and the compact HTML table Jupyter draws
(``_repr_html_``: one row per metric, every text escaped)."""

from __future__ import annotations

import html
import math

import polars as pl

PANDAS_MISSING = (
    "to_pandas needs pandas, which mobeval does not install: pip install pandas "
    "(or use to_polars(), which needs nothing more)"
)


def long_summary(evaluation) -> pl.DataFrame:
    """The summary with the result's names in front: ``city``, ``model``, ``run`` (null
    without runs), ``metric``, ``value``, ``n``, ``std``."""
    names = {"city": evaluation.city, "model": evaluation.model, "run": evaluation.run}
    return evaluation.summary.select(
        *(pl.lit(value, dtype=pl.String).alias(name) for name, value in names.items()),
        pl.all(),
    )


def pandas_summary(evaluation):
    """:func:`long_summary` as a pandas DataFrame; an ImportError that says what to install
    where pandas is missing (mobeval does not depend on it)."""
    try:
        import pandas  # noqa: F401 - only to tell a missing pandas before Polars' own message
    except ImportError:
        raise ImportError(PANDAS_MISSING) from None
    return long_summary(evaluation).to_pandas()


def _number(value: float | None, count: bool) -> str:
    """A cell: empty for null, a count as an integer, else 6 decimals (as the command prints)."""
    if value is None:
        return ""
    if count and math.isfinite(value):
        return f"{int(value):,}"
    return f"{value:.6f}"


def summary_html(evaluation) -> str:
    """The summary as a compact HTML table captioned with the result's names (a resumed result
    says so, a written one where it lies): ``metric``, ``value``, ``n``, ``std``. A row
    without ``std`` whose value is its ``n`` is a count, shown as an integer."""
    rows = []
    for metric, value, n, std in evaluation.summary.select("metric", "value", "n", "std").rows():
        count = std is None and value is not None and value == n
        cells = (html.escape(str(metric)), _number(value, count), f"{n:,}", _number(std, False))
        rows.append(
            f"<tr><th style='text-align:left'>{cells[0]}</th>"
            + "".join(f"<td style='text-align:right'>{cell}</td>" for cell in cells[1:])
            + "</tr>"
        )
    caption = html.escape(f"city={evaluation.city} · model={evaluation.label}")
    if evaluation.resumed:
        caption += " (resumed)"
    if "summary" in evaluation.outputs:
        caption += f"<br><small>{html.escape(str(evaluation.outputs['summary']))}</small>"
    head = "".join(f"<th>{name}</th>" for name in ("metric", "value", "n", "std"))
    return (
        f"<table><caption>{caption}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
