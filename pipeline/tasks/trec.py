"""The qrels and the run judged (each query's ranked list: trec_eval's order), and every
measure's per-query values computed by the kernels (:mod:`mobeval.kernels.trec`): for
``mobeval trec_eval``, and for ``mobeval recs``'s trec_eval measures (:func:`trec_user_values`,
each user a query, each rating a relevance level)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from mobeval.errors import ConfigError, InputError
from mobeval.io.numbers import c_atol, c_long_of_double
from mobeval.io.trec_codes import QrelsCodes, RunCodes
from mobeval.kernels import trec as K
from mobeval.kernels.diversity import GDEVAL_MAX_JUDGMENT, gdeval_err
from mobeval.kernels.trec_order import rank_and_judge
from mobeval.metrics.trec import COUNTS, PROVIDER_MEASURES, Measure, TrecMetric, measure_names

if TYPE_CHECKING:
    import polars as pl

BOGUS_DOCNO = "ceci_nest_pas_un_docno"


@dataclass
class Options:
    """The options of one trec_eval run, spelled as trec_eval's flags."""

    measures: list[str] = field(default_factory=list)  # the -m arguments, as given
    per_query: bool = False  # -q
    complete: bool = False  # -c
    level: int = 1  # -l
    max_docs: int | None = None  # -M
    judged_only: bool = False  # -J
    num_docs: int = 0  # -N
    zscores: str | None = None  # -Z: file of "qid measure mean stddev" lines
    rel_format: str = "qrels"  # -R: qrels, or qrels_jg (the iter field names judgment groups)


@dataclass
class Judged:
    """The ranked judgments of every qrels query (see :mod:`mobeval.kernels.trec`)."""

    qids: list[str]
    off: np.ndarray
    rel: np.ndarray
    rel_levels: np.ndarray  # [nq, levels]: judged documents of each query at each level
    level_values: np.ndarray  # the levels: 0 and every judged level >= 0, ascending
    scored: np.ndarray  # bool per query: scored (has run lines, or -c)
    bogus: np.ndarray  # bool per query: scored under -c without run lines
    positive_judgments: int  # qrels lines with rel > 0 (num_rel's summary under -c)
    runid: str


