"""A model's runs (seeds, folds: ``city=<c>/model=<m>/run=<r>``) taken together, as users report
them: ``compare(runs="mean")``. Each such model becomes one :class:`~mobeval.compare.pairing.Side`
whose per-unit table is written to a scratch folder, so the pairing and the tests are those of
any two models. Two ways, one per city:

* :data:`UNIT_MEANS`, when each model's runs were scored on the same units (seeds): a unit's
  value is its mean over the model's R runs, ``x_u = (x_u,1 + ... + x_u,R) / R`` (added in the
  order of the runs' names; NaN when a run has none), and the tests pair these per-unit means;
* :data:`RUNS_AS_UNITS`, when the units differ between runs (folds): a run's value is its city
  value (its summary's mean over its units), and the tests pair the runs by name, the runs
  being the units (ClayRS's and RecBole's tests over folds and seeds).

Beside each metric's mean: the standard deviation over runs of the run means,
``sd = sqrt(sum_r (m_r - mean(m))^2 / (R - 1))`` (the sample sd, ``statistics.stdev``; NaN for
one run). Memory: one model's units x metrics.

:func:`fold_rows` is the table ClayRS's ``MetricEvaluator.eval_metrics`` returns for a system
evaluated over folds: one row per run (``sys - fold<i>``: the run's city value) and a ``mean``
row (``sys - mean``), ``mean = sum_{r: m_r not NaN} m_r / #{r: m_r not NaN}``, the runs whose
value is NaN left out (pandas' ``DataFrame.mean()``, ``skipna=True``); NaN when every run is.
"""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import polars as pl

from mobeval.compare.pairing import Side, check_key_columns, load_side, read_column, unit_keys
from mobeval.compare.results import COUNT_ROWS, OutputFolder, Result
from mobeval.errors import ConfigError, InputError
from mobeval.io.outputs import read_section, section_schema
from mobeval.io.writers import result_name, write_parquet

#: What the tests of a city whose models have runs pair (compare's ``runs`` column).
UNIT_MEANS = "unit means over runs"
RUNS_AS_UNITS = "runs as units"
#: ``compare(runs=...)``: ``mean`` (a model's runs together) or ``separate`` (each run a model of
#: its own, shown as ``model/run``).
RUNS = ("mean", "separate")
#: The methods' words for what the tests of a city with runs paired.
RUNS_WORDS = {
    UNIT_MEANS: "each unit's mean across a model's runs",
    RUNS_AS_UNITS: "the runs as units, each run's mean paired by run name",
}


def same_units(source: OutputFolder, models: dict[str, list[Result]], unit: str) -> bool:
    """Whether each model's runs were scored on the same units (the same set of unit keys)."""
    for results in models.values():
        if len(results) < 2:
            continue
        section, keys, _ = unit_keys(results[0], unit)
        first = None
        for result in results:
            frame = read_section(source.section_files(result, section), keys).sort(keys)
            if first is None:
                first = frame
            elif not frame.equals(first):
                return False
    return True


def check_key_types(source: OutputFolder, models: dict[str, list[Result]], unit: str) -> None:
    """Refuse a city whose results' unit keys differ in type (a run's ``sample_id`` a string
    where the first result's is an integer): their units cannot be told equal or not, and the
    design (:func:`runs_mode`) must never switch on a type. An InputError naming the result's
    folder, the column, both types and its first key."""
    reference = None
    for result in (result for results in models.values() for result in results):
        section, keys, _ = unit_keys(result, unit)
        files = source.section_files(result, section)
        schema = section_schema(files)
        check_key_columns(files, schema, keys)
        types = {key: schema[key] for key in keys}
        if reference is None:
            reference = (result, types)
            continue
        first, first_types = reference
        for key in keys:
            if types[key] != first_types.get(key):
                raise InputError(
                    f"unit keys of type {types[key]} where {first.name} has "
                    f"{first_types.get(key)}: the units cannot be paired (score them again "
                    "with keys of one type)",
                    path=files[0].parent,
                    column=key,
                    key=next(iter(read_section(files[:1], [key])[key].head(1)), None),
                )


def runs_mode(source: OutputFolder, models: dict[str, list[Result]], unit: str) -> str | None:
    """:data:`UNIT_MEANS` or :data:`RUNS_AS_UNITS` for a city's models, None when none has runs;
    the results' unit keys of one type first (:func:`check_key_types`)."""
    if all(len(results) == 1 and results[0].run is None for results in models.values()):
        return None
    check_key_types(source, models, unit)
    return UNIT_MEANS if same_units(source, models, unit) else RUNS_AS_UNITS


def over_runs(summaries: list[pl.DataFrame]) -> dict[str, tuple[float, float]]:
    """Per metric (not a count) of every run: the mean and the sd over runs of the run means."""
    values: dict[str, list[float]] = {}
    for summary in summaries:
        for metric, value in summary.select("metric", "value").iter_rows():
            if metric not in COUNT_ROWS:
                values.setdefault(metric, []).append(math.nan if value is None else value)
    return {
        metric: (statistics.fmean(v), statistics.stdev(v) if len(v) > 1 else math.nan)
        for metric, v in values.items()
        if len(v) == len(summaries)
    }


#: The ``run`` of :func:`fold_rows`' mean row of a model (ClayRS's ``sys - mean``).
MEAN_ROW = "mean"


