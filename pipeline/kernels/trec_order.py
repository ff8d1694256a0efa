"""trec_eval's order of a run, each document judged (:func:`rank_and_judge`): the input of every
measure kernel in :mod:`mobeval.kernels.trec`.

trec_eval (``form_res_rels.c``, ``comp_sim_docno``) sorts a query's documents by score descending,
then docno descending in byte order (``strcmp``); the code is written from that definition, not
taken from trec_eval.
"""

from __future__ import annotations

import numpy as np

from mobeval.kernels.blocks import readonly, run_blocks
from mobeval.kernels.borrow import borrowed
from mobeval.kernels.jit import njit

#: A retrieved document the qrels of its query do not list.
NONPOOL = -1
#: A retrieved document judged negative.
UNJUDGED = -2


@njit(cache=True)
def _grouped(codes, ngroups):
    """A counting sort of rows by group code (a code < 0: the row is left out): ``start``
    (``ngroups + 1`` offsets) and ``rows``, the rows of group ``g`` at ``start[g]:start[g + 1]``
    in their order."""
    counts = np.zeros(ngroups + 1, dtype=np.int64)
    for i in range(codes.size):
        if codes[i] >= 0:
            counts[codes[i] + 1] += 1
    start = np.cumsum(counts)
    fill = start[:-1].copy()
    rows = np.empty(start[-1], dtype=np.int64)
    for i in range(codes.size):
        if codes[i] >= 0:
            rows[fill[codes[i]]] = i
            fill[codes[i]] += 1
    return start, rows


def rank_and_judge(
    run_data,
    run_offsets,
    run_q,
    score,
    qrels_data,
    qrels_offsets,
    qrels_q,
    qrels_rel,
    nq,
    max_docs,
    judged_only,
    docno_ascending,
):
    """Each query's list in trec_eval's order, cut to ``max_docs`` (< 0: no cut), each
    document's judgment looked up (``NONPOOL`` when the qrels of its query do not list it,
    ``UNJUDGED`` when judged negative), unjudged ones dropped when ``judged_only``. Returns
    ``off``, ``rel``, the run line of the first document a list repeats and the qrels line of
    the first document a query judges twice (-1 when none; "first": of the first query, in code
    order, that has one).

    trec_eval's order (``form_res_rels.c``, ``comp_sim_docno``) is score descending, then docno
    descending (``strcmp`` of the texts: byte order); ``docno_ascending`` breaks ties the other
    way, as ir_measures' Python providers do. A docno is the bytes
    ``run_data[run_offsets[i]:run_offsets[i + 1]]`` of run line ``i`` (``qrels_data``,
    ``qrels_offsets`` for a judgment); ``run_q``, ``qrels_q``: query code per line (a run line of
    -1, not a qrels query, is skipped); ``qrels_rel``: one judgment a line.

    Grouping is a counting sort by query; then each query on its own, blocks of queries on
    threads (:func:`mobeval.kernels.blocks.run_blocks`), in one pass: its run and qrels docnos
    merge sorted together in byte order (on their first 8 bytes, then the rest), which numbers
    its distinct docnos and matches each document with its judgment, and its run lines, taken
    in that docno order, sorted stably by score descending. As trec_eval, a query's documents
    are sorted on their own, with no table of every docno. The inputs are passed to Numba
    read-only (:func:`mobeval.kernels.blocks.readonly`): one compiled kernel for every caller."""
    start, rows = _grouped(readonly(run_q, np.int32), nq)
    qstart, qrows = _grouped(readonly(qrels_q, np.int32), nq)
    run_data, qrels_data = readonly(run_data, np.uint8), readonly(qrels_data, np.uint8)
    run_offsets, qrels_offsets = readonly(run_offsets, np.int64), readonly(qrels_offsets, np.int64)
    score, qrels_rel = readonly(score, np.float64), readonly(qrels_rel, np.int64)
    rel = np.empty(start[-1], dtype=np.int64)
    kept = np.zeros(nq, dtype=np.int64)
    repeated = np.full(nq, -1, dtype=np.int64)
    judged_twice = np.full(nq, -1, dtype=np.int64)
    args = (run_data, run_offsets, score, start, rows)
    args += (qrels_data, qrels_offsets, qrels_rel, qstart, qrows)
    args += (max_docs, judged_only, docno_ascending, rel, kept, repeated, judged_twice)
    run_blocks(_ranked_and_judged, nq, *args, grain=QUERIES_PER_BLOCK)
    off = np.zeros(nq + 1, dtype=np.int64)
    np.cumsum(kept, out=off[1:])
    if off[-1] < rel.size:
        _moved_up(rel, start, off)
    return off, rel[: off[-1]], _first_found(repeated), _first_found(judged_twice)


