"""GPS points (``locations="gps"``) and great-circle distances (``distance="haversine"``):
plain-Python oracles (the haversine written out here), the user's grid, any chunking and row
order, points outside the box, and every refusal (exit 2)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

R = 6_371_008.8  # the IUGG mean Earth radius, metres
BOX = (30.60, 104.00, 30.75, 104.15)  # lat_min, lon_min, lat_max, lon_max (Chengdu's centre)
GRID = ",".join(map(str, BOX)) + ",16x16"


def _haversine(lat1, lon1, lat2, lon2) -> float:
    """Great-circle metres, the haversine formula written out."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    a = (
        math.sin((p2 - p1) / 2) ** 2
        + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2
    )
    return 2 * R * math.asin(math.sqrt(min(a, 1.0)))


def _walks(rng, n, steps=10, spread=0.004) -> pl.DataFrame:
    """uid, t, lat, lon: ``n`` random walks inside BOX."""
    rows = []
    for u in range(n):
        lat, lon = 30.64 + rng.uniform(0, 0.07), 104.04 + rng.uniform(0, 0.07)
        for t in range(steps):
            lat += rng.normal(0, spread)
            lon += rng.normal(0, spread)
            rows.append((u, t, lat, lon))
    return pl.DataFrame(rows, schema=["uid", "t", "lat", "lon"], orient="row")


def _days(frame: pl.DataFrame) -> list[list[tuple[float, float]]]:
    return [
        list(zip(g["lat"], g["lon"], strict=True))
        for _, g in frame.sort("uid", "t").group_by("uid", maintain_order=True)
    ]


def test_kernels_jumps_and_radius_are_the_haversine_written_out():
    """``day_measures`` and the generation ``jumps`` on a sphere of R: every jump is the
    haversine between consecutive points, the radius of gyration the root mean square of the
    haversines to (mean lat, mean lon)."""
    from mobeval.kernels.generation import jumps
    from mobeval.kernels.mobility import day_measures

    days = _days(_walks(np.random.default_rng(1), 7, spread=0.05))
    lat = np.array([p[0] for d in days for p in d])
    lon = np.array([p[1] for d in days for p in d])
    offsets = np.cumsum([0] + [len(d) for d in days]).astype(np.int64)
    codes = np.arange(lat.size, dtype=np.int64)
    got_jumps, radius, *_ = day_measures(offsets, lat, lon, codes, False, True, 3, R)
    want = [_haversine(*a, *b) for d in days for a, b in zip(d, d[1:], strict=False)]
    assert got_jumps == pytest.approx(want, rel=1e-12)
    assert jumps(offsets, lat, lon, False, R) == pytest.approx(want, rel=1e-12)
    for day, r in zip(days, radius, strict=True):
        clat = sum(p[0] for p in day) / len(day)
        clon = sum(p[1] for p in day) / len(day)
        rms = math.sqrt(sum(_haversine(*p, clat, clon) ** 2 for p in day) / len(day))
        assert r == pytest.approx(rms, rel=1e-12)
    planar, *_ = day_measures(offsets, lat, lon, codes, False, True, 3)
    assert planar[0] == pytest.approx(math.dist(days[0][0], days[0][1]), rel=1e-15)


def _score(real, gen, tmp_path, name="run", **options) -> tuple[dict, pl.DataFrame]:
    """(summary metric -> value, distributions table) of the API on Parquet files."""
    from mobeval.api import evaluate_trajectory

    paths = []
    for side, frame in (("real", real), ("gen", gen)):
        paths.append(str(tmp_path / f"{name}_{side}.parquet"))
        frame.write_parquet(paths[-1])
    settings = {"pairing": "none", "locations": "gps", "gps_grid": GRID, "progress": False}
    out = tmp_path / f"{name}_out"
    result = evaluate_trajectory(*paths, **(settings | options), out=str(out))
    summary = dict(result.summary.select("metric", "value").iter_rows())
    return summary, pl.read_parquet(out / "distributions")


