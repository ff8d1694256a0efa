"""GEO-BLEU / DTW throughput on synthetic HuMob-like data (uid-days per second).

    python benchmarks/bench_geobleu.py [--uids 3000] [--days 15] [--seed 0] [--repeat 5]

Each uid has ``--days`` days of 20..48 steps; the reference wanders around a home cell and the
generated trajectory is the reference plus noise. "cold" runs in a fresh subprocess with an empty
NUMBA_CACHE_DIR (import + JIT compile + run); "warm" is ``--repeat`` more runs in this process
(median and fastest). The SHA-256 of the per-day GEO-BLEU and DTW values (float64 bytes) is
printed, so that two versions of the code can be compared bit for bit.

``--profile``: where one GEO-BLEU pass spends its time, in CPU seconds of one thread: the per-day
loop of ``geobleu_days`` run three times, stopped after the proximities, after the n-gram weights
(with each row's first largest weight), and complete (the greedy matching); the differences are
the stages' costs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def synthetic(n_uids: int, n_days: int, seed: int):
    """(day_offsets, gen_x, gen_y, ref_x, ref_y, uid_offsets) for n_uids x n_days uid-days."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(20, 49, n_uids * n_days)
    offsets = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    n = int(offsets[-1])
    home = rng.integers(20, 181, (n_uids, 2)).repeat(lengths.reshape(n_uids, n_days).sum(1), 0)
    ref = np.clip(home + rng.normal(0, 8, (n, 2)).round(), 1, 200).astype(np.int32)
    gen = np.clip(ref + rng.normal(0, 4, (n, 2)).round(), 1, 200).astype(np.int32)
    uid_offsets = np.arange(0, n_uids * n_days + 1, n_days, dtype=np.int64)
    return (
        offsets,
        gen[:, 0].copy(),
        gen[:, 1].copy(),
        ref[:, 0].copy(),
        ref[:, 1].copy(),
        uid_offsets,
    )


def run(n_uids: int, n_days: int, seed: int) -> dict:
    """Time one GEO-BLEU and one DTW pass (the first call in a process includes compilation)."""
    t0 = time.perf_counter()
    from mobeval.kernels.geobleu import dtw_days, geobleu_days, mean_per_unit

    t_import = time.perf_counter() - t0
    offsets, gx, gy, rx, ry, uid_offsets = synthetic(n_uids, n_days, seed)
    n_days_total = offsets.size - 1
    t0 = time.perf_counter()
    gb_days = geobleu_days(offsets, gx, gy, rx, ry, 5, 0.5, False)
    gb = mean_per_unit(uid_offsets, gb_days)
    t_gb = time.perf_counter() - t0
    t0 = time.perf_counter()
    dtw = dtw_days(offsets, gx, gy, rx, ry, 2.0)
    dt = mean_per_unit(uid_offsets, dtw)
    t_dtw = time.perf_counter() - t0
    return {
        "uid_days": n_days_total,
        "rows": int(offsets[-1]),
        "import_s": t_import,
        "geobleu_s": t_gb,
        "dtw_s": t_dtw,
        "geobleu_uid_days_per_s": n_days_total / t_gb,
        "dtw_uid_days_per_s": n_days_total / t_dtw,
        "mean_geobleu": float(gb.mean()),
        "mean_dtw": float(dt.mean()),
        "sha256": hashlib.sha256(gb_days.tobytes() + dtw.tobytes()).hexdigest()[:16],
    }


