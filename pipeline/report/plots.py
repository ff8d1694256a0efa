"""The report's plots (matplotlib, the ``report`` extra): metric@k curves, the CDF of per-unit
values, the city GEO-BLEU per day (trajectories), a paired scatter of each model's per-unit
values against the baseline's, the real and generated population distributions overlaid
(trajectories' ``distributions`` section) and their visits per cell side by side
(``density_map``), the long tail and the popularity vs recommendations scatter of
recommendation lists (ClayRS's plots: the ``long_tail`` and ``popularity_correlation``
sections). Every axis is labelled, every legend outside the data.
Per-unit data is read one metric column at a time (plus the unit keys for the scatter), so
memory is bounded by one column per model, not by the number of metrics."""

from __future__ import annotations

import io
import math

import numpy as np
import polars as pl

from mobeval.compare.pairing import unit_keys
from mobeval.compare.results import OutputFolder
from mobeval.errors import ConfigError, InputError
from mobeval.io.outputs import read_section, section_schema
from mobeval.metrics import cutoff_of
from mobeval.population_options import distance_unit
from mobeval.report.city import UNIT_WORDS, City, Figure
from mobeval.tasks.population_space import parse_gps_grid

EXTRA_MESSAGE = (
    "plots need matplotlib: pip install 'mobeval[report]' (or --no-plots for tables and methods "
    "only)"
)


class ReportExtraMissing(ConfigError):
    """matplotlib is not installed and plots were asked for."""


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ReportExtraMissing(EXTRA_MESSAGE) from None
    return plt


def check_plotting() -> None:
    """ReportExtraMissing (exit 2 on the command line) when matplotlib cannot be imported."""
    _pyplot()


def _style(ax, title: str, xlabel: str, ylabel: str, *, legend=True) -> None:
    """Every plot's look: a small title, both axes labelled, a light grid, the models' legend
    (:func:`_legend_outside`)."""
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    if legend:
        _legend_outside(ax)


def _legend_outside(ax) -> None:
    """The models' legend to the right of ``ax``, outside the data (the figure is saved with
    it: ``bbox_inches="tight"``)."""
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)


def draw_figures(source: OutputFolder, cities: list[City]) -> None:
    """Every city's plots, drawn into ``city.figures`` (ReportExtraMissing without
    matplotlib)."""
    plt = _pyplot()
    for city in cities:
        city.figures = [f for f in _city_figures(plt, source, city) if f is not None]


def _city_figures(plt, source: OutputFolder, city: City) -> list[Figure | None]:
    return [
        _curves(plt, city),
        _cdf(plt, source, city),
        _per_day(plt, source, city),
        _scatter(plt, source, city),
        _distributions(plt, source, city),
        _density_maps(plt, source, city),
        _popularity(plt, source, city),
    ]


def _figure(plt, figure, name: str, caption: str, *, tight: bool = True) -> Figure:
    """``figure`` drawn as a PNG (100 dpi, no software stamp: the same bytes every time),
    then closed; ``tight``: its panels laid out by ``tight_layout`` first (not with a colour
    bar beside them)."""
    buffer = io.BytesIO()
    if tight:
        figure.tight_layout()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
    plt.close(figure)
    return Figure(name, caption, buffer.getvalue())


def _curves(plt, city: City) -> Figure | None:
    families: dict[str, list[tuple[int, str]]] = {}
    for metric in city.metrics:
        k = cutoff_of(metric)
        if k is not None:
            families.setdefault(metric.partition("@")[0], []).append((k, metric))
    families = {f: sorted(v) for f, v in families.items() if len(v) >= 2}
    if not families:
        return None
    n = len(families)
    cols = min(n, 4)
    rows = math.ceil(n / cols)
    figure, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.6 * rows), squeeze=False)
    for ax, (name, points) in zip(axes.flat, families.items(), strict=False):
        ks = [k for k, _ in points]
        for model in city.models:
            ys = [city.values[model].get(m, math.nan) for _, m in points]
            ax.plot(ks, ys, marker="o", label=model)
        _style(ax, f"{name}@k", "k", f"{name}@k", legend=False)
        ax.set_xticks(ks)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    _legend_outside(axes[0, -1])  # once, right of the first row
    caption = f"city={city.name}: metric@k per model"
    return _figure(plt, figure, f"{city.name}-curves.png", caption)


