"""GEO-BLEU's ``exp`` option: libm (default) vs NumPy's exp / log on the running machine.

The reference (yahoojapan/geobleu) calls ``np.exp`` on one float64 scalar per point pair and
scipy's gmean ``np.exp(np.mean(np.log(p)))`` per day. NumPy computes these with libm unless the
CPU has AVX-512F, where its own SIMD exp / log differ from libm by 1 ulp on some arguments, and the
greedy matching can turn such an ulp into another matching. ``exp="libm"`` must equal the
reference algorithm computed with libm, ``exp="numpy"`` the one computed with NumPy, everywhere.

Where NumPy's exp equals libm on every grid distance (no AVX-512F), both modes coincide and the
test that shows them apart skips, printing the CPU flags it checked. Set MOBEVAL_GEOBLEU_REFERENCE
to a private checkout of yahoojapan/geobleu (the folder holding ``geobleu/seq_eval.py``; needs
scipy) to compare with the reference itself as well. This module needs numpy and numba only
(polars only for the wiring tests), so that it runs on a bare machine with AVX-512.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from mobeval.kernels.geobleu import _proximity_table
from mobeval.metrics.trajectory import (
    TrajectoryConvention,
    geobleu,
    geobleu_day_values,
    numpy_proximity_table,
)
from tests.oracles import geobleu_gmean as libm_gmean
from tests.oracles import geobleu_precisions

BETA = 0.5
GRID = 200
#: Squared distances k = dx**2 + dy**2 on a 200 x 200 grid: 0 .. 2 * 199**2.
TABLE_SIZE = 2 * (GRID - 1) ** 2 + 1
#: The README's example: a 4-step day whose greedy matching differs between libm's exp and
#: NumPy's AVX-512 exp (found among random days on an Intel Xeon with AVX-512F, NumPy 2.5.2,
#: where the reference itself printed 0.022102503158194377, exp="numpy"'s value there).
README_PAIR = (
    [(154, 36), (154, 34), (154, 36), (152, 35)],
    [(151, 32), (153, 33), (151, 34), (149, 34)],
)
README_LIBM = 0.021207941659327927


# --------------------------------------------------------------------------- machine facts


def cpu_report() -> str:
    """The CPU flags and NumPy SIMD features that decide which exp NumPy uses."""
    flags = set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    except OSError:
        pass
    avx = sorted(f for f in flags if f.startswith(("avx", "fma")))
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # numpy < 2
        from numpy.core._multiarray_umath import __cpu_features__ as features
    found = sorted(name for name, on in features.items() if on and name.startswith("AVX512"))
    return (
        f"/proc/cpuinfo avx/fma flags: {' '.join(avx) or 'none'}; "
        f"NumPy {np.__version__} AVX-512 features found: {' '.join(found) or 'none'}"
    )


def reference_args() -> np.ndarray:
    """-beta * distance for every table entry, as the reference forms it (float64)."""
    return -BETA * (np.sqrt(np.arange(TABLE_SIZE, dtype=np.float64)) / 1.0)


def differing_entries() -> tuple[int, int]:
    """(table entries, realisable grid distances) where np.exp(scalar) != libm's exp."""
    args = reference_args()
    differ = np.array([np.exp(a) != math.exp(a) for a in args])
    squares = np.arange(GRID) ** 2
    realisable = np.zeros(TABLE_SIZE, dtype=bool)
    realisable[(squares[:, None] + squares[None, :]).ravel()] = True
    return int(differ.sum()), int((differ & realisable).sum())


# --------------------------------------------------------------------------- oracles


def libm_prox(a, b):
    return math.exp(-BETA * (math.sqrt((b[0] - a[0]) ** 2.0 + (b[1] - a[1]) ** 2.0) / 1.0))


def numpy_prox(a, b):
    """calc_point_proximity as the reference evaluates it: np.sqrt then np.exp on a scalar."""
    return np.exp(-BETA * (np.sqrt((b[0] - a[0]) ** 2.0 + (b[1] - a[1]) ** 2.0) / 1.0))


