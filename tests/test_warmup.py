"""`mobeval warmup` fills an empty Numba cache so that a real run afterwards compiles nothing.

Each family: warm-up on an empty ``NUMBA_CACHE_DIR`` in one process, then the family's sample
job (real files: Parquet, CSV.gz, .npy) in another process with the same cache. Numba reports
every cache save with ``NUMBA_DEBUG_CACHE=1``; the run must report none (it only loads), and the
cache must hold the same compiled files before and after it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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


def test_warmup_refuses_an_unknown_family(tmp_path):
    result = _mobeval(tmp_path / "cache", "warmup", "--family", "nope")
    assert result.returncode == 2
    assert "invalid choice: 'nope'" in result.stderr
