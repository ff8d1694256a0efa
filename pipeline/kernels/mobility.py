"""Per-day mobility measures of a population and their histograms (MoveSim's, KDD 2020).

A chunk is flat arrays: ``day_offsets`` (day ``i`` holds rows ``day_offsets[i]:day_offsets[i+1]``,
in time order), planar coordinates ``x``, ``y`` (float64) and integer location ``codes`` (equal
codes: the same location). For each day with points ``z_1 .. z_n``:

* jumps ``|z_{j+1} - z_j|^2`` (``squared``, MoveSim's ``get_distances``) or ``|z_{j+1} - z_j|``;
* the radius of gyration ``r_g^2 = mean_j |z_j - mean(z)|^2`` (``squared``, MoveSim's
  ``get_gradius``) or ``r_g``; means are ``np.mean``'s (pairwise sums divided by ``n``);
* ``sphere`` > 0: ``x``, ``y`` are latitudes and longitudes (degrees) and ``|a - b|`` is the
  great-circle distance on a sphere of that radius (:func:`mobeval.kernels.geodesic.haversine`;
  0: planar); ``mean(z)`` is then the mean latitude and the mean longitude (scikit-mobility's
  ``radius_of_gyration``);
* stays: the lengths of the runs of equal consecutive codes (``last_stay`` False drops each day's
  last run, as MoveSim's ``get_durations`` does);
* the number of distinct locations (MoveSim's ``get_periodicity`` before its division by 48);
* the day's visit counts per location sorted in decreasing order, the first ``top_k`` of them
  (zeros past the day's locations) summed over days (MoveSim's I-rank, ``get_topk_visits``).
"""

from __future__ import annotations

import numpy as np

from mobeval.kernels.divergence import pairwise_sum
from mobeval.kernels.geodesic import haversine as great_circle
from mobeval.kernels.jit import njit


@njit(cache=True)
def _distance(x1, y1, x2, y2, sphere):
    """``|a - b|^2`` between two points: planar, or great-circle (module docstring)."""
    if sphere > 0:
        return great_circle(x1, y1, x2, y2, sphere) ** 2
    return (x1 - x2) ** 2 + (y1 - y2) ** 2


@njit(cache=True)
def day_measures(day_offsets, x, y, codes, squared, last_stay, top_k, sphere=0.0):
    """(jumps, radius, stays, distinct, rank_sums) of every day (module docstring)."""
    n_days = day_offsets.size - 1
    n_rows = x.size
    jumps = np.empty(n_rows - n_days)
    radius = np.empty(n_days)
    stays = np.empty(n_rows, dtype=np.int64)
    distinct = np.empty(n_days, dtype=np.int64)
    rank_sums = np.zeros(top_k, dtype=np.int64)
    n_jumps = 0
    n_stays = 0
    for day in range(n_days):
        lo, hi = day_offsets[day], day_offsets[day + 1]
        for j in range(lo, hi - 1):
            jump = _distance(x[j], y[j], x[j + 1], y[j + 1], sphere)
            jumps[n_jumps] = jump if squared else np.sqrt(jump)
            n_jumps += 1
        xs = x[lo:hi]
        ys = y[lo:hi]
        if sphere > 0:
            cx, cy = pairwise_sum(xs) / xs.size, pairwise_sum(ys) / ys.size
            d2 = np.empty(xs.size)
            for k in range(xs.size):
                d2[k] = _distance(xs[k], ys[k], cx, cy, sphere)
        else:
            dxs = xs - pairwise_sum(xs) / xs.size
            dys = ys - pairwise_sum(ys) / ys.size
            d2 = dxs**2 + dys**2
        r2 = pairwise_sum(d2) / xs.size
        radius[day] = r2 if squared else np.sqrt(r2)
        run = 1
        for j in range(lo + 1, hi):
            if codes[j] == codes[j - 1]:
                run += 1
            else:
                stays[n_stays] = run
                n_stays += 1
                run = 1
        if last_stay:
            stays[n_stays] = run
            n_stays += 1
        day_codes = np.sort(codes[lo:hi])
        counts = np.zeros(hi - lo, dtype=np.int64)
        n_locations = 0
        for j in range(day_codes.size):
            if j == 0 or day_codes[j] != day_codes[j - 1]:
                n_locations += 1
            counts[n_locations - 1] += 1
        distinct[day] = n_locations
        ranked = np.sort(counts[:n_locations])[::-1]
        for r in range(min(top_k, n_locations)):
            rank_sums[r] += ranked[r]
    return jumps, radius, stays[:n_stays], distinct, rank_sums


@njit(cache=True)
def bin_counts(values, edges, keep_outside):
    """Counts of ``values`` in the bins ``[edges[i], edges[i+1])``, the last bin closed, as
    ``np.histogram(values, edges)`` counts them (values outside are dropped); ``keep_outside``
    counts a value below the first edge in the first bin and one above the last in the last."""
    return weighted_bins(values, np.ones(values.size, dtype=np.int64), edges, keep_outside)


@njit(cache=True)
def weighted_bins(values, weights, edges, keep_outside):
    """The sum of the integer ``weights`` of the ``values`` in each bin of :func:`bin_counts`
    (``np.histogram(values, edges, weights=weights)``; NaN always dropped)."""
    n_bins = edges.size - 1
    counts = np.zeros(n_bins, dtype=np.int64)
    for k in range(values.size):
        v = values[k]
        i = np.searchsorted(edges, v, side="right") - 1
        if i == n_bins and v == edges[n_bins]:
            i = n_bins - 1
        if i < 0 or i >= n_bins:
            if not keep_outside or v != v:
                continue
            i = 0 if i < 0 else n_bins - 1
        counts[i] += weights[k]
    return counts
