"""GEO-BLEU and DTW per uid-day, bit-exact with the HuMob / GIS Cup 2025 reference.

Reference: yahoojapan/geobleu, commit d9efb0f (``geobleu/seq_eval.py``), the GIS Cup 2025 metric;
paper: T. Shimizu et al., "GEO-BLEU: similarity measure for geospatial sequences", SIGSPATIAL 2022.
The definition we follow is ``docs/geobleu.md`` (in our own words); this module reproduces it
operation by operation so that every uid-day value has the reference's bits.

GEO-BLEU of a generated sequence ``g`` (length ``Lg``) against a reference ``r`` (length ``Lr``)::

    prox(a, b)  = exp(-beta * sqrt(dx**2 + dy**2))            (grid cells, math.exp = libm)
    w_n(i, j)   = prox(g[i], r[j]) * prox(g[i+1], r[j+1]) * ... * prox(g[i+n-1], r[j+n-1])
                  (multiplied left to right, so w_n = w_{n-1} * prox(g[i+n-1], r[j+n-1]) exactly)
    p_n         = (sum of w_n over a one-to-one matching of n-grams) / (Lg - n + 1)
    N           = min(max_n, Lg, Lr)
    BP          = 1 if Lg > Lr else exp(1 - Lr / Lg)
    GEO-BLEU    = BP * exp((log p_1 + ... + log p_N) / N)          (0.0 as soon as one p_n == 0)

The reference's matching is *greedy*: all pairs (i, j), listed i-major, are stable-sorted by w_n
descending (ties keep (i, j) order); the list is scanned and (i, j) is accepted when neither i nor
j is used yet; the accepted weights are summed sequentially in acceptance order. ``optimal=True``
replaces it by a maximum-weight one-to-one assignment (Hungarian algorithm); that is *not* the
reference metric and is offered only to measure how much greedy matching loses. The batch
kernels receive ``optimal`` as True or None (:func:`_matching`): Numba removes a branch on ``x is
None`` when the argument is None before it compiles anything, so a run of the greedy matching
never compiles the Hungarian algorithm (about a quarter of the GEO-BLEU kernel's compile time).

DTW (``calc_dtw_orig``, scale 2 so that the unit is km)::

    D[0, 0] = 0, D[i, 0] = D[0, j] = inf,
    D[i, j] = dist(g[i-1], r[j-1]) / scale + min(D[i-1, j], D[i, j-1], D[i-1, j-1]),
    DTW     = D[Lg, Lr]                                          (not normalised by path length)

Per uid, the reference averages the day values with ``np.mean`` (pairwise summation, see
:func:`mean_per_unit`).

Every exp and log here is libm's (Numba's math.exp / math.log), the reference's wherever NumPy
uses libm. For NumPy's own (AVX-512) exp, :func:`geobleu_pn_days` takes a proximity table filled
by the caller and returns the p_n, which :mod:`mobeval.metrics.trajectory` finishes with NumPy.
"""

from __future__ import annotations

import math

import numpy as np

from mobeval.kernels.blocks import readonly, run_blocks
from mobeval.kernels.codes import MAX_TABLE
from mobeval.kernels.jit import njit
from mobeval.kernels.pairwise import pairwise_sum

#: Fewest uid-days per block of work on a thread (a block allocates its scratch buffers once).
BLOCK = 32


# --------------------------------------------------------------------------- point distances


def _coord_span(gen_x, gen_y, ref_x, ref_y) -> int:
    """Largest |coordinate difference| possible between any generated and reference point
    (0 without generated points)."""
    if gen_x.size == 0:
        return 0
    arrays = (gen_x, gen_y, ref_x, ref_y)
    return max(int(a.max()) for a in arrays) - min(int(a.min()) for a in arrays)


@njit(cache=True)
def _proximity(dx, dy, beta):
    """exp(-beta * sqrt(dx**2 + dy**2)) exactly as the reference evaluates it (float64, libm)."""
    fx = float(dx)
    fy = float(dy)
    return math.exp(-beta * math.sqrt(fx * fx + fy * fy))


@njit(cache=True)
def _proximity_table(size, beta):
    """prox for every squared distance k = dx**2 + dy**2 < size (same bits as direct)."""
    table = np.empty(size)
    for k in range(size):
        table[k] = math.exp(-beta * math.sqrt(float(k)))
    return table


def _distance_table(size, scale):
    """sqrt(k) / scale for every squared distance k < size (same bits as direct: IEEE-754 square
    root and division are correctly rounded, in NumPy as in libm; NumPy, not a kernel, so that a
    first run does not compile one)."""
    return np.sqrt(np.arange(size, dtype=np.float64)) / scale


