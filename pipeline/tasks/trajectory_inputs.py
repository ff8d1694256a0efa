"""Trajectory runs before their first row: the convention the options ask for, checked
(:func:`checked_convention`, what ``mobeval.options`` checks), the two inputs' column types
(:func:`check_schemas`, the first thing a run does with its inputs' schemas) and what the engine
reads of them (:class:`TrajectoryPlan`).

Polars and :mod:`mobeval.metrics.trajectory` only, no kernel: a run opens its inputs and checks
their columns before Numba and the scorer (:mod:`mobeval.tasks.trajectory`) are imported, so a
bad input is named at once (``tests/test_startup_imports.py``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import polars as pl

from mobeval.errors import ConfigError, InputError
from mobeval.metrics import DISTRIBUTIONS, DIVERGENCES, GRID_DISTRIBUTIONS
from mobeval.metrics.trajectory import (
    COLUMNS,
    EXPS,
    ON_MISMATCH,
    OUT_OF_GRID,
    TrajectoryConvention,
    resolve,
)

METRICS = ("geobleu", "dtw")
#: What ``metrics`` may name: the per-uid metrics and the population distributions.
ALL_METRICS = METRICS + DISTRIBUTIONS


@dataclass(frozen=True)
class TrajectoryPlan:
    """What the engine reads from both sides: the five columns, as they are."""

    pred_columns: tuple[str, ...] = COLUMNS
    pred_select: tuple[pl.Expr, ...] = tuple(pl.col(c) for c in COLUMNS)
    truth_columns: tuple[str, ...] = COLUMNS
    truth_select: tuple[pl.Expr, ...] = tuple(pl.col(c) for c in COLUMNS)


def check_schemas(reference: dict, reference_label, generated: dict, generated_label) -> None:
    """Column types, before anything is read: d, t, x, y integers (or integral floats), uid
    integers or strings alike on both sides. Each schema holds the five columns."""
    for schema, label in ((reference, reference_label), (generated, generated_label)):
        for col in COLUMNS:
            dtype = schema[col]
            numeric = dtype.is_integer() or dtype.is_float()
            if col == "uid" and not (dtype.is_integer() or dtype == pl.String):
                raise InputError(
                    f"must hold integers or strings, found {dtype}", path=label, column=col
                )
            if col != "uid" and not numeric:
                raise InputError(f"must hold integers, found {dtype}", path=label, column=col)
    kinds = {side["uid"].is_integer() for side in (reference, generated)}
    if len(kinds) > 1:
        raise InputError(
            f"uid types differ: generated {generated['uid']}, reference {reference['uid']}",
            path=generated_label,
            column="uid",
        )


def checked_convention(
    convention,
    *,
    matching,
    metrics,
    on_mismatch,
    out_of_grid,
    exp=None,
    divergence="jsd",
    max_distance=None,
    unit=None,
    columns=None,
    uid_shares=(),
    per_day_divergences=False,
    population_resamples=0,
    population_seed=0,
    population_confidence=0.95,
) -> TrajectoryConvention:
    """The convention the evaluate functions' options ask for, after checking every option
    (``columns`` is the engines' business: each input is read under our names,
    :mod:`mobeval.io.columns`; the ``population_*`` options the scorer's, checked with every
    family's in :mod:`mobeval.options`)."""
    base = resolve(convention)
    if exp is not None and exp not in EXPS:
        raise ConfigError(f"exp={exp!r} is not one of {EXPS}")
    given = {"matching": matching, "exp": exp, "max_distance": max_distance, "unit": unit}
    # a value given is taken as it is (0 refused by the convention's checks, never the preset's)
    chosen = dataclasses.replace(base, **{n: v for n, v in given.items() if v is not None})
    unknown = [m for m in metrics if m not in ALL_METRICS]
    if unknown or not metrics:
        raise ConfigError(f"unknown trajectory metric(s) {unknown}; known: {ALL_METRICS}")
    for option, value, allowed in (
        ("on_mismatch", on_mismatch, ON_MISMATCH),
        ("out_of_grid", out_of_grid, OUT_OF_GRID),
        ("divergence", divergence, DIVERGENCES),
    ):
        if value not in allowed:
            raise ConfigError(f"{option}={value!r} is not one of {allowed}")
    grid = [m for m in metrics if m in GRID_DISTRIBUTIONS]
    if divergence == "emd" and grid:
        raise ConfigError(
            f"divergence='emd' needs ordered bins; {', '.join(grid)} are histograms over a 2-D "
            "grid of cells: use jsd or kl"
        )
    shares = list(uid_shares or ())
    if any(not 0 < share < 100 for share in shares) or len(set(shares)) < len(shares):
        raise ConfigError(f"uid_shares={shares!r}: distinct percentages between 1 and 99")
    return chosen