def judge(
    qrels: QrelsCodes,
    run: RunCodes,
    opts: Options,
    *,
    paths=("qrels", "run"),
    docno_ascending: bool = False,
):
    """Rank the run's lists (score ties by docno descending, as trec_eval; ascending with
    ``docno_ascending``, as ir_measures' Python providers), truncate them (-M), look up each
    document's judgment (-J)."""
    if qrels.qid.size == 0:
        raise InputError("the qrels hold no judgment", path=paths[0])
    if run.qid.size == 0:
        raise InputError("the run holds no line", path=paths[1])
    qids = sorted(qrels.qids)  # code points of bytes read as Latin-1: in byte order
    nq = len(qids)
    index = {qid: i for i, qid in enumerate(qids)}
    run_q = np.array([index.get(qid, -1) for qid in run.qids], dtype=np.int32)[run.qid]
    has_run = np.zeros(nq, dtype=bool)
    has_run[run_q[run_q >= 0]] = True
    bogus = np.zeros(nq, dtype=bool)
    scores = run.score
    docnos, offsets = run.docno_bytes, run.docno_offsets
    if opts.complete and not has_run.all():
        # trec_eval scores a query without results as a list of one unknown document, then
        # zeroes num_ret, utility, relstring, unj* and rbp_resid (see format_report)
        bogus = ~has_run
        missing = np.flatnonzero(bogus)
        run_q = np.concatenate([run_q, missing.astype(np.int32)])
        bogus_docnos = np.frombuffer(BOGUS_DOCNO.encode() * missing.size, dtype=np.uint8)
        docnos = np.concatenate([docnos, bogus_docnos])
        extra = offsets[-1] + len(BOGUS_DOCNO) * np.arange(1, missing.size + 1)
        offsets = np.concatenate([offsets, extra])
        scores = np.concatenate([scores, np.ones(missing.size)])
    qrels_q = np.array([index[qid] for qid in qrels.qids], dtype=np.int32)[qrels.qid]
    off, rel, repeated, judged_twice = rank_and_judge(
        docnos,
        offsets,
        run_q,
        scores,
        qrels.docno_bytes,
        qrels.docno_offsets,
        qrels_q,
        qrels.rel,
        nq,
        -1 if opts.max_docs is None else int(opts.max_docs),
        bool(opts.judged_only),
        docno_ascending,
    )
    if judged_twice >= 0:
        qid, docno = qids[int(qrels_q[judged_twice])], qrels.docno(int(judged_twice))
        raise InputError(f"query {qid} judges document {docno} twice", path=paths[0])
    if repeated >= 0:
        qid, docno = qids[int(run_q[repeated])], run.docno(int(repeated))
        raise InputError(f"query {qid} retrieves document {docno} twice", path=paths[1])
    judged = qrels.rel >= 0
    judged_rel = qrels.rel[judged]
    level_values = np.unique(np.concatenate([np.zeros(1, dtype=np.int64), judged_rel]))
    levels = np.zeros((nq, level_values.size), dtype=np.int64)
    np.add.at(levels, (qrels_q[judged], np.searchsorted(level_values, judged_rel)), 1)
    scored = np.ones(nq, dtype=bool) if opts.complete else has_run
    runid = run.tag if run.tag is not None else "run"
    positive = int((qrels.rel > 0).sum())
    return Judged(qids, off, rel, levels, level_values, scored, bogus, positive, runid)


def _gains(params: tuple) -> tuple[np.ndarray, np.ndarray, float]:
    """The level=gain pairs of :func:`~mobeval.metrics.trec._pair_params` as trec_eval's
    ``setup_gains`` reads them, and rbp's persistence (the last ``p=``, 0.9 by default): a name
    that is not an integer (``valid_int``) is skipped, an integer one read by ``atol`` (a level
    below 0 too: -1 gives the documents the qrels lack a gain, -2 those judged negative); in the
    order given (a level given twice: its first gain)."""
    pairs, persistence = [], 0.9
    for key, value in params:
        if key == "p":
            persistence = value
        elif re.fullmatch(r"[+-]?[0-9]+", key):
            pairs.append((c_atol(key), value))
    levels = np.array([level for level, _ in pairs], dtype=np.int64)
    return levels, np.array([gain for _, gain in pairs], dtype=np.float64), persistence


