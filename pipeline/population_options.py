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
        "the inputs' location space: grid (x, y cells) or ids (a location column, with "
        "--location-table); ids need --pairing none",
        _trajectory.SPACES,
    ),
    Option(
        "location_table",
        "string",
        None,
        "--locations ids: id -> coordinates, MoveSim's gps file (two numbers a line, the id its "
        "line number from 0) or a CSV/Parquet file with location and x, y or lat, lon",
        path="file",
    ),
)
