"""mobeval compare: p-values vs scipy.stats, the sign-flip test vs a plain-Python enumeration, the
bootstrap vs a plain-NumPy oracle, corrections vs plain Python, determinism, end to end and every
refusal."""

from __future__ import annotations

import itertools
import json
import math
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

scipy_stats = pytest.importorskip("scipy.stats")

from mobeval.cli import main  # noqa: E402
from mobeval.compare import (  # noqa: E402
    adjust,
    bootstrap_ci,
    compare,
    paired_t,
    randomization,
    wilcoxon,
)
from mobeval.errors import ConfigError, InputError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _cases():
    rng = np.random.default_rng(11)
    cases = {
        "normal-5": (rng.normal(size=5), rng.normal(size=5)),
        "normal-30": (rng.normal(size=30), rng.normal(0.3, 1, size=30)),
        "normal-49": (rng.random(49), rng.random(49)),
        "normal-200": (rng.random(200), rng.random(200) + 0.02),
        "binary-300": (rng.integers(0, 2, 300) * 1.0, rng.integers(0, 2, 300) * 1.0),
        "ties-10": (rng.integers(0, 4, 10) * 0.25, rng.integers(0, 4, 10) * 0.25),
        "ties-zeros-12": (
            np.r_[np.zeros(4), np.arange(8.0)],
            np.r_[np.zeros(4), np.arange(8.0)[::-1]],
        ),
        "zeros-13": (
            np.arange(13.0),
            np.arange(13.0) + np.r_[0, 0, 1, 2, -3, 4, 5, 6, 7, 8, 9, 10, 11] * 0.1,
        ),
        "ties-30": (rng.integers(0, 5, 30) / 4, rng.integers(0, 5, 30) / 4),
        "zeros-60": (rng.integers(0, 3, 60) / 2, rng.integers(0, 3, 60) / 2),
        "ranks-1-over": (1 / rng.integers(1, 20, 80), 1 / rng.integers(1, 20, 80)),
        "constant-shift": (np.arange(6.0), np.arange(6.0) + 0.5),
        "two": (np.array([0.1, 0.7]), np.array([0.4, 0.2])),
    }
    return cases


CASES = _cases()


def _same(ours: float, theirs: float) -> bool:
    if math.isnan(theirs):
        return math.isnan(ours)
    return ours == theirs or abs(ours - theirs) <= 1e-12 * abs(theirs)


