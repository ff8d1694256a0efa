"""Generation metrics beyond MoveSim's: TrajGDM's and MobilityGPT's against their own code, the
default convention and the ratios against plain-Python oracles, and invariance to chunking and
order."""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest

from mobeval.kernels.divergence import js_distance
from mobeval.metrics.generation import GenerationConvention
from mobeval.metrics.generation_counts import (
    GenerationCounts,
    generation_counts,
    generation_divergence,
    generation_ratio,
    mobilitygpt_metrics,
    trajgdm_metrics,
)
from tests.conftest import GOLDEN

RATIOS = ("duplicate_ratio", "memorised", "memorised_near")
DISTRIBUTIONS = ("jump", "location", "origin_location", "destination_location", "od", "length")


@pytest.mark.parametrize("case", ["tdrive", "geolife"])
def test_trajgdm_reproduces_trajgdm(case):
    expected = json.loads((GOLDEN / "trajgdm" / "expected.json").read_text())[case]
    data = json.loads((GOLDEN / "trajgdm" / f"{case}.json").read_text())
    got = trajgdm_metrics(data["real"], data["generated"], expected["maxi"], expected["num_loc"])
    assert got.keys() == expected.keys() - {"maxi", "num_loc"}
    for name, value in got.items():
        assert value == expected[name], name  # bit for bit


def test_mobilitygpt_reproduces_mobilitygpt():
    expected = json.loads((GOLDEN / "mobilitygpt" / "expected.json").read_text())
    data = json.loads((GOLDEN / "mobilitygpt" / "inputs.json").read_text())
    got = mobilitygpt_metrics(data["test"], data["synthetic"], data["geo_id"], data["length"])
    for name, value in got.items():
        assert value == expected[name], name  # bit for bit


def _plain_jsdist(c1, c2):
    p = [a / sum(c1) for a in c1]
    q = [b / sum(c2) for b in c2]
    m = [(a + b) / 2 for a, b in zip(p, q, strict=True)]
    kl = lambda u: sum(a * math.log(a / b) for a, b in zip(u, m, strict=True) if a > 0)  # noqa: E731
    return math.sqrt((kl(p) + kl(q)) / 2)


def test_js_distance_is_scipys():
    from scipy.spatial.distance import jensenshannon

    rng = np.random.default_rng(3)
    for _ in range(20):
        c1, c2 = rng.integers(0, 9, (2, 300))
        want = jensenshannon(c1, c2)
        assert js_distance(c1, c2) == pytest.approx(want, rel=1e-12)
        assert _plain_jsdist(c1.tolist(), c2.tolist()) == pytest.approx(want, rel=1e-12)


def _trajectories(rng, n, cells, copies=()):
    """``n`` random walks on a ``cells`` grid (lists of (x, y)), then ``copies`` appended."""
    out = []
    for _ in range(n):
        k = int(rng.integers(1, 9))
        steps = rng.integers(-2, 3, (k, 2))
        steps[0] = rng.integers(1, cells + 1, 2)
        out.append([tuple(int(v) for v in p) for p in np.cumsum(steps, axis=0)])
    return out + [list(t) for t in copies]


def _counts(trajs, convention, names):
    offsets = np.cumsum([0] + [len(t) for t in trajs], dtype=np.int64)
    xy = np.array([p for t in trajs for p in t], dtype=np.float64).reshape(-1, 2)
    x, y = np.ascontiguousarray(xy[:, 0]), np.ascontiguousarray(xy[:, 1])
    ids = ((x - 1) * 200 + (y - 1)).astype(np.int64)
    return generation_counts(offsets, x, y, ids, convention, names)


