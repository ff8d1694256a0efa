"""`mobeval warmup` fills an empty Numba cache so that a real run afterwards compiles nothing.

Each family: warm-up on an empty ``NUMBA_CACHE_DIR`` in one process, then the family's sample
job (real files: Parquet, CSV.gz, .npy) in another process with the same cache, then its
predictions out of key order read each of the three ways (every family but logits). Numba reports
every cache save with ``NUMBA_DEBUG_CACHE=1``; the run must report none (it only loads), and the
cache must hold the same compiled files before and after it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
FAMILIES = ("nextloc", "recs", "trajectory", "logits")


def _mobeval(cache: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), NUMBA_DEBUG_CACHE="1")
    return subprocess.run(
        [sys.executable, "-m", "mobeval", *args],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=env,
    )


#: family -> (command, truth flag and file, predictions flag and file, unit key): sample inputs
#: that tests/test_warmup.py writes out of key order
UNSORTED = {
    "nextloc": (
        ("--truth", "data_samples/nextloc/tky/truth.parquet"),
        ("--pred", "data_samples/nextloc/tky/markov.parquet"),
        "sample_id",
    ),
    "recs": (
        ("--ratings", "data_samples/recs/ratings.parquet"),
        ("--recs", "data_samples/recs/mf.parquet"),
        "user_id",
    ),
    "trajectory": (
        ("--reference", "data_samples/humob/reference_test.csv.gz"),
        ("--generated", "data_samples/humob/weekly_repeat.csv.gz"),
        "uid",
    ),
}


def _unsorted_runs(tmp_path: Path, family: str) -> list[list[str]]:
    """The family's sample predictions with each unit's rows together in reverse key order, and
    with every row apart (a seeded shuffle), each as the command that scores it: streamed again
    and sorted per chunk, sorted in memory (one chunk), over hash buckets (small chunks)."""
    (truth_flag, truth), (pred_flag, pred), key = UNSORTED[family]
    if pred.endswith(".csv.gz"):  # HuMob's CSV: no header
        frame = pl.read_csv(pred, has_header=False, new_columns=["uid", "d", "t", "x", "y"])
    else:
        frame = pl.read_parquet(pred)
    grouped, scattered = tmp_path / "grouped.parquet", tmp_path / "scattered.parquet"
    frame.sort(key, descending=True, maintain_order=True).write_parquet(grouped)
    frame.sample(fraction=1.0, shuffle=True, seed=7).write_parquet(scattered)
    command = [family, truth_flag, truth, "--quiet", "--format", "csv", pred_flag]
    return [
        [*command, str(grouped), "--chunk-rows", "5000"],
        [*command, str(scattered), "--chunk-rows", str(frame.height)],
        [*command, str(scattered), "--chunk-rows", "5000"],
    ]


def _compiled(cache: Path) -> set[str]:
    return {str(p.relative_to(cache)) for p in cache.rglob("*.nbc")}


@pytest.mark.parametrize("family", FAMILIES)
def test_a_run_after_warmup_compiles_nothing(tmp_path, family):
    cache = tmp_path / "cache"
    warm = _mobeval(cache, "warmup", "--family", family)
    assert warm.returncode == 0, warm.stderr
    assert f"cache: {cache}" in warm.stderr
    compiled = _compiled(cache)
    assert compiled  # the warm-up compiled and saved kernels

    run = _mobeval(
        cache, "run", f"jobs/{family}_sample.toml", "--out", str(tmp_path / "out"), "--quiet"
    )
    assert run.returncode == 0, run.stderr
    assert "data loaded from" in run.stdout  # the kernels came from the cache...
    saved = [line for line in run.stdout.splitlines() if "data saved to" in line]
    assert saved == []  # ...and none was compiled
    assert _compiled(cache) == compiled
    # predictions out of key order, each way the local engine reads them: nothing compiled either
    for argv in _unsorted_runs(tmp_path, family) if family in UNSORTED else []:
        run = _mobeval(cache, *argv)
        assert run.returncode == 0, run.stderr
        assert "data saved to" not in run.stdout, argv
    assert _compiled(cache) == compiled


def test_warmup_refuses_an_unknown_family(tmp_path):
    result = _mobeval(tmp_path / "cache", "warmup", "--family", "nope")
    assert result.returncode == 2
    assert "invalid choice: 'nope'" in result.stderr


def test_a_cache_folder_that_cannot_be_written_is_refused_before_compiling(tmp_path):
    """NUMBA_CACHE_DIR a file: Numba would cache elsewhere without a word, and warmup would
    print the file as the cache. One line, exit 2, nothing compiled anywhere."""
    cache = tmp_path / "cache"
    cache.write_text("")
    result = _mobeval(cache, "warmup", "--family", "logits")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"mobeval: error: NUMBA_CACHE_DIR={cache}: the kernels cannot be cached there (a file, "
        "not a folder); Numba would cache them elsewhere, unseen\n"
    )
