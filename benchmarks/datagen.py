"""Synthetic next-location benchmark inputs: N samples x C ranked candidates, sorted by sample_id;
and the code snapshot the benchmark scripts run from.

Written in row groups so that generating 100 M rows needs little memory. Files are cached under
bench_data/ (git-ignored) and reused when present.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

BENCH_DATA = Path(__file__).resolve().parents[1] / "bench_data"
N_LOCATIONS = 50_021  # prime, so base + step * i never repeats within a list
BLOCK = 100_000  # samples generated at a time
ROW_GROUP = 1_000_000  # rows per Parquet row group (pyarrow's default)


def nextloc_files(n_samples: int, n_candidates: int, *, seed: int = 0) -> tuple[Path, Path]:
    """(truth, predictions) Parquet files; the truth is in the list about 60% of the time."""
    BENCH_DATA.mkdir(exist_ok=True)
    stem = f"nextloc_{n_samples}x{n_candidates}"
    truth_path = BENCH_DATA / f"{stem}_truth.parquet"
    pred_path = BENCH_DATA / f"{stem}_pred.parquet"
    if truth_path.exists() and pred_path.exists():
        return truth_path, pred_path
    rng = np.random.default_rng(seed)
    schema = pa.schema(
        [("sample_id", pa.int64()), ("location", pa.int64()), ("score", pa.float64())]
    )
    truths = []
    with pq.ParquetWriter(pred_path, schema) as writer:
        for start in range(0, n_samples, BLOCK):
            count = min(BLOCK, n_samples - start)
            samples = np.arange(start, start + count)
            base = rng.integers(0, N_LOCATIONS, size=count)
            step = rng.integers(1, 997, size=count)
            locations = (base[:, None] + step[:, None] * np.arange(n_candidates)) % N_LOCATIONS
            scores = np.sort(rng.random((count, n_candidates)), axis=1)[:, ::-1]
            hit = rng.random(count) < 0.6
            position = rng.integers(0, n_candidates, size=count)
            truths.append(
                np.where(
                    hit,
                    locations[np.arange(count), position],
                    (base + N_LOCATIONS // 2 + 1) % N_LOCATIONS,
                )
            )
            writer.write_table(
                pa.table(
                    {
                        "sample_id": np.repeat(samples, n_candidates),
                        "location": locations.ravel(),
                        "score": scores.ravel(),
                    },
                    schema=schema,
                ),
                row_group_size=ROW_GROUP,
            )
    pq.write_table(
        pa.table({"sample_id": np.arange(n_samples), "location": np.concatenate(truths)}),
        truth_path,
    )
    return truth_path, pred_path


def snapshot_pipeline(folder: str) -> str:
    """Copy pipeline/ into folder as mobeval/ and put folder first on the children's PYTHONPATH.

    Other people edit the sources while benchmarks run; a source change would invalidate the Numba
    cache mid-run (a "warm" case would compile) and mix code versions. The copy keeps the run on
    one version of the code (the one present at its start).
    """
    root = Path(__file__).resolve().parents[1] / "pipeline"
    shutil.copytree(root, Path(folder) / "mobeval", ignore=shutil.ignore_patterns("__pycache__"))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [folder, *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    return folder
