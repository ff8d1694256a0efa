"""Beyond-accuracy metrics of recommendation lists (gini, coverage, entropy, avg_popularity,
tail_percentage): against RecBole 1.2.1's and ClayRS 0.5.1's own code (golden values), their own
test cases translated, plain-Python oracles, chunking and row order, and the refusals."""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import polars as pl
import pytest

from mobeval.api import evaluate_recs
from mobeval.cli import main
from mobeval.errors import ConfigError, InputError
from tests.conftest import GOLDEN, REPO_ROOT
from tests.test_recs_engine import shuffle_users

SAMPLES = REPO_ROOT / "data_samples" / "recs"
RATINGS = SAMPLES / "ratings.parquet"
CATALOGUE = SAMPLES / "catalogue.parquet"
TRAIN = SAMPLES / "train.parquet"
VALUES = json.loads((GOLDEN / "beyond" / "population.json").read_text())["cases"]


def _golden(model: str, system: str):
    """(metric name, tail_ratio, value) of one model's golden values of one system."""
    for name, value in VALUES[model].items():
        if name.startswith(system + "_"):
            metric, _, option = name[len(system) + 1 :].partition(":tail_ratio=")
            yield metric, float(option) if option else None, value


@pytest.mark.parametrize("model", ["mf", "popular"])
@pytest.mark.parametrize("system", ["clayrs", "recbole"])
def test_golden_values_of_the_reference_code(model, system):
    groups: dict = {}
    for metric, tail_ratio, value in _golden(model, system):
        groups.setdefault(tail_ratio, {})[metric] = value
    for tail_ratio, want in groups.items():
        result = evaluate_recs(
            RATINGS,
            SAMPLES / f"{model}.parquet",
            metrics=list(want),
            k=None,
            population_convention=system,
            catalogue=str(CATALOGUE),
            train=str(TRAIN),
            tail_ratio=tail_ratio,
        )
        for metric, value in want.items():
            assert result.value(metric) == pytest.approx(value, abs=1e-9), (metric, tail_ratio)


def _lists(rows: list[list]) -> pl.DataFrame:
    """One list per user (user i: rows[i]), in list order, scores descending."""
    return pl.DataFrame(
        {
            "user_id": [u for u, items in enumerate(rows) for _ in items],
            "item_id": [i for items in rows for i in items],
            "score": [float(-p) for items in rows for p in range(len(items))],
        }
    )


def _ratings(lists: pl.DataFrame) -> pl.DataFrame:
    first = lists.group_by("user_id", maintain_order=True).first()
    return first.select("user_id", "item_id", pl.lit(1.0).alias("rating"))


def _run(tmp_path, lists, metrics, *, catalogue=None, train=None, **options):
    paths = {}
    for name, frame in (("catalogue", catalogue), ("train", train)):
        if frame is not None:
            paths[name] = str(tmp_path / f"{name}.parquet")
            frame.write_parquet(paths[name])
    return evaluate_recs(_ratings(lists), lists, metrics=metrics, k=None, **paths, **options)


# RecBole tests/metrics/test_topk_metrics.py: item_matrix, num_items = 8 (its items 1..7 and
# the padding item), item_count {1: 0, 2: 1, ..., 6: 5}; item 1, never in the training data,
# is absent from a training file.
RECBOLE_MATRIX = [[5, 7, 3], [4, 5, 2], [2, 3, 5], [1, 4, 6], [5, 3, 7]]
RECBOLE_CATALOGUE = pl.DataFrame({"item_id": list(range(1, 8))})
RECBOLE_TRAIN = pl.DataFrame({"item_id": [i for i in range(2, 7) for _ in range(i - 1)]})