def _scipy_p(test, baseline, model) -> float:
    """SciPy's p-value of ``test`` (scipy.stats.ttest_rel, wilcoxon...), its warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(test(baseline, model).pvalue)


@pytest.mark.parametrize("name", sorted(CASES))
def test_paired_t_equals_scipy(name):
    baseline, model = CASES[name]
    expected = _scipy_p(scipy_stats.ttest_rel, baseline, model)
    assert _same(paired_t(model - baseline), expected), (paired_t(model - baseline), expected)


def test_paired_t_degenerate_like_scipy():
    for a, b in ((np.ones(5), np.ones(5)), (np.zeros(1), np.ones(1))):
        assert _same(paired_t(b - a), _scipy_p(scipy_stats.ttest_rel, a, b))


@pytest.mark.parametrize("name", sorted(CASES))
def test_wilcoxon_equals_scipy(name):
    baseline, model = CASES[name]
    expected = _scipy_p(scipy_stats.wilcoxon, baseline, model)
    ours, _ = wilcoxon(model - baseline)
    assert _same(ours, expected), (ours, expected)


def test_wilcoxon_all_zero_like_scipy():
    for n in (8, 20, 60):
        a = np.arange(n, dtype=float)
        assert _same(wilcoxon(a - a)[0], _scipy_p(scipy_stats.wilcoxon, a, a.copy()))


def _enumerate(d: list[float]) -> float:
    """Plain Python: the share of all 2**n sign vectors with |sum| >= |observed| - 1e-9 max|d|,
    each sum taken in index order from 0.0 (what the README states)."""
    observed = 0.0
    for value in d:
        observed += value
    scale = max((abs(v) for v in d), default=0.0)
    threshold = abs(observed) - 1e-9 * scale
    count = 0
    for signs in itertools.product((1, -1), repeat=len(d)):
        total = 0.0
        for sign, value in zip(signs, d, strict=True):
            total = total + value if sign == 1 else total - value
        count += abs(total) >= threshold
    return count / 2 ** len(d)


@pytest.mark.parametrize(
    "d",
    [
        [0.3, -0.1, 0.25, 0.7, -0.05, 0.4, 0.2, 0.1],
        [1.0, 1.0, -1.0, 0.0, 1.0, 0.0, 1.0, -1.0, 1.0, 1.0, 1.0, 1.0],
        [0.1, 0.2, -0.3, 0.5, -0.5, 0.25, 0.125, -0.375, 0.0, 0.2, -0.1],
        [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
        [1 / 3, 1 / 7, -1 / 5, 1 / 11, 0.0, -1 / 13, 1 / 2, 1 / 9, -1 / 17],
        [0.0, 0.0, 0.0],
        [2.5],
    ],
)
def test_randomization_exact_equals_enumeration(d):
    ours, method = randomization(np.array(d), 10, 0)
    assert method == "exact"
    assert ours == _enumerate(d)


def test_randomization_monte_carlo_within_error():
    rng = np.random.default_rng(5)
    d = np.round(rng.normal(0.15, 1, size=18), 3)
    signs = 1 - 2 * ((np.arange(2**18)[:, None] >> np.arange(18)) & 1)
    sums = np.abs(signs @ d)
    exact = np.mean(sums >= abs(d.sum()) - 1e-9 * np.abs(d).max())
    ours, method = randomization(d, 20000, 3)
    assert method == "monte-carlo"
    assert abs(ours - exact) < 4 * math.sqrt(exact * (1 - exact) / 20000) + 1e-4


def test_bootstrap_ci_within_monte_carlo_error_of_numpy_oracle():
    rng = np.random.default_rng(7)
    d = rng.exponential(1.0, size=150) - 0.8
    resamples = 4000
    oracle = rng.integers(0, d.size, size=(resamples, d.size))
    means = d[oracle].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    ours = bootstrap_ci(d, resamples, 1, 0.95)
    sigma = d.std(ddof=1) / math.sqrt(d.size)
    assert abs(ours[0] - low) < 0.3 * sigma and abs(ours[1] - high) < 0.3 * sigma
    assert bootstrap_ci(d, resamples, 1, 0.95) == ours  # same seed, same numbers


def _holm(p):
    indexed = sorted((v, i) for i, v in enumerate(p) if not math.isnan(v))
    m, out, running = len(indexed), list(p), 0.0
    for rank, (value, i) in enumerate(indexed):
        running = max(running, min(1.0, (m - rank) * value))
        out[i] = running
    return out


def _bonferroni(p):
    m = sum(not math.isnan(v) for v in p)
    return [v if math.isnan(v) else min(1.0, m * v) for v in p]


@pytest.mark.parametrize(
    "p",
    [
        [0.01, 0.04, 0.03, 0.005],
        [0.2, 0.2, 0.01, float("nan"), 0.5, 0.04],
        [0.9],
        [1e-300, 0.5, 0.05, 0.05, 0.051],
    ],
)
def test_corrections_equal_plain_python(p):
    assert np.array_equal(adjust(p, "holm"), _holm(p), equal_nan=True)
    assert np.array_equal(adjust(p, "bonferroni"), _bonferroni(p), equal_nan=True)
    assert np.array_equal(adjust(p, "none"), p, equal_nan=True)


def test_same_seed_same_numbers_for_any_thread_count():
    code = (
        "import numpy as np\n"
        "from mobeval.kernels.resampling import bootstrap_means, signflip_count_mc\n"
        "d = np.random.default_rng(3).normal(size=(300, 3))\n"
        "print(bootstrap_means(d, 64, 9).tobytes().hex())\n"
        "print(signflip_count_mc(d, 500, 9, np.array([5.0, 9.0, 1.0])))\n"
    )
    outputs = []
    for threads in ("1", "2"):
        env = {**os.environ, "NUMBA_NUM_THREADS": threads}
        run = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT
        )
        assert run.returncode == 0, run.stderr
        outputs.append(run.stdout)
    assert outputs[0] == outputs[1]


# ---------------------------------------------------------------------------------------------
# End to end on the sample job's output


def _copy(out: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy"
    shutil.copytree(out, target)
    return target


def _rewrite(folder: Path, change) -> pl.DataFrame:
    """Replace the Parquet files of a result's folder by one holding ``change(their rows)``, the
    rows returned."""
    parts = sorted(folder.glob("*.parquet"))
    frame = change(pl.read_parquet(parts))
    for part in parts:
        part.unlink()
    frame.write_parquet(parts[0])
    return frame


def _refused_for_tky(out: Path, message: str) -> None:
    """Comparing city tky of ``out`` is refused with ``message`` in Python (a ConfigError) and on
    the command line (exit 2), nothing written."""
    with pytest.raises(ConfigError, match=message):
        compare(out, city="tky", log=None)
    assert main(["compare", str(out), "--city", "tky"]) == 2
    assert not (out / "compare").exists()


def _edit_manifest(out: Path, change) -> None:
    path = out / "manifest.json"
    document = json.loads(path.read_text())
    change(document["results"])
    path.write_text(json.dumps(document))


def test_end_to_end_cli(nextloc_sample_out, tmp_path, capsys):
    out = _copy(nextloc_sample_out, tmp_path)
    options = "--city tky --baseline markov --resamples 200 --permutations 500"
    code = main(["compare", str(out), *options.split()])
    assert code == 0
    printed = capsys.readouterr().out
    assert "city=tky" in printed and "popularity vs markov" in printed
    written = pl.read_parquet(out / "compare/city=tky/part-0.parquet")
    assert written.height == 22 and set(written["model"]) == {"popularity"}
    summary = pl.read_parquet(out / "summary/city=tky/model=markov/*.parquet")
    row = written.filter(pl.col("metric") == "acc@1").row(0, named=True)
    expected = summary.filter(pl.col("metric") == "acc@1")["value"][0]
    assert row["n"] == 3000 and abs(row["mean_baseline"] - expected) < 1e-12
    assert row["ci_low"] < row["diff"] < row["ci_high"]
    for column in ("p_t_corrected", "p_wilcoxon_corrected", "p_randomization_corrected"):
        assert 0 <= row[column] <= 1
    assert not (out / ".staging").exists()


def test_row_order_does_not_matter(nextloc_sample_out, tmp_path):
    options = dict(city="nyc", resamples=100, permutations=300, seed=4)
    before = compare(nextloc_sample_out, log=None, **options)
    out = _copy(nextloc_sample_out, tmp_path)
    _rewrite(
        out / "per_unit/city=nyc/model=popularity",
        lambda f: f.sample(fraction=1.0, shuffle=True, seed=1),
    )
    after = compare(out, log=None, **options)
    assert before.equals(after)
    # a metric alone gets the numbers it gets beside the others (shared resamples and signs)
    alone = compare(nextloc_sample_out, metrics=["ndcg@10"], log=None, correction="none", **options)
    beside = before.filter(pl.col("metric") == "ndcg@10")
    columns = ["ci_low", "ci_high", "p_t", "p_wilcoxon", "p_randomization", "mean_model"]
    assert alone.select(columns).equals(beside.select(columns))


def test_refuses_different_options(nextloc_sample_out, tmp_path):
    out = _copy(nextloc_sample_out, tmp_path)
    _edit_manifest(
        out, lambda r: r["city=tky/model=markov"]["config"].update(convention="trec_eval")
    )
    _refused_for_tky(out, "different options .convention")


def test_refuses_different_units_unless_intersect(nextloc_sample_out, tmp_path):
    out = _copy(nextloc_sample_out, tmp_path)
    # as if 5 samples had been skipped: its summary is over the others
    kept = _rewrite(out / "per_unit/city=tky/model=popularity", lambda f: f.slice(5))

    def over_the_others(summary):
        means = {c: kept[c].mean() for c in kept.columns if c in set(summary["metric"])}
        return summary.with_columns(
            pl.col("metric")
            .replace_strict(means, default=None)
            .fill_null(pl.col("value"))
            .alias("value"),
            pl.when(pl.col("metric").is_in(list(means)))
            .then(2995)
            .otherwise(pl.col("n"))
            .alias("n"),
        )

    _rewrite(out / "summary/city=tky/model=popularity", over_the_others)
    with pytest.raises(InputError, match="5 only in markov, 0 only in popularity"):
        compare(out, city="tky", metrics="acc@1", resamples=10, log=None)
    notes = []
    table = compare(
        out, city="tky", metrics="acc@1", resamples=10, intersect=True, log=notes.append
    )
    assert table["n"].to_list() == [2995] and table["n_baseline_only"].to_list() == [5]
    assert any("2995 common samples" in note for note in notes)


def test_refuses_single_model_missing_per_unit_unknown_names(nextloc_sample_out, tmp_path):
    out = _copy(nextloc_sample_out, tmp_path)
    with pytest.raises(ConfigError, match="no model 'deepmove'"):
        compare(out, baseline="deepmove", log=None)
    with pytest.raises(ConfigError, match="no metric 'acc@7'"):
        compare(out, metrics=["acc@7"], log=None)
    with pytest.raises(ConfigError, match="no results for city"):
        compare(out, city="paris", log=None)
    shutil.rmtree(out / "per_unit/city=nyc/model=markov")
    with pytest.raises(InputError, match="no per-unit outputs"):
        compare(out, city="nyc", log=None)
    _edit_manifest(out, lambda r: r.pop("city=tky/model=popularity"))
    _refused_for_tky(out, "single model")


def test_unpairable_metric_left_out_or_refused(nextloc_sample_out, tmp_path):
    out = _copy(nextloc_sample_out, tmp_path)
    for model in ("markov", "popularity"):  # make ndcg@10 an aggregate: not the mean
        _rewrite(
            out / f"summary/city=tky/model={model}",
            lambda s: s.with_columns(
                pl.when(pl.col("metric") == "ndcg@10")
                .then(0.5)
                .otherwise(pl.col("value"))
                .alias("value")
            ),
        )
    notes = []
    table = compare(out, city="tky", resamples=10, permutations=10, log=notes.append)
    assert "ndcg@10" not in table["metric"].to_list()
    assert any("ndcg@10 left out" in note for note in notes)
    with pytest.raises(ConfigError, match="'ndcg@10' cannot be paired"):
        compare(out, city="tky", metrics=["ndcg@10"], log=None)


def test_randomization_agrees_with_ranx_within_monte_carlo_error():
    pytest.importorskip("ranx")
    from ranx.statistical_tests import fisher_randomization_test

    rng = np.random.default_rng(0)
    for shift in (0.0, 0.02):
        a = rng.random(400)
        b = np.clip(a + rng.normal(shift, 0.2, 400), 0, 1)
        theirs, _ = fisher_randomization_test(a, b, 20000, 0.01, 42)
        ours, method = randomization(b - a, 20000, 0)
        assert method == "monte-carlo"
        sigma = math.sqrt(2 * max(theirs * (1 - theirs), 1e-4) / 20000)
        assert abs(ours - theirs) < 5 * sigma


def test_logits_percent_points_and_unpairable_f1(tmp_path):
    from mobeval.jobs import load_job, run_job

    out = tmp_path / "logits"
    run_job(
        load_job(ROOT / "jobs/logits_sample.toml", out=str(out)), progress=False, log=lambda _: 0
    )
    notes = []
    table = compare(out, resamples=50, permutations=50, tests="paired-t", log=notes.append)
    assert any("f1_macro not paired: a population metric" in note for note in notes)
    summary = pl.read_parquet(out / "summary/**/*.parquet", hive_partitioning=True)
    row = table.filter(pl.col("metric") == "acc@1").row(0, named=True)
    gru = summary.filter(pl.col("metric") == "acc@1", pl.col("model") == "gru")["value"][0]
    assert row["percent"] and abs(row["mean_baseline"] - gru) < 1e-9  # points, as the summary
    assert table.filter(pl.col("metric") == "cross_entropy")["percent"].to_list() == [False]
    with pytest.raises(ConfigError, match="'f1_macro' cannot be paired"):
        compare(out, metrics="f1_macro", log=None)
    with pytest.raises(ConfigError, match="only trajectory results have per-day"):
        compare(out, unit="day", log=None)


def test_trajectory_uids_and_days_against_scipy(tmp_path):
    from mobeval.jobs import load_job, run_job

    out = tmp_path / "trajectory"
    job = load_job(ROOT / "jobs/trajectory_sample.toml", out=str(out))
    run_job(job, progress=False, log=lambda _: 0)
    table = compare(out, metrics="geobleu", resamples=20, log=None)
    row = table.row(0, named=True)
    per_unit = pl.read_parquet(out / "per_unit/**/*.parquet", hive_partitioning=True)
    wide = per_unit.pivot(on="model", index="uid", values="geobleu").sort("uid")
    a, b = wide[row["baseline"]].to_numpy(), wide[row["model"]].to_numpy()
    assert row["unit"] == "uid" and row["n"] == len(a) == 11
    assert _same(row["p_wilcoxon"], float(scipy_stats.wilcoxon(a, b).pvalue))
    assert row["wilcoxon_method"] == "exact"
    assert _same(row["p_t"], float(scipy_stats.ttest_rel(a, b).pvalue))
    assert row["randomization_method"] == "exact"
    assert row["p_randomization"] == _enumerate(list(b - a))
    days = compare(out, metrics=["geobleu", "dtw"], unit="day", resamples=20, log=None)
    assert days["unit"].to_list() == ["uid-day"] * 2 and days["n"].to_list() == [165, 165]
