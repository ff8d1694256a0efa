"""The progress bar of a long run on stderr, in named phases, drawn by tqdm.

What is shown is decided here, without a terminal: nothing when the run was not asked for a bar
and stderr is not a terminal (:func:`wanted`), nothing until the run has lasted
:data:`SHOW_AFTER` seconds (a short run prints nothing at all, and does not even import tqdm),
then one line redrawn in place (the phase, rows done out of the phase's total, rate, ETA; tqdm
fits it to the terminal's width, or shows a widget in a Jupyter notebook), and, once the run
succeeds, one final line: the rows scored, the time, the rate. A run that fails clears its bar
and leaves the last line to the error.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator

#: The phases of a run, as their bars name them: reading inputs whole (to sort them in memory or
#: find how they are grouped), spreading them over hash buckets on disk, scoring chunks (each
#: chunk's per-unit part written meanwhile), committing the result's files.
READING, BUCKETING, SCORING, WRITING = "reading", "bucketing", "scoring", "writing"

#: Seconds a run lasts before its bar appears.
SHOW_AFTER = 1.0


def wanted(progress: bool | None, stream=None) -> bool:
    """Whether a run shows progress: ``progress=True`` always, ``False`` (``--quiet``) never,
    ``None`` (the default) when ``stream`` (default: stderr) is a terminal."""
    if progress is not None:
        return progress
    stream = sys.stderr if stream is None else stream
    return bool(getattr(stream, "isatty", lambda: False)())


class Progress:
    """The rows a run has done in its current phase out of the phase's total (``None``: not
    known; a total the rows pass is dropped), drawn on ``stream`` once the run has lasted
    :data:`SHOW_AFTER` seconds. ``enabled``: the ``progress`` option (:func:`wanted`). ``clock``:
    seconds, as :func:`time.perf_counter` (tests pass their own)."""

    def __init__(
        self,
        label: str,
        total: int | None,
        *,
        enabled: bool | None = None,
        stream=None,
        clock=time.perf_counter,
    ) -> None:
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        self.enabled = wanted(enabled, self.stream)
        self.clock = clock
        self.started = clock()
        self.current, self.total = SCORING, total
        #: Rows done per phase (the latest time each phase ran).
        self.done: dict[str, int] = {SCORING: 0}
        self._bar = None

    def phase(self, name: str, total: int | None = None) -> None:
        """Start phase ``name`` (one of :data:`READING`... :data:`WRITING`) from row 0."""
        self.current, self.total = name, total
        self.done[name] = 0
        if self._bar is not None:  # each phase has a bar of its own: its own rate and ETA
            self._bar.close()
            self._bar = None
        self._show_if_due()

    def advance(self, rows: int) -> None:
        """``rows`` more rows done in the current phase."""
        self.done[self.current] += rows
        if self._bar is not None:
            self._bar.update(rows)
        else:
            self._show_if_due()

    def counted(self, batches: Iterable) -> Iterator:
        """The ``batches`` (DataFrames) as they come, each one's rows advanced as it is read."""
        for batch in batches:
            self.advance(batch.height)
            yield batch

    def final_line(self) -> str:
        """The line a successful run ends with: the rows scored, the whole run's time, the
        rate."""
        seconds = self.clock() - self.started
        rows = self.done.get(SCORING, 0)
        rate = f", {rows / seconds:,.0f} rows/s" if seconds > 0 else ""
        return f"{self.label}: {rows:,} rows in {seconds:,.1f} s{rate}"

    def close(self, succeeded: bool = True) -> None:
        """Clear the bar (if shown); after a success, write :meth:`final_line` in its place."""
        if self._bar is None:
            return
        self._bar.close()
        self._bar = None
        if succeeded:
            self.stream.write(self.final_line() + "\n")
            self.stream.flush()

    def _show_if_due(self) -> None:
        """Draw the bar, from the current phase's rows, if the run has lasted long enough."""
        if not self.enabled or self.clock() - self.started < SHOW_AFTER:
            return
        from tqdm.auto import tqdm  # imported only when a bar is shown

        self._bar = tqdm(
            desc=f"{self.label} {self.current}",
            total=self.total,
            initial=self.done[self.current],
            file=self.stream,
            unit=" rows",
            unit_scale=True,
            dynamic_ncols=True,
            mininterval=0.25,
            leave=False,
        )
