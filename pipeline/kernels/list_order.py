"""Each user's list put in its scoring order inside its own row block, in one pass.

The rows arrive grouped by user (``offsets[u]`` to ``offsets[u + 1]``), each user's rows in file
order. A score order ranks a list by score, highest first, and breaks ties by the item id:

* ``TEXT_DESC``: the id compared as text, the greater first: trec_eval sorts a query's documents
  by ``sim`` descending, then ``strcmp`` of the docnos descending (``form_res_rels.c``,
  ``comp_sim_docno``); an integer id compares as its decimal digits (``"9" > "10"``, ``"-"``
  below every digit), a string id as its code, whose order is the strings' byte order;
* ``ID_ASC``: the id's own order, the smaller first.

Rows equal in score and id keep their file order (the sort is stable). A list whose scores never
increase, as a recommender writes its top k, is checked in one pass and only its runs of tied
scores are sorted, each where its ids are out of order; another list is sorted whole, or, when
only its first k positions are read (a largest cutoff), has only its first k entries selected and
sorted (:func:`ordered_copy`: the entries scoring at or above its k-th highest score). Sorting is
in place, on copies of the scores and ids that carry the row numbers (insertion sort up to
:data:`SHORT` entries, else a heap: O(n log n), or about O(n) for the first k of n, no memory
beyond the block), so no gather of the columns follows. Units in blocks on threads
(:func:`~mobeval.kernels.blocks.run_blocks`); no row moves to another user's block, so the user
column needs no permutation.
"""

from __future__ import annotations

import numpy as np

from mobeval.kernels.blocks import readonly, run_blocks
from mobeval.kernels.jit import njit

TEXT_DESC, ID_ASC = 0, 1
SHORT = 32  # lists of up to this many rows are sorted by insertion
RANKED = 16  # runs of tied scores of up to this many rows are put in order by counted places
USERS_PER_BLOCK = 1024  # fewer users than this are ordered in one block (no thread)
HEAD_GROUPS = 4  # a list of this many times k entries or more is cut in groups (_head_score)
KEY_DIGITS = 17  # ids of fewer digits get integer text keys (:func:`text_keys`)
POW10 = 10 ** np.arange(KEY_DIGITS + 1, dtype=np.int64)
KEY_LIMIT = POW10[KEY_DIGITS]
NEGATIVE_SHIFT = np.int64(4 * 10**18)


def list_order(offsets, scores, ids, mode: int, ids_text: bool, limit: int = -1):
    """Each user's rows in ``mode``'s order: ``(rows, ids, scores)``, the row permutation
    (int64) and the ids and scores put in its order, or None when every list is in that order
    already.

    Args:
        offsets: int64 ``[U + 1]`` row offsets of the users' blocks.
        scores: float64 scores, higher first.
        ids: int64 item keys: the ids themselves (``ids_text`` True: compared as their decimal
            text under ``TEXT_DESC``), or codes whose order is the ids' order.
        mode: ``TEXT_DESC`` or ``ID_ASC``.
        limit: only the first ``limit`` positions of each list need their order (-1: all): in a
            list whose scores never increase, a run of tied scores that starts at or after it
            is left in file order (its items are not read in rank order); in another, the rows
            after those positions come in no order.
    """
    offsets = readonly(offsets, np.int64)
    given = (readonly(scores, np.float64), readonly(ids, np.int64))
    n = given[0].shape[0]
    # the copies sorted in place, each user's block copied by the thread that orders it
    scores, ids, rows = np.empty(n), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    text = mode == TEXT_DESC and ids_text
    moved = np.zeros(offsets.shape[0] - 1, dtype=np.bool_)
    limit = np.int64(np.iinfo(np.int64).max if limit < 0 else limit)
    args = (offsets, *given, scores, ids, rows, np.int64(mode), text, limit, moved)
    run_blocks(_order_units, offsets.shape[0] - 1, *args, grain=USERS_PER_BLOCK)
    return (rows, ids, scores) if moved.any() else None


