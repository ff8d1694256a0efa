"""Recommendation lists through the streaming engine: golden system values for any chunk size and
user order (sorted streaming and hash buckets), list order = file order, users missing on one side
across chunks, bad input through the CLI, and the sample job."""

from __future__ import annotations

import json

import polars as pl
import pytest

from mobeval.api import evaluate_recs
from mobeval.cli import main
from mobeval.errors import InputError
from mobeval.tasks.recs import score_recs_frame
from tests.conftest import GOLDEN, REPO_ROOT
from tests.test_buckets import _paths_taken
from tests.test_recs_golden import CASES, _call, _load, _same

SAMPLES = REPO_ROOT / "data_samples" / "recs"


def shuffle_users(recs: pl.DataFrame, seed: int = 1) -> pl.DataFrame:
    """Users in a random order, each user's rows kept together and in their order."""
    users = recs["user_id"].unique().shuffle(seed=seed)
    order = pl.DataFrame({"user_id": users, "_order": pl.int_range(len(users), eager=True)})
    return (
        recs.join(order, on="user_id", maintain_order="left")
        .sort("_order", maintain_order=True)
        .drop("_order")
    )


def golden_groups(case: str):
    """The case's entries grouped by (preset, options, error?): one engine run per group."""
    expected, recs, ratings = _load(GOLDEN, case)
    groups: dict[tuple, list] = {}
    for entry in expected:
        preset, options, metric = _call(entry)
        key = (preset, json.dumps(options, sort_keys=True), bool(entry.get("error")))
        groups.setdefault(key, []).append((metric, entry))
    return recs, ratings, groups


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("chunk_rows", [97, 10**6])
@pytest.mark.parametrize("shuffled", [False, True], ids=["sorted", "shuffled"])
def test_golden_through_the_engine(case, chunk_rows, shuffled):
    recs, ratings, groups = golden_groups(case)
    if shuffled:
        recs, ratings = shuffle_users(recs, seed=1), shuffle_users(ratings, seed=2)
    for (preset, options, error), items in groups.items():
        metrics = [metric for metric, _ in items]
        call = dict(metrics=metrics, cutoffs=None, convention=preset, **json.loads(options))
        if error:
            with pytest.raises(InputError, match="No user has a rating above the given threshold"):
                evaluate_recs(ratings, recs, chunk_rows=chunk_rows, **call)
            continue
        result = evaluate_recs(ratings, recs, chunk_rows=chunk_rows, **call)
        for metric, entry in items:
            assert _same(result.value(metric), entry["value"]), (preset, options, metric)
        whole = score_recs_frame(recs, ratings, **call).per_user
        assert result.per_unit.sort("user_id").equals(whole.sort("user_id"))


def test_summary_is_the_same_for_any_chunk_size():
    ratings = pl.read_parquet(SAMPLES / "ratings.parquet")
    recs = pl.read_parquet(SAMPLES / "mf.parquet")
    call = dict(metrics=["precision", "ndcg", "map", "f1", "r-precision"], cutoffs=[3, 10])
    first = evaluate_recs(ratings, recs, **call).summary
    for chunk_rows, shuffled in ((200, False), (700, True), (3000, True)):
        data = shuffle_users(recs, seed=chunk_rows) if shuffled else recs
        again = evaluate_recs(ratings, data, chunk_rows=chunk_rows, **call).summary
        assert again.equals(first), chunk_rows


def clayrs_oracle(recs: pl.DataFrame, ratings: pl.DataFrame, k: int) -> dict[str, float]:
    """ClayRS precision@k and mrr@k in plain Python: the list is the file's row order, relevant =
    rated at least the user's mean rating, precision = hits / min(k, list length)."""
    lists: dict[int, list[int]] = {}
    for user, item in recs.select("user_id", "item_id").iter_rows():
        lists.setdefault(user, []).append(item)
    rated: dict[int, dict[int, float]] = {}
    for user, item, rating in ratings.iter_rows():
        rated.setdefault(user, {})[item] = rating
    precision, rr = [], []
    for user, items in lists.items():
        mean = sum(rated[user].values()) / len(rated[user])
        hits = [rated[user].get(item, -1.0) >= mean for item in items[:k]]
        precision.append(sum(hits) / min(k, len(items)))
        rr.append(next((1.0 / (i + 1) for i, hit in enumerate(hits) if hit), 0.0))
    return {f"precision@{k}": sum(precision) / len(lists), f"mrr@{k}": sum(rr) / len(lists)}