# --------------------------------------------------------------------------- n-gram matching


@njit(cache=True, inline="always")
def _first_at(bits, base, top):
    """Offset of the first ``top`` in ``bits`` from ``base`` on (it must occur)."""
    j = base
    while bits[j] != top:
        j += 1
    return j - base


@njit(cache=True, inline="always")
def _first_max(bits, base, size):
    """(offset, value) of the first largest of ``bits[base : base + size]`` (size >= 1).

    A max then a search: the integer max vectorises, a running arg-max does not."""
    top = bits[base]
    for j in range(base + 1, base + size):
        top = max(top, bits[j])
    return _first_at(bits, base, top), top


@njit(cache=True, inline="always")
def _best_free_column(bits, base, m2, used_j):
    """(column, bits) of the largest weight among the free columns of the row starting at
    ``bits[base]`` (ties: smallest column); (-1, -1) when every column is used."""
    best = -1
    top = np.int64(-1)
    for j in range(m2):
        v = bits[base + j]
        if v > top and not used_j[j]:
            top = v
            best = j
    return best, top


@njit(cache=True)
def _greedy_sum(weights, stride, m1, m2, rows, used_j):
    """Greedy one-to-one matching sum of the m1 x m2 weights >= 0 (row i at
    ``weights[i * stride]``). ``rows``: int64 scratch of >= 3 * m1 + m2 whose first m1 entries
    hold each row's first largest column and the next m1 that weight's bits (see
    :func:`_row_maxima`); ``used_j``: bool scratch of >= m2.

    The reference stable-sorts all pairs by weight descending (ties in i-major (i, j) order) and
    repeatedly accepts the first pair whose row and column are both free, summing sequentially in
    acceptance order. The first free pair of that order is the pair of largest weight, ties
    broken by smallest i then smallest j. We find it without sorting: every free row keeps its
    best free column and that weight's bits (``best``, ``best_bits``; a matched row holds -1);
    the accepted pair is in the first row of largest ``best_bits``. Weights are compared through
    their IEEE-754 bit patterns read as int64 (``bits``): for floats >= 0 the integer order is the
    float order and equal bits are equal weights, and an integer max vectorises where a float max
    does not (NaN semantics) without fast-math. Each column keeps the list of
    rows whose best it is (``head``, ``after``), so that only those rows rescan when it is taken.
    O(L^2) work per order typically, O(L^3) when all rows share one preference order; the sum
    has the reference's bits (same pairs, same order).
    """
    bits = weights.view(np.int64)
    best = rows[:m1]
    best_bits = rows[m1 : 2 * m1]
    after = rows[2 * m1 : 3 * m1]
    head = rows[3 * m1 : 3 * m1 + m2]
    for j in range(m2):
        used_j[j] = False
        head[j] = -1
    for i in range(m1):
        after[i] = head[best[i]]
        head[best[i]] = i
    total = 0.0
    need = min(m1, m2)
    for step in range(need):
        top, _ = _first_max(best_bits, 0, m1)
        taken = best[top]
        total += weights[top * stride + taken]
        if step + 1 == need:
            break
        best_bits[top] = -1
        used_j[taken] = True
        i = head[taken]
        while i >= 0:
            next_i = after[i]
            if i != top:
                column, best_bits[i] = _best_free_column(bits, i * stride, m2, used_j)
                best[i] = column
                after[i] = head[column]
                head[column] = i
            i = next_i
    return total


