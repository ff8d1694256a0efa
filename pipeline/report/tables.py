"""The report's tables, whatever the format: one table per cutoff grid, each cell's text (the
value, bold when best, the significance marker), its layout on a page of a given width (models
as columns or as rows, in parts when it does not fit: :func:`table_parts`), the legend under a
city's tables and the line above them; and the small tables beside them (:class:`Listing`): a
leaderboard per metric (:func:`leaderboard_listings`) and the comparisons behind a metric's
markers (:func:`comparison_listings`)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from mobeval.compare.names import P_COLUMNS
from mobeval.compare.pairing import POPULATION
from mobeval.compare.printing import p_text
from mobeval.compare.runs import RUNS_WORDS
from mobeval.metrics import cutoff_of, lower_is_better
from mobeval.report.city import UNIT_WORDS, City, Table

#: Families whose values are rates in [0, 1], reported in percent (differences shown in
#: percentage points); a score such as GEO-BLEU is not, and its differences are plain.
RATES = frozenset(
    {"acc", "hit_rate", "precision", "recall", "fmeasure", "f1", "r-precision", "map", "mrr"}
    | {"ndcg", "f1_weighted", "f1_macro"}
)
#: Significance markers: (corrected p below this share of alpha, marker in text, in LaTeX).
MARKERS = ((0.2, "‡", r"$^{\ddagger}$"), (1.0, "†", r"$^{\dagger}$"))
#: The mark of a value that was not tested against the baseline (text, LaTeX): never the
#: blank of a value tested and not significant.
NOT_TESTED = ("°", r"$^{\circ}$")
TEST_NAMES = {
    "paired-t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "randomization": "Fisher's randomization (sign-flip) test",
    "tukey": "Tukey's HSD over every model, one-way design",
    "ttest-ind": "unpaired Student's t-test with pooled variance",
    "ranksums": "unpaired Wilcoxon rank-sum test",
}
#: Superscript letters of a compact letter display in text (as ranx prints its report's).
SUPERSCRIPTS = dict(
    zip(
        "abcdefghijklmnopqrstuvwxyz",
        "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖ𐞥ʳˢᵗᵘᵛʷˣʸᶻ",
        strict=True,
    )
)


#: The superscript letters: half as wide as a character (:func:`table_parts`).
SMALL = frozenset(SUPERSCRIPTS.values())


def superscript(letters: str) -> str:
    """``"ab"`` -> ``"ᵃᵇ"`` (a letter without a superscript form stays as it is)."""
    return "".join(SUPERSCRIPTS.get(letter, letter) for letter in letters)


#: The notations of the report's plain texts that LaTeX and HTML typeset (:func:`typeset`):
#: the effect sizes' names and a power of ten (:func:`~mobeval.compare.printing.p_text`'s
#: ``1.70×10⁻⁴``).
NOTATION = re.compile(
    r"\b(?P<name>d_z|r_rb)\b|(?P<mantissa>\d\.\d+)×10(?P<exponent>[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)"
)
#: How each format writes :data:`NOTATION`'s names: paired Cohen's d_z, the rank-biserial r_rb.
NAMES = {
    "latex": {"d_z": "$d_z$", "r_rb": r"$r_{\mathrm{rb}}$"},
    "html": {"d_z": "<i>d</i><sub>z</sub>", "r_rb": "<i>r</i><sub>rb</sub>"},
}
#: How each format writes a power of ten (its mantissa, its exponent as an integer).
POWERS = {
    "latex": lambda mantissa, exponent: rf"${mantissa}\times10^{{{exponent}}}$",
    "html": lambda mantissa, exponent: f"{mantissa}×10<sup>{exponent:d}</sup>".replace("-", "−"),
}
#: A sign before a number (not inside a word, an id or a name such as ``seed-1``): what LaTeX
#: writes as math's minus and plus, HTML as the minus sign U+2212 (a hyphen is shorter, and
#: thinner than the plus: ``-0.08`` reads as ``0.08`` at a glance).
SIGN = re.compile(r"(?<![\w.])([-+])(?=\d|inf)")
_PLAIN_DIGITS = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")


def typeset(text: str, escape: Callable[[str], str], fmt: str) -> str:
    """``text`` in format ``fmt`` (``latex``, ``html``): its :data:`NOTATION` written as the
    format writes it (``$d_z$``, ``<i>d</i><sub>z</sub>``; ``$1.70\\times10^{-4}$``), the
    rest escaped by ``escape``."""
    out, start = [], 0
    for match in NOTATION.finditer(text):
        out.append(escape(text[start : match.start()]))
        if match["name"]:
            out.append(NAMES[fmt][match["name"]])
        else:
            exponent = int(match["exponent"].translate(_PLAIN_DIGITS))
            out.append(POWERS[fmt](match["mantissa"], exponent))
        start = match.end()
    return "".join(out) + escape(text[start:])


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
    it is the best of the metric, `` ± sd`` (``report --std``), then ``marker`` of its
    significance marker: ``**0.1693** ± 0.3751‡``."""
    value = city.values[model].get(metric)
    text = report.number(value)
    if value is not None and model in report.best(city, metric):
        text = bold(text)
    spread = report.spread(city, model, metric)
    if spread:
        text += f" ± {spread}"
    return text + marker(report.marker(city, model, metric))


