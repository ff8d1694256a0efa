"""MobilityGPT's own ``TrajectoryEvaluator._calculate_distribution_metrics`` and
``_calculate_trajectory_metrics`` (ucdrubinet/MobilityGPT 2f3fd1e, ``evaluate.py``) on seeded
random walks over a 400-link table (rows not in id order, ids 400..404 absent from it). Run
outside the repository beside a copy of ``evaluate.py``, in a venv with numpy, pandas, scipy,
geopy, networkx, tqdm: ``python make_golden.py OUT``."""

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import scipy
from evaluate import TrajectoryEvaluator

out = Path(sys.argv[1])
rng = np.random.default_rng(32)
n_links = 400
ids = rng.permutation(n_links)
geo = pd.DataFrame(
    {
        "geo_id": ids,
        "length": np.round(rng.uniform(5.0, 800.0, n_links), 3),
        "coordinates": [
            f"[[{-122.4 + i * 1e-3}, {37.7 + i * 1e-3}], [{-122.4 + i * 1e-3}, {37.7 + i * 2e-3}]]"
            for i in ids
        ],
    }
)


def walks(n, hi):
    trajs = []
    for _ in range(n):
        k = int(rng.integers(2, 40))
        start = int(rng.integers(0, hi))
        steps = rng.integers(-3, 4, k - 1)
        trajs.append([int(v) for v in np.clip(np.cumsum(np.r_[start, steps]), 0, hi + 4)])
    return trajs


test = walks(300, n_links - 1)
synth = walks(250, n_links - 60)
connectivity = {i: [] for i in range(n_links + 5)}
evaluator = TrajectoryEvaluator()
test_links = [link for t in test for link in t]
synth_links = [link for t in synth for link in t]
m = evaluator._calculate_distribution_metrics(test, synth, test_links, synth_links)
m.update(evaluator._calculate_trajectory_metrics(test, synth, geo, connectivity))
inputs = {"geo_id": geo.geo_id.tolist(), "length": geo.length.tolist()}
(out / "inputs.json").write_text(json.dumps(inputs | {"test": test, "synthetic": synth}))
expected = {"od": m["js_od"], "location": m["js_link"], "trip_length": m["js_length"]}
expected = {k: float(v) for k, v in expected.items()}
expected["versions"] = {
    "numpy": np.__version__,
    "pandas": pd.__version__,
    "scipy": scipy.__version__,
}
(out / "expected.json").write_text(json.dumps(expected, indent=1))
