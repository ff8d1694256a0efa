"""mobeval compare vs ranx's statistical tests on the same per-unit scores: wall time, peak RSS.

    python benchmarks/bench_compare.py                 # --models 5 --units 50000 --metrics 22
                                                       # --rss-units 1000000
                                                       # --ranx-models 3 --ranx-units 1000
    python benchmarks/bench_compare.py --full          # the issue's size: 5 x 1,000,000 x 22
    python benchmarks/bench_compare.py --ranx-units 10000 --ranx-models 5   # a larger ranx subset
    python benchmarks/bench_compare.py --only-tukey    # all pairs, Tukey's HSD: 20 x 100,000 x 22

Inputs: a real mobeval OUT per size, made once by ``evaluate_nextloc`` (cached under
bench_data/compare_<M>x<N>/): M models score the same N samples (10 candidates each, one true
location; models differ a little in how often and how high they rank it, with a shared per-sample
difficulty so that the pairs are correlated). The 22 per-sample metrics are acc / precision /
recall / f1 / mrr / map / ndcg at 1, 5, 10 and mrr; K metrics = the first K of them.

Measured, every case in a fresh process, ours and ranx alternating, median of ``--repeat``:

* **mobeval**: ``python -m mobeval.cli compare OUT --metrics <K> --tests randomization
  --permutations 10000 --resamples 1000`` (every pair of models, Holm; reads the manifest and the
  per-sample Parquet, writes OUT/compare), and ``--tests paired-t --resamples 0``.
* **ranx**: its ``compare()`` first evaluates qrels/runs and then calls its statistical tests on
  the per-query score arrays. Building qrels/runs whose per-query metric equals an arbitrary
  per-unit value is not possible in general, so the fairest equivalent is the second half alone:
  the process reads the same per-sample Parquet (polars), aligns the units and calls
  ``ranx.statistical_tests._compute_statistical_significance(control, treatment, "fisher",
  n_permutations=10000)`` (and ``"student"``) once per unordered pair of models - what
  ``ranx.compare`` runs per pair, except that ``compare`` runs every ordered pair, i.e. each pair
  twice (its time would be about 2x the figure here). ranx's Fisher test has no bootstrap; ours
  adds 1,000 bootstrap resamples per pair and metric on top.
* **Tukey's HSD, all pairs** (``--tukey-models`` x ``--tukey-units``): ``mobeval.cli compare OUT
  --metrics <K> --tests tukey --resamples 0`` (every pair), and ranx's own
  ``ranx.statistical_tests.tukey_hsd_test(models, scores, max_p)`` (what ``compare(...,
  stat_test="tukey")`` calls per metric: ``scipy.stats.tukey_hsd`` on the per-query arrays) on
  the same per-sample Parquet, read and aligned as above; the p-values compared (largest
  difference).
* **peak RSS**: ``ru_maxrss`` of the child from ``os.wait4`` (that process alone).
* **agreement**: ranx's Fisher p-values against ours within Monte-Carlo error (both are estimates
  from 10,000 random sign vectors; ranx's p = count / perms, ours (count + 1) / (perms + 1)).

ranx's Fisher test costs about 0.06-0.15 us per unit, permutation and metric on this machine (a
``np.random.permutation`` of each unit's pair per permutation), so it runs on a subset
(``--ranx-models`` x ``--ranx-units``); the ranx time at the large size is extrapolated linearly
in pairs x metrics x units and labelled as such.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from datagen import BENCH_DATA, snapshot_pipeline
from measure import load, machine_line, run_child

KS = (1, 5, 10)
METRICS = [
    f"{m}@{k}" for m in ("acc", "precision", "recall", "f1", "mrr", "map", "ndcg") for k in KS
]
METRICS.append("mrr")
MOBEVAL_METRICS = ["acc@k", "precision@k", "recall@k", "f1@k", "mrr@k", "map@k", "ndcg@k", "mrr"]
CANDIDATES = 10
PERMUTATIONS = 10_000
RESAMPLES = 1_000


# ---------------------------------------------------------------------------------------------
# inputs


def make_out(n_models: int, n_units: int, seed: int = 0) -> Path:
    """A mobeval OUT with n_models models scored on the same n_units samples (cached)."""
    folder = BENCH_DATA / f"compare_{n_models}x{n_units}"
    out = folder / "out"
    if (folder / "done").exists():
        return out
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    code = f"""
import numpy as np, polars as pl
import subprocess, sys
rng = np.random.default_rng({seed})
n, c, folder = {n_units}, {CANDIDATES}, {str(folder)!r}
difficulty = rng.random(n)            # shared by the models: paired units are correlated
truth = rng.integers(0, 1_000_000, size=n)
pl.DataFrame({{"sample_id": np.arange(n), "location": truth}}).write_parquet(
    folder + "/truth.parquet")
