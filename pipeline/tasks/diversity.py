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

from dataclasses import dataclass, field
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
    run_order: list[int]  # the run's topics, in the order they first appear in it

    def value(self, name: str, cutoff: int | None = None) -> np.ndarray:
        """A column per topic: a curve's at ``cutoff`` or a single value."""
        if name in SINGLES:
            return self.single[:, SINGLES.index(name)]
        return self.curves[:, CURVES.index(name), cutoff - 1]


@dataclass
class Judgments:
    """Subtopic qrels judged once, for lists scored a batch of topics at a time: the qrels'
    topics (``keys``, sorted; ``index`` each key's position), each topic's judged documents
    (``docs``: ``tq, docno, d``, ``d`` numbered topic by topic in docno order; CSR ``doc_off``),
    each document's relevant subtopics (CSR ``rel_off`` into ``rel_sub``, numbered from 0 within
    the topic in subtopic order) and each topic's count of them (``n_sub``). ``numeric``: topics
    keyed by ndeval's numbers (:func:`run_topic` reads the run's), else by their text."""

    numeric: bool
    keys: list
    index: dict
    docs: pl.DataFrame
    doc_off: np.ndarray
    rel_off: np.ndarray
    rel_sub: np.ndarray
    n_sub: np.ndarray

    def run_keys(self, qids: list[str]) -> dict | None:
        """Each run topic's key; None where a topic is not a number while ``numeric``."""
        if not self.numeric:
            return {q: q for q in qids}
        keys = {q: run_topic(q) for q in qids}
        return None if any(k is None for k in keys.values()) else keys


def judge_qrels(qrels: pl.DataFrame, level: int, numeric: bool, path: str) -> Judgments:
    """:class:`Judgments` of diversity ``qrels`` (``qid, iter, docno, rel``) at relevance
    ``level``, topics keyed by number where ``numeric`` and every qrels topic is one; InputError
    for empty qrels or a subtopic judged twice for a document."""
    import polars as pl

    if qrels.height == 0:
        raise InputError("the qrels hold no judgment", path=path)
    keys, numeric_q = _keys(qrels["qid"].unique().to_list(), natural_number)
    if not (numeric and numeric_q):
        keys = {v: v for v in keys}
    topics = sorted(set(keys.values()))
    index = {key: i for i, key in enumerate(topics)}
    qrels = qrels.with_columns(_positions("qid", keys, index).alias("tq"))
    what = "judges document {docno} twice for subtopic {iter}"
    _refuse_repeats(qrels, ["tq", "iter", "docno"], path, what)
    sub_keys, _ = _keys(qrels["iter"].unique().to_list(), natural_number)
    sub_index = {key: i for i, key in enumerate(sorted(set(sub_keys.values())))}
    qrels = qrels.with_columns(_positions("iter", sub_keys, sub_index).alias("s"))
    docs = qrels.select("tq", "docno").unique().sort("tq", "docno").with_row_index("d")
    relevant = (
        qrels.filter(pl.col("rel") >= level)
        .select("tq", "s", "docno")
        .sort("tq", "s")
        .with_columns(pl.col("s").rank("dense").over("tq").cast(pl.Int64).sub(1).alias("j"))
    )
    relevant = relevant.join(docs, on=["tq", "docno"]).sort("d", "j")
    n_sub = np.zeros(len(topics), dtype=np.int64)
    counted = relevant.group_by("tq").agg(pl.col("j").max() + 1)
    n_sub[counted["tq"].to_numpy()] = counted["j"].to_numpy()
    return Judgments(
        numeric and numeric_q,
        topics,
        index,
        docs.with_columns(pl.col("d").cast(pl.Int64)),
        group_offsets(docs["tq"].to_numpy(), len(topics)),
        group_offsets(relevant["d"].to_numpy(), docs.height),
        relevant["j"].to_numpy().astype(np.int64),
        n_sub,
    )


