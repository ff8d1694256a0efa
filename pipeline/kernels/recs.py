"""Per-user recommendation metrics in one Numba pass over flat, user-segmented arrays.

Layout (``U`` users, all arrays built once by :mod:`mobeval.tasks.recs`):

* ``rec_off[U+1]`` offsets into ``rec_items`` / ``rec_scores``: user ``u``'s list, in rank order
  (or in file order, put in a score order by the kernel itself: ``StatsRules.order_mode``).
* ``tru_off[U+1]`` offsets into ``tru_items`` / ``tru_ratings``: user ``u``'s ground truth,
  sorted by item id; "is this recommended item rated, and how" is one load from a table of the
  user's truth rows by item hash (a binary search where two of its items share a slot).

For every user and every cutoff ``k`` of a grid (``FULL`` = the whole list) one scan of the list
yields the counts and sums below; the per-user metrics are then (``L`` list length, ``R`` relevant
items, ``hit_i`` = 1 when the item at 1-based position ``i`` is relevant):

* ``tp@k = sum_{i<=min(k,L)} hit_i``; precision ``tp@k / k`` or ``tp@k / min(k, L)``; recall
  ``tp@k / R``; hit rate ``[tp@k > 0]``; R-precision ``tp@R / R`` (or ``/ min(R, L)``).
* ``AP@k = (1/D) sum_{i<=k} hit_i * (sum_{j<=i} hit_j) / i`` with ``D`` = ``R``, ``min(k, R)``
  (RankSys) or the hits retrieved.
* ``RR@k = 1 / i*`` for the first relevant position ``i* <= k``, else 0.
* ``DCG@k = sum_{i<=k} g(r_i) / log_b(i + 1)`` over the list's positions (Jarvelin & Kekalainen
  2002, with the convention's gain ``g``), and ``DCG_BURGES@k`` the same with Burges et al.'s
  exponential gain ``2^r - 1`` whatever the convention's gain (ranx ``dcg`` / ``dcg_burges``).
* ``nDCG@k = DCG@k / IDCG@k`` with ``DCG@k = sum_{i<=k} g(r_i) / log_b(i + 1)``; the ideal ranking
  is either every truth item sorted by gain (Jarvelin & Kekalainen 2002; trec_eval, RankSys), or the
  rated recommended items themselves, unrated ones dropped and positions closed up (ClayRS).
* MSE / MAE over the rated items that are recommended, each once with the score of its first
  occurrence in the list (ClayRS pairs them with ``numpy_indexed.indices``, which returns the
  first match): ``mean (s_i - r_i)^2``, ``mean |s_i - r_i|``; ``DUP_EACH`` adds one error per copy.

Duplicated items in a list: ``DUP_EACH`` counts every occurrence as a hit, ``DUP_DISTINCT_TP`` is
ClayRS's mix: the confusion counts use the distinct items (``np.intersect1d``), AP and nDCG count
every occurrence. (A list with its copies removed beforehand, ``duplicates="drop"``, has none
left.)

Gains below 0 (a negative rating under the linear or exponential gain) count 0 when
``clamp_negative`` (trec_eval: a negative judgment is non-relevant, gain 0), in the DCG and in the
ideal DCG alike, so nDCG is never negative.
"""

from __future__ import annotations

import math
from typing import NamedTuple, get_type_hints

import numpy as np

from mobeval.kernels.blocks import readonly, run_blocks
from mobeval.kernels.borrow import borrowed
from mobeval.kernels.heapsort import sort_indices
from mobeval.kernels.jit import njit
from mobeval.kernels.list_order import (
    ID_ASC,
    TEXT_DESC,
    list_rises,
    ordered_copy,
    text_keys,
)
from mobeval.kernels.pairwise import pairwise_sum

FULL = np.iinfo(np.int64).max  # cutoff meaning "the whole list"

GAIN_BINARY, GAIN_LINEAR, GAIN_EXPONENTIAL, GAIN_RELISON = 0, 1, 2, 3
DUP_EACH, DUP_DISTINCT_TP = 0, 1
AP_RELEVANT, AP_MIN_K_RELEVANT, AP_HITS = 0, 1, 2
AS_GIVEN = -1  # ``order_mode``: the lists arrive in rank order

