"""Subtopic qrels and a run judged for ndeval's measures (:mod:`mobeval.kernels.diversity`):
topics keyed and ordered as ndeval keys them, each list ranked under a named order, every
judged document's relevant subtopics, then the kernel's values per topic.

Diversity qrels are TREC qrels whose second field names a subtopic (``topic subtopic docno
judgment``, the Web track's ``qrels-for-ndeval``); a judgment at or above the level (1) makes the
document relevant to that subtopic (ndeval's binary reading: it caps judgments at 1).

Topics: where every topic of both files is a number as ndeval reads them (the qrels' a natural
number, the run's one too after any prefix ending in ``-``, as ``wt09-1``), topics are those
numbers, in numeric order; otherwise the topic ids as text, in byte order. Subtopics likewise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from mobeval.errors import InputError
from mobeval.kernels import diversity as K
from mobeval.kernels.blocks import readonly, run_blocks

if TYPE_CHECKING:
    import polars as pl

#: ndeval's ``DEPTH``: the ranks whose values it keeps (pyndeval's largest cutoff).
DEPTH = 20
#: ndeval's ``LARGE_ENOUGH``: ``naturalNumber`` refuses a number once its digits pass it.
LARGE_ENOUGH = 100000
#: List orders: ``rank`` (ndeval's default: the run's rank field), ``score_docno_desc``
#: (``ndeval -traditional``, trec_eval's: score descending, ties by docno descending),
#: ``score_docno_asc`` (pyndeval's, so ir_measures': ties by docno ascending).
ORDERS = ("rank", "score_docno_desc", "score_docno_asc")
#: The kernel's curves, by ndeval's names (``curves[:, CURVES.index(name), k - 1]``).
CURVES = ("ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG", "P-IA", "strec")
SINGLES = ("NRBP", "nNRBP", "MAP-IA")


def natural_number(text: str) -> int | None:
    """ndeval's ``naturalNumber``: the value of a nonempty string of digits, None for anything
    else or once the digits read pass :data:`LARGE_ENOUGH` before the next one."""
    if not text or not text.isascii() or not text.isdigit():
        return None
    value = 0
    for digit in text:
        if value > LARGE_ENOUGH:
            return None
        value = 10 * value + int(digit)
    return value


def run_topic(text: str) -> int | None:
    """ndeval's ``parseTopic`` of a run's topic: a natural number, or one after a prefix ending
    in ``-`` (``wt09-1`` is 1)."""
    if text[:1].isdigit():
        return natural_number(text)
    prefix, dash, rest = text.partition("-")
    return natural_number(rest) if dash else None


def _keys(values: list[str], parse) -> tuple[dict[str, object], bool]:
    """Each distinct text's key: ndeval's number where every one parses, else the text."""
    numbers = {v: parse(v) for v in values}
    if all(n is not None for n in numbers.values()):
        return numbers, True
    return {v: v for v in values}, False


@dataclass
class DiversityScores:
    """ndeval's values of each topic of the qrels or the run (``topics``, in order)."""

    topics: list[str]  # as ndeval prints them
    in_qrels: np.ndarray  # bool per topic
    in_run: np.ndarray  # bool per topic
    curves: np.ndarray  # [topics, len(CURVES), DEPTH]: rank k at index k - 1
    single: np.ndarray  # [topics, len(SINGLES)]
    runid: str

    def value(self, name: str, cutoff: int | None = None) -> np.ndarray:
        """A column per topic: a curve's at ``cutoff`` or a single value."""
        if name in SINGLES:
            return self.single[:, SINGLES.index(name)]
        return self.curves[:, CURVES.index(name), cutoff - 1]


