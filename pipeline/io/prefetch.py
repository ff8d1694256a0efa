"""A run's first reads started early: the first batches an engine will read, decoded on a thread
while the run still loads its kernels.

Between a run's input checks and its first scored chunk, one core imports Numba and loads the
cached kernels (0.15-0.3 s), and before this module the inputs waited for it: the first Parquet
batch was opened half a second after the process started. Arrow's Parquet decoding and Polars'
conversion let go of the GIL, so a thread decodes meanwhile. :class:`ReadsAhead` starts, in
order, each read the engine names (``source.iter_batches(columns, batch_rows)``) and pulls its
first ``depth`` batches, then stops: memory holds at most those batches, what the engine's own
read-ahead would hold. When the engine asks for the same read (:class:`AheadSource`), it gets
those batches, then the rest of the same iterator: the batches a run scores are the batches it
would have read, in the same order, with an error where it would have been raised. A read asked
for with other columns or batch sizes (a guess that turned out wrong), or asked for again (a
restart over hash buckets), is read afresh, and the batches pulled for the reads not taken are let
go then, or when the run ends (:meth:`ReadsAhead.close`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

#: A read's states: not begun, its batches being pulled by the thread, pulled (or failed), asked
#: for by the engine (a read asked for before it began is read afresh by the engine), let go.
WAITING, READING, READ, TAKEN, GONE = "waiting", "reading", "read", "taken", "gone"


class _Read:
    """``source.iter_batches(columns, batch_rows)``, its first ``depth`` batches pulled ahead (a
    plain class: a dataclass's generated code costs the run's start 0.4 ms)."""

    def __init__(self, source, columns: list[str], batch_rows: int, depth: int) -> None:
        self.source, self.columns, self.batch_rows, self.depth = source, columns, batch_rows, depth
        self.state = WAITING
        self.batches: list = []
        self.iterator: Iterator | None = None
        self.ended = False  # the iterator had no more batches
        self.error: BaseException | None = None
        self.done = threading.Event()

    def matches(self, source, columns, batch_rows: int) -> bool:
        return (
            self.source is source
            and self.columns == list(columns)
            and self.batch_rows == batch_rows
        )

    def pull(self, stopped: threading.Event) -> None:
        """The first ``depth`` batches, or the error that came instead of one."""
        try:
            self.iterator = iter(self.source.iter_batches(self.columns, self.batch_rows))
            while len(self.batches) < self.depth and not stopped.is_set():
                batch = next(self.iterator, None)
                if batch is None:
                    self.ended = True
                    return
                self.batches.append(batch)
        except BaseException as error:  # noqa: BLE001 - raised in the engine, where it reads it
            self.error = error

    def handed(self) -> Iterator:
        """The batches pulled, then the error or the rest of the same iterator."""
        try:
            while self.batches:
                yield self.batches.pop(0)
            if self.error is not None:
                raise self.error
            if not self.ended:
                yield from self.iterator
        finally:
            self.close()

    def close(self) -> None:
        self.batches.clear()
        if self.iterator is not None:
            self.iterator.close()


class ReadsAhead:
    """A thread that starts ``reads`` ((source, columns, batch_rows, depth), in the order the
    engine will ask for them) now, one after the other; :meth:`take` hands a read over."""

    def __init__(self, reads) -> None:
        self._reads = [_Read(source, list(c), rows, depth) for source, c, rows, depth in reads]
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="mobeval-prefetch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for read in self._reads:
            with self._lock:
                if self._stopped.is_set() or read.state != WAITING:
                    continue
                read.state = READING
            read.pull(self._stopped)
            with self._lock:
                let_go = read.state == READING and self._stopped.is_set()
                if read.state == READING:  # else taken meanwhile, waiting for ``done``
                    read.state = GONE if let_go else READ
            if let_go:  # let go while it was being pulled: closed here, not by ``close``
                read.close()
            read.done.set()

    def take(self, source, columns, batch_rows: int) -> Iterator | None:
        """The batches of ``source.iter_batches(columns, batch_rows)`` if that read was started
        ahead and not yet taken (waiting for its first batches if the thread is pulling them);
        None if the engine reads it itself. A read that was not started ahead, or is asked for
        again (a restart), shows the reads ahead a wrong guess: those not taken are let go."""
        for read in self._reads:
            if not read.matches(source, columns, batch_rows):
                continue
            with self._lock:
                if read.state in (TAKEN, GONE):
                    break
                begun, read.state = read.state != WAITING, TAKEN
            if not begun:
                return None
            read.done.wait()
            return read.handed()
        self.close()
        return None

    def close(self) -> None:
        """Let go of every batch not taken and stop the thread, without waiting for it (Ctrl-C
        stops a run at once): it ends after the batch it is decoding, which it lets go."""
        with self._lock:
            self._stopped.set()
            gone = [read for read in self._reads if read.state in (WAITING, READ)]
            for read in gone:
                read.state = GONE
        for read in gone:
            read.close()


class AheadSource:
    """``source`` (:mod:`mobeval.io.sources`' interface) whose reads started ahead by ``ahead``
    are handed over when asked for; every other call goes to ``source``."""

    def __init__(self, source, ahead: ReadsAhead) -> None:
        self.source, self.ahead = source, ahead

    def __getattr__(self, name: str):
        """``label``, ``schema()``, ``fingerprint()``... (and ``renames``): the source's."""
        return getattr(self.source, name)

    def iter_batches(self, columns: list[str], batch_rows: int) -> Iterator:
        taken = self.ahead.take(self.source, columns, batch_rows)
        return self.source.iter_batches(columns, batch_rows) if taken is None else taken
