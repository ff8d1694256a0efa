"""The Poisson bootstrap interval of the population metrics (gini, coverage, entropy; the
per-user avg_popularity, tail_percentage, delta_gap, pop_ratio): against a plain-Python oracle
(SplitMix64 and Poisson inversion written out, the metric recomputed from each resample's item
counts or weighted per-user values), every weight 1 giving the value's bits, and the same bits for
any chunking and row order."""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

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
    takes = (
        "gini, coverage, entropy, distributional_coverage, avg_popularity, tail_percentage, "
        "diversity, serendipity, epc, efd, aplt, aclt, delta_gap and pop_ratio"
    )
    with pytest.raises(ConfigError, match=f"gives an interval to {takes}; metrics asks for none"):
        evaluate_recs(lists, lists, metrics=["ndcg@4"], k=None, population_resamples=5)
    for metric in ("avg_popularity@4", "tail_percentage@4", "delta_gap@4", "pop_ratio@4"):
        options = {"user_groups": ["all=1"]} if metric.startswith(("delta", "pop")) else {}
        train = lists.select("user_id", "item_id")  # takes them: no error
        _run(tmp_path, lists, [metric], train=train, population_resamples=5, **options)


def _percentiles(values: list[float], confidence: float) -> tuple[float, float]:
    """The percentiles of the resamples with a value (NaN: none drawn to count)."""
    alpha = (1 - confidence) / 2 * 100
    low, high = np.percentile([v for v in values if not math.isnan(v)], [alpha, 100 - alpha])
    return float(low), float(high)


def _weighted_mean(values: list[float], weights: list[int]) -> float:
    """``sum w v`` exactly, rounded once, over ``sum w`` (NaN when 0)."""
    total = sum(weights)
    exact = sum(Fraction(v) * w for v, w in zip(values, weights, strict=True))
    return float(exact) / total if total else math.nan


def test_per_user_interval_against_plain_python(tmp_path):
    """avg_popularity@4 and tail_percentage@4: resample r is ``sum_u w_ur s_u / sum_u w_ur``,
    ``s_u`` the user's share of its first 4 items (plain Python), the sum exact; the interval
    the percentiles of those, bit for bit."""
    rows, resamples, seed, confidence = _rows(), 40, 7, 0.9
    rng = np.random.default_rng(3)
    train_items = [int(i) for i in rng.integers(0, 40, 120)]
    train = pl.DataFrame({"user_id": [0] * len(train_items), "item_id": train_items})
    result = _run(
        tmp_path,
        _lists(rows),
        ["avg_popularity@4", "tail_percentage@4"],
        train=train,
        tail_ratio=2,  # the items seen at most twice in the training interactions
        population_resamples=resamples,
        population_seed=seed,
        population_confidence=confidence,
    )
    popularity = Counter(train_items)
    shares = {
        "avg_popularity@4": [sum(popularity[i] for i in r[:4]) / len(r[:4]) for r in rows],
        "tail_percentage@4": [
            sum(0 < popularity[i] <= 2 for i in r[:4]) / len(r[:4]) for r in rows
        ],
    }
    hashes = pl.Series(range(len(rows)), dtype=pl.Int64).hash(0).to_list()
    weights = [_weights(h, resamples, seed) for h in hashes]
    for name, values in shares.items():
        resampled = [_weighted_mean(values, [w[r] for w in weights]) for r in range(resamples)]
        low, high = _percentiles(resampled, confidence)
        assert (result.value(f"{name}:low"), result.value(f"{name}:high")) == (low, high), name
        assert low < result.value(name) < high, name


