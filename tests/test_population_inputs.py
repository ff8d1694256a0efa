"""Unpaired populations (``pairing="none"``) in their location spaces: MoveSim's own GeoLife files
through every face against MoveSim's own code, synthetic populations of different sizes against
plain-Python oracles, any chunking and row order, and the refusals (exit 2)."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from mobeval.metrics import DISTRIBUTIONS, MOVESIM_DISTRIBUTIONS
from tests.conftest import GOLDEN, REPO_ROOT
from tests.test_population import _oracle

GEOLIFE = GOLDEN / "movesim_geolife"
#: MoveSim's GeoLife files, as its repository has them (gzipped): the docs' example too.
MOVESIM_FILES = REPO_ROOT / "data_samples" / "movesim"
SIX = ",".join(MOVESIM_DISTRIBUTIONS)


def _movesim_argv(real, generated, table, max_distance) -> list[str]:
    argv = ["trajectory", "--reference", str(real), "--generated", str(generated)]
    argv += ["--pairing", "none", "--locations", "ids", "--location-table", str(table)]
    return argv + ["--convention", "movesim", "--max-distance", str(max_distance), "--metrics", SIX]


def _face(face: str, real, generated, table, max_distance, tmp_path, capsys) -> dict:
    """The summary (metric -> value) of one face's run of the movesim preset, unpaired ids."""
    from tests.test_population_links import face_summary

    options = {"locations": "ids", "location_table": str(table), "convention": "movesim"}
    options |= {"max_distance": max_distance, "metrics": list(MOVESIM_DISTRIBUTIONS)}
    return face_summary(face, real, generated, options, tmp_path, capsys)


@pytest.mark.parametrize("face", ["cli", "job", "api"])
def test_movesim_geolife_files_give_movesim_six_bit_for_bit(face, tmp_path, capsys):
    """MoveSim's own ``real.data`` (7,000 lines) against its ``test.data`` (2,500), its ``gps``
    table and its GeoLife ``max_distance`` (247.3), read as they are (gzipped): the six JSDs of
    MoveSim's ``IndividualEval.get_individual_jsds`` bit for bit, through each face."""
    expected = json.loads((GEOLIFE / "expected.json").read_text())
    real, generated = MOVESIM_FILES / "real.data.gz", MOVESIM_FILES / "test.data.gz"
    got = _face(
        face, real, generated, MOVESIM_FILES / "gps.gz", expected["max_distance"], tmp_path, capsys
    )
    for name, want in zip(expected["order"], expected["jsds"], strict=True):
        assert got[f"jsd_{name}"] == want, name  # bit for bit
    assert (got["uids"], got["steps"]) == (expected["generated_lines"], 48 * 2500)
    assert (got["real_uids"], got["real_steps"]) == (expected["real_lines"], 48 * 7000)


def _numpy_arange(lo: float, hi: float, bins: int) -> list[float]:
    """The edges ``np.arange(lo, hi, (hi - lo) / bins)`` makes: ``lo + i * step`` for i below
    ``ceil((hi - lo) / step)``."""
    step = float(hi - lo) / bins
    return [lo + i * step for i in range(math.ceil((hi - lo) / step))]


def _histogram(values, edges) -> list[int]:
    """``np.histogram(values, edges)``: bins [e_i, e_i+1), the last closed, outside dropped."""
    counts = [0] * (len(edges) - 1)
    for v in values:
        for i in range(len(counts)):
            last = i == len(counts) - 1
            if edges[i] <= v < edges[i + 1] or (last and v == edges[i + 1]):
                counts[i] += 1
                break
    return counts


def _movesim_jsd(c1, c2) -> float:
    """MoveSim's ``get_js_divergence``: p = c / (sum + 1e-14), then scipy's ``entropy(p, m)``,
    which divides p and m by their sums before summing p * log(p / m)."""
    p = [a / (sum(c1) + 1e-14) for a in c1]
    q = [b / (sum(c2) + 1e-14) for b in c2]
    m = [(a + b) / 2 for a, b in zip(p, q, strict=True)]

    def entropy(u):
        su, sm = sum(u), sum(m)
        return sum(a / su * math.log((a / su) / (b / sm)) for a, b in zip(u, m, strict=True) if a)

    return 0.5 * entropy(p) + 0.5 * entropy(q)


