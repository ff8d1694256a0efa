"""The Poisson bootstrap interval of the population metrics (gini, coverage, entropy): against a
plain-Python oracle (SplitMix64 and Poisson inversion written out, the metric recomputed from each
resample's item counts), and the same bits for any chunking and row order."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import polars as pl
import pytest

from mobeval.api import evaluate_recs
from mobeval.errors import ConfigError
from mobeval.metrics import DISTRIBUTIONS
from tests.test_recs_engine import shuffle_users

MASK = 2**64 - 1
GOLDEN = 0x9E3779B97F4A7C15


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def _poisson(u: float) -> int:
    k, term = 0, math.exp(-1.0)
    cdf = term
    while u >= cdf:
        k += 1
        term /= k
        cdf += term
    return k


def _weights(unit_hash: int, resamples: int, seed: int) -> list[int]:
    """Unit ``unit_hash``'s Poisson(1) weight in each resample (purpose 3 of the stream)."""
    z = _mix((seed + GOLDEN * 3) & MASK)
    state = _mix(z ^ _mix((unit_hash + GOLDEN) & MASK))
    out = []
    for _ in range(resamples):
        state = (state + GOLDEN) & MASK
        out.append(_poisson((_mix(state) >> 11) / 2.0**53))
    return out


def _gini(counts: list[int], n: int) -> float:
    x = [0] * (n - len(counts)) + sorted(counts)
    total = sum(x)
    return sum((2 * j - n - 1) * v for j, v in enumerate(x, start=1)) / (n * total)


def _entropy(counts: list[int]) -> float:
    total = sum(counts)
    return -sum(c / total * math.log(c / total) for c in sorted(counts))


def _rows():
    rng = np.random.default_rng(11)
    return [list(rng.choice(40, size=int(rng.integers(1, 7)), replace=False)) for _ in range(30)]


def _lists(rows) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "user_id": [u for u, items in enumerate(rows) for _ in items],
            "item_id": [int(i) for items in rows for i in items],
        }
    )


def _evaluate(tmp_path, lists, **options):
    catalogue = tmp_path / "catalogue.parquet"
    pl.DataFrame({"item_id": np.arange(45)}).write_parquet(catalogue)
    ratings = lists.group_by("user_id", maintain_order=True).first()
    return evaluate_recs(
        ratings.with_columns(pl.lit(1.0).alias("rating")),
        lists,
        metrics=["gini@4", "coverage@4", "entropy@4"],
        k=None,
        catalogue=str(catalogue),
        **options,
    )


@pytest.mark.parametrize("convention", ["clayrs", "recbole"])
def test_interval_against_plain_python(tmp_path, convention):
    rows, resamples, seed, confidence = _rows(), 50, 5, 0.9
    result = _evaluate(
        tmp_path,
        _lists(rows),
        population_convention=convention,
        population_resamples=resamples,
        population_seed=seed,
        population_confidence=confidence,
    )
    users = pl.Series(range(len(rows)), dtype=pl.Int64).hash(0).to_list()
    weights = [_weights(h, resamples, seed) for h in users]
    values = {"gini": [], "coverage": [], "entropy": []}
    for r in range(resamples):
        counts = Counter()
        for u, items in enumerate(rows):
            for item in items[:4]:
                counts[item] += weights[u][r]
        counted = [c for c in counts.values() if c > 0]
        recbole = convention == "recbole"
        values["gini"].append(_gini(counted, 46 if recbole else len(counted)))
        covered = len(counted) / (46 if recbole else 45)
        values["coverage"].append(covered if recbole else round(covered * 100, 2))
        h = _entropy(counted)
        values["entropy"].append(h / len(counted) if recbole else h)
    alpha = (1 - confidence) / 2 * 100
    for name, resampled in values.items():
        low, high = np.percentile(resampled, [alpha, 100 - alpha])
        assert result.value(f"{name}@4:low") == pytest.approx(low, rel=1e-12, abs=1e-15), name
        assert result.value(f"{name}@4:high") == pytest.approx(high, rel=1e-12, abs=1e-15), name


def test_same_bits_for_any_chunking_and_row_order(tmp_path):
    lists = _lists(_rows())
    first = _evaluate(tmp_path, lists, population_resamples=40, population_seed=2)
    assert "gini@4:low" in first.summary["metric"].to_list()
    for chunk_rows, order in ((3, 1), (17, 2), (10**6, 3)):
        again = _evaluate(
            tmp_path,
            shuffle_users(lists, seed=order),
            population_resamples=40,
            population_seed=2,
            chunk_rows=chunk_rows,
        )
        assert again.summary.equals(first.summary), chunk_rows
    other = _evaluate(tmp_path, lists, population_resamples=40, population_seed=3)
    assert not other.summary.equals(first.summary)


def test_no_interval_by_default_and_bad_options(tmp_path):
    lists = _lists(_rows())
    assert not any(":low" in m for m in _evaluate(tmp_path, lists).summary["metric"])
    with pytest.raises(ConfigError, match="population_resamples"):
        _evaluate(tmp_path, lists, population_resamples=-1)
    with pytest.raises(ConfigError, match="population_confidence"):
        _evaluate(tmp_path, lists, population_resamples=5, population_confidence=1.5)


