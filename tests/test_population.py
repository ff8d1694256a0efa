"""Population distributions: MoveSim's six JSDs against its own code, the default convention
against plain-Python oracles, and invariance to chunking and row order."""

from __future__ import annotations

import dataclasses
import json
import math
from collections import Counter

import numpy as np
import pytest

from mobeval.metrics import DISTRIBUTIONS, GRID_DISTRIBUTIONS, MOVESIM_DISTRIBUTIONS
from mobeval.metrics.population import movesim_divergences
from mobeval.metrics.trajectory import TRAJECTORY_PRESETS
from tests.conftest import GOLDEN

MOVESIM = GOLDEN / "movesim"


def _read(name: str) -> np.ndarray:
    return np.loadtxt(MOVESIM / name, dtype=np.int64)


@pytest.mark.parametrize("max_distance", ["247.3", "2.088"])
def test_movesim_preset_reproduces_movesim(max_distance):
    expected = json.loads((MOVESIM / "expected.json").read_text())
    gps = np.loadtxt(MOVESIM / "gps")
    conv = dataclasses.replace(TRAJECTORY_PRESETS["movesim"], max_distance=float(max_distance))
    got = movesim_divergences(_read("real.data"), _read("gene.data"), gps[:, 0], gps[:, 1], conv)
    want = dict(zip(expected["order"], expected["jsds_by_max_distance"][max_distance], strict=True))
    for name in MOVESIM_DISTRIBUTIONS:
        assert got[name] == want[name], name  # bit for bit


def _jsd(c1, c2):
    p = [a / sum(c1) for a in c1]
    q = [b / sum(c2) for b in c2]
    m = [(a + b) / 2 for a, b in zip(p, q, strict=True)]
    kl = lambda u: sum(a * math.log(a / b) for a, b in zip(u, m, strict=True) if a > 0)  # noqa: E731
    return (kl(p) + kl(q)) / 2