def test_recbole_own_test_cases(tmp_path):
    result = _run(
        tmp_path,
        _lists(RECBOLE_MATRIX),
        ["itemcoverage", "giniindex", "shannonentropy", "averagepopularity"],
        catalogue=RECBOLE_CATALOGUE,
        train=RECBOLE_TRAIN,
        population_convention="recbole",
    )
    assert result.value("coverage") == 7 / 8
    gini = (-7 * 0 - 5 * 1 - 3 * 1 - 1 * 2 + 1 * 2 + 3 * 2 + 5 * 3 + 7 * 4) / (8 * (3 * 5))
    assert result.value("gini") == pytest.approx(gini, abs=1e-15)
    shares = [1, 2, 3, 2, 4, 1, 2]
    entropy = -np.mean([c / 15 * np.log(c / 15) for c in shares])
    assert result.value("entropy") == pytest.approx(entropy, rel=1e-12)
    # the last column of RecBole's expected matrix, averaged over the users
    assert result.value("avg_popularity") == pytest.approx((6 + 8 + 7 + 8 + 6) / 3 / 5, abs=1e-15)


@pytest.mark.parametrize(
    ("rows", "top_n", "expected"),
    [
        ([["i1", "i2", "i3"], ["i2", "i3", "i1"]], None, 0.0),  # test_perform_equi
        ([["i1", "i2", "i3"], ["i2", "i3", "i1"]], 3, 0.0),  # test_perform_equi_top_n
        ([["i4"]], None, 0.0),  # test_perform_only_one
        ([["i4"]], 2, 0.0),
    ],
)
def test_clayrs_gini_test_cases(tmp_path, rows, top_n, expected):
    metric = "gini" if top_n is None else f"gini@{top_n}"
    assert _run(tmp_path, _lists(rows), [metric]).value(metric) == expected


def test_clayrs_gini_top_2_is_unequal(tmp_path):
    # test_perform_equi_top_n: in the top 2, i2 is recommended twice
    value = _run(tmp_path, _lists([["i1", "i2", "i3"], ["i2", "i3", "i1"]]), ["gini@2"])
    assert 0 < value.value("gini@2") <= 1


CLAYRS_CATALOGUE = pl.DataFrame({"item_id": [f"i{n}" for n in range(1, 11)]})


@pytest.mark.parametrize(
    ("rows", "catalogue", "metric", "expected"),
    [
        ([["inew1", "inew2"], ["inew3", "inew4"]], CLAYRS_CATALOGUE, "prediction_coverage", 0),
        (
            [["i2", "i1", "i4", "i5", "i6", "i3", "i8", "i9"], ["i4", "i10", "i7"]],
            CLAYRS_CATALOGUE,
            "prediction_coverage",
            100,
        ),
        ([["i2", "i1", "i4", "i5"]], pl.DataFrame({"item_id": ["i1"]}), "prediction_coverage", 100),
        ([["i2", "i1"], ["i2", "i7"]], pl.DataFrame({"item_id": ["i2"]}), "coverage@1", 100),
        ([["i2", "i1"], ["i2", "i7"]], pl.DataFrame({"item_id": ["i2"]}), "coverage@2", 100),
        ([["inew1", "inew2"], ["inew3", "inew4"]], CLAYRS_CATALOGUE, "coverage@2", 0),
    ],
)
def test_clayrs_coverage_test_cases(tmp_path, rows, catalogue, metric, expected):
    result = _run(tmp_path, _lists(rows), [metric], catalogue=catalogue)
    name = metric.replace("prediction_coverage", "coverage")
    assert result.value(name) == expected


def _gini_oracle(counts: list[int], n: int) -> float:
    """Gini's mean-difference form: sum_ij |x_i - x_j| / (2 n^2 mean), over n values."""
    x = counts + [0] * (n - len(counts))
    mean = sum(x) / n
    return sum(abs(a - b) for a in x for b in x) / (2 * n * n * mean)


