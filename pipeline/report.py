"""``mobeval report OUT``: the results of an output folder as LaTeX, Markdown or HTML.

>>> from mobeval.report import Report
>>> report = Report("out/nextloc_sample", baseline="markov")
>>> report.save("out/nextloc_sample/report/report.html")   # or .md, .tex
>>> report.to_markdown()                                    # a string; plots need a folder

Per city: one table per cutoff grid (the metrics @1/@5/@10 together, the metrics without a
cutoff together), one row per metric and one column per model, the best value per metric in
bold (the lowest for dtw, mse, mae, rmse, cross_entropy), significance markers against the
baseline from ``OUT/compare`` (computed with :func:`mobeval.compare.compare` when absent and
``compute_compare``), and improvement columns as in the seed guide: the difference in points
(percentage points for rates) and the relative change in %. Then plots (matplotlib, the
``report`` extra): metric@k curves, the CDF of per-unit values, the city GEO-BLEU per day
(trajectories), a paired scatter of two models' per-unit values; and a methods section generated
from the manifest: every metric's definition, formula and the resolved parameters of this run
(:mod:`mobeval.report_methods`).

Per-unit data is read one metric column at a time (plus the unit keys for the scatter), so memory
is bounded by one column per model, not by the number of metrics.
"""

from __future__ import annotations

import base64
import contextlib
import html
import io
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from mobeval.errors import ConfigError, InputError
from mobeval.io.outputs import read_section, section_schema
from mobeval.report_methods import (
    Method,
    cutoff_of,
    family_of,
    lower_is_better,
    methods,
    resolved_options,
)

FORMATS = {"latex": ".tex", "markdown": ".md", "html": ".html"}
_SUFFIX_FORMATS = {".tex": "latex", ".md": "markdown", ".markdown": "markdown", ".html": "html"}
_SUFFIX_FORMATS[".htm"] = "html"
EXTRA_MESSAGE = (
    "plots need matplotlib: pip install 'mobeval[report]' (or --no-plots for tables and methods "
    "only)"
)
#: Families whose values are rates in [0, 1] (differences shown in percentage points).
RATES = frozenset(
    {"acc", "hit_rate", "precision", "recall", "fmeasure", "f1", "r-precision", "map", "mrr"}
    | {"ndcg", "f1_weighted", "f1_macro", "geobleu"}
)
#: Significance markers: (corrected p below, marker in text, marker in LaTeX).
MARKERS = ((0.01, "‡", r"$^{\ddagger}$"), (0.05, "†", r"$^{\dagger}$"))
_TEST_COLUMNS = {"paired-t": "p_t", "wilcoxon": "p_wilcoxon", "randomization": "p_randomization"}
TEST_NAMES = {
    "paired-t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "randomization": "Fisher's randomization (sign-flip) test",
}
_UNIT_WORDS = {"nextloc": "samples", "trajectory": "uids", "recs": "users", "logits": "rows"}


class ReportExtraMissing(ConfigError):
    """matplotlib is not installed and plots were asked for."""


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ReportExtraMissing(EXTRA_MESSAGE) from None
    return plt


def check_plotting() -> None:
    """ReportExtraMissing (exit 2 on the command line) when matplotlib cannot be imported."""
    _pyplot()


# --------------------------------------------------------------------------------------------
# What a city holds


@dataclass
class Figure:
    name: str  # file name, e.g. tky-curves.png
    caption: str
    png: bytes


@dataclass
class Table:
    title: str
    metrics: list[str]


@dataclass
class City:
    name: str
    task: str
    models: list[str]
    baseline: str | None
    values: dict[str, dict[str, float]]  # model -> metric -> value
    units: dict[str, int]  # model -> units scored
    metrics: list[str]
    options: dict
    percent: bool
    comparison: pl.DataFrame | None = None
    comparison_source: str = ""
    note: str = ""
    test: str | None = None
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)


def _style(ax, title: str, xlabel: str, ylabel: str | None = None, *, legend=True) -> None:
    """Every plot's look: a small title, the axis labels, a light grid, the models' legend."""
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    if legend:
        ax.legend(fontsize=8)


def _tables(metrics: list[str]) -> list[Table]:
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


# --------------------------------------------------------------------------------------------
# The report