def _cell(lat, lon, rows=16, cols=16) -> int:
    """The cell of BOX cut into rows x cols, written out."""
    dlat, dlon = (BOX[2] - BOX[0]) / rows, (BOX[3] - BOX[1]) / cols
    r = min(max(math.floor((lat - BOX[0]) / dlat), 0), rows - 1)
    c = min(max(math.floor((lon - BOX[1]) / dlon), 0), cols - 1)
    return r * cols + c


def test_gps_histograms_are_plain_pythons(tmp_path):
    """Density counts the points per cell of the user's box; distance bins the haversine jumps
    (metres) over [0, max_distance]."""
    rng = np.random.default_rng(2)
    real, gen = _walks(rng, 30), _walks(rng, 18)
    metrics = ["distance", "density", "dailyloc"]
    options = {"distance": "haversine", "max_distance": 5000.0, "metrics": metrics}
    _, table = _score(real, gen, tmp_path, **options)
    for side, frame in (("real", real), ("generated", gen)):
        cells = [_cell(a, b) for a, b in zip(frame["lat"], frame["lon"], strict=True)]
        density = table.filter(pl.col("distribution") == "density")
        got = dict(zip(density["bin"], density[f"{side}_count"], strict=True))
        want = {c: cells.count(c) for c in set(cells)}
        assert {c: n for c, n in got.items() if n} == want, side
        dist = table.filter(pl.col("distribution") == "distance")
        jumps = [_haversine(*a, *b) for d in _days(frame) for a, b in zip(d, d[1:], strict=False)]
        counts = [
            sum(left <= j < right for j in jumps)
            for left, right in zip(dist["left"], dist["right"], strict=True)
        ]
        assert counts == dist[f"{side}_count"].to_list(), side


def test_cells_of_500_metres_cover_the_box(tmp_path):
    """``...,500m``: rows of 500 m of latitude, columns of 500 m of longitude at the box's
    middle latitude, as many as cover the box."""
    from mobeval.tasks.population_space import parse_gps_grid

    grid = parse_gps_grid(",".join(map(str, BOX)) + ",500m")
    dlat = 500 / (R * math.pi / 180)
    dlon = dlat / math.cos(math.radians((BOX[0] + BOX[2]) / 2))
    assert (grid.rows, grid.cols) == (
        math.ceil((BOX[2] - BOX[0]) / dlat),
        math.ceil((BOX[3] - BOX[1]) / dlon),
    )
    assert (grid.rows, grid.cols) == (34, 29)


def test_gps_any_chunking_row_order_and_timestamps_give_the_same_bits(tmp_path):
    """Shuffled rows, chunks of 7 and 40 rows, and t as a timestamp give the whole run's bits."""
    from mobeval.metrics import DISTRIBUTIONS

    rng = np.random.default_rng(4)
    real, gen = _walks(rng, 25), _walks(rng, 15)
    options = {"distance": "haversine", "max_distance": 5000.0, "metrics": list(DISTRIBUTIONS)}
    whole, _ = _score(real, gen, tmp_path, **options)
    assert all(math.isfinite(v) for v in whole.values())
    for chunk_rows in (7, 40):
        shuffled = [f[rng.permutation(f.height)] for f in (real, gen)]
        got, _ = _score(*shuffled, tmp_path, f"c{chunk_rows}", chunk_rows=chunk_rows, **options)
        assert got == whole, chunk_rows
    stamped = [
        f.with_columns(pl.datetime(2024, 1, 1) + pl.duration(minutes=pl.col("t") * 5))
        for f in (real, gen)
    ]
    got, _ = _score(*stamped, tmp_path, "stamped", **options)
    assert got == whole