# per-user, per-cutoff outputs: cut[u, stat, c]
TP, DEN, PREC, REC, AP, RR, NDCG, HIT, DCG, DCG_BURGES = range(10)
N_CUT_STATS = 10
# per-user outputs: usr[u, stat]
NREL, RP_TP, RP_DEN, RPREC, MSE, MAE, RMSE = range(7)
N_USER_STATS = 7
USERS_PER_BLOCK = 256  # fewer users than this are scored in one block (no thread)
SHORT_SORT = 32  # a user's gains up to this many are sorted by insertion, in place
POW2_LIMIT = 64  # 2^k of an integer k in [-64, 64] is read from a table (:func:`_pow2`)
_POW2 = np.ldexp(1.0, np.arange(-POW2_LIMIT, POW2_LIMIT + 1))
TRUTH_SLOTS_LOG2 = 10  # a truth table (:func:`_lookup`) has at least 2^10 slots


class StatsRules(NamedTuple):
    """How :func:`recs_user_stats` scores, as named scalars (a typed record Numba reads by name).

    ``rel_threshold``: relevant if rating >= it, unless ``user_mean_threshold`` (the user's mean
    truth rating); ``gain_mode``: ``GAIN_*``; ``gain_threshold``: the graded gains' threshold
    (``-inf``: none); ``clamp_negative``: gains below 0 count 0; ``idcg_rated``: the ideal DCG over
    the rated recommended items (ClayRS), else over every truth item; ``dup_mode``: ``DUP_*``;
    ``check_duplicates``: report each list's first repeated item; ``precision_over_k``: precision
    over k, else over the cut list's length; ``ap_mode``: ``AP_*``; ``nan_if_no_relevant``: users
    without a relevant item get NaN, else 0; ``whole_lists``: every list position is scanned;
    False (no per-user statistic, no ideal DCG over the rated recommended items and no ``FULL``
    cutoff asked for) scans a list to the largest cutoff only and leaves the per-user statistics
    but ``NREL`` NaN (the duplicate check still reads the whole list); ``order_mode``:
    ``AS_GIVEN``, or a score order of :mod:`mobeval.kernels.list_order` (``TEXT_DESC``,
    ``ID_ASC``, with ``ids_text``) in which the kernel ranks each list itself, the tied runs
    from position ``order_limit`` on left as they are (-1: none): a list whose scores never
    increase has only its rated items' ranks counted (:func:`ranked_hits`), any other list is
    copied and put in order to position ``order_limit`` at least
    (:func:`~mobeval.kernels.list_order.ordered_copy`)."""

    rel_threshold: float
    user_mean_threshold: bool
    gain_mode: int
    gain_threshold: float
    clamp_negative: bool
    idcg_rated: bool
    dup_mode: int
    check_duplicates: bool
    precision_over_k: bool
    ap_mode: int
    nan_if_no_relevant: bool
    whole_lists: bool = True
    order_mode: int = AS_GIVEN
    ids_text: bool = False
    order_limit: int = -1

    def checked(self) -> StatsRules:
        """The record with each field of its Python type; ValueError on an unknown code."""
        codes = {
            "gain_mode": (GAIN_BINARY, GAIN_LINEAR, GAIN_EXPONENTIAL, GAIN_RELISON),
            "dup_mode": (DUP_EACH, DUP_DISTINCT_TP),
            "ap_mode": (AP_RELEVANT, AP_MIN_K_RELEVANT, AP_HITS),
            "order_mode": (AS_GIVEN, TEXT_DESC, ID_ASC),
        }
        for name, known in codes.items():
            if getattr(self, name) not in known:
                raise ValueError(f"{name}={getattr(self, name)!r} is not one of {known}")
        kinds = get_type_hints(StatsRules)
        return StatsRules(**{name: kinds[name](value) for name, value in self._asdict().items()})


EMPTY, SHARED = -1, -2  # a truth table's slot: no truth item hashed to it; two or more