def _movesim_six(t1, t2, xs, ys, max_distance) -> dict[str, float]:
    """MoveSim's six JSDs of the location-id lines ``t1`` (real) and ``t2`` (generated) over
    the table ``xs``, ``ys``, in plain Python after ``IndividualEval.get_individual_jsds``."""

    def measures(trajs):
        jumps, radii, stays, distinct, ranks, visits = [], [], [], [], [], Counter()
        for traj in trajs:
            pts = [(xs[v], ys[v]) for v in traj]
            jumps += [
                (a - c) ** 2 + (b - d) ** 2 for (a, b), (c, d) in zip(pts, pts[1:], strict=False)
            ]
            cx, cy = (sum(p[i] for p in pts) / len(pts) for i in (0, 1))
            radii.append(sum((p[0] - cx) ** 2 + (p[1] - cy) ** 2 for p in pts) / len(pts))
            run = 1
            for a, b in zip(traj, traj[1:], strict=False):
                run, stays = (run + 1, stays) if a == b else (1, [*stays, run / 48])
            distinct.append(len(set(traj)) / 48)
            top = [n / 48 for _, n in Counter(traj).most_common(100)]
            ranks.append(top + [0.0] * (100 - len(top)))
            visits.update(traj)
        mean = [sum(r[i] for r in ranks) / len(ranks) for i in range(100)]
        irank = [v / sum(mean) for v in mean]
        total = sum(visits.values())
        grank = sorted((n / total for n in visits.values()), reverse=True)[:100]
        grank += [0.0] * (100 - len(grank))  # MoveSim's top 100 of every location, unvisited too
        return [jumps, radii, stays, distinct, grank, irank]

    ranges = [(max_distance, 10000), (max_distance**2, 10000), (1, 48), (1, 48), (1, 100)]
    ranges.append((1, 100))
    values = zip(measures(t1), measures(t2), ranges, strict=True)
    return {
        name: _movesim_jsd(*(_histogram(v, _numpy_arange(0, hi, bins)) for v in (a, b)))
        for name, (a, b, (hi, bins)) in zip(MOVESIM_DISTRIBUTIONS, values, strict=True)
    }


def _write_lines(path: Path, trajs) -> Path:
    path.write_text("".join(" ".join(str(v) for v in traj) + "\n" for traj in trajs))
    return path


def test_movesim_files_of_different_sizes_match_movesim_in_plain_python(tmp_path):
    """Synthetic MoveSim files (40 real lines, 25 generated, a 30-location gps table with a
    header-less ``lat lon`` a line): the movesim preset's six against the plain-Python oracle,
    the same bits for any chunk size."""
    rng = np.random.default_rng(11)
    lat, lon = 39.9 + rng.random(30) / 10, 116.3 + rng.random(30) / 10
    (tmp_path / "gps").write_text(
        "".join(f"{a:.6f} {b:.6f}\n" for a, b in zip(lat, lon, strict=True))
    )
    table = np.loadtxt(tmp_path / "gps")

    def lines(n):
        return [np.repeat(rng.integers(0, 30, 12), 4).tolist() for _ in range(n)]

    real, gen = lines(40), lines(25)
    for i in range(0, 25, 3):  # stays of other lengths
        gen[i][5:17] = [gen[i][5]] * 12
    r, g = _write_lines(tmp_path / "real.data", real), _write_lines(tmp_path / "gene.data", gen)
    from mobeval.api import evaluate_trajectory

    def run(chunk_rows):
        result = evaluate_trajectory(
            str(r),
            str(g),
            pairing="none",
            locations="ids",
            location_table=str(tmp_path / "gps"),
            convention="movesim",
            max_distance=0.2,
            metrics=list(MOVESIM_DISTRIBUTIONS),
            chunk_rows=chunk_rows,
        )
        return dict(result.summary.select("metric", "value").iter_rows())

    got = run(48 * 7)
    want = _movesim_six(real, gen, table[:, 0].tolist(), table[:, 1].tolist(), 0.2)
    for name in MOVESIM_DISTRIBUTIONS:
        assert got[f"jsd_{name}"] == pytest.approx(want[name], rel=1e-12, abs=1e-15), name
    assert (got["uids"], got["real_uids"]) == (25, 40)
    assert run(48) == run(10**6) == got  # the same bits for any chunking of the files