def test_against_plain_python_and_the_same_bits_for_any_chunking(tmp_path):
    rng = np.random.default_rng(7)
    rows = [list(rng.choice(60, size=int(rng.integers(1, 9)), replace=False)) for _ in range(80)]
    lists = _lists(rows)
    catalogue = pl.DataFrame({"item_id": np.arange(70)})
    train = pl.DataFrame({"item_id": rng.choice(70, size=400)})
    metrics = ["gini@5", "coverage@5", "entropy@5", "avg_popularity@5", "tail_percentage@5"]
    options = {"population_convention": "recbole", "tail_ratio": 0.2}
    first = _run(tmp_path, lists, metrics, catalogue=catalogue, train=train, **options)

    counts = Counter(i for items in rows for i in items[:5])
    assert first.value("gini@5") == pytest.approx(
        _gini_oracle(list(counts.values()), 71), abs=1e-12
    )
    assert first.value("coverage@5") == len(counts) / 71
    total = sum(counts.values())
    h = -sum(c / total * math.log(c / total) for c in counts.values()) / len(counts)
    assert first.value("entropy@5") == pytest.approx(h, rel=1e-12)
    popularity = Counter(train["item_id"].to_list())
    ranked = sorted(popularity.items(), key=lambda kv: (kv[1], kv[0]))
    tail = {i for i, _ in ranked[: max(int(len(ranked) * 0.2), 1)]}
    arp = sum(sum(popularity[i] for i in r[:5]) / len(r[:5]) for r in rows) / len(rows)
    share = sum(sum(i in tail for i in r[:5]) / len(r[:5]) for r in rows) / len(rows)
    assert first.value("avg_popularity@5") == pytest.approx(arp, rel=1e-12)
    assert first.value("tail_percentage@5") == pytest.approx(share, rel=1e-12)

    for chunk_rows, seed in ((7, 1), (50, 2), (10**6, 3)):
        again = evaluate_recs(
            _ratings(lists),
            shuffle_users(lists, seed=seed),
            metrics=metrics,
            k=None,
            chunk_rows=chunk_rows,
            catalogue=str(tmp_path / "catalogue.parquet"),
            train=str(tmp_path / "train.parquet"),
            **options,
        )
        assert again.summary.equals(first.summary), chunk_rows


def test_population_rows_beside_the_accuracy_metrics():
    result = evaluate_recs(RATINGS, SAMPLES / "mf.parquet", metrics=["ndcg@10", "gini@10"], k=None)
    assert result.summary["metric"].to_list() == ["ndcg@10", "gini@10", "users"]
    assert result.summary.filter(pl.col("metric") == "gini@10")["n"].item() == 300
    assert result.per_unit.columns == ["user_id", "ndcg@10"]


def test_a_missing_input_is_refused_on_every_face(tmp_path, capsys):
    with pytest.raises(ConfigError, match="coverage@10 needs the catalogue"):
        evaluate_recs(RATINGS, SAMPLES / "mf.parquet", metrics=["coverage@10"], k=None)
    with pytest.raises(ConfigError, match="avg_popularity@5 needs the training"):
        evaluate_recs(RATINGS, SAMPLES / "mf.parquet", metrics=["avg_popularity@5"], k=None)
    argv = ["recs", "--ratings", str(RATINGS), "--recs", str(SAMPLES / "mf.parquet")]
    assert main([*argv, "--metrics", "gini", "--population-convention", "recbole"]) == 2
    assert "needs the catalogue" in capsys.readouterr().err


def test_an_item_outside_the_catalogue(tmp_path):
    lists = _lists([[1, 2], [2, 9]])
    catalogue = pl.DataFrame({"item_id": [1, 2, 3]})
    clayrs = _run(tmp_path, lists, ["coverage", "gini"], catalogue=catalogue)
    assert clayrs.value("coverage") == round(2 / 3 * 100, 2)
    with pytest.raises(InputError, match="not in the catalogue") as error:
        _run(tmp_path, lists, ["coverage"], catalogue=catalogue, population_convention="recbole")
    assert "item_id" in str(error.value) and "9" in str(error.value)