def _first_found(lines: np.ndarray) -> int:
    """The first of per-query line numbers that is not -1 (-1 when none is)."""
    found = lines[lines >= 0]
    return int(found[0]) if found.size else -1


#: Queries a block of :func:`run_blocks` holds at least.
QUERIES_PER_BLOCK = 64


@njit(nogil=True, cache=True)
def _ranked_and_judged(
    run_data,
    run_offsets,
    score,
    start,
    rows,
    qrels_data,
    qrels_offsets,
    qrels_rel,
    qstart,
    qrows,
    max_docs,
    judged_only,
    docno_ascending,
    rel,
    kept,
    repeated,
    judged_twice,
    first,
    last,
):
    """Queries ``first`` to ``last - 1`` of :func:`rank_and_judge`: query ``g``'s judgments in
    rank order at ``rel[start[g]:start[g] + kept[g]]``, its first repeated run line and twice
    judged qrels line (or -1). A query's lines are numbered locally: its run lines ``0 ..
    n_run - 1``, then its judgments."""
    widest = 0
    for g in range(first, last):
        widest = max(widest, start[g + 1] - start[g] + qstart[g + 1] - qstart[g])
    data_of = np.empty(widest, dtype=np.bool_)  # True: a run line's docno
    begin = np.empty(widest, dtype=np.int64)
    end = np.empty(widest, dtype=np.int64)
    key = np.empty(widest, dtype=np.uint64)
    order = np.empty(widest, dtype=np.int64)
    spare = np.empty(widest, dtype=np.int64)
    code = np.empty(widest, dtype=np.int64)  # each local line's docno number in byte order
    judged = np.empty(widest, dtype=np.int64)  # by docno number: its judgment
    stamp = np.full(widest, -1, dtype=np.int64)  # by docno number: g when query g judges it
    seen = np.full(widest, -1, dtype=np.int64)  # by docno number: g when query g retrieves it
    by_docno = np.empty(widest, dtype=np.int64)
    negated = np.empty(widest, dtype=np.float64)
    run = (run_data, run_offsets, score, start, rows)
    qrels = (qrels_data, qrels_offsets, qrels_rel, qstart, qrows)
    outs = (rel, kept, repeated, judged_twice)
    scratch = (data_of, begin, end, key, order, spare, code, judged, stamp, seen, by_docno, negated)
    _rank_queries(run, qrels, outs, scratch, max_docs, judged_only, docno_ascending, first, last)


