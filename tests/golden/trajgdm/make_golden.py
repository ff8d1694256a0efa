"""TrajGDM's own ``Evaluation_metrics.js_traj`` (chuchen2017/TrajGDM f3238de, ``utils/metrics.py``)
on the first 400 (real) and the last 300 (generated) trajectories of its ``datasets/<name>/
<name>_Eval.json``. Run outside the repository, beside a copy of ``metrics.py`` and the two
``*_Eval.json`` files, in a venv with torch, numpy and scipy: ``python make_golden.py OUT``."""

import json
import sys
from pathlib import Path

import numpy as np
import scipy
import torch
from metrics import Evaluation_metrics

out = Path(sys.argv[1])
cases = {}
for name, maxi, num_loc in (("TDrive", 27, 759), ("Geolife", 110, 12334)):
    trajs = json.loads(Path(f"{name}_Eval.json").read_text())
    real, gene = trajs[:400], trajs[-300:]
    (out / f"{name.lower()}.json").write_text(json.dumps({"real": real, "generated": gene}))
    metrics = Evaluation_metrics(maxi=maxi, num_loc=num_loc)
    values = metrics.js_traj(real_traj=torch.tensor(real), sythsize_traj=torch.tensor(gene))
    names = ("jump", "location", "origin_location", "destination_location", "duplicate_ratio")
    cases[name.lower()] = {"maxi": maxi, "num_loc": num_loc}
    cases[name.lower()].update({k: float(v) for k, v in zip(names, values, strict=True)})
cases["versions"] = {
    "torch": torch.__version__,
    "numpy": np.__version__,
    "scipy": scipy.__version__,
}
(out / "expected.json").write_text(json.dumps(cases, indent=1))
