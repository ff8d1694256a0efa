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

from mobeval.errors import ConfigError, InputError, OptionError
from mobeval.metrics import DIVERGENCES, GRID_DISTRIBUTIONS, ID_DISTRIBUTIONS, POPULATION_METRICS
from mobeval.metrics.generation import GENERATION_FIELDS
from mobeval.metrics.trajectory import (
    COLUMNS,
    DISTANCES,
    EXPS,
    ON_MISMATCH,
    OUT_OF_GRID,
    PAIRINGS,
    SPACES,
    UNKNOWN_LINKS,
    TrajectoryConvention,
    resolve,
)

METRICS = ("geobleu", "dtw")
#: What ``metrics`` may name: the per-uid metrics and the population metrics.
ALL_METRICS = METRICS + POPULATION_METRICS


@dataclass(frozen=True)
class TrajectoryPlan:
    """What the engine reads from both sides: the five columns, as they are (unpaired: uid, d,
    t and the location columns, ``d`` 0 where an input has none: :func:`population_plan`)."""

    pred_columns: tuple[str, ...] = COLUMNS
    pred_select: tuple[pl.Expr, ...] = tuple(pl.col(c) for c in COLUMNS)
    truth_columns: tuple[str, ...] = COLUMNS
    truth_select: tuple[pl.Expr, ...] = tuple(pl.col(c) for c in COLUMNS)


#: The location columns each space reads (:mod:`mobeval.tasks.population_space`).
LOCATION_COLUMNS = {
    "grid": ("x", "y"),
    "ids": ("location",),
    "links": ("location",),
    "gps": ("lat", "lon"),
}


def required_columns(pairing: str, locations: str) -> tuple[str, ...]:
    """The columns each input must hold: paired, the five; unpaired, uid, t and the location
    space's (a trajectory is a uid's rows of one day d, or all of them where d is absent)."""
    if pairing == "uid":
        return COLUMNS
    return ("uid", "t", *LOCATION_COLUMNS[locations])


def population_plan(reference: dict, generated: dict, locations: str) -> TrajectoryPlan:
    """The unpaired plan: each input's uid, d (0 where absent), t and location columns."""
    wanted = ("uid", "d", "t", *LOCATION_COLUMNS[locations])

    def side(schema: dict) -> tuple[tuple[str, ...], tuple[pl.Expr, ...]]:
        read = tuple(c for c in wanted if c in schema)
        select = tuple(pl.col(c) if c in schema else pl.lit(0, pl.Int64).alias(c) for c in wanted)
        return read, select

    (truth, truth_select), (pred, pred_select) = side(reference), side(generated)
    return TrajectoryPlan(pred, pred_select, truth, truth_select)


def check_schemas(
    reference: dict, reference_label, generated: dict, generated_label, columns=COLUMNS
) -> None:
    """Column types, before anything is read: d, t, x, y, location integers (or integral
    floats; t a timestamp too, ordered as its integer), lat, lon numbers, uid integers or
    strings alike on both sides. Each schema holds ``columns``."""
    for schema, label in ((reference, reference_label), (generated, generated_label)):
        for col in columns:
            dtype = schema[col]
            numeric = dtype.is_integer() or dtype.is_float()
            numeric = numeric or (col == "t" and dtype.is_temporal())
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
    pairing="uid",
    locations="grid",
    location_table=None,
    unknown_links="error",
    region_table=None,
    link_graph=None,
    gps_grid=None,
    distance="planar",
    **generation,
) -> TrajectoryConvention:
    """The convention the evaluate functions' options ask for, after checking every option
    (``columns`` is the engines' business: each input is read under our names,
    :mod:`mobeval.io.columns`; the ``population_*`` options the scorer's, checked with every
    family's in :mod:`mobeval.options`); ``generation``: the options of
    :data:`mobeval.metrics.generation.GENERATION_FIELDS` given (None: the preset's), set on the
    preset's generation convention."""
    base = resolve(convention)
    if exp is not None and exp not in EXPS:
        raise ConfigError(f"exp={exp!r} is not one of {EXPS}")
    given = {"matching": matching, "exp": exp, "max_distance": max_distance, "unit": unit}
    # a value given is taken as it is (0 refused by the convention's checks, never the preset's)
    chosen = dataclasses.replace(base, **{n: v for n, v in given.items() if v is not None})
    options = {GENERATION_FIELDS[n]: n for n, v in generation.items() if v is not None}
    if options:
        try:
            fields = {field: generation[n] for field, n in options.items()}
            chosen = dataclasses.replace(
                chosen, generation=dataclasses.replace(chosen.generation, **fields)
            )
        except OptionError as error:  # named as the user named it
            raise OptionError(options[error.option], error.value, error.detail) from None
    unknown = [m for m in metrics if m not in ALL_METRICS]
    if unknown or not metrics:
        raise ConfigError(f"unknown trajectory metric(s) {unknown}; known: {ALL_METRICS}")
    for option, value, allowed in (
        ("on_mismatch", on_mismatch, ON_MISMATCH),
        ("out_of_grid", out_of_grid, OUT_OF_GRID),
        ("divergence", divergence, DIVERGENCES),
        ("pairing", pairing, PAIRINGS),
        ("locations", locations, SPACES),
        ("unknown_links", unknown_links, UNKNOWN_LINKS),
        ("distance", distance, DISTANCES),
    ):
        if value not in allowed:
            raise ConfigError(f"{option}={value!r} is not one of {allowed}")
    grid = [m for m in metrics if m in GRID_DISTRIBUTIONS + ID_DISTRIBUTIONS]
    if divergence == "emd" and grid:
        raise ConfigError(
            f"divergence='emd' needs ordered bins; {', '.join(grid)} are histograms over a 2-D "
            "grid of cells or over location ids: use jsd, jsdist or kl"
        )
    check_population(metrics, pairing, locations, location_table, chosen.unit)
    check_gps(locations, gps_grid, distance)
    shares = list(uid_shares or ())
    if any(not 0 < share < 100 for share in shares) or len(set(shares)) < len(shares):
        raise ConfigError(f"uid_shares={shares!r}: distinct percentages between 1 and 99")
    return chosen