for m in range({n_models}):
    own = np.random.default_rng([{seed}, m])
    hit = 0.8 * difficulty + 0.2 * own.random(n) < 0.55 + 0.01 * m
    position = np.minimum(c - 1, (difficulty * c * 0.7 + own.random(n) * c * 0.5).astype(np.int64))
    loc = (truth[:, None] + 1 + np.arange(c)[None, :] * 7919) % 1_000_003   # never the truth
    loc[hit, position[hit]] = truth[hit]
    scores = np.tile(np.linspace(1.0, 0.1, c), n)
    pred = folder + f"/pred_{{m}}.parquet"
    pl.DataFrame({{"sample_id": np.repeat(np.arange(n), c), "location": loc.ravel(),
                  "score": scores}}).write_parquet(pred)
    subprocess.run([sys.executable, "-m", "mobeval.cli", "nextloc", "--truth",
                    folder + "/truth.parquet", "--pred", pred, "--k", "1,5,10", "--metrics",
                    ",".join({MOBEVAL_METRICS}), "--city", "bench", "--model", f"m{{m}}",
                    "--out", folder + "/out", "--quiet"], check=True, stdout=subprocess.DEVNULL)
"""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    for pred in folder.glob("pred_*.parquet"):
        pred.unlink()
    (folder / "done").write_text("")
    print(f"  made {out} in {time.perf_counter() - t0:.1f} s")
    return out


# ---------------------------------------------------------------------------------------------
# the children


RANX_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np, polars as pl
from ranx.statistical_tests import _compute_statistical_significance
out, test, perms = sys.argv[1], sys.argv[4], int(sys.argv[5])
models, metrics = json.loads(sys.argv[2]), json.loads(sys.argv[3])
t1 = time.perf_counter()
scores = {}
for m in models:
    frame = pl.read_parquet(f"{out}/per_unit/city=bench/model={m}/*.parquet",
                            columns=["sample_id", *metrics], hive_partitioning=False)
    frame = frame.sort("sample_id")  # the units aligned by key, as mobeval pairs them
    scores[m] = {k: frame[k].cast(pl.Float64).to_numpy() for k in metrics}
t2 = time.perf_counter()
p = {}
for i, a in enumerate(models):
    for b in models[i + 1:]:
        res = _compute_statistical_significance(scores[a], scores[b], test, perms, 0.01, 42)
        for k in metrics:
            p[f"{a}|{b}|{k}"] = float(res[k]["p_value"])
t3 = time.perf_counter()
json.dump({"import": t1 - t0, "read": t2 - t1, "tests": t3 - t2, "p": p}, sys.stdout)
"""


RANX_TUKEY_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np, polars as pl
from ranx.statistical_tests import tukey_hsd_test
out, models, metrics = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
t1 = time.perf_counter()
p, read, tests = {}, 0.0, 0.0
for k in metrics:  # one metric's columns at a time, as mobeval holds them
    t = time.perf_counter()
    scores = [pl.read_parquet(f"{out}/per_unit/city=bench/model={m}/*.parquet",
                              columns=["sample_id", k], hive_partitioning=False)
              .sort("sample_id")[k].cast(pl.Float64).to_numpy() for m in models]
    read += time.perf_counter() - t
    t = time.perf_counter()
    for row in tukey_hsd_test(models, scores, 0.05):
        p[f"{row['control']}|{row['treatment']}|{k}"] = float(row["p-value"])
    tests += time.perf_counter() - t
