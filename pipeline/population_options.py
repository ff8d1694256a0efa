"""The trajectory family's options that say what a population is: how the two inputs are paired
and in which location space their points lie (:mod:`mobeval.tasks.population_space`)."""

from __future__ import annotations

from mobeval.metrics import trajectory as _trajectory
from mobeval.option_types import Option

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