#: A cell of a table: ``("value", model, metric)`` or ``("improvement", model, metric)`` (the
#: model against the city's baseline).
Cell = tuple[str, str, str]


@dataclass
class Part:
    """One table, or one part of a table split to fit the page, whatever the format: the first
    column's heading ``stub_head`` and cells ``stub`` (the metrics; or, models as rows, the
    models then the improvements' names), the other columns' ``heads`` and ``columns`` (per
    column, its cells row by row), ``rule``: the row before which a rule goes (the first
    improvement of a table with models as rows), ``number`` of ``count`` parts."""

    stub_head: str
    stub: list[str]
    heads: list[str]
    columns: list[list[Cell]]
    rule: int | None
    number: int
    count: int


def cell_pieces(report, city: City, kind: str, model: str, metric: str) -> tuple[str, ...]:
    """A cell's plain text, as wide as it prints, in the sub-columns of a LaTeX column: a
    value's integer part and its point, then the rest: ``("0.", "1693 ± 0.0012‡ᵃ")``; an
    improvement's difference, relative change and effect size: ``("+2.87 pp", " (+20.4%)",
    ", d_z +0.09")`` (a value's rest spans the improvements' last two)."""
    if kind == "value":
        text = cell(report, city, model, metric, lambda text: text, lambda text: text)
        whole, point, decimals = text.partition(".")
        return whole + point, decimals
    return report.improvement_parts(city, model, metric)


def _grid(city: City, metrics: list[str], transpose: bool):
    """(stub heading, stub, heads, columns, rule) of a whole table: a row per metric and a
    column per model and improvement, or (``transpose``) a row per model and improvement and a
    column per metric."""
    others = [m for m in city.models if m != city.baseline] if city.baseline else []
    against = [f"{m} vs {city.baseline}" for m in others]
    if not transpose:
        columns = [[("value", model, metric) for metric in metrics] for model in city.models]
        columns += [[("improvement", model, metric) for metric in metrics] for model in others]
        return "metric", list(metrics), [*city.models, *against], columns, None
    columns = [
        [("value", model, metric) for model in city.models]
        + [("improvement", model, metric) for model in others]
        for metric in metrics
    ]
    rule = len(city.models) if others else None
    return "model", [*city.models, *against], list(metrics), columns, rule


def table_parts(
    report, city: City, metrics: list[str], transpose: bool | None, *, page: tuple
) -> list[Part]:
    """A table laid out on a page, ``page = (width, char, gap)``: the text width, a generous
    width of one character and the space around a column, in one unit (LaTeX's points, HTML's
    pixels). A column's width is estimated as ``char * (its longest text) + gap``, its cells'
    longest being its sub-columns' widest side by side, as LaTeX sets them
    (:func:`cell_pieces`; a superscript letter counts half a character). Models as
    columns when that fits, else models as rows when that fits, else the layout that needs the
    fewer parts (models as columns on a tie), its columns in consecutive parts that each fit
    beside the stub; ``transpose`` True or False: that layout only, in parts when it does not
    fit. Nothing is shrunk, nothing scrolls."""
    width, char, gap = page

    def length(text: str) -> float:
        return len(text) - sum(c in SMALL for c in text) / 2

    def size(head: str, cells: list[tuple[str, ...]]) -> float:
        """A column's width: its heading's, or its first sub-column's widest then the widest
        of the rest (a value's rest, or an improvement's last two sub-columns side by side)."""
        rests: dict[int, list[tuple[str, ...]]] = {}
        for _, *rest in cells:
            rests.setdefault(len(rest), []).append(rest)
        rest = max(
            sum(max(length(texts[n]) for texts in same) for n in range(count))
            for count, same in rests.items()
        )
        return max(length(head), max(length(texts[0]) for texts in cells) + rest) * char + gap

    layouts = []
    for flag in [False, True] if transpose is None else [bool(transpose)]:
        stub_head, stub, heads, columns, rule = _grid(city, metrics, flag)
        stub_width = size(stub_head, [(text,) for text in stub])
        groups: list[list[int]] = [[]]
        used = stub_width
        for index, column in enumerate(columns):
            wide = size(heads[index], [cell_pieces(report, city, *c) for c in column])
            if groups[-1] and used + wide > width:
                groups.append([])
                used = stub_width
            groups[-1].append(index)
            used += wide
        layouts.append((stub_head, stub, heads, columns, rule, groups))
    stub_head, stub, heads, columns, rule, groups = min(layouts, key=lambda lay: len(lay[-1]))
    return [
        Part(
            stub_head,
            stub,
            [heads[i] for i in group],
            [columns[i] for i in group],
            rule,
            n,
            len(groups),
        )
        for n, group in enumerate(groups, 1)
    ]