# ClayRS test/evaluation/metrics/test_fairness_metrics.py, TestDeltaGap: the original ratings,
# the training profiles, and the ranked lists (u6 has none), in score order.
DG_ORIGINAL = pl.DataFrame(
    {
        "user_id": ["u1"] * 8 + ["u2"] * 4 + ["u3"] * 6 + ["u4"] * 7 + ["u5"] * 5 + ["u6"] * 2,
        "item_id": [
            "i1",
            "i2",
            "i3",
            "i4",
            "i5",
            "i6",
            "i7",
            "i8",
            "i1",
            "i9",
            "i10",
            "i11",
            "i1",
            "i12",
            "i13",
            "i3",
            "i10",
            "i14",
            "i3",
            "i10",
            "i15",
            "i16",
            "i9",
            "i17",
            "i99",
            "i10",
            "i18",
            "i19",
            "i20",
            "i21",
            "inew_1",
            "inew_2",
        ],
    }
)
DG_TRAIN = pl.DataFrame(
    {
        "user_id": ["u1"] * 6 + ["u2"] * 3 + ["u3"] * 4 + ["u4"] * 5 + ["u5"] * 4 + ["u6"],
        "item_id": [
            "i1",
            "i2",
            "i3",
            "i4",
            "i5",
            "i6",
            "i1",
            "i9",
            "i10",
            "i1",
            "i12",
            "i13",
            "i3",
            "i3",
            "i10",
            "i15",
            "i16",
            "i9",
            "i10",
            "i18",
            "i19",
            "i20",
            "inew_1",
        ],
    }
)
DG_LISTS = {
    "u1": ["i7", "i10", "i11", "i12", "i13"],
    "u2": ["i11", "i20", "i6", "i3", "i4"],
    "u3": ["i4", "i5", "i6", "i7", "i10"],
    "u4": ["i9", "i2", "i3", "i1", "i5"],
    "u5": ["i2", "i4", "i3", "i5", "i6"],  # scores 250, 150, 190, 100, 50: in score order
}


def _clayrs_delta_gap(groups: dict[str, set], top_n: int | None = None) -> list[float]:
    """ClayRS's own oracle (``TestDeltaGap._compute_deltagap``) in plain Python."""
    users = len(set(DG_ORIGINAL["user_id"]))
    pop = {i: c / users for i, c in Counter(DG_ORIGINAL["item_id"].to_list()).items()}
    profile = {}
    for u, i in DG_TRAIN.iter_rows():
        profile.setdefault(u, []).append(i)
    out = []
    for group in groups.values():
        recs = [
            sum(pop.get(i, 0.0) for i in DG_LISTS[u][:top_n]) / len(DG_LISTS[u][:top_n])
            for u in group
        ]
        prof = [sum(pop.get(i, 0.0) for i in profile[u]) / len(profile[u]) for u in group]
        recs_gap, profile_gap = sum(recs) / len(group), sum(prof) / len(group)
        out.append((recs_gap - profile_gap) / profile_gap)
    return out


@pytest.mark.parametrize(
    ("user_groups", "top_n", "valid"),
    [
        (["a=1"], None, {"a": {"u1", "u2", "u3", "u4", "u5"}}),  # test_perform_1_group
        (["a=0.4", "b=0.6"], None, {"a": {"u2", "u4"}, "b": {"u3", "u1", "u5"}}),
        (["a=0.2", "b=0.6", "c=0.2"], None, {"a": {"u2"}, "b": {"u4", "u5", "u1", "u3"}}),
        (["a=0.4", "b=0.6"], 3, {"a": {"u2", "u4"}, "b": {"u3", "u1", "u5"}}),  # top_3
    ],
)
def test_clayrs_delta_gap_test_cases(tmp_path, user_groups, top_n, valid):
    lists = pl.DataFrame(
        {
            "user_id": [u for u, items in DG_LISTS.items() for _ in items],
            "item_id": [i for items in DG_LISTS.values() for i in items],
        }
    )
    original = tmp_path / "original.parquet"
    DG_ORIGINAL.write_parquet(original)
    metric = "delta_gap" if top_n is None else f"delta_gap@{top_n}"
    result = _run(
        tmp_path,
        lists,
        [metric],
        train=DG_TRAIN,
        original_ratings=str(original),
        user_groups=user_groups,
    )
    for (name, group), want in zip(valid.items(), _clayrs_delta_gap(valid, top_n), strict=True):
        row = result.summary.filter(pl.col("metric") == f"{metric}:{name}")
        assert row["value"].item() == pytest.approx(want, abs=1e-12), name
        assert row["n"].item() == len(group)
    if "c=0.2" in user_groups:  # u6, its only user, has no list: ClayRS leaves the group out
        row = result.summary.filter(pl.col("metric") == f"{metric}:c")
        assert math.isnan(row["value"].item()) and row["n"].item() == 0


