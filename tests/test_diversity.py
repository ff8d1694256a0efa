"""ndeval's novelty and diversity measures (mobeval.tasks.diversity) against the TREC Web track's
``ndeval.c`` (its values at 17 digits) and ir_measures' pyndeval provider, on seeded diversity
qrels and on the Web track 2012's own qrels and a baseline run (tests/golden/README.md)."""

from __future__ import annotations

import json
import math

import pytest

from mobeval.api import evaluate_recs
from mobeval.cli import main
from mobeval.errors import ConfigError, InputError
from mobeval.io.trec import read_qrels, read_run
from mobeval.ndeval.command import Options, run_ndeval
from mobeval.tasks.diversity import score_diversity
from tests.conftest import GOLDEN, REPO_ROOT

SEEDED = GOLDEN / "ndeval"
WEB2012 = GOLDEN / "ndeval_web2012"
SAMPLES = REPO_ROOT / "data_samples" / "web2012"
FOLDERS = {
    "seeded": (SEEDED, "qrels.txt", "run.txt"),
    "web2012": (WEB2012, SAMPLES / "qrels-for-ndeval.txt.gz", SAMPLES / "ql-cata-filtered.txt.gz"),
}
#: ir_measures' names of ndeval's columns.
IR_MEASURES = {
    "alpha_nDCG": "alpha-nDCG",
    "alpha_DCG": "alpha-DCG",
    "ERR_IA": "ERR-IA",
    "nERR_IA": "nERR-IA",
    "P_IA": "P-IA",
    "AP_IA": "MAP-IA",
    "NRBP": "NRBP",
    "nNRBP": "nNRBP",
    "StRecall": "strec",
}


def _inputs(name, block_bytes=1 << 24):
    folder, qrels, run = FOLDERS[name]
    return (
        read_qrels(folder / qrels, keep_iter=True, as_bytes=True, block_bytes=block_bytes),
        read_run(folder / run, as_bytes=True, block_bytes=block_bytes),
    )


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def _ndeval_options(args: list[str]) -> dict:
    """score_diversity's arguments for ndeval's command line ``args``."""
    options = {"order": "score_docno_desc" if "-traditional" in args else "rank"}
    for flag, key, kind in (("-alpha", "alpha", float), ("-beta", "beta", float)):
        if flag in args:
            options[key] = kind(args[args.index(flag) + 1])
    if "-M" in args:
        options["max_docs"] = int(args[args.index("-M") + 1])
    return options


def _cases():
    for name, (folder, _, _) in FOLDERS.items():
        expected = json.loads((folder / "expected.json").read_text())
        for case in expected["ndeval"]:
            yield name, case


@pytest.mark.parametrize(("name", "case"), list(_cases()))
def test_every_column_of_ndeval_bit_for_bit(name, case):
    """Each topic's 21 values as ndeval.c computes them (printed with %.17g: the same bits)."""
    expected = json.loads((FOLDERS[name][0] / "expected.json").read_text())["ndeval"][case]
    scores = score_diversity(*_inputs(name), **_ndeval_options(expected["args"]))
    header, *lines, _ = expected["ndeval17"].strip().split("\n")
    columns = header.split(",")[2:]
    assert lines
    for line in lines:
        runid, topic, *values = line.split(",")
        t = scores.topics.index(topic)
        assert runid == scores.runid
        for column, text in zip(columns, values, strict=True):
            measure, _, cutoff = column.partition("@")
            mine = scores.value(measure, int(cutoff) if cutoff else None)[t]
            assert _same(mine, float(text)), (topic, column, mine, text)


def test_same_bits_for_any_block_size():
    whole = score_diversity(*_inputs("web2012"), order="score_docno_desc")
    blocks = score_diversity(*_inputs("web2012", block_bytes=1 << 12), order="score_docno_desc")
    assert whole.topics == blocks.topics
    assert (whole.curves == blocks.curves).all()
    assert (whole.single == blocks.single).all()


def _ir_measures_cases():
    for name, (folder, _, _) in FOLDERS.items():
        expected = json.loads((folder / "expected.json").read_text())["ir_measures"]
        for measure in expected:
            if measure.partition("(")[0].partition("@")[0] in IR_MEASURES:
                yield name, measure


@pytest.mark.parametrize(("name", "measure"), list(_ir_measures_cases()))
def test_ir_measures_pyndeval_values(name, measure):
    """ir_measures 0.4.3 (pyndeval 0.0.8): lists by score, ties by docno ascending; a qrels
    topic the run lacks scores 0."""
    expected = json.loads((FOLDERS[name][0] / "expected.json").read_text())["ir_measures"]
    word, _, cutoff = measure.partition("@")
    word, _, params = word.partition("(")
    options = eval(f"dict({params.rstrip(')')})")  # alpha=0.3, rel=2: the measure's parameters
    scores = score_diversity(
        *_inputs(name),
        order="score_docno_asc",
        level=options.get("rel", 1),
        alpha=options.get("alpha", 0.5),
        beta=options.get("beta", 0.5),
    )
    column = scores.value(IR_MEASURES[word], int(cutoff) if cutoff else None)
    for qid, value in expected[measure]["per_query"].items():
        t = scores.topics.index(qid)
        assert _same(column[t] if scores.in_run[t] else 0.0, value), (qid, column[t], value)