@dataclass
class Listing:
    """A small table of plain texts, whatever the format: its ``title``, column ``heads`` and
    ``rows``, each column ``numeric`` (right-aligned) or not."""

    title: str
    heads: list[str]
    rows: list[list[str]]
    numeric: list[bool]


def leaderboard_listings(report, city: City) -> list[Listing]:
    """One ranked table per metric of ``city.leaderboard``
    (:func:`mobeval.compare.leaderboard.leaderboard`'s rows, as ``mobeval compare --view
    leaderboard`` prints them): rank, model, mean (`` ± sd`` over runs, or over units with
    ``report --std``: :meth:`~mobeval.report.Report.spread`) and letters."""
    if city.leaderboard is None:
        return []
    listings = []
    for metric in city.metrics:
        board = city.leaderboard.filter(pl.col("metric") == metric).sort("rank")
        if board.height == 0:
            continue
        rows = []
        for rank, model, mean, letters in board.select("rank", "model", "mean", "letters").rows():
            spread = report.spread(city, model, metric)
            text = report.number(mean) + (f" ± {spread}" if spread else "")
            rows.append([str(rank), model, text, letters])
        order = "lowest" if lower_is_better(metric) else "highest"
        listings.append(
            Listing(
                f"{metric}: {order} first",
                ["rank", "model", "mean ± sd" if city.runs or city.stds else "mean", "letters"],
                rows,
                [True, False, True, False],
            )
        )
    return listings


def comparison_listings(report, city: City) -> list[Listing]:
    """One table per tested metric of the comparison behind ``city``'s markers: each model
    against the baseline, its paired mean difference (in points for rates, as the improvement
    columns) with the bootstrap interval, paired Cohen's d_z, the matched-pairs rank-biserial
    correlation r_rb (when the Wilcoxon test ran), the p-value of the markers' test and the
    corrected p-value the marker was read from (the correction named in the heading)."""
    frame = city.comparison
    if frame is None or frame.height == 0 or city.test is None:
        return []
    column = P_COLUMNS[city.test]
    wilcoxon = frame["rank_biserial"].is_not_null().any()
    correction = frame["correction"][0]
    both = city.test != "tukey" and correction != "none"  # else the p-value is the one read
    heads = ["model", "difference", f"{frame['confidence'][0]:.0%} CI", "d_z"]
    heads += ["r_rb"] * wilcoxon + [f"p {city.test}"] + [f"p {correction}"] * both
    listings = []
    for metric in city.metrics:
        rows = []
        for model in city.models:
            found = frame.filter((pl.col("model") == model) & (pl.col("metric") == metric))
            if found.height == 0 or found[column][0] is None:
                continue
            row = found.row(0, named=True)
            interval = (
                f"[{report.points(city, metric, row['ci_low'])}, "
                f"{report.points(city, metric, row['ci_high'])}]"
                if row["ci_low"] is not None
                else "-"
            )
            cells = [model, report.points(city, metric, row["diff"], unit=True), interval]
            cells.append(_signed(row["cohen_dz"]))
            cells += [_signed(row["rank_biserial"])] * wilcoxon
            cells += [p_text(row[column])] + [p_text(row[f"{column}_corrected"])] * both
            rows.append(cells)
        if rows:
            listings.append(
                Listing(
                    f"{metric}: each model vs {city.baseline}",
                    heads,
                    rows,
                    [False, *[True] * (len(heads) - 1)],
                )
            )
    return listings


def _signed(value: float | None) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:+.2f}"


