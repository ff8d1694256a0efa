"""MoveSim's six JSDs: mobeval's ``movesim`` preset beside MoveSim's own ``get_individual_jsds``.

    python benchmarks/bench_trajectory_population.py --movesim-code DIR
        [--uids 2000] [--full-uids 100000] [--days 30] [--repeat 1] [--seed 0]

A synthetic city (:func:`datagen.city_files`, in ``bench_data/``): uids x ``--days`` days of 48
location ids (stays of 1..4 slots, uniformly drawn ids below the 23,768 of MoveSim's geolife
location table), real and generated drawn alike; the ``--uids`` subset is the first uids of the
``--full-uids`` city. ``DIR`` is a private checkout of FIBLAB/MoveSim ``code/`` (with
``DIR/../data/geolife/gps``), run by ``--theirs-python`` with its own dependencies (numpy,
scipy). Each run is a fresh process (:mod:`benchmarks.measure`): wall time and peak RSS;
``--repeat`` alternates the runs and prints medians.

* On the subset: MoveSim's ``get_individual_jsds`` and mobeval's ``movesim_divergences`` on the
  same in-memory id arrays over the geolife table (``max_distance`` 247.3, MoveSim's), and their
  largest relative difference; and ``mobeval trajectory --convention movesim`` streaming the
  subset's HuMob file (uid, d, t, x, y; id ``i`` at cell ``(i % 200 + 1, i // 200 + 1)``).
* On the full city: ``mobeval trajectory`` alone (``--full-uids 0`` skips it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from datagen import city_files, city_location_ids  # noqa: E402
from measure import load, machine_line, run_child  # noqa: E402

MOVESIM = ("distance", "radius", "duration", "dailyloc", "grank", "irank")
GEOLIFE_LOCATIONS, GEOLIFE_MAX_DISTANCE = 23_768, 247.3

OURS = """
import dataclasses, json, sys, numpy as np
from mobeval.metrics.population import movesim_divergences
from mobeval.metrics.trajectory import TRAJECTORY_PRESETS
gps = np.loadtxt(sys.argv[1]); real, gen = np.load(sys.argv[2]), np.load(sys.argv[3])
conv = dataclasses.replace(TRAJECTORY_PRESETS["movesim"], max_distance=float(sys.argv[4]))
print(json.dumps(list(movesim_divergences(real, gen, gps[:, 0], gps[:, 1], conv).values())))
"""
THEIRS = """
import json, os, sys, types
sys.modules["setproctitle"] = types.ModuleType("setproctitle")
os.chdir(sys.argv[1]); sys.path.insert(0, sys.argv[1])
import numpy as np
from evaluations import IndividualEval
real, gen = np.load(sys.argv[2]), np.load(sys.argv[3])
print(json.dumps([float(v) for v in IndividualEval(data="geolife").get_individual_jsds(real, gen)]))
"""


def streaming(real: Path, gen: Path) -> list[str]:
    """``mobeval trajectory`` with the six MoveSim distributions, summary as JSON."""
    command = [sys.executable, "-m", "mobeval", "trajectory", "--reference", str(real)]
    command += ["--generated", str(gen), "--convention", "movesim", "--city", "bench"]
    return command + ["--metrics", ",".join(MOVESIM), "--format", "json", "--quiet"]


def summary_values(text: str) -> list[float]:
    summary = json.loads(text)["summary"]
    return [summary[f"jsd_{name}"] for name in MOVESIM]


def measure(runs: dict[str, list[str]], repeat: int, out: str) -> dict[str, tuple]:
    """Each command ``repeat`` times, alternated: (median wall, median RSS, last stdout)."""
    walls, rsss, texts = ({name: [] for name in runs} for _ in range(3))
    for _ in range(repeat):
        for name, cmd in runs.items():
            wall, rss, text = run_child(cmd, out)
            walls[name].append(wall)
            rsss[name].append(rss)
            texts[name] = text
            print(f"  {name:34s} {wall:8.1f} s  {rss:8.0f} MiB   (load {load()})", flush=True)
    return {
        name: (statistics.median(walls[name]), statistics.median(rsss[name]), texts[name])
        for name in runs
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--movesim-code", required=True, type=Path)
    parser.add_argument("--uids", type=int, default=2000)
    parser.add_argument("--full-uids", type=int, default=100_000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--theirs-python", default=sys.executable)
    args = parser.parse_args()
    code = args.movesim_code.resolve()
    gps = code.parent / "data" / "geolife" / "gps"
    print(f"machine: {machine_line()}; load before: {load()}")
    subset = city_files(args.uids, args.days, GEOLIFE_LOCATIONS, seed=args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        arrays = [Path(tmp, f"{side}.npy") for side in ("real", "gen")]
        for path, array in zip(arrays, map(city_location_ids, subset), strict=True):
            np.save(path, array)
        out = str(Path(tmp, "out"))
        ours = [sys.executable, "-c", OURS, str(gps), *map(str, arrays), str(GEOLIFE_MAX_DISTANCE)]
        runs = {
            "MoveSim get_individual_jsds": [args.theirs_python, "-c", THEIRS, str(code), *arrays],
            "mobeval movesim_divergences": ours,
            "mobeval trajectory (streaming)": streaming(*subset),
        }
        print(f"subset: {args.uids:,} uids x {args.days} days x 48 points per side")
        results = measure({k: list(map(str, v)) for k, v in runs.items()}, args.repeat, out)
        for name, (wall, rss, _) in results.items():
            print(f"{name:36s} median {wall:8.1f} s  {rss:8.0f} MiB")
        theirs = np.array(json.loads(results["MoveSim get_individual_jsds"][2]))
        ours_values = np.array(json.loads(results["mobeval movesim_divergences"][2]))
        scale = np.where(theirs != 0, np.abs(theirs), 1.0)
        print("MoveSim:", theirs.tolist())
        largest = float(np.max(np.abs(ours_values - theirs) / scale))
        print(f"largest relative difference: {largest:.1e}")
        streamed = results["mobeval trajectory (streaming)"][2]
        print("streaming (grid cells):", summary_values(streamed))
        if args.full_uids:
            full = city_files(args.full_uids, args.days, GEOLIFE_LOCATIONS, seed=args.seed)
            print(f"full: {args.full_uids:,} uids x {args.days} days x 48 points per side")
            runs = {"mobeval trajectory (streaming)": streaming(*full)}
            ((wall, rss, text),) = measure(runs, args.repeat, out).values()
            print(f"{'mobeval trajectory (streaming)':36s} median {wall:8.1f} s  {rss:8.0f} MiB")
            print("streaming (grid cells):", summary_values(text))
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