@njit(cache=True, inline="always")
def _slot(x, shift):
    """The slot of the int64 ``x`` in a table of ``2^(64 - shift)`` (Knuth's multiplicative
    hash, TAOCP vol. 3, 6.4: the top bits of ``x`` times ``2^64`` over the golden ratio)."""
    return (np.uint64(x) * _GOLDEN) >> shift


@njit(cache=True)
def _fill_truth(items, lo, hi, table, shift):
    """Each truth row ``j`` of ``items[lo:hi]`` written to its item's :func:`_slot` of
    ``table`` (all ``EMPTY`` on entry), a slot two of them hash to marked ``SHARED``: the
    table that :func:`_lookup` reads, emptied again by :func:`_clear_truth`."""
    for j in range(lo, hi):
        h = _slot(items[j], shift)
        table[h] = j if table[h] == EMPTY else SHARED


@njit(cache=True)
def _clear_truth(items, lo, hi, table, shift):
    """The slots :func:`_fill_truth` wrote for ``items[lo:hi]`` set ``EMPTY`` again."""
    for j in range(lo, hi):
        table[_slot(items[j], shift)] = EMPTY


@njit(cache=True, inline="always")
def _lookup(items, lo, hi, table, shift, x):
    """Index of ``x`` in the sorted ``items[lo:hi]``, or -1, by their table
    (:func:`_fill_truth`): the row in ``x``'s slot if it holds ``x``; an ``EMPTY`` slot, none;
    a ``SHARED`` one, :func:`_find`. Most items of a list are not in its user's truth, and are
    told so by one load, with no branch that goes either way at random (a slot is in use with
    probability ``(hi - lo) / len(table)``)."""
    j = table[_slot(x, shift)]
    if j >= 0:
        return j if items[j] == x else -1
    if j == EMPTY:
        return -1
    return _find(items, lo, hi, x)


@njit(cache=True)
def _find(items, lo, hi, x):
    """Index of ``x`` in the sorted ``items[lo:hi]``, or -1."""
    while lo < hi:
        mid = (lo + hi) >> 1
        v = items[mid]
        if v < x:
            lo = mid + 1
        elif v > x:
            hi = mid
        else:
            return mid
    return -1


@njit(cache=True, inline="always")
def _pow2(x):
    """``2.0 ** x``: of an integer ``x`` within ``POW2_LIMIT`` read from a table of exact powers
    (the libm call, ~10 ns, returns the same bits: the power is a float), of any other ``x``
    computed."""
    if x >= -POW2_LIMIT and x <= POW2_LIMIT:
        k = int(x)
        if k == x:
            return _POW2[k + POW2_LIMIT]
    return 2.0**x


@njit(cache=True)
def _gain(rating, relevant, mode, threshold, clamp_negative):
    """Gain of one judged item: binary, linear ``r``, exponential ``2^r - 1`` or RankSys's
    ``2^(r - t + 1) - 1``; graded gains are 0 below ``threshold``, and below 0 when
    ``clamp_negative``."""
    if mode == GAIN_BINARY:
        return 1.0 if relevant else 0.0
    if rating < threshold:
        return 0.0
    if mode == GAIN_LINEAR:
        g = rating
    elif mode == GAIN_EXPONENTIAL:
        g = _pow2(rating) - 1.0
    else:
        g = _pow2(rating - threshold + 1.0) - 1.0
    if clamp_negative and g < 0.0:
        return 0.0
    return g


@njit(cache=True, inline="always")
def _positions(n):
    """0, 1, ..., n - 1 (int64), as np.arange(n), whose implementation would be one more function
    to compile on a first run."""
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        order[i] = i
    return order


def first_repeat(items) -> int:
    """0-based position of the first item of the list ``items`` that occurred earlier in it, or
    -1 (:func:`hashed_first_repeat`)."""
    items = readonly(items, np.int64)
    slots = np.empty(1 << _log2(2 * max(len(items), 1)), dtype=np.int64)
    stamps = np.full(slots.shape[0], -1, dtype=np.int64)
    return int(hashed_first_repeat(items, slots, stamps, 0))


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # 2^64 / golden ratio: Knuth's multiplicative hash


