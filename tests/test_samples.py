"""mobeval samples DIR: the packaged data_samples/ and jobs/ copied out whole, the documented
commands running from DIR; the wheel ships every tracked file of both as package data."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from mobeval.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _tracked() -> list[str]:
    """The repository's files under data_samples/ and jobs/ (git's list)."""
    listing = subprocess.run(
        ["git", "ls-files", "data_samples", "jobs"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return sorted(listing.stdout.split())


def _files(folder: Path) -> list[str]:
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )


def test_samples_copies_the_documented_folders(tmp_path, capsys):
    target = tmp_path / "try"
    assert main(["samples", str(target)]) == 0
    assert _files(target) == _tracked()
    for name in _tracked():
        assert (target / name).read_bytes() == (ROOT / name).read_bytes(), name
    assert str(target / "jobs") in capsys.readouterr().err


def test_a_job_runs_from_the_copy(tmp_path):
    assert main(["samples", str(tmp_path)]) == 0
    assert main(["run", str(tmp_path / "jobs" / "recs_sample.toml"), "--quiet"]) == 0
    assert (tmp_path / "out" / "recs_sample" / "manifest.json").is_file()  # its own out = "../out"


def test_samples_never_write_over_a_folder(tmp_path, capsys):
    (tmp_path / "jobs").mkdir()
    assert main(["samples", str(tmp_path)]) == 2
    assert "jobs: already there" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jobs"]  # data_samples not copied


def test_the_wheel_ships_the_samples(tmp_path):
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if build.returncode != 0:
        pytest.skip(f"pip wheel could not build here: {build.stderr.strip()[-300:]}")
    (wheel,) = tmp_path.glob("mobeval-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    shipped = sorted(n.removeprefix("mobeval/_samples/") for n in names if "/_samples/" in n)
    assert shipped == _tracked()
