"""Exact summaries with extreme values: +-inf, NaN, subnormals, +-1.7e308 (issue 8, item 1).

The oracle is plain Python: the ``Fraction`` sum of the finite values rounded once by ``float()``
(an OverflowError means +-inf), with the infinities' rule of ``mobeval.kernels.exact_sum``: +inf if
some value is +inf and none -inf, -inf likewise, NaN if both; NaN values are skipped. Anything that
once crashed the process (an out-of-bounds write) runs in a subprocess, checked by its exit code.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobeval.kernels.exact_sum import BLOCK_ROWS, CARRY_EVERY, ExactColumnSums
from tests.conftest import REPO_ROOT

MAX = sys.float_info.max
TINY = 5e-324  # smallest subnormal
EXTREMES = [
    MAX,
    -MAX,
    1.7e308,
    -1.7e308,
    1e308,
    -1e308,
    TINY,
    -TINY,
    sys.float_info.min,
    -sys.float_info.min,
    2.2250738585072009e-308,  # largest subnormal
    1.0,
    -1.0,
    0.0,
    -0.0,
    math.inf,
    -math.inf,
    math.nan,
]
FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True),
    st.sampled_from(EXTREMES),
    st.floats(min_value=1e300, max_value=MAX),
    st.floats(min_value=-MAX, max_value=-1e300),
)
FINITE = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=True),
    st.sampled_from([v for v in EXTREMES if math.isfinite(v)]),
)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def oracle_sum(values: list[float]) -> float:
    """The definition, in plain Python."""
    has_pos = any(v == math.inf for v in values)
    has_neg = any(v == -math.inf for v in values)
    if has_pos and has_neg:
        return math.nan
    if has_pos:
        return math.inf
    if has_neg:
        return -math.inf
    total = sum((Fraction(v) for v in values if math.isfinite(v)), Fraction(0))
    try:
        return float(total)
    except OverflowError:
        return math.inf if total > 0 else -math.inf


def same(a: float, b: float) -> bool:
    """Equal bits up to the NaN payload."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def fold(rows: np.ndarray, cuts: list[int], n_cols: int) -> ExactColumnSums:
    """Add ``rows`` in the chunks that ``cuts`` delimit."""
    acc = ExactColumnSums([f"c{i}" for i in range(n_cols)])
    bounds = [0, *sorted(cuts), len(rows)]
    for lo, hi in zip(bounds, bounds[1:], strict=False):
        acc.add(rows[lo:hi])
    return acc


def check(acc: ExactColumnSums, matrix: np.ndarray) -> None:
    for c, got in enumerate(acc.sums().tolist()):
        column = matrix[:, c].tolist()
        want = oracle_sum(column)
        assert same(got, want), (c, got, want, column)
        assert acc.counts[c] == sum(not math.isnan(v) for v in column)


@st.composite
def blocks(draw, values=FLOATS, max_rows=40):
    n_cols = draw(st.integers(1, 3))
    n_rows = draw(st.integers(0, max_rows))
    flat = draw(st.lists(values, min_size=n_rows * n_cols, max_size=n_rows * n_cols))
    matrix = np.array(flat, dtype=np.float64).reshape(n_rows, n_cols)
    order = draw(st.permutations(range(n_rows)))
    cuts = draw(st.lists(st.integers(0, n_rows), max_size=6))
    return matrix, order, cuts


@SETTINGS
@given(blocks())
def test_any_order_and_chunking_gives_the_oracle(block):
    matrix, order, cuts = block
    n_cols = matrix.shape[1]
    check(fold(matrix, [], n_cols), matrix)
    check(fold(matrix[list(order)], cuts, n_cols), matrix)
    check(fold(matrix, list(range(len(matrix) + 1)), n_cols), matrix)  # one row at a time


@SETTINGS
@given(blocks(), st.data())
def test_merging_partial_folds_gives_the_oracle(block, data):
    matrix, order, cuts = block
    n_cols = matrix.shape[1]
    shuffled = matrix[list(order)]
    split = data.draw(st.integers(0, len(matrix)))
    left = fold(shuffled[:split], [c for c in cuts if c <= split], n_cols)
    right = fold(shuffled[split:], [], n_cols)
    if data.draw(st.booleans()):
        left, right = right, left
    left.merge(right)
    check(left, matrix)


