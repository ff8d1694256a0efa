"""Per-user novelty, diversity and serendipity of recommendation lists (Numba, one user a segment).

``offsets`` cut the list rows into users; each user's value goes to its own slot (NaN where the
reference leaves the user out), so a chunk of whole users gives the same values whatever the
chunking. Items are rows of the similarity's tables (``index``; -1: an item the tables do not
hold, similar to nothing), and ``order`` ranks the item ids (ints by value, text by its code
points), the order the reference compares them in.

Item similarity (``kind``), as Microsoft Recommenders' ``python_evaluation`` computes it:

* :data:`COOCCURRENCE`: ``sim(i, j) = n_ij / (sqrt(c_i) sqrt(c_j))``, ``n_ij = sum_u m_ui m_uj``
  the co-occurrences of the two items in the training users' rows (``m_ui``: user ``u``'s rows of
  item ``i``), ``c_i`` the item's training rows (Zhang et al., "Auralist", WSDM 2012). The counts
  come as the sparse upper triangle of :func:`mobeval.kernels.cooccurrence.cooccurrence`
  (``pair_ptr``, ``pair_cols``, ``pair_counts``) and ``root[i] = sqrt(c_i)``.
* :data:`VECTORS`: the cosine of the items' feature vectors,
  ``sim(i, j) = (v_i . v_j) / (|v_i| |v_j|)`` (``vectors``, ``norms[i] = sqrt(v_i . v_i)``); a
  category set is its 0/1 vector.

Means inside a user are Kahan-compensated sums in the reference's row order, as pandas'
``groupby(...).mean()`` sums them (``group_mean``), over the count.
"""

from __future__ import annotations

import math

import numpy as np

from mobeval.kernels.blocks import run_blocks
from mobeval.kernels.cooccurrence import counts_between
from mobeval.kernels.jit import njit

COOCCURRENCE, VECTORS = 0, 1
#: Fewer users than this are scored in one block (no thread).
USERS_PER_BLOCK = 256


@njit(cache=True, nogil=True)
def _kahan(total, compensation, value):
    """``value`` added to a Kahan-compensated sum, as pandas' ``group_mean`` adds it."""
    y = value - compensation
    t = total + y
    return t, t - total - y


@njit(cache=True, nogil=True)
def _distinct(rows, buffer):
    """The distinct rows >= 0 of ``rows``, ascending, in ``buffer`` (its first ``n``), and each
    row's position among them (-1 for -1): ``(n, positions)``."""
    ordered = np.sort(rows)
    n = 0
    for value in ordered:
        if value >= 0 and (n == 0 or buffer[n - 1] != value):
            buffer[n] = value
            n += 1
    positions = np.searchsorted(buffer[:n], rows)
    for r in range(len(rows)):
        if rows[r] < 0:
            positions[r] = -1
    return n, positions


@njit(cache=True, nogil=True)
def _similarities(left, right, tables, out):
    """``out[x, y] = sim(left[x], right[y])`` of two ascending arrays of distinct rows (>= 0) of
    the ``tables`` (``(kind, pair_ptr, pair_cols, pair_counts, root, vectors, norms)``; 0 for
    items never seen together); ``left is right``: each pair computed once, then mirrored."""
    kind, pair_ptr, pair_cols, pair_counts, root, vectors, norms = tables
    same = left is right
    if kind == VECTORS:
        for x in range(len(left)):
            for y in range(x if same else 0, len(right)):
                a, b = left[x], right[y]
                dot = 0.0
                for d in range(vectors.shape[1]):
                    dot += vectors[a, d] * vectors[b, d]
                out[x, y] = dot / (norms[a] * norms[b])
    else:
        out[:, :] = 0.0
        counts_between(left, right, pair_ptr, pair_cols, pair_counts, out, same)
        for x in range(len(left)):
            for y in range(x if same else 0, len(right)):
                together = np.int64(out[x, y])
                if together != 0:
                    out[x, y] = together / (root[left[x]] * root[right[y]])
    if same:
        for x in range(len(left)):
            for y in range(x):
                out[x, y] = out[y, x]


@njit(cache=True, nogil=True)
def _at(table, x, y):
    """``table[x, y]``, 0 where a position is -1 (an item the tables do not hold)."""
    return table[x, y] if x >= 0 and y >= 0 else 0.0


def unit_diversity(offsets, cut, index, order, tables):
    """Per user, ``1 - ILS``: ``ILS`` the mean similarity of the pairs of its first ``cut`` rows
    (all with ``cut`` < 0) whose items differ, taken as Microsoft Recommenders'
    ``_get_intralist_similarity`` lists them (each row ``r``, then each row ``s`` with
    ``order[r] < order[s]``); NaN without such a pair (the reference has no row for the user).
    The similarities of the list's distinct items are found first, once each. Users in blocks
    on threads (:func:`mobeval.kernels.blocks.run_blocks`)."""
    out = np.full(len(offsets) - 1, np.nan)
    args = (offsets, cut, index, order, tables, out)
    run_blocks(_diversity_units, len(out), *args, grain=USERS_PER_BLOCK)
    return out


