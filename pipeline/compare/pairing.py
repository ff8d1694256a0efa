"""The units two models are paired on: each result's unit keys, one model's side of a city
(its files, keys and the metrics that can be paired), the results refused for being scored
differently, and the row positions of the common units of two sides."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from mobeval.compare.results import COUNT_ROWS, OutputFolder, Result, truth_fingerprint
from mobeval.errors import ConfigError, InputError
from mobeval.io.outputs import read_section, section_schema

UNITS = ("default", "uid", "day")
#: Why a summary row with no per-unit column is not paired: it is a population metric, one value
#: of the whole population (a divergence of histograms, a coverage, an F1 over all rows).
POPULATION = "a population metric: one value over all units, no per-unit values"
#: The units other than its default one that a task's results can be paired on (``unit``), and
#: why the others' cannot.
OTHER_UNITS = {"trajectory": ("uid", "day")}
UNIT_REFUSED = {
    "day": "only trajectory results have per-day values",
    "uid": "its units are paired by default (leave the unit out)",
}


def unit_refused(task: str, unit: str) -> str | None:
    """Why results of ``task`` cannot be paired by ``unit`` (one of :data:`UNITS`), or None."""
    if unit == "default" or unit in OTHER_UNITS.get(task, ()):
        return None
    return UNIT_REFUSED[unit]


def unit_keys(result: Result, unit: str) -> tuple[str, list[str], str]:
    """(section, key columns, unit name) of a result's paired units."""
    refused = unit_refused(result.task, unit)
    if refused is not None:
        raise ConfigError(f"--unit {unit}: {result.name} is a {result.task} result; {refused}")
    if unit == "day":
        return "per_day", ["uid", "d"], "uid-day"
    if result.task == "nextloc":
        return "per_unit", list(result.options.get("key") or ["sample_id"]), "sample"
    if result.task == "trajectory":
        return "per_unit", ["uid"], "uid"
    if result.task == "recs":
        return "per_unit", list(result.options.get("key") or ["user_id"])[:1], "user"
    if result.task == "logits":
        return "per_unit", ["row"], "row"
    raise ConfigError(f"{result.name}: cannot compare {result.task!r}")


@dataclass
class Side:
    """One model's paired material in a city: its files, unit keys and usable metrics."""

    result: Result
    files: list[Path]
    keys: list[str]  # the unit key columns, read when paired (:meth:`read_keys`)
    scale: dict[str, float]
    columns: list[str]
    summary: pl.DataFrame
    runs: int = 0  # the model's runs taken together (0: its one result)
    sd_over_runs: dict[str, float] = field(default_factory=dict)  # per metric, of the run means

    def read_keys(self, distinct: bool = True) -> pl.DataFrame:
        """Its unit keys and their row positions (:func:`read_keys`)."""
        return read_keys(self.files, self.keys, self.result.name, distinct)


def check_key_columns(files: list[Path], schema: pl.Schema, keys: list[str]) -> None:
    """An InputError naming the folder of ``files`` and the first of ``keys`` not in ``schema``."""
    missing = [k for k in keys if k not in schema]
    if missing:
        raise InputError(
            f"missing unit key column; columns: {list(schema)}",
            path=files[0].parent,
            column=missing[0],
        )


def read_keys(
    files: list[Path], keys: list[str], label: str, distinct: bool = True
) -> pl.DataFrame:
    """The ``keys`` columns of ``files`` and ``"__row"``, each unit's position in the files'
    concatenation; an InputError naming the folder and the first unit that appears twice
    (unless not ``distinct``: the caller compares them with keys known to be distinct)."""
    check_key_columns(files, section_schema(files), keys)
    frame = read_section(files, keys).with_row_index("__row")
    if not distinct:
        return frame
    duplicated = frame.select(keys).is_duplicated()
    if duplicated.any():
        first = frame.filter(duplicated).row(0, named=True)
        raise InputError(
            f"{label}: a unit appears twice",
            path=files[0].parent,
            key=", ".join(f"{k}={first[k]}" for k in keys),
        )
    return frame


def read_column(files: list[Path], name: str) -> np.ndarray:
    return read_section(files, [name])[name].cast(pl.Float64).to_numpy()