@SETTINGS
@given(st.lists(FINITE, max_size=60))
def test_rounding_agrees_with_math_fsum(values):
    """A second, independent rounding: math.fsum, where it does not overflow on the way."""
    try:
        want = math.fsum(values)
    except OverflowError:
        return
    acc = ExactColumnSums(["x"])
    acc.add(np.array(values, dtype=np.float64).reshape(-1, 1))
    got = acc.sums()[0]
    assert got == want or (got == 0.0 and want == 0.0), (got, want)


@pytest.mark.parametrize(
    ("values", "want"),
    [
        ([1e308, 1e308, -1e308], 1e308),
        ([MAX, MAX, -MAX, -MAX, TINY], TINY),
        ([MAX, MAX], math.inf),
        ([-MAX, -MAX, MAX], -MAX),
        ([math.inf, 1.0, -1e308, 2.0], math.inf),
        ([-math.inf, math.nan, 3.0], -math.inf),
        ([math.inf, -math.inf, 1.0], math.nan),
        ([math.nan, math.nan], 0.0),
        ([0.1] * 10, float(sum(Fraction(0.1) for _ in range(10)))),
    ],
)
def test_examples_of_the_definition(values, want):
    acc = ExactColumnSums(["x"])
    acc.add(np.array(values).reshape(-1, 1))
    assert same(acc.sums()[0], want)


