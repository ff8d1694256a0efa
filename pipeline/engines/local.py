"""The local engine: stream both inputs in chunks of whole units through a task's partition scorer.

Sorted inputs stream directly (memory: one chunk). If either input turns out not to be sorted by the
key, everything computed so far is thrown away and the inputs are read again, the cheapest way that
keeps memory bounded by the chunk:

* predictions that fit in one chunk: both inputs read whole and sorted in memory;
* predictions that hold each unit's rows together (in any key order: a data loader's shuffled
  batches, a group-by's output), with a truth that fits in one chunk (integer keys): streamed
  again as sorted ones are, in chunks of whole units where they lie, each unit paired with its
  truth rows by a lookup; a unit met twice starts the stream again over hash buckets (at once,
  if the batch where the sorted stream met a falling key holds a unit apart already);
* otherwise both inputs are spread over hash buckets in a temporary directory first (memory: one
  bucket, about ``chunk_rows`` rows or fewer, and the next one being read).
"""

from __future__ import annotations

import itertools
import queue
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import polars as pl

from mobeval.engines import reads
from mobeval.errors import InputError
from mobeval.io.chunking import (
    NotSorted,
    SortedLookup,
    SortedUnitChunks,
    bucket_count,
    format_key,
    key_at,
    key_matrix,
    key_order,
    read_bucket,
    sorted_by_key,
    split_buckets,
    write_buckets,
)
from mobeval.io.scratch import ScratchFolder
from mobeval.kernels.blocks import score_on, thread_count
from mobeval.kernels.buckets import claim_runs
from mobeval.kernels.keys import segment_rows, unit_offsets
from mobeval.progress import BUCKETING, READING, SCORING, Progress


def _checked_keys(batches, key: list[str], label: str):
    """The batches, after checking that no key value is null (a null key belongs to no unit; the
    row is counted from the input's first data row, 0-based)."""
    offset = 0
    for batch in batches:
        for column in key:
            if column in batch.columns and batch[column].null_count():
                row = offset + int(batch[column].is_null().arg_true()[0])
                raise InputError("null key value", path=label, column=column, key=f"row {row}")
        offset += batch.height
        yield batch


def _canonical(batches, select, key: list[str], label: str, columns=None):
    """The batches' canonical columns (``select``). A null key, or a value the select cannot
    convert (a UInt64 beyond Int64's range), is an InputError naming the column. A select that
    only names ``columns`` in order (the batches' own) hands each batch on as it is (a Polars
    query a batch cost the pairing thread 0.3 ms)."""
    same = columns is not None and _names_only(select) == list(columns)
    for batch in _checked_keys(batches, key, label):
        if same and batch.columns == list(columns):
            yield batch
            continue
        try:
            frame = batch.select(select)
        except pl.exceptions.PolarsError as error:
            raise _conversion_error(batch, select, label, error) from None
        yield frame


def _names_only(select) -> list[str] | None:
    """The column names ``select`` takes, if each of its expressions is a bare ``pl.col(name)``
    (else None)."""
    try:
        if all(expression.meta.is_column() for expression in select):
            return [expression.meta.output_name() for expression in select]
    except pl.exceptions.PolarsError:  # several columns (a selector): no one name
        pass
    return None


def _canonical_batches(source, columns, select, key: list[str], batch_rows: int):
    """``source``'s batches of ``batch_rows`` rows, reduced to their canonical columns."""
    batches = source.iter_batches(columns, batch_rows)
    return _canonical(batches, select, key, source.label, columns)


#: The reading's time per item, as a share of the scoring's, from which a paced stream's kernels
#: leave a core to the reading (:func:`kernel_threads`).
READING_SHARE = 0.5


def kernel_threads(waited: bool, reading: float, scoring: float, threads: int) -> int | None:
    """The most threads a paced stream's kernels run on for its next item (:func:`read_ahead`,
    :func:`mobeval.kernels.blocks.score_on`), ``threads`` at most: one where the consumer had to
    wait for the item (the reading is behind: the other cores are the reading's); one less where
    the item was ready but the reading takes at least :data:`READING_SHARE` of the scoring's time
    per item (``reading`` and ``scoring``, in seconds per item so far), so that it keeps a core
    busy beside the kernel; else every thread (None). On 2 cores, the second is the kernel in the
    consumer's thread alone: 100 M recommendation rows, whose reading takes 1.2-1.6 times the
    scoring's time a chunk, in 23-64 ms less wall and up to 57 ms less CPU than on every thread,
    while GEO-BLEU (reading 0.02 of its scoring) keeps every thread (BENCHMARKS.md, issue 37,
    fifteenth pass)."""
    if waited:
        return 1
    if reading >= READING_SHARE * scoring:
        return max(1, threads - 1)
    return None