def _population(uids, days, rng, xs, ys, with_d=True):
    """(frame, location-id days): ``uids`` each with ``days`` days of 48 points over the
    locations of ``xs``, ``ys``; without ``d``, each uid is one trajectory."""
    trajs, rows = [], []
    for u in uids:
        for d in range(days):
            traj = np.repeat(rng.integers(0, len(xs), 16), 3).tolist()
            trajs.append(traj)
            rows += [(u, d, t, int(xs[v]), int(ys[v])) for t, v in enumerate(traj)]
    frame = pl.DataFrame(rows, schema=["uid", "d", "t", "x", "y"], orient="row")
    return (frame if with_d else frame.drop("d")), trajs


def test_unpaired_grid_populations_of_any_sizes_match_plain_python_for_any_chunking():
    """A real population of 9 uids x 2 days and a generated one of 5 other uids, each a single
    trajectory (no ``d`` column): every distribution of the default convention against the
    plain-Python oracle; the same bits for any chunk size and row order."""
    from mobeval.api import evaluate_trajectory

    rng = np.random.default_rng(3)
    cells = rng.choice(200 * 200, 40, replace=False)
    xs, ys = (cells // 200 + 1).tolist(), (cells % 200 + 1).tolist()
    real, real_trajs = _population(range(9), 2, rng, xs, ys)
    gen, gen_trajs = _population(range(100, 105), 1, rng, xs, ys, with_d=False)
    want = _oracle(real_trajs, gen_trajs, xs, ys)

    def run(real, gen, chunk_rows):
        result = evaluate_trajectory(
            real, gen, pairing="none", metrics=list(DISTRIBUTIONS), chunk_rows=chunk_rows
        )
        return {m: (v, n) for m, v, n, _ in result.summary.iter_rows()}

    whole = run(real, gen, 1_000_000)
    for name in DISTRIBUTIONS:
        assert whole[f"jsd_{name}"][0] == pytest.approx(want[name], rel=1e-9, abs=1e-12), name
    counts = {m: whole[m][0] for m in ("uids", "uid_days", "steps", "real_uids", "real_uid_days")}
    assert counts == {"uids": 5, "uid_days": 5, "steps": 240, "real_uids": 9, "real_uid_days": 18}
    from mobeval.families import FAMILIES  # every count row, the real population's too

    assert [m for m in whole if not m.startswith("jsd_")] == list(FAMILIES["trajectory"].counts)
    shuffled = [f.sample(fraction=1.0, shuffle=True, seed=4) for f in (real, gen)]
    for chunk_rows in (48, 100, 48 * 7):
        assert run(*shuffled, chunk_rows) == whole, chunk_rows


def _write(tmp_path, frame, name) -> str:
    path = tmp_path / f"{name}.parquet"
    frame.write_parquet(path)
    return str(path)


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--pairing", "none"], "geobleu, dtw compare each uid's generated days"),
        (["--pairing", "none", "--metrics", "dtw,radius"], "dtw compares each uid's"),
        (["--locations", "ids", "--metrics", "radius"], "add --pairing none"),
        (["--pairing", "none", "--locations", "ids", "--metrics", "radius"], "needs --location"),
        (["--pairing", "none", "--location-table", "gps", "--metrics", "radius"], "take no table"),
    ],
)
def test_what_unpaired_inputs_cannot_do_is_exit_2_saying_what_to_do(extra, said, tmp_path, capsys):
    from mobeval.cli import main

    real, _ = _population(range(3), 1, np.random.default_rng(0), [1, 2], [3, 4])
    path = _write(tmp_path, real, "real")
    argv = ["trajectory", "--reference", path, "--generated", path, "--out", str(tmp_path / "o")]
    assert main(argv + extra) == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_density_over_location_ids_is_exit_2(tmp_path, capsys):
    from mobeval.cli import main

    (tmp_path / "gps").write_text("1 2\n3 4\n")
    path = _write_lines(tmp_path / "a.data", [[0, 1, 1]])
    argv = ["trajectory", "--reference", str(path), "--generated", str(path), "--pairing", "none"]
    argv += ["--locations", "ids", "--location-table", str(tmp_path / "gps"), "--metrics"]
    assert main([*argv, "radius,density"]) == 2
    assert "density: HuMob grid cells (--locations grid) only" in capsys.readouterr().err