def fold_rows(
    out: str | os.PathLike,
    *,
    city: str | None = None,
    models: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
) -> pl.DataFrame:
    """Per city and model, each run's city value of every metric (one row per run, in the order
    of the runs' names; ``run`` null for a model's one result) and the ``mean`` row over its runs,
    NaN runs left out (module docstring): ClayRS's per-fold and mean system rows. Columns:
    ``city``, ``model``, ``run``, then the metrics (not the counts) in the summaries' order."""
    source = OutputFolder(out)
    if city is not None and city not in source.cities:
        raise ConfigError(
            f"--city: no results for city {city!r} in {out} (cities: {', '.join(source.cities)})"
        )
    frames = []
    for name in [city] if city is not None else list(source.cities):
        for model, results in source.models(name).items():
            if models is not None and model not in models:
                continue
            results = sorted(results, key=lambda result: result.run or "")
            summaries = [source.summary(result) for result in results]
            names = [m for m in summaries[0]["metric"] if m not in COUNT_ROWS]
            if metrics is not None:
                missing = [m for m in metrics if m not in names]
                if missing:
                    raise ConfigError(
                        f"city={name}: model {model} has no metric {missing[0]!r} (metrics: "
                        f"{', '.join(names)})"
                    )
                names = list(metrics)
            values = {m: [_value(summary, m) for summary in summaries] for m in names}
            means = {m: _mean_of_numbers(v) for m, v in values.items()}
            frames.append(
                pl.DataFrame(
                    {"city": name, "model": model}
                    | {"run": [result.run for result in results] + [MEAN_ROW]}
                    | {m: v + [means[m]] for m, v in values.items()},
                    schema={"city": pl.String, "model": pl.String, "run": pl.String}
                    | dict.fromkeys(names, pl.Float64),
                )
            )
    if not frames:
        raise ConfigError(f"--models: no model {models[0]!r} in {out}")
    return pl.concat(frames, how="diagonal")


def _mean_of_numbers(values: list[float]) -> float:
    """The mean of the values that are not NaN (NaN when none is)."""
    numbers = [v for v in values if not math.isnan(v)]
    return statistics.fmean(numbers) if numbers else math.nan


def runs_side(
    source: OutputFolder,
    results: list[Result],
    unit: str,
    mode: str,
    scratch: Path,
    log: Callable[[str], None] | None,
) -> tuple[Side, dict[str, str]]:
    """The side of a model with runs (``results``, in any order), and the metrics it cannot pair
    with the reason (module docstring)."""
    results = sorted(results, key=lambda result: result.run)
    first = results[0]
    model = first.stored_as
    if mode == RUNS_AS_UNITS and first.run is None:
        raise ConfigError(
            f"city={first.city}: the runs of other models were scored on different units "
            f"(folds), so the runs are the units paired, and {model} has no runs; score each "
            "fold of every model, or compare with --runs separate"
        )
    group = Result(
        first.city, model, first.task, first.config, first.entry, first.options,
        result_name(first.city, model), None, model,
    )  # fmt: skip
    summaries = [source.summary(result) for result in results]
    spread = over_runs(summaries)
    summary = pl.DataFrame(
        {"metric": list(spread), "value": [mean for mean, _ in spread.values()]},
        schema={"metric": pl.String, "value": pl.Float64},
    )
    sd = {metric: deviation for metric, (_, deviation) in spread.items()}
    path = scratch / f"city={first.city}" / f"{model}.parquet"  # a folder per city: same names
    path.parent.mkdir(exist_ok=True)
    if mode == UNIT_MEANS:
        sides, unpaired = [], {}
        for result in results:
            side, left_out = load_side(source, result, unit, log)
            sides.append(side)
            for metric, reason in left_out.items():
                unpaired.setdefault(metric, reason)
        columns = [m for m in sides[0].columns if all(m in side.columns for side in sides)]
        keys, first_keys = sides[0].keys, sides[0].read_keys()
        order = first_keys.select(keys).sort(keys)
        rows = [
            order.join(
                first_keys if i == 0 else side.read_keys(),
                on=keys,
                how="left",
                maintain_order="left",
                nulls_equal=True,
            )["__row"].to_numpy()
            for i, side in enumerate(sides)
        ]  # each run's row of each unit, the units in key order
        table = order.with_columns(
            pl.Series(metric, _unit_means(sides, rows, metric)) for metric in columns
        )
        scale = {metric: sides[0].scale[metric] for metric in columns}
    else:
        keys, columns, unpaired = ["run"], list(spread), {}
        table = pl.DataFrame(
            {"run": [result.run for result in results]}
            | {metric: [_value(summary, metric) for summary in summaries] for metric in columns}
        )
        scale = dict.fromkeys(columns, 1.0)  # the summaries' values, already in percent
    write_parquet(table, path)
    side = Side(group, [path], keys, scale, columns, summary, len(results), sd)
    return side, unpaired


def _unit_means(sides: list[Side], rows: list[np.ndarray], metric: str) -> np.ndarray:
    """Each unit's mean of ``metric`` over the runs (``sides``, each unit at ``rows`` in each),
    summed in the runs' order."""
    total = np.zeros(rows[0].size)
    for side, at in zip(sides, rows, strict=True):
        total += read_column(side.files, metric)[at]
    return total / len(sides)


def _value(summary: pl.DataFrame, metric: str) -> float:
    value = summary.filter(pl.col("metric") == metric)["value"].item()
    return math.nan if value is None else value