def comparisons_text(city: City) -> str:
    """What the columns of :func:`comparison_listings`' tables are."""
    if city.comparison is None or city.comparison.height == 0:
        return ""
    row = city.comparison.row(0, named=True)
    text = (
        f"difference: the paired mean difference model - {city.baseline} over the {row['n']:,} "
        f"{row['unit']}s{', ' + RUNS_WORDS[row['runs']] if row['runs'] else ''} (pp: "
        f"percentage points for rates); CI: its {row['confidence']:.0%} "
        f"bootstrap percentile interval ({row['resamples']:,} resamples, seed {row['seed']}); "
        "d_z: paired Cohen's d (mean / sd of the differences, ddof = 1)"
    )
    if city.comparison["rank_biserial"].is_not_null().any():
        text += (
            "; r_rb: the matched-pairs rank-biserial correlation of the Wilcoxon test "
            "((R+ - R-) / (R+ + R-), zero differences dropped)"
        )
    return (
        f"{text}; p: the {TEST_NAMES[city.test]}'s p-value (two-sided), then the one the "
        f"marker was read from: {city.significance}"
    )


#: What the per-cohort table shows (:func:`cohort_listings`).
cohorts_text = (
    "Each cohort's values (mobeval --cohorts: OUT/cohorts), every metric computed over the "
    "units of the cohort alone as the city's values are over all of them; a model with runs "
    "has a column per run (model/run)"
)


def cohort_listings(report, city: City) -> list[Listing]:
    """The city's values per cohort (:attr:`City.cohorts`), one table: a row per cohort and
    metric shown (the cohort's units first), a column per model with the cohort, or per run of
    a model with runs (``model/run``, in the runs' order)."""
    if not city.cohorts:
        return []
    shown = {column for by_column in city.cohorts.values() for column in by_column}
    models = [
        column
        for model in city.models
        for column in [model, *sorted(c for c in shown if c.startswith(f"{model}/"))]
        if column in shown
    ]
    rows = []
    for cohort, by_model in city.cohorts.items():
        counted = [c for c in ("samples", "users") if any(c in v for v in by_model.values())]
        for metric in [*counted, *city.metrics]:
            cells = [by_model.get(m, {}).get(metric) for m in models]
            if metric in counted:
                texts = ["-" if v is None else f"{int(v):,}" for v in cells]
            else:
                texts = [report.number(v) for v in cells]
            rows.append([cohort, metric, *texts])
    return [
        Listing(
            "Values per cohort",
            ["cohort", "metric", *models],
            rows,
            [False, False, *[True] * len(models)],
        )
    ]


def listing_sections(report, city: City) -> list[tuple[str, str, list[Listing], str]]:
    """The small tables under a city's tables, as every format shows them: (key, heading,
    tables, the sentence under them) of the ``leaderboard`` (``report --leaderboard``) and of
    the ``comparisons`` with the baseline (``report --comparisons``), those asked and made."""
    sections = [
        (
            "leaderboard",
            f"Leaderboard, city={city.name}",
            leaderboard_listings(report, city),
            city.letters_text,
        ),
        (
            "comparisons",
            f"Comparisons with {city.baseline}, city={city.name}",
            comparison_listings(report, city) if report.comparisons else [],
            comparisons_text(city),
        ),
        ("cohorts", f"Per cohort, city={city.name}", cohort_listings(report, city), cohorts_text),
    ]
    return [(key, heading, tables, text + ".") for key, heading, tables, text in sections if tables]


def spread_text(city: City) -> str:
    """What the ``± sd`` after a mean is (empty when the city shows none)."""
    if not any(city.stds.values()):
        return ""
    word = UNIT_WORDS.get(city.task, "units")
    return (
        f"the population standard deviation of the per-unit values over the {word} (the root "
        "of their mean squared deviation from the mean: ddof 0, as ranx's return_std and "
        "numpy.std); none where the value is not a mean over units (counts, micro averages, "
        "population metrics)"
    )