def test_worst_case_carries_across_blocks():
    """Every value puts a ~2^52 high part into the same bin, over more rows than a block holds:
    the carry bound is what keeps the int64 bins exact."""
    worst = math.ldexp(2.0 - 2.0**-52, 2016 - 1023)  # exponent field 2016: p % 32 == 31
    n = BLOCK_ROWS + 3 * CARRY_EVERY + 7
    matrix = np.empty((n, 3))
    matrix[:, 0] = worst
    matrix[:, 1] = -worst
    matrix[:, 2] = MAX
    matrix[::2, 2] = -MAX
    want = [
        float(Fraction(worst) * n),
        float(-Fraction(worst) * n),
        float(Fraction(MAX) * (n // 2) - Fraction(MAX) * (n - n // 2)),
    ]
    for cuts in ([], [1, CARRY_EVERY + 1, BLOCK_ROWS - 1], list(range(0, n, 5000))):
        got = fold(matrix, cuts, 3).sums().tolist()
        assert got == want, cuts


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_former_crashes_exit_cleanly_in_a_subprocess():
    """An infinity followed by many finite values, and overflowing finite sums, once wrote past
    a fixed buffer (malloc(): invalid size / SIGSEGV)."""
    result = run_python(
        """
        import json
        import numpy as np
        from mobeval.kernels.exact_sum import ExactColumnSums
        out = []
        for first in (np.inf, -np.inf, np.nan, 1e308):
            acc = ExactColumnSums(["a", "b"])
            block = np.tile([[1.0, -1e308], [2.5, 1e308], [1e-300, 1e308]], (5000, 1))
            block[0] = first
            for lo in range(0, len(block), 777):
                acc.add(block[lo : lo + 777])
            out.append([repr(v) for v in acc.sums().tolist()])
        print(json.dumps(out))
        """
    )
    assert result.returncode == 0, result.stderr[-2000:]
    got = json.loads(result.stdout)
    for first, sums in zip((math.inf, -math.inf, math.nan, 1e308), got, strict=True):
        block = [[1.0, -1e308], [2.5, 1e308], [1e-300, 1e308]] * 5000
        block[0] = [first, first]
        matrix = np.array(block)
        want = [oracle_sum(matrix[:, c].tolist()) for c in range(2)]
        assert all(same(float(g), w) for g, w in zip(sums, want, strict=True)), (first, sums)


def test_random_bit_patterns_over_several_blocks_in_a_subprocess():
    """Uniformly random float64 bit patterns (every exponent, NaN and inf included), more rows than
    a block, in two orders and chunkings; column 1 has its infinities replaced by 0."""
    result = run_python(
        """
        import json
        import numpy as np
        from mobeval.kernels.exact_sum import BLOCK_ROWS, ExactColumnSums
        rng = np.random.default_rng(8)
        shape = (BLOCK_ROWS + 4321, 2)
        matrix = rng.integers(0, 2**64, size=shape, dtype=np.uint64).view(np.float64)
        matrix[:, 1][np.isinf(matrix[:, 1])] = 0.0
        out = []
        for order, cuts in ((None, []), (rng.permutation(len(matrix)), [1, 999, 70000])):
            acc = ExactColumnSums(["a", "b"])
            rows = matrix if order is None else matrix[order]
            for lo, hi in zip([0, *cuts], [*cuts, len(rows)]):
                acc.add(rows[lo:hi])
            out.append([acc.sums().tobytes().hex(), acc.counts.tolist()])
        print(json.dumps(out))
        """
    )
    assert result.returncode == 0, result.stderr[-2000:]
    (first, first_counts), (second, second_counts) = json.loads(result.stdout)
    assert first == second and first_counts == second_counts
    rng = np.random.default_rng(8)
    shape = (BLOCK_ROWS + 4321, 2)
    matrix = rng.integers(0, 2**64, size=shape, dtype=np.uint64).view(np.float64)
    matrix[:, 1][np.isinf(matrix[:, 1])] = 0.0
    got = np.frombuffer(bytes.fromhex(first), dtype=np.float64).tolist()
    for c in range(2):
        column = matrix[:, c].tolist()
        assert same(got[c], oracle_sum(column))
        assert first_counts[c] == sum(not math.isnan(v) for v in column)


def run_cli(*argv: str) -> subprocess.CompletedProcess:
    """``mobeval ARGV`` in a subprocess: a crash shows as its exit code, never kills pytest."""
    main = "import sys\nfrom mobeval.cli import main\nsys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", main, *argv],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def summary(out, model: str) -> dict[str, tuple[float, int]]:
    frame = pl.read_parquet(out / "summary" / f"city={out.parent.name}" / f"model={model}")
    return {m: (v, n) for m, v, n in frame.select("metric", "value", "n").iter_rows()}


def cross_entropy(row: list[float], target: int) -> float:
    """-log softmax(row)[target] with Python floats (stable log-sum-exp)."""
    m = max(row)
    return math.log(math.fsum(math.exp(v - m) for v in row)) + m - row[target]


def logits_case(tmp_path, name: str, logits: np.ndarray, targets: np.ndarray):
    np.save(tmp_path / f"{name}.npy", logits)
    np.save(tmp_path / "targets.npy", targets)
    out = tmp_path / f"out_{name}"
    result = run_cli(
        "logits",
        "--logits",
        str(tmp_path / f"{name}.npy"),
        "--targets",
        str(tmp_path / "targets.npy"),
        "--metrics",
        "cross_entropy,mrr",
        "--chunk-rows",
        "64",
        "--out",
        str(out),
        "--quiet",
    )
    return result, out


def expected_logits(logits: np.ndarray, targets: np.ndarray) -> dict[str, float]:
    rows = logits.tolist()
    ce = [cross_entropy(r, int(t)) for r, t in zip(rows, targets, strict=True)]
    rr = [1.0 / (1 + sum(v > r[int(t)] for v in r)) for r, t in zip(rows, targets, strict=True)]
    return {"cross_entropy": oracle_sum(ce) / len(rows), "mrr": oracle_sum(rr) / len(rows)}


def test_logits_with_a_minus_inf_target_logit(tmp_path):
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(300, 4))
    targets = rng.integers(0, 4, 300)
    logits[7, targets[7]] = -np.inf  # that row's loss is +inf
    result, out = logits_case(tmp_path, "minus_inf", logits, targets)
    assert result.returncode == 0, result.stderr[-2000:]
    got = summary(out, "minus_inf")
    want = expected_logits(logits, targets)
    assert want["cross_entropy"] == math.inf
    assert got["cross_entropy"] == (math.inf, 300)
    assert got["mrr"][0] == pytest.approx(want["mrr"], rel=1e-12)