class Report:
    """The report of a mobeval output folder (module docstring).

    Args:
        out: the output folder (with ``manifest.json``).
        baseline: the model the others are compared with (default: each city's first model in
            the manifest).
        city: one city (default: every city).
        plots: draw the plots (needs matplotlib: ``pip install 'mobeval[report]'``).
        compute_compare: when ``OUT/compare`` has no comparison against the baseline, compute it
            with :func:`mobeval.compare.compare` (not written); False: say to run
            ``mobeval compare``.
        test: the test behind the significance markers (``paired-t``, ``wilcoxon``,
            ``randomization``; default: the first one the comparison ran, in that order).
        compare_options: passed to :func:`mobeval.compare.compare` when it is computed
            (``tests``, ``resamples``, ``permutations``, ``seed``, ``correction``...).
        title: the document's title.
    """

    def __init__(
        self,
        out: str | os.PathLike,
        *,
        baseline: str | None = None,
        city: str | None = None,
        plots: bool = True,
        compute_compare: bool = True,
        test: str | None = None,
        compare_options: dict | None = None,
        title: str | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        from mobeval.compare import _Out

        if test is not None and test not in _TEST_COLUMNS:
            raise ConfigError(f"test: {test!r}: choose among {', '.join(_TEST_COLUMNS)}")
        self.out = Path(out)
        self.plots = plots
        self.compute_compare = compute_compare
        self.test = test
        self.compare_options = dict(compare_options or {})
        self.title = title or f"mobeval report: {self.out.name or self.out.resolve().name}"
        self.log = log
        self._source = _Out(self.out)
        if not self._source.cities:
            raise InputError("no complete result in the manifest: nothing to report", path=out)
        if city is not None and city not in self._source.cities:
            raise ConfigError(
                f"--city: no results for city {city!r} in {out} (cities: "
                f"{', '.join(self._source.cities)})"
            )
        names = [city] if city is not None else list(self._source.cities)
        if baseline is not None and not any(baseline in self._source.cities[c] for c in names):
            raise ConfigError(f"--baseline: no model {baseline!r} in {out}")
        self.cities = [self._city(name, baseline) for name in names]
        self._figures_done = False

    # ---- reading --------------------------------------------------------------------------

    def _city(self, name: str, baseline: str | None) -> City:
        from mobeval.compare import COUNT_ROWS

        results = self._source.cities[name]
        models = list(results)
        values, units, metrics = {}, {}, []
        for model, result in results.items():
            summary = self._source.summary(result)
            values[model] = {}
            for metric, value, n in summary.select("metric", "value", "n").iter_rows():
                if metric in ("samples", "uids", "users"):
                    units[model] = int(value)
                if metric in COUNT_ROWS:
                    continue
                units.setdefault(model, int(n or 0))
                values[model][metric] = float(value) if value is not None else math.nan
                if metric not in metrics:
                    metrics.append(metric)
        first = next(iter(results.values()))
        recorded = first.entry.get("resolved")
        options = recorded if isinstance(recorded, dict) else _resolved(first.task, first.config)
        chosen = baseline if baseline in results else models[0]
        city = City(
            name=name,
            task=first.task,
            models=models,
            baseline=chosen if len(models) > 1 else None,
            values=values,
            units={m: units.get(m, 0) for m in models},
            metrics=metrics,
            options=options,
            percent=bool(first.task == "logits" and options.get("percent")),
        )
        city.tables = _tables(metrics)
        if len(models) > 1:
            self._comparison(city)
        return city

    def _comparison(self, city: City) -> None:
        path = self.out / "compare" / f"city={city.name}" / "part-0.parquet"
        frame = None
        if path.is_file():
            stored = read_section([path])
            stored = stored.filter(pl.col("baseline") == city.baseline)
            others = set(city.models) - {city.baseline}
            if others and others <= set(stored["model"].to_list()):
                frame, city.comparison_source = stored, f"compare/city={city.name}"
        if frame is None and self.compute_compare:
            from mobeval.compare import compare

            try:
                frame = compare(
                    self.out,
                    city=city.name,
                    baseline=city.baseline,
                    log=None,
                    **self.compare_options,
                )
                city.comparison_source = "computed for this report (mobeval compare not run)"
            except (ConfigError, InputError) as error:
                city.note = f"no significance markers: {error}"
        elif frame is None:
            city.note = (
                f"no significance markers: run `mobeval compare {self.out} --baseline "
                f"{city.baseline}` first"
            )
        if frame is not None:
            city.comparison = frame
            ran = [t for t, c in _TEST_COLUMNS.items() if frame[c].is_not_null().any()]
            city.test = self.test if self.test in ran else (ran[0] if ran else None)
            if self.test is not None and self.test not in ran:
                city.note = f"the comparison did not run {self.test}; markers from {city.test}"

    # ---- cells ----------------------------------------------------------------------------

    def best(self, city: City, metric: str) -> set[str]:
        """The models with the best value of ``metric`` (max, or min when lower is better)."""
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
        if city.comparison is None or city.test is None or model == city.baseline:
            return None
        column = _TEST_COLUMNS[city.test] + "_corrected"
        rows = city.comparison.filter((pl.col("model") == model) & (pl.col("metric") == metric))
        if rows.height == 0:
            return None
        value = rows[column][0]
        return None if value is None or math.isnan(value) else float(value)

    def marker(self, city: City, model: str, metric: str, latex: bool = False) -> str:
        p = self.p_value(city, model, metric)
        if p is None:
            return ""
        for limit, text, tex in MARKERS:
            if p < limit:
                return tex if latex else text
        return ""

    def improvement(self, city: City, model: str, metric: str) -> str:
        """``+6.58 pp (+12.8%)`` for rates, ``-1.234 (-3.2%)`` otherwise."""
        base = city.values[city.baseline].get(metric, math.nan)
        value = city.values[model].get(metric, math.nan)
        if math.isnan(base) or math.isnan(value):
            return "-"
        diff = value - base
        if family_of(metric) in RATES:
            points = diff if city.percent else diff * 100
            text = f"{points:+.2f} pp"
        else:
            text = f"{diff:+.4g}"
        if base != 0:
            text += f" ({diff / abs(base) * 100:+.1f}%)"
        return text

    @staticmethod
    def number(value: float | None) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "-"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return f"{value:.2f}" if abs(value) >= 100 else f"{value:.4f}"

    # ---- figures --------------------------------------------------------------------------

    def figures(self) -> None:
        """Draw every city's plots once (matplotlib; ReportExtraMissing without it)."""
        if self._figures_done or not self.plots:
            return
        plt = _pyplot()
        for city in self.cities:
            city.figures = [f for f in self._city_figures(plt, city) if f is not None]
        self._figures_done = True

    def _city_figures(self, plt, city: City) -> list[Figure | None]:
        return [
            self._curves(plt, city),
            self._cdf(plt, city),
            self._per_day(plt, city),
            self._scatter(plt, city),
        ]

    @staticmethod
    def _figure(plt, figure, name: str, caption: str) -> Figure:
        """``figure`` drawn as a PNG (100 dpi, no software stamp: the same bytes every time),
        then closed."""
        buffer = io.BytesIO()
        figure.tight_layout()
        figure.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
        plt.close(figure)
        return Figure(name, caption, buffer.getvalue())

    def _curves(self, plt, city: City) -> Figure | None:
        families: dict[str, list[tuple[int, str]]] = {}
        for metric in city.metrics:
            k = cutoff_of(metric)
            if k is not None:
                families.setdefault(metric.partition("@")[0], []).append((k, metric))
        families = {f: sorted(v) for f, v in families.items() if len(v) >= 2}
        if not families:
            return None
        n = len(families)
        cols = min(n, 4)
        rows = math.ceil(n / cols)
        figure, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.6 * rows), squeeze=False)
        for ax, (name, points) in zip(axes.flat, families.items(), strict=False):
            ks = [k for k, _ in points]
            for model in city.models:
                ys = [city.values[model].get(m, math.nan) for _, m in points]
                ax.plot(ks, ys, marker="o", label=model)
            _style(ax, f"{name}@k", "k", legend=False)
            ax.set_xticks(ks)
        for ax in list(axes.flat)[n:]:
            ax.axis("off")
        axes.flat[0].legend(fontsize=8)
        caption = f"city={city.name}: metric@k per model"
        return self._figure(plt, figure, f"{city.name}-curves.png", caption)

    def _per_unit_metrics(self, city: City) -> list[str]:
        """The per-unit metrics of the CDF and scatter plots (at most two)."""
        result = self._source.cities[city.name][city.models[0]]
        try:
            files = self._source.section_files(result, "per_unit")
        except InputError:
            return []
        schema = section_schema(files)
        columns = [m for m in city.metrics if m in schema and schema[m].is_numeric()]
        if city.task == "trajectory":
            return [m for m in ("geobleu", "dtw") if m in columns]
        uncut = [m for m in columns if cutoff_of(m) is None]
        cut = []
        for family in ("ndcg", "mrr", "map", "acc", "precision", "recall"):
            ks = [m for m in columns if m.partition("@")[0] == family and cutoff_of(m)]
            if ks:
                cut.append(max(ks, key=cutoff_of))
        return (uncut + cut)[:2]

    def _column(self, city: City, model: str, metric: str) -> np.ndarray | None:
        result = self._source.cities[city.name][model]
        try:
            files = self._source.section_files(result, "per_unit")
        except InputError:
            return None
        if metric not in section_schema(files):
            return None
        column = read_section(files, [metric])[metric]
        values = column.cast(pl.Float64).to_numpy()
        return values[~np.isnan(values)]

    def _cdf(self, plt, city: City) -> Figure | None:
        chosen = self._per_unit_metrics(city)
        if not chosen:
            return None
        figure, axes = plt.subplots(1, len(chosen), figsize=(5 * len(chosen), 3.4), squeeze=False)
        for ax, metric in zip(axes.flat, chosen, strict=True):
            for model in city.models:
                values = self._column(city, model, metric)  # one column at a time
                if values is None or values.size == 0:
                    continue
                values = np.sort(values)
                share = np.arange(0, values.size + 1) / values.size
                ax.step(np.concatenate([values[:1], values]), share, where="post", label=model)
                del values, share
            word = _UNIT_WORDS.get(city.task, "units")
            _style(ax, f"{metric}: CDF over {word}", metric, "share of " + word)
        caption = f"city={city.name}: distribution (CDF) of per-unit values per model"
        return self._figure(plt, figure, f"{city.name}-cdf.png", caption)

    def _per_day(self, plt, city: City) -> Figure | None:
        if city.task != "trajectory":
            return None
        figure, ax = plt.subplots(figsize=(7, 3.2))
        drawn = False
        for model in city.models:
            result = self._source.cities[city.name][model]
            try:
                files = self._source.section_files(result, "per_day")
            except InputError:
                continue
            if "geobleu" not in section_schema(files):
                continue
            days = (
                read_section(files, ["d", "geobleu"])
                .group_by("d")
                .agg(pl.col("geobleu").mean())
                .sort("d")
            )
            ax.plot(days["d"].to_numpy(), days["geobleu"].to_numpy(), marker=".", label=model)
            drawn = True
        if not drawn:
            plt.close(figure)
            return None
        _style(ax, f"city={city.name}: GEO-BLEU per day (mean over uids)", "day d", "GEO-BLEU")
        caption = f"city={city.name}: city GEO-BLEU per day"
        return self._figure(plt, figure, f"{city.name}-per-day.png", caption)

    def _scatter(self, plt, city: City) -> Figure | None:
        from mobeval.compare import _unit_keys

        chosen = self._per_unit_metrics(city)
        if city.baseline is None or not chosen:
            return None
        metric = chosen[0]
        other = next(m for m in city.models if m != city.baseline)
        frames = []
        for model in (city.baseline, other):
            result = self._source.cities[city.name][model]
            try:
                section, keys, _ = _unit_keys(result, "default")
                files = self._source.section_files(result, section)
            except (ConfigError, InputError):
                return None
            frames.append(read_section(files, [*keys, metric]).rename({metric: model}))
        joined = frames[0].join(frames[1], on=keys, how="inner").drop_nans().drop_nulls()
        del frames
        if joined.height == 0:
            return None
        if joined.height > 20000:  # every n-th unit: the picture, not the data
            joined = joined.gather_every(math.ceil(joined.height / 20000))
        x, y = joined[city.baseline].to_numpy(), joined[other].to_numpy()
        figure, ax = plt.subplots(figsize=(4.4, 4.2))
        size, alpha = (24, 0.8) if x.size <= 2000 else (6, 0.3)
        ax.scatter(x, y, s=size, alpha=alpha, edgecolors="none")
        low, high = float(min(x.min(), y.min())), float(max(x.max(), y.max()))
        ax.plot([low, high], [low, high], color="grey", linewidth=0.8, linestyle="--")
        _style(ax, f"{metric} per unit, paired", f"{city.baseline} (baseline)", other, legend=False)
        caption = (
            f"city={city.name}: {metric} of {other} vs {city.baseline}, paired by unit "
            f"({joined.height} shown)"
        )
        return self._figure(plt, figure, f"{city.name}-scatter.png", caption)

    # ---- methods --------------------------------------------------------------------------

    def method_groups(self) -> list[tuple[list[str], str, dict, list[Method]]]:
        """(cities, task, resolved options, methods) per distinct way of scoring."""
        groups: list[tuple[list[str], str, dict, list[str]]] = []
        for city in self.cities:
            for cities, task, options, metrics in groups:
                if task == city.task and options == city.options:
                    cities.append(city.name)
                    metrics += [m for m in city.metrics if m not in metrics]
                    break
            else:
                groups.append(([city.name], city.task, city.options, list(city.metrics)))
        return [(c, t, o, methods(t, o, m)) for c, t, o, m in groups]

    def comparison_text(self) -> list[str]:
        """One sentence per city on the comparison behind the markers."""
        lines = []
        for city in self.cities:
            if city.comparison is None or city.test is None:
                if city.note:
                    lines.append(f"city={city.name}: {city.note}.")
                continue
            row = city.comparison.row(0, named=True)
            ci = (
                f"{row['confidence']:.0%} bootstrap percentile interval of the difference from "
                f"{row['resamples']} resamples (seed {row['seed']})"
            )
            lines.append(
                f"city={city.name}: {city.test} ({TEST_NAMES[city.test]}) against "
                f"{city.baseline}, paired by {row['unit']} (n = {row['n']}), p-values corrected "
                f"with {row['correction']} over every model x metric x test of the city; "
                f"{ci}; source: {city.comparison_source}."
            )
        return lines

    # ---- renderers ------------------------------------------------------------------------

    def to_markdown(self, figures_dir: str | None = None) -> str:
        """GitHub-flavoured Markdown; with ``figures_dir`` (relative to the Markdown file) the
        plots are linked there (:meth:`save` writes them)."""
        return _render_markdown(self, figures_dir)

    def to_html(self) -> str:
        """One self-contained HTML page (plots embedded as base64 PNG)."""
        return _render_html(self)

    def to_latex(self, figures_dir: str | None = None) -> str:
        """A LaTeX document (pdflatex); with ``figures_dir`` the plots are included from there."""
        return _render_latex(self, figures_dir)

    def _repr_html_(self) -> str:
        return _render_html(self, standalone=False)

    def save(self, path: str | os.PathLike, format: str | None = None) -> Path:
        """Write the report to ``path`` (format from ``format`` or the suffix: .tex, .md, .html,
        which must match ``format`` when both are given); Markdown and LaTeX get their plots in
        ``<stem>_files/`` beside. ``path`` may lie anywhere but over or under what OUT owns
        (its manifest, lock, staging area and results) and never through a link that leaves
        OUT (:func:`mobeval.io.writers.report_destination`). Written whole or not at all: staged
        in a temporary folder (:class:`mobeval.io.writers.ScratchFolder`: removed on every way
        out, or by the next report after a kill), then moved into place (under OUT's lock when
        inside OUT); the folders made for it are removed again if it fails."""
        from mobeval.io.writers import (
            STAGING,
            ScratchFolder,
            made_parents,
            output_lock,
            report_destination,
        )

        named = _SUFFIX_FORMATS.get(Path(path).suffix.lower())
        if format is None and named is None:
            raise ConfigError(
                f"--output: {path}: cannot tell the format from the suffix (.tex, .md, .html)"
            )
        format = format or named
        if format not in FORMATS:
            raise ConfigError(f"--format: {format!r}: choose among {', '.join(FORMATS)}")
        if named != format:
            suffixes = ", ".join(s for s, f in _SUFFIX_FORMATS.items() if f == format)
            raise ConfigError(f"--output: {path}: a {format} report's name ends in {suffixes}")
        path = Path(path)
        report_destination(path, self.out)
        inside = _inside(path, self.out)
        lock = output_lock(self.out) if inside else contextlib.nullcontext()
        with lock, made_parents([path]):
            root = (self.out / STAGING) if inside else path.parent
            with ScratchFolder(root, ".report-") as staged:
                files_name = f"{path.stem}_files"
                if format == "html":
                    text = self.to_html()
                elif format == "markdown":
                    text = self.to_markdown(files_name if self.plots else None)
                else:
                    text = self.to_latex(files_name if self.plots else None)
                (staged / path.name).write_text(text, encoding="utf-8")
                if format != "html" and self.plots and any(c.figures for c in self.cities):
                    folder = staged / files_name
                    folder.mkdir()
                    for city in self.cities:
                        for figure in city.figures:
                            (folder / figure.name).write_bytes(figure.png)
                    final = path.parent / files_name
                    if final.exists() or final.is_symlink():
                        os.replace(final, staged / "replaced")
                    os.replace(folder, final)
                os.replace(staged / path.name, path)
        return path