def _oracle(real, gen, tolerance):
    """The default convention's JS distances and the ratios in plain Python: one bin per id and
    per length, jumps in 1-cell bins over [0, 282] (longer: the last)."""

    def hist(trajs):
        ids = lambda p: (p[0] - 1) * 200 + (p[1] - 1)  # noqa: E731
        jumps = Counter(
            min(int(math.dist(a, b)), 281) for t in trajs for a, b in zip(t, t[1:], strict=False)
        )
        return {
            "jump": jumps,
            "location": Counter(ids(p) for t in trajs for p in t),
            "origin_location": Counter(ids(t[0]) for t in trajs),
            "destination_location": Counter(ids(t[-1]) for t in trajs),
            "od": Counter(ids(t[0]) for t in trajs) + Counter(ids(t[-1]) for t in trajs),
            "length": Counter(len(t) for t in trajs),
        }

    h1, h2 = hist(real), hist(gen)
    out = {}
    for name in DISTRIBUTIONS:
        keys = range(282) if name == "jump" else sorted(set(h1[name]) | set(h2[name]))
        out[name] = _plain_jsdist([h1[name][k] for k in keys], [h2[name][k] for k in keys])
    snap = lambda t: tuple((v[0] // tolerance, v[1] // tolerance) for v in t)  # noqa: E731
    seen = Counter(tuple(t) for t in gen)
    real_set, near_set = {tuple(t) for t in real}, {snap(t) for t in real}
    out["duplicate_ratio"] = sum(n for n in seen.values() if n > 1) / len(gen)
    out["memorised"] = sum(tuple(t) in real_set for t in gen) / len(gen)
    out["memorised_near"] = sum(snap(t) in near_set for t in gen) / len(gen)
    return out


def _values(real, gen, convention, how="jsdist"):
    out = {n: generation_divergence(real, gen, convention, n, how) for n in DISTRIBUTIONS}
    return out | {n: generation_ratio(real, gen, n) for n in RATIOS}


def test_default_convention_matches_plain_python():
    rng = np.random.default_rng(11)
    real = _trajectories(rng, 120, 30)
    shifted = [[(x + 1, y) for x, y in t] for t in real[:9]]
    gen = _trajectories(rng, 90, 30, copies=real[:7] + real[40:41] * 3 + shifted)
    convention = GenerationConvention(tolerance=3.0)
    names = DISTRIBUTIONS + RATIOS
    got = _values(_counts(real, convention, names), _counts(gen, convention, names), convention)
    want = _oracle(real, gen, 3)
    assert want["memorised"] > 0 and want["memorised_near"] > want["memorised"]
    for name, value in want.items():
        assert got[name] == pytest.approx(value, rel=1e-12, abs=1e-15), name


@pytest.mark.parametrize("preset", ["default", "trajgdm", "mobilitygpt"])
def test_chunking_and_order_do_not_change_the_values(preset):
    from mobeval.metrics.generation import MOBILITYGPT, TRAJGDM

    convention = {"default": GenerationConvention(), "trajgdm": TRAJGDM}.get(preset, MOBILITYGPT)
    rng = np.random.default_rng(5)
    real = _trajectories(rng, 150, 60)
    gen = _trajectories(rng, 100, 60, copies=real[:5] * 2)
    names = DISTRIBUTIONS + RATIOS
    whole = _values(_counts(real, convention, names), _counts(gen, convention, names), convention)
    folds = []
    for trajs in (real, gen):
        order = rng.permutation(len(trajs))
        merged = GenerationCounts()
        for chunk in np.array_split(order, 7):
            merged.merge(_counts([trajs[i] for i in chunk], convention, names))
        folds.append(merged)
    assert _values(*folds, convention) == whole  # bit for bit


TRAJGDM_NAMES = ("jump", "location", "origin_location", "destination_location")


def _grid_city(rng, n_uids=25, days=2, steps=12):
    """(generated, reference) uid, d, t, x, y frames on the HuMob grid: random walks; some
    generated days copy a real one (memorised), others one generated day (duplicates), others a
    real one shifted by a cell (not a copy)."""
    import polars as pl

    walk = lambda: np.clip(np.cumsum(rng.integers(-4, 5, (steps, 2)), axis=0) + 90, 1, 200)  # noqa: E731
    real = {(u, d): walk() for u in range(n_uids) for d in range(days)}
    gen = {key: walk() for key in real}
    for u in range(0, 6):
        gen[u, 0] = real[u + 7, 1]
    for u in range(6, 10):
        gen[u, 1] = gen[3, 1]
    for u in range(10, 14):
        gen[u, 0] = real[u, 0] + np.array([1, 0])
    frames = []
    for days_of in (gen, real):
        rows = [
            (u, d, t, *map(int, p)) for (u, d), pts in days_of.items() for t, p in enumerate(pts)
        ]
        frames.append(pl.DataFrame(rows, schema=["uid", "d", "t", "x", "y"], orient="row"))
    return frames, gen, real


def _ids(days):
    """TrajGDM's location ids of the uid-days ``days`` (maxi 200 over 0-based cells)."""
    return [((p[:, 0] - 1) * 200 + p[:, 1] - 1).tolist() for p in days.values()]


def _scored(seed, **options):
    """The summary (metric -> value) of a :func:`_grid_city` scored with ``options``, and its
    generated and real uid-days."""
    from mobeval import evaluate_trajectory

    (gen, ref), gen_days, real_days = _grid_city(np.random.default_rng(seed))
    result = evaluate_trajectory(ref, gen, progress=False, **options)
    return {m: v for m, v, *_ in result.summary.iter_rows()}, gen_days, real_days


def test_trajectory_family_gives_trajgdm_values_and_ratios_for_any_chunking():
    """``--convention trajgdm --divergence jsdist``: the trajectory family's rows are TrajGDM's
    values of its uid-days (maxi 200, num_loc 40000: :func:`trajgdm_metrics`, golden-tested),
    the ratios plain Python's, whatever the chunking and row order."""
    from mobeval import evaluate_trajectory

    rng = np.random.default_rng(17)
    (gen, ref), gen_days, real_days = _grid_city(rng)
    metrics = [*TRAJGDM_NAMES, "length", *RATIOS]
    summaries = []
    for chunk_rows in (10**6, 37):
        shuffled = [f.sample(fraction=1.0, shuffle=True, seed=2) for f in (ref, gen)]
        result = evaluate_trajectory(
            *shuffled,
            metrics=metrics,
            convention="trajgdm",
            divergence="jsdist",
            chunk_rows=chunk_rows,
            progress=False,
        )
        summaries.append({m: v for m, v, *_ in result.summary.iter_rows()})
    assert summaries[0] == summaries[1]
    got = summaries[0]
    want = trajgdm_metrics(_ids(real_days), _ids(gen_days), 200, 40000)
    for name in TRAJGDM_NAMES:
        assert got[f"jsdist_{name}"] == want[name], name
    assert (
        got["duplicate_ratio"] == want["duplicate_ratio"] == 5 / 50
    )  # uid-day (3, 1) and its 4 copies
    assert got["memorised"] == 6 / 50
    snap = lambda p: tuple(map(tuple, p // 2))  # noqa: E731  (the default tolerance: 2 cells)
    near = {snap(p) for p in real_days.values()}
    assert got["memorised_near"] == sum(snap(p) in near for p in gen_days.values()) / 50
    assert got["jsdist_length"] == 0.0  # paired: the same lengths


def test_trip_length_and_emd_over_ids_are_refused():
    from mobeval import evaluate_trajectory
    from mobeval.errors import ConfigError

    rng = np.random.default_rng(1)
    (gen, ref), _, _ = _grid_city(rng)
    with pytest.raises(ConfigError, match="link table"):
        evaluate_trajectory(ref, gen, metrics=["trip_length"], progress=False)
    with pytest.raises(ConfigError, match="location ids"):
        evaluate_trajectory(ref, gen, metrics=["od"], divergence="emd", progress=False)


@pytest.mark.parametrize("preset", ["humob2025", "movesim"])
def test_jsdist_is_the_square_root_of_jsd_on_movesims_six(preset):
    from mobeval.metrics import MOVESIM_DISTRIBUTIONS
    from mobeval.metrics.population import movesim_divergences
    from mobeval.metrics.trajectory import TRAJECTORY_PRESETS

    movesim = GOLDEN / "movesim"
    gps = np.loadtxt(movesim / "gps")
    days = [np.loadtxt(movesim / f, dtype=np.int64) for f in ("real.data", "gene.data")]
    conv = TRAJECTORY_PRESETS[preset]
    jsd = movesim_divergences(*days, gps[:, 0], gps[:, 1], conv, "jsd")
    dist = movesim_divergences(*days, gps[:, 0], gps[:, 1], conv, "jsdist")
    for name in MOVESIM_DISTRIBUTIONS:
        assert dist[name] == pytest.approx(math.sqrt(jsd[name]), rel=1e-12), name


def test_uid_shares_bootstrap_and_distributions_reach_the_generation_metrics(tmp_path):
    """``uid_shares``: ``jsdist_location@50%`` is TrajGDM's value against the generated uids of
    hash percentile < 50 (nested subsets); the bootstrap gives each row an interval; the
    ``distributions`` table holds the location histograms (100 bins of ids, TrajGDM's)."""
    import polars as pl

    from mobeval.metrics.population import uid_percent

    got, gen_days, real_days = _scored(
        23,
        metrics=["location", "memorised"],
        convention="trajgdm",
        divergence="jsdist",
        uid_shares=[50],
        population_resamples=20,
        out=str(tmp_path / "out"),
    )
    uids = pl.Series(range(25))
    half = set(uids.filter(uid_percent(uids) < 50).to_list())
    subset = {k: v for k, v in gen_days.items() if k[0] in half}
    want = trajgdm_metrics(_ids(real_days), _ids(subset), 200, 40000)["location"]
    assert 0 < len(half) < 25 and got["jsdist_location@50%"] == want
    copies = sum(k[0] in half and k[1] == 0 and k[0] < 6 for k in gen_days) / len(subset)
    assert got["memorised@50%"] == copies
    for name in ("jsdist_location", "memorised"):
        assert got[f"{name}:low"] <= got[f"{name}:high"]
    table = pl.read_parquet(tmp_path / "out" / "distributions")
    location = table.filter(pl.col("distribution") == "location")
    assert location.height == 100 and location["real_count"].sum() == 50 * 12
    assert set(table["distribution"]) == {"location"}


def test_mobilitygpt_binning_of_equal_values_is_nan_and_has_no_table_rows(tmp_path):
    """Paired uid-days of 12 points each: every length is 12, MobilityGPT's ``np.arange(12, 12,
    0.0)`` has no bins (its code raises): ``jsdist_length`` is NaN, the table has no length rows,
    while ``od`` is binned as MobilityGPT bins it."""
    import polars as pl

    got, gen_days, real_days = _scored(
        4,
        metrics=["length", "od"],
        convention="mobilitygpt",
        divergence="jsdist",
        out=str(tmp_path / "out"),
    )
    assert math.isnan(got["jsdist_length"])
    want = mobilitygpt_metrics(_ids(real_days), _ids(gen_days), [], [])
    assert got["jsdist_od"] == want["od"]
    table = pl.read_parquet(tmp_path / "out" / "distributions")
    assert set(table["distribution"]) == {"od"} and table.height == 299


def test_ratio_intervals_against_plain_python():
    """The ratios' ``:low`` / ``:high`` rows: the percentile interval over resamples where uid
    ``u`` counts ``w[u, r]`` times (the Poisson weights of tests/test_population_bootstrap.py);
    a trajectory drawn twice is one draw, not a duplicate (``duplicate_ratio``: the drawn
    trajectories whose content another *distinct* drawn trajectory holds, each ``w`` times)."""
    import polars as pl

    from tests.test_population_bootstrap import _weights

    resamples, seed, confidence = 40, 3, 0.8
    got, gen_days, real_days = _scored(
        29,
        metrics=["duplicate_ratio", "memorised"],
        population_resamples=resamples,
        population_seed=seed,
        population_confidence=confidence,
    )
    hashes = pl.Series(range(25), dtype=pl.Int64).hash(0).to_list()
    weights = [_weights(h, resamples, seed) for h in hashes]
    real = {tuple(map(tuple, p)) for p in real_days.values()}
    values = {"duplicate_ratio": [], "memorised": []}
    for r in range(resamples):
        drawn = [(tuple(map(tuple, p)), weights[u][r]) for (u, _), p in gen_days.items()]
        drawn = [(t, w) for t, w in drawn if w]
        total = sum(w for _, w in drawn)
        seen = Counter(t for t, _ in drawn)
        values["duplicate_ratio"].append(sum(w for t, w in drawn if seen[t] > 1) / total)
        values["memorised"].append(sum(w for t, w in drawn if t in real) / total)
    alpha = (1 - confidence) / 2 * 100
    for name, draws in values.items():
        low, high = np.percentile(draws, [alpha, 100 - alpha])
        assert got[f"{name}:low"] == pytest.approx(low, rel=1e-12), name
        assert got[f"{name}:high"] == pytest.approx(high, rel=1e-12), name
        assert low < got[name] < high, name


def test_report_methods_describe_the_generation_metrics_and_their_parameters():
    from mobeval.families import resolved_options
    from mobeval.report.methods import methods

    options = resolved_options("trajectory", {"convention": "trajgdm", "metrics": ["location"]})
    names = ["jsdist_location", "jsdist_jump", "duplicate_ratio", "memorised_near"]
    entries = {m.family: dict(m.parameters) for m in methods("trajectory", options, names)}
    assert list(entries) == ["jsdist", "duplicate_ratio", "memorised_near"]
    assert entries["jsdist"]["binning (generation metrics)"] == "range, 100 bins"
    assert entries["jsdist"]["jumps"] == "100 bins over [0, 50] cells"
    assert "largest distance (max_distance)" not in entries["jsdist"]
    assert entries["memorised_near"]["tolerance (snapping grid)"] == "2 cells"
