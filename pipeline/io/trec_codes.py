"""TREC run and qrels files read straight into integer codes, as ``mobeval trec_eval`` scores
them: per line the code of its qid and its docno's bytes (:class:`CodedLines`), block by block,
by the byte-level kernels of :mod:`mobeval.kernels.text` on threads (:func:`read_run_codes`,
:func:`read_qrels_codes`). They accept the lines :mod:`mobeval.io.trec`'s readers accept, read
the same values and raise the same errors.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from mobeval.errors import InputError
from mobeval.io.numbers import score_column
from mobeval.io.text import text_blocks
from mobeval.io.trec import bad_line, located, polars_text, relevance

if TYPE_CHECKING:
    import polars as pl  # imported where used: mobeval trec_eval's fast path never needs it

#: Blocks of the readers into codes: smaller, as a few are held at once (:func:`_fields_ahead`)
#: with their fields' spans (48 bytes a line).
CODE_BLOCK_BYTES = 1 << 22


def text_offsets(series: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """A String Series as (bytes, offsets): value ``i`` is the UTF-8 text
    ``bytes[offsets[i]:offsets[i + 1]]`` (read from its Arrow buffers, not copied)."""
    array = series.rechunk().to_arrow()
    _, offsets, values = array.buffers()
    bounds = np.frombuffer(offsets, dtype=np.int64)[array.offset : array.offset + len(array) + 1]
    data = np.frombuffer(values, dtype=np.uint8) if values is not None else np.zeros(0, np.uint8)
    return data, bounds


#: Distinct keys an :class:`Interner` numbers (its codes are int32).
MAX_CODES = 2**31


class Interner:
    """Byte strings to integer codes, the codes given in order of first appearance and kept
    across blocks (the table of :func:`mobeval.kernels.text.intern`)."""

    def __init__(self) -> None:
        self._state = (
            np.full(1 << 10, -1, dtype=np.int64),  # table
            np.empty(1 << 12, dtype=np.uint8),  # arena
            0,  # bytes used
            np.empty(1 << 9, dtype=np.int64),  # key starts
            np.empty(1 << 9, dtype=np.int64),  # key ends
            0,  # keys
        )

    def codes(self, data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """The codes of the strings ``data[starts[i]:ends[i]]`` (``data``: uint8), int32: more
        distinct strings than that holds are an InputError (never codes wrapped around)."""
        from mobeval.kernels import text as K

        codes, *self._state = K.intern(data, starts, ends, *self._state)
        if self._state[-1] > MAX_CODES:
            raise InputError(f"more than {MAX_CODES:,} distinct qids")
        return codes

    def strings(self) -> list[str]:
        """Every key, by code, as text (keys are UTF-8: see :func:`read_run_codes`)."""
        _, arena, _, starts, ends, count = self._state
        return [bytes(arena[starts[c] : ends[c]]).decode() for c in range(count)]


@dataclass
class CodedLines:
    """The lines of a TREC file as trec_eval scores them: per line the code of its qid (an
    index of ``qids``) and its docno (the UTF-8 bytes
    ``docno_bytes[docno_offsets[i]:docno_offsets[i + 1]]``)."""

    qids: list[str]
    qid: np.ndarray
    docno_bytes: np.ndarray
    docno_offsets: np.ndarray

    def docno(self, line: int) -> str:
        span = self.docno_offsets[line : line + 2]
        return bytes(self.docno_bytes[span[0] : span[1]]).decode()

    @staticmethod
    def _frame_codes(frame: pl.DataFrame) -> tuple:
        """(qids, qid codes, docno bytes, docno offsets) of a DataFrame's ``qid, docno``."""
        queries = Interner()
        data, offsets = text_offsets(frame["qid"])
        qid = queries.codes(data, offsets[:-1], offsets[1:])
        return (queries.strings(), qid, *text_offsets(frame["docno"]))


@dataclass
class RunCodes(CodedLines):
    """A run's lines (:class:`CodedLines`), each with its score; the tag of the last line
    (trec_eval's runid)."""

    score: np.ndarray
    tag: str | None

    @classmethod
    def from_frame(cls, run: pl.DataFrame, tag: str | None) -> RunCodes:
        """The codes of a DataFrame of ``qid, docno, score``."""
        return cls(*cls._frame_codes(run), run["score"].to_numpy(), tag)


@dataclass
class QrelsCodes(CodedLines):
    """Qrels' lines (:class:`CodedLines`), each with its relevance."""

    rel: np.ndarray

    @classmethod
    def from_frame(cls, qrels: pl.DataFrame) -> QrelsCodes:
        """The codes of a DataFrame of ``qid, docno, rel``."""
        return cls(*cls._frame_codes(qrels), qrels["rel"].to_numpy())


def read_run_codes(spec, *, block_bytes: int = CODE_BLOCK_BYTES) -> RunCodes:
    """A whole run (a local path or a URL) read straight into codes, block by block, by
    :func:`mobeval.kernels.text.run_fields`: the lines :func:`iter_run` accepts, the same
    scores (a score the fast decimal reading leaves is read by :func:`score_column`), the same
    errors (see :func:`_read_codes`)."""
    from mobeval.kernels import text as K

    run_fields = partial(K.run_fields, powers=K.POWERS_OF_TEN)
    lines, score, tag = _read_codes(spec, block_bytes, "run", run_fields, score_column)
    return RunCodes(*lines, score, tag)


