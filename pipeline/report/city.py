"""What a report shows of one city, as data: its models' values, its tables, its comparison
and its figures (filled by :class:`mobeval.report.Report`, drawn by the format modules)."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

#: What a task's units are called in a report.
UNIT_WORDS = {"nextloc": "samples", "trajectory": "uids", "recs": "users", "logits": "rows"}


@dataclass
class Figure:
    name: str  # file name, e.g. tky-curves.png
    caption: str
    png: bytes


@dataclass
class Table:
    """One table of a city, as the renderers take it: its ``title`` (the cutoff grid), the
    ``metrics`` it shows (rows, or columns when transposed), its ``caption`` (the user's
    ``caption`` then the city and the title) and a ``label`` unique in the report (``tab:...``),
    and ``transpose``: True models as rows, False metrics as rows, None the renderer chooses by
    the table's width."""

    title: str
    metrics: list[str]
    caption: str = ""
    label: str = ""
    transpose: bool | None = None


@dataclass
class City:
    """One city of a report, or one group of its models when they were scored under different
    options (``group`` says which options; each group has its own tables, baseline, tests and
    methods, and nothing is compared across groups). ``comparison`` holds the rows behind the
    markers (every metric tested against the baseline), ``significance`` the sentence saying
    how they were made (test, alpha, correction and the family of p-values it was applied over,
    the metrics tested) and ``note`` why there are none, or why a stored comparison was not
    used. ``letters`` holds the compact letter display of each value (``report --letters``),
    ``letters_text`` the sentence saying how it was made (under the values, or under the
    leaderboard of ``report --leaderboard``)."""

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
    alpha: float = 0.05
    group: str = ""
    significance: str = ""
    letters: dict[tuple[str, str], str] = field(default_factory=dict)  # (model, metric) -> "ab"
    letters_text: str = ""
    #: :func:`mobeval.compare.leaderboard.leaderboard`'s rows of the city's metrics (``report
    #: --letters`` or ``--leaderboard``), None when not asked or not made (the note says why)
    leaderboard: pl.DataFrame | None = None
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    #: the population metrics among ``metrics`` (no per-unit values: never tested, no marker)
    population: list[str] = field(default_factory=list)
    #: model -> metric -> the summary's ``std`` (``report --std``; a metric whose value is not a
    #: mean over units, or a summary without the column, has none)
    stds: dict[str, dict[str, float]] = field(default_factory=dict)
    #: the models with several runs (seeds, folds): model -> their number (``values`` hold the
    #: mean over runs of the run means) and model -> metric -> the sd over runs of the run means
    runs: dict[str, int] = field(default_factory=dict)
    sd_over_runs: dict[str, dict[str, float]] = field(default_factory=dict)
    #: cohort -> column -> metric -> value: each cohort's summary (results scored with
    #: ``--cohorts``: their ``cohorts`` section), counts included; a column per model, or per
    #: run (``model/run``) of a model with runs
    cohorts: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
