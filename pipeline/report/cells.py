"""The cells of a report's tables (:class:`Cells`, a part of
:class:`mobeval.report.document.Report`): the best value of a column, the significance marker
after a value, a model's improvement over the baseline, the sd after a mean, and how a number is
written. Each reads a
:class:`mobeval.report.city.City`: its values, its comparison and its options.
"""

from __future__ import annotations

import math

import polars as pl

from mobeval.compare.names import P_COLUMNS
from mobeval.metrics import family_of, lower_is_better
from mobeval.report.city import City
from mobeval.report.tables import MARKERS, NOT_TESTED, RATES, superscript


class Cells:
    """What each cell of a city's tables shows (the renderers call these on the report)."""

    # ---- cells ----------------------------------------------------------------------------

    def best(self, city: City, metric: str) -> set[str]:
        """The models with the best value of ``metric`` (max, or min when lower is better); none
        when the table has a single model."""
        if len(city.models) < 2:
            return set()
        present = {
            m: city.values[m][metric]
            for m in city.models
            if metric in city.values[m] and not math.isnan(city.values[m][metric])
        }
        if not present:
            return set()
        target = (min if lower_is_better(metric) else max)(present.values())
        return {m for m, v in present.items() if v == target}

    def p_value(self, city: City, model: str, metric: str) -> float | None:
        """The corrected p-value of ``model`` against the baseline on ``metric`` by the city's
        test: None when it was not tested, NaN when the test has no p-value (every difference
        zero)."""
        if city.comparison is None or city.test is None or model == city.baseline:
            return None
        column = P_COLUMNS[city.test] + "_corrected"
        rows = city.comparison.filter((pl.col("model") == model) & (pl.col("metric") == metric))
        if rows.height == 0 or rows[column][0] is None:
            return None
        return float(rows[column][0])

    def marker(self, city: City, model: str, metric: str, latex: bool = False) -> str:
        """The cell's mark: ``‡`` / ``†`` (significant at a fifth of alpha / at alpha), nothing
        (tested, not significant), ``°`` (not tested); nothing in the baseline's column nor for
        a population metric (no per-unit values to test: the note says so)."""
        if metric in city.population:
            return ""
        letters = city.letters.get((model, metric), "")
        if letters:
            letters = rf"$^{{\mathrm{{{letters}}}}}$" if latex else superscript(letters)
        if city.baseline is None or model == city.baseline:
            return letters
        p = self.p_value(city, model, metric)
        if p is None:
            return (NOT_TESTED[1] if latex else NOT_TESTED[0]) + letters
        for share, text, tex in MARKERS:
            if p < city.alpha * share:
                return (tex if latex else text) + letters
        return letters

    def improvement(self, city: City, model: str, metric: str) -> str:
        """``+6.58 pp (+12.8%), d_z +0.09`` for rates, ``-1.234 (-3.2%)`` otherwise: the
        :meth:`improvement_parts` joined."""
        return "".join(self.improvement_parts(city, model, metric))

    def improvement_parts(self, city: City, model: str, metric: str) -> tuple[str, str, str]:
        """An improvement's three parts, each a sub-column of its LaTeX column (aligned on its
        point whatever the others' widths): the difference ``+6.58 pp`` (``-`` without a
        value), the relative change `` (+12.8%)`` (``""`` when the baseline is 0) and the
        paired effect size ``, d_z +0.09`` (``""`` without a comparison)."""
        base = city.values[city.baseline].get(metric, math.nan)
        value = city.values[model].get(metric, math.nan)
        if math.isnan(base) or math.isnan(value):
            return "-", "", ""
        diff = value - base
        relative = f" ({diff / abs(base) * 100:+.1f}%)" if base != 0 else ""
        effect = ""
        if city.comparison is not None:
            rows = city.comparison.filter((pl.col("model") == model) & (pl.col("metric") == metric))
            if rows.height and rows["cohen_dz"][0] is not None:
                effect = f", d_z {rows['cohen_dz'][0]:+.2f}"
        return self.points(city, metric, diff, unit=True), relative, effect

    def points(self, city: City, metric: str, diff: float | None, unit: bool = False) -> str:
        """A difference of ``metric``'s values: in percentage points for a rate (``+2.87``,
        ``+2.87 pp`` with ``unit``), else ``+1.234``; ``-`` for none."""
        if diff is None or math.isnan(diff):
            return "-"
        if family_of(metric) in RATES:
            points = diff if city.percent else diff * 100
            return f"{points:+.2f}" + (" pp" if unit else "")
        return f"{diff:+.4g}"

    def spread(self, city: City, model: str, metric: str) -> str:
        """The sd after a mean: over a model's runs where it has runs (its mean over runs), else
        over the units (``report --std``); its text as :meth:`number` writes it, or ``""`` where
        none is shown (not asked, not a mean over units, no finite mean)."""
        value = city.values[model].get(metric)
        over = city.sd_over_runs if model in city.runs else city.stds
        std = over.get(model, {}).get(metric)
        if std is None or value is None or not math.isfinite(value):
            return ""
        return self.number(std)

    @staticmethod
    def number(value: float | None) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "-"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return f"{value:.2f}" if abs(value) >= 100 else f"{value:.4f}"