def test_list_order_is_the_file_order_whatever_the_path():
    _, recs, ratings = _load(GOLDEN, "rec_ratings_basic")
    reversed_lists = recs.reverse().sort("user_id", maintain_order=True)
    want = clayrs_oracle(reversed_lists, ratings, 5)
    in_rank_order = evaluate_recs(ratings, recs, metrics=list(want), cutoffs=None)
    assert in_rank_order.value("precision@5") != pytest.approx(want["precision@5"])
    for data in (reversed_lists, shuffle_users(reversed_lists)):
        for chunk_rows in (13, 10**6):
            result = evaluate_recs(
                ratings, data, metrics=list(want), cutoffs=None, chunk_rows=chunk_rows
            )
            for metric, value in want.items():
                assert result.value(metric) == pytest.approx(value, abs=1e-12), metric


@pytest.fixture(scope="module")
def sample():
    return pl.read_parquet(SAMPLES / "ratings.parquet"), pl.read_parquet(SAMPLES / "mf.parquet")


@pytest.mark.parametrize("user", [0, 150, 299])
@pytest.mark.parametrize("shuffled", [False, True], ids=["sorted", "shuffled"])
def test_clayrs_rejects_a_user_missing_on_either_side(sample, user, shuffled):
    ratings, recs = sample
    if shuffled:
        recs = shuffle_users(recs)
    for side in ("recs", "ratings"):
        data = {"ratings": ratings, "recs": recs}
        data[side] = data[side].filter(pl.col("user_id") != user)
        with pytest.raises(InputError, match="same users on both sides") as info:
            evaluate_recs(data["ratings"], data["recs"], chunk_rows=500)
        assert info.value.key == user
        assert info.value.path == "<DataFrame>"
        assert info.value.column == "user_id"


@pytest.mark.parametrize("denominator", ["users_in_both", "users_in_truth", "users_with_relevant"])
def test_users_missing_on_one_side_follow_the_convention_across_chunks(sample, denominator):
    ratings, recs = sample
    recs = shuffle_users(recs.filter(~pl.col("user_id").is_in([0, 7, 150, 299])))
    ratings = ratings.filter(pl.col("user_id") != 42)
    call = dict(
        metrics=["precision", "recall", "ndcg", "map"],
        cutoffs=[5],
        convention="trec_eval",
        relevant_threshold=4.0,
        denominator=denominator,
    )
    want = score_recs_frame(recs, ratings, **call).summary()
    for chunk_rows in (250, 10**6):
        got = evaluate_recs(ratings, recs, chunk_rows=chunk_rows, **call).summary
        assert got.filter(pl.col("metric") != "users").equals(want), chunk_rows


@pytest.mark.parametrize("apart", [False, True])
def test_users_out_of_order_stream_against_the_ratings_in_memory(monkeypatch, sample, apart):
    ratings, recs = sample
    ratings = ratings.filter(pl.col("user_id") < 100)  # 2,000 rows: they fit in a chunk
    # users 3 and 50: ratings, no list; 100 to 299: a list, no ratings
    recs = shuffle_users(recs.filter(~pl.col("user_id").is_in([3, 50, 250])), seed=5)
    if apart:  # a user without ratings met twice: only its key tells
        user = recs.filter(pl.col("user_id") >= 100)["user_id"][0]
        last = pl.int_range(pl.len()).over("user_id") >= pl.len().over("user_id") - 2
        moved = (pl.col("user_id") == user) & last
        recs = pl.concat([recs.filter(~moved), recs.filter(moved)])
    call = dict(
        metrics=["precision", "recall", "ndcg", "map"],
        cutoffs=[5],
        convention="trec_eval",
        relevant_threshold=4.0,
        denominator="users_in_truth",
    )
    want = score_recs_frame(recs, ratings, **call).summary()
    taken = _paths_taken(monkeypatch)
    got = evaluate_recs(ratings, recs, chunk_rows=3000, **call).summary
    assert taken == (["grouped", "buckets"] if apart else ["grouped"])
    assert got.filter(pl.col("metric") != "users").equals(want)


def test_rows_scattered_go_to_the_buckets_against_the_ratings_held(monkeypatch, sample):
    """Lists whose rows are scattered over the file (each list in no order): the hash buckets,
    at once, with the ratings (2,000 rows, several a user) split over them in memory."""
    ratings, recs = sample
    ratings = ratings.filter(pl.col("user_id") < 100)
    recs = recs.filter(~pl.col("user_id").is_in([3, 50, 250]))
    scattered = recs.sample(fraction=1.0, shuffle=True, seed=7)
    call = dict(metrics=["precision", "ndcg", "map"], cutoffs=[5, 20], convention="trec_eval")
    want = score_recs_frame(recs, ratings, **call).summary()
    taken = _paths_taken(monkeypatch)
    got = evaluate_recs(ratings, scattered, chunk_rows=3000, **call).summary
    assert taken == ["buckets"]
    assert got.filter(pl.col("metric") != "users").equals(want)