def evaluate(judged: Judged, measures: list[Measure], opts: Options):
    """Per measure: (names, kind, per-query values [nq, k] or strings) for all qrels queries."""
    off, rel, levels = judged.off, judged.rel, judged.rel_levels
    level = opts.level
    split = int(np.searchsorted(judged.level_values, max(level, 0)))  # first level >= -l
    num_rel = levels[:, split:].sum(axis=1)
    num_nonrel = levels[:, :split].sum(axis=1)
    base = K.base_counts(off, rel, level)
    num_ret, num_rel_ret = base[:, 0], base[:, 1]
    cache: dict = {}

    def ranking():
        if "ranking" not in cache:
            cache["ranking"] = K.ranking_scores(off, rel, level, num_rel, num_nonrel)
        return cache["ranking"]

    def ratio(a, b):
        a = np.asarray(a, dtype=np.float64)
        b = np.asarray(b, dtype=np.float64)
        return np.divide(a, b, out=np.zeros_like(a), where=b > 0)

    out = []
    for m in measures:
        names = measure_names(m)
        n, p = m.name, m.params
        kind = "double"
        if n == "runid":
            out.append((names, "runid", None))
            continue
        if n == "num_q":
            out.append((names, "num_q", None))
            continue
        if n in COUNTS:
            kind = "long"
            value = {
                "num_ret": num_ret,
                "num_rel": num_rel,
                "num_rel_ret": num_rel_ret,
                "num_nonrel_judged_ret": num_ret - base[:, 2] - base[:, 3] - num_rel_ret,
            }[n]
            value = value.astype(np.float64)[:, None]
        elif n in ("map", "gm_map", "Rprec", "recip_rank", "bpref", "gm_bpref", "infAP", "binG"):
            col = {"map": 0, "gm_map": 1, "Rprec": 2, "recip_rank": 3, "bpref": 4}
            col |= {"gm_bpref": 5, "infAP": 6, "binG": 7}
            value = ranking()[:, col[n]][:, None]
            if n.startswith("gm_"):
                kind = "gm"
        elif n in ("iprec_at_recall", "11pt_avg"):
            value = K.interpolated_precision(
                off, rel, level, num_rel, num_rel_ret, np.array(p, dtype=np.float64)
            )
            if n == "11pt_avg":
                # m_11pt_avg.c adds the 11 values from the last cutoff down to the first
                value = sequential_sum(value[:, ::-1], axis=1)[:, None] / value.shape[1]
        elif n in ("P", "recall", "relative_P", "success", "map_cut", "unj"):
            cut = np.array(p, dtype=np.int64)
            hits, unj, ap = K.hits_at(off, rel, level, cut)
            r = num_rel[:, None].astype(np.float64)
            if n == "P":
                value = hits / cut
            elif n == "recall":
                value = ratio(hits, np.broadcast_to(r, hits.shape))
            elif n == "relative_P":
                value = ratio(hits, np.minimum(cut[None, :], r))
            elif n == "success":
                value = (hits > 0).astype(np.float64)
            elif n == "map_cut":
                value = ratio(ap, np.broadcast_to(r, ap.shape))
            else:
                value = unj / cut
        elif n == "err_cut":
            value = gdeval_err(off, rel, np.array(p, dtype=np.int64))
        elif n in PROVIDER_MEASURES:
            judged_at, rr_at = K.provider_scores(off, rel, level, np.array(p, dtype=np.int64))
            value = judged_at if n == "judged" else rr_at
        elif n == "ndcg_cut":
            value = K.ndcg_at(off, rel, levels, judged.level_values, np.array(p, dtype=np.int64))
        elif n == "Rprec_mult":
            value = K.precision_at_r_multiples(
                off, rel, level, num_rel, num_rel_ret, np.array(p, dtype=np.float64)
            )
        elif n in ("G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg"):
            cl, cg, _ = _gains(p)
            scores = K.gain_scores(off, rel, level, num_rel, levels, judged.level_values, cl, cg)
            col = {"ndcg": 0, "dcg": 1, "ideal_dcg": 2, "ndcg_rel": 3, "Rndcg": 4, "G": 5}[n]
            value = scores[:, col][:, None]
        elif n in ("rbp", "rbp_resid"):
            cl, cg, persistence = _gains(p)
            scores = K.rbp_scores(off, rel, levels, judged.level_values, cl, cg, persistence)
            value = scores[:, 0 if n == "rbp" else 1][:, None].copy()
            if n == "rbp_resid":
                value[num_ret == 0] = 0.0
        elif n == "utility":
            a, b, c, d = p
            nrr, nret = num_rel_ret.astype(np.float64), num_ret.astype(np.float64)
            with np.errstate(invalid="ignore"):  # infinite coefficients: C's inf - inf
                value = a * nrr + b * (nret - nrr) + c * (num_rel - nrr)
                value = value + d * (opts.num_docs + nrr - nret - num_rel)
            value = value[:, None]
        elif n == "set_P":
            value = ratio(num_rel_ret, num_ret)[:, None]
        elif n == "set_relative_P":
            value = ratio(num_rel_ret, np.minimum(num_ret, num_rel))[:, None]
            value[num_rel == 0] = 0.0
        elif n == "set_recall":
            value = ratio(num_rel_ret, num_rel)[:, None]
        elif n == "set_map":
            value = ratio(num_rel_ret.astype(np.float64) ** 2, num_ret * num_rel)[:, None]
        elif n == "set_F":
            # m_set_F.c: (x + 1) P R / (x P + R) for any beta x, where a relevant one is retrieved
            beta, found = p[0], num_rel_ret > 0
            prec, rec = ratio(num_rel_ret, num_ret), ratio(num_rel_ret, num_rel)
            with np.errstate(divide="ignore", invalid="ignore"):
                f = (beta + 1.0) * prec * rec / (beta * prec + rec)
            value = np.where(found, f, 0.0)[:, None]
        elif n == "relstring":
            longest = int(np.diff(off).max(initial=0))
            raw = K.relstrings(off, rel, min(c_long_of_double(p[0]), longest))  # (long) p
            text = [bytes(row).rstrip(b"\0").decode() for row in raw]
            out.append((names, "relstring", text))
            continue
        else:  # pragma: no cover - every name of MEASURES, PROVIDER_MEASURES is handled
            raise ConfigError(f"measure {n} is not implemented")
        out.append((names, kind, np.asarray(value, dtype=np.float64)))
    return out, num_ret