def read_qrels_codes(spec, *, block_bytes: int = CODE_BLOCK_BYTES) -> QrelsCodes:
    """Whole qrels (a local path or a URL) read straight into codes, block by block, by
    :func:`mobeval.kernels.text.qrels_fields`: the lines :func:`iter_qrels` accepts, the same
    relevances (one the fast integer reading leaves is read by :func:`relevance`), the same
    errors (see :func:`_read_codes`)."""
    lines, rel, _ = _read_codes(spec, block_bytes, "qrels", _qrels_fields, relevance)
    return QrelsCodes(*lines, rel)


def _qrels_fields(data: np.ndarray) -> tuple:
    """:func:`mobeval.kernels.text.qrels_fields`, with :func:`run_fields`' (unused) tag span."""
    from mobeval.kernels import text as K

    spans, rel, read, bad, lines = K.qrels_fields(data)
    return spans, rel, read, np.zeros(2, dtype=np.int64), bad, lines


def _fields_and_docnos(fields_of, data: np.ndarray) -> tuple:
    """``fields_of(data)``, then its lines' docnos end to end and their offsets
    (:func:`mobeval.kernels.text.concatenated`): both kernels release the GIL."""
    from mobeval.kernels import text as K

    fields = fields_of(data)
    spans = fields[0]
    return *fields, *K.concatenated(data, spans[:, 2], spans[:, 3])


def _fields_ahead(path, blocks, fields_of) -> Iterator[tuple[bytes, int, tuple]]:
    """(block as :func:`polars_text` gives it, its first line, :func:`_fields_and_docnos` of
    its bytes) of each of ``blocks`` in order, ``fields_of`` (a kernel compiled ``nogil``, the
    block's line count its sixth output) run on as many threads as Numba's count
    (:func:`mobeval.kernels.blocks.thread_count`, which launches no threading layer) while the
    caller takes in the blocks before: at most that many blocks are read ahead."""
    from mobeval.kernels.blocks import thread_count

    threads = thread_count()
    first_line = 1
    with ThreadPoolExecutor(threads) as pool:
        pending: deque = deque()
        for raw in chain(blocks, [None]):  # None: the end, every pending block taken in
            if raw is not None:
                block = polars_text(path, raw, 0, True)  # as bytes: never an error
                data = np.frombuffer(block, dtype=np.uint8)
                pending.append((block, pool.submit(_fields_and_docnos, fields_of, data)))
            while len(pending) >= threads or (raw is None and pending):
                block, future = pending.popleft()
                fields = future.result()
                yield block, first_line, fields
                first_line += fields[5]


def _read_codes(spec, block_bytes: int, kind: str, fields_of, slow_value) -> tuple:
    """The lines of a run or qrels file (``kind``) as ((qids, qid codes, docno bytes, docno
    offsets), values, the last line's tag text), block by block: ``fields_of(block)`` gives
    per line the spans of its qid, docno and value text, the value, whether it read it, the
    last tag's span, the first bad line (-1: none) and the block's line count; a value it
    leaves is read by the Polars expression ``slow_value`` (null: a bad line, named by
    :func:`bad_line`). Identifiers as
    bytes (``as_bytes``: each byte one character, kept as UTF-8); the docnos' bytes are kept,
    those of the other fields let go block by block."""
    path, fs = located(spec)
    path = Path(path) if fs is None else path
    queries, docnos = Interner(), bytearray()
    qid, offsets, values, tag = [], [np.zeros(1, dtype=np.int64)], [], None
    blocks = text_blocks(path, block_bytes, "not a readable TREC file", fs)
    for block, first_line, fields in _fields_ahead(path, blocks, fields_of):
        data = np.frombuffer(block, dtype=np.uint8)
        spans, read_values, read, last_tag, bad, _, kept, kept_offsets = fields
        if bad >= 0:
            raise bad_line(path, block, first_line, kind)
        slow = np.flatnonzero(~read)
        if slow.size:  # scores or judgments the kernel leaves: rare, read by Polars
            import polars as pl

            texts = pl.Series([block[spans[i, 4] : spans[i, 5]].decode() for i in slow])
            parsed = pl.select(slow_value(pl.lit(texts))).to_series()
            if parsed.null_count():
                raise bad_line(path, block, first_line, kind)
            read_values[slow] = parsed.to_numpy()
        if read_values.size:
            qid.append(queries.codes(data, spans[:, 0], spans[:, 1]))
            offsets.append(kept_offsets[1:] + len(docnos))
            docnos.extend(kept.data)
            values.append(read_values)
            tag = block[last_tag[0] : last_tag[1]].decode()
    qid, offsets, values = (_joined(parts) for parts in (qid, offsets, values))
    lines = (queries.strings(), qid, np.frombuffer(docnos, dtype=np.uint8), offsets)
    return lines, values, tag


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    """``parts`` end to end, the list emptied as it is joined: one array at a time is held
    twice, not the whole run (a generator over several lists joins them in turn)."""
    joined = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    parts.clear()
    return joined
