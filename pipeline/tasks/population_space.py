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

Distances are planar in the table's units (MoveSim's: degrees). The table is held in memory
(sorted ids and their coordinates): a run's memory is bounded by the table and the histograms.
The report's density maps read :func:`density_map`: each side's visits per location (folded with
the histograms), placed at the location's coordinates.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from mobeval.errors import InputError
from mobeval.io.text import open_binary

if TYPE_CHECKING:
    from mobeval.metrics.population import PopulationCounts

#: Largest |x| or |y| scored even with out_of_grid="score" (999, the mask value, is fine): the
#: kernels index tables by squared distances, which must stay within int64.
MAX_COORD = 1_000_000_000
#: The columns of a location table, by the names of its two coordinates.
TABLE_COORDINATES = (("x", "y"), ("lat", "lon"))


@dataclass(frozen=True)
class LocationTable:
    """Location ids (sorted, distinct) and their coordinates; ``label`` is the table's path."""

    ids: np.ndarray
    x: np.ndarray
    y: np.ndarray
    label: str

    def points(self, frame: pl.DataFrame, path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(x, y, codes) of ``frame``'s ``location`` column; an id the table does not hold is an
        InputError naming the input, the column and the first such row's (uid, d, t)."""
        codes = frame["location"].to_numpy().astype(np.int64, copy=False)
        at = np.searchsorted(self.ids, codes)
        at[at == self.ids.size] = 0
        unknown = self.ids[at] != codes if self.ids.size else np.ones(codes.size, dtype=bool)
        if unknown.any():
            row = frame.row(int(np.argmax(unknown)), named=True)
            raise InputError(
                f"{int(unknown.sum())} row(s) whose location is not in the location table "
                f"{self.label}",
                path=path,
                column="location",
                key=(row["uid"], row["d"], row["t"]),
            )
        return self.x[at], self.y[at], codes


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
    else:
        frame = _table_file(path, spec)
    return _checked_table(frame, str(spec))


def _table_file(path: Path, spec) -> pl.DataFrame:
    """Columns location, x, y of a CSV or Parquet location table."""
    try:
        if path.name.lower().endswith((".parquet", ".pq")):
            frame = pl.read_parquet(path)
        else:
            frame = pl.read_csv(path)
    except (pl.exceptions.PolarsError, OSError) as error:
        raise InputError(f"not a readable location table ({error})", path=spec) from None
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
            )
    raise InputError(
        f"a location table needs x, y or lat, lon; columns present: {frame.columns}",
        path=spec,
        column="x",
    )


def _checked_table(frame: pl.DataFrame, label: str) -> LocationTable:
    if not frame["location"].dtype.is_integer():
        raise InputError(
            f"ids must be integers, found {frame['location'].dtype}", path=label, column="location"
        )
    for column in ("x", "y"):
        values = frame[column].cast(pl.Float64, strict=False)
        bad = values.is_null() | ~values.is_finite()
        if bad.any():
            raise InputError(
                f"{int(bad.sum())} coordinate(s) not a finite number",
                path=label,
                column=column,
                key=frame["location"].filter(bad)[0],
            )
        frame = frame.with_columns(values)
    frame = frame.with_columns(pl.col("location").cast(pl.Int64)).sort("location")
    twice = frame.filter(pl.col("location").is_duplicated())
    if twice.height:
        raise InputError(
            "a location id given twice", path=label, column="location", key=twice["location"][0]
        )
    return LocationTable(*(frame[c].to_numpy() for c in ("location", "x", "y")), label)


def cell_ids(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """One location id per cell, ``(x + M) * (2M + 1) + (y + M)`` with M = :data:`MAX_COORD`
    (distinct for |x|, |y| <= M, below 2**62), computed in place in one int64 array."""
    ids = x + MAX_COORD
    ids *= 2 * MAX_COORD + 1
    ids += y
    ids += MAX_COORD
    return ids


#: The columns of :func:`density_map` (``OUT/density_map``).
DENSITY_MAP_SCHEMA = {
    "location": pl.Int64,
    "x": pl.Float64,
    "y": pl.Float64,
    "real_visits": pl.Int64,
    "generated_visits": pl.Int64,
}


def density_map(
    real: PopulationCounts, generated: PopulationCounts, table: LocationTable | None
) -> pl.DataFrame:
    """The visits (points) per location of each population, one row per location visited on
    either side, in location order: ``location`` (the id; null on a grid), ``x``, ``y`` (the
    cell, or the table's coordinates of the id), ``real_visits``, ``generated_visits`` (0 where
    a side never visits it). The counts are the populations' folded ``visits`` (one count per
    location: bounded by the grid or the table, whatever the number of points)."""
    sides = [
        counts.visits.rename({"visits": f"{side}_visits"})
        for side, counts in (("real", real), ("generated", generated))
    ]
    both = sides[0].join(sides[1], on="location", how="full", coalesce=True)
    both = both.fill_null(0).sort("location")
    codes = both["location"].to_numpy()
    if table is None:  # the inverse of cell_ids
        side = 2 * MAX_COORD + 1
        x, y, location = codes // side - MAX_COORD, codes % side - MAX_COORD, [None] * codes.size
    else:
        at = np.searchsorted(table.ids, codes)
        x, y, location = table.x[at], table.y[at], codes
    columns = {"location": location, "x": x, "y": y}
    columns |= {c: both[c] for c in ("real_visits", "generated_visits")}
    return pl.DataFrame(columns, schema=DENSITY_MAP_SCHEMA)
