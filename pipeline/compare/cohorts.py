"""The comparison within each cohort (``compare(..., cohorts=True)``, ``mobeval compare
--cohorts``): results scored with a cohort table (:mod:`mobeval.tasks.cohorts`) carry each
unit's ``cohort`` in their per-unit rows and each cohort's summary in their ``cohorts`` section;
the models are compared on the units of one cohort at a time, every test and interval the
whole comparison's, and the p-values corrected within each cohort's comparison (its own
family, as a city's are).

Each cohort is read as an OUT of its own (:func:`cohort_views`): in a scratch folder, the
manifest's results that have units in the cohort, their per-unit rows of the cohort and its
summary rows, written by Polars' streaming engine (memory: a batch, not a section), so that the
comparison is the same code as the whole result's.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from mobeval.compare.results import OutputFolder
from mobeval.errors import ConfigError

COHORT = "cohort"  # mobeval.tasks.cohorts.COHORT: the column (tasks/ is not imported here)
_SECTIONS = ("per_unit", "summary")


def cohort_views(source: OutputFolder, cities: list[str], scratch: Path) -> dict[str, Path]:
    """Cohort -> a folder under ``scratch`` that reads as an OUT holding, of ``cities``'
    results, the per-unit rows and the summary of that cohort (ascending cohorts). A result
    scored without cohorts is a ConfigError naming it."""
    document = json.loads(source.manifest.read_text())
    views: dict[str, Path] = {}
    kept: dict[str, set[str]] = {}
    for city in cities:
        for result in source.cities[city].values():
            if "cohorts" not in result.entry["outputs"]:
                raise ConfigError(
                    f"city={city}: {result.model} was scored without cohorts: score it with "
                    "--cohorts to compare it within cohorts"
                )
            per_unit = pl.scan_parquet(source.section_files(result, "per_unit"))
            summaries = pl.scan_parquet(source.section_files(result, "cohorts"))
            names = summaries.select(COHORT).unique().collect()[COHORT].sort().to_list()
            for name in names:
                view = views.setdefault(name, scratch / f"cohort-{len(views)}")
                kept.setdefault(name, set()).add(result.name)
                for section, rows in zip(_SECTIONS, (per_unit, summaries), strict=True):
                    folder = view / section / result.name
                    folder.mkdir(parents=True, exist_ok=True)
                    chosen = rows.filter(pl.col(COHORT) == name).drop(COHORT)
                    chosen.sink_parquet(folder / "part-0.parquet")
    for name, view in views.items():
        results = {k: v for k, v in document["results"].items() if k in kept[name]}
        (view / "manifest.json").write_text(json.dumps(document | {"results": results}))
    return dict(sorted(views.items()))
