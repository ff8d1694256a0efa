"""Property tests: GEO-BLEU / DTW kernels against plain-Python oracles written from the spec."""

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mobeval.kernels.geobleu import _distance_table, dtw_days, mean_per_unit
from mobeval.metrics.trajectory import dtw, geobleu
from mobeval.tasks.trajectory import score_trajectory_frame
from tests.oracles import geobleu_gmean, geobleu_precisions

SETTINGS = settings(max_examples=150, deadline=None)
cells = st.integers(min_value=1, max_value=12)  # a small grid: many ties and near-ties
points = st.tuples(cells, cells)
sequences = st.lists(points, min_size=1, max_size=9)


def oracle_geobleu(gen, ref, max_n=5, beta=0.5):
    """calc_geobleu_orig as the spec words it: pair list, stable sort, take first, delete."""

    def prox(a, b):
        return math.exp(-beta * math.sqrt((b[0] - a[0]) ** 2.0 + (b[1] - a[1]) ** 2.0))

    return geobleu_gmean(geobleu_precisions(gen, ref, prox, max_n), len(gen), len(ref))


def oracle_dtw(gen, ref, scale=2.0):
    n, m = len(gen), len(ref)
    mat = [[math.inf] * (m + 1) for _ in range(n + 1)]
    mat[0][0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            (gx, gy), (rx, ry) = gen[i - 1], ref[j - 1]
            cost = math.sqrt((rx - gx) ** 2.0 + (ry - gy) ** 2.0) / scale
            mat[i][j] = cost + min(mat[i - 1][j], mat[i][j - 1], mat[i - 1][j - 1])
    return mat[n][m]


@SETTINGS
@given(sequences, sequences, st.integers(1, 6), st.sampled_from([0.1, 0.5, 1.0]))
def test_greedy_matches_oracle_bit_for_bit(gen, ref, max_n, beta):
    assert geobleu(gen, ref, max_n=max_n, beta=beta) == oracle_geobleu(gen, ref, max_n, beta)


@SETTINGS
@given(st.lists(points, min_size=0, max_size=9), st.lists(points, min_size=0, max_size=9))
def test_dtw_matches_oracle_bit_for_bit(gen, ref):
    assert dtw(gen, ref) == oracle_dtw(gen, ref)


@pytest.mark.parametrize("scale", [2.0, 3.0, 0.7])
def test_dtw_distance_table_is_sqrt_over_scale_entry_by_entry(scale):
    table = _distance_table(100_000, scale)
    assert [float(v) for v in table] == [math.sqrt(float(k)) / scale for k in range(100_000)]


@SETTINGS
@given(
    st.lists(st.lists(st.tuples(points, points), min_size=1, max_size=9), min_size=1, max_size=6)
)
def test_dtw_days_read_from_a_table_match_oracle_bit_for_bit(days):
    """Days of the batch kernel; a last 16-point day makes the squared-distance table pay off."""
    days = [*days, [((1, 1), (12, 12))] * 16]
    offsets = np.cumsum([0] + [len(day) for day in days])
    gen, ref = ([pair[k] for day in days for pair in day] for k in (0, 1))
    gx, gy, rx, ry = (np.array([p[c] for p in side]) for side in (gen, ref) for c in (0, 1))
    values = dtw_days(offsets, gx, gy, rx, ry, 2.0)
    assert list(values) == [oracle_dtw([g for g, _ in day], [r for _, r in day]) for day in days]


@SETTINGS
@given(sequences)
def test_identical_is_one_and_zero(seq):
    assert geobleu(seq, seq) == 1.0
    assert dtw(seq, seq) == 0.0


@SETTINGS
@given(sequences, sequences)
def test_bounds_and_optimal_at_least_greedy(gen, ref):
    greedy = geobleu(gen, ref)
    optimal = geobleu(gen, ref, matching="optimal")
    assert 0.0 <= greedy <= 1.0
    assert 0.0 <= optimal <= 1.0 + 1e-12
    assert optimal >= greedy * (1 - 1e-12)


def test_optimal_beats_greedy_on_spec_example():
    gen, ref = [(10, 10), (12, 10)], [(11, 10), (9, 10)]
    assert math.isclose(geobleu(gen, ref, max_n=1), (math.exp(-0.5) + math.exp(-1.5)) / 2)
    assert math.isclose(geobleu(gen, ref, max_n=1, matching="optimal"), math.exp(-0.5))


@SETTINGS
@given(st.lists(st.integers(0, 300), min_size=1, max_size=6), st.integers(0, 2**32 - 1))
def test_mean_per_unit_is_numpy_mean(sizes, seed):
    rng = np.random.default_rng(seed)
    values = rng.random(sum(sizes)) * 10.0 ** rng.uniform(-8, 8, sum(sizes))
    offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    got = mean_per_unit(offsets, values)
    for u, size in enumerate(sizes):
        if size:
            assert got[u] == np.mean(values[offsets[u] : offsets[u + 1]])
        else:
            assert math.isnan(got[u])


@st.composite
def frames(draw):
    """Two frames of whole uids with the same (uid, d, t) steps, and a row permutation seed."""
    rows_gen, rows_ref = [], []
    for uid in range(draw(st.integers(1, 4))):
        for d in draw(st.sets(st.integers(60, 64), min_size=1, max_size=3)):
            for t in draw(st.sets(st.integers(0, 47), min_size=1, max_size=7)):
                rows_gen.append((uid, d, t, *draw(points)))
                rows_ref.append((uid, d, t, *draw(points)))
    cols = ["uid", "d", "t", "x", "y"]
    return (
        pl.DataFrame(rows_gen, schema=cols, orient="row"),
        pl.DataFrame(rows_ref, schema=cols, orient="row"),
        draw(st.integers(0, 2**32 - 1)),
    )


@settings(max_examples=60, deadline=None)
@given(frames())
def test_row_order_independence_and_day_oracle(data):
    gen, ref, seed = data
    scores = score_trajectory_frame(gen, ref)
    shuffled = score_trajectory_frame(gen.sample(fraction=1.0, shuffle=True, seed=seed), ref)
    assert scores.per_uid.equals(shuffled.per_uid)
    assert scores.per_day.equals(shuffled.per_day)
    gen_sorted, ref_sorted = gen.sort("uid", "d", "t"), ref.sort("uid", "d", "t")
    for uid, d, _, gb, dt in scores.per_day.iter_rows():
        day = (pl.col("uid") == uid) & (pl.col("d") == d)
        g = gen_sorted.filter(day).select("x", "y").rows()
        r = ref_sorted.filter(day).select("x", "y").rows()
        assert gb == oracle_geobleu(g, r)
        assert dt == oracle_dtw(g, r)
    assert ((scores.per_uid["geobleu"] >= 0) & (scores.per_uid["geobleu"] <= 1)).all()