def sequential_sum(values: np.ndarray, axis: int = 0):
    """Sum along ``axis`` one value after the other, in order, as trec_eval's C loops add them
    (``np.sum`` adds pairwise, which can differ in the last bits and so in the 4th decimal)."""
    if values.shape[axis] == 0:
        return np.zeros(np.delete(values.shape, axis)) if values.ndim > 1 else 0.0
    return np.take(np.cumsum(values, axis=axis), -1, axis=axis)


#: The fields of a recommendation convention trec_eval's measures read, and the value each must
#: have (None: any); ``relevant_threshold`` is ``-l``, an integer.
TREC_FIELDS = {
    "order": "score_id_str_desc",
    "duplicates": ("error", "drop"),
    "denominator": ("users_in_both", "users_in_truth"),
    "no_relevant": "zero",
    "unweighted": False,
}


def check_trec_convention(convention, metrics: Sequence[TrecMetric]) -> None:
    """ConfigError unless ``convention`` (a :class:`~mobeval.metrics.recs.RecsConvention`) is
    trec_eval's where its measures read it: the list ordered by score, ties by item id
    descending; each user scored when on both sides (or, for ir_measures' names only, every
    user with ratings: ``users_in_truth``); the level ``-l`` an integer threshold."""
    if not metrics:
        return
    named = metrics[0].label
    for name, allowed in TREC_FIELDS.items():
        value = getattr(convention, name)
        if value not in (allowed if isinstance(allowed, tuple) else (allowed,)):
            raise ConfigError(
                f"{named} is a trec_eval measure: it needs {name}={allowed!r} (trec_eval's, as "
                f"the trec_eval preset sets it), not {value!r}; use --convention trec_eval"
            )
    strict = [m.label for m in metrics if m.default is None]
    if convention.denominator == "users_in_truth" and strict:
        raise ConfigError(
            f"{strict[0]} is a trec_eval measure: it scores the users on both sides "
            "(denominator='users_in_both'); users_in_truth, a user without a list scoring 0, is "
            "ir_measures' averaging, for its names (mobeval trec_eval -c is trec_eval's own)"
        )
    threshold = convention.relevant_threshold
    if any(m.level is None for m in metrics) and not (
        isinstance(threshold, int | float) and float(threshold).is_integer()
    ):
        raise ConfigError(
            f"{named} is a trec_eval measure: relevant_threshold is its relevance level -l, "
            f"an integer, not {threshold!r}; use --convention trec_eval or --relevant-threshold 1"
        )