def score_diversity(
    qrels: pl.DataFrame,
    run: pl.DataFrame,
    *,
    order: str = "rank",
    level: int = 1,
    alpha: float = 0.5,
    beta: float = 0.5,
    max_docs: int | None = None,
    numeric_topics: bool = True,
    paths: tuple[str, str] = ("qrels", "run"),
) -> DiversityScores:
    """ndeval's measures of ``run`` (``qid, docno, rank, score, tag``) against diversity
    ``qrels`` (``qid, iter, docno, rel``: ``iter`` the subtopic), every list ranked by
    ``order`` (:data:`ORDERS`) and cut to ``max_docs``; InputError for a subtopic judged twice
    for a document, a document listed twice, or (``order="rank"``) a rank repeated or not an
    integer. A topic of the run the qrels lack scores 0 everywhere, as ndeval prints it.
    ``numeric_topics=False`` keeps topic ids as text (pyndeval's keys) even where ndeval reads
    them as numbers."""
    import polars as pl

    if qrels.height == 0:
        raise InputError("the qrels hold no judgment", path=paths[0])
    if run.height == 0:
        raise InputError("the run holds no line", path=paths[1])
    runid = run["tag"][0]  # ndeval's: the first line's
    q_topics = qrels["qid"].unique().to_list()
    r_topics = run["qid"].unique().to_list()
    q_keys, numeric_q = _keys(q_topics, natural_number)
    r_keys, numeric_r = _keys(r_topics, run_topic)
    if not (numeric_topics and numeric_q and numeric_r):
        q_keys, r_keys = {v: v for v in q_topics}, {v: v for v in r_topics}
    topics = sorted(set(q_keys.values()) | set(r_keys.values()))
    index = {key: i for i, key in enumerate(topics)}
    qrels = qrels.with_columns(_positions("qid", q_keys, index).alias("t"))
    run = run.with_columns(_positions("qid", r_keys, index).alias("t"))
    what = "judges document {docno} twice for subtopic {iter}"
    _refuse_repeats(qrels, ["t", "iter", "docno"], paths[0], what)
    sub_keys, _ = _keys(qrels["iter"].unique().to_list(), natural_number)
    sub_index = {key: i for i, key in enumerate(sorted(set(sub_keys.values())))}
    qrels = qrels.with_columns(_positions("iter", sub_keys, sub_index).alias("s"))
    docs = qrels.select("t", "docno").unique().sort("t", "docno")
    docs = docs.with_row_index("d")
    relevant = (
        qrels.filter(pl.col("rel") >= level)
        .select("t", "s", "docno")
        .sort("t", "s")
        .with_columns(pl.col("s").rank("dense").over("t").cast(pl.Int64).sub(1).alias("j"))
    )
    relevant = relevant.join(docs, on=["t", "docno"]).sort("d", "j")
    nt = len(topics)
    n_sub = np.zeros(nt, dtype=np.int64)
    counted = relevant.group_by("t").agg(pl.col("j").max() + 1)
    n_sub[counted["t"].to_numpy()] = counted["j"].to_numpy()
    doc_off = group_offsets(docs["t"].to_numpy(), nt)
    rel_off = group_offsets(relevant["d"].to_numpy(), docs.height)
    run = _ranked(run, order, paths[1])
    if max_docs is not None:
        run = run.filter(pl.int_range(pl.len()).over("t") < max_docs)
    run = run.join(docs, on=["t", "docno"], how="left", maintain_order="left")
    list_off = group_offsets(run["t"].to_numpy(), nt)
    list_doc = run["d"].cast(pl.Int64).fill_null(-1).to_numpy()
    curves = np.zeros((nt, len(CURVES), DEPTH))
    single = np.zeros((nt, len(SINGLES)))
    arrays = (doc_off, rel_off, relevant["j"].to_numpy(), n_sub, list_off, list_doc)
    arrays = tuple(readonly(a, np.int64) for a in arrays)
    run_blocks(K.ndeval_topics, nt, *arrays, float(alpha), float(beta), DEPTH, curves, single)
    in_qrels = np.zeros(nt, dtype=bool)
    in_qrels[qrels["t"].unique().to_numpy()] = True
    in_run = np.diff(list_off) > 0
    single[~in_qrels] = 0.0  # ndeval's zeroed result lists of topics it has no qrels for
    return DiversityScores([str(t) for t in topics], in_qrels, in_run, curves, single, runid)


def _positions(column: str, keys: dict, index: dict) -> pl.Expr:
    """Each text of ``column`` as the position of its key (``index[keys[text]]``)."""
    import polars as pl

    positions = {text: index[key] for text, key in keys.items()}
    return pl.col(column).replace_strict(positions, return_dtype=pl.Int64)


def group_offsets(sorted_ids: np.ndarray, n: int) -> np.ndarray:
    """CSR offsets of ``n`` groups from each row's group (ascending)."""
    return np.concatenate([[0], np.cumsum(np.bincount(sorted_ids, minlength=n))]).astype(np.int64)


def _refuse_repeats(frame: pl.DataFrame, key: list[str], path: str, what: str) -> None:
    """InputError naming the first row whose ``key`` an earlier row holds."""
    import polars as pl

    repeated = frame.filter(pl.struct(key).is_duplicated())
    if repeated.height:
        row = repeated.row(0, named=True)
        raise InputError(f"query {row['qid']} " + what.format(**row), path=path)


def _ranked(run: pl.DataFrame, order: str, path: str) -> pl.DataFrame:
    """The run's lines ranked within each topic by ``order`` (:data:`ORDERS`), topics in turn."""
    import polars as pl

    _refuse_repeats(run, ["t", "docno"], path, "retrieves document {docno} twice")
    if order == "rank":
        missing = run.filter(pl.col("rank").is_null())
        if missing.height:
            raise InputError(
                f"query {missing['qid'][0]}: a rank that is not an integer (ndeval's default "
                "order reads ranks; -traditional orders by score)",
                path=path,
                column="rank",
            )
        _refuse_repeats(run, ["t", "rank"], path, "ranks two documents at {rank}")
        return run.sort("t", "rank", maintain_order=True)
    return run.sort("t", "score", "docno", descending=[False, True, order == "score_docno_desc"])
