"""The population metrics read each list's first positions alone, up to their largest cutoff
(:func:`mobeval.tasks.recs_lists.ordered` with a ``limit``): those positions against Python's
sort of the whole list, in every list order, and the metrics of lists whose rows come in no
order against plain-Python counts of their first ``k`` items."""

from __future__ import annotations

from collections import Counter

import numpy as np
import polars as pl
import pytest

from mobeval.api import evaluate_recs
from mobeval.kernels.list_order import ID_ASC, TEXT_DESC
from mobeval.tasks import recs_lists as R
from tests.test_recs_engine import shuffle_users
from tests.test_recs_list_order import _expected

ORDERS = {"score_id_str_desc": TEXT_DESC, "score_id_asc": ID_ASC}


def _shuffled_lists(seed: int, users: int = 40) -> pl.DataFrame:
    """Lists of 0-60 rows whose scores tie and rise, ids whose text order is not their order;
    each list's rows together, users in no order."""
    rng = np.random.default_rng(seed)
    frames = []
    for user in rng.permutation(users):
        n = int(rng.integers(1, 61))
        items = rng.choice(np.array([*range(1, 150), 1000, 10**12]), n, replace=False)
        frames.append(
            pl.DataFrame(
                {
                    "user_id": np.full(n, user, dtype=np.int64),
                    "item_id": items.astype(np.int64),
                    "score": np.floor(rng.random(n) * 5) / 5,
                    "rank": rng.permutation(n).astype(np.int64) + 1,
                }
            )
        )
    return pl.concat(frames)


def _python_order(recs: pl.DataFrame, order: str) -> dict[int, list[int]]:
    """Each user's row numbers in ``order``, by Python's sort of the whole list."""
    users: dict[int, list[int]] = {}
    for row, user in enumerate(recs["user_id"].to_list()):
        users.setdefault(user, []).append(row)
    scores, ids = recs["score"].to_numpy(), recs["item_id"].to_numpy()
    if order in ORDERS:
        return {u: _expected(rows, scores, ids, ORDERS[order]) for u, rows in users.items()}
    ranks = recs["rank"].to_list()
    return {u: sorted(rows, key=lambda r: ranks[r]) for u, rows in users.items()}


@pytest.mark.parametrize("order", [*ORDERS, "rank"])
@pytest.mark.parametrize("limit", [0, 1, 3, 10, 60])
@pytest.mark.parametrize("by_score", [False, True])
def test_the_first_positions_of_each_list(order, limit, by_score):
    """``by_score``: each list's scores never increase (as a recommender writes them), its ties
    in no order of their ids, runs of them across the limit."""
    recs = _shuffled_lists(limit)
    if by_score:
        recs = recs.sort(["user_id", "score"], descending=[False, True], maintain_order=True)
    heads = R.ordered(recs.with_row_index("row"), order, limit)
    want = _python_order(recs, order)
    assert heads["user_id"].to_list() == sorted(u for u, rows in want.items() for _ in rows[:limit])
    for (user,), rows in heads.group_by("user_id", maintain_order=True):
        assert rows["row"].to_list() == want[user][:limit], user


@pytest.mark.parametrize("limit", [1, 3, 10, 60])
def test_ranx_first_positions_are_those_of_its_whole_order(limit):
    """ranx's order (Numba's quicksort of each list: its ties' order is the sort's own) put to
    the first ``limit`` positions: those of the whole order."""
    recs = _shuffled_lists(limit).with_row_index("row")
    whole = R.ordered(recs, "ranx")
    heads = R.ordered(recs, "ranx", limit)
    want = whole.with_columns(pl.int_range(pl.len()).over("user_id").alias("at"))
    assert heads["row"].to_list() == want.filter(pl.col("at") < limit)["row"].to_list()


def test_metrics_of_lists_in_no_order_against_plain_counts(tmp_path):
    """trec_eval's order (score descending, ties by the id as text descending): coverage and
    avg_popularity at two cutoffs of lists whose rows come shuffled, against Python's counts
    of each list's first k items, and the same bits as the lists given in that order."""
    recs = _shuffled_lists(3, users=60).drop("rank")
    want = _python_order(recs, "score_id_str_desc")
    in_order = recs[[r for u in sorted(want) for r in want[u]]]
    catalogue = pl.DataFrame({"item_id": np.array([*range(1, 150), 1000, 10**12])})
    train = pl.DataFrame({"item_id": np.random.default_rng(0).choice(catalogue["item_id"], 900)})
    catalogue.write_parquet(tmp_path / "catalogue.parquet")
    train.write_parquet(tmp_path / "train.parquet")
    ratings = recs.group_by("user_id").first().select("user_id", "item_id", rating=pl.lit(1.0))
    metrics = ["coverage@3", "coverage@10", "avg_popularity@3", "avg_popularity@10"]
    results = [
        evaluate_recs(
            ratings,
            lists,
            metrics=metrics,
            k=None,
            convention="trec_eval",
            population_convention="recbole",
            catalogue=str(tmp_path / "catalogue.parquet"),
            train=str(tmp_path / "train.parquet"),
            chunk_rows=chunk_rows,
        )
        for lists, chunk_rows in ((recs, 10**6), (shuffle_users(recs, 5), 97), (in_order, 10**6))
    ]
    items = recs["item_id"].to_list()
    popularity = Counter(train["item_id"].to_list())
    for k in (3, 10):
        heads = [[items[r] for r in rows[:k]] for rows in want.values()]
        distinct = {i for head in heads for i in head}
        arp = sum(sum(popularity[i] for i in h) / len(h) for h in heads) / len(heads)
        for result in results:
            assert result.value(f"coverage@{k}") == len(distinct) / (len(catalogue) + 1)
            assert result.value(f"avg_popularity@{k}") == pytest.approx(arp, rel=1e-12)
    assert results[0].summary.equals(results[2].summary)
    assert results[1].summary.equals(results[2].summary)
