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
with two centres), as :mod:`mobeval.metrics.road_network`'s ``RegionTable`` and ``LinkGraph``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from mobeval.errors import InputError
from mobeval.metrics.road_network import LinkGraph, RegionTable


def read_table(path: Path, spec) -> pl.DataFrame:
    """A CSV or Parquet table."""
    try:
        if path.name.lower().endswith((".parquet", ".pq")):
            return pl.read_parquet(path)
        return pl.read_csv(path)
    except (pl.exceptions.PolarsError, OSError) as error:
        raise InputError(f"not a readable table ({error})", path=spec) from None


def table_with(spec, what: str, columns: tuple[str, ...]) -> pl.DataFrame:
    """The CSV or Parquet table ``spec`` (the ``what``), which holds ``columns`` (``location``
    also as ``geo_id``, MobilityGPT's name); InputError naming the file and the column
    otherwise."""
    path = Path(str(spec))
    if not path.is_file():
        raise InputError(f"no such file (the {what})", path=spec)
    frame = read_table(path, spec)
    if "location" in columns and "location" not in frame.columns and "geo_id" in frame.columns:
        frame = frame.rename({"geo_id": "location"})
    for column in columns:
        if column not in frame.columns:
            raise InputError(
                f"a {what} needs the columns {', '.join(columns)} (location also as geo_id); "
                f"columns present: {frame.columns}",
                path=spec,
                column=column,
            )
    return frame


def _read(spec, what: str, columns: tuple[str, ...]) -> pl.DataFrame:
    """:func:`table_with` ``columns``, each without nulls, and those alone."""
    frame = table_with(spec, what, columns)
    for column in columns:
        nulls = frame[column].is_null()
        if nulls.any():
            raise InputError(
                f"{int(nulls.sum())} empty value(s)",
                path=spec,
                column=column,
                key=f"row {int(np.argmax(nulls.to_numpy()))}",
            )
    return frame.select(columns)


def checked_numbers(frame: pl.DataFrame, spec, column: str, key: str, top=None) -> pl.DataFrame:
    """``frame`` with ``column`` as Float64, every value finite (and in [-top, top]); InputError
    naming the file, the column and the ``key`` of the first row otherwise."""
    values = frame[column].cast(pl.Float64, strict=False)
    bad = values.is_null() | ~values.is_finite()
    if top is not None:
        bad |= ~values.is_between(-top, top)
    if bad.any():
        what = "a finite number" if top is None else f"a number in [-{top}, {top}]"
        raise InputError(
            f"{int(bad.sum())} value(s) not {what}",
            path=spec,
            column=column,
            key=frame[key].filter(bad)[0],
        )
    return frame.with_columns(values)


def _integers(frame: pl.DataFrame, spec, columns: tuple[str, ...]) -> pl.DataFrame:
    for column in columns:
        if not frame[column].dtype.is_integer():
            raise InputError(
                f"ids must be integers, found {frame[column].dtype}", path=spec, column=column
            )
    return frame.with_columns(pl.col(*columns).cast(pl.Int64))


def read_region_table(spec) -> RegionTable:
    """The region table at ``spec`` (module docstring)."""
    frame = _read(spec, "region table", ("location", "region", "lat", "lon"))
    if not frame.height:
        raise InputError("a region table without rows", path=spec, column="location")
    frame = _integers(frame, spec, ("location", "region"))
    for column, top in (("lat", 90), ("lon", 180)):
        frame = checked_numbers(frame, spec, column, "region", top)
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


def read_link_graph(spec) -> LinkGraph:
    """The link graph at ``spec`` (module docstring)."""
    ends = ("origin_id", "destination_id")
    frame = _integers(_read(spec, "link graph", ends), spec, ends)
    origin, destination = (frame[c].to_numpy() for c in ends)
    links = np.unique(np.concatenate([origin, destination]))
    n = links.size
    keys = np.searchsorted(links, origin) * n + np.searchsorted(links, destination)
    return LinkGraph(links=links, edges=np.unique(keys))
