"""Recs reads its ratings once: their order is checked as they stream, not by a first pass over
their key column, and an error raised before the whole ratings were read waits for their order
(a chunk paired with part of a mis-sorted ratings file may fail where the sorted file would not).
Each case gives what the first pass gives (the engine's ``stream_pairs`` forced to it)."""

from __future__ import annotations

import polars as pl
import pytest

import mobeval.engines.local as local
from mobeval.api import evaluate_recs
from mobeval.errors import InputError
from mobeval.io.sources import Source

USERS = 40


def lists() -> pl.DataFrame:
    """Ten items a user, users 0 .. USERS - 1 in order, scores falling."""
    return pl.DataFrame(
        {
            "user_id": [u for u in range(USERS) for _ in range(10)],
            "item_id": [(u * 7 + i) % 50 for u in range(USERS) for i in range(10)],
            "score": [10.0 - i for _ in range(USERS) for i in range(10)],
        }
    )


def ratings(users) -> pl.DataFrame:
    """Three ratings a user of ``users``, in that order."""
    return pl.DataFrame(
        {
            "user_id": [u for u in users for _ in range(3)],
            "item_id": [(u * 7 + 2 * j) % 50 for u in users for j in range(3)],
            "rating": [1.0 + j for _ in users for j in range(3)],
        }
    )


def outcome(tmp_path, name, truth, recs, convention):
    """The evaluation's values, or its error's message (its files' folder left out)."""
    folder = tmp_path / name
    folder.mkdir(parents=True)
    truth.write_parquet(folder / "ratings.parquet")
    recs.write_parquet(folder / "recs.parquet")
    try:
        result = evaluate_recs(
            folder / "ratings.parquet",
            folder / "recs.parquet",
            metrics=["precision@5", "recall@5", "ndcg@5"],
            convention=convention,
            chunk_rows=50,
        )
    except InputError as error:
        return str(error).replace(str(folder), "")
    return result.summary.to_dicts()


def first_pass(monkeypatch):
    """The engine as it was: the truth's order read first."""
    stream = local.stream_pairs
    monkeypatch.setattr(
        local, "stream_pairs", lambda *a, **k: stream(*a, **{**k, "truth_order_first": True})
    )


def sorted_then_not(users):
    """Sorted for most of the file, then a user that belongs near its start."""
    return [*users[:5], *users[6:], users[5]]


CASES = {
    "sorted": lambda: ratings(range(USERS)),
    "unsorted at the end": lambda: ratings(sorted_then_not(list(range(USERS)))),
    "users absent from the lists": lambda: ratings(sorted_then_not(list(range(-3, USERS + 3)))),
    "users without ratings": lambda: ratings(sorted_then_not(list(range(0, USERS, 2)))),
    "a duplicate rating, then disorder": lambda: pl.concat(
        [ratings([0, 1, 1]), ratings(sorted_then_not(list(range(2, USERS))))]
    ),
    "disorder, then a duplicate rating": lambda: ratings(
        [*sorted_then_not(list(range(USERS))), USERS - 1]
    ),
}


def repeated_items(users) -> pl.DataFrame:
    """:func:`lists` with the second item of each of ``users`` repeating the first."""
    repeat = pl.col("user_id").is_in(users) & (pl.int_range(pl.len()) % 10 == 1)
    return lists().with_columns(
        pl.when(repeat).then(pl.col("item_id").shift(1)).otherwise("item_id").alias("item_id")
    )


def test_a_list_error_reported_as_the_first_pass_reports_it(tmp_path, monkeypatch):
    """Two lists repeat an item; the ratings are sorted but for their last user: the hash
    buckets meet user 35 first, the sorted stream user 10."""
    truth = ratings(sorted_then_not(list(range(USERS))))
    now = outcome(tmp_path / "now", "x", truth, repeated_items([10, 35]), "trec_eval")
    first_pass(monkeypatch)
    assert now == outcome(tmp_path / "before", "x", truth, repeated_items([10, 35]), "trec_eval")


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("convention", ["trec_eval", "clayrs"])
def test_the_same_outcome_as_the_first_pass(tmp_path, monkeypatch, case, convention):
    now = outcome(tmp_path / "now", "x", CASES[case](), lists(), convention)
    first_pass(monkeypatch)
    assert now == outcome(tmp_path / "before", "x", CASES[case](), lists(), convention)


def test_a_null_user_in_the_ratings_is_reported_before_a_bad_score_in_the_lists(tmp_path):
    truth = ratings(range(USERS)).with_columns(
        pl.when(pl.int_range(pl.len()) == 3 * USERS - 1)
        .then(None)
        .otherwise("user_id")
        .alias("user_id")
    )
    recs = lists().with_columns(
        pl.when(pl.int_range(pl.len()) == 0).then(None).otherwise("score").alias("score")
    )
    message = outcome(tmp_path, "null", truth, recs, "trec_eval")
    assert "null key value" in message and "row 119" in message


def test_the_ratings_key_column_is_not_read_first(tmp_path, monkeypatch):
    reads = []
    iter_batches = Source.iter_batches

    def counted(self, columns, batch_rows):
        reads.append((self.label, list(columns)))
        return iter_batches(self, columns, batch_rows)

    monkeypatch.setattr(Source, "iter_batches", counted)
    outcome(tmp_path, "reads", ratings(range(USERS)), lists(), "trec_eval")
    assert [columns for label, columns in reads if label.endswith("ratings.parquet")] == [
        ["user_id", "item_id", "rating"]
    ]