def _per_unit_metrics(source: OutputFolder, city: City) -> list[str]:
    """The per-unit metrics of the CDF and scatter plots (at most two)."""
    files = _section_files(source, source.models(city.name)[city.models[0]][0], "per_unit")
    if files is None:
        return []
    schema = section_schema(files)
    columns = [m for m in city.metrics if m in schema and schema[m].is_numeric()]
    if city.task == "trajectory":
        return [m for m in ("geobleu", "dtw") if m in columns]
    uncut = [m for m in columns if cutoff_of(m) is None]
    cut = []
    for family in ("ndcg", "mrr", "map", "acc", "precision", "recall"):
        ks = [m for m in columns if m.partition("@")[0] == family and cutoff_of(m)]
        if ks:
            cut.append(max(ks, key=cutoff_of))
    return (uncut + cut)[:2]


def _column(source: OutputFolder, city: City, model: str, metric: str) -> np.ndarray | None:
    files = _section_files(source, source.models(city.name)[model][0], "per_unit")
    if files is None or metric not in section_schema(files):
        return None
    column = read_section(files, [metric])[metric]
    values = column.cast(pl.Float64).to_numpy()
    return values[~np.isnan(values)]


def _cdf(plt, source: OutputFolder, city: City) -> Figure | None:
    chosen = _per_unit_metrics(source, city)
    if not chosen:
        return None
    figure, axes = plt.subplots(1, len(chosen), figsize=(5 * len(chosen), 3.4), squeeze=False)
    for ax, metric in zip(axes.flat, chosen, strict=True):
        for model in city.models:
            values = _column(source, city, model, metric)  # one column at a time
            if values is None or values.size == 0:
                continue
            values = np.sort(values)
            share = np.arange(0, values.size + 1) / values.size
            ax.step(np.concatenate([values[:1], values]), share, where="post", label=model)
            del values, share
        word = UNIT_WORDS.get(city.task, "units")
        _style(ax, f"{metric}: CDF over {word}", metric, "share of " + word, legend=False)
    _legend_outside(axes[0, -1])  # once, right of the last panel
    caption = f"city={city.name}: distribution (CDF) of per-unit values per model"
    return _figure(plt, figure, f"{city.name}-cdf.png", caption)


def _per_day(plt, source: OutputFolder, city: City) -> Figure | None:
    if city.task != "trajectory":
        return None
    figure, ax = plt.subplots(figsize=(7, 3.2))
    drawn = False
    for model in city.models:
        files = _section_files(source, source.models(city.name)[model][0], "per_day")
        if files is None or "geobleu" not in section_schema(files):
            continue
        days = (
            read_section(files, ["d", "geobleu"])
            .group_by("d")
            .agg(pl.col("geobleu").mean())
            .sort("d")
        )
        ax.plot(days["d"].to_numpy(), days["geobleu"].to_numpy(), marker=".", label=model)
        drawn = True
    if not drawn:
        plt.close(figure)
        return None
    _style(ax, f"city={city.name}: GEO-BLEU per day (mean over uids)", "day d", "GEO-BLEU")
    caption = f"city={city.name}: city GEO-BLEU per day"
    return _figure(plt, figure, f"{city.name}-per-day.png", caption)