def _write(tmp_path, qrels: str, run: str):
    (tmp_path / "q").write_text(qrels)
    (tmp_path / "r").write_text(run)
    return (
        read_qrels(tmp_path / "q", keep_iter=True, as_bytes=True),
        read_run(tmp_path / "r", as_bytes=True),
    )


def test_a_subtopic_judged_twice_is_refused(tmp_path):
    qrels, run = _write(tmp_path, "1 1 d1 1\n1 2 d1 0\n1 1 d1 0\n", "1 Q0 d1 1 2.0 r\n")
    with pytest.raises(InputError, match="query 1 judges document d1 twice for subtopic 1"):
        score_diversity(qrels, run, paths=("q", "r"))


def test_a_repeated_rank_is_refused_in_rank_order_only(tmp_path):
    qrels, run = _write(tmp_path, "1 1 d1 1\n1 2 d2 1\n", "1 Q0 d1 1 2.0 r\n1 Q0 d2 1 1.0 r\n")
    with pytest.raises(InputError, match="query 1 ranks two documents at 1"):
        score_diversity(qrels, run, paths=("q", "r"))
    scores = score_diversity(qrels, run, order="score_docno_desc")
    assert scores.value("strec", 5)[0] == 1.0


def test_topics_as_text_when_not_numbers(tmp_path):
    """Topic ids ndeval cannot read as numbers are kept as text, in byte order; a run topic the
    qrels lack scores 0 and a subtopic named by text counts as one."""
    qrels, run = _write(
        tmp_path,
        "q-b x d1 1\nq-b y d2 1\nq-a x d1 1\n",
        "q-b Q0 d2 1 2.0 r\nq-b Q0 d1 2 1.0 r\nq-c Q0 d1 1 1.0 r\n",
    )
    scores = score_diversity(qrels, run)
    assert scores.topics == ["q-a", "q-b", "q-c"]
    assert list(scores.value("strec", 1)) == [0.0, 0.5, 0.0]
    assert list(scores.value("strec", 2)) == [0.0, 1.0, 0.0]


def _gdeval_cases():
    for name in FOLDERS:
        folder = FOLDERS[name][0]
        for measure in json.loads((folder / "expected.json").read_text())["ir_measures"]:
            if measure.startswith("ERR@"):
                yield name, measure


ADHOC = {"seeded": "adhoc.txt", "web2012": SAMPLES / "qrels.adhoc.txt.gz"}


@pytest.mark.parametrize(("name", "measure"), list(_gdeval_cases()))
def test_err_is_gdevals(name, measure):
    """ir_measures' ERR@k in mobeval recs: each query's value has gdeval.pl's bits (printed at
    %.17g); ir_measures parses gdeval's 5-decimal print, so equal to it within 5e-6, and its
    mean is the mean of those rounded values."""
    folder, _, run = FOLDERS[name]
    expected = json.loads((folder / "expected.json").read_text())
    result = evaluate_recs(
        str(folder / ADHOC[name]), str(folder / run), metrics=[measure], convention="ir_measures"
    )
    ours = dict(zip(result.per_unit["user_id"], result.per_unit[measure], strict=True))
    cutoff = measure.partition("@")[2]
    header, *lines, _ = expected["gdeval"][cutoff]["gdeval17.pl"].strip().split("\n")
    assert header == f"runid,topic,ndcg@{cutoff},err@{cutoff}"
    for line in lines:
        _, topic, _, err = line.split(",")
        assert ours[topic] == float(err), topic
    per_query = expected["ir_measures"][measure]["per_query"]
    assert ours == pytest.approx(per_query, abs=5e-6)
    assert set(ours) == set(per_query)


def test_err_refuses_a_judgment_above_4(tmp_path):
    (tmp_path / "q").write_text("1 0 d1 5\n")
    (tmp_path / "r").write_text("1 Q0 d1 1 2.0 r\n")
    with pytest.raises(InputError, match=r"at most 4 .* not 5.*first offending key: \('1', 'd1'\)"):
        evaluate_recs(
            str(tmp_path / "q"), str(tmp_path / "r"), metrics=["ERR@10"], convention="ir_measures"
        )


def _ndeval_command_options(args: list[str]) -> Options:
    options = _ndeval_options(args)
    return Options(
        traditional=options["order"] == "score_docno_desc",
        complete="-c" in args,
        alpha=options.get("alpha", 0.5),
        beta=options.get("beta", 0.5),
        max_docs=options.get("max_docs"),
    )


