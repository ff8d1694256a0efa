"""Road-link populations (``locations="links"``): MobilityGPT's own numbers (tests/golden/
mobilitygpt, made by its ``evaluate.py``) through the CLI, the job file and the API from files
as a user writes them, any chunking and row order, and the refusals (exit 2)."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from tests.conftest import GOLDEN

GOLDEN_LINKS = GOLDEN / "mobilitygpt"
NAMES = ("od", "location", "trip_length")


def _trajectories(trajs, order=None) -> pl.DataFrame:
    """uid (the trajectory's index), t (the point's place), location (the link id)."""
    rows = [(i, t, link) for i, traj in enumerate(trajs) for t, link in enumerate(traj)]
    frame = pl.DataFrame(rows, schema=["uid", "t", "location"], orient="row")
    return frame if order is None else frame[order]


def _golden_files(tmp_path) -> tuple[str, str, str]:
    """MobilityGPT's golden inputs as CSV files: test and synthetic trajectories (uid, t,
    location) and its link table (geo_id, length in its row order)."""
    data = json.loads((GOLDEN_LINKS / "inputs.json").read_text())
    paths = []
    for name in ("test", "synthetic"):
        path = tmp_path / f"{name}.csv"
        _trajectories(data[name]).write_csv(path)
        paths.append(str(path))
    table = tmp_path / "links.csv"
    pl.DataFrame({"geo_id": data["geo_id"], "length": data["length"]}).write_csv(table)
    return paths[0], paths[1], str(table)


def _argv(real, generated, table, *extra) -> list[str]:
    argv = ["trajectory", "--reference", real, "--generated", generated, "--pairing", "none"]
    argv += ["--locations", "links", "--location-table", table, "--convention", "mobilitygpt"]
    return argv + ["--divergence", "jsdist", "--metrics", ",".join(NAMES), *extra]


def face_summary(face: str, real, generated, options: dict, tmp_path, capsys) -> dict:
    """The summary (metric -> value) of one face's unpaired run of ``options`` (Python names
    and values): the API, the command line (``--name value``, lists joined by commas) or a job
    file (TOML values)."""
    from mobeval.api import evaluate_trajectory
    from mobeval.cli import main

    options = {"pairing": "none"} | options
    if face == "api":
        result = evaluate_trajectory(str(real), str(generated), progress=False, **options)
        return dict(result.summary.select("metric", "value").iter_rows())
    if face == "cli":
        argv = ["trajectory", "--reference", str(real), "--generated", str(generated)]
        for name, value in options.items():
            text = ",".join(map(str, value)) if isinstance(value, list) else str(value)
            argv += [f"--{name.replace('_', '-')}", text]
        assert main([*argv, "--format", "json"]) == 0
        return json.loads(capsys.readouterr().out)["summary"]
    job = tmp_path / "job.toml"
    job.write_text(
        f'out = "{tmp_path / "out"}"\n\n[[tasks]]\ntype = "trajectory"\ncity = "c"\n'
        f'truth = "{real}"\n'
        + "".join(f"{name} = {json.dumps(value)}\n" for name, value in options.items())
        + f'[tasks.models]\nmodel = "{generated}"\n'
    )
    assert main(["run", str(job), "--quiet"]) == 0
    summary = pl.read_parquet(next((tmp_path / "out" / "summary").rglob("*.parquet")))
    return dict(summary.select("metric", "value").iter_rows())


@pytest.mark.parametrize("face", ["cli", "job", "api"])
def test_mobilitygpt_golden_through_every_face(face, tmp_path, capsys):
    """MobilityGPT's ``js_od``, ``js_link`` and ``js_length`` from its own ``evaluate.py`` on
    its golden inputs, bit for bit, from a user's CSV files: links 400..404, absent from the
    table, are MobilityGPT's links of length 0 (``--unknown-links zero``)."""
    expected = json.loads((GOLDEN_LINKS / "expected.json").read_text())
    real, generated, table = _golden_files(tmp_path)
    options = {"locations": "links", "location_table": table, "unknown_links": "zero"}
    options |= {"convention": "mobilitygpt", "divergence": "jsdist", "metrics": list(NAMES)}
    got = face_summary(face, real, generated, options, tmp_path, capsys)
    for name in NAMES:
        assert got[f"jsdist_{name}"] == expected[name], name