def _inside(path: Path, out: Path) -> bool:
    try:
        path.resolve().relative_to(out.resolve())
    except ValueError:
        return False
    return True


def _resolved(task: str, config: dict) -> dict:
    try:
        return resolved_options(task, config)
    except (ConfigError, ValueError, TypeError):
        return {k: v for k, v in config.items() if k not in ("type", "city", "model")}


# --------------------------------------------------------------------------------------------
# Markdown


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def _cell(report: Report, city: City, model: str, metric: str, bold, marker) -> str:
    value = city.values[model].get(metric)
    text = report.number(value)
    if value is not None and model in report.best(city, metric):
        text = bold(text)
    return text + marker(report.marker(city, model, metric))


def _legend(city: City) -> str:
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


def _header(city: City) -> str:
    units = city.units.get(city.models[0], 0)
    word = _UNIT_WORDS.get(city.task, "units")
    base = f", baseline {city.baseline}" if city.baseline else ""
    return f"{city.task}, {len(city.models)} model(s), {units} {word}{base}"


def _render_markdown(report: Report, figures_dir: str | None) -> str:
    if report.plots and figures_dir is not None:  # no folder: nothing to link
        report.figures()
    lines = [f"# {report.title}", ""]
    lines.append(
        f"Results of `{report.out}` ({time.strftime('%Y-%m-%d')}): one table per city and cutoff "
        "grid, then plots and the methods of this run."
    )
    lines.append("")
    for city in report.cities:
        lines += [f"## city={city.name}", "", f"*{_header(city)}*", ""]
        others = [m for m in city.models if m != city.baseline] if city.baseline else []
        for table in city.tables:
            head = ["metric", *city.models, *[f"{m} vs {city.baseline}" for m in others]]
            lines.append(f"**{table.title}**")
            lines.append("")
            lines.append("| " + " | ".join(_md_escape(h) for h in head) + " |")
            lines.append("|---|" + "---:|" * (len(head) - 1))
            for metric in table.metrics:
                cells = [
                    _cell(report, city, m, metric, lambda t: f"**{t}**", lambda t: t)
                    for m in city.models
                ]
                cells += [report.improvement(city, m, metric) for m in others]
                lines.append("| " + " | ".join([_md_escape(metric), *cells]) + " |")
            lines.append("")
        lines += [_legend(city), ""]
        if city.note:
            lines += [f"Note: {city.note}", ""]
        if figures_dir is not None:
            for figure in city.figures:
                lines += [f"![{figure.caption}]({figures_dir}/{figure.name})", ""]
    lines += _methods_markdown(report)
    return "\n".join(lines).rstrip() + "\n"


