"""Location-id sequence files, one trajectory a line, as MoveSim writes them.

MoveSim (FIBLAB/MoveSim ``code/utils.py``, ``read_data_from_file`` / ``write_data_to_file``)
keeps a population in a text file (``real.data``, ``test.data``, ``gene.data``): each line one
trajectory, its location ids (integers) apart by spaces, one per time slot (48 a day). Read as
an input of the trajectory family, line ``i`` (from 0) is the trajectory ``uid = i`` of day
``d = 0``, its ``j``-th id the row ``t = j``, ``location = id``: the ``ids`` location space
(:mod:`mobeval.tasks.population_space`), whose coordinates come from a location table such as
MoveSim's ``gps`` file.

A file is told by its name (``.data``, gzipped or not) and its first line (integers apart by
white space). It is streamed in blocks of lines, so memory is bounded by the block.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from mobeval.errors import InputError, no_file
from mobeval.io.text import open_binary

#: The names a sequence file may have.
SUFFIXES = (".data", ".data.gz")
#: The columns a sequence file is read as.
SCHEMA = {"uid": pl.Int64, "d": pl.Int64, "t": pl.Int64, "location": pl.Int64}


#: A line of integers (at most 18 digits: int64) apart by white space.
LINE = re.compile(rb"\s*-?\d{1,18}(?:[ \t]+-?\d{1,18})*\s*")


def _ids(line: bytes) -> int | None:
    """How many integers ``line`` holds, if it holds integers only (at least one), else None."""
    return len(line.split()) if LINE.fullmatch(line) else None


def is_sequence_file(name: str, first_line: bytes) -> bool:
    """Whether a file of this ``name`` and ``first_line`` is a sequence file: a ``.data`` name
    whose first line holds integers apart by white space."""
    return name.lower().endswith(SUFFIXES) and _ids(first_line) is not None


def sniff(spec) -> bool:
    """Whether ``spec`` names a local sequence file (:func:`is_sequence_file`)."""
    path = Path(str(spec))
    if not str(path).lower().endswith(SUFFIXES) or not path.is_file():
        return False
    with open_binary(path) as stream:
        return is_sequence_file(str(path), stream.readline(1 << 20))


@dataclass(frozen=True)
class SequenceSource:
    """A sequence file as an input source (columns :data:`SCHEMA`), streamed block by block."""

    label: str
    path: Path

    @classmethod
    def open(cls, spec) -> SequenceSource:
        path = Path(str(spec))
        if not path.is_file():
            raise no_file(spec)
        return cls(str(spec), path)

    @property
    def files(self) -> tuple[Path, ...]:
        return (self.path,)

    def schema(self) -> dict[str, pl.DataType]:
        return dict(SCHEMA)

    def row_count_estimate(self) -> int:
        return max(1, os.path.getsize(self.path) // 6)

    def has_rows(self) -> bool:
        with open_binary(self.path) as stream:
            return any(line.strip() for line in stream)

    def iter_batches(self, columns: list[str], batch_rows: int) -> Iterator[pl.DataFrame]:
        """Frames of about ``batch_rows`` rows (whole lines); a line holding no id or a field
        that is not an integer is an InputError naming the line."""
        missing = [c for c in columns if c not in SCHEMA]
        if missing:
            raise InputError(
                "missing column (a sequence file gives uid, d, t, location)",
                path=self.label,
                column=missing[0],
            )
        lines, lengths, fields, number = [], [], 0, 0
        with open_binary(self.path) as stream:
            for number, line in enumerate(stream):
                ids = _ids(line)
                if ids is None:
                    what = "holds no location id" if not line.strip() else "holds a non-integer"
                    raise InputError(
                        f"line {number + 1} {what} (a sequence file is location ids apart by "
                        "spaces, one trajectory a line)",
                        path=self.label,
                        column="location",
                        key=number,
                    )
                lines.append(line)
                lengths.append(ids)
                fields += ids
                if fields >= batch_rows:
                    yield self._frame(lines, lengths, number + 1 - len(lines)).select(columns)
                    lines, lengths, fields = [], [], 0
        if lines:
            yield self._frame(lines, lengths, number + 1 - len(lines)).select(columns)

    @staticmethod
    def _frame(lines: list[bytes], counts: list[int], first: int) -> pl.DataFrame:
        """The rows of ``lines`` (checked: ``counts`` integers each), the first of which is line
        ``first`` (from 0)."""
        lengths = np.array(counts, dtype=np.int64)
        starts = np.cumsum(lengths) - lengths
        location = np.fromstring(b" ".join(lines).decode(), dtype=np.int64, sep=" ")
        uid = np.repeat(np.arange(first, first + len(lines), dtype=np.int64), lengths)
        t = np.arange(location.size, dtype=np.int64) - np.repeat(starts, lengths)
        zero = np.zeros(location.size, dtype=np.int64)
        return pl.DataFrame({"uid": uid, "d": zero, "t": t, "location": location})

    def fingerprint(self) -> list[dict]:
        from mobeval.io.sources import file_fingerprint

        return [file_fingerprint(self.path, footer=False)]