def profile(n_uids: int, n_days: int, seed: int) -> None:
    """Print the CPU seconds of the stages of one GEO-BLEU pass (module docstring)."""
    from numba import njit

    from mobeval.kernels import geobleu as kernel

    @njit
    def stages(day_offsets, gen_x, gen_y, ref_x, ref_y, table, max_n, upto):
        longest = np.diff(day_offsets).max()
        prox = np.empty(longest * longest)
        weights = np.empty(longest * longest)
        rows = np.empty(4 * longest, dtype=np.int64)
        used_j = np.empty(longest, dtype=np.bool_)
        total = 0.0
        for day in range(day_offsets.size - 1):
            s, e = day_offsets[day], day_offsets[day + 1]
            size = e - s
            for i in range(size):
                for j in range(size):
                    dx = np.int64(ref_x[s + j]) - np.int64(gen_x[s + i])
                    dy = np.int64(ref_y[s + j]) - np.int64(gen_y[s + i])
                    prox[i * size + j] = table[dx * dx + dy * dy]
            for n in range(1, (min(max_n, size) + 1) if upto > 0 else 1):
                m = size - n + 1
                if n == 1:
                    kernel._row_maxima(prox, size, m, m, rows)
                else:
                    previous = prox if n == 2 else weights
                    kernel._next_weights(
                        previous, prox, weights, (n - 1) * (size + 1), size, m, m, rows
                    )
                w = prox if n == 1 else weights
                total += kernel._greedy_sum(w, size, m, m, rows, used_j) if upto > 1 else rows[0]
        return total

    offsets, gx, gy, rx, ry, _ = synthetic(n_uids, n_days, seed)
    table = kernel._proximity_table(kernel.proximity_table_size(gx, gy, rx, ry), 0.5)
    names = ("proximities", "n-gram weights + row maxima", "greedy matching")
    seconds = []
    for upto in range(3):
        stages(offsets[:3], gx, gy, rx, ry, table, 5, upto)  # compile
        runs = []
        for _ in range(3):
            t0 = time.process_time()
            stages(offsets, gx, gy, rx, ry, table, 5, upto)
            runs.append(time.process_time() - t0)
        seconds.append(min(runs))
    print(
        f"GEO-BLEU stages, one thread, CPU seconds (fastest of 3), {offsets.size - 1:,} uid-days:"
    )
    for i, name in enumerate(names):
        print(f"  {name:30s} {seconds[i] - (seconds[i - 1] if i else 0.0):6.2f} s")
    print(f"  {'all':30s} {seconds[-1]:6.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uids", type=int, default=3000)
    parser.add_argument("--days", type=int, default=15)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="CPU seconds per stage")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.profile:
        profile(args.uids, args.days, args.seed)
        return
    if args.worker:
        print(json.dumps(run(args.uids, args.days, args.seed)))
        return

    start_load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        cmd = [
            sys.executable,
            __file__,
            "--worker",
            "--uids",
            str(args.uids),
            "--days",
            str(args.days),
            "--seed",
            str(args.seed),
        ]
        t0 = time.perf_counter()
        out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
        cold_total = time.perf_counter() - t0
    cold = json.loads(out)
    run(2, 2, args.seed)  # compile (or load from the cache) in this process
    warm = [run(args.uids, args.days, args.seed) for _ in range(args.repeat)]
    first = warm[0]
    print(
        f"{args.uids} uids x {args.days} days = {first['uid_days']:,} uid-days, "
        f"{first['rows']:,} rows; {os.cpu_count()} cores; load average at start {start_load}"
    )
    print(
        f"cold (fresh cache, subprocess, {cold_total:.1f} s in all): "
        f"GEO-BLEU {cold['geobleu_uid_days_per_s']:,.0f} uid-days/s ({cold['geobleu_s']:.2f} s), "
        f"DTW {cold['dtw_uid_days_per_s']:,.0f} uid-days/s ({cold['dtw_s']:.2f} s)"
    )
    both = [w["geobleu_s"] + w["dtw_s"] for w in warm]
    for name, key in (("GEO-BLEU", "geobleu_s"), ("DTW", "dtw_s")):
        seconds = [w[key] for w in warm]
        print(
            f"warm {name}: median {statistics.median(seconds):.2f} s "
            f"({first['uid_days'] / statistics.median(seconds):,.0f} uid-days/s), "
            f"fastest {min(seconds):.2f} s; runs {', '.join(f'{v:.2f}' for v in seconds)}"
        )
    print(f"warm GEO-BLEU + DTW: median {statistics.median(both):.2f} s, fastest {min(both):.2f} s")
    digests = {w["sha256"] for w in warm} | {cold["sha256"]}
    print(
        f"city means: GEO-BLEU {first['mean_geobleu']:.6f}, DTW {first['mean_dtw']:.3f} km; "
        f"per-day values sha256 {', '.join(sorted(digests))}"
    )
    print(f"load average at end {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