@njit(cache=True, nogil=True)
def _diversity_units(offsets, cut, index, order, tables, out, first, last):
    """Users ``first`` to ``last - 1`` of :func:`unit_diversity` into ``out``."""
    longest = 0
    for u in range(first, last):
        longest = max(longest, offsets[u + 1] - offsets[u])
    items = np.empty(longest, dtype=index.dtype)
    table = np.empty((longest, longest))
    for u in range(first, last):
        start = offsets[u]
        end = offsets[u + 1] if cut < 0 else min(offsets[u + 1], start + cut)
        n, position = _distinct(index[start:end], items)
        local = table[:n, :n]
        distinct = items[:n]
        _similarities(distinct, distinct, tables, local)
        total = 0.0
        compensation = 0.0
        pairs = 0
        for r in range(start, end):
            for s in range(start, end):
                if order[r] < order[s]:
                    value = _at(local, position[r - start], position[s - start])
                    total, compensation = _kahan(total, compensation, value)
                    pairs += 1
        if pairs:
            out[u] = 1.0 - total / pairs


def unit_serendipity(offsets, cut, index, order, relevance, profile, user_ptr, user_items, tables):
    """Per user, the mean over its first ``cut`` rows of ``(1 - mean_j sim(i, j)) rel_i``, ``j``
    over every training row of the user (``profile[u]``: its row in the CSR table ``user_ptr``,
    ``user_items``, in the training rows' order; -1: none, NaN as the reference leaves it out);
    the rows' values averaged in item order (the reference sorts them by user and item). The
    similarities of the list's and the profile's distinct items are found first, once each.
    Users in blocks on threads (:func:`mobeval.kernels.blocks.run_blocks`)."""
    out = np.full(len(offsets) - 1, np.nan)
    lists, history = (offsets, cut, index, order, relevance), (profile, user_ptr, user_items)
    run_blocks(_serendipity_units, len(out), lists, history, tables, out, grain=USERS_PER_BLOCK)
    return out


@njit(cache=True, nogil=True)
def _serendipity_units(lists, history, tables, out, first, last):
    """Users ``first`` to ``last - 1`` of :func:`unit_serendipity` into ``out``."""
    offsets, cut, index, order, relevance = lists
    profile, user_ptr, user_items = history
    longest = 0
    widest = 0
    for u in range(first, last):
        longest = max(longest, offsets[u + 1] - offsets[u])
        if profile[u] >= 0:
            widest = max(widest, user_ptr[profile[u] + 1] - user_ptr[profile[u]])
    items = np.empty(longest, dtype=index.dtype)
    held_items = np.empty(widest, dtype=user_items.dtype)
    table = np.empty((longest, widest))
    for u in range(first, last):
        if profile[u] < 0:
            continue
        start = offsets[u]
        end = offsets[u + 1] if cut < 0 else min(offsets[u + 1], start + cut)
        if end <= start:
            continue
        a, b = user_ptr[profile[u]], user_ptr[profile[u] + 1]
        n, position = _distinct(index[start:end], items)
        m, held = _distinct(user_items[a:b], held_items)
        local = table[:n, :m]
        _similarities(items[:n], held_items[:m], tables, local)
        values = np.empty(end - start)
        for r in range(start, end):
            total = 0.0
            compensation = 0.0
            for j in range(b - a):
                value = _at(local, position[r - start], held[j])
                total, compensation = _kahan(total, compensation, value)
            values[r - start] = (1.0 - total / (b - a)) * relevance[r]
        ranked = np.argsort(order[start:end], kind="mergesort")
        total = 0.0
        compensation = 0.0
        for r in ranked:
            total, compensation = _kahan(total, compensation, values[r])
        out[u] = total / (end - start)


@njit(cache=True, nogil=True)
def unit_expected_novelty(offsets, cut, relevant, novelty, counted):
    """Per user counted (``counted[u]``: it has a relevant rating; else NaN), Elliot's EPC / EFD:
    ``sum_r rel_r disc(r) nov_r / sum_r disc(r)`` over its first ``cut`` rows, ``disc(r) =
    1 / ln(r + 2) ln 2`` (``r`` from 0), summed in list order as Elliot's loop."""
    n_units = len(offsets) - 1
    out = np.full(n_units, np.nan)
    log2 = math.log(2)
    for u in range(n_units):
        if not counted[u]:
            continue
        start = offsets[u]
        end = offsets[u + 1] if cut < 0 else min(offsets[u + 1], start + cut)
        value = 0.0
        norm = 0.0
        for r in range(start, end):
            discount = 1 / math.log(r - start + 2) * log2
            value += relevant[r] * discount * novelty[r]
            norm += discount
        out[u] = value / norm if norm > 0 else value
    return out


@njit(cache=True, nogil=True)
def elliot_novelty(users, train_users):
    """Elliot's item novelty from each item's training users (``users``, distinct):
    EPC's ``1 - users_i / U`` (``U`` the training users), EFD's ``-ln(users_i / N) / ln 2``
    (``N = sum_i users_i``), and EFD's value of an item outside the training rows,
    ``-ln(min_i users_i / N) / ln 2``: ``(epc, efd, efd_unknown)``, as Elliot's ``math.log``."""
    norm = users.sum()
    epc = np.empty(len(users))
    efd = np.empty(len(users))
    for i in range(len(users)):
        epc[i] = 1 - users[i] / train_users
        efd[i] = -math.log(users[i] / norm) / math.log(2)
    return epc, efd, -math.log(users.min() / norm) / math.log(2)