def _methods_markdown(report: Report) -> list[str]:
    lines = ["## Methods", ""]
    for cities, task, _, entries in report.method_groups():
        lines += [f"### {task}: {', '.join('city=' + c for c in cities)}", ""]
        for entry in entries:
            lines += [
                f"**{entry.info.title}** ({', '.join(entry.metrics)}). {entry.info.definition}",
                "",
            ]
            lines += ["$$", entry.info.tex, "$$", ""]
            lines += [f"System value: {entry.info.aggregate}.", ""]
            lines += [
                "In this run: " + "; ".join(f"{k} = {v}" for k, v in entry.parameters) + ".",
                "",
            ]
    comparison = report.comparison_text()
    if comparison:
        lines += ["### Comparison", ""] + [f"* {line}" for line in comparison] + [""]
    return lines


# --------------------------------------------------------------------------------------------
# HTML

_CSS = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1100px; color: #222; line-height: 1.45; padding: 0 1em; }
h1 { border-bottom: 2px solid #ccc; padding-bottom: .2em; }
h2 { margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: .6em 0 1.2em; font-size: 14px; }
th, td { border: 1px solid #ccc; padding: 4px 10px; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
caption { caption-side: top; text-align: left; font-weight: bold; padding: 4px 0; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 13px; color: #555; }
code.formula { display: block; background: #f7f7f7; padding: 6px 10px; margin: .4em 0; }
.legend, .note { font-size: 13px; color: #444; }
dl.params { display: grid; grid-template-columns: max-content auto; gap: 2px 12px;
            font-size: 14px; }
dl.params dt { font-weight: 600; } dl.params dd { margin: 0; }
"""


def _render_html(report: Report, standalone: bool = True) -> str:
    if report.plots:
        report.figures()
    e = html.escape
    parts = [f"<h1>{e(report.title)}</h1>", f"<p>Results of <code>{e(str(report.out))}</code>.</p>"]
    for city in report.cities:
        parts.append(f"<h2>city={e(city.name)}</h2><p><em>{e(_header(city))}</em></p>")
        others = [m for m in city.models if m != city.baseline] if city.baseline else []
        for table in city.tables:
            head = ["metric", *city.models, *[f"{m} vs {city.baseline}" for m in others]]
            rows = []
            for metric in table.metrics:
                cells = [
                    _cell(report, city, m, metric, lambda t: f"<b>{t}</b>", e) for m in city.models
                ]
                cells += [e(report.improvement(city, m, metric)) for m in others]
                rows.append(
                    f"<tr><td>{e(metric)}</td>"
                    + "".join(f'<td class="num">{c}</td>' for c in cells)
                    + "</tr>"
                )
            parts.append(
                f"<table><caption>{e(table.title)}</caption><tr>"
                + "".join(f"<th>{e(h)}</th>" for h in head)
                + "</tr>"
                + "".join(rows)
                + "</table>"
            )
        parts.append(f'<p class="legend">{e(_legend(city))}</p>')
        if city.note:
            parts.append(f'<p class="note">Note: {e(city.note)}</p>')
        for figure in city.figures:
            data = base64.b64encode(figure.png).decode("ascii")
            parts.append(
                f'<figure><img alt="{e(figure.caption)}" src="data:image/png;base64,{data}">'
                f"<figcaption>{e(figure.caption)}</figcaption></figure>"
            )
    parts.append("<h2>Methods</h2>")
    for cities, task, _, entries in report.method_groups():
        parts.append(f"<h3>{e(task)}: {e(', '.join('city=' + c for c in cities))}</h3>")
        for entry in entries:
            params = "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in entry.parameters)
            parts.append(
                f"<h4>{e(entry.info.title)} <small>({e(', '.join(entry.metrics))})</small></h4>"
                f"<p>{e(entry.info.definition)}</p>"
                f'<code class="formula">{e(entry.info.text)}</code>'
                f"<p>System value: {e(entry.info.aggregate)}.</p>"
                f'<p>In this run:</p><dl class="params">{params}</dl>'
            )
    comparison = report.comparison_text()
    if comparison:
        parts.append("<h3>Comparison</h3><ul>")
        parts += [f"<li>{e(line)}</li>" for line in comparison]
        parts.append("</ul>")
    body = "\n".join(parts)
    if not standalone:
        return f"<div><style>{_CSS}</style>{body}</div>"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{e(report.title)}</title><style>{_CSS}</style></head><body>\n{body}\n"
        "</body></html>\n"
    )


# --------------------------------------------------------------------------------------------
# LaTeX

_TEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "†": r"$^{\dagger}$",
    "‡": r"$^{\ddagger}$",
    "<": r"$<$",
    ">": r"$>$",
}


def tex_escape(text: str) -> str:
    return "".join(_TEX_ESCAPES.get(ch, ch) for ch in str(text))


def _render_latex(report: Report, figures_dir: str | None) -> str:
    if report.plots and figures_dir is not None:  # no folder: nothing to link
        report.figures()
    t = tex_escape
    out = [
        r"\documentclass[10pt]{article}",
        r"\usepackage[T1]{fontenc}",
        r"\usepackage[utf8]{inputenc}",
        r"\usepackage{lmodern}",
        r"\usepackage[margin=2cm]{geometry}",
        r"\usepackage{amsmath,amssymb}",
        r"\usepackage{graphicx}",
        r"\usepackage{float}",
        r"\usepackage{array}",
        r"\setlength{\parindent}{0pt}\setlength{\parskip}{4pt}",
        rf"\title{{{t(report.title)}}}",
        r"\date{" + time.strftime("%Y-%m-%d") + "}",
        r"\begin{document}",
        r"\maketitle",
    ]
    for city in report.cities:
        out.append(rf"\section*{{city={t(city.name)}}}")
        out.append(rf"\textit{{{t(_header(city))}}}")
        others = [m for m in city.models if m != city.baseline] if city.baseline else []
        for table in city.tables:
            head = ["metric", *city.models, *[f"{m} vs {city.baseline}" for m in others]]
            spec = "l" + "r" * (len(head) - 1)
            out += [
                r"\begin{table}[H]\centering\small",
                rf"\textbf{{{t(table.title)}}}\\[2pt]",
                r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%",
                rf"\begin{{tabular}}{{{spec}}}",
                r"\hline",
                " & ".join(t(h) for h in head) + r" \\",
                r"\hline",
            ]
            for metric in table.metrics:
                cells = [
                    _cell(
                        report,
                        city,
                        m,
                        metric,
                        lambda s: rf"\textbf{{{s}}}",
                        lambda s: s,
                    )
                    .replace("†", r"$^{\dagger}$")
                    .replace("‡", r"$^{\ddagger}$")
                    for m in city.models
                ]
                cells += [t(report.improvement(city, m, metric)) for m in others]
                out.append(" & ".join([t(metric), *cells]) + r" \\")
            out += [r"\hline", r"\end{tabular}}", r"\end{table}"]
        out.append(r"{\footnotesize " + t(_legend(city)) + "}")
        if city.note:
            out.append(r"{\footnotesize Note: " + t(city.note) + "}")
        if figures_dir is not None:
            for figure in city.figures:
                out += [
                    r"\begin{figure}[H]\centering",
                    rf"\includegraphics[width=0.9\linewidth,height=0.4\textheight,keepaspectratio]{{{figures_dir}/{figure.name}}}",
                    rf"\\{{\footnotesize {t(figure.caption)}}}",
                    r"\end{figure}",
                ]
    out.append(r"\section*{Methods}")
    for cities, task, _, entries in report.method_groups():
        out.append(rf"\subsection*{{{t(task)}: {t(', '.join('city=' + c for c in cities))}}}")
        for entry in entries:
            out += [
                rf"\paragraph{{{t(entry.info.title)}}} ({t(', '.join(entry.metrics))}) "
                + t(entry.info.definition),
                r"\[ " + entry.info.tex + r" \]",
                "System value: " + t(entry.info.aggregate) + ".",
                "",
                r"During this experiment it has been computed with:",
                r"\begin{itemize}\setlength{\itemsep}{0pt}",
                *[rf"\item \textbf{{{t(k)}}}: {t(v)}" for k, v in entry.parameters],
                r"\end{itemize}",
            ]
    comparison = report.comparison_text()
    if comparison:
        out.append(r"\subsection*{Comparison}")
        out.append(r"\begin{itemize}")
        out += [r"\item " + t(line) for line in comparison]
        out.append(r"\end{itemize}")
    out.append(r"\end{document}")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# Command line and jobs


def parse_formats(value: str | Sequence[str]) -> list[str]:
    given = [value] if isinstance(value, str) else list(value)
    names = [n.strip() for text in given for n in str(text).split(",") if n.strip()]
    aliases = {"md": "markdown", "tex": "latex", "htm": "html"}
    names = [aliases.get(n, n) for n in names]
    unknown = [n for n in names if n not in FORMATS]
    if unknown or not names:
        raise ConfigError(f"--format: {unknown or names!r}: choose among {', '.join(FORMATS)}")
    return list(dict.fromkeys(names))


def write_reports(
    out: str | os.PathLike,
    formats: Sequence[str],
    *,
    output: str | os.PathLike | None = None,
    **options,
) -> list[Path]:
    """Write the report in each format: ``output`` (one format) or ``OUT/report/report.<ext>``."""
    formats = parse_formats(formats)
    if output is not None and len(formats) > 1:
        raise ConfigError("--output: names one file; give one --format with it")
    if options.get("plots", True):
        check_plotting()
    report = Report(out, **options)
    written = []
    for name in formats:
        if output is not None:
            target = Path(output)
            if target.is_dir() or str(output).endswith(os.sep):
                target = target / f"report{FORMATS[name]}"
        else:
            target = Path(out) / "report" / f"report{FORMATS[name]}"
        written.append(report.save(target, name))
    return written