@njit(cache=True)
def _rank_queries(run, qrels, outs, scratch, max_docs, judged_only, docno_ascending, first, last):
    """:func:`_ranked_and_judged`' loop over its queries, on borrowed views of its arrays
    (:mod:`mobeval.kernels.borrow`: a comparison's calls count no reference)."""
    run_data, run_offsets, score, start, rows = borrowed(*run)
    qrels_data, qrels_offsets, qrels_rel, qstart, qrows = borrowed(*qrels)
    rel, kept, repeated, judged_twice = borrowed(*outs)
    data_of, begin, end, key, order, spare, code, judged, stamp, seen, by_docno, negated = borrowed(
        *scratch
    )
    for g in range(first, last):
        n_run = start[g + 1] - start[g]
        n = n_run + qstart[g + 1] - qstart[g]
        for k in range(n):
            if k < n_run:
                line = rows[start[g] + k]
                begin[k], end[k] = run_offsets[line], run_offsets[line + 1]
                key[k] = _prefix(run_data, begin[k], end[k])
            else:
                line = qrows[qstart[g] + k - n_run]
                begin[k], end[k] = qrels_offsets[line], qrels_offsets[line + 1]
                key[k] = _prefix(qrels_data, begin[k], end[k])
            data_of[k] = k < n_run
            order[k] = k
        width = 1  # bottom-up merge sort of the local lines by docno
        while width < n:
            for lo in range(0, n, 2 * width):
                mid, hi = min(lo + width, n), min(lo + 2 * width, n)
                a, b, k = lo, mid, lo
                while a < mid and b < hi:
                    x, y = order[a], order[b]
                    if key[y] < key[x] or (
                        key[y] == key[x]
                        and _docno_before(y, x, data_of, begin, end, run_data, qrels_data)
                    ):
                        spare[k] = y
                        b += 1
                    else:
                        spare[k] = x
                        a += 1
                    k += 1
                spare[k : k + mid - a] = order[a:mid]
                k += mid - a
                spare[k : k + hi - b] = order[b:hi]
            order, spare = spare, order
            width *= 2
        number = -1
        runs_seen = 0
        for k in range(n):
            y = order[k]
            if k == 0:
                number = 0
            else:
                x = order[k - 1]
                if key[x] < key[y] or _docno_before(
                    x, y, data_of, begin, end, run_data, qrels_data
                ):
                    number += 1
            code[y] = number
            if y < n_run:  # the run lines in docno order, descending (or ascending)
                at = runs_seen if docno_ascending else n_run - 1 - runs_seen
                by_docno[at] = y
                runs_seen += 1
        for k in range(n_run, n):
            r = qrows[qstart[g] + k - n_run]
            if stamp[code[k]] == g and judged_twice[g] < 0:
                judged_twice[g] = r
            stamp[code[k]] = g
            judged[code[k]] = qrels_rel[r]
        for k in range(n_run):
            negated[k] = -score[rows[start[g] + by_docno[k]]]
        ranked = np.argsort(negated[:n_run], kind="mergesort")  # stable: ties keep docno order
        if max_docs >= 0 and ranked.size > max_docs:
            ranked = ranked[:max_docs]
        out = start[g]
        for j in ranked:
            y = by_docno[j]
            doc = code[y]
            if seen[doc] == g and repeated[g] < 0:
                repeated[g] = rows[start[g] + y]
            seen[doc] = g
            if stamp[doc] != g:
                value = NONPOOL
            elif judged[doc] < 0:
                value = UNJUDGED
            else:
                value = judged[doc]
            if judged_only and value < 0:
                continue
            rel[out] = value
            out += 1
        kept[g] = out - start[g]


@njit(cache=True)
def _moved_up(values, start, off):
    """Each query's values moved from ``values[start[g]:]`` to ``values[off[g]:off[g + 1]]``
    (``off[g] <= start[g]``: moved in order, one at a time, nothing is overwritten unread)."""
    for g in range(off.size - 1):
        shift = start[g] - off[g]
        for i in range(off[g], off[g + 1]):
            values[i] = values[i + shift]


@njit(cache=True)
def _bytes_before(a_data, a, a_end, b_data, b, b_end):
    """Whether ``a_data[a:a_end]`` sorts strictly before ``b_data[b:b_end]`` in byte order."""
    for k in range(min(a_end - a, b_end - b)):
        if a_data[a + k] != b_data[b + k]:
            return a_data[a + k] < b_data[b + k]
    return a_end - a < b_end - b


@njit(cache=True)
def _prefix(data, start, end):
    """The first 8 bytes of ``data[start:end]`` as a big-endian integer, zero padded: a prefix
    before another is a key that sorts before or equal to it."""
    key = np.uint64(0)
    for k in range(8):
        byte = data[start + k] if start + k < end else 0
        key = (key << np.uint64(8)) | np.uint64(byte)
    return key


@njit(cache=True)
def _docno_before(x, y, data_of, begin, end, run_data, qrels_data):
    """Whether docno ``x`` of a query sorts strictly before docno ``y`` in byte order (each in
    ``run_data`` where ``data_of`` says so, else in ``qrels_data``)."""
    if data_of[x]:
        if data_of[y]:
            return _bytes_before(run_data, begin[x], end[x], run_data, begin[y], end[y])
        return _bytes_before(run_data, begin[x], end[x], qrels_data, begin[y], end[y])
    if data_of[y]:
        return _bytes_before(qrels_data, begin[x], end[x], run_data, begin[y], end[y])
    return _bytes_before(qrels_data, begin[x], end[x], qrels_data, begin[y], end[y])