def test_a_location_missing_from_the_table_names_the_file_column_and_row(tmp_path, capsys):
    from mobeval.cli import main

    (tmp_path / "gps").write_text("1 2\n3 4\n5 6\n")
    real = _write_lines(tmp_path / "real.data", [[0, 1, 2], [2, 2, 1]])
    gen = _write_lines(tmp_path / "gene.data", [[0, 1], [1, 7, 2]])
    argv = ["trajectory", "--reference", str(real), "--generated", str(gen), "--pairing", "none"]
    argv += ["--locations", "ids", "--location-table", str(tmp_path / "gps"), "--metrics"]
    assert main([*argv, "radius"]) == 2
    err = capsys.readouterr().err
    assert "gene.data" in err and "location" in err and "(1, 0, 1)" in err, err


@pytest.mark.parametrize("line", ["1 2 x 4", "", "1.5 2"])
def test_a_bad_line_of_a_sequence_file_is_exit_2_naming_it(line, tmp_path, capsys):
    from mobeval.cli import main

    (tmp_path / "gps").write_text("1 2\n3 4\n5 6\n")
    real = _write_lines(tmp_path / "real.data", [[0, 1, 2]])
    gen = tmp_path / "gene.data"
    gen.write_text(f"0 1 2\n{line}\n2 1 0\n")
    argv = ["trajectory", "--reference", str(real), "--generated", str(gen), "--pairing", "none"]
    argv += ["--locations", "ids", "--location-table", str(tmp_path / "gps"), "--metrics"]
    assert main([*argv, "radius", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "gene.data" in err and "line 2" in err, err
    assert not (tmp_path / "o").exists()


def test_a_csv_location_table_of_any_ids_and_order_gives_the_gps_files_bits(tmp_path):
    """The same population as location-id frames (ids 10 * line + 3, no ``d`` column) with a
    CSV table ``location, lat, lon`` in shuffled order: the bits of MoveSim's files and ``gps``."""
    from mobeval.api import evaluate_trajectory

    rng = np.random.default_rng(2)
    coords = 39.9 + rng.random((20, 2)) / 10
    (tmp_path / "gps").write_text("".join(f"{float(a)!r} {float(b)!r}\n" for a, b in coords))
    real = [np.repeat(rng.integers(0, 20, 16), 3).tolist() for _ in range(30)]
    gen = [np.repeat(rng.integers(0, 20, 12), 4).tolist() for _ in range(11)]
    files = [_write_lines(tmp_path / f"{n}.data", t) for n, t in (("real", real), ("gene", gen))]
    table = pl.DataFrame({"location": np.arange(20) * 10 + 3, "lat": coords[:, 0]})
    table = table.with_columns(lon=coords[:, 1]).sample(fraction=1.0, shuffle=True, seed=1)
    table.write_csv(tmp_path / "table.csv")

    def frame(trajs):
        rows = [(u, t, 10 * v + 3) for u, traj in enumerate(trajs) for t, v in enumerate(traj)]
        return pl.DataFrame(rows, schema=["uid", "t", "location"], orient="row")

    options = {"pairing": "none", "locations": "ids", "metrics": list(MOVESIM_DISTRIBUTIONS)}
    options |= {"convention": "movesim", "max_distance": 0.2}
    by_files = evaluate_trajectory(
        *map(str, files), location_table=str(tmp_path / "gps"), **options
    )
    by_ids = evaluate_trajectory(
        frame(real), frame(gen), location_table=str(tmp_path / "table.csv"), **options
    )
    assert by_ids.summary.equals(by_files.summary)


def test_compare_of_unpaired_results_says_they_have_no_per_unit_values(tmp_path, capsys):
    """An unpaired result has no per-unit values to pair: compare says so (exit 2), rather than
    asking to score it again."""
    from mobeval.cli import main

    rng = np.random.default_rng(1)
    real, _ = _population(range(4), 1, rng, [5, 6, 7], [8, 9, 10])
    reference = _write(tmp_path, real, "real")
    for name in ("a", "b"):
        gen, _ = _population(range(3), 1, rng, [5, 6, 7], [8, 9, 10], with_d=False)
        argv = ["trajectory", "--reference", reference, "--generated", _write(tmp_path, gen, name)]
        argv += ["--pairing", "none", "--metrics", "radius", "--out", str(tmp_path / "out")]
        assert main([*argv, "--quiet"]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "out")]) == 2
    assert "scored as unpaired populations (--pairing none)" in capsys.readouterr().err