def _scatter(plt, source: OutputFolder, city: City) -> Figure | None:
    """One panel per model: its per-unit values against the baseline's, paired by unit."""
    chosen = _per_unit_metrics(source, city)
    if city.baseline is None or not chosen:
        return None
    metric = chosen[0]
    frames = {}
    for model in city.models:
        result = source.models(city.name)[model][0]
        try:
            section, keys, _ = unit_keys(result, "default")
            files = source.section_files(result, section)
        except (ConfigError, InputError):
            return None
        frames[model] = read_section(files, [*keys, metric]).rename({metric: model})
    others = [m for m in city.models if m != city.baseline]
    cols = min(len(others), 3)
    rows = math.ceil(len(others) / cols)
    figure, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 4.0 * rows), squeeze=False)
    shown = []
    for ax, other in zip(axes.flat, others, strict=False):
        joined = frames[city.baseline].join(frames[other], on=keys, how="inner")
        joined = joined.drop_nans().drop_nulls()
        shown.append(joined.height)
        if joined.height > 20000:  # every n-th unit: the picture, not the data
            joined = joined.gather_every(math.ceil(joined.height / 20000))
        if joined.height == 0:
            ax.set_title(f"{other}: no common unit", fontsize=10)
            continue
        x, y = joined[city.baseline].to_numpy(), joined[other].to_numpy()
        size, alpha = (24, 0.8) if x.size <= 2000 else (6, 0.3)
        ax.scatter(x, y, s=size, alpha=alpha, edgecolors="none")
        low, high = float(min(x.min(), y.min())), float(max(x.max(), y.max()))
        ax.plot([low, high], [low, high], color="grey", linewidth=0.8, linestyle="--")
        title = f"{metric} per unit: {other} vs {city.baseline}"
        _style(ax, title, f"{city.baseline} (baseline)", other, legend=False)
    for ax in list(axes.flat)[len(others) :]:
        ax.axis("off")
    del frames
    if not any(shown):
        plt.close(figure)
        return None
    caption = (
        f"city={city.name}: {metric} of each model vs {city.baseline}, paired by unit "
        f"({', '.join(f'{m}: {n:,} units' for m, n in zip(others, shown, strict=True))})"
    )
    return _figure(plt, figure, f"{city.name}-scatter.png", caption)


#: The titles of the population distributions' panels (``OUT/distributions``), in panel order.
DISTRIBUTION_TITLES = {
    "distance": "Distance (jump length)",
    "radius": "Radius of gyration",
    "duration": "Duration (stay length)",
    "dailyloc": "DailyLoc (distinct locations a day)",
    "grank": "G-rank (visits of the top locations)",
    "irank": "I-rank (visits by rank within a day)",
    "density": "Density (points per cell)",
    "origin": "Trip origins (first points per cell)",
    "destination": "Trip destinations (last points per cell)",
    "jump": "Jump (distance between points)",
    "location": "Location (visits per location)",
    "origin_location": "Origin (first location)",
    "destination_location": "Destination (last location)",
    "od": "OD (first and last locations)",
    "length": "Length (points per trajectory)",
    "trip_length": "Trip length (links' lengths)",
    "link_radius": "Link radius (squared, over links)",
    "gravity": "Gravity (origin and destination regions)",
}
#: More bins than this over distances are drawn on a symlog axis, linear over the first bin (with
#: MoveSim's 10,000 bins most of the mass lies in a few bins of 0.01 % of the axis, invisible).
FINE_BINS = 1000
#: Distributions binned over distances, in the run's ``distance_unit``, and over location ids.
DISTANCES = ("distance", "radius", "jump")
IDS = ("location", "origin_location", "destination_location", "od")


def _axis_label(name: str, label: str, options: dict) -> str:
    """A panel's x label saying what its bins measure: distances in the run's unit (squared
    where MoveSim's convention squares jumps and radii), location ids, the link table's
    lengths."""
    if name in DISTANCES and "locations" in options:
        unit = distance_unit(options["locations"], options["distance"], options["unit"])
        squared = options.get("squared") and name != "jump"
        return f"{label}, {unit}{' squared' if squared else ''}"
    if name in IDS and label == "bin (left edge)":
        return "location id (bin's left edge)"
    if name == "length":
        return f"{label}, points"
    if name == "trip_length":
        return f"{label}, the link table's length unit"
    return label