def test_a_lat_lon_table_with_haversine_gives_the_gps_values(tmp_path):
    """``--locations ids`` with a lat, lon table measures as GPS points do under the same
    ``distance``; planar distances (degrees) are other values."""
    rng = np.random.default_rng(5)
    lat, lon = 30.62 + rng.uniform(0, 0.1, 40), 104.02 + rng.uniform(0, 0.1, 40)
    table = tmp_path / "table.csv"
    pl.DataFrame({"location": np.arange(40) * 3 + 7, "lat": lat, "lon": lon}).write_csv(table)
    sides = [
        pl.DataFrame(
            {"uid": np.repeat(np.arange(n), 8), "t": np.tile(np.arange(8), n)}
        ).with_columns(location=pl.Series(rng.integers(0, 40, n * 8)))
        for n in (20, 12)
    ]
    gps = [s.with_columns(lat=lat[s["location"]], lon=lon[s["location"]]) for s in sides]
    ids = [s.with_columns(pl.col("location") * 3 + 7) for s in sides]
    metrics = ["distance", "radius"]
    opts = {"max_distance": 15000.0, "metrics": metrics}
    for distance in ("haversine", "planar"):
        if distance == "planar":
            opts["max_distance"] = 0.15
        want, _ = _score(*gps, tmp_path, f"g{distance}", distance=distance, **opts)
        got, _ = _score(
            *ids,
            tmp_path,
            f"i{distance}",
            locations="ids",
            location_table=str(table),
            gps_grid=None,
            distance=distance,
            **opts,
        )
        assert got == want, distance


def _exit(argv) -> int:
    from mobeval.cli import main

    try:
        return main(argv)
    except SystemExit as exit_:
        return exit_.code


def _files(tmp_path, real, gen) -> list[str]:
    paths = []
    for side, frame in (("real", real), ("gen", gen)):
        paths.append(str(tmp_path / f"{side}.csv"))
        frame.write_csv(paths[-1])
    return ["trajectory", "--reference", paths[0], "--generated", paths[1], "--pairing", "none"]


def test_points_outside_the_box_are_exit_2_or_counted(tmp_path, capsys):
    """A point outside the box: exit 2 naming the file, the columns and the first (uid, d, t),
    no output; ``--score-out-of-grid`` counts them in rows_out_of_grid."""
    rng = np.random.default_rng(6)
    real, gen = _walks(rng, 10), _walks(rng, 8)
    gen = gen.with_columns(
        lat=pl.when((pl.col("uid") == 3) & (pl.col("t") >= 4)).then(31.0).otherwise("lat")
    )
    argv = _files(tmp_path, real, gen) + ["--locations", "gps", "--gps-grid", GRID]
    argv += ["--metrics", "density,distance", "--out", str(tmp_path / "out")]
    assert _exit(argv) == 2
    err = capsys.readouterr().err
    assert "gen.csv" in err and "lat, lon" in err and "6 row(s)" in err and "(3, 0, 4)" in err
    assert not (tmp_path / "out").exists()
    assert _exit([*argv[:-2], "--score-out-of-grid", "--format", "json"]) == 0
    import json

    assert json.loads(capsys.readouterr().out)["summary"]["rows_out_of_grid"] == 6


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--locations", "gps"], "needs --gps-grid"),
        (["--locations", "gps", "--gps-grid", "30,104,31"], "LAT_MIN,LON_MIN"),
        (["--locations", "gps", "--gps-grid", "31,104,30,105,4x4"], "LAT_MIN < LAT_MAX"),
        (["--locations", "gps", "--gps-grid", "30,104,31,105,0x4"], "cells"),
        (["--locations", "gps", "--gps-grid", "30,104,31,105,-5m"], "LAT_MIN,LON_MIN"),
        (["--locations", "gps", "--gps-grid", GRID, "--location-table", "t.csv"], "no table"),
        (["--gps-grid", GRID], "add --locations gps"),
        (["--distance", "haversine"], "grid cells are planar"),
        (["--locations", "gps", "--gps-grid", GRID, "--distance", "sphere"], "--distance"),
    ],
)
def test_what_gps_points_cannot_do_is_exit_2(extra, said, tmp_path, capsys):
    rng = np.random.default_rng(7)
    argv = _files(tmp_path, _walks(rng, 3), _walks(rng, 3)) + ["--metrics", "radius", *extra]
    assert _exit(argv) == 2
    assert said in capsys.readouterr().err


