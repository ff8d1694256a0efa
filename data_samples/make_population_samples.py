"""Regenerate data_samples/gps and data_samples/links: two small unpaired populations each, for
docs/population.md's GPS and road-link sections.

* ``gps/real.csv`` (20 trajectories), ``gps/generated.csv`` (14): ``traj_id``, ``timestamp``
  (every 5 minutes), ``lat``, ``lon``: taxi-like walks in central Chengdu (30.65..30.73 N,
  104.04..104.13 E, DiffTraj's city); the generated walks are shorter-stepped, and one leaves
  the box (so that ``--score-out-of-grid`` has a point to count).
* ``links/links.csv``: 60 road links (``geo_id``, ``length`` in metres, ``lat``, ``lon`` of the
  link's start), a chain of links; ``links/real.csv`` (20 trajectories), ``links/generated.csv``
  (14): ``uid``, ``t``, ``location`` (a link id), walks along the chain.

The output is the same on every run (seeded).

    python data_samples/make_population_samples.py
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent


def gps(rng: np.random.Generator, n: int, step: float, escape: bool) -> pl.DataFrame:
    rows = []
    start = datetime(2018, 11, 1, 8, 0)
    for traj in range(n):
        lat, lon = 30.66 + rng.uniform(0, 0.05), 104.06 + rng.uniform(0, 0.05)
        for k in range(8):
            lat += rng.normal(0, step)
            lon += rng.normal(0, step)
            if escape and traj == n - 1 and k == 7:
                lat = 30.80
            when = start + timedelta(minutes=60 * traj + 5 * k)
            rows.append((traj, when, round(lat, 5), round(lon, 5)))
    return pl.DataFrame(rows, schema=["traj_id", "timestamp", "lat", "lon"], orient="row")


def links(rng: np.random.Generator, n: int, n_links: int, spread: int) -> pl.DataFrame:
    rows = []
    for uid in range(n):
        here = int(rng.integers(0, n_links))
        for t in range(int(rng.integers(3, 9))):
            rows.append((uid, t, here))
            here = int(np.clip(here + rng.integers(-spread, spread + 1), 0, n_links - 1))
    return pl.DataFrame(rows, schema=["uid", "t", "location"], orient="row")


def main() -> None:
    rng = np.random.default_rng(32)
    (HERE / "gps").mkdir(exist_ok=True)
    gps(rng, 20, 0.004, False).write_csv(HERE / "gps" / "real.csv")
    gps(rng, 14, 0.002, True).write_csv(HERE / "gps" / "generated.csv")
    (HERE / "links").mkdir(exist_ok=True)
    n_links = 60
    table = pl.DataFrame(
        {
            "geo_id": np.arange(n_links) + 100,
            "length": np.round(rng.uniform(40, 400, n_links), 1),
            "lat": np.round(30.66 + 0.0011 * np.arange(n_links), 5),
            "lon": np.round(104.06 + 0.0007 * np.arange(n_links), 5),
        }
    )
    table.write_csv(HERE / "links" / "links.csv")
    for name, n, spread in (("real", 20, 2), ("generated", 14, 1)):
        walks = links(rng, n, n_links, spread)
        walks.with_columns(pl.col("location") + 100).write_csv(HERE / "links" / f"{name}.csv")


if __name__ == "__main__":
    main()