@njit(cache=True)
def _optimal_sum(weights, stride, m1, m2):
    """Maximum-weight one-to-one matching sum (Hungarian algorithm, O(min^2 * max)) of the
    m1 x m2 weights (row i at ``weights[i * stride]``).

    Shortest augmenting paths with potentials on the cost -w; rows are the smaller side. The
    matched weights are summed in increasing generated-index order.
    """
    transpose = m1 > m2
    rows = m2 if transpose else m1
    cols = m1 if transpose else m2
    u = np.zeros(rows + 1)
    v = np.zeros(cols + 1)
    match = np.zeros(cols + 1, dtype=np.int64)  # match[col] = row (1-based), 0 = free
    way = np.zeros(cols + 1, dtype=np.int64)
    minv = np.empty(cols + 1)
    used = np.empty(cols + 1, dtype=np.bool_)
    for r in range(1, rows + 1):
        match[0] = r
        c0 = 0
        minv[:] = np.inf
        used[:] = False
        while True:
            used[c0] = True
            r0 = match[c0]
            delta = np.inf
            c1 = 0
            for c in range(1, cols + 1):
                if not used[c]:
                    if transpose:
                        cost = -weights[(c - 1) * stride + (r0 - 1)]
                    else:
                        cost = -weights[(r0 - 1) * stride + (c - 1)]
                    cur = cost - u[r0] - v[c]
                    if cur < minv[c]:
                        minv[c] = cur
                        way[c] = c0
                    if minv[c] < delta:
                        delta = minv[c]
                        c1 = c
            for c in range(cols + 1):
                if used[c]:
                    u[match[c]] += delta
                    v[c] -= delta
                else:
                    minv[c] -= delta
            c0 = c1
            if match[c0] == 0:
                break
        while c0 != 0:
            c1 = way[c0]
            match[c0] = match[c1]
            c0 = c1
    pair_of_gen = np.full(m1, -1, dtype=np.int64)
    for c in range(1, cols + 1):
        if match[c] != 0:
            if transpose:
                pair_of_gen[c - 1] = match[c] - 1
            else:
                pair_of_gen[match[c] - 1] = c - 1
    total = 0.0
    for i in range(m1):
        if pair_of_gen[i] >= 0:
            total += weights[i * stride + pair_of_gen[i]]
    return total


@njit(cache=True)
def _next_weights(previous, prox, weights, shift, stride, m1, m2, rows):
    """``weights[k] = previous[k] * prox[k + shift]`` over the m1 x m2 block (row stride
    ``stride``; ``previous`` may be ``weights`` itself), and each row's first largest column
    and its weight's bits into ``rows[:m1]`` and ``rows[m1 : 2 * m1]`` (:func:`_greedy_sum`)."""
    bits = weights.view(np.int64)
    for i in range(m1):
        base = i * stride
        top = np.int64(-1)
        for k in range(base, base + m2):
            weights[k] = previous[k] * prox[k + shift]
            top = max(top, bits[k])
        rows[i] = _first_at(bits, base, top)
        rows[m1 + i] = top


@njit(cache=True)
def _row_maxima(weights, stride, m1, m2, rows):
    """Each row's first largest column into ``rows[:m1]`` and its weight's bits into
    ``rows[m1 : 2 * m1]`` (:func:`_greedy_sum`)."""
    bits = weights.view(np.int64)
    for i in range(m1):
        rows[i], rows[m1 + i] = _first_max(bits, i * stride, m2)


@njit(cache=True)
def _geobleu_pn(gx, gy, rx, ry, max_n, beta, optimal, table, prox, weights, rows, used_j, pn):
    """p_1 .. p_N of one generated sequence (gx, gy) against one reference (rx, ry), into ``pn``.

    Returns N = min(max_n, Lg, Lr) (0 when Lr == 0). ``table`` maps a squared distance to its
    proximity (empty: compute directly with libm); ``prox`` and ``weights`` (>= Lg*Lr floats),
    ``rows`` (int64, >= 4 * max(Lg, Lr)) and ``used_j`` (bool, >= Lr) are scratch buffers.
    """
    lg = gx.size
    lr = rx.size
    if lr == 0:
        return 0
    n_max = min(max_n, lg, lr)
    use_table = table.size > 0
    for i in range(lg):
        for j in range(lr):
            dx = np.int64(rx[j]) - np.int64(gx[i])
            dy = np.int64(ry[j]) - np.int64(gy[i])
            prox[i * lr + j] = table[dx * dx + dy * dy] if use_table else _proximity(dx, dy, beta)
    for n in range(1, n_max + 1):
        m1 = lg - n + 1
        m2 = lr - n + 1
        if n == 1:
            _row_maxima(prox, lr, m1, m2, rows)
        else:
            # w_n(i, j) = w_{n-1}(i, j) * prox(i+n-1, j+n-1) (w_1 = prox), row stride Lr
            previous = prox if n == 2 else weights
            _next_weights(previous, prox, weights, (n - 1) * (lr + 1), lr, m1, m2, rows)
        w = prox if n == 1 else weights
        if optimal is None or not optimal:  # None: Numba prunes the other branch (module doc)
            total = _greedy_sum(w, lr, m1, m2, rows, used_j)
        else:
            total = _optimal_sum(w, lr, m1, m2)
        pn[n - 1] = total / float(m1)
    return n_max


