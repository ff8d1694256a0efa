"""The recs kernels' fast paths against plain Python: a score-ordered list's first rows copied to
their places (ties across the cut-off, lists that stop being sorted after it, ids of 17 or more
digits, negative ids and scores, a NaN score), the truth looked up behind its 64-bit filter, the
ideal DCG's gains put in order by counted places, and the users' runs found at the last run's
length (:mod:`mobeval.kernels.recs`, :mod:`mobeval.kernels.list_order`,
:mod:`mobeval.kernels.user_blocks`)."""

import math
from collections import Counter

import numpy as np
import pytest

from mobeval.kernels import recs as K
from mobeval.kernels.list_order import ID_ASC, TEXT_DESC
from mobeval.kernels.user_blocks import user_blocks
from tests.test_recs_list_order import _expected  # Python's sort of a list's rows

LONG_IDS = [10**17, 10**17 + 5, 123456789012345678, -(10**18), 99999999999999999]
SHORT_IDS = [1, 9, 10, 99, 100, 12, 120, -1, -10, -9, 5, 50]


def _python_stats(ids, ratings_of, k):
    """(tp@k, DCG@k, nDCG@k) of a list in rank order: relevant if rated >= 1, linear gain with
    negative gains counted 0, the ideal DCG over every truth item, summed in rank order."""
    discounts = np.log2(np.arange(2, k + 2, dtype=np.float64)).tolist()
    tp, dcg = 0, 0.0
    for p, item in enumerate(ids[:k]):
        if item in ratings_of:
            rating = ratings_of[item]
            tp += rating >= 1.0
            dcg += max(rating, 0.0) / discounts[p]
    ideal = 0.0
    for i, g in enumerate(sorted((max(r, 0.0) for r in ratings_of.values()), reverse=True)[:k]):
        ideal += g / discounts[i]
    return tp, dcg, dcg / ideal if ideal > 0 else 0.0


