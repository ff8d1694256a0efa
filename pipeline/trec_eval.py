"""``mobeval trec_eval QRELS RUN``: trec_eval's command line, measures and text output.

Options as trec_eval's: ``-m measure[.params]`` (repeatable; ``official`` when none, ``all_trec``,
``set``), ``-q`` (one line per query and measure before the summary), ``-c`` (average over every
query of the qrels, a query without results scoring 0), ``-l N`` (relevant: judged ``>= N``,
default 1), ``-M N`` (score at most the top N documents of each query), ``-J`` (drop documents
the qrels do not judge, or judge negatively, before scoring), ``-N N`` (documents in the
collection, for ``utility``), ``-Z FILE`` (values as z-scores against ``qid measure mean
stddev`` lines), ``-R qrels_jg`` (the qrels' second field names judgment groups). Output:
``measure`` left-justified in 22 characters, a tab, the query (``all`` for the summary), a tab,
the value (4 decimals; counts as integers).

A query's list: its run lines ordered by score descending, ties by docno descending (byte order),
the run's rank field ignored -- trec_eval's order, which the ``trec_eval`` recs preset copies.
Queries scored: those of the qrels with at least one run line (every qrels query with ``-c``).
A qrels query absent from the run is skipped without ``-c`` (trec_eval 9.0's behaviour).

Supported measures, in trec_eval's order: runid, num_q, num_ret, num_rel, num_rel_ret, map,
gm_map, Rprec, bpref, recip_rank, iprec_at_recall, P, relstring, recall, infAP, gm_bpref,
Rprec_mult, utility, 11pt_avg, binG, G, dcg, ideal_dcg, ndcg, ndcg_rel, Rndcg, ndcg_cut, map_cut,
relative_P, success, set_P, set_relative_P, set_recall, set_map, set_F, num_nonrel_judged_ret,
map_avgjg, P_avgjg, Rprec_mult_avgjg (``-R qrels_jg`` only), rbp, rbp_resid, unj. (Not: the
preference measures of ``-R prefs`` / ``-R qrels_prefs``.)
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from mobeval.errors import ConfigError, InputError
from mobeval.io.numbers import integer_problem, real_problem
from mobeval.io.text import READ_ERRORS, open_binary, read_error_reason, universal_newlines
from mobeval.io.trec import iter_run, located, read_qrels, split_fields
from mobeval.kernels import trec as K

LONG_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
FRACTIONS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
R_MULTIPLES = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

#: name -> (parameter kind, default parameters), in trec_eval's order of measures.
MEASURES: dict[str, tuple[str, tuple]] = {
    "runid": ("none", ()),
    "num_q": ("none", ()),
    "num_ret": ("none", ()),
    "num_rel": ("none", ()),
    "num_rel_ret": ("none", ()),
    "map": ("none", ()),
    "gm_map": ("none", ()),
    "Rprec": ("none", ()),
    "bpref": ("none", ()),
    "recip_rank": ("none", ()),
    "iprec_at_recall": ("double_cut", FRACTIONS),
    "P": ("long_cut", LONG_CUTS),
    "relstring": ("double", (10.0,)),
    "recall": ("long_cut", LONG_CUTS),
    "infAP": ("none", ()),
    "gm_bpref": ("none", ()),
    "Rprec_mult": ("double_cut", R_MULTIPLES),
    "utility": ("double", (1.0, -1.0, 0.0, 0.0)),
    "11pt_avg": ("double", FRACTIONS),
    "binG": ("none", ()),
    "G": ("pair", ()),
    "dcg": ("pair", ()),
    "ideal_dcg": ("pair", ()),
    "ndcg": ("pair", ()),
    "ndcg_rel": ("pair", ()),
    "Rndcg": ("pair", ()),
    "ndcg_cut": ("long_cut", LONG_CUTS),
    "map_cut": ("long_cut", LONG_CUTS),
    "relative_P": ("long_cut", LONG_CUTS),
    "success": ("long_cut", (1, 5, 10)),
    "set_P": ("none", ()),
    "set_relative_P": ("none", ()),
    "set_recall": ("none", ()),
    "set_map": ("none", ()),
    "set_F": ("double", (1.0,)),
    "num_nonrel_judged_ret": ("none", ()),
    "map_avgjg": ("none", ()),
    "P_avgjg": ("long_cut", LONG_CUTS),
    "Rprec_mult_avgjg": ("double_cut", R_MULTIPLES),
    "rbp": ("pair", ()),
    "rbp_resid": ("pair", ()),
    "unj": ("long_cut", (5, 10, 20)),
}
OFFICIAL = [
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
]
NICKNAMES = {
    "official": OFFICIAL,
    "all_trec": OFFICIAL
    + [
        "relstring",
        "recall",
        "unj",
        "rbp",
        "rbp_resid",
        "infAP",
        "gm_bpref",
        "utility",
        "11pt_avg",
        "ndcg",
        "relative_P",
        "Rprec_mult",
        "success",
        "map_cut",
        "ndcg_cut",
        "ndcg_rel",
        "Rndcg",
        "binG",
        "G",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
        "num_nonrel_judged_ret",
    ],
    "qrels_jg": ["runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"],
    "set": [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "utility",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
    ],
}
COUNTS = {"num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}
SUMMARY_ONLY = {"runid", "num_q", "gm_map", "gm_bpref"}
BOGUS_DOCNO = "ceci_nest_pas_un_docno"


def _zeroed_when_bogus(name: str) -> bool:
    """Values trec_eval resets for a query without results under -c (by the value's name)."""
    return name in ("num_ret", "utility", "rbp_resid") or name.startswith("unj")


def _value(v: float) -> str:
    # glibc prints the NaN of 0.0 / 0.0 as "-nan"
    return f"{v:6.4f}" if v == v else f"{'-nan':>6}"


@dataclass
class Options:
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
class Measure:
    name: str
    kind: str
    params: tuple
    printable: str | None  # the parameter text given with -m, None for the defaults


@dataclass(frozen=True)
class Domain:
    """What each parameter of a measure may be: an integer (:func:`~mobeval.io.numbers.
    integer_problem`) or a finite real (:func:`~mobeval.io.numbers.real_problem`) from ``low``
    to ``high`` (``high`` itself excluded when ``open_high``), said as ``text`` in a message;
    ``count``: how many parameters there must be (None: any)."""

    text: str
    integer: bool = False
    low: float = -math.inf
    high: float = math.inf
    open_high: bool = False
    count: int | None = None

    def problem(self, value: str) -> str | None:
        """Why the text ``value`` is not in the domain, or None."""
        problem = (integer_problem if self.integer else real_problem)(value)
        if problem is not None:
            return problem
        number = int(value) if self.integer else float(value)
        if number < self.low or number > self.high or (self.open_high and number == self.high):
            return "is out of range"
        return None


CUTOFFS = Domain("cutoffs are whole numbers from 1 to 2^63-1", integer=True, low=1)
FRACTIONS_DOMAIN = Domain("recall levels are numbers from 0 to 1", low=0.0, high=1.0)
#: measure (or parameter kind) -> the domain of its parameters; a pair measure's gains are finite
#: reals and its levels integers (:func:`_pair_params`).
DOMAINS = {
    "long_cut": CUTOFFS,
    "iprec_at_recall": FRACTIONS_DOMAIN,
    "11pt_avg": FRACTIONS_DOMAIN,
    "Rprec_mult": Domain("multiples of R are numbers >= 0", low=0.0),
    "Rprec_mult_avgjg": Domain("multiples of R are numbers >= 0", low=0.0),
    "relstring": Domain(
        "the length is one whole number from 0 to 2^63-1", integer=True, low=0, count=1
    ),
    "utility": Domain("utility takes 4 finite coefficients", count=4),
    "set_F": Domain("beta is one number >= 0", low=0.0, count=1),
}
GAINS = Domain("gains are finite numbers")
PERSISTENCE = Domain(
    "rbp's persistence p is a number from 0 to below 1", low=0.0, high=1.0, open_high=True
)


def _checked(name: str, text: str, domain: Domain, values: list[str]) -> None:
    """ConfigError naming the first of ``values`` outside ``domain`` (or their count)."""
    if domain.count is not None and len(values) != domain.count:
        raise ConfigError(f"-m {name}.{text}: {len(values)} parameters; {domain.text}")
    for value in values:
        problem = domain.problem(value)
        if problem is not None:
            raise ConfigError(f"-m {name}.{text}: {value!r} {problem} ({domain.text})")


def _long_params(name: str, text: str) -> tuple:
    parts = text.split(",")
    _checked(name, text, CUTOFFS, parts)
    values = sorted(int(t) for t in parts)
    if len(set(values)) != len(values):
        raise ConfigError(f"-m {name}.{text}: duplicate cutoffs")
    return tuple(values)


def _double_params(name: str, text: str, *, sort: bool) -> tuple:
    parts = text.split(",")
    _checked(name, text, DOMAINS[name], parts)
    values = [float(t) for t in parts]
    if sort and len(set(values)) != len(values):
        raise ConfigError(f"-m {name}.{text}: duplicate cutoffs")
    return tuple(sorted(values) if sort else values)


def _pair_params(name: str, text: str) -> tuple:
    """``level=gain`` pairs (a level an integer within 64 bits, a gain a finite number), and for
    rbp and rbp_resid ``p=persistence``."""
    pairs = []
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or not key:
            raise ConfigError(f"-m {name}.{text}: parameters must be level=gain pairs")
        if key == "p" and name in ("rbp", "rbp_resid"):
            _checked(name, text, PERSISTENCE, [value])
        elif integer_problem(key) is None:
            _checked(name, text, GAINS, [value])
        else:
            keys = "p=persistence or level=gain" if name.startswith("rbp") else "level=gain"
            raise ConfigError(
                f"-m {name}.{text}: {key!r} is not a relevance level (an integer within 64 "
                f"bits); parameters are {keys} pairs"
            )
        pairs.append((key, float(value)))
    return tuple(pairs)


def resolve_measures(requested: list[str]) -> list[Measure]:
    """``-m`` arguments -> the measures to compute, in trec_eval's order, each with the
    parameters of the first ``-m`` that gave its name some."""
    marked: set[str] = set()
    given: dict[str, str] = {}
    for item in requested or ["official"]:
        name, dot, text = item.partition(".")
        if name in NICKNAMES and not dot:
            marked.update(NICKNAMES[name])
            continue
        if name not in MEASURES:
            known = ", ".join([*NICKNAMES, *MEASURES])
            raise ConfigError(f"-m {item}: unknown measure (known: {known})")
        marked.add(name)
        if dot and text and name not in given:
            given[name] = text
    measures = []
    for name, (kind, default) in MEASURES.items():
        if name not in marked:
            continue
        text = given.get(name)
        if text is None or kind == "none":
            params = default
        elif kind == "long_cut":
            params = _long_params(name, text)
        elif kind == "double_cut":
            params = _double_params(name, text, sort=True)
        elif kind == "double":
            params = _double_params(name, text, sort=False)
        else:
            params = _pair_params(name, text)
        measures.append(Measure(name, kind, params, text if kind != "none" else None))
    return measures


def _names(measure: Measure) -> list[str]:
    if measure.kind == "long_cut":
        return [f"{measure.name}_{k}" for k in measure.params]
    if measure.kind == "double_cut":
        return [f"{measure.name}_{f:3.2f}" for f in measure.params]
    if measure.printable is not None:
        return [f"{measure.name}_{measure.printable}"]
    return [measure.name]


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


def _writable(array: np.ndarray, dtype) -> np.ndarray:
    """One array type for the kernels (Polars gives read-only views; each type compiles apart)."""
    return np.require(array, dtype=dtype, requirements=["C", "W"])


def judge(qrels: pl.DataFrame, run: pl.DataFrame, opts: Options, *, paths=("qrels", "run")):
    """Rank the run's lists, truncate them (-M), look up each document's judgment (-J)."""
    if qrels.height == 0:
        raise InputError("the qrels hold no judgment", path=paths[0])
    if run.height == 0:
        raise InputError("the run holds no line", path=paths[1])
    qids = qrels["qid"].unique().sort()
    nq = qids.len()
    codes = pl.int_range(nq, eager=True, dtype=pl.Int64)
    run_q = run["qid"].replace_strict(qids, codes, default=-1, return_dtype=pl.Int64).to_numpy()
    has_run = np.zeros(nq, dtype=bool)
    has_run[run_q[run_q >= 0]] = True
    bogus = np.zeros(nq, dtype=bool)
    run_docs, scores = run["docno"], run["score"].to_numpy()
    if opts.complete and not has_run.all():
        # trec_eval scores a query without results as a list of one unknown document, then
        # zeroes num_ret, utility, relstring, unj* and rbp_resid (see format_report)
        bogus = ~has_run
        missing = np.flatnonzero(bogus)
        run_q = np.concatenate([run_q, missing])
        run_docs = pl.concat([run_docs, pl.Series([BOGUS_DOCNO] * missing.size)])
        scores = np.concatenate([scores, np.ones(missing.size)])
    # docnos as their ranks in byte order: ties are broken on these
    docs = pl.concat([run_docs.unique(), qrels["docno"].unique()]).unique().sort()
    doc_codes = pl.int_range(docs.len(), eager=True, dtype=pl.Int64)
    run_d = run_docs.replace_strict(docs, doc_codes, return_dtype=pl.Int64).to_numpy()
    qrels_q = qrels["qid"].replace_strict(qids, codes, return_dtype=pl.Int64).to_numpy()
    qrels_d = qrels["docno"].replace_strict(docs, doc_codes, return_dtype=pl.Int64).to_numpy()
    qrels_rel = qrels["rel"].to_numpy().astype(np.int64)
    off, rel, repeated, judged_twice = K.rank_and_judge(
        *(_writable(a, np.int64) for a in (run_q, run_d)),
        _writable(scores, np.float64),
        nq,
        docs.len(),
        *(_writable(a, np.int64) for a in (qrels_q, qrels_d, qrels_rel)),
        -1 if opts.max_docs is None else int(opts.max_docs),
        bool(opts.judged_only),
    )
    if judged_twice >= 0:
        qid, docno = qrels["qid"][int(judged_twice)], qrels["docno"][int(judged_twice)]
        raise InputError(f"query {qid} judges document {docno} twice", path=paths[0])
    if repeated >= 0:
        qid, docno = qids[int(run_q[repeated])], run_docs[int(repeated)]
        raise InputError(f"query {qid} retrieves document {docno} twice", path=paths[1])
    qrels = qrels.with_columns(q=pl.Series(qrels_q))
    judged = qrels.filter(pl.col("rel") >= 0)
    judged_rel = judged["rel"].to_numpy()
    level_values = np.unique(np.concatenate([np.zeros(1, dtype=np.int64), judged_rel]))
    levels = np.zeros((nq, level_values.size), dtype=np.int64)
    np.add.at(levels, (judged["q"].to_numpy(), np.searchsorted(level_values, judged_rel)), 1)
    scored = np.ones(nq, dtype=bool) if opts.complete else has_run
    runid = run["tag"][-1] if "tag" in run.columns else "run"
    positive = int((qrels["rel"] > 0).sum())
    return Judged(qids.to_list(), off, rel, levels, level_values, scored, bogus, positive, runid)


def _gains(params: tuple) -> tuple[np.ndarray, np.ndarray, float]:
    """The level=gain pairs of levels >= 0 (a judgment below 0 is unjudged, of gain 0) and the
    ``p`` of rbp, from parameters :func:`_pair_params` checked."""
    levels, gains, persistence = [], [], 0.9
    for key, value in params:
        if key == "p":
            persistence = value
        elif int(key) >= 0:
            levels.append(int(key))
            gains.append(value)
    return np.array(levels, dtype=np.int64), np.array(gains, dtype=np.float64), persistence


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
        names = _names(m)
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
            beta = p[0]
            prec, rec = ratio(num_rel_ret, num_ret), ratio(num_rel_ret, num_rel)
            value = ratio((beta + 1.0) * prec * rec, beta * prec + rec)
            value[num_rel_ret == 0] = 0.0
            value = value[:, None]
        elif n == "relstring":
            longest = int(np.diff(off).max(initial=0))
            raw = K.relstrings(off, rel, min(int(p[0]), longest))
            text = [bytes(row).rstrip(b"\0").decode() for row in raw]
            out.append((names, "relstring", text))
            continue
        else:  # pragma: no cover - every name of MEASURES is handled above
            raise ConfigError(f"measure {n} is not implemented")
        out.append((names, kind, np.asarray(value, dtype=np.float64)))
    return out, num_ret


def _zero_bogus(results, bogus: np.ndarray):
    if not bogus.any():
        return results
    out = []
    for names, kind, values in results:
        if kind == "relstring" and names[0] == "relstring":
            values = ["" if b else text for text, b in zip(values, bogus, strict=True)]
        elif values is not None and kind != "relstring":
            values = values.copy()
            for j, name in enumerate(names):
                if _zeroed_when_bogus(name):
                    values[bogus, j] = 0.0
        out.append((names, kind, values))
    return out


MISSING_ZSCORE = -1000000.0


def read_zscores(path) -> dict[tuple[str, str], tuple[float, float]]:
    """-Z's file: ``qid measure mean stddev`` a line (whitespace separated), plain or gzip, at a
    local path or a URL."""
    table = {}
    try:
        with open_binary(*located(path)) as stream:
            text = universal_newlines(stream.read()).decode("latin-1")  # qids as bytes
    except READ_ERRORS as error:
        reason = read_error_reason(error)
        raise InputError(f"not a readable z-scores file ({reason})", path=path) from None
    for number, line in enumerate(text.split("\n"), 1):
        fields = split_fields(line)
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != 4:
            raise InputError(
                f"line {number}: expected 'qid measure mean stddev' ({line[:80]!r})", path=path
            )
        qid, measure, mean, stddev = fields
        for name, value in (("mean", mean), ("stddev", stddev)):
            problem = real_problem(value)
            if problem is not None:
                raise InputError(
                    f"line {number}: {name} {value!r} {problem}", path=path, column=name
                )
        table[qid, measure] = (float(mean), float(stddev))
    return table


def _to_zscores(results, qids: list[str], table):
    """Each query's values as (value - mean) / stddev of the z-scores file (trec_eval -Z): a
    query or measure the file lacks, or a stddev of 0 with a value off the mean, gives -1e6."""
    known = {qid for qid, _ in table}
    out = []
    for names, kind, values in results:
        if values is None or kind == "relstring":
            out.append((names, kind, values))
            continue
        values = values.copy()
        for j, name in enumerate(names):
            stats = [table.get((qid, name)) for qid in qids]
            mean = np.array([m[0] if m else np.nan for m in stats])
            std = np.array([m[1] if m else np.nan for m in stats])
            v = values[:, j]
            with np.errstate(divide="ignore", invalid="ignore"):
                z = np.where(std != 0, (v - mean) / std, np.where(v == mean, 0.0, MISSING_ZSCORE))
            z[np.isnan(mean)] = MISSING_ZSCORE
            z[[qid not in known for qid in qids]] = MISSING_ZSCORE
            values[:, j] = z
        out.append((names, kind, values))
    return out


def format_report(judged: Judged, results, num_ret, opts: Options) -> str:
    """trec_eval's text: per-query lines (-q), then the summary."""
    rows = np.flatnonzero(judged.scored)
    if rows.size == 0:
        raise InputError("no query has both results and judgments")
    lines = []
    results = _zero_bogus(results, judged.bogus)
    z = ""
    if opts.zscores is not None:
        results = _to_zscores(results, judged.qids, read_zscores(opts.zscores))
        z = "Z"
    if opts.per_query:
        blocks = []
        for names, kind, values in results:
            if kind in ("runid", "num_q", "gm"):
                blocks.append(None)
                continue
            blocks.append((names, kind, values))
        for q in rows:
            qid = judged.qids[q]
            for block in blocks:
                if block is None:
                    continue
                names, kind, values = block
                if kind == "relstring":
                    lines.append(f"{names[0]:<22}\t{qid}\t'{values[q]}'")
                    continue
                for j, name in enumerate(names):
                    v = values[q, j]
                    if kind == "long" and not z:
                        lines.append(f"{name:<22}\t{qid}\t{int(v)}")
                    else:
                        lines.append(f"{z}{name:<22}\t{qid}\t{_value(v)}")
    count = rows.size
    for names, kind, values in results:
        if kind == "runid":
            lines.append(f"{names[0]:<22}\tall\t{judged.runid}")
        elif kind == "num_q":
            number = f"{count:6.4f}" if z else count
            lines.append(f"{z}{names[0]:<22}\tall\t{number}")
        elif kind == "relstring":
            continue
        elif kind == "long":
            if opts.complete and names[0] == "num_rel":
                total = judged.positive_judgments
            else:
                total = values[rows, 0].sum()
            if z:
                lines.append(f"{z}{names[0]:<22}\tall\t{_value(total)}")
            else:
                lines.append(f"{names[0]:<22}\tall\t{int(total)}")
        else:
            chosen = values[rows]
            for j, name in enumerate(names):
                column = chosen[:, j]
                value = sequential_sum(column) / count
                if kind == "gm":
                    value = math.exp(value)
                lines.append(f"{z}{name:<22}\tall\t{_value(value)}")
    return "\n".join(lines) + "\n"


def sequential_sum(values: np.ndarray, axis: int = 0):
    """Sum along ``axis`` one value after the other, in order, as trec_eval's C loops add them
    (``np.sum`` adds pairwise, which can differ in the last bits and so in the 4th decimal)."""
    if values.shape[axis] == 0:
        return np.zeros(np.delete(values.shape, axis)) if values.ndim > 1 else 0.0
    return np.take(np.cumsum(values, axis=axis), -1, axis=axis)


def _read_run_for_scoring(spec) -> pl.DataFrame:
    """qid, docno, score of every run line (a local path or a URL), and the tag of the last one
    (trec_eval's runid); the rank field and the other tags are let go block by block."""
    frames, tag = [], None
    path, fs = located(spec)
    for frame in iter_run(path, filesystem=fs, as_bytes=True):
        if frame.height:
            tag = frame["tag"][-1]
            frames.append(frame.select("qid", "docno", "score"))
    if not frames:
        return pl.DataFrame(schema={"qid": pl.String, "docno": pl.String, "score": pl.Float64})
    frame = pl.concat(frames, rechunk=True)
    blank = pl.repeat(None, frame.height - 1, dtype=pl.String, eager=True)
    return frame.with_columns(tag=pl.concat([blank, pl.Series([tag], dtype=pl.String)]))


JG_MEASURES = {"map_avgjg": "map", "P_avgjg": "P", "Rprec_mult_avgjg": "Rprec_mult"}


def _check_format(measures: list[Measure], opts: Options) -> None:
    grouped = opts.rel_format == "qrels_jg"
    for m in measures:
        if m.name in ("runid", "num_q"):
            continue
        if grouped and m.name not in JG_MEASURES:
            raise ConfigError(f"-m {m.name}: not a measure of -R qrels_jg (those: qrels_jg)")
        if not grouped and m.name in JG_MEASURES:
            raise ConfigError(f"-m {m.name}: needs judgment groups (-R qrels_jg)")


def _evaluate_groups(qrels: pl.DataFrame, run: pl.DataFrame, measures, opts, paths):
    """-R qrels_jg: each (query, judgment group) scored as a query of its own, then a query's
    value the mean over its groups."""
    sep = "\x1f"  # sorts below any printable byte: a query's groups stay together, in order
    pseudo = pl.col("qid") + sep + pl.col("iter")
    qrels = qrels.with_columns(pseudo.alias("group"))
    groups = qrels.select("qid", "group").unique()
    run = run.join(groups, on="qid", how="inner", maintain_order="left")
    if run.height == 0:
        raise InputError("no query of the run is in the qrels", path=paths[1])
    inner = judge(
        qrels.select(pl.col("group").alias("qid"), "docno", "rel"),
        run.select(pl.col("group").alias("qid"), "docno", "score", "tag"),
        opts,
        paths=paths,
    )
    owner = [qid.split(sep, 1)[0] for qid in inner.qids]
    real = sorted(set(owner))
    index = {qid: i for i, qid in enumerate(real)}
    member = np.array([index[qid] for qid in owner], dtype=np.int64)
    size = np.bincount(member, minlength=len(real)).astype(np.float64)
    base = [
        Measure(JG_MEASURES.get(m.name, m.name), m.kind, m.params, m.printable) for m in measures
    ]
    inner_results, _ = evaluate(inner, base, opts)
    results = []
    for m, (names, kind, values) in zip(measures, inner_results, strict=True):
        names = _names(m)
        if values is not None:
            total = np.zeros((len(real), values.shape[1]))
            np.add.at(total, member, values)
            values = total / np.where(size > 1, size, 1.0)[:, None]
        results.append((names, kind, values))
    scored = np.zeros(len(real), dtype=bool)
    scored[member[inner.scored]] = True
    bogus = np.zeros(len(real), dtype=bool)
    bogus[member[inner.bogus]] = True
    positive = int((qrels["rel"] > 0).sum())
    outer = Judged(
        real,
        inner.off,
        inner.rel,
        inner.rel_levels,
        inner.level_values,
        scored,
        bogus,
        positive,
        inner.runid,
    )
    return outer, results


def run_trec_eval(qrels_path, run_path, opts: Options) -> str:
    """The whole command: read, rank, score, format. The files are plain or gzip, at local paths
    or URLs (:mod:`mobeval.io.remote`). Identifiers are read as bytes, each one character
    (:mod:`mobeval.io.trec`'s ``as_bytes``): ``.encode("latin-1")`` gives the text's bytes."""
    measures = resolve_measures(opts.measures)
    _check_format(measures, opts)
    for path in (qrels_path, run_path, *([opts.zscores] if opts.zscores is not None else [])):
        located(path)  # every file there before any is read
    grouped = opts.rel_format == "qrels_jg"
    qrels = read_qrels(qrels_path, keep_iter=grouped, as_bytes=True)
    run = _read_run_for_scoring(run_path)
    paths = (str(qrels_path), str(run_path))
    if grouped:
        judged, results = _evaluate_groups(qrels, run, measures, opts, paths)
    else:
        judged = judge(qrels, run, opts, paths=paths)
        results, _ = evaluate(judged, measures, opts)
    return format_report(judged, results, None, opts)


def _long(text: str) -> int:
    """An integer option as trec_eval's C ``long`` holds it (64 bits)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if not -(2**63) <= value < 2**63:
        raise argparse.ArgumentTypeError(f"{text} is beyond a 64-bit integer")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """trec_eval's options, spelled as trec_eval spells them."""
    parser.add_argument(
        "qrels", help="qrels file: qid iter docno rel (plain or .gz; a path or a URL)"
    )
    parser.add_argument(
        "run", help="run file: qid Q0 docno rank score tag (plain or .gz; a path or a URL)"
    )
    parser.add_argument(
        "-m",
        dest="measures",
        action="append",
        default=[],
        metavar="MEASURE[.PARAMS]",
        help="measure to print (repeatable): official (default), all_trec, set, map, P.5,10, "
        "ndcg_cut.5, ndcg.1=1,2=3, ...",
    )
    parser.add_argument("-q", dest="per_query", action="store_true", help="per-query lines too")
    parser.add_argument(
        "-c", dest="complete", action="store_true", help="average over every qrels query"
    )
    parser.add_argument("-l", dest="level", type=_long, default=1, help="relevance level (1)")
    parser.add_argument("-M", dest="max_docs", type=_long, default=None, help="max docs per query")
    parser.add_argument("-J", dest="judged_only", action="store_true", help="judged docs only")
    parser.add_argument("-N", dest="num_docs", type=_long, default=0, help="docs in collection")
    parser.add_argument(
        "-R",
        dest="rel_format",
        choices=["qrels", "qrels_jg"],
        default="qrels",
        help="qrels_jg: the qrels' second field names judgment groups (for -m qrels_jg)",
    )
    parser.add_argument(
        "-Z", dest="zscores", default=None, help="z-scores file: qid measure mean stddev lines"
    )


def main_from_args(args) -> int:
    opts = Options(
        measures=list(args.measures),
        per_query=args.per_query,
        complete=args.complete,
        level=args.level,
        max_docs=args.max_docs,
        judged_only=args.judged_only,
        num_docs=args.num_docs,
        zscores=args.zscores,
        rel_format=args.rel_format,
    )
    report = run_trec_eval(args.qrels, args.run, opts).encode("latin-1")  # the files' bytes
    sys.stdout.flush()
    sys.stdout.buffer.write(report)
    return 0
