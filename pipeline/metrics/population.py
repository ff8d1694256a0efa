"""Population distributions of trajectories (MoveSim's six, DiffTraj's two) and their divergences.

MoveSim (Feng et al., "Learning to Simulate Human Mobility", KDD 2020; FIBLAB/MoveSim
``code/evaluations.py``, ``IndividualEval.get_individual_jsds``) compares the real and generated
populations through six histograms, each the whole population's (one day = one of its
trajectories):

* ``distance``: every jump between consecutive points of a day;
* ``radius``: each day's radius of gyration;
* ``duration``: each stay (run of consecutive points at one location);
* ``dailyloc``: each day's number of distinct locations;
* ``grank``: the visit shares of the population's ``top_k`` most visited locations;
* ``irank``: the visits of each day's r-th most visited location, summed over days, r = 1..top_k.

and two more as DiffTraj (Zhu et al., NeurIPS 2023) and ControlTraj (KDD 2024) report them
(in spirit: neither Yasoz/DiffTraj 27d25a9 nor Yasoz/ControlTraj eb49b43 ships its evaluation
code; the definitions are those of the evaluation script copied among their reproductions,
``density_error`` and ``trip_error``):

* ``density``: every point's cell of a ``density_cells`` x ``density_cells`` grid laid over the
  200 x 200 grid (cell ``floor((x - 1) * n / 200)``, clipped to the grid as the script clips);
* ``trip``: the same grid's histograms of each day's first point (origin) and last point
  (destination); the divergence is the mean of the two divergences.

DiffTraj's third, Length (the histogram of points per trajectory), is not here: the generated
and real trajectories mobeval scores share their (uid, d, t) steps, so their lengths are the same
and the divergence 0 by construction.

The measures are :mod:`mobeval.kernels.mobility`'s, the divergences
:mod:`mobeval.kernels.divergence`'s. Every histogram is integer counts, folded chunk by chunk and
merged exactly (:class:`PopulationCounts`), so the values do not depend on chunking or row order;
memory is the histograms plus one count per visited location.

How MoveSim bins (``movesim`` fields of :class:`mobeval.metrics.trajectory.TrajectoryConvention`)
and how mobeval's default does, for ``max_distance = D``:

* distance: MoveSim ``dx^2 + dy^2`` over ``np.arange(0, D, D/B)`` edges (B = 10000; values at
  or beyond the last edge dropped); default ``sqrt(dx^2 + dy^2)`` in B equal bins over [0, D],
  a value beyond D in the last bin (D = 282 cells, B = 282: 1-cell bins).
* radius: MoveSim ``r_g^2`` over ``np.arange(0, D^2, D^2/B)``; default ``r_g`` as distance.
* duration: MoveSim run length / 48 over ``np.arange(0, 1, 1/48)``, each day's last run dropped;
  default run length in points, one bin per length 1..48 (longer: the last), every run counted.
* dailyloc: MoveSim distinct / 48, bins as duration; default the count, bins as duration.
* grank, irank: MoveSim the ``top_k`` shares histogrammed over ``np.arange(0, 1, 1/100)``;
  default the ``top_k`` counts themselves compared, rank r against rank r.

MoveSim's JSD divides each histogram by its sum + 1e-14 (``guard``) and is computed here as
MoveSim computes it (:func:`scipy_jsd`, ``scipy_jsd``), so that its bits are MoveSim's; its I-rank
shares are the
mean over days of count / 48, renormalized, which equals rank_sum_r / sum of rank sums computed
here exactly (MoveSim's sequential float sum can differ in the last bits, which moves a share
between histogram bins only within a few ulps of an edge). MoveSim needs days of exactly 48 points
(``full_days``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl

from mobeval.kernels.mobility import bin_counts, day_measures
from mobeval.metrics import GENERATION_DISTRIBUTIONS, GENERATION_RATIOS, MOVESIM_DISTRIBUTIONS
from mobeval.metrics.generation_counts import (
    GenerationCounts,
    compared_histograms,
    divergence_of,
    generation_divergence,
    generation_ratio,
)

#: The slots of a day (HuMob: 30 minutes): MoveSim's sequence length.
SLOTS = 48
#: MoveSim's bins of the G-rank and I-rank shares over [0, 1).
RANK_BINS = 100
#: The side of the HuMob grid, in cells (coordinates 1..200).
GRID_CELLS = 200


def grid_counts(x: np.ndarray, y: np.ndarray, cells: int) -> np.ndarray:
    """Points per cell of a ``cells`` x ``cells`` grid over the HuMob grid (row-major)."""
    cx, cy = (np.clip((v.astype(np.int64) - 1) * cells // GRID_CELLS, 0, cells - 1) for v in (x, y))
    return np.bincount(cx * cells + cy, minlength=cells * cells).astype(np.int64)


def edges(convention, name: str) -> np.ndarray:
    """The bin edges of a float-valued measure (``distance``, ``radius``, ``duration``,
    ``dailyloc``, and ``grank`` / ``irank`` under ``rank_histogram``) in the convention."""
    top = convention.max_distance * convention.cell_size
    if name in ("duration", "dailyloc") and not convention.fractions:
        return np.arange(0.5, SLOTS + 1.5)
    if convention.bins == "closed":
        return np.linspace(0.0, top, convention.distance_bins + 1)
    # np.arange as MoveSim's EvalUtils.arr_to_distribution(arr, 0, max, bins) calls it
    lo, hi, n = {
        "distance": (0, top, convention.distance_bins),
        "radius": (0, top**2, convention.distance_bins),
        "duration": (0, 1, SLOTS),
        "dailyloc": (0, 1, SLOTS),
        "grank": (0, 1, RANK_BINS),
        "irank": (0, 1, RANK_BINS),
    }[name]
    return np.arange(lo, hi, float(hi - lo) / n)


@dataclass
class PopulationCounts:
    """The histograms of one population, folded exactly: ``histograms`` (measure -> int64 counts
    over :func:`edges`), ``rank_sums`` (I-rank), ``visits`` (location key columns, ``visits``),
    how many ``days`` and ``uids`` they hold, and the counts of the generation metrics
    (:mod:`mobeval.metrics.generation_counts`; None when none is asked)."""

    histograms: dict[str, np.ndarray] = field(default_factory=dict)
    rank_sums: np.ndarray | None = None
    visits: pl.DataFrame | None = None
    days: int = 0
    uids: int = 0
    generation: GenerationCounts | None = None

    def merge(self, other: PopulationCounts) -> None:
        for name, counts in other.histograms.items():
            mine = self.histograms.get(name)
            self.histograms[name] = counts.copy() if mine is None else mine + counts
        if other.rank_sums is not None:
            mine = self.rank_sums
            self.rank_sums = other.rank_sums.copy() if mine is None else mine + other.rank_sums
        if other.visits is not None:
            both = other.visits if self.visits is None else pl.concat([self.visits, other.visits])
            keys = [c for c in both.columns if c != "visits"]
            self.visits = both.group_by(keys).agg(pl.col("visits").sum())
        self.days += other.days
        self.uids += other.uids
        if other.generation is not None:
            self.generation = self.generation or GenerationCounts()
            self.generation.merge(other.generation)

    def scaled(self, weight: int) -> PopulationCounts:
        """These counts as if each of their days were there ``weight`` times (a bootstrap
        resample's weight of their uids)."""
        visits = (
            None if self.visits is None else self.visits.with_columns(pl.col("visits") * weight)
        )
        return PopulationCounts(
            {name: counts * weight for name, counts in self.histograms.items()},
            None if self.rank_sums is None else self.rank_sums * weight,
            visits,
            self.days * weight,
            self.uids * weight,
            None if self.generation is None else self.generation.scaled(weight),
        )


#: The seed of the hash that draws the uid subsets of :func:`uid_percent`.
SHARE_SEED = 0


def uid_percent(uids: pl.Series) -> np.ndarray:
    """Each uid's percentile in 0..99, ``hash(uid) mod 100`` (Polars' ``Series.hash`` with
    :data:`SHARE_SEED`): the uids of percentile below ``s`` are a subset of about ``s`` % of
    them, the same whatever the chunking, the row order or the engine (for one Polars version,
    whose hash is stable), and nested (the 25 % subset lies inside the 50 % one)."""
    return (uids.hash(SHARE_SEED) % 100).cast(pl.Int64).to_numpy()


def population_counts(
    day_offsets, x, y, locations: np.ndarray, convention, sphere=0.0, cells=None
) -> PopulationCounts:
    """The histograms of the days ``day_offsets`` delimits (rows in time order) at coordinates
    ``x``, ``y`` (float64, in the coordinate unit) of ``locations`` (one int64 per point: the id
    of its location, one id per location, the same in every fold that is merged).
    ``sphere`` > 0: ``x``, ``y`` are latitudes and longitudes and distances great-circle on a
    sphere of that radius (:data:`mobeval.metrics.trajectory.EARTH_RADIUS` metres).
    ``cells``: (each point's cell, the number of cells) of the grid that ``density`` and
    ``trip`` count (None: HuMob's cells grouped by :func:`grid_counts`)."""
    codes = np.asarray(locations, dtype=np.int64)
    scale = convention.cell_size
    jumps, radius, stays, distinct, rank_sums = day_measures(
        day_offsets,
        x * scale,
        y * scale,
        codes,
        convention.squared,
        convention.last_stay,
        convention.top_k,
        sphere,
    )
    keep = convention.bins == "closed"
    if convention.fractions:
        stays, distinct = stays / SLOTS, distinct / SLOTS
    values = {"distance": jumps, "radius": radius, "duration": stays, "dailyloc": distinct}
    histograms = {
        name: bin_counts(np.asarray(v, dtype=np.float64), edges(convention, name), keep)
        for name, v in values.items()
    }
    first, last = day_offsets[:-1], day_offsets[1:] - 1
    if cells is None:
        side = convention.density_cells
        for name, at in (("density", slice(None)), ("origin", first), ("destination", last)):
            histograms[name] = grid_counts(x[at], y[at], side)
    else:
        at_cell, n_cells = cells
        for name, at in (("density", slice(None)), ("origin", first), ("destination", last)):
            histograms[name] = np.bincount(at_cell[at], minlength=n_cells).astype(np.int64)
    visits = pl.DataFrame({"location": codes}).group_by("location").len("visits")
    visits = visits.with_columns(pl.col("visits").cast(pl.Int64))
    return PopulationCounts(histograms, rank_sums, visits, day_offsets.size - 1)


#: The histograms over the cells of a 2-D grid (no order: no EMD, no edges).
GRID_HISTOGRAMS = ("density", "origin", "destination")


def _rank_counts(counts: PopulationCounts, convention, name: str) -> np.ndarray:
    """The G-rank or I-rank counts: the ``top_k`` counts rank by rank, or under
    ``rank_histogram`` the histogram of their shares over :func:`edges`."""
    k = convention.top_k
    if name == "grank":
        visits = np.sort(counts.visits["visits"].to_numpy())[::-1]
        top = np.zeros(k, dtype=np.int64)
        top[: min(k, visits.size)] = visits[:k]
        total = visits.sum()
    else:
        top, total = counts.rank_sums, counts.rank_sums.sum()
    if not convention.rank_histogram:
        return top
    return bin_counts(top / total, edges(convention, name), False)


def compared_counts(real: PopulationCounts, generated: PopulationCounts, convention, name: str):
    """The real and the generated count histograms of ``name`` (a measure, ``grank``, ``irank``,
    or a grid: ``density``, ``origin``, ``destination``, or one of
    :data:`mobeval.metrics.GENERATION_DISTRIBUTIONS`) and their bins' edges (None where the
    bins are ranks, grid cells or values; None where a generation distribution has no bins)."""
    if name in GENERATION_DISTRIBUTIONS:
        generation = convention.generation
        return compared_histograms(real.generation, generated.generation, generation, name)
    if name in ("grank", "irank"):
        c1, c2 = (_rank_counts(c, convention, name) for c in (real, generated))
        grid = edges(convention, name) if convention.rank_histogram else None
    else:
        c1, c2 = real.histograms[name], generated.histograms[name]
        grid = None if name in GRID_HISTOGRAMS else edges(convention, name)
    return c1, c2, grid


def scipy_jsd(c1: np.ndarray, c2: np.ndarray, guard: float) -> float:
    """MoveSim's ``EvalUtils.get_js_divergence`` (FIBLAB/MoveSim ``code/evaluations.py``) call for
    call, on the count histograms ``c1`` (real) and ``c2`` (generated)::

        p = c1 / (c1.sum() + guard),  q = c2 / (c2.sum() + guard),  m = (p + q) / 2
        JSD = 0.5 * scipy.stats.entropy(p, m) + 0.5 * scipy.stats.entropy(q, m)

    The same NumPy and scipy calls in the same order give MoveSim's bits, which the Numba
    :func:`mobeval.kernels.divergence.jsd` (its log is not scipy's ``rel_entr``'s) misses by a
    few ulps. scipy's ``entropy`` costs about 0.3 ms a call: a few per distribution and city."""
    from scipy.stats import entropy  # lazily: scipy.stats takes a while to import

    p = c1 / (c1.sum() + guard)
    q = c2 / (c2.sum() + guard)
    m = (p + q) / 2
    return float(0.5 * entropy(p, m) + 0.5 * entropy(q, m))


def divergence(real: PopulationCounts, generated: PopulationCounts, convention, name, how):
    """``how`` (jsd, jsdist, kl, emd) between the real and the generated population's ``name``
    (``trip``: the mean of the origins' and the destinations', as DiffTraj's ``np.mean``; a
    generation distribution: :func:`mobeval.metrics.generation_counts.generation_divergence`; a
    generation ratio: its value, ``how`` aside)."""
    if name in GENERATION_RATIOS:
        return generation_ratio(real.generation, generated.generation, name)
    if name in GENERATION_DISTRIBUTIONS:
        gen = convention.generation
        return generation_divergence(real.generation, generated.generation, gen, name, how)
    if name == "trip":
        ends = [divergence(real, generated, convention, e, how) for e in ("origin", "destination")]
        return float(np.mean(ends))
    c1, c2, grid = compared_counts(real, generated, convention, name)
    if how == "jsd" and convention.scipy_jsd:
        return scipy_jsd(c1, c2, convention.guard)
    return divergence_of(c1, c2, how, convention.scipy_jsd, grid, convention.guard)


def distribution_table(real, generated, convention, names) -> pl.DataFrame:
    """The histograms the divergences of ``names`` compare, one row per bin (``trip``: its
    ``origin`` and ``destination``): ``distribution``, ``bin`` (from 0: a rank minus one for
    G-rank / I-rank counted rank by rank, ``row * n + column`` for a grid's cells), ``left`` and
    ``right`` (the bin's edges; null for ranks and cells), and per side the count and the
    probability ``count / sum of counts`` (null when the side has no count)."""
    frames = []
    pairs = (e for n in names for e in (("origin", "destination") if n == "trip" else (n,)))
    for name in (n for n in pairs if n not in GENERATION_RATIOS):
        compared = compared_counts(real, generated, convention, name)
        if compared is None:  # no bins (MobilityGPT's np.arange over equal values)
            continue
        c1, c2, grid = compared
        bins = len(c1)
        columns = {"distribution": [name] * bins, "bin": np.arange(bins)}
        columns["left"] = [None] * bins if grid is None else grid[:-1]
        columns["right"] = [None] * bins if grid is None else grid[1:]
        for side, counts in (("real", c1), ("generated", c2)):
            total = int(counts.sum())
            columns[f"{side}_count"] = counts
            columns[f"{side}_probability"] = counts / total if total else [None] * bins
        frames.append(pl.DataFrame(columns, schema=DISTRIBUTION_SCHEMA))
    return pl.concat(frames) if frames else pl.DataFrame(schema=DISTRIBUTION_SCHEMA)


#: The columns of :func:`distribution_table` (``OUT/distributions``).
DISTRIBUTION_SCHEMA = {
    "distribution": pl.String,
    "bin": pl.Int64,
    "left": pl.Float64,
    "right": pl.Float64,
    "real_count": pl.Int64,
    "real_probability": pl.Float64,
    "generated_count": pl.Int64,
    "generated_probability": pl.Float64,
}


def movesim_divergences(real, generated, x, y, convention, how="jsd") -> dict[str, float]:
    """The six divergences of two populations of location-id sequences (2-D integer arrays, one
    day per row, as MoveSim's ``read_data_from_file`` returns them) over the coordinate table
    ``x``, ``y`` (indexed by location id), in order of :data:`MOVESIM_DISTRIBUTIONS`."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    folds = []
    for days in (np.asarray(real, dtype=np.int64), np.asarray(generated, dtype=np.int64)):
        offsets = np.arange(0, days.size + 1, days.shape[1], dtype=np.int64)
        flat = days.ravel()
        folds.append(population_counts(offsets, x[flat], y[flat], flat, convention))
    return {n: divergence(folds[0], folds[1], convention, n, how) for n in MOVESIM_DISTRIBUTIONS}
