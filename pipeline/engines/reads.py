"""What the local engine reads, and in which batches: the sizes its streams ask for
(:mod:`mobeval.engines.local`) and the reads a sorted stream starts with, which a run starts on a
thread before its kernels load (:meth:`mobeval.engines.base.LocalEngine.reading`,
:mod:`mobeval.io.prefetch`). No Numba here: the reads are named before it is imported."""

from __future__ import annotations

#: Batches read ahead of the scorer: the reader thread decodes (Parquet decoding and Polars' casts
#: release the GIL) while the kernels score the previous chunk; memory holds at most this many.
READ_AHEAD = 2
#: The fewest rows of a batch of the truth's key column read to check its order.
ORDER_BATCH_ROWS = 100_000


def batch_rows(chunk_rows: int) -> int:
    """The rows of a batch read: a chunk's, at most 1 M (a sorted stream's batch is scored where
    it lies, so the chunks are its size: 1 M rows took the least CPU and 20 % less memory than
    2 M in recs at 100 M rows; 250 k rows 40 % more CPU)."""
    return max(1, min(chunk_rows, 1_000_000))


def order_batch_rows(chunk_rows: int) -> int:
    """The rows of a batch of the truth's key column read to check its order."""
    return max(batch_rows(chunk_rows), ORDER_BATCH_ROWS)


def truth_batch_rows(chunk_rows: int) -> int:
    """The rows of a batch of a sorted stream's truth: a quarter of the predictions' (the truth is
    a fraction of the lists' rows, so the batches held ahead add little memory). A local Parquet
    truth is decoded a span of whole row groups at a time and its batches cut from the span
    (:mod:`mobeval.io.parquet_batches`: a recs run's ratings, a 1 M-row group for four batches)."""
    return max(1, batch_rows(chunk_rows) // 4)


def first_reads(truth, predictions, truth_columns, pred_columns, key, chunk_rows, order_first):
    """The reads a sorted stream starts with, in the order it asks for them, each as (source,
    columns, batch rows, batches read ahead): the truth's key column when its order is read first
    (``order_first``), the predictions' first :data:`READ_AHEAD` batches, the truth's first."""
    rows = batch_rows(chunk_rows)
    reads = [(truth, list(key), order_batch_rows(chunk_rows), READ_AHEAD)] if order_first else []
    reads.append((predictions, list(pred_columns), rows, READ_AHEAD))
    reads.append((truth, list(truth_columns), truth_batch_rows(chunk_rows), 1))
    return reads
