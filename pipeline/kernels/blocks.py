"""Parallel kernels without ``parallel=True``: a serial kernel run over blocks of units on threads.

Every parallel kernel of mobeval scores units (samples, users, uid-days, rows) independently and
writes each unit's values to that unit's own slots. Numba's ``prange`` parallelises such a loop,
but at a price paid on every empty cache: the parfor lowering builds a second function (the
gufunc), compiles it with every function it calls linked in and optimised again, and links the
threading layer's launch code. Measured on a 2-vCPU VM, the ``prange`` wrapper of the
next-location rank kernel alone took 1.9-3.2 s to compile on top of the serial kernel inside it,
and the next-location job compiled in about half the time with every ``parallel=True`` dropped.

So each such kernel is a plain serial ``@njit(nogil=True, cache=True)`` function of a range of
units, ``kernel(*arrays, first, last)`` scoring units ``first`` to ``last - 1``, and
:func:`run_blocks` calls it on blocks of units from :func:`thread_count` Python threads (the
count ``NUMBA_NUM_THREADS`` and ``numba.set_num_threads`` set, as for ``prange``). A compiled
function that releases the GIL runs on as many cores as there are threads; the blocks go to the
threads as they come free (a thread that finishes early takes the next block). Each unit is
computed by the same code whatever block it falls in, and writes only its own outputs, so the
results have the same bits for any number of threads or blocks. Small inputs (one block) run in
the calling thread. The threads are kept from one call to the next (:class:`_Workers`): a run
scores a chunk after another, and two threads started and joined for each cost a chunk 0.1-0.25
ms of its main thread.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable

import numba
import numpy as np
from numba.np.ufunc import parallel

#: Blocks per thread: enough for the threads to even out units of unequal cost.
BLOCKS_PER_THREAD = 4
#: Seconds the calling thread waits on a worker before it looks for a signal (Ctrl-C, SIGTERM).
SIGNAL_WAIT = 0.1
#: Per thread: the most threads :func:`run_blocks` called from it runs its kernels on.
_PACE = threading.local()


def score_on(threads: int | None) -> None:
    """The most threads :func:`run_blocks`, called from this thread, runs its kernel on (``None``:
    :func:`thread_count`; 1: in this thread alone, one call over every unit): set by a stream whose
    reading takes cores of its own (:func:`mobeval.engines.local.read_ahead`, ``paced``). While
    the scoring waits on the reading threads, or the reading keeps a core busy beside it, the
    kernel's other threads would only take cores from them: on 2 cores, a 100 M-row ``mobeval
    recs`` run ran 6-7 threads at once (Polars' decode, the read-ahead threads, the kernel's two),
    and its kernel's blocks waited on each other's threads at every chunk. The values are the same
    bits on any number of threads."""
    _PACE.threads = threads


def thread_count() -> int:
    """``numba.get_num_threads()``, without launching Numba's threading layer where nothing has
    launched it yet. Numba's function launches it first (its pool's library loaded, its threads
    started, ``multiprocessing`` imported for a lock: 3-4 ms of a run's main thread, Python's),
    which no kernel of mobeval's uses: its parallel kernels run on :func:`run_blocks`' own
    threads. Unlaunched, the count is the one the launch would give the calling thread, Numba's
    ``NUM_THREADS`` (``NUMBA_NUM_THREADS`` as Numba read it): ``numba.set_num_threads``, the only
    way to another count, launches the layer first."""
    if not parallel._is_initialized:
        return parallel.NUM_THREADS
    return numba.get_num_threads()


def block_count(n_units: int, grain: int, n_blocks: int | None = None) -> int:
    """Blocks to split ``n_units`` into: ``n_blocks`` (default ``BLOCKS_PER_THREAD`` per thread),
    but no block of fewer than ``grain`` units, and at least one block."""
    if n_blocks is None:
        n_blocks = BLOCKS_PER_THREAD * thread_count()
    return max(1, min(n_blocks, -(-n_units // max(grain, 1))))


class _Workers:
    """Daemon threads that run the calls handed to them (:meth:`hand`) from one queue, kept for
    the next parallel kernel; in a forked child none (threads do not survive a fork: the child
    starts its own)."""

    def __init__(self) -> None:
        self.calls: queue.SimpleQueue = queue.SimpleQueue()
        self.count = 0
        self.starting = threading.Lock()

    def hand(self, call: Callable[[], None], n: int) -> None:
        """``call`` to ``n`` threads, as they come free (started where fewer are there)."""
        with self.starting:
            for _ in range(self.count, n):
                threading.Thread(target=self._serve, args=(self.calls,), daemon=True).start()
            self.count = max(self.count, n)
        for _ in range(n):
            self.calls.put(call)

    @staticmethod
    def _serve(calls: queue.SimpleQueue) -> None:
        while True:
            calls.get()()


_WORKERS = _Workers()
os.register_at_fork(after_in_child=_WORKERS.__init__)


def run_blocks(
    kernel: Callable[..., None],
    n_units: int,
    *args,
    grain: int = 1,
    n_blocks: int | None = None,
) -> None:
    """``kernel(*args, first, last)`` over consecutive blocks covering units ``0 .. n_units - 1``
    (:func:`block_count` of them), on :func:`thread_count` threads, or fewer where the calling
    thread was told (:func:`score_on`); with one block or one thread, a single call in the
    calling thread. ``kernel`` must be compiled with ``nogil=True`` (else the threads take turns)
    and write only the outputs of the units it is given. A kernel's exception is raised here."""
    cap = getattr(_PACE, "threads", None)
    threads = thread_count() if cap is None else max(1, min(cap, thread_count()))
    blocks = block_count(n_units, grain, n_blocks)
    if blocks == 1 or threads == 1:
        kernel(*args, 0, n_units)
        return
    bounds = iter([(b * n_units // blocks, (b + 1) * n_units // blocks) for b in range(blocks)])
    taking, failed, stop = threading.Lock(), [], threading.Event()

    done = threading.Semaphore(0)

    def work() -> None:
        try:
            while not stop.is_set():
                with taking:
                    bound = next(bounds, None)
                if bound is None:
                    return
                try:
                    kernel(*args, *bound)
                except BaseException as error:
                    failed.append(error)
                    stop.set()
        finally:
            done.release()

    # Daemon threads, waited for in short waits: a Ctrl-C or SIGTERM stops the run at once. The
    # signal may land on a worker, and Python runs its handler in the calling thread only when
    # that thread wakes; then the workers take no new block, and the process need not wait for
    # the block they are in.
    n_workers = min(blocks, threads)
    try:
        _WORKERS.hand(work, n_workers)
        for _ in range(n_workers):
            while not done.acquire(timeout=SIGNAL_WAIT):
                pass
    finally:
        stop.set()
    if failed:
        raise failed[0]


def readonly(values, dtype) -> np.ndarray:
    """``values`` as a C-contiguous, read-only array of ``dtype`` (copied only when needed).

    Numba compiles one specialisation per argument type, and a read-only array, a strided one or
    another dtype is another type: kernels' Python wrappers pass every input they only read
    through this, so that one run compiles each kernel once, whatever its callers hand it."""
    array = np.ascontiguousarray(values, dtype=dtype)
    if array.flags.writeable:
        array = array.view()  # a view, so the caller's own array stays writable
        array.flags.writeable = False
    return array
