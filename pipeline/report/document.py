"""The :class:`Report` of an output folder (what each city holds, its cells, its methods
section, its file written whole) and :func:`write_reports`, the command line's and the job's
way in."""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl

from mobeval.compare.comparison import compare
from mobeval.compare.results import COUNT_ROWS, OutputFolder
from mobeval.compare.significance import P_COLUMNS
from mobeval.errors import ConfigError, InputError
from mobeval.io.outputs import read_section
from mobeval.report.city import City
from mobeval.report.html import render_html
from mobeval.report.latex import render_latex
from mobeval.report.markdown import render_markdown
from mobeval.report.methods import Method, family_of, lower_is_better, methods, resolved_options
from mobeval.report.plots import check_plotting, draw_figures
from mobeval.report.tables import MARKERS, RATES, TEST_NAMES, cutoff_tables

FORMATS = {"latex": ".tex", "markdown": ".md", "html": ".html"}
SUFFIX_FORMATS = {".tex": "latex", ".md": "markdown", ".markdown": "markdown", ".html": "html"}
SUFFIX_FORMATS[".htm"] = "html"


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
        if test is not None and test not in P_COLUMNS:
            raise ConfigError(f"test: {test!r}: choose among {', '.join(P_COLUMNS)}")
        self.out = Path(out)
        self.plots = plots
        self.compute_compare = compute_compare
        self.test = test
        self.compare_options = dict(compare_options or {})
        self.title = title or f"mobeval report: {self.out.name or self.out.resolve().name}"
        self.log = log
        self._source = OutputFolder(self.out)
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
        city.tables = cutoff_tables(metrics)
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
            ran = [t for t, c in P_COLUMNS.items() if frame[c].is_not_null().any()]
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
        column = P_COLUMNS[city.test] + "_corrected"
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
        draw_figures(self._source, self.cities)
        self._figures_done = True

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
        return render_markdown(self, figures_dir)

    def to_html(self) -> str:
        """One self-contained HTML page (plots embedded as base64 PNG)."""
        return render_html(self)

    def to_latex(
        self,
        figures_dir: str | None = None,
        *,
        caption: str | None = None,
        label: str = "tab",
        transpose: bool | None = None,
    ) -> str:
        """A LaTeX document (pdflatex); with ``figures_dir`` the plots are included from there.
        Each table's ``\\caption`` starts with ``caption`` (then the city and the table's
        title), its ``\\label`` is ``<label>:<city>-<n>``; ``transpose`` True puts the models
        as rows, False as columns, None chooses by width (:mod:`mobeval.report.latex`)."""
        return render_latex(self, figures_dir, caption=caption, label=label, transpose=transpose)

    def _repr_html_(self) -> str:
        return render_html(self, standalone=False)

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

        named = SUFFIX_FORMATS.get(Path(path).suffix.lower())
        if format is None and named is None:
            raise ConfigError(
                f"--output: {path}: cannot tell the format from the suffix (.tex, .md, .html)"
            )
        format = format or named
        if format not in FORMATS:
            raise ConfigError(f"--format: {format!r}: choose among {', '.join(FORMATS)}")
        if named != format:
            suffixes = ", ".join(s for s, f in SUFFIX_FORMATS.items() if f == format)
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