def test_delta_gap_refusals(tmp_path):
    lists = _lists([["i1", "i2"]])
    with pytest.raises(ConfigError, match="needs user groups"):
        _run(tmp_path, lists, ["delta_gap"], train=DG_TRAIN)
    with pytest.raises(ConfigError, match="sum to"):
        _run(tmp_path, lists, ["delta_gap"], train=DG_TRAIN, user_groups=["a=0.5"])
    with pytest.raises(ConfigError, match=r"\(0, 1\]"):
        _run(tmp_path, lists, ["delta_gap"], train=DG_TRAIN, user_groups=["a=1"], pop_percentage=0)


def test_delta_gap_golden_values_of_clayrs_code(tmp_path):
    cases = json.loads((GOLDEN / "beyond" / "delta_gap.json").read_text())["cases"]
    train = pl.read_parquet(TRAIN)
    both = tmp_path / "train+ratings.parquet"
    pl.concat([train, pl.read_parquet(RATINGS).select("user_id", "item_id")]).write_parquet(both)
    originals = {"train": None, "train+ratings": str(both)}
    for key, want in cases.items():
        case = json.loads(key)
        metric = "delta_gap" if case["top_n"] is None else f"delta_gap@{case['top_n']}"
        result = evaluate_recs(
            RATINGS,
            SAMPLES / f"{case['model']}.parquet",
            metrics=[metric],
            k=None,
            train=str(TRAIN),
            original_ratings=originals[case["original_ratings"]],
            user_groups=case["user_groups"],
            pop_percentage=case["pop_percentage"],
        )
        for group, value in want.items():
            assert result.value(f"{metric}:{group}") == pytest.approx(value, abs=1e-9), (key, group)


def test_correlation_golden_values_of_clayrs_code():
    cases = json.loads((GOLDEN / "beyond" / "correlation.json").read_text())["cases"]
    for key, want in cases.items():
        model, method, top_n = key.split(":")
        metric = method if top_n == "None" else f"{method}@{top_n}"
        result = evaluate_recs(RATINGS, SAMPLES / f"{model}.parquet", metrics=[metric], k=None)
        assert result.value(metric) == pytest.approx(want["sys"], abs=1e-9), key
        got = dict(result.per_unit.select(pl.col("user_id").cast(pl.String), metric).iter_rows())
        assert set(got) == set(want["users"])
        for user, value in want["users"].items():
            if value is None:
                assert math.isnan(got[user]), (key, user)
            else:
                assert got[user] == pytest.approx(value, abs=1e-9), (key, user)