def _cell(x, y):
    return [min(max(int(v - 1) * 16 // 200, 0), 15) for v in (x, y)]


def _histograms(days, xs, ys):
    """The default convention's count histograms of location-id ``days`` in plain Python: 1-cell
    bins of jumps and radii over [0, 282] (beyond: the last bin), every stay, distinct counts,
    top-100 counts rank by rank; points, first and last points per cell of a 16 x 16 grid over
    the 200 x 200 cells."""
    jump, rad, stay, dist = Counter(), Counter(), Counter(), Counter()
    visits, ranks = Counter(), [0] * 100
    density, origin, destination = Counter(), Counter(), Counter()
    for day in days:
        pts = [(xs[v], ys[v]) for v in day]
        density.update(tuple(_cell(*p)) for p in pts)
        origin[tuple(_cell(*pts[0]))] += 1
        destination[tuple(_cell(*pts[-1]))] += 1
        for (a, b), (c, d) in zip(pts, pts[1:], strict=False):
            jump[min(int(math.hypot(a - c, b - d)), 281)] += 1
        cx = sum(p[0] for p in pts) / len(pts)
        cy = sum(p[1] for p in pts) / len(pts)
        r = math.sqrt(sum((p[0] - cx) ** 2 + (p[1] - cy) ** 2 for p in pts) / len(pts))
        rad[min(int(r), 281)] += 1
        run = 1
        for a, b in zip(day, day[1:], strict=False):
            if a == b:
                run += 1
            else:
                stay[run] += 1
                run = 1
        stay[run] += 1
        dist[len(set(day))] += 1
        for i, (_, n) in enumerate(Counter(day).most_common(100)):
            ranks[i] += n
        visits.update(day)
    top = sorted(visits.values(), reverse=True)[:100]
    return {
        "distance": [jump[i] for i in range(282)],
        "radius": [rad[i] for i in range(282)],
        "duration": [stay[i] for i in range(1, 49)],
        "dailyloc": [dist[i] for i in range(1, 49)],
        "grank": top + [0] * (100 - len(top)),
        "irank": ranks,
        **{
            name: [grid[i, j] for i in range(16) for j in range(16)]
            for name, grid in (
                ("density", density),
                ("origin", origin),
                ("destination", destination),
            )
        },
    }


def _oracle(days_real, days_gen, xs, ys):
    """The default convention's divergences in plain Python (:func:`_histograms`; trip: the mean
    of the first and last points' JSDs)."""
    real, gen = _histograms(days_real, xs, ys), _histograms(days_gen, xs, ys)
    values = {n: _jsd(real[n], gen[n]) for n in MOVESIM_DISTRIBUTIONS + ("density",)}
    ends = [_jsd(real[n], gen[n]) for n in ("origin", "destination")]
    return values | {"trip": (ends[0] + ends[1]) / 2}


def test_default_convention_matches_plain_python():
    rng = np.random.default_rng(7)
    xs = rng.integers(1, 201, 60).astype(float)
    ys = rng.integers(1, 201, 60).astype(float)
    real = rng.integers(0, 60, (40, 48)) // rng.integers(1, 4, (40, 1))
    gen = np.repeat(rng.integers(0, 60, (30, 12)), 4, axis=1)
    got = movesim_divergences(real, gen, xs, ys, TRAJECTORY_PRESETS["humob2025"])
    want = _oracle(real.tolist(), gen.tolist(), xs, ys)
    for name in MOVESIM_DISTRIBUTIONS:
        assert got[name] == pytest.approx(want[name], rel=1e-9, abs=1e-12), name


def _scorer(**options):
    from mobeval.tasks.trajectory import TrajectoryScorer

    settings = {"convention": "humob2025", "metrics": DISTRIBUTIONS, "on_mismatch": "error"}
    settings |= {"out_of_grid": "error", "path_generated": "gen.csv", "path_reference": "ref.csv"}
    return TrajectoryScorer(**(settings | options))


def _city(n_uids=12, days=3, seed=3):
    import polars as pl

    rng = np.random.default_rng(seed)
    rows = [
        (u, d, t, int(rng.integers(1, 30)), int(rng.integers(1, 30)))
        for u in range(n_uids)
        for d in range(days)
        for t in range(48)
    ]
    frame = pl.DataFrame(rows, schema=["uid", "d", "t", "x", "y"], orient="row")
    gen = frame.with_columns(x=(pl.col("x") * 7 + pl.col("t")) % 200 + 1)
    return gen, frame


@pytest.mark.parametrize("divergence", ["jsd", "kl", "emd"])
def test_any_chunking_and_row_order_gives_the_same_bits(divergence):
    gen, ref = _city()
    metrics = [m for m in DISTRIBUTIONS if divergence != "emd" or m not in GRID_DISTRIBUTIONS]
    whole = _scorer(divergence=divergence, uid_shares=(30, 60), metrics=metrics)
    whole.score(gen, ref)
    chunked = _scorer(divergence=divergence, uid_shares=(30, 60), metrics=metrics)
    for uids in ([0, 5, 7], [1, 2, 3, 4, 6], [8, 9, 10, 11]):
        part = [
            f.filter(f["uid"].is_in(uids)).sample(fraction=1.0, shuffle=True, seed=1)
            for f in (gen, ref)
        ]
        chunked.score(*part)
    a, b = whole.summary(), chunked.summary()
    assert a["metric"].to_list()[: len(metrics)] == [f"{divergence}_{n}" for n in metrics]
    assert a.equals(b)


def _address(column) -> int:
    """Where a column's values lie in memory (its Arrow values buffer)."""
    return column.to_arrow().buffers()[1].address


def test_an_ordered_chunk_reaches_the_histograms_without_a_copy(monkeypatch):
    """Memory per chunk: a chunk already in (uid, d, t) order is checked, scored and folded into
    each side's histograms in place; the frames the histograms read hold the input's own x values
    (no sorted, joined or re-sorted copy of the chunk alive beside it)."""
    from mobeval.tasks.trajectory import TrajectoryScorer

    gen, ref = _city()
    read = []
    population = TrajectoryScorer._population

    def recorded(self, frame, side):
        read.append((side, _address(frame["x"])))
        return population(self, frame, side)

    monkeypatch.setattr(TrajectoryScorer, "_population", recorded)
    _scorer(metrics=[*DISTRIBUTIONS, "geobleu"]).score(gen, ref)
    assert read == [("generated", _address(gen["x"])), ("reference", _address(ref["x"]))]


def test_movesim_needs_full_days_and_names_the_first():
    from mobeval.errors import InputError

    gen, ref = _city()
    gen = gen.filter(~((gen["uid"] == 4) & (gen["d"] == 1) & (gen["t"] == 9)))
    ref = ref.filter(~((ref["uid"] == 4) & (ref["d"] == 1) & (ref["t"] == 9)))
    with pytest.raises(InputError, match=r"gen.csv.*uid, d.*47.*\(4, 1\)"):
        _scorer(convention="movesim").score(gen, ref)


@pytest.fixture(scope="module")
def two_models(tmp_path_factory):
    """A small city scored for two generated models with GEO-BLEU and two population JSDs."""
    import polars as pl

    from mobeval.cli import main

    folder = tmp_path_factory.mktemp("population")
    gen, ref = _city()
    ref.write_parquet(folder / "ref.parquet")
    gen.write_parquet(folder / "near.parquet")
    gen.with_columns(y=(pl.col("y") * 3) % 200 + 1).write_parquet(folder / "far.parquet")
    out = folder / "out"
    for model in ("near", "far"):
        argv = ["trajectory", "--reference", str(folder / "ref.parquet"), "--city", "c"]
        argv += ["--generated", str(folder / f"{model}.parquet"), "--out", str(out)]
        assert main([*argv, "--metrics", "geobleu,distance,radius"]) == 0
    return out


def test_compare_lists_population_metrics_as_not_paired(two_models):
    from mobeval.compare import compare
    from mobeval.errors import ConfigError

    notes = []
    table = compare(two_models, resamples=20, permutations=20, log=notes.append)
    assert table["metric"].to_list() == ["geobleu"]
    assert any("jsd_distance, jsd_radius not paired: a population metric" in note for note in notes)
    with pytest.raises(ConfigError, match="'jsd_radius' cannot be paired: a population metric"):
        compare(two_models, metrics="jsd_radius", log=None)


def test_report_shows_population_metrics_without_marker_lowest_in_bold(two_models):
    import polars as pl

    from mobeval.cli import main

    assert main(["report", str(two_models), "--format", "markdown", "--no-plots"]) == 0
    markdown = (two_models / "report" / "report.md").read_text()
    summary = pl.read_parquet(two_models / "summary/**/*.parquet", hive_partitioning=True)
    for metric in ("jsd_distance", "jsd_radius"):
        values = dict(summary.filter(pl.col("metric") == metric).select("model", "value").rows())
        row = next(line for line in markdown.splitlines() if line.startswith(f"| {metric} |"))
        near, far = row.split("|")[2:4]
        assert (near.strip(), far.strip()) == (
            f"**{values['near']:.4f}**"
            if values["near"] < values["far"]
            else f"{values['near']:.4f}",
            f"**{values['far']:.4f}**"
            if values["far"] < values["near"]
            else f"{values['far']:.4f}",
        )
    assert "not paired, no marker: jsd_distance, jsd_radius (each a population metric" in markdown
    assert "**Jensen-Shannon divergence of a population distribution**" in markdown


def _located(days_of_uids, xs, ys):
    """A (uid, d, t, x, y) frame of the location-id days ``days_of_uids[uid][d]``."""
    import polars as pl

    rows = [
        (u, d, t, int(xs[loc]), int(ys[loc]))
        for u, days in enumerate(days_of_uids)
        for d, day in days.items()
        for t, loc in enumerate(day)
    ]
    return pl.DataFrame(rows, schema=["uid", "d", "t", "x", "y"], orient="row")


def test_uid_shares_are_the_divergences_of_nested_uid_subsets():
    """``uid_shares``: each ``<divergence>_<name>@<s>%`` row is the divergence of the whole real
    population against the generated uids of hash(uid) mod 100 < s (Polars' hash, seed 0),
    computed in plain Python, and its ``n`` their count; scored in three chunks."""
    import polars as pl

    rng = np.random.default_rng(11)
    cells = rng.choice(200 * 200, 60, replace=False)
    xs, ys = (cells // 200 + 1).astype(float), (cells % 200 + 1).astype(float)
    n_uids, days = 40, 2
    real = rng.integers(0, 60, (n_uids * days, 48)) // rng.integers(1, 4, (n_uids * days, 1))
    gen = np.repeat(rng.integers(0, 60, (n_uids * days, 12)), 4, axis=1)

    def frame(locations):
        uids = [{d: locations[u * days + d] for d in range(days)} for u in range(n_uids)]
        return _located(uids, xs, ys)

    gen_frame, real_frame = frame(gen), frame(real)
    scorer = _scorer(uid_shares=(50, 25))
    for part in np.array_split(np.arange(n_uids), 3):
        scorer.score(*(f.filter(f["uid"].is_in(part.tolist())) for f in (gen_frame, real_frame)))
    summary = {m: (v, n) for m, v, n, _ in scorer.summary().iter_rows()}
    percent = (pl.Series(range(n_uids)).hash(0) % 100).to_list()
    for share in (25, 50):
        kept = [u for u in range(n_uids) if percent[u] < share]
        subset = [gen[u * days + d].tolist() for u in kept for d in range(days)]
        want = _oracle(real.tolist(), subset, xs, ys)
        for name in DISTRIBUTIONS:
            value, n = summary[f"jsd_{name}@{share}%"]
            assert n == len(kept)
            assert value == pytest.approx(want[name], rel=1e-9, abs=1e-12), (share, name)


@pytest.mark.parametrize("shares", ["0", "25,100", "30,30"])
def test_uid_shares_out_of_range_exit_2(shares, tmp_path, capsys):
    from mobeval.cli import main

    gen, ref = _city(n_uids=2, days=1)
    for name, frame in (("gen", gen), ("ref", ref)):
        frame.write_parquet(tmp_path / f"{name}.parquet")
    argv = ["trajectory", "--reference", str(tmp_path / "ref.parquet"), "--generated"]
    argv += [str(tmp_path / "gen.parquet"), "--metrics", "radius", "--uid-shares", shares]
    assert main(argv) == 2
    assert "--uid-shares: " in capsys.readouterr().err


def test_per_day_divergences_are_each_days_and_merge_into_the_whole():
    """``per_day_divergences``: each ``<divergence>_<name>@d=<d>`` row is the divergence of the
    real days d against the generated days d, in plain Python, ``n`` the uids with a day d; the
    whole population's rows are unchanged; three chunks of shuffled rows give the same bits."""
    rng = np.random.default_rng(5)
    cells = rng.choice(200 * 200, 50, replace=False)
    xs, ys = (cells // 200 + 1).astype(float), (cells % 200 + 1).astype(float)
    n_uids = 30
    days = {u: [0, 1, 3] if u % 3 else [1] for u in range(n_uids)}  # day 1 for all, 0 and 3: some
    real = [{d: rng.integers(0, 50, 48) // rng.integers(1, 4) for d in days[u]} for u in days]
    gen = [{d: np.repeat(rng.integers(0, 50, 12), 4) for d in days[u]} for u in days]
    gen_frame, real_frame = _located(gen, xs, ys), _located(real, xs, ys)
    plain, chunked = _scorer(), _scorer(per_day_divergences=True)
    plain.score(gen_frame, real_frame)
    for part in np.array_split(rng.permutation(n_uids), 3):
        chunk = (
            f.filter(f["uid"].is_in(part.tolist())).sample(fraction=1.0, shuffle=True, seed=2)
            for f in (gen_frame, real_frame)
        )
        chunked.score(*chunk)
    summary = {m: (v, n) for m, v, n, _ in chunked.summary().iter_rows()}
    whole = {m: (v, n) for m, v, n, _ in plain.summary().iter_rows()}
    assert {m: summary[m] for m in whole} == whole
    assert len(summary) == len(whole) + 3 * len(DISTRIBUTIONS)
    for d in (0, 1, 3):
        have = [u for u in range(n_uids) if d in days[u]]
        want = _oracle(
            [real[u][d].tolist() for u in have], [gen[u][d].tolist() for u in have], xs, ys
        )
        for name in DISTRIBUTIONS:
            value, n = summary[f"jsd_{name}@d={d}"]
            assert n == len(have)
            assert value == pytest.approx(want[name], rel=1e-9, abs=1e-12), (d, name)


def test_emd_over_grid_cells_is_refused_with_exit_2(tmp_path, capsys):
    """The density and trip histograms are over a 2-D grid, whose cells have no order: ``emd``
    (a distance along ordered bins) is refused before any work, naming them."""
    from mobeval.cli import main

    gen, ref = _city(n_uids=2, days=1)
    for name, frame in (("gen", gen), ("ref", ref)):
        frame.write_parquet(tmp_path / f"{name}.parquet")
    argv = ["trajectory", "--reference", str(tmp_path / "ref.parquet"), "--generated"]
    argv += [str(tmp_path / "gen.parquet"), "--metrics", "radius,trip", "--divergence", "emd"]
    assert main(argv) == 2
    assert "--divergence: 'emd' needs ordered bins; trip are histograms" in capsys.readouterr().err


@pytest.mark.parametrize("chunk_rows", [48 * 3, 48 * 50])
def test_distributions_parquet_holds_the_histograms_counted_in_plain_python(tmp_path, chunk_rows):
    """``OUT/distributions/city=c/model=m``: every bin of every distribution the divergences
    compare, the real and generated counts of plain Python's histograms (:func:`_histograms`),
    probabilities count / total, the edges of 1-cell distance bins; the same file for chunks of
    one uid (3 days) or of the whole city, from shuffled rows."""
    import polars as pl

    from mobeval.cli import main

    rng = np.random.default_rng(13)
    cells = rng.choice(200 * 200, 40, replace=False)
    xs, ys = (cells // 200 + 1).astype(float), (cells % 200 + 1).astype(float)
    real = rng.integers(0, 40, (8 * 3, 48)) // rng.integers(1, 4, (8 * 3, 1))
    gen = np.repeat(rng.integers(0, 40, (8 * 3, 12)), 4, axis=1)
    for name, days in (("ref", real), ("gen", gen)):
        frame = _located([{d: days[u * 3 + d] for d in range(3)} for u in range(8)], xs, ys)
        frame.sample(fraction=1.0, shuffle=True, seed=4).write_parquet(tmp_path / f"{name}.pq")
    out = tmp_path / "out"
    argv = ["trajectory", "--reference", str(tmp_path / "ref.pq"), "--city", "c", "--model"]
    argv += ["m", "--generated", str(tmp_path / "gen.pq"), "--out", str(out), "--metrics"]
    argv += [",".join(DISTRIBUTIONS), "--chunk-rows", str(chunk_rows)]
    assert main(argv) == 0
    table = pl.read_parquet(out / "distributions" / "city=c" / "model=m")
    want_real, want_gen = _histograms(real.tolist(), xs, ys), _histograms(gen.tolist(), xs, ys)
    names = [*DISTRIBUTIONS[:-1], "origin", "destination"]
    assert DISTRIBUTIONS[-1] == "trip"
    assert table["distribution"].unique(maintain_order=True).to_list() == names
    for name in names:
        rows = table.filter(pl.col("distribution") == name)
        assert rows["bin"].to_list() == list(range(len(want_real[name])))
        assert rows["real_count"].to_list() == want_real[name], name
        assert rows["generated_count"].to_list() == want_gen[name], name
        for side, want in (("real", want_real[name]), ("generated", want_gen[name])):
            assert rows[f"{side}_probability"].to_list() == [c / sum(want) for c in want]
    distance = table.filter(pl.col("distribution") == "distance")
    assert distance["left"].to_list() == list(range(282))
    assert distance["right"].to_list() == list(range(1, 283))
    assert table.filter(pl.col("distribution") == "density")["left"].null_count() == 256


def test_report_draws_real_and_generated_distributions_in_every_format(two_models):
    """Each city's distributions figure: one panel per distribution the models were scored with
    (here distance and radius), written beside the Markdown and LaTeX reports and referenced by
    them, embedded in the HTML page with its caption."""
    import base64

    from mobeval.cli import main

    assert main(["report", str(two_models), "--format", "markdown,latex,html"]) == 0
    name = "c-distributions.png"
    png = (two_models / "report" / "report_files" / name).read_bytes()
    assert png.startswith(b"\x89PNG")
    assert f"report_files/{name})" in (two_models / "report" / "report.md").read_text()
    assert f"{{report_files/{name}}}" in (two_models / "report" / "report.tex").read_text()
    html = (two_models / "report" / "report.html").read_text()
    assert base64.b64encode(png).decode() in html
    assert "city=c: real and generated population distributions (near, far;" in html


def test_a_model_scored_again_without_distributions_loses_them(tmp_path):
    """Scored with population metrics, then again without: the model's result is the new one
    whole: no ``distributions`` folder left beside the new summary (nor its empty parents), none
    in the manifest, no distributions figure in the report."""
    import json

    from mobeval.cli import main

    gen, ref = _city(n_uids=4, days=2)
    ref.write_parquet(tmp_path / "ref.parquet")
    gen.write_parquet(tmp_path / "gen.parquet")
    out = tmp_path / "out"
    argv = ["trajectory", "--reference", str(tmp_path / "ref.parquet"), "--city", "c"]
    argv += ["--model", "m", "--generated", str(tmp_path / "gen.parquet"), "--out", str(out)]
    assert main([*argv, "--metrics", "geobleu,distance"]) == 0
    assert (out / "distributions" / "city=c" / "model=m").is_dir()
    assert main([*argv, "--metrics", "geobleu"]) == 0
    assert not (out / "distributions").exists()
    entry = json.loads((out / "manifest.json").read_text())["results"]["city=c/model=m"]
    assert "distributions" not in entry["outputs"]
    assert main(["report", str(out), "--format", "markdown"]) == 0
    assert "distributions" not in (out / "report" / "report.md").read_text()
    assert not list((out / "report").rglob("*distributions*"))
