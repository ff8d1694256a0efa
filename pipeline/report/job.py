"""The ``[report]`` table of a job file: a run that ends with its comparison and its report.

::

    [report]
    formats = ["html", "latex"]      # latex, markdown, html (default ["html"])
    baseline = "markov"              # default: each city's first model
    plots = true                     # false: tables and methods only (no matplotlib needed)
    tests = ["paired-t", "randomization"]   # passed to compare, as resamples, permutations,
    resamples = 1000                 # seed, correction, confidence, intersect, unit, runs
    test = "randomization"           # the test behind the significance markers

Checked whole when the job is loaded (:func:`check_report_table`, called by
:func:`mobeval.jobs.load_job`), like every other job value: each key's type, each value one at a
time through the same checks as ``mobeval compare`` / ``mobeval report``, the baseline against the
job's models, and matplotlib present when plots are asked for. After the last model,
:func:`run_report` compares every city of the job with two models or more (``OUT/compare``) and
writes ``OUT/report/report.<ext>``, under OUT's lock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mobeval.compare.comparison import checked_options, compare
from mobeval.compare.pairing import unit_refused
from mobeval.errors import ConfigError, InputError
from mobeval.io.writers import output_lock
from mobeval.job_values import VALUE_KINDS, shown
from mobeval.report.document import parse_formats, write_reports
from mobeval.report.options import REPORT_OPTIONS, checked_choices
from mobeval.report.plots import check_plotting

#: key -> kind (a key of mobeval.job_values.VALUE_KINDS): the report's choices (the same names
#: as mobeval report's flags and Report's keywords), then the job's own keys.
REPORT_KINDS = {option.name: option.kind for option in REPORT_OPTIONS}
REPORT_KINDS |= {
    "formats": "strings",
    "plots": "boolean",
    "tests": "strings",
    "resamples": "integer",
    "permutations": "integer",
    "seed": "integer",
    "correction": "string",
    "family": "string",
    "confidence": "number",
    "intersect": "boolean",
    "unit": "string",
    "runs": "string",
}
_COMPARE_KEYS = ("tests", "resamples", "permutations", "seed", "correction", "family")
_COMPARE_KEYS += ("confidence",)
_COMPARE_KEYS += ("intersect", "unit", "runs")
_COMPARE_DEFAULTS = {
    "tests": ["paired-t", "wilcoxon", "randomization"],
    "correction": "holm",
    "family": "all",
    "confidence": 0.95,
    "resamples": 1000,
    "permutations": 10000,
    "seed": 0,
    "unit": "default",
    "runs": "mean",
}


@dataclass(frozen=True)
class ReportSpec:
    """A job's ``[report]``: its formats, plots, the report's choices (``choices``: the keys of
    :data:`~mobeval.report.options.REPORT_OPTIONS` given) and the comparison's options."""

    formats: tuple[str, ...] = ("html",)
    plots: bool = True
    choices: dict = field(default_factory=dict)
    compare: dict = field(default_factory=dict)

    @property
    def baseline(self) -> str | None:
        return self.choices.get("baseline")


def check_report_table(path: Path, table: object, tasks) -> ReportSpec:
    """The job's ``[report]`` table checked; ConfigError naming ``report.<key>``."""

    where = f"{path}: report"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table ([report]), got {shown(table)}")
    unknown = sorted(set(table) - set(REPORT_KINDS))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}; allowed: {sorted(REPORT_KINDS)}")
    for name, value in table.items():
        words, check = VALUE_KINDS[REPORT_KINDS[name]]
        if not check(value):
            raise ConfigError(f"{where}.{name}: expected {words}, got {shown(value)}")
    try:
        formats = tuple(parse_formats(table.get("formats", ["html"])))
    except ConfigError as error:
        raise ConfigError(f"{where}.formats: {str(error).partition(': ')[2]}") from None
    for name in _COMPARE_KEYS:
        if name in table:  # one option at a time, so the message names it
            options = {**_COMPARE_DEFAULTS, name: table[name]}
            try:
                checked_options(
                    options["tests"],
                    options["correction"],
                    options["confidence"],
                    options["resamples"],
                    options["permutations"],
                    options["seed"],
                    options["unit"],
                    options["family"],
                    options["runs"],
                )
            except ConfigError as error:
                raise ConfigError(f"{where}.{name}: {str(error).partition(': ')[2]}") from None
    for option in REPORT_OPTIONS:
        try:
            checked_choices({option.name: table.get(option.name)})
        except ConfigError as error:
            raise ConfigError(f"{where}.{option.name}: {str(error).partition(': ')[2]}") from None
    choices = {o.name: table[o.name] for o in REPORT_OPTIONS if o.name in table}
    test = table.get("test")
    if test is not None and test not in table.get("tests", _COMPARE_DEFAULTS["tests"]):
        raise ConfigError(f"{where}.test: {test!r} is not among report.tests")
    cities: dict[str, set[str]] = {}
    for task in tasks:
        cities.setdefault(task.city, set()).update(task.models)
    unit = table.get("unit", "default")
    for index, task in enumerate(tasks):  # the tasks of the cities that will be compared
        refused = unit_refused(task.type, unit) if len(cities[task.city]) > 1 else None
        if refused is not None:
            raise ConfigError(
                f"{where}.unit: {unit!r}: tasks[{index}] (city {task.city!r}) is a {task.type} "
                f"task; {refused}"
            )
    for model in table.get("models", []):
        if not any(model in models for models in cities.values()):
            raise ConfigError(f"{where}.models: no model {model!r} in the job's tasks")
    baseline = table.get("baseline")
    if baseline is not None:
        if not any(baseline in models for models in cities.values()):
            raise ConfigError(f"{where}.baseline: no model {baseline!r} in the job's tasks")
        for city, models in cities.items():
            if len(models) > 1 and baseline not in models:
                raise ConfigError(
                    f"{where}.baseline: city {city!r} has no model {baseline!r} "
                    f"(models: {', '.join(sorted(models))})"
                )
    plots = table.get("plots", True)
    if plots:
        try:
            check_plotting()
        except ConfigError as error:
            raise ConfigError(f"{where}.plots: {error}") from None
    compare = {name: table[name] for name in _COMPARE_KEYS if name in table}
    return ReportSpec(formats, plots, choices, compare)


def run_report(job, *, log=print) -> list[Path]:
    """Compare every city of the job with two models or more (written to ``OUT/compare``; a
    city whose comparison is refused gets a note, and its report says why), then write the
    report in each format under ``OUT/report/``. Holds OUT's lock."""
    spec: ReportSpec = job.report
    out = Path(job.out)
    cities: dict[str, set[str]] = {}
    for task in job.tasks:
        cities.setdefault(task.city, set()).update(task.models)
    with output_lock(out):
        for city, models in cities.items():
            if len(models) < 2:
                continue
            try:
                compare(
                    out,
                    city=city,
                    baseline=spec.baseline,
                    models=spec.choices.get("models"),
                    write=True,
                    log=None,
                    **spec.compare,
                )
            except (ConfigError, InputError) as error:
                log(f"note: city={city}: no comparison: {error}")
        written = write_reports(
            out,
            list(spec.formats),
            plots=spec.plots,
            compare_options=spec.compare,
            log=log,
            **spec.choices,
        )
    for path in written:
        log(f"report: {path}")
    return written
