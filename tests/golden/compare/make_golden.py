"""Golden values for mobeval's compare tests, from scipy, statsmodels and ranx themselves; run
privately (never by the tests), in a venv with them installed:

    python -m venv /tmp/ref-compare/venv
    /tmp/ref-compare/venv/bin/pip install statsmodels scipy ranx
    /tmp/ref-compare/venv/bin/python tests/golden/compare/make_golden.py \
        tests/golden/compare/golden.json
"""

import json
import sys

import numpy as np
import scipy
import statsmodels
from ranx import Qrels, Run, compare, evaluate
from scipy import stats
from statsmodels.stats.multicomp import pairwise_tukeyhsd
from statsmodels.stats.multitest import multipletests

out = {
    "versions": {
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "statsmodels": statsmodels.__version__,
        "ranx": __import__("importlib.metadata").metadata.version("ranx"),
    }
}
rng = np.random.default_rng(2026)

# 1. Tukey HSD on per-unit values: k models x n units (one-way design, equal and unequal sizes)
cases = {}
for name, _k, sizes in [
    ("k3-n8", 3, [8, 8, 8]),
    ("k5-n40", 5, [40] * 5),
    ("k6-unequal", 6, [5, 9, 12, 7, 30, 11]),
    ("k4-binary-n60", 4, [60] * 4),
]:
    groups = []
    for i, n in enumerate(sizes):
        if "binary" in name:
            groups.append((rng.random(n) < 0.3 + 0.05 * i).astype(float))
        else:
            groups.append(np.round(rng.normal(0.1 * i, 1.0, n), 6))
    endog = np.concatenate(groups)
    labels = np.concatenate([[f"m{i}"] * len(g) for i, g in enumerate(groups)])
    sm = pairwise_tukeyhsd(endog, labels)
    sp = stats.tukey_hsd(*groups).pvalue
    k_ = len(groups)
    sm_p = {}
    idx = 0
    for i in range(k_):
        for j in range(i + 1, k_):
            sm_p[f"m{i}:m{j}"] = float(sm.pvalues[idx])
            idx += 1
    cases[name] = {
        "groups": [g.tolist() for g in groups],
        "statsmodels_pairwise_tukeyhsd": sm_p,
        "scipy_tukey_hsd": sp.tolist(),
    }
out["tukey"] = cases

# 2. ranx compare(stat_test="tukey") on per-query scores of runs we make
qrels, runs = {}, {}
queries = [f"q{i}" for i in range(30)]
docs = [f"d{i}" for i in range(25)]
for q in queries:
    rel = rng.choice(docs, size=4, replace=False)
    qrels[q] = {d: int(rng.integers(1, 3)) for d in rel}
for m in range(4):
    runs[f"model{m}"] = {}
    for q in queries:
        picked = rng.choice(docs, size=10, replace=False)
        # better models put a relevant doc higher more often
        if rng.random() < 0.2 * m:
            picked[0] = next(iter(qrels[q]))
            picked = np.array(list(dict.fromkeys(picked)))
        runs[f"model{m}"][q] = {d: float(10 - r) for r, d in enumerate(picked)}
Q = Qrels(qrels)
R = [Run(runs[m], name=m) for m in runs]
metrics = ["ndcg@10", "mrr", "precision@5"]
rep = compare(Q, R, metrics=metrics, stat_test="tukey", max_p=0.05)
per_query = {}
for r in R:
    evaluate(Q, r, metrics)
    per_query[r.name] = {met: [float(r.scores[met][q]) for q in sorted(queries)] for met in metrics}
pv = {}
names = list(runs)
for i, a in enumerate(names):
    for b in names[i + 1 :]:
        pv[f"{a}:{b}"] = {met: float(rep.comparisons[a, b][met]["p_value"]) for met in metrics}
out["ranx_tukey"] = {
    "qrels": qrels,
    "runs": runs,
    "metrics": metrics,
    "queries": sorted(queries),
    "per_query": per_query,
    "p_values": pv,
}

# 3. multipletests on p-values with ties, ones, tiny values
p = np.array([0.01, 0.04, 0.04, 0.2, 0.003, 0.5, 1.0, 1e-6, 0.03, 0.049, 0.8, 0.0125])
p2 = rng.random(40) ** 3
out["multipletests"] = []
for vec in (p, p2):
    row = {"p": vec.tolist()}
    for method in ("holm", "bonferroni", "fdr_bh", "fdr_by"):
        row[method] = multipletests(vec, method=method)[1].tolist()
    out["multipletests"].append(row)
with open(sys.argv[1], "w") as file:
    json.dump(out, file, indent=1)
print(out["versions"])