def _lists(rng, n_users, id_pool):
    """Lists of 0 to 40 rows: scores in steps of 1/4 around 0 (ties, negative scores), most of
    them never increasing, some that stop being sorted after the cut-off (row 12 on)."""
    lengths = rng.choice([0, 1, 3, 9, 10, 11, 12, 14, 16, 17, 25, 40], size=n_users)
    offsets = np.zeros(n_users + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    ids = rng.choice(np.array(id_pool, dtype=np.int64), size=int(offsets[-1]))
    scores = np.floor(rng.normal(size=int(offsets[-1])) * 2) / 4
    for u in range(n_users):
        block = slice(offsets[u], offsets[u + 1])
        kind = u % 3
        if kind:
            scores[block] = -np.sort(-scores[block])
        if kind == 2 and lengths[u] > 12:
            scores[offsets[u] + 12] = scores[offsets[u]] + 1.0  # increases after the cut-off
    return offsets, ids, scores


def _truth(rng, offsets, ids):
    """Each user's truth, sorted by item: some of its list's items and some others, rated -1 to
    4; a few users rate 80 items (the filter of their truth has every bit set)."""
    tru_items, tru_ratings, tru_off = [], [], [0]
    for u in range(offsets.shape[0] - 1):
        listed = ids[offsets[u] : offsets[u + 1]].tolist()
        count = 80 if u % 7 == 3 else 6
        pool = listed[: count // 2] + rng.integers(-50, 200, size=count).tolist()
        items = sorted(set(pool))[:count]
        tru_items += items
        tru_ratings += rng.integers(-1, 5, size=len(items)).astype(float).tolist()
        tru_off.append(len(tru_items))
    return (
        np.array(tru_off, dtype=np.int64),
        np.array(tru_items, dtype=np.int64),
        np.array(tru_ratings, dtype=np.float64),
    )


def _rules(mode, k):
    return K.StatsRules(1.0, False, K.GAIN_LINEAR, -np.inf, True, False, K.DUP_EACH, False, True,
                        K.AP_RELEVANT, False, False, mode, True, k).checked()  # fmt: skip


@pytest.mark.parametrize("mode", [TEXT_DESC, ID_ASC])
@pytest.mark.parametrize("ids", ["short", "long"])
@pytest.mark.parametrize("seed", range(3))
def test_score_ordered_lists_score_as_python_orders_them(mode, ids, seed):
    rng = np.random.default_rng(seed)
    pool = SHORT_IDS + list(range(20, 60)) + (LONG_IDS if ids == "long" else [])
    offsets, rec_ids, scores = _lists(rng, 120, pool)
    truth = _truth(rng, offsets, rec_ids)
    k = 10
    discounts = np.log2(np.arange(2, 102, dtype=np.float64))
    cut = K.recs_user_stats(
        offsets, rec_ids, scores, *truth, np.array([k]), discounts, _rules(mode, k)
    )[0]
    for u in range(offsets.shape[0] - 1):
        lo, hi = offsets[u], offsets[u + 1]
        rows = list(range(hi - lo))
        order = _expected(rows, scores[lo:hi].tolist(), rec_ids[lo:hi].tolist(), mode)
        ranked = [int(rec_ids[lo + p]) for p in order]
        t0, t1 = truth[0][u], truth[0][u + 1]
        ratings_of = dict(zip(truth[1][t0:t1].tolist(), truth[2][t0:t1].tolist(), strict=True))
        tp, dcg, ndcg = _python_stats(ranked, ratings_of, k)
        assert cut[u, K.TP, 0] == tp
        assert cut[u, K.DCG, 0] == dcg  # the same sums in the same order: the same bits
        assert cut[u, K.NDCG, 0] == ndcg


def test_a_nan_score_stays_in_its_row_and_splits_the_tie_around_it():
    # trec_eval's order of a list whose scores never increase (NaN never compares greater):
    # each run of equal scores ordered by id as text, descending; the NaN row is a run alone
    offsets = np.array([0, 6], dtype=np.int64)
    ids = np.array([1, 2, 30, 4, 50, 6], dtype=np.int64)
    scores = np.array([0.5, 0.5, np.nan, 0.5, 0.5, 0.1])
    ranked = [2, 1, 30, 50, 4, 6]  # "2" > "1"; then NaN's row; then "50" > "4"
    truth = (np.array([0, 2], dtype=np.int64), np.array([2, 50], dtype=np.int64), np.ones(2))
    discounts = np.log2(np.arange(2, 8, dtype=np.float64))
    cut = K.recs_user_stats(
        offsets, ids, scores, *truth, np.array([5]), discounts, _rules(TEXT_DESC, 5)
    )[0]
    tp, dcg, ndcg = _python_stats(ranked, {2: 1.0, 50: 1.0}, 5)
    assert (cut[0, K.TP, 0], cut[0, K.DCG, 0], cut[0, K.NDCG, 0]) == (tp, dcg, ndcg)
    assert cut[0, K.RR, 0] == 1.0 and tp == 2


@pytest.mark.parametrize("n_truth", [1, 10, 32, 33, 100])
def test_the_ideal_dcg_takes_the_largest_gains_best_first(n_truth):
    rng = np.random.default_rng(n_truth)
    items = np.arange(n_truth, dtype=np.int64)
    ratings = rng.integers(-2, 6, size=n_truth).astype(float) + rng.choice([0, 0.5], n_truth)
    truth = (np.array([0, n_truth], dtype=np.int64), items, ratings)
    listed = rng.permutation(200)[:30].astype(np.int64)
    rules = _rules(K.AS_GIVEN, -1)
    discounts = np.log2(np.arange(2, 202, dtype=np.float64))
    cutoffs = np.array([5, 20], dtype=np.int64)
    cut = K.recs_user_stats(
        np.array([0, 30], dtype=np.int64), listed, np.zeros(30), *truth, cutoffs, discounts, rules
    )[0]
    ratings_of = dict(zip(items.tolist(), ratings.tolist(), strict=True))
    for c, k in enumerate(cutoffs.tolist()):
        tp, dcg, ndcg = _python_stats(listed.tolist(), ratings_of, k)
        assert (cut[0, K.TP, c], cut[0, K.DCG, c]) == (tp, dcg)
        assert cut[0, K.NDCG, c] == ndcg or (math.isnan(cut[0, K.NDCG, c]) and ndcg == 0.0)


def test_user_runs_of_changing_lengths_are_counted_whole():
    # runs as long as the last one, then longer, shorter, cut by the column's end, and users
    # on one side only
    runs = [(0, 100), (1, 100), (2, 100), (3, 101), (4, 99), (5, 1), (6, 1), (8, 17), (9, 100)]
    rec = np.array([u for u, n in runs for _ in range(n)], dtype=np.int64)
    tru = np.array([0] * 10 + [2] * 10 + [7] * 3 + [8] * 10 + [9] * 11, dtype=np.int64)
    users, rec_counts, tru_counts = user_blocks(rec, tru)
    expected = sorted(set(rec.tolist()) | set(tru.tolist()))
    assert users.tolist() == expected
    assert rec_counts.tolist() == [Counter(rec.tolist())[u] for u in expected]
    assert tru_counts.tolist() == [Counter(tru.tolist())[u] for u in expected]
