"""The :class:`Report` of an output folder (what each city holds, its cells, its methods
section, its file written whole) and :func:`write_reports`, the command line's and the job's
way in."""

from __future__ import annotations

import contextlib
import math
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl

from mobeval.compare.comparison import compare
from mobeval.compare.leaderboard import leaderboard
from mobeval.compare.names import P_COLUMNS, UNPAIRED_TESTS
from mobeval.compare.pairing import population_metrics, scoring_difference, unit_keys
from mobeval.compare.results import COUNT_ROWS, OutputFolder, Result, coverage, runs_fingerprint
from mobeval.compare.runs import RUNS_WORDS, over_runs
from mobeval.errors import ConfigError, InputError
from mobeval.io.outputs import read_section, section_schema
from mobeval.io.whole import write_whole
from mobeval.report.cells import Cells
from mobeval.report.city import UNIT_WORDS, City
from mobeval.report.fragment import latex_fragment
from mobeval.report.groups import group_label
from mobeval.report.html import render_html
from mobeval.report.latex import render_latex
from mobeval.report.markdown import render_markdown
from mobeval.report.methods import MethodGroup, method_group, resolved_options
from mobeval.report.options import DEFAULT_ALPHA, checked_choices
from mobeval.report.plots import check_plotting, draw_figures
from mobeval.report.tables import (
    TEST_NAMES,
    cutoff_tables,
    significance_text,
    spread_text,
)

FORMATS = {"latex": ".tex", "markdown": ".md", "html": ".html"}
SUFFIX_FORMATS = {".tex": "latex", ".md": "markdown", ".markdown": "markdown", ".html": "html"}
SUFFIX_FORMATS[".htm"] = "html"


# --------------------------------------------------------------------------------------------
# The report


