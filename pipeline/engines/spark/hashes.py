"""The ratios' trajectory hashes on Spark: shuffled as rows and counted by Spark, so that the
driver never holds them.

A population's hash tallies (``trajectory``, ``near``: :mod:`mobeval.metrics.generation_counts`)
hold a row per distinct trajectory, 32 bytes each: 32 MB a side and tally at 1 M trajectories.
Pickled in the partitions' folds, they would reach the driver whole (its memory growing with
the population). Instead (:func:`detach_hashes`, before the fold is pickled), each partition's
hash tallies leave its fold as rows of the scored table, in the section :data:`HASHES`
(``slot``: the tally's place in the accumulator, ``h1``, ``h2``: the key, ``n``, ``drawn``: the
counts), and stay in the fold as a :class:`~mobeval.metrics.tallies.ShuffledTally` naming its
slot. On the driver the merged accumulator's shuffled tallies count where the rows lie
(:func:`attach_counter`), over the slots
``S`` that were merged (a side, a share's bands, a resample)::

    duplicates(S) = sum over hashes h with drawn_S(h) >= 2 of n_S(h)
    matched(S, R) = sum over hashes h of S that a slot of R holds of n_S(h)

(``n_S``, ``drawn_S``: summed over the rows of the slots ``S``): a group-by on the hash and a
semi join, the integers :meth:`mobeval.metrics.tallies.Tally.copies` gives on the merged tallies,
whatever the partitioning and the row order. The driver receives a total per ratio.

The population modules are imported when a run asks for these ratios, not before (a run loads its
own family's modules: :mod:`mobeval.engines.partition`).
"""

from __future__ import annotations

import functools

import numpy as np
import polars as pl
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from mobeval.engines.partition import MODEL, section_batch

#: The section of the scored table that carries the hash tallies' rows (never written).
HASHES = "__hashes"
#: Its columns.
HASH_SCHEMA = {"slot": pl.String, "h1": pl.Int64, "h2": pl.Int64, "n": pl.Int64, "drawn": pl.Int64}
#: Rows per output batch of hashes.
BATCH_ROWS = 1 << 18


def wants_hashes(scorers) -> bool:
    """Whether any of ``scorers`` asks for a ratio over the trajectory hashes."""
    asked = {name for scorer in scorers for name in getattr(scorer, "distributions", ())}
    if not asked:
        return False
    from mobeval.metrics.generation_counts import HASH_TALLIES

    return bool(asked & HASH_TALLIES.keys())


def _hash_tallies(accumulator):
    """(slot, tallies, name) of each hash tally of a population accumulator: its populations
    (by their key: a side, a share's band, a day) and its bootstrap resamples."""
    from mobeval.metrics.generation_counts import HASH_TALLIES

    entries = [(repr(key), c) for key, c in getattr(accumulator, "population", {}).items()]
    entries += [(f"resample {r}", c) for r, c in enumerate(getattr(accumulator, "resampled", ()))]
    for prefix, counts in entries:
        tallies = {} if counts.generation is None else counts.generation.tallies
        for name in sorted(set(HASH_TALLIES.values()) & tallies.keys()):
            yield f"{prefix}/{name}", tallies, name


def _detached(accumulator, output, index: int):
    """The output batches of the rows of ``accumulator``'s hash tallies (result ``index``), each
    tally replaced by a :class:`~mobeval.metrics.tallies.ShuffledTally` of its slot."""
    from mobeval.metrics.tallies import ShuffledTally, aligned_blocks

    for slot, tallies, name in _hash_tallies(accumulator):
        tally = tallies[name]
        for (rows,) in aligned_blocks([tally]):
            for start in range(0, len(rows), BATCH_ROWS):
                part = rows[start : start + BATCH_ROWS]
                columns = dict(zip(("h1", "h2", "n", "drawn"), part.T, strict=True))
                frame = pl.DataFrame({"slot": np.full(len(part), slot), **columns})
                yield section_batch(output, HASHES, frame, index)
        tallies[name] = ShuffledTally(tally.width, {slot})


def detach_hashes(states: list[dict], output):
    """The hash tallies of a partition's folds (``states``, one per result: result ``index``'s
    rows carry ``MODEL = index``) as output batches of the section :data:`HASHES`, each tally
    replaced in its fold by a :class:`~mobeval.metrics.tallies.ShuffledTally` of its slot: the
    ``detach`` of :func:`mobeval.engines.partition.score_partition`, run before the folds are
    pickled, so that the worker reads each tally (its spilled runs a block at a time) once and
    never holds it pickled beside it."""
    for index, state in enumerate(states):
        yield from _detached(state["accumulator"], output, index)


