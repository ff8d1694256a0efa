"""Outputs that appear whole or not at all.

Layout under OUT::

    OUT/summary/city=<c>/model=<m>/part-0.parquet       metric, value, n
    OUT/per_unit/city=<c>/model=<m>/part-00000.parquet  one row per unit (sample, uid, user)
    OUT/manifest.json                                   job, versions, input fingerprints, timings

A (city, model) result is first written under ``OUT/.staging/``, then each section directory is
moved into place with ``os.replace`` (the summary last), and the manifest, itself replaced
atomically, records it as complete. A killed job leaves at most a staging directory, which a resumed
job deletes and redoes.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import polars as pl

SECTIONS_LAST = "summary"
STAGING = ".staging"


def write_text_atomic(text: str, path: Path) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory, then rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    with os.fdopen(handle, "w") as stream:
        stream.write(text)
    os.replace(temporary, path)


def partition_dir(out: Path, section: str, city: str, model: str) -> Path:
    return out / section / f"city={city}" / f"model={model}"


class StagedResult:
    """Where one (city, model) result is written before it is committed into ``out``."""

    def __init__(self, out: Path, city: str, model: str) -> None:
        self.out = out
        self.city = city
        self.model = model
        self.root = out / STAGING / f"city={city}" / f"model={model}"
        shutil.rmtree(self.root, ignore_errors=True)
        self.parts: dict[str, int] = {}

    def add_part(self, section: str, frame: pl.DataFrame) -> None:
        """Append one part file (a chunk's rows) to ``section``."""
        index = self.parts.get(section, 0)
        self.parts[section] = index + 1
        directory = self.root / section
        directory.mkdir(parents=True, exist_ok=True)
        frame.write_parquet(directory / f"part-{index:05d}.parquet")

    def commit(self) -> dict[str, str]:
        """Move every section into place, the summary last; return section -> final directory."""
        placed = {}
        sections = sorted(self.parts, key=lambda name: name == SECTIONS_LAST)
        for section in sections:
            final = partition_dir(self.out, section, self.city, self.model)
            if final.exists():
                shutil.rmtree(final)
            final.parent.mkdir(parents=True, exist_ok=True)
            os.replace(self.root / section, final)
            placed[section] = str(final)
        shutil.rmtree(self.root, ignore_errors=True)
        return placed

    def discard(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
