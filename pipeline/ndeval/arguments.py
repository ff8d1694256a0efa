"""ndeval's options, spelled as ndeval spells them (``-alpha 0.3``, ``-traditional``), and
``-m`` for ir_measures' names: argparse only, so that ``mobeval ndeval --help`` loads no Polars
(the command: :mod:`mobeval.ndeval.command`)."""

from __future__ import annotations

import argparse


def _unit(text: str) -> float:
    """``-alpha`` / ``-beta``: a number from 0 to 1, as ndeval accepts them."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not within [0, 1]")
    return value


def _positive(text: str) -> int:
    """``-M`` (documents), ``--chunk-rows`` (lines): a positive whole number."""
    if not text.isdigit() or int(text) == 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive whole number")
    return int(text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """ndeval's options, and ``-m`` / ``-q`` / ``-p`` for ir_measures' names."""
    parser.add_argument(
        "qrels", help="diversity qrels: topic subtopic docno judgment (plain or .gz; path or URL)"
    )
    parser.add_argument(
        "run", help="run file: topic Q0 docno rank score tag (plain or .gz; a path or a URL)"
    )
    parser.add_argument("-alpha", type=_unit, default=0.5, help="redundancy intolerance (0.5)")
    parser.add_argument("-beta", type=_unit, default=0.5, help="patience, for NRBP (0.5)")
    parser.add_argument(
        "-traditional",
        action="store_true",
        help="rank by score, ties by docno descending (default: by the run's rank field)",
    )
    parser.add_argument("-M", dest="max_docs", type=_positive, default=None, help="cut at depth")
    parser.add_argument(
        "-c", dest="complete", action="store_true", help="average over every qrels topic"
    )
    parser.add_argument(
        "-m",
        dest="measures",
        action="append",
        default=[],
        metavar="NAME",
        help="ir_measures' name (repeatable): alpha_nDCG@20, ERR_IA@10, P_IA(rel=2)@5, AP_IA, "
        "NRBP, StRecall@10...; printed as ir_measures prints them",
    )
    parser.add_argument(
        "-q", dest="per_query", action="store_true", help="with -m: a line per topic too"
    )
    parser.add_argument(
        "--chunk-rows",
        type=_positive,
        default=None,
        help="run lines scored at a time, whole topics (200,000): memory, never the values",
    )
    parser.add_argument(
        "-p", dest="places", type=int, default=4, help="with -m: decimal places (4; -1: all)"
    )
