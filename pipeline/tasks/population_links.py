"""The road network beside a link table (``locations="links"``): the regions of MobilityGPT's
gravity and the link graph of its connectivity, each a CSV or Parquet file named by an option.

* ``region_table``, read by :func:`read_region_table`: columns ``location`` (or ``geo_id``: a link
  id), ``region`` (an integer) and ``lat``, ``lon`` (the region's centre, degrees; the same on
  every row of a region). A link may lie in several regions, one row each, as in MobilityGPT's
  ``regions`` pickle (``region_links[r]``: the links whose line meets region ``r``'s square;
  ``links_region[link]``: the last such region in region order, the largest id). Region ids are
  the positions of MobilityGPT's ``regions`` frame.
* ``link_graph``, read by :func:`read_link_graph`: columns ``origin_id``, ``destination_id``, one
  directed edge a row, as LibCity's ``roadmap.rel`` (MobilityGPT's input).

Both are held in memory as sorted arrays (InputError naming the file, the column and the first
offending key for a missing column, a null, a non-integer id, a centre out of range or a region
with two centres). The distance between two regions' centres is geopy's
``geodesic(c1, c2).m``, the WGS-84 ellipsoid's geodesic (Karney's algorithm, geographiclib)
in kilometres times 1000, as MobilityGPT computes it; each pair once per process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from mobeval.errors import InputError

#: geopy's WGS-84 (``ELLIPSOIDS['WGS-84']``): the major axis in kilometres and the flattening.
WGS84_KM, WGS84_FLATTENING = 6378.137, 1 / 298.257223563


def geodesic_metres(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """``geopy.distance.geodesic((lat1, lon1), (lat2, lon2)).m``: the ellipsoid's ``s12`` in
    kilometres (geographiclib's ``Inverse``) times 1000."""
    from geographiclib.geodesic import Geodesic

    km = Geodesic(WGS84_KM, WGS84_FLATTENING).Inverse(lat1, lon1, lat2, lon2, Geodesic.DISTANCE)
    return km["s12"] * 1000


def _read(spec, what: str, columns: tuple[str, ...]) -> pl.DataFrame:
    """The CSV or Parquet table ``spec`` with ``columns`` (``location`` also as ``geo_id``),
    each without nulls; InputError naming the file and the column otherwise."""
    from mobeval.tasks.population_space import _read_table

    path = Path(str(spec))
    if not path.is_file():
        raise InputError(f"no such file (the {what})", path=spec)
    frame = _read_table(path, spec)
    if "location" in columns and "location" not in frame.columns and "geo_id" in frame.columns:
        frame = frame.rename({"geo_id": "location"})
    for column in columns:
        if column not in frame.columns:
            raise InputError(
                f"a {what} needs the columns {', '.join(columns)}; columns present: "
                f"{frame.columns}",
                path=spec,
                column=column,
            )
        nulls = frame[column].is_null()
        if nulls.any():
            raise InputError(
                f"{int(nulls.sum())} empty value(s)",
                path=spec,
                column=column,
                key=f"row {int(np.argmax(nulls.to_numpy()))}",
            )
    return frame.select(columns)


def _integers(frame: pl.DataFrame, spec, columns: tuple[str, ...]) -> pl.DataFrame:
    for column in columns:
        if not frame[column].dtype.is_integer():
            raise InputError(
                f"ids must be integers, found {frame[column].dtype}", path=spec, column=column
            )
    return frame.with_columns(pl.col(*columns).cast(pl.Int64))


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
        at = np.searchsorted(self.links, codes).clip(0, max(self.links.size - 1, 0))
        missing = self.links[at] != codes
        if missing.any():
            raise InputError(
                f"{np.unique(codes[missing]).size} origin or destination link(s) of the "
                "trajectories in no region of the table (gravity counts each trajectory's "
                "regions)",
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


def read_region_table(spec) -> RegionTable:
    """The region table at ``spec`` (module docstring)."""
    frame = _read(spec, "region table", ("location", "region", "lat", "lon"))
    frame = _integers(frame, spec, ("location", "region"))
    for column, top in (("lat", 90), ("lon", 180)):
        values = frame[column].cast(pl.Float64, strict=False)
        bad = values.is_null() | ~values.is_between(-top, top)
        if bad.any():
            raise InputError(
                f"{int(bad.sum())} value(s) not a number in [-{top}, {top}]",
                path=spec,
                column=column,
                key=frame["region"].filter(bad)[0],
            )
        frame = frame.with_columns(values)
    centres = frame.select("region", "lat", "lon").unique().sort("region")
    twice = centres.filter(pl.col("region").is_duplicated())
    if twice.height:
        raise InputError(
            "a region with two centres", path=spec, column="lat, lon", key=twice["region"][0]
        )
    pairs = frame.select("location", "region").unique().sort("location", "region")
    links, starts = np.unique(pairs["location"].to_numpy(), return_index=True)
    offsets = np.append(starts, pairs.height).astype(np.int64)
    members = pairs["region"].to_numpy()
    return RegionTable(
        links=links,
        own=members[offsets[1:] - 1],
        offsets=offsets,
        members=members,
        ids=centres["region"].to_numpy(),
        lat=centres["lat"].to_numpy(),
        lon=centres["lon"].to_numpy(),
        label=str(spec),
    )


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


def read_link_graph(spec) -> LinkGraph:
    """The link graph at ``spec`` (module docstring)."""
    ends = ("origin_id", "destination_id")
    frame = _integers(_read(spec, "link graph", ends), spec, ends)
    origin, destination = (frame[c].to_numpy() for c in ends)
    links = np.unique(np.concatenate([origin, destination]))
    n = links.size
    keys = np.searchsorted(links, origin) * n + np.searchsorted(links, destination)
    return LinkGraph(links=links, edges=np.unique(keys))
