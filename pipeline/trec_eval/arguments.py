"""trec_eval's options, spelled as trec_eval spells them: argparse only, so that
``mobeval trec_eval --help`` loads no Polars (the command: :mod:`mobeval.trec_eval.command`)."""

from __future__ import annotations

import argparse

from mobeval.io.numbers import c_atol


def _long(text: str) -> int:
    """An integer option as trec_eval reads it: C's ``atol`` (``1.5`` -> 1, ``abc`` -> 0, beyond
    64 bits clamped)."""
    return c_atol(text)


def _count(text: str) -> int:
    """A number of documents (``-M``), read by ``atol``: 0 or more (trec_eval crashes on a
    negative one)."""
    value = _long(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative (a number of documents, 0 or more)")
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
        "ndcg_cut.5, ndcg.1=1,2=3, ..., and recs metrics trec_eval lacks (mrr@10, f1@10)",
    )
    parser.add_argument("-q", dest="per_query", action="store_true", help="per-query lines too")
    parser.add_argument(
        "-c", dest="complete", action="store_true", help="average over every qrels query"
    )
    parser.add_argument("-l", dest="level", type=_long, default=1, help="relevance level (1)")
    parser.add_argument("-M", dest="max_docs", type=_count, default=None, help="max docs per query")
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