def scoring_difference(first: Result, other: Result, truth: bool = True) -> str | None:
    """Why two results of a city cannot be compared (another task, another value of an option
    that defines the metrics, another truth unless ``truth`` is False), or None when they were
    scored the same way."""
    if other.task != first.task:
        return (
            f"{first.model} is a {first.task} result and {other.model} a {other.task} one; "
            "compare results of one task"
        )
    for name in sorted(set(first.options) | set(other.options)):
        a, b = first.options.get(name), other.options.get(name)
        if a != b:
            return (
                f"{first.model} and {other.model} were scored under different options ({name}: "
                f"{json.dumps(a)} vs {json.dumps(b)}); their metrics do not mean the same thing, "
                "score them the same way to compare them"
            )
    if truth and truth_fingerprint(first.entry) != truth_fingerprint(other.entry):
        return (
            f"{first.model} and {other.model} were scored against different truth files; "
            "compare models scored on the same truth"
        )
    return None


def check_same_scoring(city: str, results: list[Result], truth: bool = True) -> None:
    """Refuse results of one city scored by different tasks, options or (``truth``) truths."""
    for other in results[1:]:
        difference = scoring_difference(results[0], other, truth)
        if difference is not None:
            raise ConfigError(f"city={city}: {difference}")


def percent_metrics(result: Result) -> set[str]:
    if result.task == "logits" and result.options.get("percent"):
        from mobeval.tasks.logits import PERCENT_METRICS

        return set(PERCENT_METRICS)
    return set()


def population_metrics(summary: pl.DataFrame, schema: dict) -> list[str]:
    """The population metrics of a result: its summary's metric rows (not counts) without a
    numeric column in its per-unit ``schema``, in the summary's order."""
    return [
        metric
        for metric in summary["metric"]
        if metric not in COUNT_ROWS and not (metric in schema and schema[metric].is_numeric())
    ]


def _is_mean(total: float, count: int, value: float) -> bool:
    """Whether ``total / count`` is the city ``value`` (both NaN, or within 1e-9 relative,
    1e-12 absolute)."""
    mean = float(total) / count if count else math.nan
    return (math.isnan(mean) and math.isnan(value)) or math.isclose(
        mean, value, rel_tol=1e-9, abs_tol=1e-12
    )


def load_side(
    source: OutputFolder, result: Result, unit: str, log: Callable[[str], None]
) -> tuple[Side, dict[str, str]]:
    """One model's side, and the metrics it cannot pair with the reason."""
    section, keys, _ = unit_keys(result, unit)
    files = source.section_files(result, section)
    summary = source.summary(result)
    schema = section_schema(files)
    check_key_columns(files, schema, keys)
    percent = percent_metrics(result)
    scale, columns = {}, []
    unpaired = dict.fromkeys(population_metrics(summary, schema), POPULATION)
    for metric, value, n in summary.select("metric", "value", "n").iter_rows():
        if metric in COUNT_ROWS or metric in keys or metric in unpaired:
            continue
        factor = 100.0 if metric.partition("@")[0] in percent else 1.0
        if section == "per_unit":
            values = read_column(files, metric) * factor
            missing = np.isnan(values)
            count = values.size - int(np.count_nonzero(missing))
            # NumPy's pairwise sum first (milliseconds a million values); the exact one only
            # where that is not the city value (seconds a million values on a loaded machine)
            same = count == n and (
                _is_mean(np.nansum(values), count, value)
                or _is_mean(math.fsum(values[~missing]), count, value)
            )
            if not same:
                unpaired[metric] = (
                    "the city value is not the mean of the per-unit values (an aggregate, "
                    "or another denominator)"
                )
                continue
        scale[metric] = factor
        columns.append(metric)
    return Side(result, files, keys, scale, columns, summary), unpaired


#: The pair selections of ``pairs`` besides a list of ``baseline:model`` pairs.
PAIRS = ("all", "baseline")