@dataclass
class RunErrors:
    """The first of each refusal of a run's lines, in the file's order, raised in the order a
    whole run is checked (a document listed twice, then a rank not an integer, then a rank
    repeated), so that a run scored in batches of topics is refused as the whole run is."""

    path: str
    found: dict = field(default_factory=dict)

    def note(self, kind: str, message: str | None) -> None:
        if message is not None and kind not in self.found:
            self.found[kind] = message

    def raise_first(self) -> None:
        for kind in ("twice", "rank", "tie"):
            if kind in self.found:
                column = "rank" if kind == "rank" else None
                raise InputError(self.found[kind], path=self.path, column=column)


@dataclass
class TopicValues:
    """Scored topics of a run: their keys, in the order first listed, and their values."""

    keys: list = field(default_factory=list)
    curves: list = field(default_factory=list)  # [topics, len(CURVES), DEPTH] per batch
    single: list = field(default_factory=list)  # [topics, len(SINGLES)] per batch


def score_batch(
    J: Judgments,
    run: pl.DataFrame,
    keys: dict,
    *,
    errors: RunErrors,
    out: TopicValues,
    order: str = "rank",
    alpha: float = 0.5,
    beta: float = 0.5,
    max_docs: int | None = None,
) -> None:
    """Score the complete lists of the topics of ``run`` (every line of each), keyed by
    ``keys`` (qid -> key), into ``out``; a refusal is noted in ``errors``, the batch then left
    out (it is raised once the run is read)."""
    import polars as pl

    qids = run["qid"].unique(maintain_order=True).to_list()
    listed = list(dict.fromkeys(keys[q] for q in qids))
    local = {key: i for i, key in enumerate(listed)}
    run = run.with_columns(_positions("qid", {q: keys[q] for q in qids}, local).alias("t"))
    ranked = _ranked(run, order, errors)
    if ranked is None:
        return
    if max_docs is not None:
        ranked = ranked.filter(pl.int_range(pl.len()).over("t") < max_docs)
    topic_of = np.array([J.index.get(key, -1) for key in listed], dtype=np.int64)
    tq = pl.Series("tq", topic_of)
    ranked = ranked.with_columns(pl.col("t").replace_strict(range(len(listed)), tq).alias("tq"))
    judged = _docs_of(J, topic_of)
    ranked = ranked.join(judged, on=["tq", "docno"], how="left", maintain_order="left")
    list_off = group_offsets(ranked["t"].to_numpy(), len(listed))
    list_doc = ranked["d"].fill_null(-1).to_numpy()
    curves = np.zeros((len(listed), len(CURVES), DEPTH))
    single = np.zeros((len(listed), len(SINGLES)))
    arrays = (J.doc_off, J.rel_off, J.rel_sub, J.n_sub, topic_of, list_off, list_doc)
    arrays = tuple(readonly(a, np.int64) for a in arrays)
    run_blocks(K.ndeval_topics, len(listed), *arrays, alpha, beta, DEPTH, curves, single)
    single[topic_of < 0] = 0.0  # ndeval's zeroed result lists of topics it has no qrels for
    out.keys += listed
    out.curves.append(curves)
    out.single.append(single)


def _docs_of(J: Judgments, topic_of: np.ndarray) -> pl.DataFrame:
    """The judged documents of the qrels topics ``topic_of`` (-1: none)."""
    ranges = [np.arange(J.doc_off[q], J.doc_off[q + 1]) for q in topic_of if q >= 0]
    rows = np.concatenate(ranges) if ranges else np.zeros(0, dtype=np.int64)
    return J.docs[rows]


