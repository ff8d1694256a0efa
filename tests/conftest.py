"""Shared fixtures: where the golden data lives, and small helpers for tests."""

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    """The shared folder (specs, golden data): $MOBEVAL_SHARED, else ../shared beside the repo."""
    return Path(os.environ.get("MOBEVAL_SHARED", REPO_ROOT.parent / "shared"))


GOLDEN = shared_dir() / "golden"


@pytest.fixture(scope="session")
def golden_dir() -> Path:
    if not GOLDEN.is_dir():
        pytest.fail(f"golden data not found at {GOLDEN}; set MOBEVAL_SHARED to the shared folder")
    return GOLDEN