def _distributions(plt, source: OutputFolder, city: City) -> Figure | None:
    """One panel per population distribution: the real probabilities and each model's generated
    ones overlaid, as steps over the bins' left edges (over ranks for G-rank / I-rank counted
    rank by rank; over cells sorted by their real share for the grid histograms, whose cells
    have no order), up to the last bin either side fills. The real side is drawn once, from the
    first model's table."""
    if city.task != "trajectory":
        return None
    tables = _model_sections(source, city, "distributions")
    if not tables:
        return None
    names = [
        n for n in DISTRIBUTION_TITLES if n in set(next(iter(tables.values()))["distribution"])
    ]
    if not names:
        return None
    cols = min(len(names), 3)
    rows = math.ceil(len(names) / cols)
    figure, axes = plt.subplots(rows, cols, figsize=(4.0 * cols, 2.9 * rows), squeeze=False)
    for ax, name in zip(axes.flat, names, strict=False):
        real = next(iter(tables.values())).filter(pl.col("distribution") == name)
        position, xlabel = _distribution_axis(real)
        xlabel = _axis_label(name, xlabel, city.options)
        sides = [("real", real, "real", {"color": "black", "linewidth": 1.6})]
        sides += [
            (model, table.filter(pl.col("distribution") == name), "generated", {"linewidth": 1.0})
            for model, table in tables.items()
        ]
        last = 0  # the last bin with a value on either side: the empty tail is not drawn
        for label, table, side, look in sides:
            x = position(table)
            order = np.argsort(x, kind="stable")
            y = np.nan_to_num(table[f"{side}_probability"].to_numpy()[order])
            ax.step(x[order], y, where="post", label=label, **look)
            last = max(last, int(np.flatnonzero(y).max(initial=0)))
        x = np.sort(position(real))
        ax.set_xlim(x[0], x[min(last + 1, x.size - 1)])
        if name in DISTANCES and x.size > FINE_BINS:  # MoveSim's 10,000 bins: the first ones show
            ax.set_xscale("symlog", linthresh=float(x[1] - x[0]))
        _style(ax, DISTRIBUTION_TITLES[name], xlabel, "probability", legend=False)
    for ax in list(axes.flat)[len(names) :]:
        ax.axis("off")
    _legend_outside(axes[0, -1])  # once, right of the first row
    caption = (
        f"city={city.name}: real and generated population distributions "
        f"({', '.join(tables)}; bins as in OUT/distributions)"
    )
    return _figure(plt, figure, f"{city.name}-distributions.png", caption)


#: The most bins a side of a density map of location ids has (grid cells are drawn one by one).
MAP_BINS = 150
#: The share of the visits that a density map of location ids frames: the square around the
#: visits' median holding it (far-off locations that a few visits reach would shrink the dense
#: part to a few bins; the titles count the visits outside).
MAP_FRAMED = 0.9


def _weighted_quantile(values: np.ndarray, weights: np.ndarray, share: float) -> float:
    order = np.argsort(values, kind="stable")
    at = np.searchsorted(np.cumsum(weights[order]), share * weights.sum())
    return float(values[order[min(at, values.size - 1)]])


def _map_bins(table: pl.DataFrame) -> tuple[np.ndarray, np.ndarray, str]:
    """The x and y bin edges of a density map and its axes' unit: one bin per grid cell over the
    cells visited (``location`` null), else :data:`MAP_BINS` equal bins a side over the square
    frame around the visits' median that holds :data:`MAP_FRAMED` of them (both sides' visits;
    the location table's coordinates, its units)."""
    x, y = table["x"].to_numpy(), table["y"].to_numpy()
    if table["location"].is_null().all():
        return (
            np.arange(x.min() - 0.5, x.max() + 1.0),
            np.arange(y.min() - 0.5, y.max() + 1.0),
            "cells",
        )
    weights = (table["real_visits"] + table["generated_visits"]).to_numpy()
    mx, my = (_weighted_quantile(v, weights, 0.5) for v in (x, y))
    half = _weighted_quantile(np.maximum(abs(x - mx), abs(y - my)), weights, MAP_FRAMED)
    half = half if half > 0 else 1.0
    xs, ys = (np.linspace(m - half, m + half, MAP_BINS + 1) for m in (mx, my))
    return xs, ys, "location table's units"