def significance_text(city: City, family: pl.DataFrame) -> str:
    """What the markers of ``city`` claim and how they were made: the marks and alpha, the
    test, the correction and the exact family of p-values it was applied over (``family``: the
    whole comparison the corrected p-values come from), the metrics tested and not tested."""
    alpha = city.alpha
    marks = ", ".join(f"{text} p < {alpha * share:g}" for share, text, _ in reversed(MARKERS))
    ran = [t for t, c in P_COLUMNS.items() if family[c].is_not_null().any()]
    correction = family["correction"][0]
    corrected_tests = [t for t in ran if t != "tukey"]
    pairs = family.select("baseline", "model").unique().height
    if city.test == "tukey":
        k = len(city.models)
        corrected = f"adjusted over every pair of the {k} models by the studentized range"
    elif correction == "none":
        corrected = "p-values not corrected for multiple comparisons"
    else:
        count = sum(
            int(family[P_COLUMNS[t]].fill_nan(None).is_not_null().sum()) for t in corrected_tests
        )
        metrics = family["metric"].n_unique()
        names = ", ".join(TEST_NAMES[t] for t in corrected_tests)
        if family["family"][0] == "metric":
            corrected = (
                f"{correction}-corrected within each metric, over its {count // metrics} "
                f"{names} p-values ({pairs} model pair(s))"
            )
        else:
            corrected = (
                f"{correction}-corrected over a family of {count:,} p-values: the {names} "
                f"p-values of {metrics} metric(s) x {pairs} model pair(s)"
            )
    rows = city.comparison
    tested = [
        m
        for m in city.metrics
        if m
        in rows.filter(pl.col(P_COLUMNS[city.test] + "_corrected").is_not_null())[
            "metric"
        ].to_list()
    ]
    untested = [m for m in city.metrics if m not in tested and m not in city.population]
    text = (
        f"{marks} vs {city.baseline} ({TEST_NAMES[city.test]}, two-sided; {corrected}); "
        f"tested: {', '.join(tested) or 'none'}"
    )
    if untested:
        text += f"; {NOT_TESTED[0]} not tested: {', '.join(untested)}"
    if city.population:
        text += f"; not paired, no marker: {', '.join(city.population)} (each {POPULATION})"
    return text


def legend(city: City) -> str:
    """The note under a city's tables: bold, the markers (or why there are none), the
    improvement columns."""
    parts = ["best per metric in bold"] if len(city.models) > 1 else []
    lower = [m for m in city.metrics if lower_is_better(m)]
    if lower and parts:
        parts[0] += f" (lowest for {', '.join(lower)})"
    if spread_text(city):
        parts.append("± sd: " + spread_text(city))
    if city.runs:
        counts = ", ".join(f"{model} {count}" for model, count in city.runs.items())
        parts.append(f"mean ± sd over runs (runs: {counts}; sd with ddof = 1)")
    if city.significance:
        parts.append(city.significance)
    if city.letters:
        parts.append(city.letters_text)
    elif city.baseline is not None:
        parts.append(f"{NOT_TESTED[0]} not tested against {city.baseline}")
    if city.baseline is not None:
        parts.append(
            f"improvement vs {city.baseline}: difference in points (pp: percentage points for "
            "rates) and relative change in %"
            + (
                ", and d_z, paired Cohen's d of the per-unit differences (mean / sd, ddof = 1)"
                if city.comparison is not None
                else ""
            )
        )
    return "; ".join(parts) + "." if parts else ""


def cells_text(
    city: City, metrics: list[str], legend_at: str, escape: Callable[[str], str] = str
) -> str:
    """What a cell of a table of ``metrics`` holds, for its caption: the city value (as the
    Methods define each metric's) over the units scored, `` ± sd`` over those units (``report
    --std``) or the mean ± sd over a model's runs, the population metrics' one value over all
    units; then where the legend of the bold and the markers is (``legend_at``): ``Cells: city
    value over 3,000 samples ± sd over the samples; bold, markers: legend below.``"""
    counts = sorted({city.units[model] for model in city.models})
    word = UNIT_WORDS.get(city.task, "units")
    over = f"{counts[0]:,}" if len(counts) == 1 else f"{counts[0]:,}-{counts[-1]:,}"
    population = [m for m in metrics if m in city.population]
    parts = []
    if len(population) < len(metrics):
        text = f"city value over {over} {word}"
        if any(city.stds.values()):
            text += f" ± sd over the {word}"
        if len(city.runs) == len(city.models):
            text = f"cells: mean ± sd over runs of the {text}"
        else:
            text = f"cells: {text}"
            if city.runs:
                text += f" (of {', '.join(city.runs)}: mean ± sd over runs)"
        parts.append(text)
    if population:
        which = f"{', '.join(population)}: " if len(population) < len(metrics) else "cells: "
        parts.append(f"{which}one value over all {over} {word}")
    text = "; ".join(parts)
    text = escape(f"{text[:1].upper()}{text[1:]}")
    if legend(city):
        marks = "bold, markers" if len(city.models) > 1 else "notes"
        text += escape(f"; {marks}: legend ") + legend_at
    return text + "."


def header(city: City) -> str:
    units = city.units.get(city.models[0], 0)
    word = UNIT_WORDS.get(city.task, "units")
    base = f", baseline {city.baseline}" if city.baseline else ""
    group = f", {city.group}" if city.group else ""
    return f"{city.task}, {len(city.models)} model(s), {units:,} {word}{base}{group}"
