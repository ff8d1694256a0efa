"""A progress line on stderr for long runs; silent when stderr is not a terminal."""

from __future__ import annotations

import sys
import time


class Progress:
    """Rows done out of an estimated total, redrawn at most 4 times a second."""

    def __init__(self, label: str, total: int | None, *, enabled: bool | None = None) -> None:
        self.label = label
        self.phase = "scoring"
        self.total = total
        self.done = 0
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.started = time.perf_counter()
        self._drawn = 0.0

    def restart(self, phase: str) -> None:
        self.phase = phase
        self.done = 0
        self._draw(force=True)

    def advance(self, rows: int) -> None:
        self.done += rows
        self._draw()

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self._drawn < 0.25:
            return
        self._drawn = now
        elapsed = now - self.started
        if self.total:
            share = min(1.0, self.done / self.total)
            bar = "#" * int(share * 30)
            text = f"{self.label} {self.phase} [{bar:<30}] {share:6.1%} {self.done:,} rows"
        else:
            text = f"{self.label} {self.phase} {self.done:,} rows"
        sys.stderr.write(f"\r{text} {elapsed:6.1f}s")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            self._draw(force=True)
            sys.stderr.write("\n")
            sys.stderr.flush()