def numpy_gmean(p, len_gen, len_ref):
    """BP * scipy's gmean, as the reference: np.exp(np.mean(np.log(p)))."""
    bp = 1.0 if len_gen > len_ref else np.exp(1.0 - len_ref / float(len_gen))
    with np.errstate(divide="ignore"):
        return bp * np.exp(np.mean(np.log(np.asarray(p, dtype=np.float64))))


def oracle(gen, ref, prox, gmean, max_n=5):
    """calc_geobleu_orig in plain Python with the given point proximity and gmean (the greedy
    matching: :func:`tests.oracles.geobleu_precisions`)."""
    return float(gmean(geobleu_precisions(gen, ref, prox, max_n), len(gen), len(ref)))


def humob_days(seed: int, n_days: int) -> list[tuple[list, list]]:
    """HuMob-like uid-days on the 200 x 200 grid: a generated and a real walk around the same
    places, 12..48 steps, with many near-equal distances (where an ulp can reorder pairs)."""
    rng = np.random.default_rng(seed)
    days = []
    for _ in range(n_days):
        length = int(rng.integers(12, 49))
        home = rng.integers(30, 171, size=2)
        walk_gen = home + np.cumsum(rng.integers(-2, 3, size=(length, 2)), axis=0)
        walk_ref = home + np.cumsum(rng.integers(-2, 3, size=(length, 2)), axis=0)
        gen = [tuple(int(v) for v in np.clip(p, 1, GRID)) for p in walk_gen]
        ref = [tuple(int(v) for v in np.clip(p, 1, GRID)) for p in walk_ref]
        days.append((gen, ref))
    return days


def batch(days):
    """(day_offsets, gen_x, gen_y, ref_x, ref_y) of equal-length days."""
    lengths = [len(g) for g, _ in days]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    gen = np.array([p for g, _ in days for p in g], dtype=np.int64)
    ref = np.array([p for _, r in days for p in r], dtype=np.int64)
    return (offsets, *(np.ascontiguousarray(a[:, k]) for a in (gen, ref) for k in (0, 1)))


