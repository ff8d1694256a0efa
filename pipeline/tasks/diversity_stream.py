"""ndeval's measures of a run read block by block (:func:`stream_diversity`), with memory bounded
by a batch of topics: the qrels are judged once (:func:`~mobeval.tasks.diversity.judge_qrels`),
and each topic's lines, once the run has moved on to the next topic, join a batch of topics
scored together (:func:`~mobeval.tasks.diversity.score_batch`) of at most ``chunk_rows``
lines (a topic of more lines is a batch of its own). Each topic is scored by the same code
whatever batch it falls in, so the values have the same bits for any block size or
``chunk_rows``, and equal those of the whole run
(:func:`~mobeval.tasks.diversity.score_diversity`).

A run whose lines are grouped by topic (every run written by a ranker is: a topic's list,
then the next's) streams so. ndeval also reads a run whose topics are interleaved, and a run
whose topics turn out not to be numbers after the first block (every topic is then keyed by
its text, the qrels' too); for those the run is read again, whole, and scored as one batch:
the same values, with the memory of the whole run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import numpy as np

from mobeval.tasks.diversity import (
    DiversityScores,
    RunErrors,
    TopicValues,
    assemble,
    judge_qrels,
    score_batch,
    score_diversity,
)

if TYPE_CHECKING:
    import polars as pl

#: Most lines of a batch of topics scored at once (a batch holds whole topics: one topic of
#: more lines is a batch of its own).
CHUNK_ROWS = 200_000


class _Whole(Exception):
    """The run cannot be scored topic by topic as it is read (see the module)."""


def stream_diversity(
    qrels: pl.DataFrame,
    blocks: Iterable[pl.DataFrame],
    whole: Callable[[], pl.DataFrame],
    *,
    chunk_rows: int = CHUNK_ROWS,
    **options,
) -> DiversityScores:
    """:func:`~mobeval.tasks.diversity.score_diversity` (``options``: its keywords) of the run
    whose lines ``blocks`` yields in order (``qid, docno, rank, score, tag``), a batch of whole
    topics at a time; ``whole()`` reads the whole run again for a run that cannot stream (see
    the module)."""
    level = options.get("level", 1)
    paths = options.get("paths", ("qrels", "run"))
    judgments = judge_qrels(qrels, level, options.get("numeric_topics", True), paths[0])
    ranking = {k: v for k, v in options.items() if k in ("order", "alpha", "beta", "max_docs")}
    try:
        return _stream(judgments, qrels, blocks, chunk_rows, ranking, level, paths)
    except _Whole:
        return score_diversity(qrels, whole(), **options)


def _stream(judgments, qrels, blocks, chunk_rows, options, level, paths) -> DiversityScores:
    """The batches of :func:`stream_diversity`; :class:`_Whole` for a run that cannot stream."""
    import polars as pl

    errors, out = RunErrors(paths[1]), TopicValues()
    keys: dict = {}  # each qid read: its topic's key
    codes: dict = {}  # each key: a number, in the order first read
    closed: set = set()  # the codes of topics whose lines have all been read
    current = None  # the code of the topic being read
    ready: list[pl.DataFrame] = []  # lines of whole topics, waiting for their batch
    waiting: list[pl.DataFrame] = []  # lines of the current topic so far
    runid = None

    def flush() -> None:
        if ready:
            batch = pl.concat(ready, rechunk=True)
            score_batch(judgments, batch, keys, **options, errors=errors, out=out)
            ready.clear()

    def finish(topic: list[pl.DataFrame]) -> None:
        """A topic's lines all read: into the batch, scored first if they would take it past
        ``chunk_rows``."""
        if sum(f.height for f in ready + topic) > chunk_rows:
            flush()
        ready.extend(topic)

    for block in blocks:
        if block.height == 0:
            continue
        runid = block["tag"][0] if runid is None else runid
        qids = [q for q in block["qid"].unique(maintain_order=True).to_list() if q not in keys]
        new = judgments.run_keys(qids)
        if new is None:
            if keys:
                raise _Whole
            judgments = judge_qrels(qrels, level, False, paths[0])
            new = judgments.run_keys(qids)
        keys.update(new)
        for key in new.values():
            codes.setdefault(key, len(codes))
        code = block["qid"].replace_strict({q: codes[keys[q]] for q in block["qid"].unique()})
        code = code.to_numpy()
        starts = np.flatnonzero(np.diff(code, prepend=-1))
        ends = [*starts[1:], block.height]
        for c, start, end in zip(code[starts], starts, ends, strict=True):
            if c != current:
                if c in closed:
                    raise _Whole  # a topic listed again after another one
                if current is not None:
                    closed.add(current)
                    finish(waiting)
                    waiting = []
                current = c
            waiting.append(block[int(start) : int(end)])
    finish(waiting)
    flush()
    errors.raise_first()
    return assemble(judgments, out, runid, paths[1])
