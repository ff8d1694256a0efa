"""The report's tables, whatever the format: one table per cutoff grid, each cell's text (the
value, bold when best, the significance marker), the legend under a city's tables and the line
above them."""

from __future__ import annotations

from mobeval.report.city import UNIT_WORDS, City, Table
from mobeval.report.methods import cutoff_of, lower_is_better

#: Families whose values are rates in [0, 1], reported in percent (differences shown in
#: percentage points); a score such as GEO-BLEU is not, and its differences are plain.
RATES = frozenset(
    {"acc", "hit_rate", "precision", "recall", "fmeasure", "f1", "r-precision", "map", "mrr"}
    | {"ndcg", "f1_weighted", "f1_macro"}
)
#: Significance markers: (corrected p below, marker in text, marker in LaTeX).
MARKERS = ((0.01, "‡", r"$^{\ddagger}$"), (0.05, "†", r"$^{\dagger}$"))
TEST_NAMES = {
    "paired-t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "randomization": "Fisher's randomization (sign-flip) test",
}


def cutoff_tables(metrics: list[str]) -> list[Table]:
    """One table per cutoff grid: the families sharing the same cutoffs together, each family's
    rows in cutoff order; the metrics without a cutoff in a last table."""
    grids: dict[str, list[int]] = {}
    for metric in metrics:
        name, _, _ = metric.partition("@")
        if cutoff_of(metric) is not None:
            grids.setdefault(name, []).append(cutoff_of(metric))
    order = list(grids)
    groups: dict[tuple, list[str]] = {}
    for metric in metrics:
        name = metric.partition("@")[0]
        grid = tuple(sorted(set(grids[name]))) if cutoff_of(metric) is not None else ()
        groups.setdefault(grid, []).append(metric)
    tables = []
    for grid, names in groups.items():
        if not grid:
            continue
        names = sorted(names, key=lambda m: (order.index(m.partition("@")[0]), cutoff_of(m)))
        tables.append(Table("Metrics at cutoffs " + ", ".join(f"@{k}" for k in grid), names))
    if () in groups:
        tables.append(Table("Metrics without a cutoff", groups[()]))
    return tables


def cell(report, city: City, model: str, metric: str, bold, marker) -> str:
    """A value's cell in a :class:`~mobeval.report.Report`'s table: the number, ``bold`` when
    it is the best of the metric, then ``marker`` of its significance marker."""
    value = city.values[model].get(metric)
    text = report.number(value)
    if value is not None and model in report.best(city, metric):
        text = bold(text)
    return text + marker(report.marker(city, model, metric))


def legend(city: City) -> str:
    parts = ["best per metric in bold"]
    lower = [m for m in city.metrics if lower_is_better(m)]
    if lower:
        parts[0] += f" (lowest for {', '.join(lower)})"
    if city.comparison is not None and city.test is not None:
        correction = city.comparison["correction"][0]
        parts.append(
            f"† p < 0.05, ‡ p < 0.01 vs {city.baseline} ({TEST_NAMES[city.test]}, "
            f"{correction}-corrected)"
        )
    if city.baseline is not None:
        parts.append(
            f"improvement vs {city.baseline}: difference in points (pp: percentage points for "
            "rates) and relative change in %"
        )
    return "; ".join(parts) + "."


def header(city: City) -> str:
    units = city.units.get(city.models[0], 0)
    word = UNIT_WORDS.get(city.task, "units")
    base = f", baseline {city.baseline}" if city.baseline else ""
    return f"{city.task}, {len(city.models)} model(s), {units} {word}{base}"
