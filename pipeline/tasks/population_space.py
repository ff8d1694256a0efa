"""The location space of a trajectory population: where a row's point lies.

A population's histograms (:mod:`mobeval.metrics.population`) need, for each point, planar
coordinates ``x``, ``y`` (float64) and a location code (equal codes: the same location). Each
space (``locations`` option, :data:`mobeval.metrics.trajectory.SPACES`) gives them from its
own columns:

* ``grid``: integer grid cells ``x``, ``y`` (HuMob's 200 x 200 cells); the code is the cell
  (:func:`cell_ids`);
* ``ids``: an integer ``location`` column and a location table (``location_table`` option):
  id -> two coordinates, read by :func:`read_location_table`; the code is the id. MoveSim's
  ``gps`` file is such a table (``lat lon`` a line, the id its line number from 0; MoveSim's
  ``get_gps`` reads the first number as X and the second as Y), and so is a CSV or Parquet file
  with columns ``location`` and ``x``, ``y`` or ``lat``, ``lon``.

* ``links``: an integer ``location`` column of road-link ids and a link table
  (``location_table`` option), read by :func:`read_link_table`: a CSV or Parquet file with
  columns ``location`` (or ``geo_id``, MobilityGPT's name), ``length`` and optionally a point of
  each link (``x``, ``y`` or ``lat``, ``lon``), as MobilityGPT's ``geo`` table; the code is the
  id, and a trajectory's trip length sums its links' lengths (``trip_length``). A link id the
  table does not hold is an error, or (``unknown_links="zero"``, MobilityGPT's
  ``geo[geo['geo_id'].isin(traj)]``) a link of length 0 that still counts as a location.

* ``gps``: columns ``lat``, ``lon`` (degrees) and cells of a box the user names
  (``gps_grid``, :func:`parse_gps_grid`); the code is the cell, which ``density`` and ``trip``
  count; a point outside the box is counted (:attr:`GpsSpace.outside`).

Distances are planar in the coordinates' units (MoveSim's table: degrees), or with
``distance="haversine"`` great-circle metres of latitudes and longitudes (``Space.sphere``, the
radius, passed to the kernels). A table is held in memory (sorted ids and their coordinates): a
run's memory is bounded by the table and the histograms. The report's density maps read
:func:`density_map`: each side's visits per location (folded with the histograms), placed at
the location's coordinates (:meth:`Space.places`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from mobeval.errors import ConfigError, InputError
from mobeval.io.text import open_binary
from mobeval.metrics import GENERATION_DISTRIBUTIONS, GENERATION_RATIOS
from mobeval.metrics.generation import GRID_SIDE
from mobeval.metrics.road_network import LinkGraph, RegionTable
from mobeval.metrics.trajectory import EARTH_RADIUS
from mobeval.tasks.population_links import (
    checked_numbers,
    read_link_graph,
    read_region_table,
    read_table,
    table_with,
)

if TYPE_CHECKING:
    from mobeval.metrics.population import PopulationCounts

#: Largest |x| or |y| scored even with out_of_grid="score" (999, the mask value, is fine): the
#: kernels index tables by squared distances, which must stay within int64.
MAX_COORD = 1_000_000_000


def cell_ids(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """One location id per cell, ``(x + M) * (2M + 1) + (y + M)`` with M = :data:`MAX_COORD`
    (distinct for |x|, |y| <= M, below 2**62), computed in place in one int64 array."""
    ids = x + MAX_COORD
    ids *= 2 * MAX_COORD + 1
    ids += y
    ids += MAX_COORD
    return ids


#: The columns of a location table, by the names of its two coordinates.
TABLE_COORDINATES = (("x", "y"), ("lat", "lon"))


#: HuMob's grid: cells 1..200 in x and y.
GRID_MIN, GRID_MAX = 1, GRID_SIDE
OFF_GRID = (
    (pl.col("x") < GRID_MIN)
    | (pl.col("x") > GRID_MAX)
    | (pl.col("y") < GRID_MIN)
    | (pl.col("y") > GRID_MAX)
)


@dataclass(frozen=True)
class Points:
    """A frame's points: coordinates ``x``, ``y`` (float64; latitude and longitude under
    a sphere), location ``codes`` (int64), on road links each point's row in the link
    table (-1: not in it), and on GPS points (each point's cell, the number of cells)."""

    x: np.ndarray
    y: np.ndarray
    codes: np.ndarray
    rows: np.ndarray | None = None
    cells: tuple[np.ndarray, int] | None = None


@dataclass(frozen=True)
class Space:
    """A location space: the columns it reads (``floats``: kept as floats), the sphere of its
    great-circle distances (``sphere``, metres; 0: planar distances), the rows outside its grid
    (``outside``, None: none can be) and what they are (``outside_text``)."""

    columns: tuple[str, ...] = ("location",)
    floats: tuple[str, ...] = ()
    sphere: float = 0.0
    outside = None
    outside_text = ""

    def places(self, codes: np.ndarray) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
        """Where the locations ``codes`` lie, for a map: their ids (None: the codes are cells,
        not ids) and their ``x``, ``y`` (NaN where the space has no point for them)."""
        nan = np.full(codes.size, np.nan)
        return codes, nan, nan

    def generation(self, offsets, points: Points, convention, names, links=None):
        """The generation counts of ``names`` (None: none asked) over the points' codes."""
        from mobeval.metrics.generation_counts import generation_counts

        names = [n for n in names if n in GENERATION_DISTRIBUTIONS + GENERATION_RATIOS]
        if not names:
            return None
        x, y, codes = points.x, points.y, points.codes
        return generation_counts(offsets, x, y, codes, convention, names, links, self.sphere)


@dataclass(frozen=True)
class GridSpace(Space):
    """HuMob's grid cells: columns ``x``, ``y``, the code the cell."""

    columns: tuple[str, ...] = ("x", "y")
    outside = OFF_GRID
    outside_text = (
        f"x or y outside {GRID_MIN}..{GRID_MAX} (999 is the HuMob mask value); "
        "out_of_grid='score' scores them as the reference does"
    )

    def points(self, frame: pl.DataFrame, path) -> Points:
        x, y = (frame[c].to_numpy() for c in self.columns)
        return Points(x.astype(np.float64), y.astype(np.float64), cell_ids(x, y))

    def places(self, codes: np.ndarray) -> tuple[None, np.ndarray, np.ndarray]:
        """The cells of :func:`cell_ids`' codes (its inverse)."""
        side = 2 * MAX_COORD + 1
        return None, (codes // side - MAX_COORD) * 1.0, (codes % side - MAX_COORD) * 1.0

    def generation(self, offsets, points: Points, convention, names, links=None):
        """The generation counts of ``names`` (TrajGDM's ids of the grid's cells)."""
        from mobeval.metrics.generation_counts import grid_generation_counts

        return grid_generation_counts(offsets, points.x, points.y, convention, names)


def _rows_of(ids: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Each code's index in the sorted ``ids``, -1 where it is not there."""
    if not ids.size:
        return np.full(codes.size, -1, dtype=np.int64)
    at = np.searchsorted(ids, codes).clip(0, ids.size - 1)
    return np.where(ids[at] == codes, at, -1)


def _unknown_error(frame: pl.DataFrame, unknown: np.ndarray, what: str, label: str, path):
    row = frame.row(int(np.argmax(unknown)), named=True)
    return InputError(
        f"{int(unknown.sum())} row(s) whose location is not in the {what} {label} "
        f"(the first: location {row['location']})",
        path=path,
        column="location",
        key=(row["uid"], row["d"], row["t"]),
    )


@dataclass(frozen=True)
class LocationTable(Space):
    """Location ids (sorted, distinct) and their coordinates; ``label`` is the table's path;
    ``lat_lon``: the coordinates are latitude and longitude."""

    ids: np.ndarray = None
    x: np.ndarray = None
    y: np.ndarray = None
    label: str = ""
    lat_lon: bool = False

    def points(self, frame: pl.DataFrame, path) -> Points:
        """The points of ``frame``'s ``location`` column; an id the table does not hold is an
        InputError naming the input, the column and the first such row's (uid, d, t)."""
        codes = frame["location"].to_numpy().astype(np.int64, copy=False)
        at = _rows_of(self.ids, codes)
        if (at < 0).any():
            raise _unknown_error(frame, at < 0, "location table", self.label, path)
        return Points(self.x[at], self.y[at], codes)

    def places(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The table's coordinates of the ids ``codes`` (every one in the table)."""
        at = _rows_of(self.ids, codes)
        return codes, self.x[at], self.y[at]


#: The measures that need each link's point (a link table with x, y or lat, lon).
COORDINATE_METRICS = (
    "distance",
    "radius",
    "density",
    "trip",
    "jump",
    "memorised_near",
    "link_radius",
)


@dataclass(frozen=True)
class LinkTable(LocationTable):
    """Road links: ids (sorted, distinct), the row of each in the file (``rows``), the lengths
    and points in file order (``x``, ``y`` None: no points), what an unknown id is, and the
    ``regions`` and ``graph`` of :mod:`mobeval.tasks.population_links` (None: not given)."""

    rows: np.ndarray = None
    lengths: np.ndarray = None
    unknown: str = "error"
    regions: RegionTable | None = None
    graph: LinkGraph | None = None

    def points(self, frame: pl.DataFrame, path) -> Points:
        """The points of ``frame``'s link ids: the link's point, or (no points in the table) the
        id as ``x`` and 0 as ``y``, which the trajectories' hashes read; an unknown id is an
        InputError naming the input, the column and the first such id, or under
        ``unknown="zero"`` a link of length 0 at (0, 0)."""
        codes = frame["location"].to_numpy().astype(np.int64, copy=False)
        at = _rows_of(self.ids, codes)
        unknown = at < 0
        if unknown.any() and self.unknown == "error":
            raise _unknown_error(frame, unknown, "link table", self.label, path)
        rows = np.where(unknown, -1, self.rows[at])
        if self.x is None:
            return Points(codes.astype(np.float64), np.zeros(codes.size), codes, rows)
        x, y = (np.where(unknown, 0.0, v[rows]) for v in (self.x, self.y))
        return Points(x, y, codes, rows)

    def places(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each link's point (NaN: a table without points, or an id not in it)."""
        at = _rows_of(self.ids, codes)
        if self.x is None:
            return Space.places(self, codes)
        row = np.where(at < 0, 0, self.rows[np.maximum(at, 0)])
        x, y = (np.where(at < 0, np.nan, v[row]) for v in (self.x, self.y))
        return codes, x, y

    def generation(self, offsets, points: Points, convention, names, links=None):
        """The generation counts of ``names`` over the link ids, trip lengths, radii, regions and
        edges from the table and its network."""
        from mobeval.metrics.generation_links import Links

        links = Links(points.rows, self.lengths, self.x, self.y, self.regions, self.graph)
        return super().generation(offsets, points, convention, names, links)


def read_link_table(spec, unknown: str = "error") -> LinkTable:
    """The link table at ``spec``: CSV or Parquet, columns ``location`` or ``geo_id`` (distinct
    integers), ``length`` (finite, >= 0) and optionally ``x``, ``y`` or ``lat``, ``lon``
    (finite); rows in any order (MobilityGPT sums a trip's lengths in the table's row order,
    which is kept). InputError naming the file, the column and the first offending id."""
    frame = table_with(spec, "link table", ("location", "length"))
    names = next((n for n in TABLE_COORDINATES if all(c in frame.columns for c in n)), None)
    wanted = {"length": "length"} | dict(zip(names or (), "xy", strict=False))
    frame = frame.select("location", *(pl.col(n).alias(o) for n, o in wanted.items()))
    frame = frame.with_row_index("row").with_columns(pl.col("row").cast(pl.Int64))
    checked = _checked(frame, str(spec), tuple(wanted.values()))
    negative = checked.filter(pl.col("length") < 0)
    if negative.height:
        raise InputError(
            f"{negative.height} negative length(s)",
            path=spec,
            column="length",
            key=negative["location"][0],
        )
    in_file = checked.sort("row")
    x, y = (in_file[c].to_numpy() if names else None for c in ("x", "y"))
    return LinkTable(
        ids=checked["location"].to_numpy(),
        x=x,
        y=y,
        label=str(spec),
        lat_lon=names == ("lat", "lon"),
        rows=checked["row"].to_numpy(),
        lengths=in_file["length"].to_numpy(),
        unknown=unknown,
    )


def _two_numbers(path: Path) -> bool:
    """Whether the first line of ``path`` is two numbers apart by white space (MoveSim's gps)."""
    with open_binary(path) as stream:
        fields = stream.readline(1 << 16).split()
    try:
        return len(fields) == 2 and all(np.isfinite(float(f)) for f in fields)
    except ValueError:
        return False


def read_location_table(spec) -> LocationTable:
    """The location table at ``spec``: MoveSim's ``gps`` file (two numbers a line, no header;
    the id is the line number from 0; gzipped or not: ``gps.gz``), or a CSV / Parquet file
    with columns ``location`` and ``x``, ``y`` or ``lat``, ``lon``. Ids must be distinct
    integers, coordinates finite (InputError naming the file, the column and the first
    offending id)."""
    path = Path(str(spec))
    if not path.is_file():
        raise InputError("no such file (the location table)", path=spec)
    if _two_numbers(path):
        try:
            table = np.loadtxt(path, dtype=np.float64, ndmin=2)
        except ValueError as error:
            raise InputError(f"not a table of two numbers a line ({error})", path=spec) from None
        if table.shape[1] != 2:
            raise InputError("not a table of two numbers a line", path=spec)
        frame = pl.DataFrame(
            {"location": np.arange(len(table)), "x": table[:, 0], "y": table[:, 1]}
        )
        lat_lon = True  # MoveSim's gps: lat lon a line
    else:
        frame, lat_lon = _table_file(path, spec)
    frame = _checked(frame, str(spec), ("x", "y"))
    ids, x, y = (frame[c].to_numpy() for c in ("location", "x", "y"))
    return LocationTable(ids=ids, x=x, y=y, label=str(spec), lat_lon=lat_lon)


def _table_file(path: Path, spec) -> tuple[pl.DataFrame, bool]:
    """Columns location, x, y of a CSV or Parquet location table, and whether they were lat,
    lon."""
    frame = read_table(path, spec)
    if "location" not in frame.columns:
        raise InputError(
            f"a location table needs the column; columns present: {frame.columns}",
            path=spec,
            column="location",
        )
    for names in TABLE_COORDINATES:
        if all(name in frame.columns for name in names):
            return frame.select(
                "location", *(pl.col(n).alias(o) for n, o in zip(names, "xy", strict=True))
            ), names == ("lat", "lon")
    raise InputError(
        f"a location table needs x, y or lat, lon; columns present: {frame.columns}",
        path=spec,
        column="x",
    )


def _checked(frame: pl.DataFrame, label: str, numbers: tuple[str, ...]) -> pl.DataFrame:
    """``frame`` with integer ids ``location`` (distinct) and finite ``numbers`` (Float64),
    sorted by id."""
    if not frame["location"].dtype.is_integer():
        raise InputError(
            f"ids must be integers, found {frame['location'].dtype}", path=label, column="location"
        )
    for column in numbers:
        frame = checked_numbers(frame, label, column, "location")
    frame = frame.with_columns(pl.col("location").cast(pl.Int64)).sort("location")
    twice = frame.filter(pl.col("location").is_duplicated())
    if twice.height:
        raise InputError(
            "a location id given twice", path=label, column="location", key=twice["location"][0]
        )
    return frame


def parse_gps_grid(text: str) -> GpsGrid:
    """The grid ``gps_grid`` names: ``LAT_MIN,LON_MIN,LAT_MAX,LON_MAX,SHAPE`` (degrees), SHAPE
    ``ROWSxCOLS`` (``16x16``; ``16``: square) or a cell side in metres (``500m``): rows of
    ``s / (R pi / 180)`` degrees of latitude and columns of that over ``cos`` of the box's
    middle latitude of longitude (R the haversine's radius), as many as cover the box
    (ConfigError otherwise)."""
    fields = [f.strip() for f in str(text).split(",")]
    usage = "LAT_MIN,LON_MIN,LAT_MAX,LON_MAX,SHAPE (SHAPE: ROWSxCOLS, or a cell size like 500m)"
    try:
        box = [float(f) for f in fields[:4]]
        shape = fields[4].lower()
        if len(fields) != 5 or not all(math.isfinite(v) for v in box):
            raise ValueError
        lat_min, lon_min, lat_max, lon_max = box
        if shape.endswith("m"):
            side = float(shape[:-1])
            if not (math.isfinite(side) and side > 0):
                raise ValueError
            dlat = side / (EARTH_RADIUS * math.pi / 180)
            dlon = dlat / math.cos(math.radians((lat_min + lat_max) / 2))
            rows = max(1, math.ceil((lat_max - lat_min) / dlat))
            cols = max(1, math.ceil((lon_max - lon_min) / dlon))
        else:
            rows, cols = (int(v) for v in (shape.split("x") * 2)[:2])
            dlat, dlon = (lat_max - lat_min) / max(rows, 1), (lon_max - lon_min) / max(cols, 1)
    except (ValueError, IndexError):
        raise ConfigError(f"gps_grid={text!r}: expected {usage}") from None
    if not (-90 <= lat_min < lat_max <= 90 and -180 <= lon_min < lon_max <= 180):
        raise ConfigError(f"gps_grid={text!r}: the box needs LAT_MIN < LAT_MAX, LON_MIN < LON_MAX")
    if rows < 1 or cols < 1 or rows * cols > MAX_CELLS:
        raise ConfigError(f"gps_grid={text!r}: {rows} x {cols} cells (1 to {MAX_CELLS:,})")
    return GpsGrid(lat_min, lon_min, lat_max, lon_max, rows, cols, dlat, dlon)


#: The most cells a GPS grid may have (its histograms are dense).
MAX_CELLS = 10_000_000


@dataclass(frozen=True)
class GpsGrid:
    """A box of latitudes and longitudes cut into ``rows`` x ``cols`` cells of ``dlat`` x
    ``dlon`` degrees from its south-west corner (:func:`parse_gps_grid`)."""

    lat_min: float
    lon_min: float
    lat_max: float
    lon_max: float
    rows: int
    cols: int
    dlat: float
    dlon: float

    def cells(self, lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
        """Each point's cell ``row * cols + col``, row ``floor((lat - LAT_MIN) / dlat)`` and
        col ``floor((lon - LON_MIN) / dlon)`` clipped into the grid (the box's north and east
        edges lie in the last cells; a point outside the box in the nearest border cell, as
        DiffTraj's reproductions clip)."""
        row = np.clip(np.floor((lat - self.lat_min) / self.dlat), 0, self.rows - 1)
        col = np.clip(np.floor((lon - self.lon_min) / self.dlon), 0, self.cols - 1)
        return row.astype(np.int64) * self.cols + col.astype(np.int64)


@dataclass(frozen=True)
class GpsSpace(Space):
    """GPS points: columns ``lat``, ``lon`` (degrees), cells of ``grid``; the code the cell."""

    columns: tuple[str, ...] = ("lat", "lon")
    floats: tuple[str, ...] = ("lat", "lon")
    grid: GpsGrid = None

    @property
    def outside(self) -> pl.Expr:
        g = self.grid
        lat, lon = pl.col("lat"), pl.col("lon")
        box = lat.is_between(g.lat_min, g.lat_max) & lon.is_between(g.lon_min, g.lon_max)
        return ~box

    @property
    def outside_text(self) -> str:
        g = self.grid
        return (
            f"lat, lon outside the grid's box ({g.lat_min}, {g.lon_min}) .. ({g.lat_max}, "
            f"{g.lon_max}); out_of_grid='score' counts them in rows_out_of_grid and puts each "
            "in the nearest border cell"
        )

    def places(self, codes: np.ndarray) -> tuple[None, np.ndarray, np.ndarray]:
        """The grid's cells ``codes`` as cells: ``x`` the column (west to east), ``y`` the row
        (south to north), so that a map draws one square per cell."""
        rows, cols = np.divmod(codes, self.grid.cols)
        return None, cols * 1.0, rows * 1.0

    def points(self, frame: pl.DataFrame, path) -> Points:
        lat, lon = (frame[c].to_numpy() for c in self.columns)
        cells = self.grid.cells(lat, lon)
        return Points(lat, lon, cells, cells=(cells, self.grid.rows * self.grid.cols))


def population_space(values: dict) -> Space:
    """The location space the options ``values`` name (``locations``, ``location_table``,
    ``unknown_links``, ``gps_grid``, ``distance``; on links ``region_table``, ``link_graph``),
    its tables read; ConfigError where the
    measures asked need points that links without them lack, or great-circle distances
    latitudes and longitudes that the table has not."""
    locations, haversine = values["locations"], values["distance"] == "haversine"
    sphere = EARTH_RADIUS if haversine else 0.0
    if locations == "grid":
        return GridSpace()
    if locations == "gps":
        return GpsSpace(grid=parse_gps_grid(values["gps_grid"]), sphere=sphere)
    if locations == "ids":
        space = read_location_table(values["location_table"])
    else:
        space = read_link_table(values["location_table"], values["unknown_links"])
        network = {"regions": ("region_table", read_region_table)}
        network |= {"graph": ("link_graph", read_link_graph)}
        read = {k: f(values[o]) for k, (o, f) in network.items() if values.get(o) is not None}
        space = dataclasses.replace(space, **read)
    if space.x is None:
        wanted = [m for m in values["metrics"] if m in COORDINATE_METRICS]
        if wanted:
            raise ConfigError(
                f"{', '.join(wanted)} need{'s' * (len(wanted) == 1)} a point of each link: the "
                f"link table {space.label} has no x, y or lat, lon columns"
            )
    if haversine and not space.lat_lon:
        raise ConfigError(
            f"distance='haversine' needs latitudes and longitudes: the table {space.label} "
            "has x, y (distance='planar' measures in its units)"
        )
    return dataclasses.replace(space, sphere=sphere)


#: The columns of :func:`density_map` (``OUT/density_map``).
DENSITY_MAP_SCHEMA = {
    "location": pl.Int64,
    "x": pl.Float64,
    "y": pl.Float64,
    "real_visits": pl.Int64,
    "generated_visits": pl.Int64,
}


def density_map(real: PopulationCounts, generated: PopulationCounts, space: Space) -> pl.DataFrame:
    """The visits (points) per location of each population, one row per location visited on
    either side, in location order: ``location`` (the id; null where the codes are cells),
    ``x``, ``y`` (where :meth:`Space.places` puts it), ``real_visits``, ``generated_visits`` (0
    where a side never visits it). The counts are the populations' folded ``visits`` (one count
    per location: bounded by the grid or the table, whatever the number of points)."""
    sides = [
        counts.visits.rename({"visits": f"{side}_visits"})
        for side, counts in (("real", real), ("generated", generated))
    ]
    both = sides[0].join(sides[1], on="location", how="full", coalesce=True)
    both = both.fill_null(0).sort("location")
    location, x, y = space.places(both["location"].to_numpy())
    columns = {"location": [None] * both.height if location is None else location, "x": x, "y": y}
    columns |= {c: both[c] for c in ("real_visits", "generated_visits")}
    return pl.DataFrame(columns, schema=DENSITY_MAP_SCHEMA)
