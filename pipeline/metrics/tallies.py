"""Tallies (key columns -> counts) folded chunk by chunk and merged exactly: the generation
metrics' counts of ids, lengths, trajectories' hashes and regions
(:mod:`mobeval.metrics.generation_counts`)."""

from __future__ import annotations

import numpy as np
import polars as pl

#: A tally's count columns: ``n`` (rows, each as many times as its resample weight) and
#: ``drawn`` (distinct rows drawn, whatever their weight).
COUNTS = ("n", "drawn")


def tally_of(**keys: np.ndarray) -> Tally:
    """``keys`` -> ``n`` and ``drawn`` (how many rows hold each key)."""
    n = pl.len().cast(pl.Int64)
    return Tally([pl.DataFrame(keys).group_by(list(keys)).agg(n.alias("n"), n.alias("drawn"))])


def _add(a: pl.DataFrame | None, b: pl.DataFrame) -> pl.DataFrame:
    if a is None:
        return b
    keys = [c for c in a.columns if c not in COUNTS]
    return pl.concat([a, b]).group_by(keys).agg(pl.col(*COUNTS).sum())


class Tally:
    """A tally (key columns -> ``n``, ``drawn``) folded chunk by chunk as a few runs, each at
    least twice the next one's rows (a chunk's tally joins the last run while it is not half
    its size): folding N rows costs O(N log N) row groupings, where merging each chunk into the
    whole tally costs O(N x chunks), and the runs hold at most twice the rows of the merged tally
    (the trajectories' hashes: 32 bytes a distinct trajectory, 64 at most)."""

    def __init__(self, runs: list[pl.DataFrame] | None = None) -> None:
        self.runs = runs or []

    def add(self, other: Tally) -> None:
        for run in other.runs:
            self.runs.append(run)
            while len(self.runs) > 1 and 2 * self.runs[-1].height > self.runs[-2].height:
                last = self.runs.pop()
                self.runs[-1] = _add(self.runs[-1], last)

    def frame(self) -> pl.DataFrame:
        """The tally as one frame (the runs merged, kept as one run)."""
        merged = None
        for run in self.runs:
            merged = _add(merged, run)
        self.runs = [merged]
        return merged

    def scaled(self, weight: int) -> Tally:
        return Tally([run.with_columns(pl.col("n") * weight) for run in self.runs])
