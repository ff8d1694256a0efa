"""MobilityGPT's measures of the road network (``link_radius``, ``gravity``, ``connectivity``):
its own numbers (tests/golden/mobilitygpt_more, made by its ``evaluate.py``) through the CLI, the
job file and the API from files as a user writes them, any chunking and row order, plain Python's
connectivity and gravity, and the refusals of bad region tables and link graphs (exit 2)."""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import polars as pl
import pytest

from tests.conftest import GOLDEN
from tests.test_population_links import _exit_code, _trajectories, chunked_runs, face_summary

GOLDEN_NETWORK = GOLDEN / "mobilitygpt_more"
NAMES = ("link_radius", "trip_length", "gravity")


def _files(tmp_path, data=None) -> dict[str, str]:
    """The golden inputs as a user's CSV files: test and synthetic trajectories (uid, t,
    location), the link table (geo_id, length, lat, lon: each link's first point), the region
    table (location, region, lat, lon: the region's centre) and the link graph (origin_id,
    destination_id)."""
    data = data or json.loads((GOLDEN_NETWORK / "inputs.json").read_text())
    paths = {name: tmp_path / f"{name}.csv" for name in ("test", "synthetic")}
    for name, path in paths.items():
        _trajectories(data[name]).write_csv(path)
    tables = {
        "links": {k: data[k] for k in ("geo_id", "length", "lat", "lon")},
        "regions": {"location": data["region_location"], "region": data["region"]}
        | {"lat": data["region_lat"], "lon": data["region_lon"]},
        "graph": {k: data[k] for k in ("origin_id", "destination_id")},
    }
    for name, columns in tables.items():
        paths[name] = tmp_path / f"{name}.csv"
        pl.DataFrame(columns).write_csv(paths[name])
    return {name: str(path) for name, path in paths.items()}


def _options(files, metrics=(*NAMES, "connectivity")) -> dict:
    return {
        "locations": "links",
        "location_table": files["links"],
        "unknown_links": "zero",
        "region_table": files["regions"],
        "link_graph": files["graph"],
        "convention": "mobilitygpt",
        "divergence": "jsdist",
        "metrics": list(metrics),
    }


@pytest.mark.parametrize("face", ["cli", "job", "api"])
def test_mobilitygpt_network_golden_through_every_face(face, tmp_path, capsys):
    """``js_radius``, ``js_length`` and ``js_gravity`` of MobilityGPT's own ``evaluate.py`` and
    the share of its synthetic trajectories whose ``_check_connectivity`` is 1, bit for bit."""
    expected = json.loads((GOLDEN_NETWORK / "expected.json").read_text())
    files = _files(tmp_path)
    options = _options(files)
    got = face_summary(face, files["test"], files["synthetic"], options, tmp_path, capsys)
    assert got["jsdist_link_radius"] == expected["radius"]
    assert got["jsdist_trip_length"] == expected["trip_length"]
    assert got["jsdist_gravity"] == expected["gravity"]
    assert got["connectivity"] == expected["connectivity"]


def _oracle_connectivity(trajs, edges: set) -> float:
    """The share of trajectories of two links or more whose every step is an edge."""
    ok = [
        len(t) > 1 and all((a, b) in edges for a, b in zip(t, t[1:], strict=False)) for t in trajs
    ]
    return sum(ok) / len(trajs)


def _oracle_gravity(trajs, regions: dict, centres: dict) -> list[float]:
    """Each trajectory's gravity: counts of origins plus destinations per region (a link in
    each of its regions), the trajectory's ends in their links' largest region, geodesic
    metres between the centres (geographiclib's WGS-84, geopy's kilometres times 1000)."""
    from geographiclib.geodesic import Geodesic

    earth = Geodesic(6378.137, 1 / 298.257223563)
    count = Counter(r for t in trajs for end in (t[0], t[-1]) for r in regions[end])
    out = []
    for t in trajs:
        a, b = max(regions[t[0]]), max(regions[t[-1]])
        d = earth.Inverse(*centres[a], *centres[b], Geodesic.DISTANCE)["s12"] * 1000
        out.append(count[a] * count[b] / d**2 if d != 0 else 0.0)
    return out


def test_network_any_chunking_row_order_and_plain_python(tmp_path):
    """Shuffled rows and chunks of 7 and 30 rows give the same bits (with uid shares and the
    bootstrap, which scale the tallies); connectivity is plain Python's share and the gravity
    histogram plain Python's values in MobilityGPT's 100 bins."""
    from scipy.spatial.distance import jensenshannon

    data = json.loads((GOLDEN_NETWORK / "inputs.json").read_text())
    files = _files(tmp_path, data)
    options = _options(files) | {"pairing": "none", "progress": False}
    options |= {"uid_shares": [50], "population_resamples": 5}
    rng = np.random.default_rng(8)
    sides = {name: pl.read_csv(files[name]) for name in ("test", "synthetic")}
    runs = chunked_runs(tmp_path, sides, options, rng)
    assert runs[1] == runs[0] and runs[2] == runs[0]
    assert "connectivity@50%" in runs[0] and "jsdist_gravity:low" in runs[0]
    edges = set(zip(data["origin_id"], data["destination_id"], strict=True))
    assert runs[0]["connectivity"] == _oracle_connectivity(data["synthetic"], edges)
    regions, centres = {}, {}
    for link, region, lat, lon in zip(
        data["region_location"], data["region"], data["region_lat"], data["region_lon"], strict=True
    ):
        regions.setdefault(link, []).append(region)
        centres[region] = (lat, lon)
    real, gen = (_oracle_gravity(data[n], regions, centres) for n in ("test", "synthetic"))
    lo, hi = min(real + gen), max(real + gen)
    edges_ = np.arange(lo, hi, (hi - lo) / 100)
    want = jensenshannon(np.histogram(real, edges_)[0], np.histogram(gen, edges_)[0])
    assert runs[0]["jsdist_gravity"] == pytest.approx(want, rel=1e-12)
    assert not math.isnan(runs[0]["jsdist_link_radius"])