def test_the_report_draws_the_density_maps_of_stored_visits_per_location(tmp_path):
    """Unpaired populations of different sizes, on a grid and as location ids: ``density_map``
    under OUT holds each side's visits per location (a plain count of the inputs' points, at the
    cell or at the table's coordinates), and the report draws them (``<city>-density-map.png``)
    in every format with figures."""
    from mobeval.cli import main

    rng = np.random.default_rng(5)
    cells = rng.choice(200 * 200, 30, replace=False)
    xs, ys = (cells // 200 + 1).tolist(), (cells % 200 + 1).tolist()
    real, real_trajs = _population(range(7), 2, rng, xs, ys)
    gen, gen_trajs = _population(range(50, 53), 1, rng, xs, ys)
    out = tmp_path / "out"
    argv = ["trajectory", "--pairing", "none", "--metrics", "distance,radius", "--out", str(out)]
    paths = [_write(tmp_path, real, "real"), _write(tmp_path, gen, "gen")]
    assert main([*argv, "--reference", paths[0], "--generated", paths[1], "--city", "grid"]) == 0
    (tmp_path / "gps").write_text(
        "".join(f"{x / 7} {y / 3}\n" for x, y in zip(xs, ys, strict=True))
    )
    sides = [
        _write_lines(tmp_path / f"{n}.data", t) for n, t in (("r", real_trajs), ("g", gen_trajs))
    ]
    argv += ["--locations", "ids", "--location-table", str(tmp_path / "gps"), "--city", "ids"]
    assert main([*argv, "--reference", str(sides[0]), "--generated", str(sides[1])]) == 0

    def visits(trajs, where) -> Counter:
        return Counter(where(v) for traj in trajs for v in traj)

    for city, where in (
        ("grid", lambda v: (None, xs[v], ys[v])),
        ("ids", lambda v: (v, xs[v] / 7, ys[v] / 3)),
    ):
        stored = pl.read_parquet(next((out / "density_map" / f"city={city}").rglob("*.parquet")))
        assert stored.columns == ["location", "x", "y", "real_visits", "generated_visits"]
        for side, trajs in (("real", real_trajs), ("generated", gen_trajs)):
            rows = stored.filter(pl.col(f"{side}_visits") > 0)
            got = {
                (loc, x, y): n
                for loc, x, y, n in rows.select("location", "x", "y", f"{side}_visits").iter_rows()
            }
            assert got == visits(trajs, where), (city, side)
    assert main(["report", str(out), "--format", "markdown,latex,html"]) == 0
    report = out / "report"
    for city in ("grid", "ids"):
        png = (report / "report_files" / f"{city}-density-map.png").read_bytes()
        assert png.startswith(b"\x89PNG")
        assert f"report_files/{city}-density-map.png)" in (report / "report.md").read_text()
        assert f"{{report_files/{city}-density-map.png}}" in (report / "report.tex").read_text()
    assert "city=grid: visits per cell, real and generated" in (report / "report.html").read_text()