@njit(cache=True, inline="always")
def _geobleu_seq(gx, gy, rx, ry, max_n, beta, optimal, table, prox, weights, rows, used_j, pn):
    """GEO-BLEU of one generated sequence against one reference, with libm's log and exp.

    Buffers as :func:`_geobleu_pn` (``pn``: >= max_n floats). Lg must be > 0; Lr == 0 gives NaN
    (the reference's gmean of no precision).
    """
    lg = gx.size
    lr = rx.size
    n_max = _geobleu_pn(
        gx, gy, rx, ry, max_n, beta, optimal, table, prox, weights, rows, used_j, pn
    )
    if n_max == 0:
        return np.nan
    for n in range(n_max):
        if pn[n] == 0.0:
            return 0.0
        pn[n] = math.log(pn[n])
    bp = 1.0 if lg > lr else math.exp(1.0 - lr / float(lg))
    # gmean = exp(np.mean(log p)); the start as an int64 variable, not the literal 0 (each literal
    # argument would compile its own specialisation of pairwise_sum)
    return bp * math.exp(pairwise_sum(pn, np.int64(0), n_max) / n_max)


@njit(cache=True)
def _dtw_seq(gx, gy, rx, ry, scale, free_start, table, prev, cur):
    """DTW of one generated sequence against one reference (``prev``/``cur``: Lr+1 scratch).

    ``free_start`` sets the whole row D[0, :] to 0 (the reference before 2025-05-28, HuMob
    2023/2024), so that the path may start anywhere along the reference.
    """
    lg = gx.size
    lr = rx.size
    use_table = table.size > 0
    prev[0] = 0.0
    for j in range(1, lr + 1):
        prev[j] = 0.0 if free_start else np.inf
    for i in range(1, lg + 1):
        cur[0] = np.inf
        for j in range(1, lr + 1):
            dx = np.int64(rx[j - 1]) - np.int64(gx[i - 1])
            dy = np.int64(ry[j - 1]) - np.int64(gy[i - 1])
            if use_table:
                cost = table[dx * dx + dy * dy]
            else:
                fx = float(dx)
                fy = float(dy)
                cost = math.sqrt(fx * fx + fy * fy) / scale
            cur[j] = cost + min(prev[j], cur[j - 1], prev[j - 1])
        for j in range(lr + 1):
            prev[j] = cur[j]
    return prev[lr]


# --------------------------------------------------------------------------- batch entry points


def _table_size(day_offsets, gen_x, gen_y, ref_x, ref_y) -> int:
    """Entries of a lookup table by squared distance (2 * span**2 + 1) for a batch of days.

    0 (compute directly) when the table would exceed MAX_TABLE or the number of point pairs to
    evaluate (sum over days of length**2), so that a single uid does not pay for a city-sized
    table.
    """
    size = 2 * _coord_span(gen_x, gen_y, ref_x, ref_y) ** 2 + 1
    pairs = int((np.diff(day_offsets) ** 2).sum())
    return size if size <= MAX_TABLE and size <= pairs else 0


def proximity_table_size(gen_x, gen_y, ref_x, ref_y) -> int:
    """Entries a proximity table needs to cover every point pair: 2 * span**2 + 1."""
    if gen_x.size == 0 or ref_x.size == 0:
        return 1  # no pair
    return 2 * _coord_span(gen_x, gen_y, ref_x, ref_y) ** 2 + 1


@njit(nogil=True, cache=True)
def _geobleu_units(
    day_offsets, gen_x, gen_y, ref_x, ref_y, max_n, beta, optimal, table, out, first, last
):
    """GEO-BLEU of days ``first`` to ``last - 1`` into ``out`` (scratch allocated once, for the
    longest day)."""
    prox, weights, rows, used_j, pn = _scratch(day_offsets, max_n, first, last)
    for day in range(first, last):
        s = day_offsets[day]
        e = day_offsets[day + 1]
        out[day] = _geobleu_seq(
            gen_x[s:e], gen_y[s:e], ref_x[s:e], ref_y[s:e], max_n, beta, optimal, table, prox,
            weights, rows, used_j, pn,
        )  # fmt: skip


@njit(nogil=True, cache=True)
def _pn_units(
    day_offsets, gen_x, gen_y, ref_x, ref_y, max_n, optimal, table, pn_out, n_out, first, last
):
    """p_1..p_N of days ``first`` to ``last - 1`` into the rows of ``pn_out`` and N into
    ``n_out`` (scratch allocated once, for the longest day)."""
    prox, weights, rows, used_j, _ = _scratch(day_offsets, max_n, first, last)
    for day in range(first, last):
        s = day_offsets[day]
        e = day_offsets[day + 1]
        n_out[day] = _geobleu_pn(
            gen_x[s:e], gen_y[s:e], ref_x[s:e], ref_y[s:e], max_n, 0.0, optimal, table, prox,
            weights, rows, used_j, pn_out[day],
        )  # fmt: skip


