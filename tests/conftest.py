"""Shared fixtures: where the golden data lives, and small helpers for tests."""

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

GOLDEN = REPO_ROOT / "tests" / "golden"
"""What the reference systems returned on the inputs beside it (see ``golden/README.md``)."""


@pytest.fixture(scope="session")
def golden_dir() -> Path:
    return GOLDEN


@pytest.fixture(scope="session")
def nextloc_sample_out(tmp_path_factory) -> Path:
    """The output folder of ``jobs/nextloc_sample.toml`` (2 cities x 2 models), made once per
    session: read it, or copy it before changing it."""
    from mobeval.jobs import load_job, run_job

    out = tmp_path_factory.mktemp("nextloc_sample") / "out"
    run_job(load_job(REPO_ROOT / "jobs/nextloc_sample.toml", out=out), log=lambda _: None)
    return out