@njit(cache=True)
def text_keys(src, lo, n, keys):
    """``keys[p]`` for ``p < n``: int64 keys of the ids ``src[lo + p]`` whose integer order is
    the ids' decimal text order (:func:`_text_cmp`), so a sort compares them as integers; False
    (``keys`` partly written) when an id's magnitude reaches ``10^KEY_DIGITS``.

    A magnitude ``m`` of ``d`` digits, padded with zeros to ``KEY_DIGITS`` digits, orders as its
    text up to a prefix: its key is ``m * 10^(KEY_DIGITS - d) * 32 + d`` (the shorter, a prefix,
    below), below ``3.2e18``; a negative id (``"-"`` below every digit) gets its magnitude's key
    minus ``4e18``, below every non-negative one and still in int64. One pass, each id read once,
    instead of two digit counts and paddings at every comparison."""
    for p in range(n):
        x = src[lo + p]
        if x <= -KEY_LIMIT or x >= KEY_LIMIT:
            return False
        m = -x if x < 0 else x
        d = 1
        while d < KEY_DIGITS and m >= POW10[d]:
            d += 1
        key = m * POW10[KEY_DIGITS - d] * 32 + d
        keys[p] = key - NEGATIVE_SHIFT if x < 0 else key
    return True


@njit(cache=True)
def _digits(x):
    """(magnitude as uint64, its number of decimal digits) of an int64."""
    m = np.uint64(-(x + 1)) + np.uint64(1) if x < 0 else np.uint64(x)
    n = 1
    p = np.uint64(10)
    while n < 19 and m >= p:  # an int64's magnitude has at most 19 digits
        n += 1
        p *= np.uint64(10)
    return m, n


@njit(cache=True)
def _text_cmp(a, b):
    """-1, 0 or 1 as the decimal text of int64 ``a`` is below, equal to or above ``b``'s
    (byte order: ``"-"`` below every digit, a prefix below its extensions)."""
    if a == b:
        return 0
    if (a < 0) != (b < 0):
        return -1 if a < 0 else 1
    ma, na = _digits(a)
    mb, nb = _digits(b)
    # the shorter one's digits followed by zeros to the longer one's length (below 10^19)
    n = max(na, nb)
    for _ in range(n - na):
        ma *= np.uint64(10)
    for _ in range(n - nb):
        mb *= np.uint64(10)
    if ma != mb:
        return -1 if ma < mb else 1
    return -1 if na < nb else 1  # equal padded digits: the shorter is a prefix of the other


@njit(cache=True)
def _before(p, q, scores, ids, rows, mode, text):
    """Whether the entry at ``p`` comes before the one at ``q`` in ``mode``'s order (ties: the
    earlier row)."""
    if scores[p] != scores[q]:
        return scores[p] > scores[q]
    if ids[p] != ids[q]:
        if mode == TEXT_DESC:
            if text:
                return _text_cmp(ids[p], ids[q]) > 0
            return ids[p] > ids[q]
        return ids[p] < ids[q]
    return rows[p] < rows[q]


@njit(cache=True)
def _swap(p, q, scores, ids, rows):
    scores[p], scores[q] = scores[q], scores[p]
    ids[p], ids[q] = ids[q], ids[p]
    rows[p], rows[q] = rows[q], rows[p]


def list_heads(offsets, scores, ids, mode: int, ids_text: bool, limit: int) -> np.ndarray:
    """The rows of each user's first ``limit`` positions (``limit`` >= 0) in ``mode``'s order,
    user after user: int64, ``sum(min(n_u, limit))`` of them (the arguments as
    :func:`list_order`'s, whose first ``limit`` rows of each list they are). Each list's
    entries that can reach its first ``limit`` places are copied to its thread's scratch and put
    in order there (:func:`ordered_copy`), not the whole lists to arrays the size of the input:
    of a list whose scores never increase, its entries through the end of the run of tied scores
    at position ``limit - 1`` (the runs after it stay as they are); of another, those scoring
    at or above its ``limit``-th highest score (all of a list with a NaN or infinite score)."""
    offsets = readonly(offsets, np.int64)
    given = (readonly(scores, np.float64), readonly(ids, np.int64))
    heads = np.zeros(offsets.shape[0], dtype=np.int64)
    np.cumsum(np.minimum(np.diff(offsets), limit), out=heads[1:])
    rows = np.empty(heads[-1], dtype=np.int64)
    text = mode == TEXT_DESC and ids_text
    args = (offsets, *given, heads, np.int64(mode), text, np.int64(limit), rows)
    run_blocks(_head_units, offsets.shape[0] - 1, *args, grain=USERS_PER_BLOCK)
    return rows


