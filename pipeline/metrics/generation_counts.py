"""The generation metrics of :mod:`mobeval.metrics.generation`, folded exactly chunk by chunk.

One population's :class:`GenerationCounts` holds integer counts only: the jump histogram (its
edges fixed by the convention), and tallies ``value -> count`` of the location ids of every point,
of the first and last points, of the trajectory lengths (points), of the trip lengths, and of the
trajectories' hashes (:func:`mobeval.kernels.generation.trajectory_hashes`, exact and snapped to
the ``tolerance`` grid). Tallies merge by adding counts, so the values do not depend on the
chunking or the row order. The trajectories are held as their hashes only (two int64), never as
Python objects; ``duplicate_ratio`` and ``memorised`` read the ``trajectory`` tally of the
generated side (and ``memorised`` the real side's), ``memorised_near`` the ``near`` ones. Memory
is bounded whatever the population: a :class:`~mobeval.metrics.tallies.Tally` spills its rows
beyond :data:`~mobeval.metrics.tallies.TALLY_ROWS` (8 MiB of hashes) to sorted runs on disk and
reads them back a block of keys at a time, so the memory does not grow with the number of
trajectories: it is the histograms' and the location table's (the ids' tallies: a row a location).

The histograms that the divergences compare are binned from the tallies at the end, where both
sides are known (MobilityGPT's bins span both sides' values). With ``x`` the generated and ``r``
the real trajectories (N generated)::

    duplicate_ratio = #{x_i : x_i = x_j for some j != i} / N         (TrajGDM's most_common / N)
    memorised       = #{x_i : x_i = r_k for some k} / N
    memorised_near  = #{x_i : floor(x_i / tol) = floor(r_k / tol) for some k} / N   (per point)
    connectivity    = #{x_i : every step of x_i an edge of the link graph} / N

On road links, the trip lengths, radii and regions come from the link table
(:mod:`mobeval.metrics.generation_links`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mobeval.kernels.divergence import emd, js_distance, jsd, kl
from mobeval.kernels.generation import SEEDS, jumps, trajectory_hashes
from mobeval.kernels.mobility import bin_counts, weighted_bins
from mobeval.kernels.tallies import key_values
from mobeval.metrics import GENERATION_DISTRIBUTIONS, GENERATION_RATIOS
from mobeval.metrics.generation import (
    GRID_SIDE,
    MOBILITYGPT,
    TRAJGDM,
    GenerationConvention,
)
from mobeval.metrics.generation_links import (
    FLOAT_TALLIES,
    LINK_MEASURES,
    Links,
    fold_links,
    gravity_values,
)
from mobeval.metrics.tallies import Tally, aligned_blocks

#: Which tally each id distribution reads (``od``: origins and destinations pooled).
ID_TALLIES = {
    "location": ("location",),
    "origin_location": ("origin",),
    "destination_location": ("destination",),
    "od": ("origin", "destination"),
}
#: The tallies of the trajectories' hashes each ratio reads.
HASH_TALLIES = {
    "duplicate_ratio": "trajectory",
    "memorised": "trajectory",
    "memorised_near": "near",
}


#: The distributions of real values (not ids nor counts of points), in equal bins.
CONTINUOUS = ("trip_length", "link_radius", "gravity")


@dataclass
class GenerationCounts:
    """One population's counts (module docstring): ``jump`` histogram, ``tallies`` by name
    (``location``, ``origin``, ``destination``, ``length``, ``region``: keyed by the value;
    ``trip_length``, ``link_radius``: by :func:`mobeval.kernels.auc.score_keys` of the value;
    ``trajectory``, ``near``: by the two hashes; ``region_pair``: by the origin's and the
    destination's regions and their distance's bits), how many ``trajectories``, and how many of
    them are ``connected``."""

    jump: np.ndarray | None = None
    tallies: dict[str, Tally] = field(default_factory=dict)
    trajectories: int = 0
    connected: int = 0

    def merge(self, other: GenerationCounts) -> None:
        if other.jump is not None:
            self.jump = other.jump.copy() if self.jump is None else self.jump + other.jump
        for name, tally in other.tallies.items():
            self.tallies.setdefault(name, tally.empty()).add(tally)
        self.trajectories += other.trajectories
        self.connected += other.connected

    def scaled(self, weight: int) -> GenerationCounts:
        """These counts as if each trajectory were there ``weight`` times (a bootstrap
        resample's weight of its uid: ``drawn`` unchanged, so that the copies a resample draws
        are not duplicates)."""
        return GenerationCounts(
            None if self.jump is None else self.jump * weight,
            {k: t.scaled(weight) for k, t in self.tallies.items()},
            self.trajectories * weight,
            self.connected * weight,
        )


def jump_edges(convention: GenerationConvention) -> np.ndarray:
    """The jump histogram's edges under the convention's binning."""
    top, n = convention.jump_max, convention.jump_bins
    if convention.binning == "arange":
        return np.arange(0, top, float(top) / n)
    return np.linspace(0, top, n + 1)


def _snapped(v: np.ndarray, tolerance: float) -> np.ndarray:
    return np.floor(v / tolerance).astype(np.int64)


def generation_counts(
    offsets, x, y, ids, convention, names, links=None, sphere=0.0
) -> GenerationCounts:
    """The counts ``names`` need (distributions and ratios of :mod:`mobeval.metrics`) of the
    trajectories ``offsets`` delimits, at coordinates ``x``, ``y`` (float64) of the location
    ``ids`` (int64, one per point); ``links``: (each point's row in the link table or -1, the
    table's lengths), which ``trip_length`` needs; ``sphere`` > 0: ``x``, ``y`` are latitudes
    and longitudes, jumps great-circle on a sphere of that radius; ``links``
    (:class:`mobeval.metrics.generation_links.Links`): the link table's, which the
    :data:`mobeval.metrics.generation_links.LINK_MEASURES` need."""
    names = set(names)
    counts = GenerationCounts(trajectories=offsets.size - 1)
    if "jump" in names:
        values = jumps(offsets, x, y, convention.float32, sphere)
        keep = convention.binning == "all"
        counts.jump = bin_counts(values, jump_edges(convention), keep)
    tallies = counts.tallies
    first, last = offsets[:-1], offsets[1:] - 1
    pooled = {t for name in names for t in ID_TALLIES.get(name, ())}
    for name, at in (("location", slice(None)), ("origin", first), ("destination", last)):
        if name in pooled:
            tallies[name] = Tally.of(ids[at])
    if "length" in names:
        tallies["length"] = Tally.of(np.diff(offsets))
    on_links = [name for name in names if name in LINK_MEASURES]
    if on_links:
        link_tallies, counts.connected = fold_links(offsets, ids, links, convention, on_links)
        tallies |= link_tallies
    hashed = {HASH_TALLIES[name] for name in names if name in HASH_TALLIES}
    for name in hashed:
        if name == "trajectory":  # the coordinates' bits (+ 0.0: -0.0 is 0.0)
            keys = tuple((v + 0.0).view(np.int64) for v in (x, y))
        else:
            keys = tuple(_snapped(v, convention.tolerance) for v in (x, y))
        a, b = trajectory_hashes(offsets, *keys, *SEEDS)
        tallies[name] = Tally.of(a, b)
    return counts


def grid_generation_counts(offsets, x, y, convention, names) -> GenerationCounts | None:
    """The counts of :func:`generation_counts` that ``names`` asks for (None: none) on the HuMob
    grid: cell (x, y), 1..200, is location ``(x - 1) * 200 + (y - 1)`` (TrajGDM's ``x * maxi +
    y`` with maxi 200 on 0-based cells, its jumps the same)."""
    names = [n for n in names if n in GENERATION_DISTRIBUTIONS + GENERATION_RATIOS]
    if not names:
        return None
    ids = (x.astype(np.int64) - 1) * GRID_SIDE + (y.astype(np.int64) - 1)
    xf, yf = x.astype(np.float64), y.astype(np.float64)
    return generation_counts(offsets, xf, yf, ids, convention, names)


def _pooled(counts: GenerationCounts, names: tuple[str, ...]) -> Tally:
    """The tallies ``names`` of ``counts`` as one (``od``: the origins' and destinations')."""
    if len(names) == 1:
        return counts.tallies[names[0]]
    tally = Tally(1)
    for name in names:
        tally.add(counts.tallies[name])
    return tally


def _values(keys: np.ndarray, name: str) -> np.ndarray:
    """The values a tally's keys stand for (float trip lengths and radii, else the integers)."""
    return key_values(keys) if name in FLOAT_TALLIES else keys


def _binned(tally: Tally, grid: np.ndarray, keep: bool, name: str) -> np.ndarray:
    """The counts of ``tally``'s values in the bins ``grid``, a block of its rows at a time."""
    counts = np.zeros(grid.size - 1, dtype=np.int64)
    for (rows,) in aligned_blocks([tally]):
        values = _values(rows[:, 0], name).astype(np.float64)
        counts += weighted_bins(values, np.ascontiguousarray(rows[:, 1]), grid, keep)
    return counts


def _edges(lo, hi, convention: GenerationConvention, name: str) -> np.ndarray | None:
    """The bins of an id or length distribution over values lo..hi (None: one per value)."""
    bins = convention.gravity_bins if name == "gravity" else convention.bins
    if convention.binning == "arange":
        return np.arange(lo, hi, float(hi - lo) / bins) if hi > lo else None
    if convention.binning == "range":
        return np.linspace(0, convention.locations if name in ID_TALLIES else hi, bins + 1)
    return np.linspace(lo, hi, bins + 1) if name in CONTINUOUS else None


def compared_histograms(real, generated, convention, name):
    """(real counts, generated counts, edges or None) of distribution ``name``; None under
    ``arange`` binning when every value is the same (``np.arange(lo, lo, 0.0)``: no bins, where
    MobilityGPT raises ZeroDivisionError). Binned, each side's tally is read a block at a time
    (:func:`mobeval.metrics.tallies.aligned_blocks`); one bin per value, whole (it is the
    histogram). ``gravity``'s values are computed from the region tallies, whole (one row per
    pair of regions)."""
    if name == "jump":
        return real.jump, generated.jump, jump_edges(convention)
    if name == "gravity":
        return _gravity_histograms(real, generated, convention)
    tallies = ID_TALLIES.get(name, (name,))
    t1, t2 = _pooled(real, tallies), _pooled(generated, tallies)
    ends = [end for t in (t1, t2) if (bounds := t.bounds()) is not None for end in bounds]
    lo, hi = (_values(key, name).item() for key in (min(ends), max(ends)))
    grid = _edges(lo, hi, convention, name)
    if grid is None and convention.binning == "arange":
        return None
    if grid is None:
        r1, r2 = t1.whole(), t2.whole()
        every = np.union1d(r1[:, 0], r2[:, 0])
        out = []
        for rows in (r1, r2):
            c = np.zeros(every.size, dtype=np.int64)
            c[np.searchsorted(every, rows[:, 0])] = rows[:, 1]
            out.append(c)
        return out[0], out[1], None
    keep = convention.binning == "all"
    return _binned(t1, grid, keep, name), _binned(t2, grid, keep, name), grid


def _gravity_histograms(real, generated, convention):
    """:func:`compared_histograms` of ``gravity`` (:func:`gravity_values` of each side)."""
    (v1, n1), (v2, n2) = gravity_values(real.tallies), gravity_values(generated.tallies)
    both = np.concatenate([v1, v2])
    grid = _edges(both.min().item(), both.max().item(), convention, "gravity")
    if grid is None:  # arange binning, every value the same
        return None
    keep = convention.binning == "all"
    return weighted_bins(v1, n1, grid, keep), weighted_bins(v2, n2, grid, keep), grid


def generation_divergence(real, generated, convention, name, how) -> float:
    """``how`` (jsd, jsdist, kl, emd) between the real and the generated histograms of
    ``name``; ``density``: each divided by its bins' widths and its sum first, as
    ``np.histogram(..., density=True)`` returns it (``n / db / n.sum()``); NaN where
    :func:`compared_histograms` has no bins."""
    compared = compared_histograms(real, generated, convention, name)
    if compared is None:
        return float("nan")
    c1, c2, grid = compared
    if convention.density and grid is not None:
        db = np.array(np.diff(grid), float)
        c1, c2 = c1 / db / c1.sum(), c2 / db / c2.sum()
    return divergence_of(c1, c2, how, convention.scipy, grid)


def divergence_of(c1, c2, how, scipy, grid=None, guard=0.0) -> float:
    """``how`` between two histograms over the bins ``grid`` (None: unit width);
    ``scipy``: the JS distance by ``scipy.spatial.distance.jensenshannon``."""
    if how == "jsdist":
        if scipy:
            from scipy.spatial.distance import jensenshannon

            return float(jensenshannon(c1, c2))
        return float(js_distance(c1, c2))
    if how == "jsd":
        return float(jsd(c1, c2, guard))
    if how == "kl":
        return float(kl(c1, c2, guard))
    return float(emd(c1, c2, 1.0 if grid is None else grid[1] - grid[0]))


def generation_ratio(real, generated, name) -> float:
    """``duplicate_ratio``, ``memorised`` or ``memorised_near`` (module docstring), over the
    hash tallies (:meth:`mobeval.metrics.tallies.Tally.copies`: a block of keys at a time)."""
    if not generated.trajectories:
        return float("nan")
    if name == "connectivity":
        return generated.connected / generated.trajectories
    mine = generated.tallies[HASH_TALLIES[name]]
    if name == "duplicate_ratio":
        return mine.copies("duplicates") / generated.trajectories
    return mine.copies("matched", real.tallies[HASH_TALLIES[name]]) / generated.trajectories


def _population(rows, coordinates, convention, names, links=None) -> GenerationCounts:
    """The counts of trajectories given as sequences of location ids (``coordinates``: ids ->
    (x, y); ``links``: (ids -> link-table rows, the table's lengths))."""
    offsets = np.cumsum([0] + [len(r) for r in rows], dtype=np.int64)
    ids = np.concatenate([np.asarray(r, dtype=np.int64) for r in rows])
    point_links = None if links is None else Links(links[0](ids), links[1])
    return generation_counts(offsets, *coordinates(ids), ids, convention, names, point_links)


def trajgdm_metrics(real, generated, maxi: int, num_loc: int) -> dict[str, float]:
    """TrajGDM's ``Evaluation_metrics(maxi, num_loc).js_traj(real, generated)`` on two 2-D
    arrays of location ids (one trajectory per row; id ``x * maxi + y``), named as here:
    ``jump``, ``location``, ``origin_location``, ``destination_location`` (JS distances) and
    ``duplicate_ratio``."""
    convention = GenerationConvention(**{**TRAJGDM.__dict__, "locations": num_loc})
    names = ("jump", "location", "origin_location", "destination_location")

    def cells(ids):  # TrajGDM's distance_array: x = id // maxi, y = id % maxi
        return (ids // maxi).astype(np.float64), (ids % maxi).astype(np.float64)

    asked = (*names, "duplicate_ratio")
    folds = [_population(rows, cells, convention, asked) for rows in (real, generated)]
    out = {n: generation_divergence(*folds, convention, n, "jsdist") for n in names}
    return out | {"duplicate_ratio": generation_ratio(*folds, "duplicate_ratio")}


def mobilitygpt_metrics(test, synthetic, link_ids, link_lengths) -> dict[str, float]:
    """MobilityGPT's ``js_od``, ``js_link`` and ``js_length`` (``TrajectoryEvaluator``'s
    ``_calculate_distribution_metrics`` and ``_calculate_trajectory_metrics``) of two lists of
    link-id trajectories over the link table ``link_ids`` -> ``link_lengths`` (its ``geo_id``
    and ``length`` columns, in its row order), named ``od``, ``location``, ``trip_length``."""
    link_ids = np.asarray(link_ids, dtype=np.int64)
    order = np.argsort(link_ids, kind="stable")

    def rows(ids):
        if not link_ids.size:
            return np.full(ids.size, -1, dtype=np.int64)
        at = np.searchsorted(link_ids, ids, sorter=order).clip(0, link_ids.size - 1)
        return np.where(link_ids[order[at]] == ids, order[at], -1)

    links = (rows, np.asarray(link_lengths, dtype=np.float64))
    names = ("od", "location", "trip_length")

    def nowhere(ids):  # no coordinates: none of the three needs them
        return np.zeros(ids.size), np.zeros(ids.size)

    folds = [_population(t, nowhere, MOBILITYGPT, names, links) for t in (test, synthetic)]
    return {n: generation_divergence(*folds, MOBILITYGPT, n, "jsdist") for n in names}
