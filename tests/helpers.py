"""Inputs and helpers shared by several test files.

The small valid inputs of every family: three next-location samples (sample 2's two candidates
tied), two uids' trajectories over two days, two users' ratings and lists, four rows of logits.
"""

from __future__ import annotations

import numpy as np
import polars as pl

TRUTH = pl.DataFrame({"sample_id": [1, 2, 3], "location": [10, 20, 30]})
PRED = pl.DataFrame(
    {
        "sample_id": [1, 1, 2, 2, 3, 3],
        "location": [10, 11, 20, 21, 31, 30],
        "score": [0.9, 0.1, 0.8, 0.8, 0.7, 0.3],
    }
)
REFERENCE = pl.DataFrame(
    [(u, d, t, 10 + t, 20 + u) for u in (1, 2) for d, t in [(60, 0), (60, 1), (61, 5)]],
    schema=["uid", "d", "t", "x", "y"],
    orient="row",
)
GENERATED = REFERENCE.with_columns(pl.col("x") + 1)
RATINGS = pl.DataFrame(
    {
        "user_id": [1, 1, 1, 2, 2],
        "item_id": [10, 11, 12, 10, 13],
        "rating": [5.0, 3.0, 4.0, 2.0, 5.0],
    }
)
RECS = pl.DataFrame(
    {"user_id": [1, 1, 2, 2], "item_id": [10, 12, 13, 11], "score": [0.9, 0.5, 0.8, 0.1]}
)
TARGETS = np.array([0, 2, 1, 3], dtype=np.int64)
LOGITS = np.arange(16, dtype=np.float64).reshape(4, 4) % 5


def logits_out(folder, models, *, rows, classes, seed, step, cutoffs):
    """The OUT of a logits job (one city, ``x``) scoring ``models`` on ``rows`` samples of
    ``classes`` classes, written under ``folder``: model ``i``'s logit of the true class raised by
    ``step * i`` (models of increasing skill), Gaussian logits from ``seed``."""
    from mobeval.jobs import load_job, run_job

    rng = np.random.default_rng(seed)
    targets = rng.integers(0, classes, rows)
    np.save(folder / "targets.npy", targets)
    for i, model in enumerate(models):
        logits = rng.normal(size=(rows, classes))
        logits[np.arange(rows), targets] += step * i
        np.save(folder / f"{model}.npy", logits.astype(np.float32))
    lines = ['out = "out"', "[[tasks]]", 'type = "logits"', 'city = "x"', 'truth = "targets.npy"']
    lines += [f"k = {list(cutoffs)}", "[tasks.models]", *(f'{m} = "{m}.npy"' for m in models)]
    (folder / "job.toml").write_text("\n".join(lines) + "\n")
    run_job(load_job(folder / "job.toml"), progress=False, log=lambda _: 0)
    return folder / "out"


def per_unit_column(out, model, metric):
    """``metric``'s per-unit values of ``model`` in city ``x`` of ``out``, in row order."""
    files = sorted((out / f"per_unit/city=x/model={model}").glob("*.parquet"))
    return pl.read_parquet(files).sort("row")[metric].to_numpy()