def test_a_differently_named_and_typed_user_column(sample):
    ratings, recs = sample
    want = evaluate_recs(ratings, recs, cutoffs=[5]).summary
    got = evaluate_recs(
        ratings.rename({"user_id": "uid"}).with_columns(pl.col("uid").cast(pl.Int32)),
        recs.rename({"user_id": "uid"}),
        cutoffs=[5],
        key="uid",
        chunk_rows=100,
    )
    assert got.summary.equals(want)
    assert got.per_unit.columns[0] == "uid"


def nan_at(row: int, column: str) -> pl.Expr:
    return pl.when(pl.int_range(pl.len()) == row).then(float("nan")).otherwise(column).alias(column)


def run_cli(tmp_path, ratings, recs, *extra):
    out = tmp_path / "out"
    argv = ["recs", "--ratings", str(ratings), "--recs", str(recs), "--out", str(out), "--quiet"]
    return main([*argv, "--chunk-rows", "100", *extra]), out


@pytest.mark.parametrize(
    ("side", "mutate", "extra", "message"),
    [
        (
            "ratings",
            lambda f: f.with_columns(nan_at(1000, "rating")),
            (),
            "column 'rating': NaN or infinite value (first offending key: ",
        ),
        (
            "recs",
            lambda f: f.with_columns(nan_at(4000, "score")),
            ("--convention", "trec_eval"),
            "column 'score': NaN or infinite value (first offending key: ",
        ),
        (
            "recs",
            lambda f: f.filter(pl.col("user_id") != 123),
            (),
            "column 'user_id': 1 user(s) of the ratings have no rows here; "
            "this convention (ClayRS) needs the same users on both sides "
            "(first offending key: 123)",
        ),
        (
            "ratings",
            lambda f: f.filter(pl.col("user_id") != 299),
            ("--convention", "clayrs"),
            "column 'user_id': 1 user(s) of the recs have no rows here; "
            "this convention (ClayRS) needs the same users on both sides "
            "(first offending key: 299)",
        ),
        ("recs", lambda f: f.drop("item_id"), (), "column 'item_id': missing column"),
    ],
)
def test_bad_input_through_the_cli(tmp_path, capsys, side, mutate, extra, message):
    paths = {"ratings": SAMPLES / "ratings.parquet", "recs": SAMPLES / "mf.parquet"}
    bad = tmp_path / f"bad_{side}.parquet"
    mutate(pl.read_parquet(paths[side])).write_parquet(bad)
    paths[side] = bad
    code, out = run_cli(tmp_path, paths["ratings"], paths["recs"], *extra)
    assert code == 2
    error = capsys.readouterr().err
    assert f"{bad}: {message}" in error
    if "NaN" in message:
        assert "first offending key: (" in error  # (user, item)
    for section in ("summary", "per_unit"):
        assert not (out / section).exists()


def test_cli_writes_the_sections_prints_the_table_and_records_the_manifest(tmp_path, capsys):
    code, out = run_cli(
        tmp_path,
        SAMPLES / "ratings.parquet",
        SAMPLES / "mf.parquet",
        "--convention",
        "trec_eval",
        "--relevant-threshold",
        "4",
        "--cutoffs",
        "5,10",
        "--city",
        "c",
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "precision@5" in printed and "mf" in printed
    summary = pl.read_parquet(out / "summary" / "city=c" / "model=mf")
    want = evaluate_recs(
        SAMPLES / "ratings.parquet",
        SAMPLES / "mf.parquet",
        cutoffs=[5, 10],
        convention="trec_eval",
        relevant_threshold=4.0,
    ).summary
    assert summary.equals(want)
    per_unit = pl.read_parquet(out / "per_unit" / "city=c" / "model=mf")
    assert per_unit.height == 300
    manifest = json.loads((out / "manifest.json").read_text())
    entry = manifest["results"]["city=c/model=mf"]
    assert entry["task"] == "recs"
    assert entry["config"]["relevant_threshold"] == 4.0


def test_sample_recs_job(tmp_path, capsys):
    job = REPO_ROOT / "jobs" / "recs_sample.toml"
    assert main(["run", str(job), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert "city=clayrs" in capsys.readouterr().out
    for city in ("clayrs", "trec_eval"):
        for model in ("mf", "popular"):
            assert (tmp_path / "out" / "summary" / f"city={city}" / f"model={model}").is_dir()
    summary = pl.read_parquet(tmp_path / "out" / "summary" / "city=clayrs" / "model=mf")
    want = evaluate_recs(SAMPLES / "ratings.parquet", SAMPLES / "mf.parquet", cutoffs=[5, 10])
    assert summary.equals(want.summary)