json.dump({"import": t1 - t0, "read": read, "tests": tests, "p": p}, sys.stdout)
"""


def tukey_case(args, metrics: list[str], tmp: str) -> None:
    """Every pair of ``--tukey-models`` models by Tukey's HSD: mobeval against ranx's own
    function on the same units (wall, peak RSS, the p-values' largest difference)."""
    import polars as pl

    out = make_out(args.tukey_models, args.tukey_units)
    models = [f"m{i}" for i in range(args.tukey_models)]
    pairs = len(models) * (len(models) - 1) // 2
    print(f"\n== Tukey's HSD, all pairs: {len(models)} models ({pairs} pairs) x "
          f"{args.tukey_units:,} units x {len(metrics)} metrics ==")  # fmt: skip
    print(f"  {'measurement':<52} {'median':>9} {'peak RSS':>10}  runs (s)")
    ours = [sys.executable, "-m", "mobeval.cli", "compare", str(out), "--metrics",
            ",".join(metrics), "--tests", "tukey", "--resamples", "0"]  # fmt: skip
    child(ours[:6] + [metrics[0]] + ours[7:], tmp)  # the kernels' caches
    times, peaks = [], []
    for _ in range(args.repeat):
        wall, peak, _ = child(ours, tmp)
        times.append(wall)
        peaks.append(peak)
    print(f"  {'mobeval compare --tests tukey (all pairs)':<52} {statistics.median(times):>7.2f} s "
          f"{max(peaks):>6.0f} MiB  {fmt_runs(times)}")  # fmt: skip
    frame = pl.read_parquet(out / "compare" / "city=bench" / "part-0.parquet")
    mine = {f"{a}|{b}|{k}": p for a, b, k, p in frame.select(
        "baseline", "model", "metric", "p_tukey").iter_rows()}  # fmt: skip
    wall, one, _ = child(ours[:6] + [metrics[0]] + ours[7:], tmp)  # rewrites OUT/compare
    ratio = f"peak RSS K = {len(metrics)} / K = 1: {max(peaks) / one:.2f}"
    print(f"  {'mobeval compare --tests tukey, K = 1 metric':<52} {wall:>7.2f} s "
          f"{one:>6.0f} MiB  ({ratio})")  # fmt: skip
    column_mib = args.tukey_units * 8 / 2**20
    print(f"  one float64 metric column: {column_mib:.1f} MiB; one metric of every model: "
          f"{column_mib * len(models):.0f} MiB; every metric of every model: "
          f"{column_mib * len(models) * len(metrics):.0f} MiB")  # fmt: skip
    if args.no_ranx:
        return
    times, peaks, inner = [], [], []
    cmd = [sys.executable, "-c", RANX_TUKEY_CHILD, str(out), json.dumps(models),
           json.dumps(metrics)]  # fmt: skip
    for _ in range(args.repeat):
        wall, peak, text = child(cmd, tmp)
        times.append(wall)
        peaks.append(peak)
        inner.append(json.loads(text))
    label = "ranx tukey_hsd_test (scipy.stats.tukey_hsd)"
    print(f"  {label:<52} {statistics.median(times):>7.2f} s {max(peaks):>6.0f} MiB  "
          f"{fmt_runs(times)}")  # fmt: skip
    mid = inner[times.index(sorted(times)[len(times) // 2])]
    print(f"    ranx: import {mid['import']:.2f} s, read Parquet {mid['read']:.2f} s, "
          f"tests {mid['tests']:.2f} s")  # fmt: skip
    worst = max(abs(p - mid["p"][key]) for key, p in mine.items())
    print(f"  agreement: {len(mine)} pair x metric p-values, largest |mobeval - ranx| = "
          f"{worst:.1e}")  # fmt: skip


def child(cmd: list[str], tmp: str) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MiB, stdout) of cmd in a fresh process (measure.run_child)."""
    return run_child(cmd, os.path.join(tmp, "child.out"))


def ours_cmd(
    out: Path, metrics: list[str], test: str, perms: int = PERMUTATIONS, resamples: int = RESAMPLES
) -> list[str]:
    extra = (
        ["--tests", "randomization", "--permutations", str(perms), "--resamples", str(resamples)]
        if test == "fisher"
        else ["--tests", "paired-t", "--resamples", "0"]
    )
    return [sys.executable, "-m", "mobeval.cli", "compare", str(out), "--metrics",
            ",".join(metrics), *extra]  # fmt: skip


def ranx_cmd(out: Path, models: list[str], metrics: list[str], test: str) -> list[str]:
    return [sys.executable, "-c", RANX_CHILD, str(out), json.dumps(models), json.dumps(metrics),
            test, str(PERMUTATIONS)]  # fmt: skip


def fmt_runs(values: list[float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def ours_pvalues(out: Path) -> dict[str, float]:
    import polars as pl

    frame = pl.read_parquet(out / "compare" / "city=bench" / "part-0.parquet")
    return {
        f"{b}|{m}|{k}": p
        for b, m, k, p in frame.select("baseline", "model", "metric", "p_randomization").iter_rows()
    }


def agreement(out: Path, models: list[str], metrics: list[str], ours: dict, theirs: dict) -> None:
    """Both Fisher p-values against an independent NumPy sign-flip estimate on the same units.

    The metrics are lattice-valued (one true location per sample), so ``|sum(s d)|`` often equals
    the observed value exactly. mobeval counts mathematically equal sums (``>= observed - 1e-9
    max|d|``); ranx compares float means with ``>=``, which rounding makes true for only some of
    the ties. So: ours should match the NumPy ``>=`` estimate, ranx lie between the NumPy ``>``
    (no ties) and ``>=`` estimates, each within 5 sigma of Monte-Carlo error.
    """
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(12345)
    values = {
        m: pl.read_parquet(
            out / "per_unit" / "city=bench" / f"model={m}" / "*.parquet", hive_partitioning=False
        ).sort("sample_id")
        for m in models
    }
    n = values[models[0]].height
    ge, gt = {}, {}
    pairs = [(a, b) for i, a in enumerate(models) for b in models[i + 1 :]]
    diffs = {
        f"{a}|{b}|{k}": (values[b][k] - values[a][k]).cast(pl.Float64).to_numpy()
        for a, b in pairs
        for k in metrics
    }
    for key in diffs:
        ge[key] = gt[key] = 0
    for start in range(0, PERMUTATIONS, 1000):
        signs = rng.choice([-1.0, 1.0], size=(min(1000, PERMUTATIONS - start), n))
        for key, d in diffs.items():
            sums = np.abs(signs @ d)
            observed, tol = abs(d.sum()), 1e-9 * float(np.abs(d).max(initial=0.0))
            ge[key] += int(np.count_nonzero(sums >= observed - tol))
            gt[key] += int(np.count_nonzero(sums > observed + tol))

    def sigma(p: float) -> float:
        return 5 * max((p * (1 - p) / PERMUTATIONS) ** 0.5, 1 / PERMUTATIONS) + 2 / PERMUTATIONS

    ours_bad = ranx_bad = 0
    ours_worst = ranx_worst = ties = 0.0
    for key in diffs:
        p_ge, p_gt = ge[key] / PERMUTATIONS, gt[key] / PERMUTATIONS
        ties = max(ties, p_ge - p_gt)
        gap = abs(ours[key] - p_ge)
        ours_worst = max(ours_worst, gap)
        ours_bad += gap > sigma(p_ge) + sigma(ours[key])
        p = theirs[key]
        outside = max(0.0, p_gt - p, p - p_ge)
        ranx_worst = max(ranx_worst, outside)
        ranx_bad += outside > sigma(p_gt) + sigma(p)
    print(f"  agreement of the Fisher p-values, {len(diffs)} pair x metric, against NumPy sign "
          f"flips ({PERMUTATIONS:,}) on the same units; largest tie mass P(|S| = |S_obs|) "
          f"{ties:.3f}:")  # fmt: skip
    print(f"    mobeval vs NumPy (ties counted):      largest |diff| {ours_worst:.4f}; "
          f"{'PASS' if not ours_bad else f'FAIL ({ours_bad})'} (5 sigma)")  # fmt: skip
    print(f"    ranx within NumPy [ties out, ties in]: largest distance {ranx_worst:.4f}; "
          f"{'PASS' if not ranx_bad else f'FAIL ({ranx_bad})'} (5 sigma)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument("--units", type=int, default=50_000)
    parser.add_argument(
        "--rss-units", type=int, default=1_000_000, help="units of the peak-RSS case (0: none)"
    )
    parser.add_argument("--metrics", type=int, default=22, help="K, the first K of the 22")
    parser.add_argument("--ranx-models", type=int, default=3)
    parser.add_argument("--ranx-units", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--large-repeat", type=int, default=1, help="runs of ours at the large size"
    )
    parser.add_argument("--full", action="store_true", help="5 models x 1,000,000 units x 22")
    parser.add_argument("--no-ranx", action="store_true")
    parser.add_argument("--tukey-models", type=int, default=20)
    parser.add_argument(
        "--tukey-units", type=int, default=100_000, help="units of the Tukey case (0: none)"
    )
    parser.add_argument("--only-tukey", action="store_true", help="the Tukey case alone")
    args = parser.parse_args()
    if args.full:
        args.models, args.units, args.metrics = 5, 1_000_000, 22
        args.rss_units = 0  # the timed runs are at that size
    metrics = METRICS[: args.metrics]
    tmp = tempfile.mkdtemp(prefix="bench-compare-")
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    snapshot_pipeline(tmp)
    import numba
    import numpy
    import polars

    try:
        import ranx

        ranx_version = ranx.__version__ if hasattr(ranx, "__version__") else "0.3.21"
    except ImportError:
        ranx_version = None
        args.no_ranx = True
    print(f"machine: {machine_line()}; python {sys.version.split()[0]}, numba "
          f"{numba.__version__}, numpy {numpy.__version__}, polars {polars.__version__}, "
          f"ranx {ranx_version}")  # fmt: skip
    print(f"load average at start (1/5/15 min): {load()}")
    print(f"code: snapshot of pipeline/ at start, in {tmp}")
    print(f"randomization: {PERMUTATIONS:,} sign flips; bootstrap: {RESAMPLES:,} resamples; "
          "every pair of models, per metric")  # fmt: skip
    if args.only_tukey:
        tukey_case(args, metrics, tmp)
        print(f"load average at end (1/5/15 min): {load()}")
        return
    small = make_out(args.ranx_models, args.ranx_units)
    large = make_out(args.models, args.units)
    huge = make_out(args.models, args.rss_units) if args.rss_units else None
    small_models = [f"m{i}" for i in range(args.ranx_models)]
    # populate the Numba caches (ours and ranx's) outside the timings
    child(ours_cmd(small, metrics[:2], "fisher"), tmp)
    if not args.no_ranx:
        child(ranx_cmd(small, small_models[:2], metrics[:1], "fisher"), tmp)

    n_pairs = args.ranx_models * (args.ranx_models - 1) // 2
    print(f"\n== subset: {args.ranx_models} models ({n_pairs} pairs) x {args.ranx_units:,} units x "
          f"{len(metrics)} metrics, same OUT for both ==")  # fmt: skip
    print(f"  {'measurement':<52} {'median':>9} {'peak RSS':>10}  runs (s)")
    results = {}
    ours_p = None
    for test in ("fisher", "student"):
        ours_t, ours_m, ranx_t, ranx_m, inner = [], [], [], [], []
        for _ in range(args.repeat):
            wall, rss, _ = child(ours_cmd(small, metrics, test), tmp)
            ours_t.append(wall)
            ours_m.append(rss)
            if test == "fisher" and ours_p is None:
                ours_p = ours_pvalues(small)  # the student runs overwrite OUT/compare
            if not args.no_ranx:
                wall, rss, text = child(ranx_cmd(small, small_models, metrics, test), tmp)
                ranx_t.append(wall)
                ranx_m.append(rss)
                inner.append(json.loads(text))
        label = "randomization + bootstrap" if test == "fisher" else "paired-t, no bootstrap"
        print(f"  {'mobeval compare, ' + label:<52} {statistics.median(ours_t):>7.2f} s "
              f"{max(ours_m):>6.0f} MiB  {fmt_runs(ours_t)}")  # fmt: skip
        results[test] = (statistics.median(ours_t), None)
        if ranx_t:
            r = statistics.median(ranx_t)
            mid = inner[ranx_t.index(sorted(ranx_t)[len(ranx_t) // 2])]
            what = f"ranx {test} (" + ("10,000 perms)" if test == "fisher" else "ttest_rel)")
            print(f"  {what:<52} "
                  f"{r:>7.2f} s {max(ranx_m):>6.0f} MiB  {fmt_runs(ranx_t)}")  # fmt: skip
            print(f"    ranx: import {mid['import']:.2f} s, read Parquet {mid['read']:.2f} s, "
                  f"tests {mid['tests']:.2f} s")  # fmt: skip
            results[test] = (statistics.median(ours_t), r, mid)
    if not args.no_ranx:
        agreement(small, small_models, metrics, ours_p, results["fisher"][2]["p"])
        print("  ratios (ranx / mobeval, same subset):")
        for test in ("fisher", "student"):
            o, r = results[test][0], results[test][1]
            print(f"    {test:<8} {r / o:7.1f}x  ({r:.2f} s / {o:.2f} s)")

    n_pairs_large = args.models * (args.models - 1) // 2
    print(f"\n== large: {args.models} models ({n_pairs_large} pairs) x {args.units:,} units, "
          "mobeval only, randomization + bootstrap ==")  # fmt: skip
    print(f"  {'measurement':<52} {'median':>9} {'peak RSS':>10}  runs (s)")
    big = {}
    for k in sorted({1, len(metrics)}):
        times, rss = [], []
        for _ in range(args.large_repeat):
            wall, peak, _ = child(ours_cmd(large, metrics[:k], "fisher"), tmp)
            times.append(wall)
            rss.append(peak)
        big[k] = (statistics.median(times), max(rss))
        print(f"  {f'mobeval compare, K = {k} metric(s)':<52} {big[k][0]:>7.2f} s "
              f"{big[k][1]:>6.0f} MiB  {fmt_runs(times)}")  # fmt: skip
    k = len(metrics)
    column_mib = args.units * 8 / 2**20
    print(f"  one float64 metric column of one model: {column_mib:.1f} MiB; of all models: "
          f"{column_mib * args.models:.1f} MiB")  # fmt: skip
    if 1 in big and k in big and k != 1:
        print(f"  peak RSS K = {k} / K = 1: {big[k][1] / big[1][1]:.2f} "
              f"(+{big[k][1] - big[1][1]:.0f} MiB = {(big[k][1] - big[1][1]) / column_mib:.1f} "
              f"columns of {args.units:,} float64)")  # fmt: skip
    if not args.no_ranx:
        _, r, mid = results["fisher"]
        per = mid["tests"] / (n_pairs * len(metrics) * args.ranx_units)
        guess = per * n_pairs_large * k * args.units
        ranx_ns = per / PERMUTATIONS * 1e9
        ours_ns = big[k][0] / (n_pairs_large * k * args.units * PERMUTATIONS) * 1e9
        print(f"  ranx fisher at this size, EXTRAPOLATED (not measured): {guess:,.0f} s "
              f"({ranx_ns:.1f} ns per unit x permutation x metric x pair, its tests on the "
              f"subset; mobeval's whole process: {ours_ns:.2f} ns)")  # fmt: skip
        print(f"  ratio ranx (EXTRAPOLATED) / mobeval, K = {k}: {guess / big[k][0]:,.0f}x")
        full = per * 10 * 22 * 1_000_000
        print(f"  ranx fisher at the issue's size (5 models x 1,000,000 x 22), EXTRAPOLATED: "
              f"{full:,.0f} s = {full / 3600:.0f} h")  # fmt: skip
    if huge is not None:
        few = 100
        print(f"\n== peak RSS: {args.models} models x {args.rss_units:,} units, mobeval, "
              f"randomization with {few} sign flips + {few} resamples (memory does not depend on "
              f"them beyond permutations x metrics bytes; the time does) ==")  # fmt: skip
        peaks = {}
        for k in sorted({1, len(metrics)}):
            wall, peaks[k], _ = child(ours_cmd(huge, metrics[:k], "fisher", few, few), tmp)
            print(f"  {f'mobeval compare, K = {k} metric(s)':<52} {wall:>7.2f} s "
                  f"{peaks[k]:>6.0f} MiB")  # fmt: skip
        column_mib = args.rss_units * 8 / 2**20
        print(f"  one float64 metric column of one model: {column_mib:.1f} MiB; of all models: "
              f"{column_mib * args.models:.1f} MiB")  # fmt: skip
        if len(peaks) == 2:
            k = len(metrics)
            print(f"  peak RSS K = {k} / K = 1: {peaks[k] / peaks[1]:.2f} "
                  f"(+{peaks[k] - peaks[1]:.0f} MiB = "
                  f"{(peaks[k] - peaks[1]) / column_mib:.1f} columns of {args.rss_units:,} "
                  "float64)")  # fmt: skip
    if args.tukey_units:
        tukey_case(args, metrics, tmp)
    print(f"load average at end (1/5/15 min): {load()}")


if __name__ == "__main__":
    main()
