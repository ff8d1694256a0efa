"""The unit of a population's distances, stated in the output (issue 32: "distances planar or
geodesic by option, with the unit in the output"): ``options.distance_unit`` of ``--format
json`` (and of the manifest) names the unit that ``distance``, ``radius``, ``jump`` and
``max_distance`` are in, for every location space and ``--distance``."""

from __future__ import annotations

import json

import pytest

GPS = [
    "--reference", "data_samples/gps/real.csv", "--generated", "data_samples/gps/generated.csv",
    "--columns", "uid=traj_id,t=timestamp", "--pairing", "none", "--locations", "gps",
    "--gps-grid", "30.65,104.04,30.73,104.13,500m", "--score-out-of-grid",
]  # fmt: skip
LINKS = [
    "--reference", "data_samples/links/real.csv", "--generated", "data_samples/links/generated.csv",
    "--pairing", "none", "--locations", "links", "--location-table", "data_samples/links/links.csv",
]  # fmt: skip
GRID = [
    "--reference", "data_samples/humob/reference_test.csv.gz",
    "--generated", "data_samples/humob/weekly_repeat.csv.gz", "--pairing", "none",
]  # fmt: skip


def _options(capsys, argv: list[str]) -> dict:
    from mobeval.cli import main

    capsys.readouterr()
    code = main(["trajectory", *argv, "--metrics", "distance", "--format", "json", "--quiet"])
    assert code == 0
    return json.loads(capsys.readouterr().out)["options"]


@pytest.mark.parametrize(
    ("argv", "unit"),
    [
        (GPS + ["--distance", "haversine", "--max-distance", "3000"], "metres"),
        (GPS + ["--max-distance", "0.05"], "degrees"),
        (LINKS + ["--distance", "haversine", "--max-distance", "2000"], "metres"),
        (LINKS, "location table units"),
        (GRID, "cells"),
        (GRID + ["--unit", "metres"], "metres"),
    ],
)
def test_the_output_states_the_distances_unit(capsys, argv, unit):
    """GPS points under haversine are in metres, not the convention's grid ``unit`` ("cells",
    which the old output stated alone); planar GPS in degrees; a location table's points in its
    own units; grid cells in cells, or metres with ``--unit metres``."""
    options = _options(capsys, argv)
    assert options["distance_unit"] == unit
