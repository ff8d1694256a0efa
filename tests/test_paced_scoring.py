"""A stream's scoring follows the pace of its reading (kernels.blocks.score_on, through
engines.local.read_ahead(paced=True)): a kernel called while the consumer had to wait for its item
(the reading is behind) runs in the consumer's thread alone; one called while the next item was
ready but the reading takes at least half the scoring's time per item leaves a core to the
reading; one called while the scoring is far behind, or for the first item, runs on every
thread; after the stream, every thread."""

from __future__ import annotations

import threading
import time

import numba
import pytest

from mobeval.engines.local import kernel_threads, read_ahead
from mobeval.kernels import blocks


@pytest.fixture
def two_threads():
    before = numba.get_num_threads()
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    if numba.get_num_threads() < 2:
        numba.set_num_threads(before)
        pytest.skip("one thread: every kernel runs in the calling thread")
    yield
    numba.set_num_threads(before)


def _threads_of_a_kernel() -> set[int]:
    """The threads a plain Python kernel over 64 units, in 64 blocks, ran on."""
    seen: set[int] = set()
    lock = threading.Lock()

    def kernel(first, last):
        time.sleep(0.002)  # long enough for a second thread to take a block
        with lock:
            seen.add(threading.get_ident())

    blocks.run_blocks(kernel, 64, n_blocks=64)
    return seen


def _slowly(items, seconds):
    for item in items:
        time.sleep(seconds)
        yield item


def test_told_to_score_on_one_thread_a_kernel_runs_in_the_calling_thread(two_threads):
    blocks.score_on(1)
    try:
        assert _threads_of_a_kernel() == {threading.get_ident()}
    finally:
        blocks.score_on(None)
    assert len(_threads_of_a_kernel()) > 1


def test_told_more_threads_than_there_are_a_kernel_runs_on_every_thread(two_threads):
    blocks.score_on(8)
    try:
        assert len(_threads_of_a_kernel()) > 1
    finally:
        blocks.score_on(None)


def test_another_thread_is_not_told(two_threads):
    blocks.score_on(1)
    try:
        seen = []
        other = threading.Thread(target=lambda: seen.append(_threads_of_a_kernel()))
        other.start()
        other.join()
        assert len(seen[0]) > 1
    finally:
        blocks.score_on(None)


def test_items_waited_for_are_scored_alone_but_the_first(two_threads):
    """The reading is behind (each item takes 200 ms to produce, a kernel on two threads about
    64 ms): every kernel runs alone but the first item's, which is waited for whatever the pace,
    while the reading starts."""
    threads = [_threads_of_a_kernel() for _ in read_ahead(_slowly(range(3), 0.2), 1, paced=True)]
    assert len(threads[0]) > 1
    assert threads[1:] == [{threading.get_ident()}] * 2
    assert len(_threads_of_a_kernel()) > 1  # the stream is over


def test_items_ready_and_read_quickly_are_scored_on_every_thread(two_threads):
    """The scoring is far behind (it waits before it asks for the next item, which takes no time
    to read): every item but the first is ready when asked, and its kernel runs on every
    thread."""
    threads = []
    for _ in read_ahead(iter(range(4)), 1, paced=True):
        time.sleep(0.05)
        threads.append(_threads_of_a_kernel())
    assert all(len(seen) > 1 for seen in threads[1:])


def test_items_ready_but_read_slowly_leave_a_core_to_the_reading(two_threads):
    """Each item takes 250 ms to read and its scoring 300 ms and a kernel: every item but the first
    is ready when asked, but its reading keeps a core busy beside the scoring (more than half
    the scoring's time), so its kernel leaves a core to it: on two threads, it runs alone."""
    threads = []
    for _ in read_ahead(_slowly(range(4), 0.25), 1, paced=True):
        time.sleep(0.3)
        threads.append(_threads_of_a_kernel())
    assert len(threads[0]) > 1
    assert threads[1:] == [{threading.get_ident()}] * 3


@pytest.mark.parametrize(
    ("waited", "reading", "scoring", "threads", "expected"),
    [
        (True, 0.0, 1.0, 8, 1),  # the reading is behind: the kernel alone
        (True, 5.0, 1.0, 8, 1),
        (False, 0.5, 1.0, 8, 7),  # ready, but reading half the scoring's time: a core left
        (False, 2.0, 1.0, 8, 7),
        (False, 2.0, 1.0, 2, 1),
        (False, 2.0, 1.0, 1, 1),
        (False, 0.49, 1.0, 8, None),  # the scoring far behind: every thread
        (False, 0.0, 0.0, 8, 7),  # nothing timed yet (the reading took no time, nor the scoring)
    ],
)
def test_the_kernels_threads_follow_the_reading_s_share_of_the_time(
    waited, reading, scoring, threads, expected
):
    assert kernel_threads(waited, reading, scoring, threads) == expected


def test_an_unpaced_stream_scores_on_every_thread(two_threads):
    threads = [_threads_of_a_kernel() for _ in read_ahead(_slowly(range(3), 0.05), 1)]
    assert all(len(seen) > 1 for seen in threads)


def test_a_stream_stopped_early_leaves_every_thread(two_threads):
    stream = read_ahead(_slowly(range(10), 0.05), 1, paced=True)
    next(stream)
    stream.close()
    assert len(_threads_of_a_kernel()) > 1
