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