def assemble(J: Judgments, out: TopicValues, runid: str, path: str) -> DiversityScores:
    """Every topic of the qrels or the run, in ndeval's order, with its values (0 for a
    qrels topic the run lacks)."""
    if not out.keys:
        raise InputError("the run holds no line", path=path)
    topics = sorted(set(J.keys) | set(out.keys))
    index = {key: i for i, key in enumerate(topics)}
    where = np.array([index[key] for key in out.keys], dtype=np.int64)
    curves = np.zeros((len(topics), len(CURVES), DEPTH))
    single = np.zeros((len(topics), len(SINGLES)))
    curves[where] = np.concatenate(out.curves)
    single[where] = np.concatenate(out.single)
    in_qrels = np.zeros(len(topics), dtype=bool)
    in_qrels[[index[key] for key in J.keys]] = True
    in_run = np.zeros(len(topics), dtype=bool)
    in_run[where] = True
    texts = [str(t) for t in topics]
    return DiversityScores(texts, in_qrels, in_run, curves, single, runid, where.tolist())


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
    """ndeval's measures of a whole ``run`` (``qid, docno, rank, score, tag``) against diversity
    ``qrels`` (``qid, iter, docno, rel``: ``iter`` the subtopic), every list ranked by
    ``order`` (:data:`ORDERS`) and cut to ``max_docs``; InputError for a subtopic judged twice
    for a document, a document listed twice, or (``order="rank"``) a rank repeated or not an
    integer. A topic of the run the qrels lack scores 0 everywhere, as ndeval prints it.
    ``numeric_topics=False`` keeps topic ids as text (pyndeval's keys) even where ndeval reads
    them as numbers. :func:`mobeval.tasks.diversity_stream.stream_diversity` scores a run read
    a batch of topics at a time, with the same bits."""
    judgments = judge_qrels(qrels, level, numeric_topics, paths[0])
    if run.height == 0:
        raise InputError("the run holds no line", path=paths[1])
    qids = run["qid"].unique(maintain_order=True).to_list()
    keys = judgments.run_keys(qids)
    if keys is None:  # a run topic is not a number: every topic keyed by its text
        judgments = judge_qrels(qrels, level, False, paths[0])
        keys = judgments.run_keys(qids)
    errors, out = RunErrors(paths[1]), TopicValues()
    options = {"order": order, "alpha": alpha, "beta": beta, "max_docs": max_docs}
    score_batch(judgments, run, keys, **options, errors=errors, out=out)
    errors.raise_first()
    return assemble(judgments, out, run["tag"][0], paths[1])


def _positions(column: str, keys: dict, index: dict) -> pl.Expr:
    """Each text of ``column`` as the position of its key (``index[keys[text]]``)."""
    import polars as pl

    positions = {text: index[key] for text, key in keys.items()}
    return pl.col(column).replace_strict(positions, return_dtype=pl.Int64)


def group_offsets(sorted_ids: np.ndarray, n: int) -> np.ndarray:
    """CSR offsets of ``n`` groups from each row's group (ascending)."""
    return np.concatenate([[0], np.cumsum(np.bincount(sorted_ids, minlength=n))]).astype(np.int64)


def _first_repeat(frame: pl.DataFrame, key: list[str], what: str) -> str | None:
    """The refusal of the first row whose ``key`` another row holds; None if none does."""
    import polars as pl

    repeated = frame.filter(pl.struct(key).is_duplicated())
    if repeated.height:
        row = repeated.row(0, named=True)
        return f"query {row['qid']} " + what.format(**row)
    return None


def _refuse_repeats(frame: pl.DataFrame, key: list[str], path: str, what: str) -> None:
    """InputError naming the first row whose ``key`` another row holds."""
    message = _first_repeat(frame, key, what)
    if message is not None:
        raise InputError(message, path=path)


def _ranked(run: pl.DataFrame, order: str, errors: RunErrors) -> pl.DataFrame | None:
    """The run's lines ranked within each topic by ``order`` (:data:`ORDERS`), topics in turn;
    None, each refusal noted in ``errors``, where a line is refused."""
    import polars as pl

    errors.note("twice", _first_repeat(run, ["t", "docno"], "retrieves document {docno} twice"))
    if order == "rank":
        missing = run.filter(pl.col("rank").is_null())
        if missing.height:
            errors.note(
                "rank",
                f"query {missing['qid'][0]}: a rank that is not an integer (ndeval's default "
                "order reads ranks; -traditional orders by score)",
            )
        else:
            errors.note("tie", _first_repeat(run, ["t", "rank"], "ranks two documents at {rank}"))
    if errors.found:
        return None
    if order == "rank":
        return run.sort("t", "rank", maintain_order=True)
    return run.sort("t", "score", "docno", descending=[False, True, order == "score_docno_desc"])