@pytest.mark.parametrize(("name", "case"), list(_cases()))
def test_ndeval_text_byte_for_byte(name, case):
    """The command's CSV is what ndeval printed: every line, every character."""
    folder, qrels, run = FOLDERS[name]
    expected = json.loads((folder / "expected.json").read_text())["ndeval"][case]
    opts = _ndeval_command_options(expected["args"])
    assert run_ndeval(folder / qrels, folder / run, opts) == expected["ndeval"]


@pytest.mark.parametrize("name", list(FOLDERS))
def test_ir_measures_aggregates_bit_for_bit(name):
    """``-m`` names: each mean as ir_measures' calc_aggregate returned it, to the last bit (its
    aggregator's sum, in the run's order of topics)."""
    folder, qrels, run = FOLDERS[name]
    expected = json.loads((folder / "expected.json").read_text())["ir_measures"]
    names = [n for n in expected if not n.startswith("ERR@")]
    text = run_ndeval(folder / qrels, folder / run, Options(measures=names, places=-1))
    printed = dict(line.split("\t") for line in text.splitlines())
    assert list(printed) == names
    for measure in names:
        assert _same(float(printed[measure]), expected[measure]["aggregate"]), measure


@pytest.mark.parametrize(
    ("measures", "options", "said"),
    [
        (["alpha_nDCG@10"], {"traditional": True}, "-traditional is ndeval's"),
        (["alpha_nDCG@21"], {}, "needs a cutoff from 1 to 20"),
        (["ERR_IA"], {}, "needs a cutoff"),
        (["AP_IA@5"], {}, "takes no cutoff"),
        (["ERR_IA(alpha=0.3)@5"], {}, "not alpha"),
        (["P_IA(judged_only=True)@5"], {}, "fails on it"),
        (["nDCG@10"], {}, "not an ir_measures diversity measure"),
    ],
)
def test_what_ndeval_cannot_say_is_refused(measures, options, said):
    folder, qrels, run = FOLDERS["seeded"]
    with pytest.raises(ConfigError) as error:
        run_ndeval(folder / qrels, folder / run, Options(measures=measures, **options))
    assert said in str(error.value)


def test_command_line_prints_ndevals_csv(capsysbinary):
    """``mobeval ndeval -traditional -c QRELS RUN`` prints ndeval's bytes."""
    folder, qrels, run = FOLDERS["web2012"]
    expected = json.loads((folder / "expected.json").read_text())["ndeval"]["complete"]
    assert main(["ndeval", *expected["args"], str(qrels), str(run)]) == 0
    assert capsysbinary.readouterr().out.decode() == expected["ndeval"]


def test_command_line_prints_ir_measures_lines(capsys):
    """``-m``: the lines ir_measures' command line prints (``measure<TAB>%.4f``; with ``-q``
    ``topic<TAB>measure<TAB>value`` first, then ``all``)."""
    folder, qrels, run = FOLDERS["web2012"]
    expected = json.loads((folder / "expected.json").read_text())["ir_measures"]
    names = ["alpha_nDCG@20", "nNRBP", "StRecall@20"]
    argv = [arg for name in names for arg in ("-m", name)]
    assert main(["ndeval", *argv, str(qrels), str(run)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"{name}\t{expected[name]['aggregate']:.4f}" for name in names]
    assert main(["ndeval", "-q", "-p", "6", *argv, str(qrels), str(run)]) == 0
    per_topic = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert len(per_topic) == 50 * 3 + 3
    for topic, name, value in per_topic:
        values = expected[name]["per_query"]
        assert value == f"{values[topic] if topic != 'all' else expected[name]['aggregate']:.6f}"


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["-m", "alpha_nDCG@30"], "needs a cutoff from 1 to 20"),
        (["-c", "-m", "P_IA@5"], "-c is ndeval's"),
        (["-alpha", "1.5"], "1.5 is not within [0, 1]"),
        (["-M", "0"], "0 is not a positive whole number"),
    ],
)
def test_command_line_refusals_exit_2(argv, said, capsys):
    folder, qrels, run = FOLDERS["seeded"]
    try:
        code = main(["ndeval", *argv, str(folder / qrels), str(folder / run)])
    except SystemExit as stop:  # argparse's refusals
        code = stop.code
    assert code == 2
    assert said in capsys.readouterr().err


def test_a_run_without_a_qrels_topic_is_refused(tmp_path, capsys):
    (tmp_path / "q").write_text("1 1 d1 1\n")
    (tmp_path / "r").write_text("2 Q0 d1 1 2.0 r\n")
    assert main(["ndeval", str(tmp_path / "q"), str(tmp_path / "r")]) == 2
    assert "no topic of the run is in the qrels" in capsys.readouterr().err