@njit(cache=True)
def hashed_first_repeat(items, slots, stamps, stamp):
    """The 0-based position of the first item of the list ``items`` (one list's view, so that
    no index is read as counted from the end) that already occurred earlier in it, or -1: each
    item goes into an open-addressing hash set (multiplicative hashing, Knuth, TAOCP vol. 3,
    6.4; linear probing) of ``slots`` (a power of two, at least twice the list's length), a
    slot in use while its ``stamps`` entry is ``stamp`` (so the set is emptied by the next
    stamp, not by clearing)."""
    mask = np.uint64(slots.shape[0] - 1)
    shift = np.uint64(64 - _log2(slots.shape[0]))
    for p in range(items.shape[0]):
        item = items[p]
        h = (np.uint64(item) * _GOLDEN) >> shift
        while stamps[h] == stamp:
            if slots[h] == item:
                return p
            h = (h + np.uint64(1)) & mask
        stamps[h] = stamp
        slots[h] = item
    return -1


@njit(cache=True)
def ranked_hits(rec_items, rec_scores, r0, n_list, n_scan, tru_items, t0, t1, table, shift, mode,
                text, limit, keys, found, hits):  # fmt: skip
    """For a list whose scores never increase (``rec_items[r0:r0 + n_list]`` and
    ``rec_scores``): ``hits[p]``, ``p < n_scan``, the truth row (of ``tru_items[t0:t1]``, by
    ``table``: :func:`_lookup`) of the item at rank ``p`` in ``mode``'s order, -1 where that item
    is not rated, without putting the list's rows in order; False (``hits`` partly written) when
    ids compared as ``text`` are too long for their
    :func:`~mobeval.kernels.list_order.text_keys`.

    The order (:func:`~mobeval.kernels.list_order.order_block`'s) moves a row only within its run
    of tied scores, and a run that starts at or after ``limit`` not at all; so the score at a
    rank is the score of the list's row there, and the measures read nothing else of an unrated
    item. The rows up to the end of the run at rank ``n_scan - 1`` are looked up in the truth
    (``found``, scratch), in one pass with no branch on the ids; each rated one's rank is its own
    row's, or, in a run of tied scores of two rows or more that starts before ``limit``, the
    run's start plus its rows before it (ids, or their text keys, in ``keys``: ``mode``'s order;
    an equal id on an earlier row). The other ranks are unrated (-1): no run without a rated
    item is read but for that pass."""
    if n_scan <= 0:
        return True
    end = n_scan  # the end of the run of tied scores at rank n_scan - 1
    tied = rec_scores[r0 + n_scan - 1]
    while end < n_list and rec_scores[r0 + end] == tied:
        end += 1
    rated = 0
    for q in range(end):
        found[q] = _lookup(tru_items, t0, t1, table, shift, rec_items[r0 + q])
        rated += found[q] >= 0
    for p in range(n_scan):
        hits[p] = found[p] if rated == 0 else -1
    keyed = -1  # the start of the run whose keys are in `keys`
    for q in range(end if rated else 0):
        if found[q] < 0:
            continue
        s = rec_scores[r0 + q]
        a, e = q, q + 1
        while a > 0 and rec_scores[r0 + a - 1] == s:
            a -= 1
        while e < end and rec_scores[r0 + e] == s:
            e += 1
        k = q
        if e - a > 1 and a < limit:
            if keyed != a and not text:
                for j in range(a, e):
                    keys[j - a] = rec_items[r0 + j]
            elif keyed != a and not text_keys(rec_items, r0 + a, e - a, keys):
                return False
            keyed = a
            x, k = keys[q - a], a
            for j in range(a, e):
                y = keys[j - a]
                by_id = (y > x) if mode == TEXT_DESC else (y < x)
                k += by_id | ((y == x) & (j < q))
        if k < n_scan:
            hits[k] = found[q]
    return True


@njit(cache=True)
def _log2(n):
    """log2 of the power of two ``n``."""
    k = 0
    while (1 << k) < n:
        k += 1
    return k


