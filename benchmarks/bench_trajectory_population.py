"""MoveSim's six JSDs: mobeval's ``movesim`` preset beside MoveSim's own ``get_individual_jsds``.

    python benchmarks/bench_trajectory_population.py --movesim-code DIR
        [--uids 2000] [--days 30] [--seed 0]

A synthetic city of ``--uids`` x ``--days`` days of 48 location ids (stays of 1..4 slots) over
the location table of MoveSim's geolife data (``DIR/../data/geolife/gps``; ``DIR`` is a private
checkout of FIBLAB/MoveSim ``code/``, run with its own dependencies: numpy, scipy), real and
generated drawn alike. Each side runs in a fresh process (:mod:`benchmarks.measure`): wall time
and peak RSS, then the six values of each and their largest relative difference.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import run_child  # noqa: E402

OURS = """
import dataclasses, json, sys, numpy as np
from mobeval.metrics.population import movesim_divergences
from mobeval.metrics.trajectory import TRAJECTORY_PRESETS
gps = np.loadtxt(sys.argv[1]); real, gen = np.load(sys.argv[2]), np.load(sys.argv[3])
conv = dataclasses.replace(TRAJECTORY_PRESETS["movesim"], max_distance=247.3)
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


def city(rng, rows: int, locations: int) -> np.ndarray:
    stays = rng.integers(1, 5, (rows, 48))
    starts = np.cumsum(stays, axis=1) // 4
    return rng.integers(0, locations, (rows, 48))[np.arange(rows)[:, None], np.minimum(starts, 47)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--movesim-code", required=True, type=Path)
    parser.add_argument("--uids", type=int, default=2000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--theirs-python", default=sys.executable)
    args = parser.parse_args()
    code = args.movesim_code.resolve()
    gps = code.parent / "data" / "geolife" / "gps"
    rng = np.random.default_rng(args.seed)
    locations = np.loadtxt(gps).shape[0]
    with tempfile.TemporaryDirectory() as tmp:
        real, gen = Path(tmp, "real.npy"), Path(tmp, "gen.npy")
        np.save(real, city(rng, args.uids * args.days, locations))
        np.save(gen, city(rng, args.uids * args.days, locations))
        out = Path(tmp, "out")
        runs = {
            "mobeval": [sys.executable, "-c", OURS, str(gps), str(real), str(gen)],
            "MoveSim": [args.theirs_python, "-c", THEIRS, str(code), str(real), str(gen)],
        }
        values = {}
        print(f"{args.uids} uids x {args.days} days x 48 points")
        for name, cmd in runs.items():
            wall, rss, text = run_child(cmd, str(out))
            values[name] = json.loads(text.strip().splitlines()[-1])
            print(f"{name:8s} {wall:8.1f} s  {rss:8.0f} MiB  {values[name]}")
    a, b = np.array(values["mobeval"]), np.array(values["MoveSim"])
    scale = np.where(b != 0, np.abs(b), 1.0)
    print(f"largest relative difference: {float(np.max(np.abs(a - b) / scale)):.1e}")


if __name__ == "__main__":
    main()