def test_delta_gap_interval_against_plain_python(tmp_path):
    """ClayRS's DeltaGap test case (tests/test_recs_population.py), groups a = {u2, u4},
    b = {u1, u3, u5}: resample r's GAP of a side is the weighted mean of the group's users'
    mean popularity; a resample that draws none of them is left out (some do here)."""
    from tests.test_recs_population import DG_LISTS, DG_ORIGINAL, DG_TRAIN

    resamples, seed, confidence = 30, 1, 0.8
    original = tmp_path / "original.parquet"
    DG_ORIGINAL.write_parquet(original)
    result = _run(
        tmp_path,
        _named_lists(DG_LISTS),
        ["delta_gap@3"],
        train=DG_TRAIN,
        original_ratings=str(original),
        user_groups=["a=0.4", "b=0.6"],
        population_resamples=resamples,
        population_seed=seed,
        population_confidence=confidence,
    )
    users = len(set(DG_ORIGINAL["user_id"]))
    pop = {i: c / users for i, c in Counter(DG_ORIGINAL["item_id"].to_list()).items()}
    profile = {}
    for u, i in DG_TRAIN.iter_rows():
        profile.setdefault(u, []).append(i)
    hashes = dict(zip(DG_LISTS, pl.Series(list(DG_LISTS)).hash(0).to_list(), strict=True))
    undefined = 0
    for name, group in (("a", ["u2", "u4"]), ("b", ["u1", "u3", "u5"])):
        recs = [sum(pop.get(i, 0.0) for i in DG_LISTS[u][:3]) / 3 for u in group]
        prof = [sum(pop.get(i, 0.0) for i in profile[u]) / len(profile[u]) for u in group]
        weights = [_weights(hashes[u], resamples, seed) for u in group]
        resampled = []
        for r in range(resamples):
            w = [weights_u[r] for weights_u in weights]
            recs_gap, profile_gap = _weighted_mean(recs, w), _weighted_mean(prof, w)
            resampled.append((recs_gap - profile_gap) / profile_gap)
        low, high = _percentiles(resampled, confidence)
        metric = f"delta_gap@3:{name}"
        # ClayRS's mean popularity sums c_i / users (the value's test: 1e-12); mobeval divides
        # the integer sum once
        got = (result.value(f"{metric}:low"), result.value(f"{metric}:high"))
        assert got == pytest.approx((low, high), rel=1e-12), name
        assert low < result.value(metric) < high, name
        undefined += sum(math.isnan(v) for v in resampled)
    assert undefined > 0


def _named_lists(lists: dict[str, list[str]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "user_id": [u for u, items in lists.items() for _ in items],
            "item_id": [i for items in lists.values() for i in items],
        }
    )


def _run(tmp_path, lists, metrics, **options):
    from tests.test_recs_population import _run

    return _run(tmp_path, lists, metrics, **options)


PER_USER = ["avg_popularity@3", "tail_percentage@3", "delta_gap@3", "pop_ratio@3", "gini@3"]


def _per_user_run(tmp_path, lists, **options):
    from tests.test_recs_population import DG_ORIGINAL, DG_TRAIN

    original = tmp_path / "original.parquet"
    DG_ORIGINAL.write_parquet(original)
    return _run(
        tmp_path,
        lists,
        PER_USER,
        train=DG_TRAIN,
        original_ratings=str(original),
        user_groups=["a=0.4", "b=0.6"],
        **options,
    )


def test_per_user_interval_of_weights_one_is_the_value(tmp_path, monkeypatch):
    """Every user drawn once in every resample: each ``:low`` and ``:high`` row is its value's
    bits (the weighted exact sums are the value's sums)."""
    from mobeval.tasks import recs_population
    from tests.test_recs_population import DG_LISTS

    def ones(hashes, resamples, seed):
        return np.ones((len(hashes), resamples), dtype=np.int64)

    monkeypatch.setattr(recs_population, "poisson_weights", ones)
    summary = _per_user_run(tmp_path, _named_lists(DG_LISTS), population_resamples=3).summary
    values = dict(zip(summary["metric"], summary["value"], strict=True))
    names = [m for m in values if m.endswith(":low")]
    assert len(names) == 3 + 2 + 2 * 2  # 3 metrics, delta_gap 2 groups, pop_ratio 2 x 2
    for low in names:
        name = low[: -len(":low")]
        assert values[low] == values[f"{name}:high"] == values[name], name
        assert not math.isnan(values[name]), name


def test_per_user_interval_same_bits_for_any_chunking_and_row_order(tmp_path):
    from tests.test_recs_population import DG_LISTS

    lists = _named_lists(DG_LISTS)
    first = _per_user_run(tmp_path, lists, population_resamples=25, population_seed=4).summary
    assert "pop_ratio@3:b:recs:low" in first["metric"].to_list()
    for chunk_rows, order in ((3, 1), (7, 2), (10**6, 3)):
        again = _per_user_run(
            tmp_path,
            shuffle_users(lists, seed=order),
            population_resamples=25,
            population_seed=4,
            chunk_rows=chunk_rows,
        ).summary
        assert again.equals(first), chunk_rows
    other = _per_user_run(tmp_path, lists, population_resamples=25, population_seed=5).summary
    assert not other.equals(first)
    plain = _per_user_run(tmp_path, lists).summary
    assert first.filter(~pl.col("metric").str.contains(":(low|high)$")).equals(plain)
