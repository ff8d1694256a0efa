"""A run's first reads started ahead on a thread (:mod:`mobeval.io.prefetch`): the engine gets the
batches it would have read, in order, an error where it would have come, and the thread holds no
more than the batches it was asked to read ahead."""

import threading
import time

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mobeval.io.prefetch import AheadSource, ReadsAhead
from mobeval.io.sources import Source


class Counted:
    """A source of ``n`` one-row batches that counts the batches pulled from it, fails at batch
    ``fail`` if given, waits for ``gate`` before its first batch if given, and notes when a read
    of it was closed."""

    label = "counted"

    def __init__(self, n: int, fail: int | None = None, gate: threading.Event | None = None):
        self.n, self.fail, self.gate = n, fail, gate
        self.pulled, self.closed, self.reads = 0, 0, []

    def iter_batches(self, columns, batch_rows):
        self.reads.append((list(columns), batch_rows))
        try:
            if self.gate is not None:
                self.gate.wait()
            for index in range(self.n):
                if index == self.fail:
                    raise ValueError(f"bad batch {index}")
                self.pulled += 1
                yield pl.DataFrame({columns[0]: [index]})
        finally:
            self.closed += 1


def values(batches) -> list[int]:
    return [batch.item() for batch in batches]


def closed_soon(source: Counted) -> bool:
    for _ in range(500):
        if source.closed:
            return True
        time.sleep(0.01)
    return False


def test_the_taken_read_gives_every_batch_in_order_and_pulls_no_more_than_its_depth():
    source = Counted(6)
    ahead = ReadsAhead([(source, ["a"], 1, 2)])
    taken = ahead.take(source, ["a"], 1)  # waits until the thread has pulled its batches
    assert source.pulled == 2
    assert values(taken) == list(range(6))
    assert source.reads == [(["a"], 1)]  # one read: the rest from the same iterator
    ahead.close()


def test_a_read_asked_for_again_is_read_afresh():
    source = Counted(3)
    ahead = ReadsAhead([(source, ["a"], 1, 2)])
    assert values(ahead.take(source, ["a"], 1)) == [0, 1, 2]
    assert ahead.take(source, ["a"], 1) is None  # a restart reads its inputs again
    ahead.close()


@pytest.mark.parametrize(
    "asked", [(["b"], 1), (["a"], 2), (["a", "b"], 1), "another source", "again"]
)
def test_a_read_not_started_ahead_lets_go_of_the_reads_not_taken(asked):
    """A wrong guess (other columns, batch sizes, source) or a restart: the engine reads afresh,
    and the batches pulled for reads it has not taken are not held for the rest of the run."""
    taken, source = Counted(2), Counted(6)
    ahead = ReadsAhead([(taken, ["t"], 1, 1), (source, ["a"], 1, 2)])
    assert values(ahead.take(taken, ["t"], 1)) == [0, 1]
    if asked == "again":
        assert ahead.take(taken, ["t"], 1) is None
    elif asked == "another source":
        assert ahead.take(Counted(3), ["a"], 1) is None
    else:
        assert ahead.take(source, *asked) is None
    assert closed_soon(source) if source.reads else source.closed == 0  # closed, if begun
    assert ahead.take(source, ["a"], 1) is None  # let go: read afresh
    ahead.close()


@pytest.mark.parametrize("fail", [0, 1, 3])
def test_an_error_comes_where_the_read_would_have_raised_it(fail):
    source = Counted(5, fail=fail)
    ahead = ReadsAhead([(source, ["a"], 1, 2)])
    taken = ahead.take(source, ["a"], 1)
    seen = []
    with pytest.raises(ValueError, match=f"bad batch {fail}"):
        for batch in taken:
            seen.append(batch.item())
    assert seen == list(range(fail))
    ahead.close()


def test_reads_run_in_order_and_one_asked_for_before_it_began_is_the_engines_own():
    gate = threading.Event()
    first, second = Counted(2, gate=gate), Counted(4)
    ahead = ReadsAhead([(first, ["a"], 1, 1), (second, ["b"], 1, 2)])
    assert ahead.take(second, ["b"], 1) is None  # the thread still waits on the first read
    gate.set()
    assert values(ahead.take(first, ["a"], 1)) == [0, 1]
    ahead.close()
    assert second.reads == []  # never started by the thread


def test_close_lets_go_of_the_reads_never_taken():
    taken, left = Counted(3), Counted(3)
    ahead = ReadsAhead([(taken, ["a"], 1, 1), (left, ["b"], 1, 2)])
    assert values(ahead.take(taken, ["a"], 1)) == [0, 1, 2]
    ahead.close()
    assert closed_soon(left) and left.pulled <= 2


def test_close_returns_at_once_while_a_read_hangs_and_the_thread_lets_it_go_after():
    """Ctrl-C while a read is slow (a stalled disk) stops the run at once: close does not wait
    for the thread, which closes the read when its batch comes."""
    gate = threading.Event()
    slow = Counted(3, gate=gate)
    ahead = ReadsAhead([(slow, ["a"], 1, 2)])
    while not slow.reads:  # the thread is inside the read
        time.sleep(0.01)
    closing = threading.Thread(target=ahead.close, daemon=True)
    closing.start()
    closing.join(timeout=5)
    assert not closing.is_alive()
    gate.set()
    assert closed_soon(slow) and slow.pulled <= 1


def test_a_parquet_files_batches_through_an_ahead_source_are_those_of_a_plain_read(tmp_path):
    path = tmp_path / "pred.parquet"
    table = pa.table(
        {"unit": [i // 3 for i in range(1000)], "value": [i * 0.5 for i in range(1000)]}
    )
    pq.write_table(table, path, row_group_size=150)
    source = Source.resolve(path)
    plain = list(source.iter_batches(["unit", "value"], 64))
    ahead = ReadsAhead([(source, ["unit", "value"], 64, 2)])
    read = AheadSource(source, ahead)
    assert read.label == source.label and read.schema() == source.schema()
    batches = list(read.iter_batches(["unit", "value"], 64))
    ahead.close()
    assert len(batches) == len(plain) > 2
    assert all(a.equals(b) for a, b in zip(batches, plain, strict=True))