@njit(cache=True, nogil=True)
def _head_units(offsets, given_scores, given_ids, heads, mode, text, limit, out, first, last):
    """Users ``first`` to ``last - 1`` of :func:`list_heads`: each list put in order to position
    ``limit`` in scratch arrays of the block's longest list, its first rows written to ``out``
    from ``heads[u]`` on."""
    longest = 1
    for u in range(first, last):
        longest = max(longest, offsets[u + 1] - offsets[u])
    scores = np.empty(longest)
    ids = np.empty(longest, dtype=np.int64)
    rows = np.empty(longest, dtype=np.int64)
    keys = np.empty(longest, dtype=np.int64)
    for u in range(first, last):
        lo, n = offsets[u], offsets[u + 1] - offsets[u]
        if heads[u + 1] == heads[u]:
            continue
        rises, odd = list_rises(given_scores[lo : lo + n])
        if rises == 0:  # only the runs of tied scores that start before `limit` move: its head
            end = min(n, limit)  # through the end of the run at position limit - 1
            while end < n and given_scores[lo + end] == given_scores[lo + end - 1]:
                end += 1
            n = end
        ordered_copy(given_scores, given_ids, lo, n, limit, rises > 0 and odd == 0, mode, text,
                     limit, scores, ids, rows, keys)  # fmt: skip
        for p in range(heads[u + 1] - heads[u]):
            out[heads[u] + p] = lo + rows[p]


@njit(cache=True, nogil=True)
def _order_units(
    offsets, given_scores, given_ids, scores, ids, rows, mode, text, limit, moved, first, last
):
    """Users ``first`` to ``last - 1``, each block of ``given_scores`` and ``given_ids`` copied
    to ``scores`` and ``ids`` with its row numbers in ``rows`` (one pass, on this thread) and
    sorted there in place by :func:`_before`; ``moved[u]`` set when user ``u``'s rows changed
    places. Ids compared as text are sorted by their :func:`text_keys` (a block with an id too
    long for a key: by :func:`_text_cmp`), and put back by row. A block whose scores never
    increase has only its runs of tied scores sorted (by id), each run that starts before
    position ``limit`` checked first."""
    for u in range(first, last):
        lo, hi = offsets[u], offsets[u + 1]
        keyed = text and text_keys(given_ids, lo, hi - lo, ids[lo:hi])
        for r in range(lo, hi):
            scores[r], rows[r] = given_scores[r], r
            if not keyed:
                ids[r] = given_ids[r]
        moved[u] = order_block(lo, hi, scores, ids, rows, mode, text and not keyed, limit)
        if keyed:
            for r in range(lo, hi):
                ids[r] = given_ids[rows[r]]


@njit(cache=True)
def order_block(lo, hi, scores, ids, rows, mode, text, limit):
    """Entries ``lo`` to ``hi - 1`` of ``scores``, ``ids`` and ``rows`` (one list, its row
    numbers ascending) put in ``mode``'s order in place up to position ``limit``: a run of tied
    scores that starts at or after it, in a list whose scores never increase, left as it is; the
    entries after it, in a list whose scores rise somewhere, in no order; whether any entry
    moved. The recs kernel calls it on its own copy of each list
    (:func:`mobeval.kernels.recs.recs_user_stats`)."""
    by_score = True
    for r in range(lo + 1, hi):
        if scores[r] > scores[r - 1]:
            by_score = False
            break
    if not by_score:
        _sort(lo, hi, scores, ids, rows, mode, text, limit)
        return True
    moved = False
    start = lo
    end = lo + min(hi - lo, limit)  # runs starting here or later stay as they are
    for r in range(lo + 1, hi + 1):
        if start >= end:
            break
        if r < hi and scores[r] == scores[start]:
            continue
        if not text and r - start <= RANKED:
            moved |= _rank_run(start, r, scores, ids, rows, mode)
            start = r
            continue
        for t in range(start + 1, r):
            if _before(t, t - 1, scores, ids, rows, mode, text):
                moved = True
                _sort(start, r, scores, ids, rows, mode, text, r - start)
                break
        start = r
    return moved