def hash_rows(scored: DataFrame) -> DataFrame | None:
    """The hash rows of a scored table (None: it has none)."""
    if HASHES not in scored.columns:
        return None
    return scored.where(F.col(HASHES).isNotNull()).select(MODEL, f"{HASHES}.*")


#: What a partition of hash rows gives back: a query's number and its partial total.
TOTALS = "query int, total long"


def partial_totals(queries: list[tuple], batches):
    """The totals of ``queries`` ((kind, mine, theirs): :meth:`Tally.copies`) over the hash rows
    of one partition, every row of a hash in it, sorted by hash: per query, ``n_S``, ``drawn_S``
    summed per hash over the rows of the slots ``S = mine`` (``np.add.reduceat`` from each
    hash's first row), kept where ``drawn_S >= 2`` (``duplicates``) or where a row of
    ``theirs`` has the hash (``matched``), and summed."""
    import pyarrow as pa

    batches = [batch for batch in batches if batch.num_rows]
    if not batches:
        return
    table = pa.Table.from_batches(batches)
    slots = table.column("slot").combine_chunks().dictionary_encode()
    codes, names = slots.indices.to_numpy(), slots.dictionary.to_pylist()
    h1, h2, n, drawn = (table.column(c).to_numpy() for c in ("h1", "h2", "n", "drawn"))
    starts = np.flatnonzero(np.r_[True, (h1[1:] != h1[:-1]) | (h2[1:] != h2[:-1])])

    def rows_of(sources) -> np.ndarray:  # 1 on the rows of the slots ``sources``, else 0
        chosen = [at for at, name in enumerate(names) if name in sources]
        return np.isin(codes, chosen).astype(np.int64)

    def has(rows) -> np.ndarray:  # per hash: whether any of ``rows`` is one of its
        return np.add.reduceat(rows, starts) > 0

    totals = []
    for kind, mine, theirs in queries:
        held = rows_of(mine)
        n_s, drawn_s = (np.add.reduceat(v * held, starts) for v in (n, drawn))
        kept = drawn_s >= 2 if kind == "duplicates" else has(held) & has(rows_of(theirs))
        totals.append(int(n_s[kept].sum()))
    yield pa.RecordBatch.from_pydict(
        {"query": pa.array(range(len(queries)), pa.int32()), "total": pa.array(totals, pa.int64())}
    )


class Counter:
    """The totals of one result's shuffled tallies (:meth:`ShuffledTally.copies`), counted in
    Spark in one job for all of them: while ``recording`` (a first computation of the summary)
    each total asked is noted and given as 0; :meth:`count` then counts the noted ones in one
    shuffle of the hash rows by hash (:func:`partial_totals` per partition, the partitions'
    totals summed on the driver), and they are given from then on."""

    def __init__(self, rows: DataFrame) -> None:
        self.rows, self.recording = rows, True
        self.known: dict[tuple, int] = {}
        self.asked: dict[tuple, None] = {}

    def __call__(self, kind: str, mine: frozenset, theirs: frozenset | None) -> int:
        query = (kind, mine, theirs or frozenset())
        if query not in self.known:
            if self.recording:
                self.asked[query] = None
                return 0
            self.asked[query] = None
            self.count()
        return self.known[query]

    def count(self) -> None:
        """The noted totals counted (one Spark job); recording ends."""
        self.recording = False
        queries, self.asked = list(self.asked), {}
        if not queries:
            return
        slots = sorted({slot for _, mine, theirs in queries for slot in mine | theirs})
        key = [F.col("h1"), F.col("h2")]
        rows = self.rows.where(F.col("slot").isin(slots)).select("slot", "h1", "h2", "n", "drawn")
        totals = [0] * len(queries)
        counted = (
            rows.repartition(*key)
            .sortWithinPartitions(*key)
            .mapInArrow(functools.partial(partial_totals, queries), TOTALS)
        )
        for query, total in counted.collect():
            totals[query] += total
        self.known |= dict(zip(queries, totals, strict=True))


def attach_counter(accumulator, rows: DataFrame, index: int) -> Counter:
    """The shuffled tallies of result ``index``'s merged ``accumulator`` count in ``rows``
    (:func:`hash_rows`) by one :class:`Counter`, which is returned."""
    from mobeval.metrics.tallies import ShuffledTally

    counter = Counter(rows.where(F.col(MODEL) == index))
    for _, tallies, name in _hash_tallies(accumulator):
        if isinstance(tallies[name], ShuffledTally):
            tallies[name].counter = counter
    return counter
