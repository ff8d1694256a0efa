"""MobilityGPT's own ``TrajectoryEvaluator`` (ucdrubinet/MobilityGPT 2f3fd1e, ``evaluate.py``):
``_calculate_trajectory_metrics`` (``js_radius``, and per trajectory ``_check_connectivity``)
and ``_calculate_gravity_metrics`` (``js_gravity``, reading the ``SF-Taxi/regions`` pickle this
script writes) on seeded random walks over a 400-link table (rows not in id order, ids 400..404
absent from it; a link's first point random) and a 30-region grid (a link in one or two
regions, two regions sharing a centre). ``connectivity`` is the share of the synthetic
trajectories whose ``_check_connectivity`` is 1 (``av_conn`` of the paper's
``Evaluate_trajs.py``, 681d06a^), over a directed link graph; 2f3fd1e's own
``connectivity`` is recorded beside it. Run outside the repository beside a copy of
``evaluate.py``, in a venv with numpy, pandas, scipy, geopy, networkx, tqdm:
``python make_golden.py OUT`` (it writes ``SF-Taxi/regions`` in the working directory)."""

import json
import pickle
import sys
from pathlib import Path

import geographiclib
import geopy
import numpy as np
import pandas as pd
import scipy
from evaluate import TrajectoryEvaluator

out = Path(sys.argv[1])
rng = np.random.default_rng(3232)
n_links, n_known = 405, 400
ids = rng.permutation(n_known)
lon = -122.5 + rng.uniform(0, 0.2, n_known)
lat = 37.7 + rng.uniform(0, 0.1, n_known)
geo = pd.DataFrame(
    {
        "geo_id": ids,
        "length": np.round(rng.uniform(5.0, 800.0, n_known), 3),
        "coordinates": [
            f"[[{a!r}, {b!r}], [{a + 1e-4!r}, {b!r}]]"
            for a, b in zip(lon.tolist(), lat.tolist(), strict=True)
        ],
    }
)
# the link graph: each link leads to the next one or two, and to a few random ones
edges = {(o, o + 1) for o in range(n_links - 1)}
edges |= {(o, o + 2) for o in range(0, n_links - 2, 3)}
edges |= {(int(o), int(d)) for o, d in rng.integers(0, n_links, (300, 2)) if o != d}
rel = sorted(edges)
connectivity = {i: [d for o, d in rel if o == i] for i in range(n_links)}


def walks(n, hi, connected_share):
    trajs = []
    for _ in range(n):
        k = int(rng.integers(2, 40))
        start = int(rng.integers(0, hi))
        if rng.uniform() < connected_share:
            steps = np.ones(k - 1, dtype=int)
        else:
            steps = rng.integers(-3, 4, k - 1)
        trajs.append([int(v) for v in np.clip(np.cumsum(np.r_[start, steps]), 0, hi + 4)])
    return trajs


test = walks(300, n_links - 6, 0.0)
synth = walks(250, n_links - 60, 0.4)

# 30 regions (6 x 5), centres (lat, lon); regions 7 and 8 share a centre
grid_lat, grid_lon = np.linspace(37.7, 37.8, 6), np.linspace(-122.5, -122.3, 5)
centers = [[float(a), float(b)] for a in grid_lat for b in grid_lon]
centers[8] = list(centers[7])
n_regions = len(centers)
region_links = {r: [] for r in range(n_regions)}
links_region = {}
for link in range(n_links):
    mine = sorted({int(rng.integers(0, n_regions)) for _ in range(int(rng.integers(1, 3)))})
    for r in mine:  # MobilityGPT's loop over regions in order: the last one wins
        region_links[r].append(link)
        links_region[link] = r
regions = pd.DataFrame({"region_id": range(n_regions), "center": centers})
Path("SF-Taxi").mkdir(exist_ok=True)
with open("SF-Taxi/regions", "wb") as f:
    pickle.dump((regions, region_links, links_region), f)

evaluator = TrajectoryEvaluator()
m = evaluator._calculate_trajectory_metrics(test, synth, geo, connectivity)
m.update(evaluator._calculate_gravity_metrics(test, synth))
conn = [evaluator._check_connectivity(t, connectivity) for t in synth]
inputs = {
    "geo_id": geo.geo_id.tolist(),
    "length": geo.length.tolist(),
    "lat": lat.tolist(),
    "lon": lon.tolist(),
    "origin_id": [o for o, _ in rel],
    "destination_id": [d for _, d in rel],
    "region_location": [link for r in range(n_regions) for link in region_links[r]],
    "region": [r for r in range(n_regions) for _ in region_links[r]],
    "region_lat": [centers[r][0] for r in range(n_regions) for _ in region_links[r]],
    "region_lon": [centers[r][1] for r in range(n_regions) for _ in region_links[r]],
    "test": test,
    "synthetic": synth,
}
(out / "inputs.json").write_text(json.dumps(inputs))
expected = {
    "radius": float(m["js_radius"]),
    "trip_length": float(m["js_length"]),
    "gravity": float(m["js_gravity"]),
    "connectivity": len([c for c in conn if c == 1]) / len(conn),
    "connectivity_2f3fd1e": float(m["connectivity"]),
    "versions": {
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "scipy": scipy.__version__,
        "geopy": geopy.__version__,
        "geographiclib": geographiclib.__version__,
    },
}
(out / "expected.json").write_text(json.dumps(expected, indent=1))
