"""Tallies of the generation metrics (key -> counts), folded exactly in bounded memory.

A :class:`Tally` holds rows of int64 (:mod:`mobeval.kernels.tallies`): a key of ``width``
columns (a location id, a length, a trip length's :func:`~mobeval.kernels.auc.score_keys`, a
trajectory's two hashes), then ``n`` (rows, each as many times as its resample weight) and
``drawn`` (distinct rows drawn, whatever their weight). Chunks fold in any order and cut, and
give the same rows.

Memory: at most ``budget`` rows (:data:`TALLY_ROWS`, 32 bytes a row of trajectory hashes: 8 MiB)
whatever the population. A chunk's rows wait in ``parts`` until they outweigh the table, then
all collapse into it (each row is collapsed a logarithmic number of times); a table that
outgrows half the budget goes to disk as a sorted *run* (a file of its rows in a
:class:`~mobeval.io.scratch.ScratchFolder` of the system's temporary folder, removed when the
tally is let go, and by the next spill after a kill), as auc's counts do
(:class:`mobeval.tasks.recs_population.ScoreCounts`). :func:`aligned_blocks` reads the runs and
tables of several tallies back together in key order, a block of each run at a time
(``budget`` rows in all), each block holding every row of its keys: so two populations' hashes
are matched, and a trip-length histogram binned, without either tally in memory. A tally
pickles whole (Spark's partitions reach the driver as pickles; it spills again there).
"""

from __future__ import annotations

import tempfile
import weakref
from collections.abc import Callable
from pathlib import Path

import numpy as np

from mobeval.io.scratch import ScratchFolder
from mobeval.io.whole import read_rows, write_whole
from mobeval.kernels.tallies import collapse, matched, upto

#: A tally's budget: the most rows it holds in memory before it spills them to a run on disk.
TALLY_ROWS = 1 << 18
#: The count columns after the key: ``n``, ``drawn``.
COUNTS = 2


