"""trec_eval's own test suite, line by line, and its readings of measure parameters, options and
infinite scores: ``tests/golden/trec_eval_suite`` holds the files of usnistgov/trec_eval's
``test/`` (the inputs gzipped), its expected outputs ``out.*`` and ``cases.json``, the C
program's output on each case (tests/golden/README.md)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from mobeval.cli import main

SUITE = Path(__file__).parent / "golden" / "trec_eval_suite"
CASES = json.loads((SUITE / "cases.json").read_text())

#: trec_eval's Makefile ``quicktest``: each command's arguments and the file its output must equal.
QUICKTEST = [
    ("test/qrels.test test/results.test", "out.test"),
    ("test/qrels.test.with-comments test/results.test", "out.test"),
    ("test/qrels.comment.test test/results.comment.test", "out.comment.test"),
    ("-m all_trec test/qrels.test test/results.test", "out.test.a"),
    ("-m all_trec -q test/qrels.test test/results.test", "out.test.aq"),
    ("-m all_trec -q -c test/qrels.test test/results.trunc", "out.test.aqc"),
    ("-m all_trec -q -c -M100 test/qrels.test test/results.trunc", "out.test.aqcM"),
    ("-m all_trec -mrelstring.20 -q -l2 test/qrels.rel_level test/results.test", "out.test.aql"),
    ("-m all_prefs -q -R prefs test/prefs.test test/prefs.results.test", "out.test.prefs"),
    ("-m all_prefs -q -R prefs test/prefs.comment.test test/prefs.results.test", "out.test.prefs"),
    ("-m all_prefs -q -R qrels_prefs test/qrels.test test/results.test", "out.test.qrels_prefs"),
    ("-m qrels_jg -q -R qrels_jg  test/qrels.123 test/results.test", "out.test.qrels_jg"),
    ("-m qrels_jg -q -R qrels_jg  test/qrels.comments.123 test/results.test", "out.test.qrels_jg"),
    (
        "-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 "
        "-m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 "
        "-mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20 "
        "test/qrels.test test/results.test",
        "out.test.meas_params",
    ),
    ("-q -m all_trec -Z test/zscores_file test/qrels.test test/results.test", "out.test.aqZ"),
]
#: mobeval's documented difference (docs/trec_eval.md): no preference judgments.
PREFERENCES = ("-R prefs", "-R qrels_prefs")


def _path(argument: str) -> str:
    """``test/NAME`` -> the gzipped copy of trec_eval's file; an argument as it is otherwise."""
    if argument.startswith("test/"):
        return str(SUITE / f"{argument[len('test/') :]}.gz")
    if argument in ("qrels.test", "results.test"):
        return str(SUITE / f"{argument}.gz")
    return str(SUITE / argument) if (SUITE / argument).is_file() else argument


def _mobeval(args: list[str], capsys) -> tuple[int, str, str]:
    try:
        code = main(["trec_eval", *(_path(a) for a in args)])
    except SystemExit as stop:  # a usage error, as argparse ends it
        code = stop.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("command", "expected"), QUICKTEST, ids=[e for _, e in QUICKTEST])
def test_trec_eval_quicktest_line_by_line(command, expected, capsys):
    """Every command of trec_eval's ``make quicktest``, its output compared line by line with
    trec_eval's expected one; the preference judgments (``-R prefs``, ``-R qrels_prefs``) are
    mobeval's one documented gap, refused in one line (exit 2)."""
    code, out, err = _mobeval(shlex.split(command), capsys)
    if any(flag in command for flag in PREFERENCES):
        assert (code, out) == (2, ""), err
        assert "argument -R: invalid choice" in err and len(err.splitlines()) == 1
        return
    assert code == 0, err
    assert out.splitlines() == (SUITE / expected).read_text().splitlines()


@pytest.mark.parametrize(
    "case", CASES["cases"], ids=[" ".join(c["args"][1:-2]) for c in CASES["cases"]]
)
def test_what_trec_eval_prints_or_refuses(case, capsys):
    """Measure parameters as trec_eval reads them (``atol``/``atof``, sorted, equal neighbours
    refused; ``23.4`` -> 23, ``abc`` -> 0), ``-l``/``-N``/``-M`` read by ``atol``, and infinite
    run scores (``inf``, ``-inf``, ``1e400``) ranked: the C program's output line by line; what
    it refuses (or stops on), mobeval refuses in one line, exit 2."""
    code, out, err = _mobeval(case["args"], capsys)
    if case["rc"] != 0:
        assert (code, out) == (2, ""), err
        assert err.startswith("mobeval: error: ") and len(err.splitlines()) == 1
        return
    assert code == 0, err
    assert out.splitlines() == case["stdout"].splitlines()


@pytest.mark.parametrize(
    "case",
    CASES["documented_differences"],
    ids=[c["args"][2] for c in CASES["documented_differences"]],
)
def test_gains_in_the_order_of_their_values(case, capsys):
    """The documented difference: trec_eval orders a measure's gains with ``comp_rel_gain``,
    which cuts their difference to ``int`` (gains below 1 apart compare equal) and, for a level
    given twice, reads one gain for the list and the other for the ideal one. mobeval orders
    gains by value and takes a level's first gain: ``ndcg.1=0.5`` (C: 0 for every query) is
    plain ndcg, ndcg being the same for any scale of the gains, as C's ``ndcg.1=5``."""
    code, out, err = _mobeval(case["args"], capsys)
    assert code == 0, err
    values = [line.rsplit("\t", 1)[1] for line in out.splitlines()]
    assert values == [line.rsplit("\t", 1)[1] for line in case["same_as"].splitlines()]
    assert out.splitlines() != case["stdout"].splitlines()