def _map_place(options: dict, unit: str):
    """Where a density map draws a cell: ``(place, aspect, axis names)``, ``place(x, y)`` the
    map's coordinates of cells or bin edges. GPS points' cells (``x`` the column from the west,
    ``y`` the row from the south of ``gps_grid``) in degrees of longitude and latitude, a degree
    of longitude drawn ``cos(middle latitude)`` of a degree of latitude; else as they are."""
    if options.get("locations") != "gps" or not options.get("gps_grid"):
        return (lambda x, y: (x, y)), 1.0, (f"x ({unit})", f"y ({unit})")
    grid = parse_gps_grid(options["gps_grid"])
    middle = math.radians((grid.lat_min + grid.lat_max) / 2)

    def place(x, y):
        return grid.lon_min + (x + 0.5) * grid.dlon, grid.lat_min + (y + 0.5) * grid.dlat

    return place, 1.0 / math.cos(middle), ("longitude (degrees)", "latitude (degrees)")


def _density_maps(plt, source: OutputFolder, city: City) -> Figure | None:
    """Visits per cell, real beside each model's generated population (``density_map``; the
    real side drawn once, from the first model's table): one log colour scale shared by every
    panel, cells without a visit left blank; a title counts the visits outside the frame."""
    from matplotlib.colors import LogNorm

    tables = _model_sections(source, city, "density_map")
    # a location without a point (a link table without x, y) has no place on the map
    tables = {m: t.filter(pl.col("x").is_not_nan()) for m, t in tables.items()}
    if not any(t.height for t in tables.values()):
        return None
    real = next(iter(tables.values()))
    xs, ys, unit = _map_bins(pl.concat(tables.values()))
    place, aspect, names = _map_place(city.options, unit)
    xs, ys = place(xs, ys)
    panels = [("real", real["real_visits"], real)]
    panels += [(f"{m} (generated)", t["generated_visits"], t) for m, t in tables.items()]
    grids, titles = [], []
    for label, visits, table in panels:
        x, y = place(table["x"].to_numpy(), table["y"].to_numpy())
        counts, _, _ = np.histogram2d(x, y, [xs, ys], weights=visits.to_numpy())
        total, outside = int(visits.sum()), int(visits.sum() - counts.sum())
        titles.append(f"{label}\n{total:,} visits" + (f", {outside:,} outside" if outside else ""))
        grids.append(np.ma.masked_equal(counts.T, 0))
    top = max((float(g.max()) for g in grids if g.count()), default=1.0)
    norm = LogNorm(vmin=1.0, vmax=max(top, 1.0))  # a frame without a visit: one empty scale
    width = 4.0 * (xs[-1] - xs[0]) / max((ys[-1] - ys[0]) * aspect, 1e-12)
    size = (min(max(width, 2.5), 6.0) * len(panels) + 1.2, 4.0)
    figure, axes = plt.subplots(1, len(panels), figsize=size, squeeze=False, sharey=True)
    for ax, title, counts in zip(axes.flat, titles, grids, strict=True):
        mesh = ax.pcolormesh(xs, ys, counts, norm=norm, cmap="viridis")
        ax.set_aspect(aspect)
        ax.ticklabel_format(useOffset=False)  # 104.06, not 0.06 and an offset of +1.04e2
        ax.locator_params(axis="x", nbins=4)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(names[0])
    axes[0, 0].set_ylabel(names[1])
    bar = figure.colorbar(mesh, ax=list(axes.flat), fraction=0.03, pad=0.02)
    bar.set_label("visits per cell (log scale)")
    caption = (
        f"city={city.name}: visits per cell, real and generated ({', '.join(tables)}; "
        "one colour scale; counts as in OUT/density_map)"
    )
    return _figure(plt, figure, f"{city.name}-density-map.png", caption, tight=False)


#: The columns the figures read of each section: a part without one is an InputError naming it
#: and the column (exit 2), never a crash while drawing.
PLOTTED_COLUMNS = {
    "distributions": (
        "distribution", "bin", "left", "real_count", "real_probability", "generated_probability"
    ),
    "density_map": ("location", "x", "y", "real_visits", "generated_visits"),
    "long_tail": ("metric", "side", "position", "count"),
    "popularity_correlation": ("metric", "popularity", "recommended"),
}  # fmt: skip


