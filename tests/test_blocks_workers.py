"""kernels.blocks.run_blocks keeps its threads from one parallel kernel to the next (a run scores a
chunk after another: two threads started and joined a chunk cost its main thread 0.1-0.25 ms), and
a forked child, which has none of them, starts its own."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numba
import numpy as np
import pytest

from mobeval.kernels import blocks
from mobeval.kernels.jit import njit


@njit(nogil=True)
def _numbered(out, first, last):
    for i in range(first, last):
        out[i] = i


@pytest.fixture
def two_threads():
    before = numba.get_num_threads()
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    yield numba.get_num_threads()
    numba.set_num_threads(before)


def test_later_kernels_start_no_thread(monkeypatch, two_threads):
    if two_threads < 2:
        pytest.skip("one thread: every kernel runs in the calling thread")
    out = np.zeros(1000)
    blocks.run_blocks(_numbered, len(out), out, grain=10)
    started = []
    start = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start", lambda t: started.append(t) or start(t))
    for _ in range(20):
        out[:] = -1
        blocks.run_blocks(_numbered, len(out), out, grain=10)
        assert out.tolist() == list(range(len(out)))
    assert started == []


def test_a_forked_child_runs_a_parallel_kernel(two_threads):
    out = np.zeros(1000)
    blocks.run_blocks(_numbered, len(out), out, grain=10)  # the parent's threads exist
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        child = np.zeros(1000)
        blocks.run_blocks(_numbered, len(child), child, grain=10)
        os._exit(0 if child.tolist() == list(range(1000)) else 1)
    assert os.waitpid(pid, 0)[1] == 0


COUNT = """
import numba
from numba.np.ufunc import parallel
from mobeval.kernels.blocks import thread_count
counts = [thread_count(), parallel._is_initialized]
counts.append(numba.get_num_threads())  # launches the layer
numba.set_num_threads(1)
counts.append(thread_count())
print(counts)
"""


@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_thread_count_is_numbas_count_without_launching_its_layer(threads):
    """Before the layer is launched, Numba's own count once launched (NUMBA_NUM_THREADS); after
    ``numba.set_num_threads``, the count set."""
    environment = {**os.environ, "NUMBA_NUM_THREADS": threads}
    done = subprocess.run(
        [sys.executable, "-c", COUNT], capture_output=True, text=True, env=environment
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [f"[{threads},", "False,", f"{threads},", "1]"]