@njit(cache=True, inline="always")
def _scratch(day_offsets, max_n, first, last):
    """Scratch buffers of :func:`_geobleu_pn` for the longest of days ``first`` to ``last - 1``:
    prox, weights, rows, used_j, pn."""
    longest = 0
    for day in range(first, last):
        longest = max(longest, day_offsets[day + 1] - day_offsets[day])
    return (
        np.empty(longest * longest),
        np.empty(longest * longest),
        np.empty(4 * longest, dtype=np.int64),
        np.empty(longest, dtype=np.bool_),
        np.empty(max_n),
    )


def _matching(optimal):
    """The ``optimal`` argument of the kernels: True, or None for the greedy matching, so that a
    run of the reference's matching does not compile the Hungarian algorithm (module doc)."""
    return True if optimal else None


def _points(day_offsets, gen_x, gen_y, ref_x, ref_y):
    """The batch's arrays as the kernels take them: read-only, C-contiguous int64."""
    return tuple(readonly(a, np.int64) for a in (day_offsets, gen_x, gen_y, ref_x, ref_y))


def geobleu_days(day_offsets, gen_x, gen_y, ref_x, ref_y, max_n, beta, optimal):
    """GEO-BLEU of every uid-day; day i is rows ``day_offsets[i]:day_offsets[i+1]``.

    Rows are sorted by (uid, d, t) and aligned position by position between the generated and
    the reference arrays, so every day has equal lengths (BP = 1) and N = min(max_n, L).
    Returns float64[n_days]. ``optimal`` selects the maximum-weight matching (non-reference).
    Every exp and log is libm's (see :func:`geobleu_pn_days` for other ones). Days in blocks on
    threads (:func:`mobeval.kernels.blocks.run_blocks`).
    """
    points = _points(day_offsets, gen_x, gen_y, ref_x, ref_y)
    n_days = max(points[0].size - 1, 0)
    out = np.empty(n_days)
    table = _proximity_table(_table_size(*points), float(beta))
    args = (int(max_n), float(beta), _matching(optimal), table, out)
    run_blocks(_geobleu_units, n_days, *points, *args, grain=BLOCK)
    return out


def geobleu_pn_days(day_offsets, gen_x, gen_y, ref_x, ref_y, max_n, optimal, table):
    """p_1 .. p_N of every uid-day, with the proximities read from ``table`` (by dx**2 + dy**2).

    Returns (pn float64[n_days, max_n], n int64[n_days]): row i holds day i's p_1..p_N in its
    first N = min(max_n, L) entries (the rest is 1.0). The caller finishes GEO-BLEU = BP *
    exp(mean(log p)) with whatever exp and log it must reproduce. ``table`` must cover every
    point pair (:func:`proximity_table_size` entries).
    """
    points = _points(day_offsets, gen_x, gen_y, ref_x, ref_y)
    table = readonly(table, np.float64)
    if table.size < proximity_table_size(*points[1:]):
        raise ValueError("the proximity table does not cover every point pair")
    n_days = max(points[0].size - 1, 0)
    pn_out = np.ones((n_days, int(max_n)))
    n_out = np.zeros(n_days, dtype=np.int64)
    args = (int(max_n), _matching(optimal), table, pn_out, n_out)
    run_blocks(_pn_units, n_days, *points, *args, grain=BLOCK)
    return pn_out, n_out


@njit(cache=True)
def mean_rows(values, counts):
    """np.mean of ``values[i, :counts[i]]`` for every row i bit for bit;
    NaN for a row of no value."""
    n_rows = values.shape[0]
    out = np.empty(n_rows)
    for i in range(n_rows):
        n = counts[i]
        out[i] = pairwise_sum(values[i], np.int64(0), n) / n if n > 0 else np.nan
    return out


@njit(nogil=True, cache=True)
def _dtw_units(day_offsets, gen_x, gen_y, ref_x, ref_y, scale, free_start, table, out, first, last):
    """DTW of days ``first`` to ``last - 1`` into ``out`` (scratch allocated once)."""
    longest = 0
    for day in range(first, last):
        longest = max(longest, day_offsets[day + 1] - day_offsets[day])
    prev = np.empty(longest + 1)
    cur = np.empty(longest + 1)
    for day in range(first, last):
        s = day_offsets[day]
        e = day_offsets[day + 1]
        out[day] = _dtw_seq(
            gen_x[s:e], gen_y[s:e], ref_x[s:e], ref_y[s:e], scale, free_start, table, prev, cur
        )