def test_bad_points_and_tables_are_exit_2_naming_the_column(tmp_path, capsys):
    """A null latitude (file, column, first key); haversine over an x, y table."""
    rng = np.random.default_rng(8)
    real, gen = _walks(rng, 3), _walks(rng, 3)
    gen = gen.with_columns(lon=pl.when(pl.col("uid") == 1).then(None).otherwise("lon"))
    argv = _files(tmp_path, real, gen) + ["--locations", "gps", "--gps-grid", GRID]
    assert _exit([*argv, "--metrics", "radius"]) == 2
    err = capsys.readouterr().err
    assert "gen.csv" in err and "lon" in err and "(1, 0, 0)" in err
    table = tmp_path / "xy.csv"
    table.write_text("location,x,y\n0,1.0,2.0\n")
    frame = pl.DataFrame({"uid": [0, 0], "t": [0, 1], "location": [0, 0]})
    argv = _files(tmp_path, frame, frame) + ["--locations", "ids", "--location-table", str(table)]
    assert _exit([*argv, "--metrics", "radius", "--distance", "haversine"]) == 2
    assert "needs latitudes and longitudes" in capsys.readouterr().err


def test_location_ids_are_the_generation_metrics_locations(tmp_path):
    """With ``--locations ids`` (here MoveSim-like lat, lon floats), ``location`` and ``od``
    count the location ids themselves (one bin per id under the default convention), not a
    HuMob cell made of the coordinates."""
    from tests.test_population import _jsd

    rng = np.random.default_rng(9)
    table = tmp_path / "table.csv"
    lat, lon = 39.9 + rng.uniform(0, 0.01, 30), 116.3 + rng.uniform(0, 0.01, 30)
    pl.DataFrame({"location": np.arange(30), "lat": lat, "lon": lon}).write_csv(table)
    sides = [
        pl.DataFrame(
            {"uid": np.repeat(np.arange(n), 6), "t": np.tile(np.arange(6), n)}
        ).with_columns(location=pl.Series(rng.integers(0, 30, n * 6)))
        for n in (15, 9)
    ]
    options = {"locations": "ids", "location_table": str(table), "gps_grid": None}
    got, _ = _score(*sides, tmp_path, metrics=["location", "od"], **options)
    every = sorted(set(sides[0]["location"]) | set(sides[1]["location"]))

    def counts(ids):
        ids = list(ids)
        return [ids.count(i) for i in every]

    real, gen = (s["location"] for s in sides)
    assert got["jsd_location"] == pytest.approx(_jsd(counts(real), counts(gen)), rel=1e-12)
    ends = [
        list(s.group_by("uid").agg(pl.col("location").first())["location"])
        + list(s.group_by("uid").agg(pl.col("location").last())["location"])
        for s in sides
    ]
    assert got["jsd_od"] == pytest.approx(_jsd(counts(ends[0]), counts(ends[1])), rel=1e-12)


def test_the_density_map_of_gps_points_counts_each_side_per_cell_of_the_named_grid(tmp_path):
    """OUT/density_map under ``--locations gps``: each side's points per cell of the user's grid
    (x the column from the west, y the row from the south), counted here in plain Python."""
    from mobeval.cli import main

    rng = np.random.default_rng(7)
    paths = {}
    for side, n in (("real", 12), ("generated", 9)):
        paths[side] = tmp_path / f"{side}.parquet"
        _walks(rng, n).write_parquet(paths[side])
    out = tmp_path / "out"
    argv = ["trajectory", "--reference", str(paths["real"]), "--generated"]
    argv += [str(paths["generated"]), "--pairing", "none", "--locations", "gps", "--gps-grid"]
    argv += [GRID, "--metrics", "density", "--score-out-of-grid", "--out", str(out), "--quiet"]
    assert main(argv) == 0
    stored = pl.read_parquet(out / "density_map" / "**" / "*.parquet")
    lat_min, lon_min, lat_max, lon_max = BOX
    expected = {}
    for side in ("real", "generated"):
        for lat, lon in pl.read_parquet(paths[side]).select("lat", "lon").iter_rows():
            row = min(max(math.floor((lat - lat_min) / ((lat_max - lat_min) / 16)), 0), 15)
            col = min(max(math.floor((lon - lon_min) / ((lon_max - lon_min) / 16)), 0), 15)
            counts = expected.setdefault((float(col), float(row)), {"real": 0, "generated": 0})
            counts[side] += 1
    got = {
        (x, y): {"real": r, "generated": g}
        for x, y, r, g in stored.select("x", "y", "real_visits", "generated_visits").iter_rows()
    }
    assert got == expected
    assert stored["location"].null_count() == stored.height