@njit(cache=True)
def ordered_copy(
    given_scores, given_ids, lo, n, need, rising, mode, text, limit, scores, ids, rows, keys
):
    """One list (``given_scores`` and ``given_ids`` from ``lo``, ``n`` rows) copied to ``scores``,
    ``ids`` and ``rows`` (each entry's row in the list) and put in ``mode``'s order there to
    position ``need`` at least; whether ``ids`` holds the ids' text keys (``text``: every id has
    one, :func:`text_keys`, written to ``keys`` first) rather than the ids. A list whose scores
    rise somewhere, all finite (``rising``: the caller's pass over them knows), has only its
    entries that can take one of the first ``need`` places copied, those scoring at or above its
    ``need``-th highest score (:func:`_head_score`; ties included, so at least ``need``
    entries), and sorted (``_sort``): each of them comes before every entry left out. Another
    list is copied whole and put in order by :func:`order_block` (to position ``limit``, at
    least ``need``)."""
    head = rising and 0 < need < n
    low = _head_score(given_scores, lo, n, need, scores) if head else -np.inf
    m = 0
    for p in range(n):  # written whatever the score, kept if it is high enough: no branch
        x = given_scores[lo + p]
        scores[m], ids[m], rows[m] = x, given_ids[lo + p], p
        m += (x >= low) | (not head)
    keyed = text and text_keys(ids, 0, m, keys)
    if keyed:
        ids[:m] = keys[:m]
    if head:
        _sort(0, m, scores, ids, rows, mode, text and not keyed, need)
    else:
        order_block(0, m, scores, ids, rows, mode, text and not keyed, limit)
    return keyed


@njit(cache=True)
def list_rises(scores):
    """``(rises, odd)``: how many of ``scores[1:]`` (one list's view) are above the score before
    (a NaN never is), and how many of ``scores`` are NaN or infinite (``x - x`` is not 0: the
    check of the lists' scores, made on this pass that reads them all, not on a pass of its
    own), counted without a branch: one pass of vector compares."""
    rises = 0
    odd = 0
    if scores.shape[0]:
        odd += (scores[0] - scores[0]) != 0.0
    for r in range(1, scores.shape[0]):
        x = scores[r]
        odd += (x - x) != 0.0
        rises += x > scores[r - 1]
    return rises, odd


@njit(cache=True)
def _head_score(given_scores, lo, n, need, top):
    """The ``need``-th highest of ``given_scores[lo:lo + n]`` (``0 < need < n``, finite; counted
    with repeats). A list of :data:`HEAD_GROUPS` times ``need`` entries or more is cut into
    ``need`` groups first: the lowest of their highest scores is at most the one sought (``need``
    entries reach it), so only the entries at or above it are kept (in ``top``, with no branch)
    and searched (:func:`_highest`)."""
    if n >= HEAD_GROUPS * need:
        size = n // need
        bound = np.inf
        for g in range(need):
            a = lo + g * size
            b = lo + n if g == need - 1 else a + size
            best = given_scores[a]
            for p in range(a + 1, b):
                best = max(best, given_scores[p])
            bound = min(bound, best)
        m = 0
        for p in range(n):
            x = given_scores[lo + p]
            top[m] = x
            m += x >= bound
        return _highest(top, 0, m, need, top)
    return _highest(given_scores, lo, n, need, top)


@njit(cache=True)
def _highest(source, first, m, need, top):
    """The ``need``-th highest of ``source[first:first + m]``, the highest ``need`` kept in
    ``top[:need]``, highest first, by insertion (``top`` may be ``source`` at ``first`` 0: each
    write is below the entry read)."""
    filled = 0
    for p in range(m):
        x = source[first + p]
        if filled < need:
            k = filled
            filled += 1
        elif x > top[need - 1]:
            k = need - 1
        else:
            continue
        while k > 0 and top[k - 1] < x:
            top[k] = top[k - 1]
            k -= 1
        top[k] = x
    return top[need - 1]


