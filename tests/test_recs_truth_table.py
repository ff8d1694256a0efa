"""The metric kernel's lookups of a user's truth (:mod:`mobeval.kernels.recs`): its table of
rows by item (``_fill_truth``, ``_lookup``, ``_clear_truth``) against a plain Python dict, with
items that share a slot, items that land in a used slot without being rated, negative and
extreme ids; and the kernel's hits on lists whose truths share slots against a plain count."""

import numpy as np
import pytest

from mobeval.kernels import recs as K

BITS = K.TRUTH_SLOTS_LOG2
SHIFT = np.uint64(64 - BITS)
EXTREMES = [np.iinfo(np.int64).min, np.iinfo(np.int64).max, -1, 0, 1]


def _slots(ids):
    """Each id's slot, as the kernel's hash defines it: the top bits of id * 2^64 / phi."""
    golden = 0x9E3779B97F4A7C15
    return [((int(x) % 2**64) * golden % 2**64) >> (64 - BITS) for x in ids]


def _sharing(n_groups, per_group, start=0):
    """``n_groups`` groups of ``per_group`` ids from ``start`` on, a group's ids in one slot."""
    by_slot = {}
    ids = range(start, start + 200_000)
    for x, slot in zip(ids, _slots(ids), strict=True):
        by_slot.setdefault(slot, []).append(x)
    groups = [ids[:per_group] for ids in by_slot.values() if len(ids) >= per_group]
    return groups[:n_groups]


@pytest.mark.parametrize("seed", range(5))
def test_each_lookup_finds_the_row_of_its_item_or_none(seed):
    rng = np.random.default_rng(seed)
    groups = _sharing(40, 3, start=int(rng.integers(-(10**12), 10**12)))
    table = np.full(1 << BITS, K.EMPTY, dtype=np.int64)
    shared = 0
    for _ in range(30):
        # a truth of ids that share slots (two or three of a group), extremes and random ids
        picked = [
            x for g in rng.permutation(len(groups))[:4] for x in groups[g][: rng.integers(1, 4)]
        ]
        picked += list(rng.choice(EXTREMES, size=int(rng.integers(0, 3)), replace=False))
        picked += list(rng.integers(-(2**63), 2**63 - 1, size=int(rng.integers(0, 5))))
        truth = np.array(sorted(set(int(x) for x in picked)), dtype=np.int64)
        lead = int(rng.integers(0, 3))  # rows of another user before this one's
        items = np.concatenate([np.full(lead, 5, dtype=np.int64), truth])
        K._fill_truth(items, lead, items.shape[0], table, SHIFT)
        shared += int((table == K.SHARED).sum())
        expected = {int(x): lead + j for j, x in enumerate(truth)}
        # the truth, the rest of each group (same slot, not rated), extremes, random ids
        asked = [x for g in groups for x in g] + EXTREMES + list(truth)
        asked += list(rng.integers(-(2**63), 2**63 - 1, size=50))
        for x in asked:
            got = K._lookup(items, lead, items.shape[0], table, SHIFT, np.int64(x))
            assert got == expected.get(int(x), -1), x
        K._clear_truth(items, lead, items.shape[0], table, SHIFT)
        assert (table == K.EMPTY).all()
    assert shared > 0


def test_lists_whose_truth_items_share_slots_count_their_hits():
    rng = np.random.default_rng(7)
    groups = _sharing(60, 3)
    rec_off, rec_items, tru_off, tru_items = [0], [], [0], []
    for u in range(60):
        truth = sorted(set(groups[u] + groups[(u + 1) % 60][:1]))
        listed = list(rng.permutation(groups[u][:2] + groups[(u + 2) % 60] + groups[(u + 1) % 60]))
        rec_items += listed
        tru_items += truth
        rec_off.append(len(rec_items))
        tru_off.append(len(tru_items))
    cutoffs = np.array([1, 3, 5, K.FULL], dtype=np.int64)
    rules = K.StatsRules(1.0, False, K.GAIN_BINARY, -np.inf, True, False, K.DUP_EACH, True,
                         True, K.AP_RELEVANT, False).checked()  # fmt: skip
    cut, usr, dup, _ = K.recs_user_stats(
        np.array(rec_off), np.array(rec_items), np.zeros(len(rec_items)), np.array(tru_off),
        np.array(tru_items), np.ones(len(tru_items)), cutoffs, np.log2(np.arange(2, 12)), rules,
    )  # fmt: skip
    assert (dup == -1).all()
    table = np.full(1 << BITS, K.EMPTY, dtype=np.int64)
    K._fill_truth(np.array(tru_items), 0, tru_off[1], table, SHIFT)
    assert (table == K.SHARED).any()  # the path under test: a slot two rated items share
    for u in range(60):
        listed = rec_items[rec_off[u] : rec_off[u + 1]]
        truth = set(tru_items[tru_off[u] : tru_off[u + 1]])
        for c, k in enumerate([1, 3, 5, len(listed)]):
            assert cut[u, K.TP, c] == sum(x in truth for x in listed[:k])
        assert usr[u, K.NREL] == len(truth)