def _argv(files, *extra) -> list[str]:
    argv = ["trajectory", "--reference", files["test"], "--generated", files["synthetic"]]
    argv += ["--pairing", "none", "--locations", "links", "--location-table", files["links"]]
    return argv + ["--unknown-links", "zero", "--convention", "mobilitygpt", *extra]


@pytest.mark.parametrize(
    ("body", "column", "key"),
    [
        ("location,lat,lon\n1,37.7,-122.4\n", "region", None),
        ("location,region,lat,lon\n1,a,37.7,-122.4\n", "region", None),
        ("location,region,lat,lon\n1,0,37.7,-122.4\n2,0,37.8,-122.4\n", "lat, lon", "0"),
        ("location,region,lat,lon\n1,0,37.7,-122.4\n2,3,97.0,-122.4\n", "lat", "3"),
        ("location,region,lat,lon\n1,0,37.7,-122.4\n,1,37.8,-122.4\n", "location", "row 1"),
        ("location,region,lat,lon\n", "location", None),
    ],
)
def test_a_bad_region_table_is_exit_2_naming_file_column_and_key(
    body, column, key, tmp_path, capsys
):
    files = _files(tmp_path)
    bad = tmp_path / "bad_regions.csv"
    bad.write_text(body)
    out = tmp_path / "out"
    argv = _argv(files, "--metrics", "gravity", "--region-table", str(bad), "--out", str(out))
    assert _exit_code(argv) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and f"column '{column}'" in err, body
    assert key is None or f"first offending key: {key})" in err, err
    assert not out.exists()


def test_a_trajectory_end_in_no_region_is_exit_2_naming_the_link(tmp_path, capsys):
    """A link that starts or ends a trajectory and lies in no region of the table: the table,
    its column and the first such link (MobilityGPT's ``links_region[link]`` fails)."""
    files = _files(tmp_path)
    regions = pl.read_csv(files["regions"])
    first = pl.read_csv(files["test"]).sort("uid", "t")["location"][0]
    regions.filter(pl.col("location") != first).write_csv(files["regions"])
    out = tmp_path / "out"
    argv = _argv(files, "--metrics", "gravity", "--region-table", files["regions"])
    assert _exit_code([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert files["regions"] in err and "column 'location'" in err
    assert "on a link in no region" in err and f"first offending key: {first})" in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--metrics", "gravity"], "it needs --region-table"),
        (["--metrics", "connectivity"], "it needs --link-graph"),
        (["--metrics", "od", "--link-graph", "{graph}"], "read by connectivity alone"),
        (["--metrics", "connectivity", "--link-graph", "{links}"], "column 'origin_id'"),
        (["--metrics", "connectivity", "--link-graph", "nowhere.csv"], "nowhere.csv"),
    ],
)
def test_what_the_network_measures_cannot_do_is_exit_2(extra, said, tmp_path, capsys):
    files = _files(tmp_path)
    extra = [e.format(**files) for e in extra]
    assert _exit_code(_argv(files, *extra)) == 2
    assert said in capsys.readouterr().err


def test_network_measures_need_road_links(tmp_path, capsys):
    """On grid cells there is no link table: link_radius, gravity and connectivity refused."""
    from mobeval.api import evaluate_trajectory
    from mobeval.errors import ConfigError

    files = _files(tmp_path)
    for name in ("link_radius", "gravity", "connectivity"):
        with pytest.raises(ConfigError, match="has no link table"):
            evaluate_trajectory(files["test"], files["synthetic"], pairing="none", metrics=[name])


def test_report_of_the_network_measures_describes_them(tmp_path, capsys):
    """``mobeval report`` of a run with MobilityGPT's measures alone (no MoveSim distribution to
    draw): the values, connectivity described as a share where higher is better, gravity's 100
    bins."""
    from mobeval.cli import main

    files = _files(tmp_path)
    out, report = tmp_path / "out", tmp_path / "report.md"
    argv = _argv(files, "--divergence", "jsdist", "--out", str(out), "--metrics")
    argv += ["gravity,connectivity", "--region-table", files["regions"]]
    assert main([*argv, "--link-graph", files["graph"]]) == 0
    assert main(["report", str(out), "--format", "markdown", "--output", str(report)]) == 0
    text = report.read_text()
    assert "| connectivity | 0.3320 |" in text
    assert "**Connectivity of the generated trajectories** (connectivity)" in text
    assert "Higher is better." in text and "gravity = 100 bins" in text