def read_ahead(batches, depth: int = reads.READ_AHEAD, paced: bool = False):
    """The items of ``batches``, produced by a thread that runs at most ``depth`` items ahead of
    the consumer. An exception in the thread is raised in the consumer, at the item where it
    happened; when the consumer stops early (closes the generator) the thread stops too.

    ``paced``: the consumer scores what it is handed, and its kernels' threads follow the pace of
    the reading (:func:`kernel_threads`, from the thread's time producing the items and the
    consumer's time between them): fewer threads while the reading is behind or keeps a core
    busy, every thread while the scoring is far behind. The first item is always waited for,
    while the reading starts: it says nothing of the pace, and is scored on every thread (a
    stream of few large chunks, 21 of GEO-BLEU's on 10 M rows, would score a twentieth of its
    work at half speed)."""
    items: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    done = object()
    produced = [0, 0.0]  # items produced, seconds spent producing them (not handing them over)

    def produce() -> None:
        try:
            iterator = iter(batches)
            while True:
                start = time.perf_counter()
                item = next(iterator, done)
                produced[1] += time.perf_counter() - start
                if item is done:
                    break
                produced[0] += 1
                while not stop.is_set():
                    try:
                        items.put((item, None), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            items.put((done, None))
        except BaseException as error:  # noqa: BLE001 - handed to the consumer, raised there
            items.put((done, error))

    thread = threading.Thread(target=produce, name="mobeval-read-ahead", daemon=True)
    thread.start()
    scoring = 0.0  # the consumer's seconds between an item handed and the next asked for
    try:
        for asked in itertools.count():
            if paced and asked:
                reading = produced[1] / max(produced[0], 1)
                pace = kernel_threads(items.empty(), reading, scoring / asked, thread_count())
                score_on(pace)
            elif paced:  # the first item: every thread
                score_on(None)
            item, error = items.get()
            if error is not None:
                raise error
            if item is done:
                return
            handed = time.perf_counter()
            yield item
            scoring += time.perf_counter() - handed
    finally:
        if paced:
            score_on(None)
        stop.set()
        while thread.is_alive():
            try:
                items.get(timeout=0.1)
            except queue.Empty:
                continue
        thread.join()


def _conversion_error(batch, select, label: str, error: Exception) -> InputError:
    """The error of the first expression of ``select`` that fails on ``batch``."""
    column = None
    for expression in select:
        try:
            batch.select(expression)
        except pl.exceptions.PolarsError as failed:
            roots = expression.meta.root_names()
            column, error = (roots[0] if roots else None), failed
            break
    reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return InputError(f"cannot convert the values ({reason})", path=label, column=column)


def stream_pairs(
    truth_source,
    pred_source,
    plan,
    key: list[str],
    *,
    chunk_rows: int,
    progress: Progress,
    unique_truth: bool = True,
    truth_order_first: bool = True,
    temp_dir: str | Path | None = None,
):
    """Yield (prediction chunk, truth rows) pairs covering every unit exactly once.

    ``plan`` names the columns to read (``pred_columns``, ``truth_columns``) and the expressions
    that normalise them (``pred_select``, ``truth_select``). With ``unique_truth`` the truth holds
    one row per unit. Hash buckets go to a folder in ``temp_dir`` (default: the system's temporary
    folder). Tries sorted streaming; on :class:`NotSorted` restarts with hash buckets: the
    generator then yields the string ``"restart"`` once, and the consumer must forget what it has
    seen. The truth's key order is read first (its key columns) if ``truth_order_first``; else
    it is checked as the truth is read, and whole before any InputError leaves the sorted stream:
    the consumer throws its scorer's InputErrors into the generator (``throw``), which raises
    them again, or yields ``"restart"`` if the truth is not sorted after all (a chunk paired with
    part of a mis-sorted truth may fail where the sorted truth would not).
    """
    pred_source = _Replayed(pred_source)
    try:
        yield from _sorted_pairs(
            truth_source,
            pred_source,
            plan,
            key,
            chunk_rows,
            progress,
            unique_truth,
            truth_order_first,
        )
        return
    except NotSorted as error:
        fallen = error.keys  # the batch where a key fell
        yield "restart"
    # predictions that fill more than a chunk, grouped by unit, and a truth that fits in memory
    progress.phase(READING, truth_source.row_count_estimate() + pred_source.row_count_estimate())
    truth = None
    pred_rows = pred_source.row_count_estimate()
    if pred_rows > chunk_rows:
        truth = _truth_in_memory(truth_source, plan, key, chunk_rows, progress, unique_truth)
    units = None if truth is None else _TruthUnits(truth, key)
    # not tried if the batch where a key fell holds a unit apart already (rows scattered)
    if units is not None and (fallen is None or _together([fallen], units.anew())):
        fallen = None
        try:
            yield from _grouped_pairs(pred_source, plan, key, chunk_rows, progress, units)
            return
        except NotGrouped:
            yield "restart"
    units = fallen = None
    n_buckets = bucket_count(pred_rows, chunk_rows)  # the files it needs: only where spread
    # the truth held (one chunk at most) split over the buckets: not written and read again
    held = None if truth is None else split_buckets(truth, key, n_buckets)
    truth = None
    yield from _bucketed_pairs(
        truth_source,
        pred_source,
        plan,
        key,
        n_buckets,
        chunk_rows,
        progress,
        unique_truth,
        temp_dir,
        held,
    )


class _Replayed:
    """``source`` read once across the engine's attempts: the batches of its first
    ``iter_batches`` call are kept as they are read, up to ``keep``, and a later call for the same
    columns and batch size takes them again, then goes on with the same reader, instead of
    decoding the file's start again (an attempt that meets a key out of order stops at its first
    batch). Once a call reads past the kept batches, they are let go, and a later call opens the
    source afresh. Attempts come one after another: no two calls' batches are read at once."""

    def __init__(self, source, keep: int = 1) -> None:
        self.source, self.keep = source, keep
        self.request: tuple | None = None
        self.live = None  # the first call's reader, while every batch it read is kept
        self.kept: list[pl.DataFrame] = []

    def __getattr__(self, name: str):
        return getattr(self.source, name)

    def iter_batches(self, columns: list[str], batch_rows: int):
        request = (tuple(columns), batch_rows)
        if self.request is None:
            self.request, self.live = request, iter(self.source.iter_batches(columns, batch_rows))
        elif request != self.request or self.live is None:
            return self.source.iter_batches(columns, batch_rows)
        return self._again()

    def _again(self):
        """The kept batches, then the reader's next ones (kept while there is room)."""
        live = self.live
        yield from list(self.kept)
        for batch in live:  # a loop, not ``yield from``: closing this call leaves the reader open
            if self.live is live and len(self.kept) < self.keep:
                self.kept.append(batch)
            else:
                self.live, self.kept = None, []
            yield batch


def _check_sorted(batches, key: list[str]) -> None:
    """Raise NotSorted unless the stream's keys never decrease (reads the key columns only)."""
    last = None
    for batch in batches:
        if batch.height == 0:
            continue
        if (last is not None and key_at(batch, key, 0) < last) or (key_order(batch, key) < 0).any():
            raise NotSorted
        last = key_at(batch, key, batch.height - 1)


def _sorted_pairs(
    truth_source, pred_source, plan, key, chunk_rows, progress, unique_truth, truth_order_first
):
    """The sorted stream's pairs; the truth's order read first, or before an InputError is
    raised (see :func:`stream_pairs`)."""
    # A sample whose truth row has not been seen is only known to be unmatched if the truth is
    # sorted; the truth is small (one row per sample), so check it first, key columns only.
    if truth_order_first:
        _check_truth_order(truth_source, key, chunk_rows)
    try:
        yield from _sorted_stream(
            truth_source, pred_source, plan, key, chunk_rows, progress, unique_truth
        )
    except InputError:
        if not truth_order_first:  # NotSorted: the error may come from a mis-sorted truth
            _check_truth_order(truth_source, key, chunk_rows)
        raise


def _check_truth_order(truth_source, key, chunk_rows) -> None:
    """Raise NotSorted unless the truth's keys never decrease; an InputError at a null key."""
    batches = truth_source.iter_batches(key, reads.order_batch_rows(chunk_rows))
    _check_sorted(_checked_keys(batches, key, truth_source.label), key)


def _sorted_stream(truth_source, pred_source, plan, key, chunk_rows, progress, unique_truth):
    batch_rows = reads.batch_rows(chunk_rows)
    # each batch of the predictions cut where it lies, a slice of it scored (no copy)
    chunks = SortedUnitChunks(
        _canonical_batches(pred_source, plan.pred_columns, plan.pred_select, key, batch_rows),
        key,
        chunk_rows,
        in_place_rows=batch_rows // 2,
    )
    # a thread decodes the truth's next batch ahead of the lookup, in quarter batches
    truth_batches = read_ahead(
        _canonical_batches(
            truth_source,
            plan.truth_columns,
            plan.truth_select,
            key,
            reads.truth_batch_rows(chunk_rows),
        ),
        depth=1,
    )
    truth = SortedLookup(truth_batches, key, truth_source.label, unique=unique_truth)
    # and another reads, checks and cuts the predictions into chunks, each paired with its truth
    # rows, while the previous pair is scored: the main thread only scores, on as many threads
    # as the reading leaves it
    pairs = read_ahead(_paired(chunks, truth, key), depth=1, paced=True)
    try:
        for chunk, truth_rows in pairs:
            yield chunk, truth_rows
            progress.advance(chunk.height)
        rest = truth.take_through(None)  # the pairing thread is done with the lookup
    finally:  # both threads stopped before a restart reads the inputs again
        pairs.close()
        truth_batches.close()
    if rest.height:
        yield pl.DataFrame(), rest


def _paired(chunks, truth: SortedLookup, key: list[str]):
    """Each chunk with the truth rows of its units, and of the units before them that have no
    prediction (keys up to the chunk's last)."""
    for chunk in chunks:
        yield chunk, truth.take_through(key_at(chunk, key, chunk.height - 1))


def _truth_in_memory(
    truth_source, plan, key, chunk_rows, progress, unique_truth: bool
) -> pl.DataFrame | None:
    """The truth sorted by key (stable), if it fits in one chunk and its key is integer; else
    None. With ``unique_truth``, a key on two rows is an InputError."""
    if truth_source.row_count_estimate() > chunk_rows:
        return None
    batches = progress.counted(
        _canonical_batches(
            truth_source, plan.truth_columns, plan.truth_select, key, reads.batch_rows(chunk_rows)
        )
    )
    truth = sorted_by_key(_concat(batches), key)
    if truth.height == 0 or key_matrix(truth, key) is None:
        return None
    if unique_truth:
        reject_duplicate_truth(truth, key, truth_source.label)
    return truth


class NotGrouped(Exception):
    """A unit's rows are not together in the predictions: the grouped stream
    (:func:`_grouped_pairs`) cannot score them, and the engine falls back to hash buckets."""


def _grouped_pairs(pred_source, plan, key, chunk_rows, progress, units: _TruthUnits):
    """Predictions that hold each unit's rows together, in any key order, and a truth in memory
    (sorted by key): streamed as sorted ones are (chunks of whole units cut where they lie, by a
    thread that also pairs them), each chunk with its units' truth rows, in key order; then the
    truth rows no unit claimed. Memory: a chunk, and the truth.

    A unit met again (its rows are apart) raises NotGrouped before its chunk is scored. A unit
    without truth rows is scored as the sorted stream scores it and its key kept (8 bytes a
    unit): NotGrouped at the end if such a key came twice. An InputError of the scorer's becomes
    NotGrouped too, unless the predictions' keys, read again, hold every unit together: a unit's
    first rows are not the unit, and their error may not be its error
    (:func:`_grouped_everywhere`)."""
    batch_rows = reads.batch_rows(chunk_rows)
    batches = _canonical_batches(pred_source, plan.pred_columns, plan.pred_select, key, batch_rows)
    progress.phase(SCORING, pred_source.row_count_estimate())
    chunks = SortedUnitChunks(batches, key, chunk_rows, grouped=True, in_place_rows=batch_rows // 2)
    pairs = read_ahead(units.paired(chunks, key), depth=1, paced=True)
    try:
        for chunk, truth_rows in pairs:
            try:
                yield chunk, truth_rows
            except InputError:
                if not _grouped_everywhere(pred_source, plan, key, units.anew(), batch_rows):
                    raise NotGrouped from None
                raise
            progress.advance(chunk.height)
    finally:
        pairs.close()
    if units.absent_twice():
        raise NotGrouped
    rest = units.rows(np.flatnonzero(~units.claimed))
    if rest.height:
        yield pl.DataFrame(), rest


class _TruthUnits:
    """A truth in memory (sorted by key) by unit: each unit's key (``keys``, strictly increasing)
    and rows (from ``starts``), whether the predictions' units claimed it so far (``claimed``),
    and the keys of the predictions' units it lacks met so far (``absent``)."""

    def __init__(self, truth: pl.DataFrame, key: list[str]) -> None:
        self.truth, self.key = truth, key
        keys = key_matrix(truth, key)
        self.starts = unit_offsets(keys)
        self.keys = keys[self.starts[:-1]]
        self.claimed = np.zeros(len(self.keys), dtype=np.bool_)
        self.absent: list[np.ndarray] = []

    def anew(self) -> _TruthUnits:
        """The same truth, no unit claimed."""
        return _TruthUnits(self.truth, self.key)

    def claim(self, units: np.ndarray) -> np.ndarray | None:
        """Claim the truth units of ``units`` (key rows, each unlike the one before): each one's
        truth unit (-1 where the truth lacks it, its key kept), or None if one was claimed
        before (a unit met again)."""
        failed, found = claim_runs(units, self.keys, self.claimed, False, absent=True)
        if failed >= 0:
            return None
        if (found < 0).any():
            self.absent.append(units[found < 0])
        return found

    def paired(self, chunks, key):
        """Each chunk of whole units with its units' truth rows, in key order; NotGrouped at a
        unit claimed before."""
        for chunk in chunks:
            keys = key_matrix(chunk, key)
            found = self.claim(keys[unit_offsets(keys)[:-1]])
            if found is None:
                raise NotGrouped
            yield chunk, self.rows(np.sort(found[found >= 0]))

    def rows(self, units: np.ndarray) -> pl.DataFrame:
        """The truth rows of ``units`` (ascending), in that order."""
        starts = self.starts
        lengths = starts[units + 1] - starts[units]
        if len(lengths) and (lengths == 1).all():  # one row a unit: the rows are the units'
            return self.truth[starts[units]]
        return self.truth[segment_rows(starts[units], lengths)]

    def absent_twice(self) -> bool:
        """Whether a unit the truth lacks came twice."""
        if not self.absent:
            return False
        every = np.concatenate(self.absent)
        return len(np.unique(every, axis=0)) < len(every)


def _grouped_everywhere(pred_source, plan, key, units: _TruthUnits, batch_rows) -> bool:
    """Whether the predictions hold each unit's rows together (``units``: the truth's, none
    claimed; a unit the truth lacks may come once). Reads the key columns only."""
    select = [expression for expression in plan.pred_select if expression.meta.output_name() in key]
    batches = _canonical_batches(pred_source, key, select, key, batch_rows)
    return _together((key_matrix(batch, key) for batch in batches), units)


def _together(key_batches, units: _TruthUnits) -> bool:
    """Whether the key rows of ``key_batches`` (a stream's, in order) hold each unit's rows
    together: no unit of ``units`` (none claimed), nor one the truth lacks, in two runs of them
    (a scattered file's batch shows one within its first rows)."""
    last = None
    for keys in key_batches:
        if len(keys) == 0:
            continue
        starts = unit_offsets(keys)[:-1]
        if last is not None and (keys[0] == last).all():  # the last batch's unit goes on
            starts = starts[1:]
        if units.claim(keys[starts]) is None:
            return False
        last = keys[-1].copy()
    return not units.absent_twice()


def _bucketed_pairs(
    truth_source,
    pred_source,
    plan,
    key,
    n_buckets,
    chunk_rows,
    progress,
    unique_truth,
    temp_dir,
    held=None,
):
    """Unsorted inputs: with one bucket (the predictions fit in one chunk), both inputs are
    sorted in memory (one pair, no file written); else both are spread over ``n_buckets`` hash
    buckets on disk (:func:`~mobeval.io.chunking.bucket_count`), and each bucket comes back
    sorted (memory: about one bucket, ``chunk_rows`` rows or fewer); ``held``: the truth's rows
    of each bucket already in memory, sorted by key (:func:`split_buckets`), not written."""
    pred_rows = pred_source.row_count_estimate()
    batch_rows = reads.batch_rows(chunk_rows)
    predictions = progress.counted(
        read_ahead(
            _canonical_batches(pred_source, plan.pred_columns, plan.pred_select, key, batch_rows)
        )
    )
    truth = held
    if held is None:
        truth = progress.counted(
            _canonical_batches(truth_source, plan.truth_columns, plan.truth_select, key, batch_rows)
        )
    both_rows = pred_rows + (0 if held is not None else truth_source.row_count_estimate())
    pairs = None
    try:
        if n_buckets == 1:
            progress.phase(READING, both_rows)
            pairs = _in_memory(predictions, truth, key, progress, pred_rows)
        else:
            progress.phase(BUCKETING, both_rows)
            pairs = _spilled(predictions, truth, key, n_buckets, temp_dir, progress, pred_rows)
        for chunk, truth_rows in pairs:
            if unique_truth:
                reject_duplicate_truth(truth_rows, key, truth_source.label)
            yield chunk, truth_rows
            progress.advance(chunk.height)
    finally:  # the reading threads stop, even while an error's traceback holds this frame
        if pairs is not None:
            pairs.close()
        predictions.close()


def _in_memory(predictions, truth, key, progress, pred_rows):
    """Both inputs whole, sorted by key: one pair; then ``progress`` enters the scoring phase
    (``pred_rows`` to score)."""
    pair = sorted_by_key(_concat(predictions), key), sorted_by_key(_concat(truth), key)
    progress.phase(SCORING, pred_rows)
    yield pair


def _concat(batches) -> pl.DataFrame:
    """Every batch in one frame (no batch: an empty frame)."""
    frames = [batch for batch in batches if batch.height]
    return pl.concat(frames, rechunk=False) if frames else pl.DataFrame()


def _spilled(predictions, truth, key, n_buckets, temp_dir, progress, pred_rows):
    """Both inputs spread over ``n_buckets`` hash buckets in a folder in ``temp_dir`` (``truth``:
    batches, or a list of each bucket's rows held in memory already); yields each bucket's
    (predictions, truth) sorted by key, the next one read by a thread meanwhile (memory: up to
    three buckets); the folder is removed at the end. Once the buckets are written, ``progress``
    enters the scoring phase (``pred_rows`` to score)."""
    with ScratchFolder(temp_dir or tempfile.gettempdir(), "mobeval-buckets-") as root:
        directory = root / "predictions"  # each batch grouped by bucket on a thread of its own
        pred_buckets = write_buckets(predictions, key, n_buckets, directory, ahead=read_ahead)
        if isinstance(truth, list):  # each bucket's rows in memory already
            truth_parts = truth
        else:
            truth_buckets = write_buckets(truth, key, n_buckets, root / "truth")
            truth_parts = (read_bucket(t, key) for t in truth_buckets)
        progress.phase(SCORING, pred_rows)
        pairs = zip(pred_buckets, truth_parts, strict=True)
        # the next bucket is read and sorted while this one is scored
        buckets = ((read_bucket(p, key), t) for p, t in pairs)
        yield from read_ahead(buckets, depth=1, paced=True)


def reject_duplicate_truth(truth: pl.DataFrame, key, label) -> None:
    if truth.height == 0:
        return
    duplicated = truth.select(key).is_duplicated()
    if duplicated.any():
        row = int(duplicated.arg_true()[0])
        raise InputError(
            "duplicate key: the truth must hold one row per unit",
            path=label,
            column=key[0],
            key=format_key(key, key_at(truth, key, row)),
        )