def test_unknown_link_ids_are_exit_2_naming_file_column_and_id(tmp_path, capsys):
    """By default an id the link table does not hold is an error: the file, the column, the
    first such id; no output."""
    from mobeval.cli import main

    real, generated, table = _golden_files(tmp_path)
    out = tmp_path / "out"
    assert main([*_argv(real, generated, table), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert real in err or generated in err
    assert "location" in err and "not in the link table" in err
    first = pl.read_csv(real).filter(pl.col("location") >= 400)["location"][0]
    assert f"location {first})" in err
    assert not out.exists()


def chunked_runs(tmp_path, sides: dict, options: dict, rng) -> list[dict]:
    """The summaries (metric -> value) of the API on the two populations ``sides`` (name ->
    frame: the reference first) as Parquet files, whole in one chunk, then shuffled in chunks of
    7 and 30 rows."""
    from mobeval.api import evaluate_trajectory

    runs = []
    for chunk_rows, shuffle in ((10**6, False), (7, True), (30, True)):
        paths = []
        for name, frame in sides.items():
            frame = frame[rng.permutation(frame.height)] if shuffle else frame
            paths.append(tmp_path / f"{name}{chunk_rows}.parquet")
            frame.write_parquet(paths[-1])
        result = evaluate_trajectory(*map(str, paths), chunk_rows=chunk_rows, **options)
        runs.append(dict(result.summary.select("metric", "value").iter_rows()))
    return runs


def _oracle_trip_lengths(trajs, lengths: dict) -> list[float]:
    """MobilityGPT's trip length: each distinct link of the trajectory once."""
    return [sum(lengths[link] for link in set(traj)) for traj in trajs]


def test_links_any_chunking_and_row_order_and_trip_lengths_by_plain_python(tmp_path):
    """Shuffled rows and chunks of 7 rows to all give the same bits; the distribution table's
    trip lengths are plain Python's (every link in the table: lengths summed per distinct
    link), binned by MobilityGPT's 300 bins."""

    rng = np.random.default_rng(3)
    lengths = {int(i): float(v) for i, v in zip(range(50), rng.uniform(1, 100, 50), strict=True)}
    real = [list(rng.integers(0, 50, rng.integers(2, 9))) for _ in range(40)]
    gen = [list(rng.integers(0, 50, rng.integers(2, 9))) for _ in range(25)]
    table = tmp_path / "links.parquet"
    pl.DataFrame(
        {"location": list(lengths)[::-1], "length": list(lengths.values())[::-1]}
    ).write_parquet(table)
    options = dict(
        pairing="none",
        locations="links",
        location_table=str(table),
        convention="mobilitygpt",
        divergence="jsdist",
        metrics=list(NAMES),
        progress=False,
    )
    sides = {"real": _trajectories(real), "gen": _trajectories(gen)}
    runs = chunked_runs(tmp_path, sides, options, rng)
    assert runs[1] == runs[0] and runs[2] == runs[0]
    trips = _oracle_trip_lengths(real, lengths) + _oracle_trip_lengths(gen, lengths)
    lo, hi = min(trips), max(trips)
    edges = np.arange(lo, hi, (hi - lo) / 300)
    real_counts, _ = np.histogram(_oracle_trip_lengths(real, lengths), edges)
    gen_counts, _ = np.histogram(_oracle_trip_lengths(gen, lengths), edges)
    from scipy.spatial.distance import jensenshannon

    assert runs[0]["jsdist_trip_length"] == pytest.approx(
        jensenshannon(real_counts, gen_counts), rel=1e-12
    )


def _exit_code(argv) -> int:
    """The CLI's exit code (argparse's refusals exit)."""
    from mobeval.cli import main

    try:
        return main(argv)
    except SystemExit as exit_:
        return exit_.code


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--metrics", "trip_length", "--locations", "ids"], "has no link table"),
        (["--metrics", "radius"], "a point of each link"),
        (["--metrics", "od", "--unknown-links", "maybe"], "--unknown-links"),
        (["--metrics", "od", "--location-table", "missing.csv"], "missing.csv"),
    ],
)
def test_what_links_cannot_do_is_exit_2(extra, said, tmp_path, capsys):
    real, generated, table = _golden_files(tmp_path)
    argv = ["trajectory", "--reference", real, "--generated", generated, "--pairing", "none"]
    argv += ["--locations", "links", "--location-table", table, "--unknown-links", "zero"]
    assert _exit_code([*argv, *extra]) == 2
    assert said in capsys.readouterr().err


def test_a_bad_link_table_is_exit_2_naming_the_column_and_id(tmp_path, capsys):
    from mobeval.cli import main

    real, generated, _ = _golden_files(tmp_path)
    argv = ["trajectory", "--reference", real, "--generated", generated, "--pairing", "none"]
    argv += ["--locations", "links", "--metrics", "od", "--location-table"]
    for body, column, key in (
        ("location,length\n1,2.0\n2,-1.0\n", "length", "2"),
        ("location,length\n1,2.0\n1,3.0\n", "location", "1"),
        ("location,length\n1,2.0\n5,\n", "length", "5"),
        ("location\n1\n", "length", None),
    ):
        path = tmp_path / "bad.csv"
        path.write_text(body)
        assert main([*argv, str(path)]) == 2
        err = capsys.readouterr().err
        assert str(path) in err and column in err, body
        assert key is None or key in err, body