@njit(cache=True)
def _ascending(values):
    """``values`` sorted ascending, a new array (:func:`sort_indices`: the DCG of the sorted gains
    does not depend on the order of equal ones)."""
    order = _positions(values.shape[0])
    sort_indices(values, order)
    return values[order]


@njit(cache=True)
def _sort_ascending(values, n, out):
    """``values[:n]`` sorted ascending, returned as a view: up to ``SHORT_SORT`` values without
    NaN, each written to ``out`` at its place, counted without a branch (the values below it,
    and the equal ones before it); else in place (by insertion up to ``SHORT_SORT`` values, else
    :func:`_ascending`). Equal values are equal bits, so the ideal DCG of the sorted gains is
    that of any sort."""
    if n > SHORT_SORT:
        ascending = _ascending(values[:n])
        for i in range(n):
            values[i] = ascending[i]
        return values[:n]
    numbers = True
    for i in range(n):
        numbers &= values[i] == values[i]
    if numbers:
        for i in range(n):
            x = values[i]
            k = 0
            for j in range(n):
                y = values[j]
                k += (y < x) | ((y == x) & (j < i))
            out[k] = x
        return out[:n]
    for i in range(1, n):
        x = values[i]
        k = i
        while k > 0 and values[k - 1] > x:
            values[k] = values[k - 1]
            k -= 1
        values[k] = x
    return values[:n]


@njit(cache=True)
def _ideal_dcg(gains_asc, k, discounts):
    """DCG of the ``k`` largest gains, best first (``gains_asc`` sorted ascending)."""
    n = gains_asc.shape[0]
    s = 0.0
    for i in range(min(k, n)):
        s += gains_asc[n - 1 - i] / discounts[i]
    return s


def recs_user_stats(
    rec_off, rec_items, rec_scores, tru_off, tru_items, tru_ratings, cutoffs, discounts, rules
):
    """Per-user statistics for every cutoff (ascending, ``FULL`` last) in one pass per user.

    ``discounts[i]`` is ``log_b(i + 2)``; ``rules``: a :class:`StatsRules` (``.checked()``). The
    user-mean threshold is summed as numpy does. Users with no relevant item get NaN
    (``rules.nan_if_no_relevant``) or 0 for the relevance-based metrics. Returns
    ``(cut[U, N_CUT_STATS, K], usr[U, N_USER_STATS], first_duplicate_position[U],
    not_finite[U])``: the position of a list's first repeated item in its rows as given (-1:
    none); whether a list holds a NaN or infinite score (read under a score order, not
    ``AS_GIVEN``: the lists' scores then need no check of their own; else False). Users in
    blocks on threads (:func:`_user_stats`, :func:`mobeval.kernels.blocks.run_blocks`).
    """
    ints = (rec_off, rec_items, tru_off, tru_items, cutoffs)
    rec_off, rec_items, tru_off, tru_items, cutoffs = (readonly(a, np.int64) for a in ints)
    floats = (rec_scores, tru_ratings, discounts)
    rec_scores, tru_ratings, discounts = (readonly(a, np.float64) for a in floats)
    n_users = rec_off.shape[0] - 1
    n_cut = cutoffs.shape[0]
    cut = np.empty((n_users, N_CUT_STATS, n_cut))
    usr = np.empty((n_users, N_USER_STATS))
    dup_pos = np.full(n_users, -1, dtype=np.int64)
    not_finite = np.zeros(n_users, dtype=np.bool_)
    seen = np.zeros(tru_items.shape[0], dtype=np.bool_)  # a user's truth rows are its own
    args = (rec_off, rec_items, rec_scores, tru_off, tru_items, tru_ratings, cutoffs, discounts)
    outs = (cut, usr, dup_pos, not_finite)
    run_blocks(_user_stats, n_users, *args, rules, *outs, seen, grain=USERS_PER_BLOCK)
    return outs


