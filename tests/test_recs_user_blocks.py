"""The recs kernels' one-pass preparation against plain Python: the users' blocks of a chunk's two
user-sorted sides (:mod:`mobeval.kernels.user_blocks`), and each list put in its score order by the
metric kernel itself (``StatsRules.order_mode``) against the same kernel fed lists that Python's
sort ordered."""

from collections import Counter

import numpy as np
import pytest

from mobeval.kernels import recs as K
from mobeval.kernels.list_order import ID_ASC, TEXT_DESC
from mobeval.kernels.user_blocks import truth_order, user_blocks
from tests.test_recs_list_order import _expected  # Python's sort of a list's rows


def _sorted_users(rng, n, high):
    return np.sort(rng.integers(-high, high, size=n))


@pytest.mark.parametrize("seed", range(6))
def test_user_blocks_is_the_union_with_counts(seed):
    rng = np.random.default_rng(seed)
    rec = _sorted_users(rng, int(rng.integers(0, 60)), 20)
    tru = _sorted_users(rng, int(rng.integers(0, 60)), 20)
    users, rec_counts, tru_counts = user_blocks(rec, tru)
    expected = sorted(set(rec.tolist()) | set(tru.tolist()))
    assert users.tolist() == expected
    assert rec_counts.tolist() == [Counter(rec.tolist())[u] for u in expected]
    assert tru_counts.tolist() == [Counter(tru.tolist())[u] for u in expected]


def _runs_as_long(rng, n_runs, length, odd=None):
    """``n_runs`` sorted runs of ``length`` equal users each; ``odd``: the run one row longer
    (its first row taken from the run before or after it, as a list cut short)."""
    users = np.sort(rng.choice(np.arange(-500, 500), size=n_runs, replace=False))
    column = np.repeat(users, length)
    if odd is not None:
        column[min(odd * length + length, column.size - 1)] = users[odd]
    return np.sort(column)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("odd", [None, 0, 1, "last"])
def test_user_blocks_with_runs_all_as_long_or_all_but_one(seed, odd):
    """Lists all as long (the usual top-k lists) are read at their starts alone: a column whose
    runs are all as long but one (longer or shorter, first, second or last) is found out."""
    rng = np.random.default_rng(seed)
    n_runs, length = int(rng.integers(2, 40)), int(rng.integers(1, 7))
    odd_run = n_runs - 2 if odd == "last" else odd
    rec = _runs_as_long(rng, n_runs, length, odd_run)
    tru = _runs_as_long(rng, int(rng.integers(1, 40)), int(rng.integers(1, 4)), None)
    users, rec_counts, tru_counts = user_blocks(rec, tru)
    expected = sorted(set(rec.tolist()) | set(tru.tolist()))
    assert users.tolist() == expected
    assert rec_counts.tolist() == [Counter(rec.tolist())[u] for u in expected]
    assert tru_counts.tolist() == [Counter(tru.tolist())[u] for u in expected]


def _python_truth_order(users, items):
    pairs = list(zip(users, items, strict=True))
    unsorted = next((r for r in range(1, len(pairs)) if pairs[r] < pairs[r - 1]), -1)
    repeated = next((r for r in range(1, len(pairs)) if pairs[r] == pairs[r - 1]), -1)
    return unsorted, repeated


@pytest.mark.parametrize("seed", range(8))
def test_truth_order_finds_the_first_row_out_of_order_and_the_first_repeat(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 40))
    users, items = rng.integers(0, 4, size=n), rng.integers(0, 5, size=n)
    if seed % 2:  # in order, maybe with repeats
        order = np.lexsort((items, users))
        users, items = users[order], items[order]
    unsorted, repeated = truth_order(users, items)
    expected = _python_truth_order(users.tolist(), items.tolist())
    assert unsorted == expected[0]
    if unsorted < 0:
        assert repeated == expected[1]


@pytest.mark.parametrize("mode", [TEXT_DESC, ID_ASC])
@pytest.mark.parametrize("whole", [True, False])
def test_the_kernel_orders_each_list_as_python_sorts_it(mode, whole):
    rng = np.random.default_rng(7)
    lengths = [0, 1, 3, 12, 40, 33, 100]
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    n = int(offsets[-1])
    ids = rng.choice([1, 9, 10, 99, 100, 123, 1230, 5, 50, 7, 70, 700, 8, 81], size=n)
    scores = np.floor(rng.random(n) * 4) / 4
    for u in range(len(lengths)):  # every other list arrives in score order, its ties shuffled
        if u % 2:
            block = slice(offsets[u], offsets[u + 1])
            scores[block] = -np.sort(-scores[block])
    ordered = np.empty(n, dtype=np.int64)
    for u in range(len(lengths)):
        block = list(range(offsets[u], offsets[u + 1]))
        ordered[offsets[u] : offsets[u + 1]] = _expected(block, scores, ids, mode)
    tru_items = np.array([1, 9, 10, 99, 100, 123], dtype=np.int64)
    tru_off = np.arange(0, len(lengths) * 6 + 1, 6, dtype=np.int64)
    tru = (tru_off, np.tile(tru_items, len(lengths)), np.tile([1.0, 2, 0, 3, 1, 4], len(lengths)))
    cutoffs = np.array([1, 5, 10] if not whole else [1, 5, 10, K.FULL], dtype=np.int64)
    rules = K.StatsRules(1.0, False, K.GAIN_LINEAR, -np.inf, True, False, K.DUP_EACH, False,
                         True, K.AP_RELEVANT, True, whole)  # fmt: skip
    discounts = np.log2(np.arange(2, 102, dtype=np.float64))
    given = K.recs_user_stats(
        offsets, ids[ordered], scores[ordered], *tru, cutoffs, discounts, rules.checked()
    )
    fused_rules = rules._replace(order_mode=mode, ids_text=True, order_limit=-1 if whole else 10)
    fused = K.recs_user_stats(offsets, ids, scores, *tru, cutoffs, discounts, fused_rules.checked())
    for a, b in zip(given, fused, strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_repeated_item_is_found_where_the_list_gives_it_beyond_the_cutoff():
    # the repeat (item 7) lies beyond the largest cutoff; its
    # position is the list's as given (in trec_eval's order, 7 7 5, it would be 4)
    offsets = np.array([0, 6], dtype=np.int64)
    ids = np.array([1, 2, 3, 7, 5, 7], dtype=np.int64)
    scores = np.array([0.9, 0.8, 0.7, 0.4, 0.4, 0.4])
    tru = (np.array([0, 1], dtype=np.int64), np.array([1], dtype=np.int64), np.array([1.0]))
    rules = K.StatsRules(1.0, False, K.GAIN_LINEAR, -np.inf, True, False, K.DUP_EACH, True,
                         True, K.AP_RELEVANT, True, False, TEXT_DESC, True, 4)  # fmt: skip
    discounts = np.log2(np.arange(2, 8, dtype=np.float64))
    dup_pos = K.recs_user_stats(offsets, ids, scores, *tru, np.array([4]), discounts, rules)[2]
    assert dup_pos.tolist() == [5]