def _model_sections(source: OutputFolder, city: City, section: str) -> dict[str, pl.DataFrame]:
    """Each model's ``section`` (its first run's; the columns the figure reads), for the models
    scored with it."""
    tables = {}
    for model in city.models:
        files = _section_files(source, source.models(city.name)[model][0], section)
        if files is not None:
            tables[model] = read_section(files, list(PLOTTED_COLUMNS[section]))
    return tables


def _section_files(source: OutputFolder, result, section: str) -> list | None:
    """The files of a result's ``section``; None when the result was scored without it (its
    manifest entry lists no such output). A section listed but lost or damaged is an
    InputError naming it (exit 2), never a model left out of a figure without a word."""
    if section not in result.entry["outputs"]:
        return None
    return source.section_files(result, section)


def _popularity(plt, source: OutputFolder, city: City) -> Figure | None:
    """ClayRS's two plots of recommendation lists, every model on each: the long tail (items'
    counts by position, descending; the ratings' once, in black; ``long_tail``) and each item's
    popularity in the original ratings vs the times it is recommended
    (``popularity_correlation``, never-recommended items at 0). Each model's first metric of
    the section (its first cutoff)."""
    if city.task != "recs":
        return None
    tails = _model_sections(source, city, "long_tail")
    scatters = _model_sections(source, city, "popularity_correlation")
    panels = [p for p in (tails, scatters) if p]
    if not panels:
        return None
    figure, axes = plt.subplots(len(panels), 1, figsize=(6.4, 3.0 * len(panels)), squeeze=False)
    axes = iter(axes.flat)
    shown = []
    if tails:
        ax = next(axes)
        for index, (model, table) in enumerate(tails.items()):
            table = table.filter(pl.col("metric") == table["metric"][0])
            if index == 0:
                truth = table.filter(pl.col("side") == "truth")
                ax.plot(truth["position"], truth["count"], color="black", lw=1.6, label="ratings")
            recs = table.filter(pl.col("side") == "recs")
            ax.plot(
                recs["position"], recs["count"], lw=1.0, label=f"{model} ({table['metric'][0]})"
            )
        shown.append("long tail")
        _style(ax, "Long tail (items by count)", "item, by decreasing count", "count", legend=False)
        ax.set_xscale("symlog", linthresh=1)  # a 10-item head and a 500-item tail both show
        ax.set_yscale("symlog", linthresh=1)
        _legend_outside(ax)
    if scatters:
        ax = next(axes)
        for model, table in scatters.items():
            table = table.filter(pl.col("metric") == table["metric"][0])
            label = f"{model} ({table['metric'][0]})"
            ax.scatter(table["popularity"], table["recommended"], s=10, alpha=0.6, label=label)
        shown.append("popularity vs recommendations")
        _style(
            ax,
            "Popularity vs recommendations",
            "popularity (ratings / users)",
            "recommended",
            legend=False,
        )
        _legend_outside(ax)
    caption = (
        f"city={city.name}: {' and '.join(shown)} of {', '.join(tails or scatters)} "
        "(ClayRS's LongTailDistr and PopRecsCorrelation; OUT/long_tail, OUT/popularity_correlation)"
    )
    return _figure(plt, figure, f"{city.name}-popularity.png", caption)


def _distribution_axis(real: pl.DataFrame):
    """How one distribution's bins are laid along x: a function of a side's table (same bins)
    giving each bin's position, and the axis label. Edges where the bins have them; ranks from
    1; grid cells by decreasing real share (the real table's order, applied to every side)."""
    if real["left"].null_count() == 0:
        return (lambda table: table["left"].to_numpy()), "bin (left edge)"
    if real["distribution"][0] in ("grank", "irank"):
        return (lambda table: table["bin"].to_numpy() + 1), "rank"
    position = np.empty(real.height, dtype=np.int64)
    position[np.argsort(-real["real_count"].to_numpy(), kind="stable")] = np.arange(real.height)
    return (lambda table: position[table["bin"].to_numpy()]), "cell, by decreasing real share"