def trec_user_values(
    recs: pl.DataFrame,
    ratings: pl.DataFrame,
    users: pl.Series,
    metrics: Sequence[TrecMetric],
    level: int,
    *,
    path_ratings: object | None = None,
) -> dict[str, np.ndarray]:
    """Each metric's value for each of ``users`` (NaN where a user has no list or no rating):
    the users as queries, ``item_id`` as docnos (text: ties fall by item id descending, as the
    ``trec_eval`` preset orders), ``rating`` as the relevance level (an integer), ranked and
    scored as ``mobeval trec_eval`` does (:func:`judge`, :func:`evaluate`); ``level`` is ``-l``
    for the metrics without a level of their own. ``gm_*`` hold ``log(max(v, 1e-5))``. A user
    with ratings and no list holds the metric's ``default`` where it has one (ir_measures')."""
    import polars as pl

    out = {m.label: np.full(len(users), np.nan) for m in metrics}
    rated = users.is_in(ratings["user_id"].implode())
    unlisted = (rated & ~users.is_in(recs["user_id"].implode())).to_numpy()
    for m in metrics:
        if m.default is not None:
            out[m.label][unlisted] = m.default
    rating = ratings["rating"].cast(pl.Float64)
    fractional = ratings.filter(rating != rating.floor())
    if len(fractional):
        raise InputError(
            "a trec_eval measure reads a rating as a relevance level, an integer, not "
            f"{fractional['rating'][0]}",
            path=path_ratings,
            column="rating",
            key=(fractional["user_id"][0], fractional["item_id"][0]),
        )
    if any(m.name == "err_cut" for m in metrics):
        high = ratings.filter(rating > GDEVAL_MAX_JUDGMENT)
        if len(high):
            raise InputError(
                f"ERR (gdeval's) reads a rating as a judgment of at most {GDEVAL_MAX_JUDGMENT} "
                f"(its gain (2^g - 1) / 2^{GDEVAL_MAX_JUDGMENT}), not {high['rating'][0]}",
                path=path_ratings,
                column="rating",
                key=(high["user_id"][0], high["item_id"][0]),
            )
    if recs.height == 0 or ratings.height == 0:
        return out
    text = (pl.col("user_id").cast(pl.String).alias("qid"), pl.col("item_id").cast(pl.String))
    qrels = ratings.select(*text[:1], text[1].alias("docno"), pl.col("rating").cast(pl.Int64))
    run = RunCodes.from_frame(
        recs.select(*text[:1], text[1].alias("docno"), pl.col("score").cast(pl.Float64)), None
    )
    qrels = qrels.rename({"rating": "rel"})
    groups: dict[tuple, list[TrecMetric]] = {}
    for m in metrics:
        ranking = (m.judged_only, m.docno_ascending, m.gains)
        groups.setdefault((*ranking, level if m.level is None else m.level), []).append(m)
    judged_by = {}
    for only, ascending, gains, _ in groups:
        levels = qrels
        if gains is not None:
            old, new = zip(*gains, strict=True)
            levels = qrels.with_columns(pl.col("rel").replace(old, new))
        options = Options(judged_only=only)
        levels = QrelsCodes.from_frame(levels)
        judged_by[only, ascending, gains] = judge(levels, run, options, docno_ascending=ascending)
    for (judged_only, ascending, gains, group_level), group in groups.items():
        judged = judged_by[judged_only, ascending, gains]
        position = users.cast(pl.String).replace_strict(
            judged.qids, range(len(judged.qids)), default=-1, return_dtype=pl.Int64
        )
        position = position.to_numpy()
        found = (position >= 0) & judged.scored[np.maximum(position, 0)]
        opts = Options(level=group_level, judged_only=judged_only)
        results, _ = evaluate(judged, [m.measure for m in group], opts)
        for metric, (_, _, values) in zip(group, results, strict=True):
            out[metric.label][found] = values[position[found], 0]
    return out