def dtw_days(day_offsets, gen_x, gen_y, ref_x, ref_y, scale, free_start=False):
    """DTW (``D[0,0] = 0``, cost = dist / scale, not normalised) of every uid-day.

    Same layout as :func:`geobleu_days`. Returns float64[n_days]. ``free_start=True`` gives the
    pre-2025 reference (``D[0, :] = 0``).
    """
    points = _points(day_offsets, gen_x, gen_y, ref_x, ref_y)
    n_days = max(points[0].size - 1, 0)
    out = np.empty(n_days)
    table = _distance_table(_table_size(*points), float(scale))
    args = (float(scale), bool(free_start), table, out)
    run_blocks(_dtw_units, n_days, *points, *args, grain=BLOCK)
    return out


@njit(cache=True)
def _mean_per_unit(unit_offsets, values):
    """:func:`mean_per_unit` once its arrays are typed."""
    n_units = unit_offsets.size - 1
    out = np.empty(max(n_units, 0))
    for u in range(n_units):
        s = unit_offsets[u]
        n = unit_offsets[u + 1] - s
        out[u] = pairwise_sum(values, s, n) / n if n > 0 else np.nan
    return out


def mean_per_unit(unit_offsets, values):
    """np.mean of ``values[unit_offsets[u]:unit_offsets[u+1]]`` for every unit, bit for bit.

    np.mean = (0.0 + pairwise_sum(values)) / count; an empty unit gives NaN.
    """
    # values writable, as the scratch arrays pairwise_sum also sums: one specialisation of it
    values = np.require(values, np.float64, ["C", "W"])
    return _mean_per_unit(readonly(unit_offsets, np.int64), values)


# --------------------------------------------------------------------------- single pairs


@njit(cache=True)
def geobleu_seq(gen_x, gen_y, ref_x, ref_y, max_n, beta, optimal):
    """GEO-BLEU of one (possibly unequal-length) pair, as ``calc_geobleu_orig``; Lg must be > 0."""
    size = max(gen_x.size * ref_x.size, 1)
    longest = max(gen_x.size, ref_x.size, 1)
    return _geobleu_seq(
        gen_x,
        gen_y,
        ref_x,
        ref_y,
        max_n,
        beta,
        optimal,
        np.empty(0),
        np.empty(size),
        np.empty(size),
        np.empty(4 * longest, dtype=np.int64),
        np.empty(longest, dtype=np.bool_),
        np.empty(max_n),
    )


def geobleu_pn_seq(gen_x, gen_y, ref_x, ref_y, max_n, optimal, table):
    """p_1 .. p_N of one pair with the proximities read from ``table`` (see
    :func:`geobleu_pn_days`): (pn float64[max_n], N). Lg must be > 0; N = 0 when Lr == 0."""
    if table.size < proximity_table_size(gen_x, gen_y, ref_x, ref_y):
        raise ValueError("the proximity table does not cover every point pair")
    return _geobleu_pn_seq(gen_x, gen_y, ref_x, ref_y, max_n, optimal, table)


@njit(cache=True)
def _geobleu_pn_seq(gen_x, gen_y, ref_x, ref_y, max_n, optimal, table):
    """:func:`geobleu_pn_seq` once its table is checked."""
    size = max(gen_x.size * ref_x.size, 1)
    longest = max(gen_x.size, ref_x.size, 1)
    pn = np.ones(max_n)
    n = _geobleu_pn(
        gen_x,
        gen_y,
        ref_x,
        ref_y,
        max_n,
        0.0,
        optimal,
        table,
        np.empty(size),
        np.empty(size),
        np.empty(4 * longest, dtype=np.int64),
        np.empty(longest, dtype=np.bool_),
        pn,
    )
    return pn, n


@njit(cache=True)
def dtw_seq(gen_x, gen_y, ref_x, ref_y, scale, free_start):
    """DTW of one (possibly unequal-length) pair, as ``calc_dtw_orig``."""
    return _dtw_seq(
        gen_x,
        gen_y,
        ref_x,
        ref_y,
        scale,
        free_start,
        np.empty(0),
        np.empty(ref_x.size + 1),
        np.empty(ref_x.size + 1),
    )
