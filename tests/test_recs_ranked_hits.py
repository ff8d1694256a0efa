"""A score-ordered list ranked by its rated items only (:func:`mobeval.kernels.recs.ranked_hits`)
against plain Python: the list sorted by score descending, then the item id as text descending
(trec_eval) or the id ascending, then the row; long runs of tied scores across the cutoff, ids
that are each other's prefixes ("9", "10", "100", "1000"), negative ids, ties left in file
order from ``limit`` on, lists that rise (sorted whole) and ids too long for text keys."""

import numpy as np
import pytest

from mobeval.kernels import recs as K
from mobeval.kernels.list_order import ID_ASC, TEXT_DESC
from tests.test_recs_list_order import _expected  # Python's sort of a list's rows

PREFIX_IDS = [1, 9, 10, 19, 90, 99, 100, 101, 109, 1000, 1001, 9999, 10000, -1, -10, -9, 0]
LONG_IDS = [10**17, 10**17 + 5, 123456789012345678, -(10**18)]


def _python_order(scores, ids, mode, limit):
    """The rows of a list whose scores never increase in its rank order: each run of equal
    scores that starts before ``limit`` sorted by Python (id as text descending, or id
    ascending, then row), the runs from ``limit`` on in file order."""
    order, start = [], 0
    while start < len(scores):
        end = start + 1
        while end < len(scores) and scores[end] == scores[start]:
            end += 1
        run = list(range(start, end))
        order += _expected(run, scores, ids, mode) if start < limit else run
        start = end
    return order


def _tied_list(rng, n, id_pool):
    """``n`` rows, scores never increasing in runs of 1 to 30 equal values, ids drawn from
    ``id_pool`` (repeats included)."""
    scores, level = [], 10.0
    while len(scores) < n:
        scores += [level] * int(rng.integers(1, 31))
        level -= float(rng.choice([0.25, 0.5, 3.0]))
    return np.array(scores[:n]), rng.choice(np.array(id_pool, dtype=np.int64), size=n)


UNRATED = -(10**18) - 7  # no pool's id: a rank whose item is not rated


def _ranked(ids, scores, rated, n_scan, mode, text, limit):
    """``ranked_hits`` on one list (its rows after one leading row of another list) with the
    truth ``rated``: (ok, items, scores) of its first ``n_scan`` ranks, the item of each rank
    read from the truth row it gives (``UNRATED`` where it gives none), its score the list's
    row there (a rank's score, as the order moves rows within tied runs only)."""
    n = len(ids)
    rec_items = np.concatenate([[7], ids]).astype(np.int64)
    rec_scores = np.concatenate([[99.0], scores])
    tru = np.array(sorted(rated), dtype=np.int64)
    table = np.full(1 << K.TRUTH_SLOTS_LOG2, K.EMPTY, dtype=np.int64)
    shift = np.uint64(64 - K.TRUTH_SLOTS_LOG2)
    K._fill_truth(tru, 0, tru.shape[0], table, shift)
    keys, found = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    hits = np.full(n, -5, dtype=np.int64)  # -5: a rank left unwritten
    ok = K.ranked_hits(rec_items, rec_scores, 1, n, n_scan, tru, 0, tru.shape[0], table, shift,
                       mode, text, limit, keys, found, hits)  # fmt: skip
    assert not ok or (hits[:n_scan] >= -1).all()
    items = np.array([tru[h] if h >= 0 else UNRATED for h in hits[:n_scan]], dtype=np.int64)
    return ok, items, np.asarray(scores, dtype=np.float64)[:n_scan]


