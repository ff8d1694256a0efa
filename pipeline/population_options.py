"""The trajectory family's options that say what a population is: how the two inputs are paired
and in which location space their points lie (:mod:`mobeval.tasks.population_space`), and the
generation metrics' conventions that a user may set over the preset's
(:mod:`mobeval.metrics.generation`)."""

from __future__ import annotations

from mobeval.metrics import trajectory as _trajectory
from mobeval.metrics.generation import BINNINGS
from mobeval.option_types import FROM_PRESET, Flag, Option

POPULATION_OPTIONS = (
    Option(
        "pairing",
        "string",
        "uid",
        "uid: rows paired by (uid, d, t) (GEO-BLEU, DTW); none: a real and a generated "
        "population of any sizes, a trajectory the rows of a uid and day (d optional) in t "
        "order, distributions only",
        _trajectory.PAIRINGS,
    ),
    Option(
        "locations",
        "string",
        "grid",
        "the inputs' location space: grid (x, y cells), ids (a location column, with "
        "--location-table), links (a location column of road-link ids, with a link table as "
        "--location-table) or gps (lat, lon columns in degrees, with --gps-grid); all but grid "
        "need --pairing none",
        _trajectory.SPACES,
    ),
    Option(
        "location_table",
        "string",
        None,
        "--locations ids: id -> coordinates, MoveSim's gps file (two numbers a line, the id its "
        "line number from 0) or a CSV/Parquet file with location and x, y or lat, lon; "
        "--locations links: a CSV/Parquet link table, location (or geo_id), length and "
        "optionally x, y or lat, lon",
        path="file",
    ),
    Option(
        "unknown_links",
        "string",
        "error",
        "--locations links: a link id the link table does not hold is an error, or (zero, "
        "MobilityGPT's) a link of length 0 that still counts as a location",
        _trajectory.UNKNOWN_LINKS,
    ),
    Option(
        "region_table",
        "string",
        None,
        "--locations links: the regions of gravity, a CSV/Parquet file with location (or "
        "geo_id), region (integers; a link in several regions on several rows) and lat, lon "
        "(the region's centre, degrees), as MobilityGPT's regions pickle",
        path="file",
    ),
    Option(
        "link_graph",
        "string",
        None,
        "--locations links: the directed edges between links of connectivity, a CSV/Parquet "
        "file with origin_id, destination_id (LibCity's roadmap.rel)",
        path="file",
    ),
    Option(
        "gps_grid",
        "string",
        None,
        "--locations gps: the grid that density, trip, stays and location counts use, "
        "LAT_MIN,LON_MIN,LAT_MAX,LON_MAX,SHAPE with SHAPE ROWSxCOLS (16x16) or a cell side in "
        "metres (500m); points outside the box are an error (--score-out-of-grid: counted in "
        "rows_out_of_grid, put in the nearest border cell)",
    ),
    Option(
        "distance",
        "string",
        "planar",
        "distances between points (jumps, radius of gyration): planar, in the coordinates' "
        "units (degrees for lat, lon), or haversine, great-circle metres (R 6,371,008.8 m) of "
        "--locations gps or a lat, lon table",
        _trajectory.DISTANCES,
    ),
)


def _generation_option(name: str, kind: str, text: str, parse: str, **more) -> Option:
    """An option that overrides a field of the preset's generation convention
    (:class:`mobeval.metrics.generation.GenerationConvention`; the preset's value unless given)."""
    return Option(name, kind, None, text, preset=True, flag=Flag(parse, FROM_PRESET), **more)


#: The options of :data:`mobeval.metrics.generation.GENERATION_FIELDS`, with units.
GENERATION_OPTIONS = (
    _generation_option(
        "jump_max",
        "number",
        "upper edge of the jump histogram (jump), in the space's distance unit: grid cells, "
        "the location table's units, metres under --distance haversine (presets: "
        "282; trajgdm 50)",
        "finite",
    ),
    _generation_option(
        "jump_bins",
        "integer",
        "equal bins of the jump histogram over [0, --jump-max] (presets: 282; trajgdm 100)",
        "int",
    ),
    _generation_option(
        "near_tolerance",
        "number",
        "memorised_near: two points are near when every coordinate falls in the same cell of a "
        "grid of this side, in the coordinates' units (grid cells, the table's units, degrees "
        "for lat, lon even under haversine) (presets: 2)",
        "finite",
    ),
    _generation_option(
        "generation_bins",
        "integer",
        "bins of the location-id, length and trip-length histograms under the range and arange "
        "binnings, and of trip_length under all (presets: 100; mobilitygpt 300)",
        "int",
    ),
    _generation_option(
        "generation_binning",
        "string",
        "how the generation metrics bin: all (one bin per value, nothing dropped), range "
        "(TrajGDM's np.histogram over [0, R]) or arange (MobilityGPT's np.arange edges, the top "
        "bin dropped) (presets: all; trajgdm range; mobilitygpt arange)",
        None,
        choices=BINNINGS,
    ),
    _generation_option(
        "id_range",
        "integer",
        "the upper edge R of the location-id histograms under --generation-binning range, in "
        "ids (TrajGDM's num_loc) (presets: 40000, HuMob's cells)",
        "int",
    ),
)


def distance_unit(locations: str, distance: str, unit: str) -> str:
    """The unit of the distances (``distance``, ``radius``, ``jump``, ``max_distance``) of a
    run in the space ``locations`` under ``distance`` (planar or haversine) with the grid's
    ``unit`` (cells or metres, of the convention): great circles are in metres, planar GPS
    points in degrees, a location table's points in the table's own units, grid cells in
    ``unit``."""
    if distance == "haversine":
        return "metres"
    return {"gps": "degrees", "ids": "location table units", "links": "location table units"}.get(
        locations, unit
    )