@njit(nogil=True, cache=True)
def _user_stats(
    rec_off,
    rec_items,
    rec_scores,
    tru_off,
    tru_items,
    tru_ratings,
    cutoffs,
    discounts,
    rules,
    cut,
    usr,
    dup_pos,
    not_finite,
    seen,
    first,
    last,
):
    """Users ``first`` to ``last - 1`` of :func:`recs_user_stats` into ``cut``, ``usr``,
    ``dup_pos`` and ``not_finite`` (``seen``: a flag per truth row, False on entry): the
    block's scratch arrays, handed to :func:`_score_users` (which borrows them,
    :mod:`mobeval.kernels.borrow`)."""
    n_cut = cutoffs.shape[0]
    longest = 1
    most_rated = 1
    for u in range(first, last):
        longest = max(longest, rec_off[u + 1] - rec_off[u])
        most_rated = max(most_rated, tru_off[u + 1] - tru_off[u])
    # the running counters at each cutoff, written for every cutoff of every user (so allocated
    # once, with np.empty: no np.zeros / np.full of their own to compile)
    counters = np.empty((3, n_cut), dtype=np.int64)
    sums = np.empty((4, n_cut))
    # each user's gains, sorted in place (no allocation a user): its truth's, its rated list
    # items'; at most SHORT_SORT of them sorted by insertion
    truth_gains = np.empty(0 if rules.idcg_rated else most_rated)
    rated_gains = np.empty(longest if rules.idcg_rated else 0)
    sorted_gains = np.empty(min(max(truth_gains.shape[0], rated_gains.shape[0]), SHORT_SORT))
    slots = np.empty(1 << _log2(2 * longest), dtype=np.int64)  # the duplicate check's hash set
    stamps = np.full(slots.shape[0], -1, dtype=np.int64)  # no user's stamp
    # each user's truth rows by item (:func:`_lookup`): at least 8 slots a row, most of them empty
    table = np.full(1 << max(TRUTH_SLOTS_LOG2, _log2(8 * most_rated)), EMPTY, dtype=np.int64)
    # each list's first ranks' truth rows (hits); items, rows, keys, scores: scratch of its order
    ranks = np.empty((4, longest), dtype=np.int64)
    scores = np.empty(longest)
    arrays = (rec_off, rec_items, rec_scores, tru_off, tru_items, tru_ratings, cutoffs, discounts)
    outs = (cut, usr, dup_pos, not_finite, seen)
    gains = (truth_gains, rated_gains, sorted_gains)
    _score_users(arrays, rules, outs, (counters, sums, *gains, slots, stamps, table, ranks, scores),
                 first, last)  # fmt: skip