@pytest.mark.parametrize("mode", [TEXT_DESC, ID_ASC])
@pytest.mark.parametrize("seed", range(6))
def test_each_rated_item_has_its_rank_and_every_other_rank_an_unrated_item(mode, seed):
    rng = np.random.default_rng(seed)
    pool = PREFIX_IDS + list(range(20, 40))
    for _ in range(60):
        n = int(rng.integers(1, 70))
        scores, ids = _tied_list(rng, n, pool)
        rated = set(rng.choice(np.array(pool), size=int(rng.integers(0, 12))).tolist())
        n_scan = int(rng.integers(0, n + 1))
        limit = int(rng.choice([n_scan, n_scan + 3, max(n_scan - 4, 0), 10**9]))
        ok, items, got_scores = _ranked(ids, scores, rated, n_scan, mode, mode == TEXT_DESC, limit)
        assert ok
        order = _python_order(scores.tolist(), ids.tolist(), mode, limit)
        for p in range(n_scan):
            row = order[p]
            if int(ids[row]) in rated:
                assert (items[p], got_scores[p]) == (ids[row], scores[row])
            else:
                assert int(items[p]) not in rated


def test_ids_that_are_prefixes_of_each_other_rank_as_text():
    # one run of ten tied rows across the cutoff 8: as text, descending, "99" > "9" > "5" >
    # "1000" > "100" > "10" > "1" > "-9" > "-10" > "-1"; only the rated ones are placed
    ids = np.array([10, 9, 100, 1, 99, 1000, -1, -10, -9, 5], dtype=np.int64)
    scores = np.full(10, 0.5)
    rated = {9, 100, 1, -10}
    ok, items, _ = _ranked(ids, scores, rated, 8, TEXT_DESC, True, 8)
    assert ok
    assert items[1] == 9 and items[4] == 100 and items[6] == 1  # -10's rank, 8, is cut
    assert not {int(items[p]) for p in (0, 2, 3, 5, 7)} & rated


def test_a_run_with_an_id_too_long_for_its_text_key_is_left_to_the_whole_sort():
    ids = np.array([5, 10**17, 7, 8], dtype=np.int64)
    scores = np.array([1.0, 0.5, 0.5, 0.25])
    assert not _ranked(ids, scores, {7}, 3, TEXT_DESC, True, 3)[0]
    assert _ranked(ids, scores, {8}, 4, TEXT_DESC, True, 4)[0]  # the long id's run: unrated
    assert _ranked(ids, scores, {7}, 3, ID_ASC, False, 3)[0]  # ids compared as integers


def _python_metrics(ranked, ratings_of, k, discounts):
    """tp@k, AP@k (over the relevant items), RR@k, DCG@k and nDCG@k of ``ranked`` items:
    relevant if rated >= 1, linear gain (negative gains 0), the ideal DCG over every truth item,
    summed in rank order (``discounts[p]``: rank ``p``'s)."""
    tp, ap, rr, dcg = 0, 0.0, 0.0, 0.0
    for p, item in enumerate(ranked[:k]):
        if item in ratings_of:
            if ratings_of[item] >= 1.0:
                tp += 1
                ap += tp / (p + 1)
                rr = rr or 1.0 / (p + 1)
            dcg += max(ratings_of[item], 0.0) / discounts[p]
    gains = sorted((max(r, 0.0) for r in ratings_of.values()), reverse=True)
    ideal = sum(g / discounts[i] for i, g in enumerate(gains[:k]))
    n_rel = sum(r >= 1.0 for r in ratings_of.values())
    return tp, ap / n_rel if n_rel else 0.0, rr, dcg, dcg / ideal if ideal > 0 else 0.0


@pytest.mark.parametrize("mode", [TEXT_DESC, ID_ASC])
@pytest.mark.parametrize("seed", range(3))
def test_the_ranked_lists_score_as_python_sorts_them(mode, seed):
    # long tied runs across the cutoffs, ranked by their rated items; one list in four rising
    # somewhere (sorted whole)
    rng = np.random.default_rng(seed)
    pool = PREFIX_IDS + list(range(20, 60))
    lists = [_tied_list(rng, int(rng.integers(0, 60)), pool) for _ in range(150)]
    for u, (scores, _) in enumerate(lists):
        if u % 4 == 3 and len(scores) > 2:
            scores[int(rng.integers(1, len(scores)))] += 20.0
    _check_against_python(rng, lists, [1, 5, 10, 25], mode)