class Report(Cells):
    """The report of a mobeval output folder (module docstring).

    Args:
        out: the output folder (with ``manifest.json``).
        metrics: the metrics shown, in this order (default: every metric of the results).
        models: the models shown, in this order (default: every model of the manifest).
        baseline: the model the others are compared with (default: each city's first model in
            the manifest).
        test: the test behind the significance markers (``paired-t``, ``wilcoxon``,
            ``randomization``, ``tukey``, ``ttest-ind``, ``ranksums``; default: the first one
            the comparison ran, in that order).
        alpha: the significance level: ``†`` when the corrected p-value is below it, ``‡``
            below a fifth of it.
        title: the document's title.
        caption: the tables' caption (each table's city and cutoff grid follow it).
        transpose: True: models as rows; False: metrics as rows; None: the renderer chooses by
            the table's width.
        letters: a compact letter display on every value (Tukey's HSD over every model).
        leaderboard: a ranked table per metric under each city's tables (rank, model, mean
            ± sd, letters: :func:`mobeval.compare.leaderboard.leaderboard`).
        comparisons: a table per metric of each model against the baseline (difference, its
            interval, d_z, r_rb, the p-value and the corrected one behind the marker).
        std: every mean as ``mean ± sd``, sd the summary's ``std``: the population standard
            deviation of the per-unit values, ``sqrt(sum_u (v_u - mean)^2 / n)`` (ddof 0, as
            ranx's ``evaluate(..., return_std=True)``); nothing after a value that is not a
            mean over units (a count, a micro average, a population metric) nor from a summary
            written without the column (the note says so). Default False: the mean alone.
        city: one city (default: every city).
        plots: draw the plots (needs matplotlib: ``pip install 'mobeval[report]'``).
        compute_compare: when ``OUT/compare`` holds no comparison of exactly the results shown
            (the same models, metrics, options and scored inputs), compute it with
            :func:`mobeval.compare.compare` (not written); False: no markers, and the report
            says why.
        compare_options: passed to :func:`mobeval.compare.compare` when it is computed
            (``tests``, ``resamples``, ``permutations``, ``seed``, ``correction``...); a stored
            comparison made with other values of these is not used.

    Markers come only from tests of the per-unit values the table shows: a stored comparison
    is used when every result it compared is the manifest's current one (its fingerprint,
    :func:`mobeval.compare.results.result_fingerprint`) and it ran the asked test and options;
    otherwise it is recomputed or, without ``compute_compare``, refused, and the note under the
    table says why. Models of a city scored under different options are shown as separate
    groups, never in one table or under one convention.
    """

    def __init__(
        self,
        out: str | os.PathLike,
        *,
        metrics: Sequence[str] | str | None = None,
        models: Sequence[str] | str | None = None,
        baseline: str | None = None,
        test: str | None = None,
        alpha: float | None = None,
        title: str | None = None,
        caption: str | None = None,
        transpose: bool | None = None,
        letters: bool | None = None,
        leaderboard: bool | None = None,
        comparisons: bool | None = None,
        std: bool | None = None,
        fragment: bool | None = None,
        city: str | None = None,
        plots: bool = True,
        compute_compare: bool = True,
        compare_options: dict | None = None,
    ) -> None:
        given = {"metrics": metrics, "models": models, "baseline": baseline, "test": test}
        given |= {"alpha": alpha, "title": title, "caption": caption, "transpose": transpose}
        given |= {"letters": letters, "leaderboard": leaderboard}
        given |= {"comparisons": comparisons, "std": std, "fragment": fragment}
        choices = checked_choices(given)
        self.out = Path(out)
        self.plots = plots
        self.compute_compare = compute_compare
        self.test = test
        self.alpha = float(alpha) if alpha is not None else DEFAULT_ALPHA
        self.caption = caption
        self.transpose = transpose
        self.letters = bool(letters)
        self.leaderboard = bool(leaderboard)
        self.comparisons = bool(comparisons)
        self.std = bool(std)
        self.fragment = bool(fragment)  # LaTeX: the tables alone (mobeval.report.fragment)
        self.compare_options = dict(compare_options or {})
        self.title = title or f"mobeval report: {self.out.name or self.out.resolve().name}"
        self._source = OutputFolder(self.out)
        if not self._source.cities:
            raise InputError("no complete result in the manifest: nothing to report", path=out)
        if city is not None and city not in self._source.cities:
            raise ConfigError(
                f"--city: no results for city {city!r} in {out} (cities: "
                f"{', '.join(self._source.cities)})"
            )
        names = [city] if city is not None else list(self._source.cities)
        shown = {m: r for n in names for m, r in self._source.models(n).items()}
        named = [("models", m) for m in choices.get("models", [])]
        named += [("baseline", baseline)] if baseline is not None else []
        for option, model in named:
            if model not in shown:
                raise ConfigError(
                    f"--{option}: no model {model!r} in {out} (models: {', '.join(shown)})"
                )
        self.models = choices.get("models")
        if baseline is not None and self.models is not None and baseline not in self.models:
            raise ConfigError(f"--baseline: {baseline!r} is not among --models")
        self.metrics = choices.get("metrics")
        self.cities = [group for name in names for group in self._city(name, baseline)]
        if self.metrics is not None:
            scored = {m for c in self.cities for values in c.values.values() for m in values}
            missing = [m for m in self.metrics if m not in scored]
            if missing:
                raise ConfigError(
                    f"--metrics: no metric {missing[0]!r} in the results shown (metrics: "
                    f"{', '.join(sorted(scored))})"
                )
        for city_ in self.cities:
            self._tables(city_)
            if city_.baseline is not None:
                self._comparison(city_)
            if (self.letters or self.leaderboard) and len(city_.models) > 1:
                self._letters(city_)
        self._figures_done = False

    # ---- reading --------------------------------------------------------------------------

    def _city(self, name: str, baseline: str | None) -> list[City]:
        """The city's shown models, one :class:`City` per way they were scored (task, options
        that define the metrics, truth): one when they all agree."""
        listing = self._source.models(name)  # each model's runs, or its one result
        if self.models is not None:
            listing = {m: listing[m] for m in self.models if m in listing}
        groups: list[list[Result]] = []  # each model by its first result
        for result in (runs[0] for runs in listing.values()):
            for group in groups:
                if scoring_difference(group[0], result) is None:
                    group.append(result)
                    break
            else:
                groups.append([result])
        cities = [
            self._group(name, {r.stored_as: listing[r.stored_as] for r in g}, baseline, label)
            for g in groups
            for label in [group_label(g, groups)]
        ]
        for city, group in zip(cities, groups, strict=True):
            apart = [
                scoring_difference(group[0], other[0]) for other in groups if other is not group
            ]
            if apart:
                apart_text = "not compared with the city's other models: " + "; ".join(apart)
                city.note = _joined(apart_text, city.note)
        return cities

    def _group(
        self, name: str, listing: dict[str, list[Result]], baseline: str | None, label: str
    ) -> City:
        """One :class:`City` of ``listing``'s models (each with its runs, or its one result): a
        model with runs shows the mean over runs of each metric's run means, and their sd."""
        models, results = list(listing), [runs[0] for runs in listing.values()]
        values, units, metrics, population = {}, {}, [], set()
        stds, without_std = {}, []
        runs, sd_over_runs, cohorts = {}, {}, {}
        for model, result in zip(models, results, strict=True):
            summary = self._source.summary(result)
            if listing[model][0].run is not None:  # several runs: their means and sd
                spread = over_runs([self._source.summary(r) for r in listing[model]])
                runs[model] = len(listing[model])
                sd_over_runs[model] = {m: sd for m, (_, sd) in spread.items()}
                means = pl.DataFrame(
                    {"metric": list(spread), "mean": [v for v, _ in spread.values()]}
                )  # the counts stay the first run's
                summary = summary.join(means, on="metric", how="left").with_columns(
                    value=pl.coalesce("mean", "value")
                )
            elif self.std and "std" in summary.columns:  # a model with runs shows its sd over runs
                shown = summary.filter(pl.col("std").is_not_null())
                stds[model] = dict(shown.select("metric", "std").iter_rows())
            elif self.std:
                without_std.append(model)
            with contextlib.suppress(InputError):  # no per-unit outputs: compare says so
                schema = section_schema(self._source.section_files(result, "per_unit"))
                population.update(population_metrics(summary, schema))
            for run in listing[model]:  # a model with runs: a column per run, model/run
                column = model if run.run is None else f"{model}/{run.run}"
                if "cohorts" in run.entry["outputs"]:
                    for cohort, metric, value in read_section(
                        self._source.section_files(run, "cohorts"), ["cohort", "metric", "value"]
                    ).iter_rows():
                        cohorts.setdefault(cohort, {}).setdefault(column, {})[metric] = value
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
        if self.metrics is not None:
            metrics = [m for m in self.metrics if m in metrics]
        first = results[0]
        recorded = first.entry.get("resolved")
        options = recorded if isinstance(recorded, dict) else _resolved(first.task, first.config)
        chosen = baseline if baseline in models else models[0]
        return City(
            name=name,
            task=first.task,
            models=models,
            baseline=chosen if len(models) > 1 else None,
            values=values,
            units={m: units.get(m, 0) for m in models},
            metrics=metrics,
            options=options,
            percent=bool(first.task == "logits" and options.get("percent")),
            alpha=self.alpha,
            group=label,
            population=[m for m in metrics if m in population],
            stds=stds,
            note=(
                f"no sd for {', '.join(without_std)}: a summary without a std column (written "
                "by an older mobeval; score again for one)"
                if without_std
                else ""
            ),
            runs=runs,
            sd_over_runs=sd_over_runs,
            cohorts=dict(sorted(cohorts.items())),
        )

    def _tables(self, city: City) -> None:
        city.tables = cutoff_tables(city.metrics)
        where = f"city={city.name}" + (f" ({city.group})" if city.group else "")
        for index, table in enumerate(city.tables):
            table.caption = (
                f"{self.caption} {where}: {table.title}."
                if self.caption
                else (f"{where}: {table.title}.")
            )
            table.label = "tab:" + _slug(f"{city.name}-{city.group}-{index + 1}")
            table.transpose = self.transpose

    def _comparison(self, city: City) -> None:
        """The comparison behind the city's markers: the stored one when it tested exactly the
        results shown, else one computed for the report (or none, with the reason)."""
        results = [self._source.models(city.name)[m][0] for m in city.models]
        frame, stale = self._stored(city, results)
        if frame is not None:
            city.comparison_source = f"OUT/compare/city={city.name} (mobeval compare)"
            city.note = _joined(city.note, stale)
        elif self.compute_compare:
            options = {"tests": [self.test or "paired-t"], **self.compare_options}
            try:
                frame = compare(
                    self.out,
                    city=city.name,
                    baseline=city.baseline,
                    models=city.models,
                    log=None,
                    **options,
                )
            except (ConfigError, InputError) as error:
                city.note = _joined(city.note, stale, f"no significance markers: {error}")
                return
            city.comparison_source = "computed for this report, not written"
            city.note = _joined(city.note, stale)
        else:
            run = f"`mobeval compare {self.out} --city {city.name} --baseline {city.baseline}`"
            city.note = _joined(city.note, stale, f"no significance markers: run {run} first")
            return
        ran = [t for t, c in P_COLUMNS.items() if frame[c].is_not_null().any()]
        city.test = self.test or ran[0]
        city.comparison = frame.filter(
            (pl.col("baseline") == city.baseline)
            & pl.col("model").is_in(city.models)
            & pl.col("metric").is_in(city.metrics)
        )
        city.significance = significance_text(city, frame)

    def _letters(self, city: City) -> None:
        """The city's leaderboard and compact letter display
        (:func:`mobeval.compare.leaderboard.leaderboard`) from Tukey's HSD over every model
        shown (computed, not written), or a note saying why there is none; the letters go on
        the values with ``letters``, in the leaderboard's tables with ``leaderboard``."""
        options = {k: v for k, v in self.compare_options.items() if k in ("intersect", "unit")}
        try:
            frame = compare(
                self.out,
                city=city.name,
                models=city.models,
                pairs="all",
                tests=["tukey"],
                resamples=0,
                log=None,
                **options,
            )
        except (ConfigError, InputError) as error:
            city.note = _joined(city.note, f"no letters: {error}")
            return
        board = leaderboard(frame.filter(pl.col("metric").is_in(city.metrics)), alpha=city.alpha)
        if self.letters:
            shown = board.select("model", "metric", "letters").rows()
            city.letters = {(model, metric): letters for model, metric, letters in shown}
        if self.leaderboard:
            city.leaderboard = board
        n = frame["n_tukey"][0]
        city.letters_text = (
            f"letters: models sharing a letter are not significantly different at p < "
            f"{city.alpha:g} (Tukey's HSD over the {len(city.models)} models on {n:,} "
            f"{UNIT_WORDS.get(city.task, 'units')}, one-way design as scipy.stats.tukey_hsd)"
        )

    def _stored(self, city: City, results: list[Result]) -> tuple[pl.DataFrame | None, str]:
        """``OUT/compare``'s comparison of the city when it holds exactly the results shown
        (every result it compared still the manifest's current one, each shown model against
        the baseline, the asked test and options) and a note (:func:`coverage`), else None, why."""
        path = self.out / "compare" / f"city={city.name}" / "part-0.parquet"
        if not path.is_file():
            return None, ""
        stored = read_section([path])
        why = f"OUT/compare/city={city.name} was not used: "
        if "model_fingerprint" not in stored.columns:
            return None, why + (
                "it was written by an older mobeval, without the fingerprints of the results it "
                "compared"
            )
        current = {m: runs_fingerprint(r) for m, r in self._source.models(city.name).items()}
        for model_column, print_column in (
            ("baseline", "baseline_fingerprint"),
            ("model", "model_fingerprint"),
        ):
            for model, fingerprint in stored.select(model_column, print_column).unique().rows():
                if current.get(model) != fingerprint:
                    change = "is gone" if model not in current else "was scored again since"
                    return None, why + f"{model} {change}"
        lacking, partial = coverage(stored, city)
        if lacking is not None:
            return None, why + lacking
        if self.test is not None and not stored[P_COLUMNS[self.test]].is_not_null().any():
            return None, why + f"it did not run {self.test}"
        unit = unit_keys(results[0], self.compare_options.get("unit", "default"))[2]
        asked = {**{k: v for k, v in self.compare_options.items() if k != "unit"}, "unit": unit}
        for name, value in asked.items():
            if name == "tests":
                tests = [value] if isinstance(value, str) else list(value)
                ran = [t for t, c in P_COLUMNS.items() if stored[c].is_not_null().any()]
                if sorted(tests) != sorted(ran):
                    return None, why + f"it ran {', '.join(ran)}, not {', '.join(tests)}"
            elif name in stored.columns and stored[name][0] != value:
                return None, why + f"it was made with {name} = {stored[name][0]}, not {value}"
        return stored, partial

    # ---- figures --------------------------------------------------------------------------

    def figures(self) -> None:
        """Draw every city's plots once (matplotlib; ReportExtraMissing without it)."""
        if self._figures_done or not self.plots:
            return
        draw_figures(self._source, self.cities)
        self._figures_done = True

    # ---- methods --------------------------------------------------------------------------

    def method_groups(self) -> list[MethodGroup]:
        """One :class:`~mobeval.report.methods.MethodGroup` per distinct way of scoring (the
        cities, or groups of a city's models, scored by one task under the same options)."""
        groups: list[tuple[list[str], str, dict, list[str], list[City]]] = []
        for city in self.cities:
            name = city.name + (f" ({', '.join(city.models)})" if city.group else "")
            for cities, task, options, metrics, members in groups:
                if task == city.task and options == city.options:
                    cities.append(name)
                    metrics += [m for m in city.metrics if m not in metrics]
                    members.append(city)
                    break
            else:
                groups.append(([name], city.task, city.options, list(city.metrics), [city]))
        made = []
        for cities, task, options, metrics, members in groups:
            group = method_group(cities, task, options, metrics)
            spread = next((spread_text(c) for c in members if spread_text(c)), "")
            if spread:  # report --std: what the sd after each mean is, stated once
                group.shared.append(("± sd", spread))
            made.append(group)
        return made

    def comparison_text(self) -> list[str]:
        """How the runs of models with runs were aggregated (:meth:`runs_text`), then one
        sentence per city on the comparison behind its markers, or why it has none."""
        lines = self.runs_text()
        for city in self.cities:
            where = f"city={city.name}" + (f" ({city.group})" if city.group else "")
            if city.comparison is None or city.comparison.height == 0:
                if city.note:
                    lines.append(f"{where}: {city.note}.")
                continue
            row = city.comparison.row(0, named=True)
            ci = (
                f"{row['confidence']:.0%} bootstrap percentile interval of the difference from "
                f"{row['resamples']:,} resamples (seed {row['seed']})"
            )
            runs = f", {RUNS_WORDS[row['runs']]}" if row["runs"] else ""
            pairing = (
                "tested unpaired on the units both share, by"
                if (city.test in UNPAIRED_TESTS)
                else "paired by"
            )
            lines.append(
                f"{where}: {city.test} ({TEST_NAMES[city.test]}) against {city.baseline}, "
                f"{pairing} {row['unit']} (n = {row['n']:,}{runs}); {city.significance}; {ci}; "
                f"source: {city.comparison_source}" + (f"; {city.note}" if city.note else "") + "."
            )
        return lines

    def runs_text(self) -> list[str]:
        """One sentence per city whose models have runs: how the runs were aggregated."""
        lines = []
        for city in self.cities:
            if city.runs:
                where = f"city={city.name}" + (f" ({city.group})" if city.group else "")
                counts = ", ".join(f"{model} {count}" for model, count in city.runs.items())
                lines.append(
                    f"{where}: runs ({counts}): each value of a model with runs is the mean over "
                    "its runs of the run means ± their standard deviation over runs (ddof = 1); "
                    "its plots show its first run."
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
        as rows, False as columns, None chooses by width (:mod:`mobeval.report.latex`).
        ``caption`` and ``transpose`` left out are the report's own (``Report(caption=,
        transpose=)``, ``--caption``, ``--transpose``)."""
        caption = self.caption if caption is None else caption
        transpose = self.transpose if transpose is None else transpose
        if self.fragment:
            return latex_fragment(self, caption=caption, label=label, transpose=transpose)
        return render_latex(self, figures_dir, caption=caption, label=label, transpose=transpose)

    def _repr_html_(self) -> str:
        return render_html(self, standalone=False)

    def save(self, path: str | os.PathLike, format: str | None = None) -> Path:
        """Write the report to ``path`` (format from ``format`` or the suffix: .tex, .md, .html,
        which must match ``format`` when both are given); Markdown and LaTeX get their plots in
        ``<stem>_files/`` beside. ``path`` may lie anywhere but over or under what OUT owns
        (its manifest, lock, staging area and results) and never through a link that leaves
        OUT (:func:`mobeval.io.writers.report_destination`). Written whole or not at all: staged
        in a temporary folder (:class:`mobeval.io.scratch.ScratchFolder`: removed on every way
        out, or by the next report after a kill), then moved into place (under OUT's lock when
        inside OUT); the folders made for it are removed again if it fails."""
        from mobeval.io.scratch import ScratchFolder
        from mobeval.io.writers import (
            STAGING,
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
                write_whole(staged / path.name, text.encode("utf-8"))
                if format != "html" and self.plots and any(c.figures for c in self.cities):
                    folder = staged / files_name
                    folder.mkdir()
                    for city in self.cities:
                        for figure in city.figures:
                            write_whole(folder / figure.name, figure.png)
                    final = path.parent / files_name
                    if final.exists() or final.is_symlink():
                        os.replace(final, staged / "replaced")
                    os.replace(folder, final)
                os.replace(staged / path.name, path)
        return path


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()


def _joined(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


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
    log: Callable[[str], None] | None = None,
    **options,
) -> list[Path]:
    """Write the report in each format: ``output`` (one format) or ``OUT/report/report.<ext>``;
    then each city's note (why it has no markers, or why a stored comparison was not used) goes
    to ``log``."""
    formats = parse_formats(formats)
    if output is not None and len(formats) > 1:
        raise ConfigError("--output: names one file; give one --format with it")
    if options.get("fragment") and formats != ["latex"]:
        raise ConfigError("--fragment: the LaTeX tables alone; give --format latex (only)")
    if options.get("fragment"):
        options["plots"] = False  # a fragment holds no figure
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
    if log is not None:
        for city in report.cities:
            if city.note:
                log(f"note: city={city.name}: {city.note}")
    return written