@pytest.mark.parametrize("with_overflow", [False, True])
def test_logits_of_1e308(tmp_path, with_overflow):
    """Huge but finite logits: rows whose loss is 0, 1e308 and (target -1e308) +inf."""
    logits = np.tile([[1e308, -1e308, 0.0]], (200, 1))
    targets = np.zeros(200, dtype=np.int64)  # loss 0
    targets[3] = 2  # loss 1e308
    logits[97] = [0.0, 7e307, -1e308]  # loss 7e307: the total 1.7e308 is still finite
    if with_overflow:
        targets[150] = 1  # loss 1e308 + 1e308 overflows: +inf
    result, out = logits_case(tmp_path, "huge", logits, targets)
    assert result.returncode == 0, result.stderr[-2000:]
    got = summary(out, "huge")
    want = expected_logits(logits, targets)
    assert math.isinf(want["cross_entropy"]) == with_overflow
    assert got["cross_entropy"] == (want["cross_entropy"], 200)
    assert got["mrr"][0] == pytest.approx(want["mrr"], rel=1e-12)


def test_logits_row_of_only_minus_inf_is_bad_input(tmp_path):
    logits = np.zeros((10, 3))
    logits[4] = -np.inf
    result, out = logits_case(tmp_path, "all_minus_inf", logits, np.zeros(10, dtype=np.int64))
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert "every logit is -inf" in result.stderr and "row 4" in result.stderr
    assert not (out / "summary").exists()


def test_recs_mse_with_a_rating_of_1e308(tmp_path):
    users = 150
    ratings = pl.DataFrame(
        {
            "user_id": np.repeat(np.arange(users), 2),
            "item_id": np.tile([1, 2], users),
            "rating": np.tile([4.0, 3.0], users),
        }
    )
    scores = np.tile([3.5, 2.0], users)
    scores[0] = 1e308  # user 0: squared error overflows to +inf, absolute error 1e308
    scores[5] = -1e308
    recs = pl.DataFrame(
        {
            "user_id": ratings["user_id"],
            "item_id": ratings["item_id"],
            "score": scores,
            "rank": np.tile([1, 2], users).astype(np.int32),
        }
    )
    ratings.write_parquet(tmp_path / "ratings.parquet")
    recs.write_parquet(tmp_path / "huge.parquet")
    out = tmp_path / "out"
    result = run_cli(
        "recs",
        "--ratings",
        str(tmp_path / "ratings.parquet"),
        "--recs",
        str(tmp_path / "huge.parquet"),
        "--metrics",
        "mse,mae,rmse",
        "--convention",
        "clayrs",
        "--chunk-rows",
        "50",
        "--out",
        str(out),
        "--quiet",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    per_user: dict[str, list[float]] = {"mse": [], "mae": [], "rmse": []}
    for u in range(users):
        diffs = [float(scores[2 * u]) - 4.0, float(scores[2 * u + 1]) - 3.0]
        per_user["mse"].append((diffs[0] * diffs[0] + diffs[1] * diffs[1]) / 2)
        per_user["mae"].append((abs(diffs[0]) + abs(diffs[1])) / 2)
        per_user["rmse"].append(math.sqrt(per_user["mse"][-1]))
    got = summary(out, "huge")
    for metric, values in per_user.items():
        assert got[metric] == (oracle_sum(values) / users, users), metric
    assert got["mse"][0] == math.inf and math.isfinite(got["mae"][0])


@pytest.mark.parametrize("n_cols", [0, 1, 3])
def test_pickled_states_merge(n_cols):
    """A state pickled (what a gather sends, on Spark too), then merged into another: the same
    sums as the oracle, with no columns at all as well."""
    import pickle

    matrix = np.array([[1.5, -MAX, TINY][:n_cols], [2.0, MAX, 1e308][:n_cols]]).reshape(2, n_cols)
    names = [f"c{i}" for i in range(n_cols)]
    first, second = ExactColumnSums(names), ExactColumnSums(names)
    if n_cols:  # a state with no columns is never added to (a scorer with no metric columns)
        first.add(matrix[:1])
        second.add(matrix[1:])
    first = pickle.loads(pickle.dumps(first))
    first.merge(pickle.loads(pickle.dumps(second)))
    check(first, matrix)
