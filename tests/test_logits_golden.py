"""logits_basic: every expected entry (system value and per-row values) to 1e-6.

The case has no score ties, so torch.topk / torch.argsort entries are checked with the optimistic
policy; the numpy entries name their own policy. Cross-entropy of these float32 logits has float32
terms (as torch), within (ln 200 + 2.01) 2^-24 < 5e-7 of the exact value per row.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from mobeval.tasks.logits import score_logits

TOL = 1e-6
_TIES = {
    "numpy rank (optimistic)": "optimistic",
    "numpy rank (pessimistic)": "pessimistic",
    "numpy rank (stable_lower_index_first)": "index",
}


@pytest.fixture(scope="module")
def case(golden_dir):
    folder = golden_dir / "ranking" / "logits_basic"
    expected = json.loads((folder / "expected.json").read_text())["expected"]
    return folder, expected


def scored_as_expected(folder, ties: str) -> dict:
    """The inputs and options of the expected entries (their ``ties`` policy given)."""
    files = {"logits": folder / "logits.npy", "targets": folder / "targets.npy"}
    return {**files, "k": (1, 3, 5, 10), "ties": ties, "percent": True}


def _metric(entry: dict) -> str:
    metric, params = entry["metric"], entry["params"]
    if metric == "f1_top1":
        return "f1_macro" if "macro" in entry["system"] else "f1_weighted"
    if metric in ("acc", "ndcg"):
        return f"{metric}@{params['k']}"
    return metric


def test_every_entry(case):
    folder, expected = case
    runs = {}
    for ties in ("optimistic", "pessimistic", "index"):
        runs[ties] = score_logits(
            **scored_as_expected(folder, ties), per_sample=True, chunk_rows=700
        )
    for entry in expected:
        scores = runs[_TIES.get(entry["system"], "optimistic")]
        name = _metric(entry)
        summary = dict(zip(scores.summary["metric"], scores.summary["value"], strict=True))
        assert abs(summary[name] - entry["value"]) <= TOL, (entry, summary[name])
        if not entry.get("per_id"):
            continue
        samples = scores.per_sample
        column = (
            "rank" if entry.get("note", "").startswith("per_id holds the 1-based rank") else name
        )
        rows = np.array([int(r) for r in entry["per_id"]])
        want = np.array(list(entry["per_id"].values()), dtype=np.float64)
        got = samples[column].to_numpy()[rows]
        assert samples["row"].to_numpy()[rows].tolist() == rows.tolist()
        np.testing.assert_allclose(got, want, rtol=0, atol=TOL, err_msg=str(entry["system"]))