@njit(cache=True)
def _rank_run(lo, hi, scores, ids, rows, mode):
    """A run of tied scores, entries ``lo`` to ``hi - 1`` (at most :data:`RANKED`, row numbers
    ascending), put in ``mode``'s order of the ids compared as integers, stably; whether an entry
    moved. Each entry's place is counted, without a branch: the entries before it in the order
    (a greater id under ``TEXT_DESC``, a smaller under ``ID_ASC``, an equal one on an earlier
    row); the places, 4 bits each, are kept in one 64-bit word, and the entries swapped along
    the permutation's cycles."""
    n = hi - lo
    places = np.uint64(0)
    moved = False
    for i in range(n):
        x = ids[lo + i]
        k = 0
        for j in range(n):
            y = ids[lo + j]
            if mode == TEXT_DESC:
                k += (y > x) | ((y == x) & (j < i))
            else:
                k += (y < x) | ((y == x) & (j < i))
        moved |= k != i
        places |= np.uint64(k) << np.uint64(4 * i)
    if not moved:
        return False
    for i in range(n):
        while True:
            k = np.int64((places >> np.uint64(4 * i)) & np.uint64(15))
            if k == i:
                break
            _swap(lo + i, lo + k, scores, ids, rows)
            other = (places >> np.uint64(4 * k)) & np.uint64(15)
            places &= ~((np.uint64(15) << np.uint64(4 * i)) | (np.uint64(15) << np.uint64(4 * k)))
            places |= (other << np.uint64(4 * i)) | (np.uint64(k) << np.uint64(4 * k))
    return True


@njit(cache=True)
def _sort(lo, hi, scores, ids, rows, mode, text, need):
    """Entries ``lo`` to ``hi - 1`` put in place in :func:`_before`'s order up to position
    ``lo + need`` (the entries after it: the rest, in no order): by insertion up to :data:`SHORT`
    entries, else by a heap (J. W. J. Williams, CACM 7(6), 1964, built bottom-up as in
    R. W. Floyd, CACM 7(12), 1964) of the first ``need`` entries that keeps the one that comes
    last at its root: each later entry that comes before the root replaces it, and the heap is
    then sorted (the root swapped to its end, the heap shrunk by one). Comparisons: about
    ``n + need log(n) log(need)`` for ``n`` entries, ``n log n`` when ``need >= n``; the order is
    the same whatever ``need``, ``_before`` being a strict order (rows differ)."""
    if hi - lo <= SHORT:
        for r in range(lo + 1, hi):
            k = r
            while k > lo and _before(k, k - 1, scores, ids, rows, mode, text):
                _swap(k, k - 1, scores, ids, rows)
                k -= 1
        return
    size = min(hi - lo, need)
    for root in range(size // 2 - 1, -1, -1):
        _sift(lo, root, size, scores, ids, rows, mode, text)
    for r in range(lo + size, hi):
        if _before(r, lo, scores, ids, rows, mode, text):
            _swap(r, lo, scores, ids, rows)
            _sift(lo, 0, size, scores, ids, rows, mode, text)
    for end in range(size - 1, 0, -1):
        _swap(lo, lo + end, scores, ids, rows)
        _sift(lo, 0, end, scores, ids, rows, mode, text)


@njit(cache=True)
def _sift(lo, root, end, scores, ids, rows, mode, text):
    """The heap of entries ``lo`` to ``lo + end - 1`` (each comes after its children: the one
    that comes last at the root) restored below ``root``."""
    while 2 * root + 1 < end:
        child = 2 * root + 1
        if child + 1 < end and _before(lo + child, lo + child + 1, scores, ids, rows, mode, text):
            child += 1
        if not _before(lo + root, lo + child, scores, ids, rows, mode, text):
            break
        _swap(lo + root, lo + child, scores, ids, rows)
        root = child