@njit(cache=True)
def _score_users(arrays, rules, outs, scratch, first, last):
    """:func:`_user_stats`' loop over its users, on borrowed views of its arrays (the tuples
    its outer function holds for the call): a user's slices and calls count no reference."""
    rec_off, rec_items, rec_scores, tru_off, tru_items, tru_ratings, cutoffs, discounts = borrowed(
        *arrays
    )
    cut, usr, dup_pos, not_finite, seen = borrowed(*outs)
    counters, sums, truth_gains, rated_gains, sorted_gains, slots, stamps, table, ranks, scores = (
        borrowed(*scratch)
    )
    at_tp, at_hits, at_first = counters[0], counters[1], counters[2]
    at_ap, at_dcg, at_dcg_burges, at_dcg_rated = sums[0], sums[1], sums[2], sums[3]
    hits, items, rows, keys = ranks[0], ranks[1], ranks[2], ranks[3]  # keys: the ids' text keys
    rel_threshold = rules.rel_threshold
    user_mean_threshold = rules.user_mean_threshold
    gain_mode = rules.gain_mode
    gain_threshold = rules.gain_threshold
    clamp_negative = rules.clamp_negative
    idcg_rated = rules.idcg_rated
    dup_mode = rules.dup_mode
    check_duplicates = rules.check_duplicates
    precision_over_k = rules.precision_over_k
    ap_mode = rules.ap_mode
    nan_if_no_relevant = rules.nan_if_no_relevant
    n_cut = cutoffs.shape[0]
    undefined = np.nan if nan_if_no_relevant else 0.0
    # an int64 variable, not the literal constant: a literal argument compiles _gain once more
    exponential = np.int64(GAIN_EXPONENTIAL)
    truth_shift = np.uint64(64 - _log2(table.shape[0]))
    order_mode = rules.order_mode
    text = rules.ids_text and order_mode == TEXT_DESC  # ids compared as their decimal text
    order_limit = rules.order_limit if rules.order_limit >= 0 else FULL
    whole = rules.whole_lists
    for u in range(first, last):
        r0 = rec_off[u]
        n_list = rec_off[u + 1] - r0
        t0 = tru_off[u]
        t1 = tru_off[u + 1]
        n_truth = t1 - t0
        n_scan = n_list if whole else min(n_list, cutoffs[n_cut - 1])
        if check_duplicates:
            dup_pos[u] = hashed_first_repeat(rec_items[r0 : r0 + n_list], slots, stamps, u)
        rises = odd = 0
        if order_mode != AS_GIVEN:
            rises, odd = list_rises(rec_scores[r0 : r0 + n_list])
            not_finite[u] = odd > 0
        # the truth row of the item at each of the first n_scan ranks (-1: unrated), and their
        # scores: of a list whose ranks are its rows', or a tied run's rows' (ranked_hits), where
        # they lie; of a list put in order, its copy's
        _fill_truth(tru_items, t0, t1, table, truth_shift)
        listed = rec_items[r0 : r0 + n_list]  # a view: no index read as counted from the end
        ranked_scores = rec_scores[r0 : r0 + n_scan]
        # (a list in rank order read whole is looked up as it is scanned; one read to its cutoff
        # in a pass of its own first, whose loads run ahead)
        inline = order_mode == AS_GIVEN and n_scan == n_list
        if order_mode == AS_GIVEN:
            for p in range(0 if inline else n_scan):
                hits[p] = _lookup(tru_items, t0, t1, table, truth_shift, listed[p])
        elif not (
            rises == 0
            and ranked_hits(rec_items, rec_scores, r0, n_list, n_scan, tru_items, t0, t1, table,
                            truth_shift, order_mode, text, order_limit, keys, rows, hits)
        ):  # fmt: skip
            # a list that rises (or ids too long for text keys): copied, put in order
            rising = rises > 0 and odd == 0  # all finite: the list's head alone put in order
            keyed = ordered_copy(rec_scores, rec_items, r0, n_list, n_scan, rising, order_mode,
                                 text, order_limit, scores, items, rows, keys)  # fmt: skip
            for p in range(n_scan):
                item = rec_items[r0 + rows[p]] if keyed else items[p]
                hits[p] = _lookup(tru_items, t0, t1, table, truth_shift, item)
            ranked_scores = scores[:n_scan]

        thr = rel_threshold
        if user_mean_threshold:
            thr = pairwise_sum(tru_ratings, t0, n_truth) / n_truth if n_truth > 0 else np.inf
        n_rel = 0
        for j in range(t0, t1):
            relevant = tru_ratings[j] >= thr
            n_rel += relevant
            if not idcg_rated:
                truth_gains[j - t0] = _gain(
                    tru_ratings[j], relevant, gain_mode, gain_threshold, clamp_negative
                )
        ideal = _sort_ascending(truth_gains, 0 if idcg_rated else n_truth, sorted_gains)

        # running counters over list positions
        tp = 0  # hits counted for the confusion metrics
        hits_rank = 0  # hits counted for AP / nDCG
        ap_sum = 0.0
        dcg = 0.0
        dcg_burges = 0.0
        first_hit = -1
        n_rated = 0
        n_err = 0
        dcg_rated = 0.0
        sq_err = 0.0
        abs_err = 0.0
        rp_tp = -1
        ci = 0
        cj = 0
        for p in range(n_scan):
            idx = _lookup(tru_items, t0, t1, table, truth_shift, listed[p]) if inline else hits[p]
            if idx >= 0:
                rating = tru_ratings[idx]
                relevant = rating >= thr
                first_time = not seen[idx]
                seen[idx] = True
                if relevant and (dup_mode == DUP_EACH or first_time):
                    tp += 1
                if relevant:
                    hits_rank += 1
                    ap_sum += hits_rank / (p + 1)
                if relevant and first_hit < 0:
                    first_hit = p
                g = _gain(rating, relevant, gain_mode, gain_threshold, clamp_negative)
                g_burges = _gain(rating, relevant, exponential, gain_threshold, clamp_negative)
                if idcg_rated:
                    rated_gains[n_rated] = g
                    dcg_rated += g / discounts[n_rated]
                dcg += g / discounts[p]
                dcg_burges += g_burges / discounts[p]
                n_rated += 1
                if dup_mode == DUP_EACH or first_time:
                    diff = ranked_scores[p] - rating
                    sq_err += diff * diff
                    abs_err += abs(diff)
                    n_err += 1
                while cj < n_cut and cutoffs[cj] == n_rated:
                    at_dcg_rated[cj] = dcg_rated
                    cj += 1
            if p + 1 == n_rel:
                rp_tp = tp
            while ci < n_cut and cutoffs[ci] == p + 1:
                at_tp[ci] = tp
                at_hits[ci] = hits_rank
                at_ap[ci] = ap_sum
                at_dcg[ci] = dcg
                at_dcg_burges[ci] = dcg_burges
                at_first[ci] = first_hit
                ci += 1
        _clear_truth(tru_items, t0, t1, table, truth_shift)
        for c in range(ci, n_cut):
            at_tp[c] = tp
            at_hits[c] = hits_rank
            at_ap[c] = ap_sum
            at_dcg[c] = dcg
            at_dcg_burges[c] = dcg_burges
            at_first[c] = first_hit
        for c in range(cj, n_cut):
            at_dcg_rated[c] = dcg_rated
        if rp_tp < 0:
            rp_tp = tp
        rated_asc = _sort_ascending(rated_gains, n_rated if idcg_rated else 0, sorted_gains)

        for c in range(n_cut):
            k = cutoffs[c]
            n_cut_list = min(k, n_list)
            den = k if (precision_over_k and k != FULL) else n_cut_list
            cut[u, TP, c] = at_tp[c]
            cut[u, DEN, c] = den
            cut[u, DCG, c] = at_dcg[c]
            cut[u, DCG_BURGES, c] = at_dcg_burges[c]
            if idcg_rated:
                ideal_dcg = _ideal_dcg(rated_asc, k, discounts)
                if n_rated == 0 or ideal_dcg == 0.0:
                    cut[u, NDCG, c] = np.nan
                else:
                    cut[u, NDCG, c] = at_dcg_rated[c] / ideal_dcg
            else:
                ideal_dcg = _ideal_dcg(ideal, k, discounts)
                cut[u, NDCG, c] = at_dcg[c] / ideal_dcg if ideal_dcg > 0.0 else undefined
            if n_rel == 0:
                for s in (PREC, REC, AP, RR, HIT):
                    cut[u, s, c] = undefined
                continue
            cut[u, PREC, c] = at_tp[c] / den if den > 0 else 0.0
            cut[u, REC, c] = at_tp[c] / n_rel
            if ap_mode == AP_RELEVANT:
                ap_den = n_rel
            elif ap_mode == AP_MIN_K_RELEVANT:
                ap_den = min(k, n_rel)
            else:
                ap_den = at_hits[c]
            cut[u, AP, c] = at_ap[c] / ap_den if ap_den > 0 else 0.0
            cut[u, RR, c] = 1.0 / (at_first[c] + 1) if at_first[c] >= 0 else 0.0
            cut[u, HIT, c] = 1.0 if at_tp[c] > 0 else 0.0

        rp_den = n_rel if precision_over_k else min(n_rel, n_list)
        usr[u, NREL] = n_rel
        if not whole:
            usr[u, RP_TP:] = np.nan
            continue
        usr[u, RP_TP] = rp_tp
        usr[u, RP_DEN] = rp_den
        if n_rel == 0:
            usr[u, RPREC] = undefined
        else:
            usr[u, RPREC] = rp_tp / rp_den if rp_den > 0 else 0.0
        if n_err > 0:
            usr[u, MSE] = sq_err / n_err
            usr[u, MAE] = abs_err / n_err
            usr[u, RMSE] = math.sqrt(sq_err / n_err)
        else:
            usr[u, MSE] = np.nan
            usr[u, MAE] = np.nan
            usr[u, RMSE] = np.nan
