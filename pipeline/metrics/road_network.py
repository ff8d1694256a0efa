"""The road network beside a link table, as MobilityGPT's gravity and connectivity read it
(:mod:`mobeval.metrics.generation_links`; :mod:`mobeval.tasks.population_links` reads the files):
the regions of the links, with their centres, and the directed graph of the links. Both are held
as sorted arrays. The distance between two regions' centres is geopy's ``geodesic(c1, c2).m``,
the WGS-84 ellipsoid's geodesic (Karney's algorithm, geographiclib) in kilometres times 1000, as
MobilityGPT computes it; each pair once per process.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mobeval.errors import InputError

#: geopy's WGS-84 (``ELLIPSOIDS['WGS-84']``): the major axis in kilometres and the flattening.
WGS84_KM, WGS84_FLATTENING = 6378.137, 1 / 298.257223563


def geodesic_metres(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """``geopy.distance.geodesic((lat1, lon1), (lat2, lon2)).m``: the ellipsoid's ``s12`` in
    kilometres (geographiclib's ``Inverse``) times 1000."""
    from geographiclib.geodesic import Geodesic

    km = Geodesic(WGS84_KM, WGS84_FLATTENING).Inverse(lat1, lon1, lat2, lon2, Geodesic.DISTANCE)
    return km["s12"] * 1000


@dataclass(frozen=True)
class RegionTable:
    """Regions of links (module docstring): ``links`` (sorted, distinct) and ``own`` (each one's
    region: the largest id that holds it), membership ``offsets`` into ``members`` (the regions
    of ``links[i]``: ``members[offsets[i]:offsets[i + 1]]``), the regions' ids (sorted) and
    centres ``lat``, ``lon``; ``label`` the file."""

    links: np.ndarray
    own: np.ndarray
    offsets: np.ndarray
    members: np.ndarray
    ids: np.ndarray
    lat: np.ndarray
    lon: np.ndarray
    label: str
    distances: dict = field(default_factory=dict, compare=False, repr=False)

    def rows(self, codes: np.ndarray) -> np.ndarray:
        """Each link's index in ``links``; InputError naming the table and the first link it
        does not hold."""
        at = np.searchsorted(self.links, codes).clip(0, self.links.size - 1)
        missing = self.links[at] != codes
        if missing.any():
            raise InputError(
                "a trajectory starts or ends on a link in no region of the table (gravity "
                "counts each trajectory's regions)",
                path=self.label,
                column="location",
                key=int(codes[missing][0]),
            )
        return at

    def distance(self, a: int, b: int) -> float:
        """The geodesic metres between the centres of regions ``a`` and ``b`` (cached)."""
        if (a, b) not in self.distances:
            i, j = np.searchsorted(self.ids, [a, b])
            pair = (self.lat[i], self.lon[i], self.lat[j], self.lon[j])
            self.distances[a, b] = geodesic_metres(*(float(v) for v in pair))
        return self.distances[a, b]


@dataclass(frozen=True)
class LinkGraph:
    """Directed edges between links: the links (sorted, distinct) and the sorted keys
    ``origin * n + destination`` of the edges over their indices (n: how many links)."""

    links: np.ndarray
    edges: np.ndarray

    def nodes(self, codes: np.ndarray) -> np.ndarray:
        """Each link's index in ``links``, -1 where the graph does not hold it."""
        if not self.links.size:
            return np.full(codes.size, -1, dtype=np.int64)
        at = np.searchsorted(self.links, codes).clip(0, self.links.size - 1)
        return np.where(self.links[at] == codes, at, -1)