#: What each measure of road links reads beyond the link table (the option naming it).
LINK_NEEDS = {
    "trip_length": ("sums the lengths of road links", None),
    "link_radius": ("measures the points of road links", None),
    "gravity": ("counts the regions of road links", "region_table"),
    "connectivity": ("follows the edges between road links", "link_graph"),
}


def check_links(metrics, locations, region_table=None, link_graph=None) -> None:
    """The measures of road links (:data:`LINK_NEEDS`) need ``locations="links"`` and the file
    each reads, which no other measure takes (checked with the run's whole options, not one
    option at a time: ``metrics`` alone is grid's)."""
    given = {"region_table": region_table, "link_graph": link_graph}
    for name, (what, option) in LINK_NEEDS.items():
        if name not in metrics:
            continue
        if locations != "links":
            raise ConfigError(
                f"{name} {what}: locations={locations!r} has no link table (locations='links' "
                "with location_table=LINK_TABLE)"
            )
        if option and given[option] is None:
            raise ConfigError(f"{name} {what}: it needs {option}")
    for option, value in given.items():
        user = next(n for n, (_, o) in LINK_NEEDS.items() if o == option)
        if value is not None and user not in metrics:
            raise ConfigError(f"{option} is read by {user} alone: add it to metrics")


def check_gps(locations, gps_grid, distance) -> None:
    """GPS points need their grid (``gps_grid``, parsed here), which no other space takes;
    great-circle distances need latitudes and longitudes (not grid cells)."""
    if locations != "gps":
        if gps_grid is not None:
            raise ConfigError("gps_grid is the grid of GPS points: add locations='gps'")
        if locations == "grid" and distance == "haversine":
            raise ConfigError(
                "distance='haversine' measures latitudes and longitudes: grid cells are planar"
            )
        return
    if gps_grid is None:
        raise ConfigError(
            "locations='gps' needs gps_grid (--gps-grid LAT_MIN,LON_MIN,LAT_MAX,LON_MAX,16x16 "
            "or ...,500m): the cells that density, trip, stays and location counts use"
        )
    from mobeval.tasks.population_space import parse_gps_grid

    parse_gps_grid(gps_grid)


def check_population(metrics, pairing, locations, location_table, unit) -> None:
    """What unpaired inputs and location spaces allow (ConfigError, exit 2, saying what to do):
    GEO-BLEU and DTW compare each uid's own days, so they need ``pairing="uid"``; location ids
    need ``pairing="none"`` and a location table, which grid cells do not take; the density and
    trip grids and ``unit="metres"`` (500 m cells) are HuMob grid cells'."""
    paired = [m for m in metrics if m in METRICS]
    if pairing == "none" and paired:
        raise ConfigError(
            f"{', '.join(paired)} compare{'s' * (len(paired) == 1)} each uid's generated days "
            "with its own real ones: "
            "they need paired inputs (pairing='uid', rows paired by uid, d, t); with "
            f"pairing='none' ask for population metrics only ({', '.join(POPULATION_METRICS)})"
        )
    if location_table is not None and locations in ("grid", "gps"):
        what = "grid cells (x, y)" if locations == "grid" else "GPS points (lat, lon)"
        raise ConfigError(
            "location_table is read with locations='ids' or 'links' (a location column); "
            f"{what} take no table"
        )
    if locations == "grid":
        return
    if pairing != "none":
        raise ConfigError(
            f"locations={locations!r} scores populations: add pairing='none' (--pairing none)"
        )
    if location_table is None and locations != "gps":
        raise ConfigError(
            f"locations={locations!r} needs location_table (--location-table FILE): id -> "
            "coordinates, e.g. MoveSim's gps file; links: id -> length"
        )
    grid = [m for m in metrics if m in GRID_DISTRIBUTIONS and locations != "gps"]
    if grid or unit == "metres":
        what = ", ".join(grid) if grid else "unit='metres'"
        raise ConfigError(
            f"{what}: HuMob grid cells (locations='grid') only; with locations={locations!r} "
            "ask for the other distributions"
        )
