"""The report's pictures of a generated population as a person reads them (issue 32, item 6):
every distribution a run stores is drawn, the generation metrics' too (TrajGDM's, MobilityGPT's,
DiffTraj's length), with what the bins measure on the axis; a GPS population's density map is
drawn in degrees of longitude and latitude over the user's ``--gps-grid``."""

from __future__ import annotations

import math

LINKS = [
    "--reference", "data_samples/links/real.csv", "--generated", "data_samples/links/generated.csv",
    "--pairing", "none", "--locations", "links", "--location-table", "data_samples/links/links.csv",
    "--convention", "mobilitygpt", "--divergence", "jsdist",
    "--metrics", "od,location,trip_length,length,duplicate_ratio",
]  # fmt: skip
GPS_GRID = "30.65,104.04,30.73,104.13,16x16"


def test_the_report_draws_the_generation_distributions(tmp_path):
    """MobilityGPT's od, location, trip length and DiffTraj's length, stored in OUT/distributions,
    are drawn (``<city>-distributions.png``, in the report's text); before, a run of generation
    metrics alone had no picture of its distributions."""
    from mobeval.cli import main

    out = tmp_path / "out"
    assert main(["trajectory", *LINKS, "--out", str(out), "--quiet"]) == 0
    assert main(["report", str(out), "--format", "markdown,html"]) == 0
    png = out / "report" / "report_files" / "links-distributions.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "report_files/links-distributions.png)" in (out / "report" / "report.md").read_text()


def test_axis_labels_say_what_the_bins_measure():
    """Distances in the run's unit (metres under haversine, squared where MoveSim's convention
    squares them), location ids, points, the link table's lengths."""
    from mobeval.report.plots import _axis_label

    gps = {"locations": "gps", "distance": "haversine", "unit": "cells", "squared": False}
    assert _axis_label("jump", "bin (left edge)", gps) == "bin (left edge), metres"
    movesim = {"locations": "ids", "distance": "planar", "unit": "cells", "squared": True}
    assert _axis_label("radius", "bin (left edge)", movesim).endswith(
        "location table units squared"
    )
    assert _axis_label("od", "bin (left edge)", gps) == "location id (bin's left edge)"
    assert _axis_label("length", "bin (left edge)", gps) == "bin (left edge), points"


def test_a_gps_density_map_is_drawn_in_degrees():
    """Cell (column c, row r) of ``--gps-grid`` is drawn at its centre, ``lon_min + (c + 1/2)
    dlon``, ``lat_min + (r + 1/2) dlat``, and the edges between cells at the cells' borders; a
    degree of longitude is drawn cos(middle latitude) of a degree of latitude."""
    from mobeval.report.plots import _map_place

    place, aspect, names = _map_place({"locations": "gps", "gps_grid": GPS_GRID}, "cells")
    dlat, dlon = (30.73 - 30.65) / 16, (104.13 - 104.04) / 16
    lon, lat = place(3.0, 5.0)
    assert math.isclose(lon, 104.04 + 3.5 * dlon) and math.isclose(lat, 30.65 + 5.5 * dlat)
    lon, lat = place(-0.5, 15.5)  # the west border, the north border
    assert math.isclose(lon, 104.04) and math.isclose(lat, 30.73)
    assert math.isclose(aspect, 1 / math.cos(math.radians(30.69)))
    assert names == ("longitude (degrees)", "latitude (degrees)")


def test_the_report_states_a_gps_run_in_its_units(tmp_path):
    """A GPS run under haversine: the report's methods give ``max_distance`` in metres and the
    snapping grid of ``memorised_near`` in degrees (both said "cells" before), and the real
    population's counts are counts, not metrics of the table (they were shown as 20.0000)."""
    from mobeval.cli import main

    out = tmp_path / "out"
    argv = [
        "trajectory", "--reference", "data_samples/gps/real.csv",
        "--generated", "data_samples/gps/generated.csv", "--columns", "uid=traj_id,t=timestamp",
        "--pairing", "none", "--locations", "gps", "--gps-grid", GPS_GRID, "--score-out-of-grid",
        "--distance", "haversine", "--max-distance", "3000", "--near-tolerance", "0.02",
        "--metrics", "distance,jump,memorised_near", "--out", str(out), "--quiet",
    ]  # fmt: skip
    assert main(argv) == 0
    assert main(["report", str(out), "--format", "markdown"]) == 0
    text = (out / "report" / "report.md").read_text()
    assert "3000 metres" in text and "3000 cells" not in text
    assert "0.02 degrees" in text and "0.02 cells" not in text
    assert "over [0, 282] metres" in text  # the jumps' histogram, under haversine
    assert "real_uids" not in text and "real_steps" not in text
    assert f"location space (locations) = gps, {GPS_GRID}" in text
    assert "distances = haversine, metres" in text


def test_movesims_fine_distance_bins_are_drawn_on_a_symlog_axis(tmp_path, monkeypatch):
    """MoveSim's 10,000 distance bins hold most of the mass in the first few (0.01 % of a linear
    axis, where the real and generated steps were invisible): the distance and radius panels are
    drawn on a symlog axis, linear over the first bin; the others stay linear."""
    from matplotlib.axes import Axes

    from mobeval.cli import main

    scales = []
    original = Axes.set_xscale
    monkeypatch.setattr(
        Axes,
        "set_xscale",
        lambda ax, v, **kw: scales.append((ax, v, kw)) or original(ax, v, **kw),
    )
    out = tmp_path / "out"
    argv = [
        "trajectory", "--reference", "data_samples/movesim/real.data.gz",
        "--generated", "data_samples/movesim/test.data.gz", "--pairing", "none",
        "--locations", "ids", "--location-table", "data_samples/movesim/gps.gz",
        "--convention", "movesim", "--max-distance", "247.3",
        "--metrics", "distance,radius,dailyloc", "--out", str(out), "--quiet",
    ]  # fmt: skip
    assert main(argv) == 0
    assert main(["report", str(out), "--format", "markdown"]) == 0
    symlog = {ax.get_title() for ax, scale, _ in scales if scale == "symlog"}
    assert symlog == {"Distance (jump length)", "Radius of gyration"}
    assert all(kw["linthresh"] > 0 for _, scale, kw in scales if scale == "symlog")
