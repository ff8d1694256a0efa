"""The progress bar of a long run on stderr, in named phases, drawn by tqdm.

What is shown is decided here, without a terminal: nothing when the run was not asked for a bar
and stderr is not a terminal (:func:`wanted`), nothing until the run has lasted
:data:`SHOW_AFTER` seconds (a short run prints nothing at all, and does not even import tqdm),
then one line redrawn in place (the phase, rows done out of the phase's total, rate, ETA; tqdm
fits it to the terminal's width, or shows a widget in a Jupyter notebook), and, once the run
succeeds, one final line: the rows scored, the time, the rate. A run that fails clears its bar
and leaves the last line to the error. While Numba compiles a kernel (a first run, a cache
outdated) the bar says "compiling kernels", shown at once however short the run so far.

With a :class:`mobeval.logs.ResultLog` instead, each phase ends on one log line (and a long one
has a line every :data:`mobeval.logs.PERIOD` seconds), the compile included, then ``done``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator

#: The phases of a run, as their bars name them: reading inputs whole (to sort them in memory or
#: find how they are grouped), spreading them over hash buckets on disk, scoring chunks (each
#: chunk's per-unit part written meanwhile), committing the result's files.
READING, BUCKETING, SCORING, WRITING = "reading", "bucketing", "scoring", "writing"

#: What the bar says while Numba compiles kernels (within a phase, most often the first chunk's
#: scoring).
COMPILING = "compiling kernels"

#: Each phase's name in log lines (:mod:`mobeval.logs`).
LOG_NAMES = {
    READING: "read",
    BUCKETING: "bucket",
    COMPILING: "compile",
    SCORING: "score",
    WRITING: "write",
}

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
    seconds, as :func:`time.perf_counter` (tests pass their own). ``log``: the result's log
    lines (:class:`mobeval.logs.ResultLog`), if any."""

    def __init__(
        self,
        label: str,
        total: int | None,
        *,
        enabled: bool | None = None,
        stream=None,
        clock=time.perf_counter,
        log=None,
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
        self.log = log
        #: When the current phase began, its last log line, and its seconds spent compiling.
        self._phase_began = self._last_line = self.started
        self._compiled, self._compiling_since = 0.0, None
        self._named = False  # whether the current phase was started by name (logged when ended)
        self._closed = False
        self._watch = _watch_compiles(self) if self.enabled or log is not None else None

    def phase(self, name: str, total: int | None = None) -> None:
        """Start phase ``name`` (one of :data:`READING`... :data:`WRITING`) from row 0."""
        if self._named or self.done[self.current]:
            self._log_phase()
        self._named = True
        self._phase_began = self._last_line = self.clock()
        self._compiled = 0.0
        self.current, self.total = name, total
        self.done[name] = 0
        if self._bar is not None:  # each phase has a bar of its own: its own rate and ETA
            self._bar.close()
            self._bar = None
        self._show_if_due()

    def advance(self, rows: int) -> None:
        """``rows`` more rows done in the current phase."""
        self.done[self.current] += rows
        if self.log is not None and self.log.due(self.clock() - self._last_line):
            self._log_phase(ended=False)
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

    def compiling(self, started: bool) -> None:
        """Numba has ``started`` compiling kernels (``False``: it is done): the bar says so,
        shown at once; the phase's log line is preceded by one ``compile`` line, its seconds
        compiling in all."""
        now = self.clock()
        if started:
            self._compiling_since = now
            if self.enabled and self._bar is None:
                self._show(f"{self.label} {COMPILING}")
        elif self._compiling_since is not None:
            seconds = now - self._compiling_since
            self._compiled += seconds
            self._compiling_since = None
        if self._bar is None:
            return
        if started or self._named or self.done[self.current]:
            self._bar.set_description(f"{self.label} {COMPILING if started else self.current}")
        else:  # compiled before the run's first phase: its bar is drawn as that phase begins
            self._bar.close()
            self._bar = None

    def _log_phase(self, ended: bool = True) -> None:
        """The current phase's log line: its rows and seconds so far (the compile's left out),
        after its ``compile`` line if it has ``ended`` having compiled kernels."""
        now = self.clock()
        self._last_line = now
        if self.log is None:
            return
        if ended and self._compiled > 0:
            self.log.phase(LOG_NAMES[COMPILING], None, self._compiled)
        rows = None if self.current == WRITING else self.done[self.current]
        self.log.phase(LOG_NAMES[self.current], rows, now - self._phase_began - self._compiled)

    def close(self, succeeded: bool = True) -> None:
        """Clear the bar (if shown); after a success, write :meth:`final_line` in its place (and
        the log's last lines: the current phase's, then ``done``). Once; later calls do nothing."""
        if self._closed:
            return
        self._closed = True
        if self._watch is not None:
            _unwatch(self._watch)
        if succeeded and self.log is not None:
            self._log_phase()
            self.log.phase("done", self.done.get(SCORING, 0), self.clock() - self.started)
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
        self._show(f"{self.label} {self.current}")

    def _show(self, description: str) -> None:
        from tqdm.auto import tqdm  # imported only when a bar is shown

        self._bar = tqdm(
            desc=description,
            total=self.total,
            initial=self.done[self.current],
            file=self.stream,
            unit=" rows",
            unit_scale=True,
            dynamic_ncols=True,
            mininterval=0.25,
            leave=False,
        )


def _watch_compiles(meter: Progress):
    """Tell ``meter`` when Numba starts compiling kernels and when it is done (its
    ``numba:compile`` events, which nest: a kernel compiles the functions it calls). A kernel
    loaded from Numba's cache is not compiled: no event."""
    from numba.core import event

    class Watch(event.Listener):
        depth = 0

        def on_start(self, _event) -> None:
            self.depth += 1
            if self.depth == 1:
                meter.compiling(True)

        def on_end(self, _event) -> None:
            self.depth -= 1
            if self.depth == 0:
                meter.compiling(False)

    watch = Watch()
    event.register("numba:compile", watch)
    return watch


def _unwatch(watch) -> None:
    from numba.core import event

    event.unregister("numba:compile", watch)
