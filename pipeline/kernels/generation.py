"""Per-trajectory measures of a generated population beyond MoveSim's (TrajGDM, MobilityGPT,
DiffTraj's Length, memorisation), over CSR arrays.

A chunk is flat arrays: ``offsets`` (trajectory ``i`` holds points ``offsets[i]:offsets[i+1]``,
in time order) and one value per point (coordinates ``x``, ``y`` as float64, or integer keys).

* :func:`jumps`: ``|z_{j+1} - z_j|`` between consecutive points of a trajectory, optionally
  rounded to float32 as TrajGDM's ``Evaluation_metrics.distance_array`` gets it from torch
  (``((dx**2 + dy**2) ** 0.5)`` of an integer tensor is a float32 square root; rounding the
  float64 root to float32 gives its bits, double rounding being innocuous for a square root);
  ``sphere`` > 0: ``x``, ``y`` are latitudes and longitudes and the jump is the great-circle
  distance on a sphere of that radius (:mod:`mobeval.kernels.geodesic`);
* :func:`trip_lengths`: the sum of the lengths of a trajectory's links, every point's
  (``distinct`` False) or, as MobilityGPT's ``geo[geo['geo_id'].isin(traj)]['length'].sum()``,
  each distinct link once in link-table order, summed as ``np.sum`` sums (pairwise);
* :func:`link_radii`: MobilityGPT's radius of gyration of a trajectory, over its distinct links
  in link-table order (``geo[geo['geo_id'].isin(traj)]``) at each link's point ``(x_k, y_k)``:
  ``mean_k((x_k - mean(x))**2 + (y_k - mean(y))**2)`` (the mean squared distance to the centre,
  no square root), each mean ``np.mean``'s pairwise sum over the count; 0 without a link;
* :func:`connected_trajectories`: how many trajectories step along edges of the link graph only
  (every consecutive pair ``(l_j, l_{j+1})`` an edge; a one-link trajectory is not);
* :func:`trajectory_hashes`: two independent 64-bit hashes (SplitMix64's finalizer chained over
  the length and every key) of each trajectory's key sequence: equal sequences, equal hashes;
  two different sequences collide with probability about 2^-128;
"""

from __future__ import annotations

import numpy as np

from mobeval.kernels.buckets import splitmix64
from mobeval.kernels.divergence import pairwise_sum
from mobeval.kernels.geodesic import haversine as great_circle
from mobeval.kernels.jit import njit

#: The two hashes' seeds (any two distinct 64-bit constants).
SEEDS = (0x9E3779B97F4A7C15, 0xD1B54A32D192ED03)


@njit(cache=True)
def jumps(offsets, x, y, float32, sphere=0.0):
    """The jump lengths of every trajectory, in order (module docstring)."""
    n_traj = offsets.size - 1
    out = np.empty(max(x.size - n_traj, 0))
    k = 0
    for i in range(n_traj):
        for j in range(offsets[i], offsets[i + 1] - 1):
            if sphere > 0:
                d = great_circle(x[j], y[j], x[j + 1], y[j + 1], sphere)
            else:
                d = np.sqrt((x[j + 1] - x[j]) ** 2 + (y[j + 1] - y[j]) ** 2)
            out[k] = np.float64(np.float32(d)) if float32 else d
            k += 1
    return out[:k]


@njit(cache=True)
def trip_lengths(offsets, rows, lengths, distinct):
    """Each trajectory's length: the sum of ``lengths[rows[j]]`` over its points (``rows``: each
    point's row in the link table, -1 where the link is not in it, which adds nothing);
    ``distinct``: each row once, in increasing row order (module docstring)."""
    n_traj = offsets.size - 1
    out = np.empty(n_traj)
    for i in range(n_traj):
        mine = rows[offsets[i] : offsets[i + 1]]
        mine = mine[mine >= 0]
        if distinct:
            mine = np.unique(mine)
        out[i] = pairwise_sum(lengths[mine]) if mine.size else 0.0
    return out


@njit(cache=True)
def link_radii(offsets, rows, x, y):
    """Each trajectory's radius of gyration (module docstring): ``rows`` each point's row in the
    link table (-1: not in it, left out), ``x``, ``y`` the table's points by row."""
    n_traj = offsets.size - 1
    out = np.zeros(n_traj)
    for i in range(n_traj):
        mine = rows[offsets[i] : offsets[i + 1]]
        mine = np.unique(mine[mine >= 0])
        if mine.size:
            xs, ys = x[mine], y[mine]
            dx = xs - pairwise_sum(xs) / mine.size
            dy = ys - pairwise_sum(ys) / mine.size
            out[i] = pairwise_sum(dx * dx + dy * dy) / mine.size
    return out


@njit(cache=True)
def connected_trajectories(offsets, nodes, edges, n_nodes):
    """How many trajectories are connected (module docstring): ``nodes`` each point's index in
    the graph's sorted link ids (-1: not in the graph), ``edges`` the sorted keys ``origin *
    n_nodes + destination`` of the graph's edges."""
    count = 0
    for i in range(offsets.size - 1):
        lo, hi = offsets[i], offsets[i + 1]
        ok = hi - lo > 1
        for j in range(lo, hi - 1):
            if not ok:
                break
            a, b = nodes[j], nodes[j + 1]
            key = a * n_nodes + b
            at = np.searchsorted(edges, key)
            ok = a >= 0 and b >= 0 and at < edges.size and edges[at] == key
        count += ok
    return count


@njit(cache=True)
def trajectory_hashes(offsets, keys_x, keys_y, seed_a, seed_b):
    """(hash_a, hash_b), int64, of each trajectory's (length, key_x, key_y, ...) sequence."""
    n_traj = offsets.size - 1
    out_a = np.empty(n_traj, dtype=np.int64)
    out_b = np.empty(n_traj, dtype=np.int64)
    for i in range(n_traj):
        lo, hi = offsets[i], offsets[i + 1]
        a = splitmix64(np.uint64(seed_a) ^ np.uint64(hi - lo))
        b = splitmix64(np.uint64(seed_b) ^ np.uint64(hi - lo))
        for j in range(lo, hi):
            for key in (keys_x[j], keys_y[j]):
                a = splitmix64(a ^ np.uint64(key))
                b = splitmix64(b + np.uint64(key))
        out_a[i] = np.int64(a)
        out_b[i] = np.int64(b)
    return out_a, out_b
