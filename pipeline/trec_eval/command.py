"""``mobeval trec_eval QRELS RUN``: the options as trec_eval spells them, and the whole
command (read, rank, score, format), ``-R qrels_jg``'s judgment groups included."""

from __future__ import annotations

import argparse
import sys

import numpy as np
import polars as pl

from mobeval.errors import ConfigError, InputError
from mobeval.io.trec import RunCodes, located, read_qrels, read_run, read_run_codes
from mobeval.trec_eval.measures import Measure, measure_names, resolve_measures
from mobeval.trec_eval.output import format_report
from mobeval.trec_eval.scoring import Judged, Options, evaluate, judge

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
    tag = run["tag"][-1] if run.height else None
    run = run.join(groups, on="qid", how="inner", maintain_order="left")
    if run.height == 0:
        raise InputError("no query of the run is in the qrels", path=paths[1])
    inner = judge(
        qrels.select(pl.col("group").alias("qid"), "docno", "rel"),
        RunCodes.from_frame(run.select(pl.col("group").alias("qid"), "docno", "score"), tag),
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
        names = measure_names(m)
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
    paths = (str(qrels_path), str(run_path))
    if grouped:
        run = read_run(run_path, as_bytes=True)
        judged, results = _evaluate_groups(qrels, run, measures, opts, paths)
    else:
        judged = judge(qrels, read_run_codes(run_path), opts, paths=paths)
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