def test_correlation_plain_python_and_chunking(tmp_path):
    # ties on both sides, a user with one rated item (NaN), a constant side (NaN)
    rows = [[1, 2, 3, 4, 5], [1, 2], [3, 4, 5]]
    lists = _lists(rows).with_columns(score=pl.Series([5.0, 3, 3, 1, 0, 2, 1, 4, 4, 4]))
    ratings = pl.DataFrame(
        {
            "user_id": [0, 0, 0, 0, 1, 2, 2, 2],
            "item_id": [1, 2, 3, 5, 1, 3, 4, 5],
            "rating": [4.0, 4, 2, 1, 5, 1, 2, 3],
        }
    )
    result = evaluate_recs(ratings, lists, metrics=["pearson", "spearman", "kendall"], k=None)
    x, y = [5.0, 3, 3, 0], [4.0, 4, 2, 1]
    n = len(x)
    mx, my = sum(x) / n, sum(y) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    r = cov / math.sqrt(sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y))
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    s = sum(
        (x[i] - x[j]) * (y[i] - y[j]) > 0 and 1 or ((x[i] - x[j]) * (y[i] - y[j]) < 0 and -1)
        for i, j in pairs
    )
    ties_x = sum(x[i] == x[j] for i, j in pairs)
    ties_y = sum(y[i] == y[j] for i, j in pairs)
    tau = s / math.sqrt((len(pairs) - ties_x) * (len(pairs) - ties_y))
    per_user = result.per_unit.sort("user_id")
    assert per_user["pearson"][0] == pytest.approx(r, abs=1e-15)
    assert per_user["kendall"][0] == pytest.approx(tau, abs=1e-15)
    # average ranks: x (0, 3, 3, 5) -> 1, 2.5, 2.5, 4 ; y (1, 2, 4, 4) -> 1, 2, 3.5, 3.5
    assert per_user["spearman"][0] == pytest.approx(
        float(np.corrcoef([4, 2.5, 2.5, 1], [3.5, 3.5, 2, 1])[0, 1]), abs=1e-15
    )
    assert all(math.isnan(v) for v in per_user.row(1)[1:] + per_user.row(2)[1:])
    assert result.summary.filter(pl.col("metric") == "pearson")["n"].item() == 1
    again = evaluate_recs(
        ratings,
        shuffle_users(lists),
        metrics=["pearson", "spearman", "kendall"],
        k=None,
        chunk_rows=2,
    )
    assert again.summary.equals(result.summary)


def test_metrics_asked_together_give_their_values_alone():
    metrics = ["pearson@10", "tail_percentage@10", "delta_gap@10", "avg_popularity@5", "gini@10"]
    options = {"train": str(TRAIN), "catalogue": str(CATALOGUE), "user_groups": ["a=0.5", "b=0.5"]}
    together = evaluate_recs(RATINGS, SAMPLES / "mf.parquet", metrics=metrics, k=None, **options)
    for metric in metrics:
        alone = evaluate_recs(RATINGS, SAMPLES / "mf.parquet", metrics=[metric], k=None, **options)
        rows = alone.summary.filter(pl.col("metric") != "users")
        assert together.summary.join(rows, on="metric", how="semi").equals(rows), metric


def _ranked(positive_ranks: list[set[int]], lengths: list[int]):
    """Lists of distinct descending scores, and ratings of the items at the given 1-based ranks."""
    lists = _lists([[f"u{u}i{r}" for r in range(1, n + 1)] for u, n in enumerate(lengths)])
    rated = [(u, f"u{u}i{r}", 1.0) for u, ranks in enumerate(positive_ranks) for r in ranks]
    ratings = pl.DataFrame(rated, schema=["user_id", "item_id", "rating"], orient="row")
    return lists, ratings


def test_recbole_gauc_test_cases():
    # tests/metrics/test_rank_metrics.py: user_len, pos_len and pos_rank_sum of each user
    lists, ratings = _ranked([{1}, {1, 3}, {2, 3, 4}], [2, 3, 5])
    result = evaluate_recs(
        ratings, lists, metrics=["gauc"], k=[5], convention="relison", relevant_threshold=None
    )
    want = (
        1 * ((2 - (1 - 1) / 2 - 1 / 1) / (2 - 1))
        + 2 * ((3 - (2 - 1) / 2 - 4 / 2) / (3 - 2))
        + 3 * ((5 - (3 - 1) / 2 - 9 / 3) / (5 - 3))
    ) / (1 + 2 + 3)
    assert result.value("gauc") == pytest.approx(want, abs=1e-15)
    # case 1: a user without a positive and one without a negative are left out
    lists, ratings = _ranked([{3}, set(), {1, 2, 3, 4}], [3, 6, 4])
    ratings = pl.concat(
        [ratings, pl.DataFrame([(1, "elsewhere", 1.0)], schema=ratings.schema, orient="row")]
    )
    result = evaluate_recs(ratings, lists, metrics=["gauc"], k=None, convention="relison")
    assert result.value("gauc") == (3 - 0 - 3 / 1) / (3 - 1)
    assert result.summary.filter(pl.col("metric") == "gauc")["n"].item() == 1
    assert math.isnan(result.per_unit.sort("user_id")["gauc"][1])
    with pytest.raises(ConfigError, match="takes no cutoff"):
        evaluate_recs(ratings, lists, metrics=["gauc@5"], k=None, convention="relison")