@pytest.mark.parametrize("mode", [TEXT_DESC, ID_ASC])
@pytest.mark.parametrize("cutoffs", [[1], [1, 3], [2, 10], [1, 5, 10, 25], [60]])
def test_shuffled_lists_score_as_python_sorts_them(mode, cutoffs):
    """Lists whose rows come in no order, short and long (up to 250 rows, so that a list of four
    times the largest cutoff or more is cut into groups for its head), with ties: only their
    first ranks are put in order, and they score as the whole sort's."""
    rng = np.random.default_rng(cutoffs[-1])
    pool = PREFIX_IDS + LONG_IDS + list(range(20, 400))  # long ids: compared as text, no key
    lists = []
    for _ in range(120):
        scores, ids = _tied_list(rng, int(rng.integers(0, 250)), pool)
        shuffled = rng.permutation(len(scores))
        lists.append((scores[shuffled], ids[shuffled]))
    _check_against_python(rng, lists, cutoffs, mode)


def _check_against_python(rng, lists, cutoffs, mode):
    """The kernel's tp, AP, RR, DCG and nDCG at each cutoff of each list (``(scores, ids)``), up
    to 8 of its items rated (and two items no list holds), against plain Python's sort."""
    offsets = np.cumsum([0] + [len(s) for s, _ in lists]).astype(np.int64)
    scores = np.concatenate([s for s, _ in lists])
    ids = np.concatenate([i for _, i in lists]).astype(np.int64)
    tru_items, tru_ratings, tru_off = [], [], [0]
    for u in range(len(lists)):
        listed = sorted(set(ids[offsets[u] : offsets[u + 1]].tolist()))
        items = sorted(set(rng.choice(listed + [500, 501], size=min(len(listed), 8)).tolist()))
        tru_items += items
        tru_ratings += rng.integers(-1, 5, size=len(items)).astype(float).tolist()
        tru_off.append(len(tru_items))
    truth = (np.array(tru_off), np.array(tru_items, dtype=np.int64), np.array(tru_ratings))
    largest = cutoffs[-1]
    cutoffs = np.array(cutoffs, dtype=np.int64)
    discounts = np.log2(np.arange(2, 2 + max(len(s) for s, _ in lists) + 1, dtype=np.float64))
    rules = K.StatsRules(1.0, False, K.GAIN_LINEAR, -np.inf, True, False, K.DUP_EACH, True, True,
                         K.AP_RELEVANT, False, False, mode, True, largest).checked()  # fmt: skip
    cut = K.recs_user_stats(offsets, ids, scores, *truth, cutoffs, discounts, rules)[0]
    for u in range(len(lists)):
        lo, hi = offsets[u], offsets[u + 1]
        order = _expected(list(range(hi - lo)), scores[lo:hi].tolist(), ids[lo:hi].tolist(), mode)
        ranked = [int(ids[lo + row]) for row in order]
        t0, t1 = truth[0][u], truth[0][u + 1]
        ratings_of = dict(zip(truth[1][t0:t1].tolist(), truth[2][t0:t1].tolist(), strict=True))
        rises = (np.diff(scores[lo:hi]) > 0).any()
        n_scan, text = min(hi - lo, largest), mode == TEXT_DESC
        long = text and bool(set(LONG_IDS) & set(ranked))  # ranked_hits leaves it to the sort
        assert (
            rises
            or long
            or _ranked(ids[lo:hi], scores[lo:hi], set(ratings_of), n_scan, mode, text, largest)[0]
        )
        for c, k in enumerate(cutoffs.tolist()):
            got = [cut[u, s, c] for s in (K.TP, K.AP, K.RR, K.DCG, K.NDCG)]
            assert got == list(_python_metrics(ranked, ratings_of, k, discounts.tolist())), (u, k)