class Tally:
    """Rows ``key (width int64) -> n, drawn`` folded in bounded memory (module docstring)."""

    def __init__(self, width: int, rows: np.ndarray | None = None) -> None:
        self.width, self.budget = width, TALLY_ROWS
        self.table = np.empty((0, width + COUNTS), dtype=np.int64) if rows is None else rows
        self.parts: list[np.ndarray] = []
        self.runs: list[tuple[Path, int]] = []  # (path, rows) of each spilled run
        self.folder: ScratchFolder | None = None

    @classmethod
    def of(cls, *keys: np.ndarray) -> Tally:
        """The tally of one row per position of the key columns ``keys``: ``n = drawn = 1``."""
        ones = np.ones((len(keys[0]), COUNTS), dtype=np.int64)
        rows = np.column_stack([*(np.asarray(k, dtype=np.int64) for k in keys), ones])
        return cls(len(keys), collapse(rows, len(keys)))

    def empty(self) -> Tally:
        """A tally of no row of this one's key width (what a merge starts from)."""
        return Tally(self.width)

    def copies(self, kind: str, other: Tally | None = None) -> int:
        """``n`` summed over the keys drawn at least twice (``kind`` ``duplicates``) or over
        the keys that ``other`` holds (``matched``), a block of keys at a time."""
        n = self.width
        if kind == "duplicates":
            return sum(
                int(rows[rows[:, n + 1] >= 2, n].sum()) for (rows,) in aligned_blocks([self])
            )
        blocks = aligned_blocks([self, other])
        return sum(int(rows[matched(rows, theirs, n), n].sum()) for rows, theirs in blocks)

    @property
    def rows_in_memory(self) -> int:
        """The rows the table and the waiting parts hold."""
        return len(self.table) + sum(len(part) for part in self.parts)

    def add(self, other: Tally) -> None:
        """Fold ``other``'s rows (its runs read back a block at a time; ``other`` unchanged)."""
        step = max(self.budget // 2, 1)
        for path, rows in other.runs:
            for start in range(0, rows, step):
                self._fold(read_rows(path, start, min(step, rows - start), self.width + COUNTS))
        for part in (other.table, *other.parts):
            self._fold(part)

    def scaled(self, weight: int) -> Tally:
        """This tally's rows with ``n`` times ``weight`` (a chunk's tally: never spilled)."""
        self._collapse()
        rows = self.table.copy()
        rows[:, self.width] *= weight
        return Tally(self.width, rows)

    def _fold(self, part: np.ndarray) -> None:
        if not len(part):
            return
        self.parts.append(part)
        waiting = self.rows_in_memory - len(self.table)
        if waiting > len(self.table) or self.rows_in_memory > self.budget:
            self._collapse()
            if len(self.table) > self.budget // 2:
                self._spill()

    def _collapse(self) -> None:
        if self.parts:
            self.table = collapse(np.concatenate([self.table, *self.parts]), self.width)
            self.parts = []

    def _spill(self) -> None:
        """The table to a new run, the table emptied."""
        if self.folder is None:
            self.folder = ScratchFolder(tempfile.gettempdir(), "mobeval-tally-")
            weakref.finalize(self, self.folder.close)
        path = self.folder.path / f"run-{len(self.runs)}.bin"
        write_whole(path, self.table)
        self.runs.append((path, len(self.table)))
        self.table = self.table[:0]

    def bounds(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The least and the largest key (None: no row)."""
        self._collapse()
        width = self.width + COUNTS
        ends = [
            read_rows(path, at, 1, width)[0] for path, rows in self.runs for at in (0, rows - 1)
        ]
        ends += [self.table[0], self.table[-1]] if len(self.table) else []
        if not ends:
            return None
        keys = sorted(tuple(row[: self.width]) for row in ends)
        return np.array(keys[0]), np.array(keys[-1])

    def whole(self) -> np.ndarray:
        """Every row, collapsed, in memory (for the tallies bounded by the location table)."""
        return np.concatenate([self.table[:0], *(block for (block,) in aligned_blocks([self]))])

    def __getstate__(self) -> dict:
        return {"width": self.width, "table": self.whole()}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["width"], state["table"])


def aligned_blocks(tallies: list[Tally]):
    """The rows of ``tallies`` (one key width) in blocks of ascending keys, one collapsed array
    per tally for the same range of keys: each round takes, from the block read of each run,
    the rows up to the least of the blocks' last keys (every row of that key or a lower one is
    then in memory), and as many rows of each table."""
    width = tallies[0].width
    for tally in tallies:
        tally._collapse()
    sources = [(i, path, rows) for i, t in enumerate(tallies) for path, rows in t.runs if rows]
    step = max(tallies[0].budget // (len(sources) + 1), 1)
    starts = [0] * len(sources)
    blocks = [read_rows(path, 0, min(step, rows), width + COUNTS) for _, path, rows in sources]
    tables = [tally.table for tally in tallies]
    while any(len(block) for block in blocks) or any(len(table) for table in tables):
        ends = [tuple(block[-1, :width]) for block in blocks if len(block)]
        last = np.array(min(ends)) if ends else None
        taken = [[] for _ in tallies]
        for k, (i, path, rows) in enumerate(sources):
            cut = len(blocks[k]) if last is None else upto(blocks[k], width, last)
            taken[i].append(blocks[k][:cut])
            blocks[k], starts[k] = blocks[k][cut:], starts[k] + cut
            if not len(blocks[k]) and starts[k] < rows:
                blocks[k] = read_rows(path, starts[k], min(step, rows - starts[k]), width + COUNTS)
        for i, table in enumerate(tables):
            cut = len(table) if last is None else upto(table, width, last)
            taken[i].append(table[:cut])
            tables[i] = table[cut:]
        yield [collapse(np.concatenate(parts), width) for parts in taken]


class ShuffledTally:
    """A hash tally whose rows lie elsewhere: in the rows of a Spark table, under the names
    ``sources`` (one per partition's tally: :mod:`mobeval.engines.spark.hashes`). Merged, the
    names join; :meth:`copies` asks ``counter(kind, sources, other's sources)`` (set on the
    driver), which counts in Spark, so that no process holds the hashes of every trajectory."""

    def __init__(self, width: int, sources=frozenset(), counter: Callable | None = None) -> None:
        self.width, self.sources, self.counter = width, frozenset(sources), counter

    def empty(self) -> ShuffledTally:
        return ShuffledTally(self.width, counter=self.counter)

    def add(self, other: ShuffledTally) -> None:
        self.sources |= other.sources
        self.counter = self.counter or other.counter

    def copies(self, kind: str, other: ShuffledTally | None = None) -> int:
        """:meth:`Tally.copies`, counted where the rows lie."""
        return self.counter(kind, self.sources, None if other is None else other.sources)