def model_pairs(
    models: list[str], baseline: str | None, pairs: str | list[str] | None = None
) -> list[tuple[str, str]]:
    """The (baseline, model) pairs compared: ``pairs="all"``: every pair, the model listed first
    as the baseline; ``"baseline"``: ``baseline`` (default: the first model) against each other
    model; a list of ``"m1:m2"``: those pairs (m1 the baseline). ``pairs=None``: ``"baseline"``
    when a baseline is given, else ``"all"``."""
    pairs = pairs or ("baseline" if baseline is not None else "all")
    if pairs == "all":
        return [(a, b) for i, a in enumerate(models) for b in models[i + 1 :]]
    if pairs == "baseline":
        first = models[0] if baseline is None else baseline
        return [(first, m) for m in models if m != first]
    chosen = []
    for text in [pairs] if isinstance(pairs, str) else pairs:
        a, colon, b = str(text).partition(":")
        if not colon or a == b or not a or not b:
            raise ConfigError(
                f"--pairs: {text!r}: choose all, baseline or pairs baseline:model of two models"
            )
        for name in (a, b):
            if name not in models:
                raise ConfigError(
                    f"--pairs: {text!r}: no model {name!r} (models: {', '.join(models)})"
                )
        if (a, b) not in chosen:
            chosen.append((a, b))
    return chosen


def key_order(sides: dict[str, Side]) -> tuple[dict[str, slice | np.ndarray], int] | None:
    """When every side has the same units (keys of the same types, the same set): each side's
    row positions in unit-key order (a slice of all rows when its files are already in that
    order) and the number of units; None when they differ (:func:`common_rows` and
    :func:`alignment` pair them then). The sides' keys are read one at a time: the first
    side's, sorted, are held, and one other's; only the first side's are checked for a unit
    that appears twice (keys equal to them cannot have one; different keys are checked where
    they are joined)."""
    reference, orders = None, {}
    for name, side in sides.items():
        ordered = side.read_keys(distinct=reference is None).sort(side.keys)
        rows = ordered["__row"].to_numpy().astype(np.int64)
        ordered = ordered.drop("__row")
        if reference is None:
            reference = ordered
        elif ordered.schema != reference.schema or not ordered.equals(reference):
            return None
        orders[name] = slice(None) if in_order(rows, rows.size) else rows
    return orders, reference.height


def in_order(rows: np.ndarray, height: int) -> bool:
    """Whether a side's rows of the common units are all its rows, in the files' order."""
    return rows.size == height and bool(np.array_equal(rows, np.arange(height)))


def common_rows(keys: dict[str, pl.DataFrame]) -> dict[str, np.ndarray]:
    """Row positions, in each side (``keys``: its :func:`read_keys`), of the units every side
    has, in unit-key order (the units Tukey's HSD compares the models on)."""
    names = list(keys)
    columns = [c for c in keys[names[0]].columns if c != "__row"]
    joined = keys[names[0]].rename({"__row": "__0"})
    for i, name in enumerate(names[1:], 1):
        joined = joined.join(
            keys[name].rename({"__row": f"__{i}"}), on=columns, how="inner", nulls_equal=True
        )
    joined = joined.sort(columns)
    return {name: joined[f"__{i}"].to_numpy().astype(np.int64) for i, name in enumerate(names)}


def alignment(
    city: str,
    unit_name: str,
    a: Side,
    b: Side,
    keys_a: pl.DataFrame,
    keys_b: pl.DataFrame,
    intersect: bool,
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Row positions of the common units in each side (``keys_a``, ``keys_b``: their
    :func:`read_keys`), in unit-key order; the counts of units on one side only (an InputError
    when there are some and not ``intersect``)."""
    for key in a.keys:
        if keys_a.schema[key] != keys_b.schema[key]:
            raise InputError(
                f"unit keys of type {keys_b.schema[key]}, {keys_a.schema[key]} in "
                f"{a.files[0].parent}: the results cannot be paired (score them again)",
                path=b.files[0].parent,
                column=key,
            )
    joined = keys_a.rename({"__row": "__a"}).join(
        keys_b.rename({"__row": "__b"}), on=a.keys, how="full", coalesce=True, nulls_equal=True
    )
    only_a = int(joined["__b"].is_null().sum())
    only_b = int(joined["__a"].is_null().sum())
    common = joined.drop_nulls(["__a", "__b"]).sort(a.keys)
    if (only_a or only_b) and not intersect:
        raise InputError(
            f"city={city}: {a.result.model} and {b.result.model} were scored on different "
            f"{unit_name}s ({only_a} only in {a.result.model}, {only_b} only in "
            f"{b.result.model}); --intersect compares the {common.height} common ones"
        )
    return (
        common["__a"].to_numpy().astype(np.int64),
        common["__b"].to_numpy().astype(np.int64),
        only_a,
        only_b,
    )