@pytest.mark.parametrize("model", ["mf", "popular"])
def test_gauc_golden_value_of_recbole_code(model):
    want = json.loads((GOLDEN / "beyond" / "gauc.json").read_text())["cases"][model]
    result = evaluate_recs(RATINGS, SAMPLES / f"{model}.parquet", metrics=["gauc"], k=None)
    assert result.value("gauc") == pytest.approx(want, abs=1e-9)


# ClayRS test/evaluation/metrics/test_plot_metrics.py: the profiles (u2 keeps i11 there), the
# original ratings (u2 also rated i55) and the same lists as TestDeltaGap's.
PR_TRAIN = pl.concat(
    [DG_TRAIN.slice(0, 9), pl.DataFrame({"user_id": ["u2"], "item_id": ["i11"]}), DG_TRAIN[9:]]
)
PR_ORIGINAL = pl.concat(
    [
        DG_ORIGINAL.slice(0, 12),
        pl.DataFrame({"user_id": ["u2"], "item_id": ["i55"]}),
        DG_ORIGINAL[12:],
    ]
)


def test_pop_ratio_golden_values_of_clayrs_code(tmp_path):
    """PopRatioProfileVsRecs's stored frame (each group's per-user ratios, profile and recs) on
    ClayRS's own plot-metric test case: each row is the mean of its list, n its length."""
    cases = json.loads((GOLDEN / "beyond" / "pop_ratio.json").read_text())["cases"]
    lists = pl.DataFrame(
        {
            "user_id": [u for u, items in DG_LISTS.items() for _ in items],
            "item_id": [i for items in DG_LISTS.values() for i in items],
        }
    )
    original = tmp_path / "original.parquet"
    PR_ORIGINAL.write_parquet(original)
    for key, groups in cases.items():
        case = json.loads(key)
        result = _run(
            tmp_path,
            lists,
            ["pop_ratio"],
            train=PR_TRAIN,
            original_ratings=str(original),
            user_groups=case["user_groups"],
            pop_percentage=case["pop_percentage"],
        )
        for group, sides in groups.items():
            for side, ratios in sides.items():
                row = result.summary.filter(pl.col("metric") == f"pop_ratio:{group}:{side}")
                assert row["value"].item() == pytest.approx(sum(ratios) / len(ratios), abs=1e-12)
                assert row["n"].item() == len(ratios), (key, group, side)


def test_pop_ratio_of_the_first_k_distinct_items(tmp_path):
    """pop_ratio@k against plain Python: the share of a user's distinct first-k items among the
    round(n * pop_percentage) most popular; a repeated item counted once."""
    lists = _lists([["i1", "i1", "i7", "i3"], ["i8", "i1"]])
    train = pl.DataFrame({"user_id": [0, 0, 1], "item_id": ["i1", "i3", "i8"]})
    original = tmp_path / "original.parquet"
    pl.DataFrame(
        {"user_id": ["a", "b", "c", "a", "b", "a"], "item_id": ["i1", "i1", "i1", "i3", "i3", "i8"]}
    ).write_parquet(original)
    result = _run(
        tmp_path,
        lists,
        ["pop_ratio@3"],
        train=train,
        original_ratings=str(original),
        user_groups=["all=1"],
        pop_percentage=0.67,  # round(3 * 0.67) = 2: i1 and i3
    )
    popular = {"i1", "i3"}
    recs = [
        len(set(items[:3]) & popular) / len(set(items[:3]))
        for items in (["i1", "i1", "i7"], ["i8", "i1"])
    ]
    profile = [1.0, 0.0]
    values = dict(zip(result.summary["metric"], result.summary["value"], strict=True))
    assert values["pop_ratio@3:all:recs"] == pytest.approx(sum(recs) / 2, abs=1e-15)
    assert values["pop_ratio@3:all:profile"] == pytest.approx(sum(profile) / 2, abs=1e-15)
