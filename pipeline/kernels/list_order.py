"""Each user's list put in its scoring order inside its own row block, in one pass.

The rows arrive grouped by user (``offsets[u]`` to ``offsets[u + 1]``), each user's rows in file
order. A score order ranks a list by score, highest first, and breaks ties by the item id:

* ``TEXT_DESC``: the id compared as text, the greater first: trec_eval sorts a query's documents
  by ``sim`` descending, then ``strcmp`` of the docnos descending (``form_res_rels.c``,
  ``comp_sim_docno``); an integer id compares as its decimal digits (``"9" > "10"``, ``"-"``
  below every digit), a string id as its code, whose order is the strings' byte order;
* ``ID_ASC``: the id's own order, the smaller first.

Rows equal in score and id keep their file order (the sort is stable). A list already in its
order, as a recommender writes its top k, is checked in one pass and left as it is; the others are
sorted in their block (insertion sort up to :data:`SHORT` rows, else heapsort: O(n log n), no
memory beyond the block). Units in blocks on threads (:func:`~mobeval.kernels.blocks.run_blocks`);
no row moves to another user's block, so the user column needs no permutation.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mobeval.kernels.blocks import readonly, run_blocks

TEXT_DESC, ID_ASC = 0, 1
SHORT = 32  # lists of up to this many rows are sorted by insertion
USERS_PER_BLOCK = 1024  # fewer users than this are ordered in one block (no thread)


def list_order(offsets, scores, ids, mode: int, ids_text: bool) -> np.ndarray | None:
    """The permutation of all rows (int64) that puts each user's rows in ``mode``'s order, or
    None when every list is in that order already.

    Args:
        offsets: int64 ``[U + 1]`` row offsets of the users' blocks.
        scores: float64 scores, higher first.
        ids: int64 item keys: the ids themselves (``ids_text`` True: compared as their decimal
            text under ``TEXT_DESC``), or codes whose order is the ids' order.
        mode: ``TEXT_DESC`` or ``ID_ASC``.
    """
    offsets = readonly(offsets, np.int64)
    scores, ids = readonly(scores, np.float64), readonly(ids, np.int64)
    text = mode == TEXT_DESC and ids_text
    order = np.arange(scores.shape[0], dtype=np.int64)
    moved = np.zeros(offsets.shape[0] - 1, dtype=np.bool_)
    args = (offsets, scores, ids, np.int64(mode), text, order, moved)
    run_blocks(_order_units, offsets.shape[0] - 1, *args, grain=USERS_PER_BLOCK)
    return order if moved.any() else None


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
def _before(i, j, scores, ids, mode, text):
    """Whether row ``i`` comes before row ``j`` in ``mode``'s order (ties: the earlier row)."""
    if scores[i] != scores[j]:
        return scores[i] > scores[j]
    if ids[i] != ids[j]:
        if mode == TEXT_DESC:
            if text:
                return _text_cmp(ids[i], ids[j]) > 0
            return ids[i] > ids[j]
        return ids[i] < ids[j]
    return i < j


@njit(cache=True, nogil=True)
def _order_units(offsets, scores, ids, mode, text, order, moved, first, last):
    """Users ``first`` to ``last - 1``: each block of ``order`` (its own row numbers on entry)
    sorted by :func:`_before`; ``moved[u]`` set when user ``u``'s rows changed places."""
    for u in range(first, last):
        lo, hi = offsets[u], offsets[u + 1]
        ordered = True
        for r in range(lo + 1, hi):
            if _before(r, r - 1, scores, ids, mode, text):
                ordered = False
                break
        if ordered:
            continue
        moved[u] = True
        if hi - lo <= SHORT:
            for r in range(lo + 1, hi):
                row = order[r]
                k = r
                while k > lo and _before(row, order[k - 1], scores, ids, mode, text):
                    order[k] = order[k - 1]
                    k -= 1
                order[k] = row
        else:
            _heapsort(order[lo:hi], scores, ids, mode, text)


@njit(cache=True)
def _heapsort(block, scores, ids, mode, text):
    """``block`` (row numbers) sorted in place by :func:`_before` (J. W. J. Williams, CACM 7(6),
    1964, the heap built bottom-up as in R. W. Floyd, CACM 7(12), 1964): the entry that comes
    last is kept at the root, swapped to the end, and the heap shrinks by one."""
    n = block.shape[0]
    for step in range(n + n // 2 - 1, 0, -1):
        if step >= n:
            root, end = step - n, n
        else:
            block[0], block[step] = block[step], block[0]
            root, end = 0, step
        while 2 * root + 1 < end:
            child = 2 * root + 1
            if child + 1 < end and _before(block[child], block[child + 1], scores, ids, mode, text):
                child += 1
            if not _before(block[root], block[child], scores, ids, mode, text):
                break
            block[root], block[child] = block[child], block[root]
            root = child
