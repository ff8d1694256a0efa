"""``duplicates="drop"`` on a chunk whose users' blocks include users with no list (rated only):
every list reduced as a dict filled row by row holds it, checked against the same lists reduced
by a plain Python dict, for every preset whose order reads the reduced lists."""

from __future__ import annotations

import random

import polars as pl
import pytest

from mobeval.tasks.recs import score_recs_frame

METRICS = ["precision@3", "recall@5", "ndcg@4", "mrr"]


def _lists(seed: int):
    """Users 0..39: even users rated only (no list), odd users a list of 1-12 rows drawn from 8
    items (so most lists repeat an item, some do not), scores from 4 levels (ties)."""
    rng = random.Random(seed)
    recs, ratings = [], []
    for user in range(40):
        for item in rng.sample(range(8), rng.randint(1, 5)):
            ratings.append((user, item, float(rng.randint(0, 3))))
        if user % 2:
            for _ in range(rng.randint(1, 12)):
                recs.append((user, rng.randrange(8), rng.randint(0, 3) / 4))
    return recs, ratings


def _as_dicts(recs):
    """Each user's list as ``d[item] = score`` filled row by row: the item's first place, its
    last score."""
    lists: dict[int, dict[int, float]] = {}
    for user, item, score in recs:
        lists.setdefault(user, {})[item] = score
    return [(u, i, s) for u, d in lists.items() for i, s in d.items()]


def _frame(rows, names):
    return pl.DataFrame(rows, schema=names, orient="row")


@pytest.mark.parametrize("convention", ["trec_eval", "ranx", "ir_measures"])
@pytest.mark.parametrize("seed", range(6))
def test_drop_equals_the_lists_reduced_by_a_dict(convention, seed):
    recs, ratings = _lists(seed)
    truth = _frame(ratings, ["user_id", "item_id", "rating"])
    names = ["user_id", "item_id", "score"]
    dropped = score_recs_frame(
        _frame(recs, names), truth, metrics=METRICS, convention=convention, duplicates="drop"
    )
    reduced = score_recs_frame(
        _frame(_as_dicts(recs), names),
        truth,
        metrics=METRICS,
        convention=convention,
        duplicates="drop",
    )
    assert dropped.per_user.equals(reduced.per_user)
    assert dropped.per_user.height == reduced.per_user.height > 0