def _trajectory_city(n_uids=24, days=2, seed=13):
    """Location-id days of a real and a generated population over 50 cells, and their frames."""
    from tests.test_population import _located

    rng = np.random.default_rng(seed)
    cells = rng.choice(200 * 200, 50, replace=False)
    xs, ys = (cells // 200 + 1).astype(float), (cells % 200 + 1).astype(float)
    real = [
        {d: rng.integers(0, 50, 48) // rng.integers(1, 4) for d in range(days)}
        for _ in range(n_uids)
    ]
    gen = [{d: np.repeat(rng.integers(0, 50, 12), 4) for d in range(days)} for _ in range(n_uids)]
    return real, gen, xs, ys, _located(gen, xs, ys), _located(real, xs, ys)


def test_trajectory_interval_against_plain_python():
    """Each divergence's ``:low`` / ``:high`` rows are the percentile interval of the divergence
    of the whole real population against the generated uids each repeated ``w[u, r]`` times
    (the plain-Python histograms of tests/test_population.py), ``n`` the uids."""
    from tests.test_population import _oracle, _scorer

    real, gen, xs, ys, gen_frame, real_frame = _trajectory_city()
    resamples, seed, confidence = 30, 4, 0.8
    scorer = _scorer(resamples=resamples, seed=seed, confidence=confidence)
    scorer.score(gen_frame, real_frame)
    summary = {m: (v, n) for m, v, n, _ in scorer.summary().iter_rows()}
    hashes = pl.Series(range(len(gen)), dtype=pl.Int64).hash(0).to_list()
    weights = [_weights(h, resamples, seed) for h in hashes]
    real_days = [day.tolist() for days in real for day in days.values()]
    resampled = []
    for r in range(resamples):
        days = [d for u, ds in enumerate(gen) for d in [*ds.values()] * weights[u][r]]
        resampled.append(_oracle(real_days, [d.tolist() for d in days], xs, ys))
    alpha = (1 - confidence) / 2 * 100
    for name in DISTRIBUTIONS:
        low, high = np.percentile([values[name] for values in resampled], [alpha, 100 - alpha])
        assert summary[f"jsd_{name}:low"] == pytest.approx((low, len(gen)), rel=1e-9, abs=1e-12)
        assert summary[f"jsd_{name}:high"] == pytest.approx((high, len(gen)), rel=1e-9, abs=1e-12)
        assert low < high, name


def test_trajectory_interval_same_bits_for_any_chunking_and_row_order():
    """Three chunks of shuffled rows, one chunk: the same summary; another seed: another one;
    the real population's own rows (no interval) unchanged."""
    from tests.test_population import _scorer

    *_, gen_frame, real_frame = _trajectory_city()
    whole = _scorer(resamples=20, seed=1, metrics=("radius", "density", "irank"))
    whole.score(gen_frame, real_frame)
    chunked = _scorer(resamples=20, seed=1, metrics=("radius", "density", "irank"))
    for part in np.array_split(np.random.default_rng(3).permutation(24), 3):
        chunk = (
            f.filter(f["uid"].is_in(part.tolist())).sample(fraction=1.0, shuffle=True, seed=2)
            for f in (gen_frame, real_frame)
        )
        chunked.score(*chunk)
    assert whole.summary().equals(chunked.summary())
    names = whole.summary()["metric"].to_list()
    assert names[:3] == ["jsd_radius", "jsd_radius:low", "jsd_radius:high"]
    other = _scorer(resamples=20, seed=2, metrics=("radius", "density", "irank"))
    other.score(gen_frame, real_frame)
    assert not other.summary().equals(whole.summary())
    plain = _scorer(metrics=("radius", "density", "irank"))
    plain.score(gen_frame, real_frame)
    point = whole.summary().filter(~pl.col("metric").str.contains(":"))
    assert point.equals(plain.summary())


def test_resamples_without_a_metric_to_take_them_is_an_error(tmp_path, capsys):
    """Resamples asked where no asked metric takes an interval: exit 2 naming what does, in
    both families (not a run without the rows)."""
    from mobeval.cli import main
    from tests.test_population import _city

    gen, ref = _city(n_uids=2, days=1)
    for name, frame in (("gen", gen), ("ref", ref)):
        frame.write_parquet(tmp_path / f"{name}.parquet")
    argv = ["trajectory", "--reference", str(tmp_path / "ref.parquet"), "--generated"]
    argv += [str(tmp_path / "gen.parquet"), "--population-resamples", "5"]
    assert main([*argv, "--metrics", "geobleu"]) == 2
    assert "gives an interval to the population divergences" in capsys.readouterr().err
    lists = _lists(_rows())
    with pytest.raises(ConfigError, match="gives an interval to gini, coverage and entropy"):
        evaluate_recs(lists, lists, metrics=["ndcg@4"], k=None, population_resamples=5)
