"""``mobeval trec_eval QRELS RUN``: the options as trec_eval spells them, and the whole
command (read, rank, score, format), ``-R qrels_jg``'s judgment groups included; ``-m`` also
takes the recs family's ranking metrics trec_eval lacks (``mrr@10``, ``f1@10``)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import numpy as np

from mobeval.errors import ConfigError, InputError
from mobeval.io.trec import located, read_qrels, read_run
from mobeval.io.trec_codes import QrelsCodes, RunCodes, read_qrels_codes, read_run_codes
from mobeval.metrics.trec import MEASURES, NICKNAMES, Measure, measure_names, resolve_measures
from mobeval.tasks.trec import Judged, Options, evaluate, judge
from mobeval.trec_eval.output import format_report

if TYPE_CHECKING:
    import polars as pl

    from mobeval.metrics.recs import RecsMetric

#: The run ``-`` names: standard input, as trec_eval reads it (a pipe, read once as it comes).
STDIN = "/dev/stdin"
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
    import polars as pl

    sep = "\x1f"  # sorts below any printable byte: a query's groups stay together, in order
    pseudo = pl.col("qid") + sep + pl.col("iter")
    qrels = qrels.with_columns(pseudo.alias("group"))
    groups = qrels.select("qid", "group").unique()
    tag = run["tag"][-1] if run.height else None
    run = run.join(groups, on="qid", how="inner", maintain_order="left")
    if run.height == 0:
        raise InputError("no query of the run is in the qrels", path=paths[1])
    inner = judge(
        QrelsCodes.from_frame(qrels.select(pl.col("group").alias("qid"), "docno", "rel")),
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


#: Recommendation metrics that read a list's score as a predicted rating, not as a rank order.
NOT_RANKINGS = ("mse", "mae", "rmse")


def _split_measures(requested: list[str]) -> tuple[list[str], list[RecsMetric]]:
    """The ``-m`` arguments trec_eval knows, and the others read as mobeval's own
    recommendation metrics (``mrr@10``, ``f1@10``...); an argument neither knows is trec_eval's
    error. The recommendation family is imported only for such an argument."""
    trec, recs = [], []
    for item in requested:
        if item.partition(".")[0] in (*MEASURES, *NICKNAMES):
            trec.append(item)
            continue
        from mobeval.metrics.recs import parse_recs_metrics

        try:
            specs = parse_recs_metrics([item])
        except ConfigError:
            specs = ()
        if not specs or any(s.trec is not None for s in specs):
            resolve_measures([item])  # trec_eval's "unknown measure"
        for spec in specs:
            if spec.family in NOT_RANKINGS:
                raise ConfigError(
                    f"-m {item}: {spec.family} reads a list's score as a predicted rating; a "
                    "run's score only ranks its documents"
                )
            recs.append(spec)
    return trec, recs


def _recs_results(qrels: pl.DataFrame, run: pl.DataFrame, judged: Judged, specs, opts):
    """mobeval's own metrics of the recommendation family (``specs``: at least one), per query,
    by its kernels under the ``trec_eval`` preset (``-l`` its relevance threshold; each query a
    user, each judgment a rating; a negative judgment, unjudged to trec_eval, left out): NaN
    for a query not scored, 0 for a query judged only negatively (no relevant item).
    trec_eval's -c, -J, -M and -R qrels_jg have no counterpart there and are refused with
    them."""
    import polars as pl

    flags = {"-c": opts.complete, "-J": opts.judged_only, "-M": opts.max_docs is not None}
    flags["-R qrels_jg"] = opts.rel_format == "qrels_jg"
    for flag, given in flags.items():
        if given:
            raise ConfigError(
                f"-m {specs[0].name}: a recommendation metric of mobeval, which {flag} does not "
                "apply to; leave it out, or name trec_eval's measures only"
            )
    from mobeval.tasks.recs import score_recs_frame

    scores = score_recs_frame(
        run.select(user_id="qid", item_id="docno", score="score"),
        qrels.filter(pl.col("rel") >= 0).select(user_id="qid", item_id="docno", rating="rel"),
        metrics=[s.name for s in specs],
        convention="trec_eval",
        relevant_threshold=opts.level,
        check_users=False,
    )
    per_user = scores.per_user
    position = per_user["user_id"].replace_strict(
        judged.qids, range(len(judged.qids)), return_dtype=pl.Int64
    )
    results = []
    for spec in specs:
        values = np.where(judged.scored, 0.0, np.nan)[:, None]
        values[position.to_numpy(), 0] = per_user[spec.name].to_numpy()
        results.append(([spec.name], "double", values))
    return results


def run_trec_eval(qrels_path, run_path, opts: Options) -> str:
    """The whole command: read, rank, score, format. The files are plain or gzip, at local paths
    or URLs (:mod:`mobeval.io.remote`). Identifiers are read as bytes, each one character
    (:mod:`mobeval.io.trec`'s ``as_bytes``): ``.encode("latin-1")`` gives the text's bytes."""
    trec, recs = _split_measures(opts.measures)
    measures = resolve_measures(trec) if trec or not recs else []
    _check_format(measures, opts)
    run_path = STDIN if str(run_path) == "-" else run_path  # trec_eval's run from stdin
    for path in (qrels_path, run_path, *([opts.zscores] if opts.zscores is not None else [])):
        located(path)  # every file there before any is read
    paths = (str(qrels_path), str(run_path))
    if opts.rel_format == "qrels_jg":
        qrels = read_qrels(qrels_path, keep_iter=True, as_bytes=True)
        run = read_run(run_path, as_bytes=True)
        judged, results = _evaluate_groups(qrels, run, measures, opts, paths)
    elif recs:  # the recommendation family reads tables of lines: each file read once, so
        qrels = read_qrels(qrels_path, as_bytes=True)  # a pipe too
        run = read_run(run_path, as_bytes=True)
        tag = run["tag"][-1] if run.height else None
        codes = QrelsCodes.from_frame(qrels.select("qid", "docno", "rel"))
        judged = judge(codes, RunCodes.from_frame(run, tag), opts, paths=paths)
        results, _ = evaluate(judged, measures, opts)
        results += _recs_results(qrels, run, judged, recs, opts)
    else:  # each file read once, block by block, straight into codes
        codes = read_qrels_codes(qrels_path)
        judged = judge(codes, read_run_codes(run_path), opts, paths=paths)
        results, _ = evaluate(judged, measures, opts)
    return format_report(judged, results, None, opts)


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