def reference_module():
    """yahoojapan/geobleu's seq_eval from $MOBEVAL_GEOBLEU_REFERENCE, or None."""
    root = os.environ.get("MOBEVAL_GEOBLEU_REFERENCE")
    if not root:
        return None
    path = Path(root) / "geobleu" / "seq_eval.py"
    spec = importlib.util.spec_from_file_location("geobleu_reference_seq_eval", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------- tests


def test_libm_table_is_the_c_librarys_exp():
    """Numba's table is libm's exp entry by entry (no vector math library in between)."""
    table = _proximity_table(TABLE_SIZE, BETA)
    expected = np.array([math.exp(a) for a in reference_args()])
    assert np.array_equal(table, expected)


def test_numpy_table_is_np_exp_called_as_the_reference_calls_it():
    """Every realisable grid distance: the table entry is the bits of calc_point_proximity."""
    table = numpy_proximity_table(TABLE_SIZE, BETA)
    for dx in range(GRID):
        for dy in range(0, GRID, 3):
            assert table[dx * dx + dy * dy] == numpy_prox((0, 0), (dx, dy)), (dx, dy)
    assert np.array_equal(numpy_proximity_table(50, BETA), table[:50])  # cached prefix


def test_numpy_exp_and_log_are_elementwise_on_this_machine():
    """np.exp / np.log of an array give each element the bits of a call on that element alone,
    whatever the length and alignment: the one vectorised call in numpy_finish equals the
    reference's per-day calls."""
    rng = np.random.default_rng(7)
    values = np.concatenate([reference_args()[::97], -rng.exponential(30.0, 400)])
    positive = np.concatenate([rng.random(400), np.exp(values)])
    for func, data in ((np.exp, values), (np.log, positive)):
        alone = np.array([func(v) for v in data])
        assert np.array_equal(func(data), alone)
        for offset in range(1, 9):
            for length in (1, 2, 3, 5, 7, 8, 9, 15, 17):
                part = data[offset : offset + length]
                assert np.array_equal(func(part), alone[offset : offset + length])


def test_the_option_changes_exactly_the_exp(capsys):
    """exp='numpy' differs from libm only through the exp / log it calls: with libm injected it
    gives libm's bits; with a fake exp moving some entries by one ulp, exactly those table entries
    move, and every day equals the oracle run with the same fake exp (here, on any CPU)."""
    days = humob_days(11, 30)
    arrays = batch(days)
    libm = geobleu_day_values(*arrays, TrajectoryConvention())
    numpy_conv = TrajectoryConvention(exp="numpy")

    def libm_exp(values):
        return np.vectorize(math.exp, otypes=[float])(values)

    def libm_log(values):
        return np.vectorize(lambda v: math.log(v) if v > 0 else -math.inf, otypes=[float])(values)

    same = geobleu_day_values(*arrays, numpy_conv, exp_fn=libm_exp, log_fn=libm_log)
    assert np.array_equal(same, libm)

    def moved(k):
        return k % 5 == 2  # one squared distance in five

    def fake_exp(values):
        """libm's exp, one ulp up for every 5th squared distance (table calls are scalars)."""
        if np.ndim(values) == 0:
            a = float(values)
            k = round((a / -BETA) ** 2)
            return np.nextafter(math.exp(a), 2.0) if moved(k) else math.exp(a)
        return libm_exp(values)

    base = numpy_proximity_table(TABLE_SIZE, BETA, exp_fn=libm_exp)
    fake = numpy_proximity_table(TABLE_SIZE, BETA, exp_fn=fake_exp)
    changed = np.flatnonzero(base != fake)
    assert np.array_equal(changed, [k for k in range(TABLE_SIZE) if moved(k)])
    assert np.array_equal(np.nextafter(base[changed], 2.0), fake[changed])

    def fake_prox(a, b):
        return fake_exp(-BETA * (math.sqrt((b[0] - a[0]) ** 2.0 + (b[1] - a[1]) ** 2.0) / 1.0))

    faked = geobleu_day_values(*arrays, numpy_conv, exp_fn=fake_exp, log_fn=libm_log)
    expected = [oracle(g, r, fake_prox, libm_gmean) for g, r in days]
    assert np.array_equal(faked, expected)
    with capsys.disabled():
        print(f"\n  fake exp: {int((faked != libm).sum())} of {len(days)} days moved")


def test_both_modes_reproduce_their_reference_on_this_machine():
    """The point of the option, where NumPy's exp differs from libm (AVX-512F)."""
    table_diff, grid_diff = differing_entries()
    report = cpu_report()
    print(f"\n  {report}\n  np.exp != libm exp: {table_diff} of {TABLE_SIZE} table entries, "
          f"{grid_diff} realisable grid distances")  # fmt: skip
    if table_diff == 0:
        pytest.skip(f"np.exp equals libm's exp on every grid distance here ({report})")
    days = [README_PAIR, *humob_days(2025, 60)]
    arrays = batch(days)
    libm = geobleu_day_values(*arrays, TrajectoryConvention())
    numpy_mode = geobleu_day_values(*arrays, TrajectoryConvention(exp="numpy"))
    assert np.array_equal(libm, [oracle(g, r, libm_prox, libm_gmean) for g, r in days])
    assert np.array_equal(numpy_mode, [oracle(g, r, numpy_prox, numpy_gmean) for g, r in days])
    moved = np.flatnonzero(libm != numpy_mode)
    print(
        f"  days whose GEO-BLEU differs between modes: {moved.size} of {len(days)}; "
        f"largest relative difference {np.max(np.abs(libm / numpy_mode - 1), initial=0):.3g}; "
        f"README pair: libm {libm[0]!r}, numpy {numpy_mode[0]!r}"
    )


def test_numpy_mode_is_the_reference_itself():
    """With a private checkout of the reference: exp='numpy' gives its bits on this machine."""
    module = reference_module()
    if module is None:
        pytest.skip("set MOBEVAL_GEOBLEU_REFERENCE to a checkout of yahoojapan/geobleu")
    days = [README_PAIR, *humob_days(2025, 60), *humob_days(5, 40)]
    values = geobleu_day_values(*batch(days), TrajectoryConvention(exp="numpy"))
    expected = [module.calc_geobleu_orig(g, r, max_n=5, beta=BETA) for g, r in days]
    assert np.array_equal(values, expected)
    for g, r in days[:10]:  # single pairs of unequal lengths (brevity penalty, N < 5)
        for gen, ref in ((g[:3], r), (g, r[:4]), (g[:1], r[:2])):
            expected = module.calc_geobleu_orig(gen, ref, max_n=5, beta=BETA)
            assert geobleu(gen, ref, exp="numpy") == expected


def test_readme_pair_libm_value():
    """The README's libm value of its example pair (the same on every CPU)."""
    assert geobleu(*README_PAIR) == README_LIBM
    assert geobleu(*README_PAIR, exp="numpy") == oracle(*README_PAIR, numpy_prox, numpy_gmean)


def test_single_pair_modes_agree_where_np_exp_is_libm():
    """Unequal lengths (BP < 1) and degenerate pairs take the same path in both modes."""
    table_diff, _ = differing_entries()
    pairs = [
        ([(1, 2), (3, 4), (5, 5)], [(1, 3), (3, 3)]),
        ([(1, 2)], [(1, 3), (3, 3), (4, 4)]),
        ([(10, 10), (12, 10)], [(11, 10), (9, 10)]),
        ([(1, 1), (1, 1)], [(999, 999), (999, 999)]),
    ]
    for gen, ref in pairs:
        value = geobleu(gen, ref, exp="numpy")
        assert value == oracle(gen, ref, numpy_prox, numpy_gmean)
        if table_diff == 0:
            assert value == geobleu(gen, ref)
    assert math.isnan(geobleu([(1, 2)], [], exp="numpy"))
    with pytest.raises(ValueError, match="exp=.fast.: must be"):
        geobleu([(1, 2)], [(1, 2)], exp="fast")


def test_exp_option_reaches_cli_job_api_and_manifest(tmp_path):
    """--exp / exp = ... / exp= are one option, recorded with the others in the manifest."""
    pl = pytest.importorskip("polars")
    from mobeval.api import evaluate_trajectory
    from mobeval.cli import main
    from mobeval.errors import ConfigError

    root = Path(__file__).resolve().parents[1]
    reference = root / "data_samples" / "humob" / "reference_test.csv.gz"
    generated = root / "data_samples" / "humob" / "weekly_repeat.csv.gz"
    out = tmp_path / "cli"
    args = ["trajectory", "--reference", str(reference), "--generated", str(generated)]
    assert main([*args, "--exp", "numpy", "--out", str(out), "--quiet"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    (entry,) = manifest["results"].values()
    assert entry["config"]["exp"] == "numpy"
    assert manifest["job"]["exp"] == "numpy"

    job = tmp_path / "job.toml"
    job.write_text(
        f'out = "{tmp_path / "job_out"}"\n[[tasks]]\ntype = "trajectory"\ncity = "test"\n'
        f'truth = "{reference}"\nexp = "numpy"\n[tasks.models]\nweekly = "{generated}"\n'
    )
    assert main(["run", str(job), "--quiet"]) == 0
    manifest = json.loads((tmp_path / "job_out" / "manifest.json").read_text())
    assert [r["config"]["exp"] for r in manifest["results"].values()] == ["numpy"]

    by_api = {
        exp: evaluate_trajectory(reference, generated, exp=exp, progress=False).tables["per_day"]
        for exp in ("libm", "numpy")
    }
    written = pl.read_parquet(out / "per_day", hive_partitioning=False).sort("uid", "d")
    assert written["geobleu"].to_list() == by_api["numpy"].sort("uid", "d")["geobleu"].to_list()
    if differing_entries()[0] == 0:
        assert by_api["libm"].equals(by_api["numpy"])
    with pytest.raises(ConfigError, match="exp="):
        evaluate_trajectory(reference, generated, exp="fast", progress=False)
