"""The logits kernel against plain Python: its float32 exp within EXP_ERROR, float32 cross-entropy
within its stated bound, float64 cross-entropy libm's left-to-right sum bit for bit, and the
counts and top-1 over rows longer than one scan block (ties, -0.0, infinities, NaN)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit

from mobeval.kernels.logits import (
    EXP_ERROR,
    SCAN_BLOCK,
    cross_entropy_error_bound,
    exp_f32,
    logits_rows,
)

F32 = np.float32
LOWEST = -87.5


@njit(cache=True)
def _exp_all(d):
    out = np.empty_like(d)
    for i in range(d.size):
        out[i] = exp_f32(d[i])
    return out


def _exponent_arguments() -> np.ndarray:
    """Random float32 in [-87.5, 0] (uniform and log-uniform), and the edges of the range
    reduction: +-0, subnormals, k ln 2 and k ln 2 +- ln 2 / 2 with their float32 neighbours."""
    rng = np.random.default_rng(7)
    values = [
        rng.uniform(LOWEST, 0.0, 100_000),
        -np.exp(rng.uniform(math.log(1e-45), math.log(87.5), 100_000)),
        [0.0, -0.0, -1e-45, -1e-38, -1e-30, -1e-7, LOWEST],
    ]
    for k in range(0, 127):
        for centre in (k * math.log(2.0), (k + 0.5) * math.log(2.0)):
            c = F32(-centre)
            values.append([c, np.nextafter(c, F32(0)), np.nextafter(c, F32(-100))])
    d = np.concatenate([np.asarray(v, dtype=np.float64) for v in values]).astype(F32)
    return d[(d >= LOWEST) & (d <= 0)]


def test_exp_f32_relative_error_within_exp_error():
    d = _exponent_arguments()
    got = _exp_all(d)
    assert got.dtype == np.float32
    worst = max(
        abs(float(g) - math.exp(float(v))) / math.exp(float(v))
        for g, v in zip(got.tolist(), d.tolist(), strict=True)
    )
    assert worst <= EXP_ERROR, (worst, worst / 2.0**-24)
    assert float(exp_f32(F32(0.0))) == 1.0
    assert float(exp_f32(F32(-0.0))) == 1.0


def test_exp_f32_below_its_range_is_e_to_the_lowest():
    floor = float(exp_f32(F32(LOWEST)))
    assert 0.0 < floor < 1.1e-38
    for d in (-87.6, -100.0, -1e30, -np.inf):
        assert float(exp_f32(F32(d))) == floor


def _plain_cross_entropy(row: list[float], target: int) -> float:
    """Exact-ish float64 reference from the float32 values: fsum of libm exp, natural log."""
    m = max(row)
    if row[target] == -math.inf:
        return math.inf
    return math.log(math.fsum(math.exp(v - m) for v in row)) + (m - row[target])


def _float32_rows() -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    rows = []
    for n in (1, 2, 3, 7, 200, SCAN_BLOCK + 1, 3 * SCAN_BLOCK + 17, 10_000):
        for scale in (1e-3, 1.0, 10.0, 100.0, 1e4):
            rows.append(rng.normal(0.0, scale, n))
    rows.append(np.full(50, 3.25))  # all equal: ce = ln 50
    rows.append(np.r_[1e38, rng.normal(0, 1, 30)])  # one dominant logit
    rows.append(np.r_[3e38, -3e38, 1.0, 0.0])  # x - m overflows float32 to -inf
    rows.append(np.r_[1e-45, -1e-45, 0.0, -0.0, 1e-40])  # subnormals and signed zeros
    rows.append(np.r_[-np.inf, -np.inf, 0.5, -np.inf, 2.0])  # masked classes
    rows.append(rng.integers(-3, 4, 1000) / 2)  # many ties
    rows.append(np.linspace(-200, 0, 2000))  # terms across the whole exp range
    return [np.asarray(r, dtype=np.float64).astype(F32) for r in rows]


def test_float32_cross_entropy_within_the_stated_bound():
    rng = np.random.default_rng(4)
    checked = 0
    for row in _float32_rows():
        targets = sorted({0, len(row) - 1, int(np.argmax(row)), int(rng.integers(len(row)))})
        for t in targets:
            if row[t] == -np.inf:
                continue
            *_, ce, bad = logits_rows(row[None, :], np.array([t]), True)
            want = _plain_cross_entropy(row.tolist(), t)
            assert not bad[0]
            assert abs(ce[0] - want) <= cross_entropy_error_bound(len(row), want), (
                len(row),
                t,
                ce[0],
                want,
            )
            checked += 1
    assert checked > 100


def test_float32_special_rows():
    rows = np.array([[-np.inf, 1.0, 2.0], [-np.inf, -np.inf, -np.inf], [0.0, 0.0, 0.0]], dtype=F32)
    *_, ce, bad = logits_rows(rows, np.array([0, 1, 2]), True)
    assert not bad.any()
    assert ce[0] == np.inf  # a -inf target
    assert np.isnan(ce[1])  # softmax of only -inf is 0/0
    assert abs(ce[2] - math.log(3.0)) <= cross_entropy_error_bound(3, math.log(3.0))


def test_float64_cross_entropy_is_libm_added_left_to_right():
    rng = np.random.default_rng(5)
    x = rng.normal(0, 3, (300, 257))
    y = rng.integers(0, 257, 300)
    *_, ce, _ = logits_rows(x, y, True)
    for i in range(300):
        row = x[i].tolist()
        m = max(row)
        s = 0.0
        for v in row:
            s += math.exp(v - m)
        assert ce[i] == math.log(s) + (m - row[y[i]]), i


def _plain_row(row: list[float], t: int) -> tuple[int, int, int, int, bool]:
    """(greater, equal before, equal after, first arg-max, bad) as np.argmax / the spec say."""
    x = row[t]
    greater = sum(v > x for v in row)
    before = sum(v == x for v in row[:t])
    after = sum(v == x for v in row[t + 1 :])
    bad = any(v != v or v == math.inf for v in row)
    best = 0
    for j, v in enumerate(row):
        if v > row[best]:
            best = j
    return greater, before, after, best, bad


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_counts_and_top1_over_scan_blocks(dtype):
    rng = np.random.default_rng(6)
    n = 3 * SCAN_BLOCK + 5
    rows, targets = [], []
    for _ in range(60):
        row = rng.integers(-4, 5, n).astype(np.float64) / 4  # many ties, the max in every block
        kind = rng.integers(6)
        if kind == 1:
            row[rng.integers(n, size=5)] = 9.0  # one max value in a few places
        elif kind == 2:
            row[:] = -0.0
            row[rng.integers(n, size=3)] = 0.0  # -0.0 == 0.0: the first index is the arg-max
        elif kind == 3:
            row[rng.integers(n)] = -np.inf
        elif kind == 4:
            row[:] = -np.inf
        elif kind == 5:
            row[rng.integers(n)] = rng.choice([np.nan, np.inf])
        rows.append(row)
        t = int(rng.choice([0, n - 1, SCAN_BLOCK - 1, SCAN_BLOCK, int(rng.integers(n))]))
        targets.append(t)
    x = np.array(rows, dtype=dtype)
    g, lower, higher, top1, _, bad = logits_rows(x, np.array(targets), False)
    for i, row in enumerate(x.tolist()):
        greater, before, after, best, is_bad = _plain_row(row, targets[i])
        assert bad[i] == is_bad, i
        if is_bad:
            continue
        assert (g[i], lower[i], higher[i], top1[i]) == (greater, before, after, best), i
