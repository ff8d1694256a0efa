"""MobilityGPT's measures of a population on road links, folded as exact tallies.

MobilityGPT (Haydari et al., 2024; ucdrubinet/MobilityGPT 2f3fd1e ``evaluate.py``,
``TrajectoryEvaluator``) measures, beside ``od``, ``location`` and ``trip_length``:

* ``link_radius`` (``js_radius``, ``_get_radius``): each trajectory's radius of gyration over
  its distinct links in link-table order at each link's point (the first point of its
  ``coordinates``), ``mean_k((x_k - mean x)**2 + (y_k - mean y)**2)``, no square root, in the
  points' units squared (:func:`mobeval.kernels.generation.link_radii`); binned as
  ``trip_length``;
* ``gravity`` (``js_gravity``, ``_calculate_gravity``): with ``c_r`` the number of the
  population's origins plus destinations whose link lies in region ``r`` (a link in several
  regions counts in each) and ``d(r, s)`` the geodesic metres between the regions' centres,
  trajectory ``i`` from region ``o_i`` to ``d_i`` (each end's region the largest that holds its
  link) has the gravity ``g_i = c_{o_i} c_{d_i} / d(o_i, d_i)**2`` (0 where the centres
  coincide); binned in ``gravity_bins`` (MobilityGPT: 100) bins. Each population's ``c`` is its
  own. Folded as tallies of region counts and of (origin region, destination region) pairs,
  the values computed at the end;
* ``connectivity``: the share of the generated trajectories that step along edges of the link
  graph only (:func:`mobeval.kernels.generation.connected_trajectories`), the paper's
  "connectivity" (``Evaluate_trajs.py``'s ``av_conn``, 681d06a^). 2f3fd1e's ``evaluate.py``
  averages the per-trajectory shares that equal 1 (``np.mean([c for c in ... if c == 1])``),
  which is 1.0 whenever one trajectory is connected: that value says nothing, and is not
  reproduced; its graph is also undirected (``nx.from_pandas_edgelist``) and indexed by node
  position rather than link id, where the paper's is directed by link id, as here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mobeval.kernels.auc import score_keys
from mobeval.kernels.generation import connected_trajectories, link_radii, trip_lengths
from mobeval.metrics.road_network import LinkGraph, RegionTable
from mobeval.metrics.tallies import Tally

#: The measures that read the link table (beyond the ids): a tally each but ``connectivity``.
LINK_MEASURES = ("trip_length", "link_radius", "gravity", "connectivity")
#: The tallies keyed by float values (:func:`mobeval.kernels.auc.score_keys`).
FLOAT_TALLIES = ("trip_length", "link_radius")


@dataclass(frozen=True)
class Links:
    """A chunk's points on the link table: ``rows`` (each point's row in the table, -1: not in
    it), the table's ``lengths`` and points ``x``, ``y`` by row (None: no points), its
    ``regions`` and ``graph`` (None: not given)."""

    rows: np.ndarray
    lengths: np.ndarray
    x: np.ndarray | None = None
    y: np.ndarray | None = None
    regions: RegionTable | None = None
    graph: LinkGraph | None = None


def fold_links(offsets, ids, links: Links, convention, names) -> tuple[dict[str, Tally], int]:
    """The tallies the link measures ``names`` need of the trajectories ``offsets`` delimits
    over the link ``ids``, and how many of them are connected (0 unless asked)."""
    tallies = {}
    if "trip_length" in names:
        trips = trip_lengths(offsets, links.rows, links.lengths, convention.distinct_links)
        tallies["trip_length"] = Tally.of(score_keys(trips))
    if "link_radius" in names:
        radii = link_radii(offsets, links.rows, links.x, links.y)
        tallies["link_radius"] = Tally.of(score_keys(radii))
    if "gravity" in names:
        _fold_regions(tallies, ids[offsets[:-1]], ids[offsets[1:] - 1], links.regions)
    connected = 0
    if "connectivity" in names:
        graph = links.graph
        connected = connected_trajectories(offsets, graph.nodes(ids), graph.edges, graph.links.size)
    return tallies, int(connected)


def _fold_regions(tallies, origins, destinations, regions: RegionTable) -> None:
    """The tallies ``region`` (how many origins and destinations lie in each region) and
    ``region_pair`` (trajectories by origin and destination region, and their centres'
    distance, a float's bits: a third key, which the first two fix)."""
    ends = regions.rows(np.concatenate([origins, destinations]))
    starts = regions.offsets[ends]
    sizes = regions.offsets[ends + 1] - starts
    shift = np.repeat(starts - (np.cumsum(sizes) - sizes), sizes)
    tallies["region"] = Tally.of(regions.members[shift + np.arange(sizes.sum())])
    half = origins.size
    pairs = Tally.of(regions.own[ends[:half]], regions.own[ends[half:]]).table
    far = np.array([regions.distance(a, b) for a, b in pairs[:, :2].tolist()], dtype=np.float64)
    rows = np.column_stack([pairs[:, :2], far.view(np.int64), pairs[:, 2:]])
    tallies["region_pair"] = Tally(3, rows)


def gravity_values(tallies: dict[str, Tally]) -> tuple[np.ndarray, np.ndarray]:
    """(gravity values, trajectories) of one population's ``region`` and ``region_pair``
    tallies (module docstring), computed as MobilityGPT computes them: ``c_o * c_d / (d ** 2)``
    in floats, in that order."""
    regions = tallies["region"].whole()
    held = dict(zip(regions[:, 0].tolist(), regions[:, 1].tolist(), strict=True))
    pairs = tallies["region_pair"].whole()
    far = np.ascontiguousarray(pairs[:, 2]).view(np.float64)
    values = [
        float(held[a]) * float(held[b]) / (d**2) if d != 0 else 0.0
        for a, b, d in zip(pairs[:, 0].tolist(), pairs[:, 1].tolist(), far.tolist(), strict=True)
    ]
    return np.array(values, dtype=np.float64), np.ascontiguousarray(pairs[:, 3])
