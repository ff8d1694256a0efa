"""``mobeval trec_eval`` against trec_eval's own output, and the TREC readers.

The inputs are made here (:func:`derived_case`: seeded random qrels and runs with score ties,
unjudged and negatively judged documents, graded levels, a query only in the run, mixed
whitespace, comments and extra fields; :data:`HAND_QRELS` / :data:`HAND_RUN`: a small case
written by hand). The expected outputs in ``tests/data/trec_eval/`` are trec_eval's, produced by
running trec_eval (usnistgov/trec_eval, commit f4253652c8efd0d86ddffd0d163cc0a0f813111a, built
with ``make``) on exactly these inputs, with the options of :data:`GOLDEN`::

    python tests/test_trec_eval.py --write-golden /path/to/trec_eval

A query of the qrels that the run lacks is only made (``*_missing`` data) for ``-c`` commands:
that trec_eval stops with "result qid not found in qrels" on one without ``-c``; mobeval skips it,
as trec_eval 9.0 did.
"""

from __future__ import annotations

import gzip
import math
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mobeval.cli import main  # noqa: E402
from mobeval.errors import InputError  # noqa: E402
from mobeval.io.trec import read_qrels, read_run, sniff  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "trec_eval"

HAND_QRELS = """\
q1 0 a 1
q1 0 b 0
q1 0 c 2
q1 0 d -1
q1 0 e 1
q2 0 x 0
q2 0 y 0
q10 0 m 3
q10 0 n 1
q10 0 o 0
"""
HAND_RUN = """\
# a comment, then a blank line

q1 Q0 a 1 0.5 tagA
q1\tQ0\tb\t2\t0.5\ttagA
q1 Q0 z 3 0.9 tagA
q1  Q0   d 4 0.7 tagA
q1 Q0 c 5 0.1 tagA
q2 Q0 x 1 1 tagA
q2 Q0 w 2 2 tagA
q10 Q0 n 1 3.0 tagA extra fields here
q10 Q0 m 2 3.0 tagA
q10 Q0 p 3 -1.5 tagA
q99 Q0 a 1 1 tagA
"""


def derived_case(seed: int, *, missing: bool, queries: int = 7) -> tuple[str, str]:
    """Seeded qrels and run texts (Python's ``random.Random``: the same on every platform)."""
    rng = random.Random(seed)
    qrels, run = [], []
    qids = sorted({f"{rng.randint(1, 120)}" for _ in range(queries)})
    for index, qid in enumerate(qids):
        pool = sorted({f"DOC-{rng.randint(0, 80):03d}" for _ in range(45)})
        judged = [d for d in pool if rng.random() < 0.6]
        levels = [-1, 0, 0, 0, 1, 1, 2, 3] if index % 3 else [0, 0, 1]
        for doc in judged:
            qrels.append(f"{qid} 0 {doc} {rng.choice(levels)}")
        if not judged:
            qrels.append(f"{qid} 0 {pool[0]} 1")
        if missing and index == 1:
            continue  # a qrels query without results
        for rank, doc in enumerate(rng.sample(pool, k=min(len(pool), rng.randint(5, 40))), 1):
            score = round(rng.random() * 4, 1)  # one decimal: many ties
            gap = rng.choice([" ", "\t", "  ", " \t "])
            tail = rng.choice(["", "", " junk after the tag"])
            run.append(f"{qid}{gap}Q0{gap}{doc}{gap}{rank}{gap}{score}{gap}run{seed}{tail}")
    run.append(f"9999 Q0 DOC-000 1 1.0 run{seed}")  # a query only in the run
    rng.shuffle(run)
    run.insert(len(run) // 2, "# a comment line")
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


def inputs(name: str) -> tuple[str, str]:
    if name == "hand":
        return HAND_QRELS, HAND_RUN
    if name == "hand_missing":
        return HAND_QRELS + "q5 0 k 1\nq5 0 j 0\n", HAND_RUN
    if name == "hand_decimal":  # judgments written as decimals: trec_eval keeps the integer part
        qrels = HAND_QRELS.replace(" 1\n", " 1.0\n").replace(" 2\n", " 2.7\n")
        return qrels + "q2 0 w 0.5\n", HAND_RUN
    if name == "known_item":
        return known_item_case(5)
    if name.endswith("_jg"):
        return judgment_groups(*inputs(name.removesuffix("_jg")), seed=len(name))
    seed, _, missing = name.removeprefix("gen").partition("_")
    return derived_case(int(seed), missing=bool(missing))


def known_item_case(seed: int) -> tuple[str, str]:
    """One relevant document a query (integer docnos, some never retrieved), distinct scores."""
    rng = random.Random(seed)
    qrels, run = [], []
    for qid in range(1, 31):
        docs = rng.sample(range(100, 400), 25)
        target = rng.choice(docs) if rng.random() < 0.8 else 999
        qrels.append(f"{qid} 0 {target} 1")
        qrels += [f"{qid} 0 {d} 0" for d in docs[:5] if d != target]
        scores = rng.sample(range(1000), 25)
        run += [
            f"{qid} Q0 {d} {i} {s / 100:.2f} ki"
            for i, (d, s) in enumerate(zip(docs, scores, strict=True))
        ]
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


def judgment_groups(qrels: str, run: str, *, seed: int) -> tuple[str, str]:
    """Qrels for -R qrels_jg: each judgment copied into groups "a", "b" (its level moved by
    -1..1 there) and, for some queries, "c" (about half of them), the group in the iter field."""
    rng = random.Random(seed)
    lines = []
    for line in qrels.splitlines():
        qid, _, docno, rel = line.split()
        lines.append(f"{qid} a {docno} {rel}")
        lines.append(f"{qid} b {docno} {max(-1, int(rel) + rng.choice([-1, 0, 1]))}")
        if sum(map(ord, qid)) % 2 == 0 and rng.random() < 0.5:
            lines.append(f"{qid} c {docno} {rel}")
    return "\n".join(lines) + "\n", run


#: golden file -> (inputs, trec_eval options)
GOLDEN = {
    "gen1.official": ("gen1", []),
    "gen1.aq": ("gen1", ["-m", "all_trec", "-q"]),
    "gen1.aql2": ("gen1", ["-m", "all_trec", "-q", "-l", "2"]),
    "gen1.aqJ": ("gen1", ["-m", "all_trec", "-q", "-J"]),
    "gen1.aqM": ("gen1", ["-m", "all_trec", "-q", "-M", "9"]),
    "gen1.params": (
        "gen1",
        ["-q", "-m", "P.1,3,7", "-m", "ndcg_cut.3,9", "-m", "iprec_at_recall.0.25,0.5"]
        + ["-m", "Rprec_mult.0.5,1.5", "-m", "success.1,2", "-m", "11pt_avg.0.2,0.4"]
        + ["-m", "set_F.0.5", "-m", "utility.2,-1,0,0", "-m", "relstring.15", "-m", "unj.2,4"]
        + ["-m", "map_cut.2,8", "-m", "relative_P.2,8", "-m", "recall.4,40"],
    ),
    "gen1.ndcg_gains": ("gen1", ["-q", "-m", "ndcg.0=0.5,1=2,3=10"]),
    "gen1.Rndcg_gains": ("gen1", ["-q", "-m", "Rndcg.2=4"]),
    "gen1.G_gains": ("gen1", ["-q", "-m", "G.1=3,2=1"]),
    "gen1.rbp_p": ("gen1", ["-q", "-m", "rbp.p=0.8"]),
    "gen2_missing.aqc": ("gen2_missing", ["-m", "all_trec", "-q", "-c"]),
    "gen2_missing.aqcMJ": ("gen2_missing", ["-m", "all_trec", "-q", "-c", "-M", "6", "-J"]),
    "gen3.aq": ("gen3", ["-m", "all_trec", "-q"]),
    "hand.aq": ("hand", ["-m", "all_trec", "-q"]),
    "hand.aqJ": ("hand", ["-m", "all_trec", "-q", "-J"]),
    "hand.aql0": ("hand", ["-m", "all_trec", "-q", "-l", "0"]),
    "hand_missing.aqc": ("hand_missing", ["-m", "all_trec", "-q", "-c"]),
    "hand_decimal.aq": ("hand_decimal", ["-m", "all_trec", "-q"]),
    "gen1.aql_negative": ("gen1", ["-m", "all_trec", "-q", "-l", "-1"]),
    "gen2_missing.aqcl7": ("gen2_missing", ["-m", "all_trec", "-q", "-c", "-l", "7"]),
    "hand.aqZ": ("hand", ["-m", "all_trec", "-q", "-Z", "ZSCORES"]),
    "known_item.success": ("known_item", ["-m", "success.1,5,10", "-m", "recip_rank"]),
    "gen1_jg.jgq": ("gen1_jg", ["-m", "qrels_jg", "-q", "-R", "qrels_jg"]),
    "gen2_missing_jg.jgqcM": (
        "gen2_missing_jg",
        ["-m", "qrels_jg", "-q", "-c", "-M", "8"] + ["-R", "qrels_jg"],
    ),
    "hand.officialZ": ("hand", ["-Z", "ZSCORES"]),
}


ZSCORES = """\
q1 map 0.4 0.2
q1 num_ret 4 1.5
q1 P_5 0.5 0.1
q1 gm_map -1.0 0.5
q1 ndcg 0.3 0
q1 recip_rank 0.5 0
q10 map 0.7 0.25
q10 num_ret 10 0
q10 bpref 0.2 0.05
q10 P_10 0.1 0.3
q99 map 0.1 0.1
"""


def write_inputs(folder: Path, name: str) -> tuple[Path, Path]:
    qrels_text, run_text = inputs(name)
    qrels, run = folder / f"{name}.qrels", folder / f"{name}.run"
    qrels.write_text(qrels_text)
    run.write_text(run_text)
    (folder / "zscores").write_text(ZSCORES)  # -Z's file (made by hand; q2 absent)
    return qrels, run


def _options(options: list[str], folder: Path) -> list[str]:
    return [str(folder / "zscores") if o == "ZSCORES" else o for o in options]


def ours(argv: list[str], capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["trec_eval", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_path_that_is_no_file_says_what_it_is(tmp_path, capsys):
    """A folder or a link to nothing given as a file is named as such (exit 2, one line), by
    trec_eval and validate alike: never "no such file" for a folder that is there."""
    qrels, _ = write_inputs(tmp_path, "hand")
    (tmp_path / "dangling").symlink_to(tmp_path / "nothing")
    for path, what in [
        (tmp_path, "a folder, not a file"),
        (tmp_path / "dangling", "a symbolic link to nothing"),
    ]:
        assert ours([str(qrels), str(path)], capsys) == (2, "", f"mobeval: error: {path}: {what}\n")
        argv = ["validate", "--task", "test", "--dataset", str(qrels), "--submission", str(path)]
        assert main(argv) == 2
        assert capsys.readouterr().err == f"mobeval: error: {path}: {what}\n"


@pytest.mark.parametrize("golden", sorted(GOLDEN))
def test_reproduces_trec_eval(golden, tmp_path, capsys):
    name, options = GOLDEN[golden]
    qrels, run = write_inputs(tmp_path, name)
    code, out, err = ours([*_options(options, tmp_path), str(qrels), str(run)], capsys)
    assert code == 0, err
    expected = (DATA / f"{golden}.txt").read_text()
    assert out.splitlines() == expected.splitlines()


def test_gzip_inputs_read_as_plain(tmp_path, capsys):
    qrels, run = write_inputs(tmp_path, "gen1")
    for path in (qrels, run):
        with gzip.open(path.with_suffix(path.suffix + ".gz"), "wt") as stream:
            stream.write(path.read_text())
    plain = ours(["-m", "all_trec", "-q", str(qrels), str(run)], capsys)
    packed = ours(["-m", "all_trec", "-q", f"{qrels}.gz", f"{run}.gz"], capsys)
    assert plain == packed
    assert plain[1] == (DATA / "gen1.aq.txt").read_text()


@pytest.fixture
def memory_folder():
    """A fresh folder of fsspec's in-memory file system (``memory://``), removed afterwards."""
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    root = f"memory://trec-{random.Random().getrandbits(32):08x}"
    yield fs, root
    fs.rm(root, recursive=True)


def test_files_at_urls_read_as_local_ones(tmp_path, capsys, memory_folder):
    """QRELS, a gzipped RUN and -Z's file at URLs give the lines of the same local files; a
    missing URL is one line naming it (exit 2)."""
    fs, root = memory_folder
    qrels, run = write_inputs(tmp_path, "hand")
    fs.pipe(f"{root}/hand.qrels", qrels.read_bytes())
    fs.pipe(f"{root}/hand.run.gz", gzip.compress(run.read_bytes()))
    fs.pipe(f"{root}/zscores", (tmp_path / "zscores").read_bytes())
    options = ["-m", "all_trec", "-q", "-Z"]
    local = ours([*options, str(tmp_path / "zscores"), str(qrels), str(run)], capsys)
    remote = ours(
        [*options, f"{root}/zscores", f"{root}/hand.qrels", f"{root}/hand.run.gz"], capsys
    )
    assert remote == local
    assert local[1] == (DATA / "hand.aqZ.txt").read_text()
    missing = f"{root}/nothing.run"
    assert ours([f"{root}/hand.qrels", missing], capsys) == (
        2,
        "",
        f"mobeval: error: {missing}: no such file\n",
    )


def test_input_format_trec_reads_urls_and_gzip(tmp_path, capsys, memory_folder):
    """``--input-format trec`` with a qrels and a gzipped run at URLs: the summary of the same
    local files, for ``recs`` and ``nextloc``."""
    fs, root = memory_folder
    for name, options in (
        ("gen1", ["recs", "--convention", "trec_eval", "--metrics", "precision@5,ndcg@10"]),
        ("known_item", ["nextloc", "--k", "1,5", "--metrics", "acc@1,acc@5,mrr"]),
    ):
        qrels, run = write_inputs(tmp_path, name)
        fs.pipe(f"{root}/{name}.qrels", qrels.read_bytes())
        fs.pipe(f"{root}/{name}.run.gz", gzip.compress(run.read_bytes()))
        truth, model = ("--ratings", "--recs") if options[0] == "recs" else ("--truth", "--pred")
        argv = [*options, "--input-format", "trec", "--model", "m", "--city", "c", "--quiet"]
        argv += ["--format", "csv"]  # named alike: by default each city is its truth's folder
        printed = []
        for files in ((qrels, run), (f"{root}/{name}.qrels", f"{root}/{name}.run.gz")):
            capsys.readouterr()
            assert main([*argv, truth, str(files[0]), model, str(files[1])]) == 0
            printed.append(capsys.readouterr().out)
        assert printed[0] == printed[1]
        assert len(printed[0].splitlines()) > 3  # the header and every metric's row


def _split_oracle(text: str, fields: int) -> list[list[str]]:
    """Plain Python: each non-blank, non-comment line split on whitespace."""
    rows = []
    for line in text.splitlines():
        parts = line.split()
        if parts and not parts[0].startswith("#"):
            rows.append(parts[:fields])
    return rows


def test_readers_match_a_plain_split(tmp_path):
    qrels, run = write_inputs(tmp_path, "gen2_missing")
    got_run = read_run(run, block_bytes=512)  # small blocks: lines cut across reads
    expected = _split_oracle(run.read_text(), 6)
    assert got_run["qid"].to_list() == [r[0] for r in expected]
    assert got_run["docno"].to_list() == [r[2] for r in expected]
    assert got_run["score"].to_list() == [float(r[4]) for r in expected]
    assert got_run["tag"].to_list() == [r[5] for r in expected]
    got_qrels = read_qrels(qrels, block_bytes=300)
    expected = _split_oracle(qrels.read_text(), 4)
    assert got_qrels.rows() == [(r[0], r[2], int(r[3])) for r in expected]
    assert sniff(run) == "run" and sniff(qrels) == "qrels"


@pytest.mark.parametrize(
    ("kind", "text", "line", "field"),
    [
        ("run", "1 Q0 a 1 0.5 t\n1 Q0 b 2 high t\n", 2, "score"),
        ("run", "1 Q0 a 1 0.5 t\n\n# c\n1 Q0 b 2\n", 4, "score"),
        ("qrels", "1 0 a 1\n1 0 b 1\n1 0 c x\n", 3, "rel"),
        ("qrels", "1 0 a 1\n1 0 b 1 2\n", 2, "rel"),
        ("qrels", "1 0 a 1\n1 0 b\n", 2, "rel"),
    ],
)
def test_a_bad_line_is_named(kind, text, line, field, tmp_path):
    path = tmp_path / f"bad.{kind}"
    path.write_text(text)
    reader = read_run if kind == "run" else read_qrels
    with pytest.raises(InputError) as caught:
        reader(path)
    message = str(caught.value)
    assert str(path) in message and f"line {line}:" in message and f"'{field}'" in message


NOT_C_SPACE = "".join(chr(c) for c in range(1, 32) if chr(c) not in "\t\n\r\x0b\x0c")


@pytest.mark.parametrize("inside", ["\x1f", "\x1c\x1e", NOT_C_SPACE], ids=["us", "fs-rs", "all"])
def test_control_bytes_belong_to_the_field(inside, tmp_path, capsys):
    """trec_eval splits fields on C's whitespace only: a control byte such as \\x1f (which
    Python's str.split takes for a space) is part of the document id. Documents renamed with such
    bytes in both files score as documents renamed with letters (every control byte at once
    takes the readers' slowest path)."""
    qrels, run = write_inputs(tmp_path, "hand")
    printed = []
    for name, mark in (("letters", "Q" * len(inside)), ("control", inside)):
        for path in (qrels, run):
            text = path.read_text().replace(" a ", f" a{mark}z ").replace(" c ", f" {mark}c ")
            (tmp_path / f"{name}.{path.name}").write_text(text)
        files = [str(tmp_path / f"{name}.{path.name}") for path in (qrels, run)]
        printed.append(ours(["-m", "all_trec", "-q", *files], capsys))
    assert printed[0][0] == 0
    assert printed[1] == printed[0]


@pytest.mark.parametrize("flag", ["-M", "-l", "-N"])
def test_integer_options_hold_in_64_bits(flag, tmp_path, capsys):
    """trec_eval reads -M, -l and -N with C's atol into a long: 2^63 and beyond are clamped to
    2^63-1 (and below -2^63 to -2^63), as glibc's strtol clamps; the extremes of 64 bits run."""
    qrels, run = write_inputs(tmp_path, "hand")
    for beyond, extreme in ((2**63, 2**63 - 1), (-(2**64), -(2**63))):
        if flag == "-M" and beyond < 0:
            continue  # a negative number of documents: refused (trec_eval crashes on it)
        clamped = ours([f"{flag}{beyond}", str(qrels), str(run)], capsys)
        assert clamped[0] == 0
        assert clamped == ours([f"{flag}{extreme}", str(qrels), str(run)], capsys)
    for value in (2**63 - 1, 0 if flag == "-M" else -(2**63)):
        assert ours([f"{flag}{value}", str(qrels), str(run)], capsys)[0] == 0


@pytest.mark.parametrize("text", ["", "# only a comment\n\n"])
def test_an_empty_zscores_file_is_refused(text, tmp_path, capsys):
    """-Z with a file of no line (trec_eval: "Cannot read zscores file") is one line, exit 2,
    never every z-score at -1e6."""
    qrels, run = write_inputs(tmp_path, "hand")
    (tmp_path / "empty").write_text(text)
    assert ours(["-Z", str(tmp_path / "empty"), str(qrels), str(run)], capsys) == (
        2,
        "",
        f"mobeval: error: {tmp_path / 'empty'}: the z-scores file holds no line (qid measure "
        "mean stddev)\n",
    )


def test_a_negative_document_count_is_refused(tmp_path, capsys):
    """-M is a number of documents: a negative one (trec_eval 10.0 crashes on it) is one line,
    exit 2, never read as "no limit"."""
    qrels, run = write_inputs(tmp_path, "hand")
    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:
        main(["trec_eval", "-M", "-3", str(qrels), str(run)])
    out, err = capsys.readouterr()
    assert (stopped.value.code, out) == (2, "")
    assert "argument -M: -3 is negative (a number of documents, 0 or more)" in err


def test_cli_bad_line_exit_2(tmp_path, capsys):
    qrels, run = write_inputs(tmp_path, "hand")
    run.write_text(run.read_text() + "q1 Q0 f 9\n")
    code, out, err = ours([str(qrels), str(run)], capsys)
    assert code == 2 and out == ""
    assert err.startswith("mobeval: error: ") and "line 14:" in err and "'score'" in err


def test_duplicate_document_is_an_error(tmp_path, capsys):
    qrels, run = write_inputs(tmp_path, "hand")
    run.write_text(run.read_text() + "q2 Q0 x 3 0.1 tagA\n")
    code, _, err = ours([str(qrels), str(run)], capsys)
    assert code == 2 and "retrieves document x twice" in err


def test_a_document_judged_twice_is_an_error(tmp_path, capsys):
    qrels, run = write_inputs(tmp_path, "hand")
    qrels.write_text(qrels.read_text() + "q10 0 n 0\n")
    code, _, err = ours([str(qrels), str(run)], capsys)
    assert code == 2 and "query q10 judges document n twice" in err


@pytest.mark.parametrize("golden", ["gen1.aqJ", "gen1.aqM", "gen2_missing.aqcMJ"])
def test_one_query_a_block_on_threads_as_one_block(golden, tmp_path, capsys, monkeypatch):
    """The ranking kernels run blocks of queries on threads: with one query a block (each on
    whichever thread comes free), the output is still trec_eval's, cuts and dropped documents
    included; of two queries that repeat a document, the first in qid order is named."""
    from mobeval.kernels import trec_order

    monkeypatch.setattr(trec_order, "QUERIES_PER_BLOCK", 1)
    name, options = GOLDEN[golden]
    qrels, run = write_inputs(tmp_path, name)
    code, out, err = ours([*options, str(qrels), str(run)], capsys)
    assert code == 0, err
    assert out.splitlines() == (DATA / f"{golden}.txt").read_text().splitlines()
    qrels, run = write_inputs(tmp_path, "hand")
    run.write_text(run.read_text() + "q2 Q0 w 3 0.1 tagA\nq1 Q0 c 9 0.1 tagA\n")
    code, _, err = ours([str(qrels), str(run)], capsys)
    assert code == 2 and "query q1 retrieves document c twice" in err


def test_trec_samples_regenerate_identically(tmp_path):
    """data_samples/make_trec_samples.py writes the shipped files again (the README's output)."""
    import importlib.util

    root = Path(__file__).resolve().parents[1] / "data_samples"
    spec = importlib.util.spec_from_file_location("make_trec", root / "make_trec_samples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.HERE = tmp_path
    module.main()
    for name in ("qrels.txt", "run.txt.gz"):
        assert (tmp_path / "trec" / name).read_bytes() == (root / "trec" / name).read_bytes()


def test_unknown_measure_is_an_error(tmp_path, capsys):
    qrels, run = write_inputs(tmp_path, "hand")
    code, _, err = ours(["-m", "mapp", str(qrels), str(run)], capsys)
    assert code == 2 and "unknown measure" in err


@pytest.mark.parametrize(
    "measure, why",
    [
        ("P.", "no parameters after the '.' (write -m P)"),
        ("map.", "no parameters after the '.' (write -m map)"),
    ],
)
def test_measure_parameters_given_empty_are_errors(measure, why, tmp_path, capsys):
    """``-m P.`` (trec_eval: "illegal measure") is one line, exit 2, never the defaults
    silently."""
    qrels, run = write_inputs(tmp_path, "hand")
    assert ours(["-m", measure, str(qrels), str(run)], capsys) == (
        2,
        "",
        f"mobeval: error: -m {measure}: {why}\n",
    )


def _summary(golden: str) -> dict[str, str]:
    lines = (DATA / f"{golden}.txt").read_text().splitlines()
    return {m.strip(): v for m, q, v in (line.split("\t") for line in lines) if q == "all"}


def test_recs_reads_trec_files(tmp_path, capsys):
    """``mobeval recs`` takes the qrels as ratings and the run as lists (detected from content):
    its trec_eval preset gives trec_eval's P@5 and P@10."""
    qrels, run = write_inputs(tmp_path, "gen1")
    out = tmp_path / "out"
    argv = ["recs", "--ratings", str(qrels), "--recs", str(run), "--convention", "trec_eval"]
    argv += ["--metrics", "precision@5,precision@10", "--out", str(out), "--quiet"]
    assert main(argv) == 0
    import polars as pl

    summary = pl.read_parquet(next((out / "summary").rglob("*.parquet")))
    values = dict(zip(summary["metric"], summary["value"], strict=True))
    expected = _summary("gen1.aq")
    assert f"{values['precision@5']:.4f}" == expected["P_5"]
    assert f"{values['precision@10']:.4f}" == expected["P_10"]


def test_nextloc_reads_trec_files(tmp_path):
    """``mobeval nextloc --input-format trec``: a known-item qrels (the relevant docno of each
    query is its true location) and a run give trec_eval's success_k and recip_rank."""
    qrels, run = write_inputs(tmp_path, "known_item")
    out = tmp_path / "out"
    argv = ["nextloc", "--truth", str(qrels), "--pred", str(run), "--input-format", "trec"]
    argv += ["--k", "1,5,10", "--metrics", "acc@1,acc@5,acc@10,mrr", "--out", str(out)]
    assert main([*argv, "--quiet"]) == 0
    import polars as pl

    summary = pl.read_parquet(next((out / "summary").rglob("*.parquet")))
    values = dict(zip(summary["metric"], summary["value"], strict=True))
    expected = _summary("known_item.success")
    for k in (1, 5, 10):
        assert f"{values[f'acc@{k}']:.4f}" == expected[f"success_{k}"]
    assert f"{values['mrr']:.4f}" == expected["recip_rank"]


def _write_golden(trec_eval: str) -> None:
    DATA.mkdir(parents=True, exist_ok=True)
    work = DATA / "_inputs"
    work.mkdir(exist_ok=True)
    for golden, (name, options) in GOLDEN.items():
        qrels, run = write_inputs(work, name)
        argv = [trec_eval, *_options(options, work), str(qrels), str(run)]
        done = subprocess.run(argv, capture_output=True)
        if done.returncode:
            raise SystemExit(f"{golden}: trec_eval failed: {done.stderr.decode()}")
        (DATA / f"{golden}.txt").write_bytes(done.stdout)
    for path in work.iterdir():
        path.unlink()
    work.rmdir()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--write-golden":
        _write_golden(sys.argv[2])
    else:
        raise SystemExit("usage: python tests/test_trec_eval.py --write-golden /path/to/trec_eval")


def test_averages_add_in_query_order_as_trec_evals_loops():
    """trec_eval accumulates each measure query after query with plain double additions (and
    m_11pt_avg.c adds its 11 values from the last cutoff down); numpy's pairwise ``sum`` can
    differ in the last bits, enough to move a 4th decimal."""
    from mobeval.trec_eval import sequential_sum

    rng = np.random.default_rng(5)
    values = rng.random((300, 11)) * 10.0 ** rng.integers(-6, 3, (300, 11))
    for j in range(values.shape[1]):
        total = 0.0
        for v in values[:, j].tolist():
            total += v
        assert sequential_sum(values[:, j]) == total
    rows = []
    for row in values.tolist():
        total = 0.0
        for v in row:
            total += v
        rows.append(total)
    assert sequential_sum(values, axis=1).tolist() == rows
    assert sequential_sum(np.zeros(0)) == 0.0


# ------------------------------------------------------------------ numbers, line ends, bytes

NUMBERS_QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 x 1\n"
NUMBERS_RUN = "q1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.4 t\nq1 Q0 c 3 0.3 t\nq2 Q0 x 1 1 t\n"


def _recs(qrels: Path, run: Path, tmp_path: Path, capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    argv = ["recs", "--ratings", str(qrels), "--recs", str(run), "--convention", "trec_eval"]
    code = main([*argv, "--metrics", "precision@2", "--out", str(tmp_path / "out"), "--quiet"])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("kind", "line", "text", "field"),
    [
        ("qrels", "q1 0 c 99999999999999999999", "beyond a 64-bit integer", "rel"),
        ("qrels", "q1 0 c -9223372036854775809", "beyond a 64-bit integer", "rel"),
        ("qrels", "q1 0 c 99999999999999999999.5", "beyond a 64-bit integer", "rel"),
        ("qrels", "q1 0 c nan", "NaN", "rel"),
        ("qrels", "q1 0 c -inf", "infinite", "rel"),
        ("run", "q1 Q0 c 3 nan t", "NaN", "score"),
    ],
)
def test_a_number_outside_its_type_is_named_by_both_faces(
    kind, line, text, field, tmp_path, capsys
):
    """A relevance beyond int64 (once read as 0), a NaN or infinite relevance, a NaN score: the
    same error (file, line 3, field; exit 2) from ``mobeval trec_eval`` and ``mobeval recs``."""
    qrels, run = tmp_path / "j.qrels", tmp_path / "r.run"
    qrels.write_text(NUMBERS_QRELS)
    run.write_text(NUMBERS_RUN)
    bad = qrels if kind == "qrels" else run
    lines = bad.read_text().splitlines()
    lines[2] = line
    bad.write_text("\n".join(lines) + "\n")
    for code, out, err in (
        ours([str(qrels), str(run)], capsys),
        _recs(qrels, run, tmp_path, capsys),
    ):
        assert (code, out) == (2, ""), err
        assert err.startswith(f"mobeval: error: {bad}: column '{field}': line 3: "), err
        assert text in err and len(err.splitlines()) == 1


def _ndcg_oracle(levels_by_query: list[list[int]]) -> float:
    """Plain Python: mean ndcg of lists whose judged levels are given in rank order, every
    judged document retrieved (gain = level, discount log2(rank + 1))."""
    values = []
    for levels in levels_by_query:
        dcg = sum(g / math.log2(i + 2) for i, g in enumerate(levels) if g > 0)
        ideal = sorted((g for g in levels if g > 0), reverse=True)
        values.append(dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal)))
    return sum(values) / len(values)


@pytest.mark.parametrize("level", [10**9, 2**63 - 1])
def test_any_64_bit_relevance_is_a_level(level, tmp_path, capsys):
    """A judgment of 10^9 or 2^63-1 (an internal error, or the OOM killer, while levels were a
    dense table) is a level like any other: map and ndcg as a plain oracle computes them."""
    qrels, run = tmp_path / "j.qrels", tmp_path / "r.run"
    qrels.write_text(NUMBERS_QRELS.replace("c 2", f"c {level}"))
    run.write_text(NUMBERS_RUN)
    code, out, err = ours(["-m", "map", "-m", "ndcg", str(qrels), str(run)], capsys)
    assert code == 0, err
    values = dict(line.split("\tall\t") for line in out.splitlines())
    assert values["map                   "] == f"{((1 + 2 / 3) / 2 + 1) / 2:.4f}"
    assert values["ndcg                  "] == f"{_ndcg_oracle([[1, 0, level], [1]]):.4f}"


def _dense_gain_table(counts: dict[int, int], custom: dict[int, float]):
    """Plain Python: trec_eval's table, every level from 0 to the highest judged one (gain =
    level unless given), then the given levels above: (gains, [(gain, count) judged])."""
    top = max((lv for lv, n in counts.items() if n > 0), default=-1)
    levels = list(range(top + 1)) + sorted(lv for lv in custom if lv > top)
    gains = [custom.get(lv, float(lv)) for lv in levels]
    judged = sorted((custom.get(lv, float(lv)), n) for lv, n in counts.items() if n > 0)
    return gains, judged


def test_the_sparse_gain_table_bounds_as_trec_evals_dense_one():
    """The judged counts, the highest gain and the range of gains of the sparse table (which
    ndcg, Rndcg and rbp's rescaling read) are those of trec_eval's dense one."""
    from mobeval.kernels.trec import _gain_table

    rng = random.Random(11)
    for _ in range(300):
        judged_levels = rng.sample(range(0, 40), rng.randint(0, 5))
        counts = {lv: rng.randint(0, 3) for lv in judged_levels}
        custom = {rng.randint(0, 45): rng.uniform(-3, 50) for _ in range(rng.randint(0, 4))}
        values = np.array(sorted({0, *counts}), dtype=np.int64)
        row = np.array([counts.get(int(v), 0) for v in values], dtype=np.int64)
        cl = np.array(list(custom), dtype=np.int64)
        cg = np.array(list(custom.values()), dtype=np.float64)
        gains, got = _gain_table(row, values, cl, cg)
        dense, judged = _dense_gain_table(counts, custom)
        assert sorted((g, n) for g, n in zip(gains, got, strict=True) if n > 0) == judged
        assert (min(gains, default=None), max(gains, default=None)) == (
            min(dense, default=None),
            max(dense, default=None),
        )


@pytest.mark.parametrize(
    "measure",
    [
        "P.inf",
        "P.0",
        "P.5,5",
        "P.5,",
        "iprec_at_recall.0.5,0.5",
        "utility.1,2",
        "ndcg.1=3,",
    ],
)
def test_a_measure_parameter_trec_eval_refuses_is_a_usage_error(measure, tmp_path, capsys):
    """What trec_eval refuses (a cutoff read as 0 or below, equal cutoffs, utility's count,
    malformed pairs; every other case: tests/test_trec_eval_suite.py)."""
    qrels, run = write_inputs(tmp_path, "hand")
    code, out, err = ours(["-m", measure, str(qrels), str(run)], capsys)
    assert (code, out) == (2, ""), err
    assert err.startswith(f"mobeval: error: -m {measure}: ") and len(err.splitlines()) == 1


@pytest.mark.parametrize("measure", ["P.9223372036854775807", "Rprec_mult.1e300"])
def test_the_extremes_of_a_domain_run(measure, tmp_path, capsys):
    """A cutoff far beyond every list: no relevant document per cutoff, 0 to 4 decimals."""
    qrels, run = write_inputs(tmp_path, "hand")
    code, out, err = ours(["-m", measure, str(qrels), str(run)], capsys)
    assert code == 0, err
    assert out.splitlines()[0].endswith("\tall\t0.0000")


@pytest.mark.parametrize("end", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_cr_and_crlf_line_ends_read_as_lf(end, tmp_path, capsys):
    """The same files with CR LF or CR-only line ends: trec_eval's output for the LF files (a
    CR-only run was one line); read in small blocks, the lines of the LF files; and a bad line
    is named by its number."""
    qrels, run = write_inputs(tmp_path, "gen1")
    for path in (qrels, run):
        path.with_name(f"{path.name}.{len(end)}").write_bytes(
            path.read_bytes().replace(b"\n", end.encode())
        )
    other = [str(p.with_name(f"{p.name}.{len(end)}")) for p in (qrels, run)]
    assert ours(["-m", "all_trec", "-q", *other], capsys)[1] == (DATA / "gen1.aq.txt").read_text()
    for size in (7, 64, 1 << 16):  # reads that cut a CR LF in two
        assert read_run(other[1], block_bytes=size).equals(read_run(run))
        assert read_qrels(other[0], block_bytes=size).equals(read_qrels(qrels))
    bad = tmp_path / "bad.run"
    bad.write_bytes(end.join(["q1 Q0 a 1 0.5 t", "q1 Q0 b 2 x t", ""]).encode())
    code, _, err = ours([other[0], str(bad)], capsys)
    assert code == 2 and "line 2:" in err and "'score'" in err


def test_docnos_are_bytes_as_trec_evals(tmp_path, capsysbinary):
    """Latin-1 docnos and qids that differ by one byte are different (they were one replacement
    character: "judges document d? twice"); the output prints qids as their bytes and scores as
    the same files with ASCII names in the same byte order. ``recs`` keeps ids as text: such a
    file is an error naming its line."""
    qrels = b"q\xe9 0 d\xe8 1\nq\xe9 0 d\xe9 0\nq\xe9 0 e 1\nq2 0 d\xe9 1\n"
    run = b"q\xe9 Q0 d\xe8 1 1 t\nq\xe9 Q0 d\xe9 2 1 t\nq\xe9 Q0 e 3 1 t\nq2 Q0 d\xe8 1 1 t\n"
    ascii_names = {b"\xe8": b"y", b"\xe9": b"z"}  # \xe8 < \xe9 as y < z
    printed = []
    for name, names in (("latin", {}), ("ascii", ascii_names)):
        files = []
        for kind, data in (("qrels", qrels), ("run", run)):
            for old, new in names.items():
                data = data.replace(b"d" + old, b"d" + new)
            files.append(tmp_path / f"{name}.{kind}")
            files[-1].write_bytes(data)
        capsysbinary.readouterr()
        assert main(["trec_eval", "-q", "-m", "map", "-m", "P.2", *map(str, files)]) == 0
        printed.append(capsysbinary.readouterr().out)
    assert b"\tq\xe9\t" in printed[0]
    assert printed[0] == printed[1]
    capsysbinary.readouterr()
    files = [str(tmp_path / "latin.qrels"), str(tmp_path / "latin.run")]
    argv = ["recs", "--ratings", files[0], "--recs", files[1], "--metrics", "precision@2"]
    assert main([*argv, "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsysbinary.readouterr().err.decode()
    assert "line 1: byte 0xe9 is not UTF-8" in err and files[0] in err


def test_per_query_lines_formatted_in_bulk():
    """-q's lines, formatted a query at a time by one template, are the lines printed one by
    one (the oracle: each value by ``value_text``, a count by ``int``): a NaN (``-nan``), a
    ``%`` in a measure's name, counts, a relstring, z-scored counts; a query not scored left
    out."""
    from mobeval.trec_eval.output import per_query_text, value_text

    values = np.array([[0.5, np.nan], [1 / 3, 2.0], [0.25, 1e6]])
    counts = np.array([[3.0], [0.0], [12.0]])
    results = [
        (["runid"], "runid", None),
        (["odd%name", "P_5"], "double", values),
        (["num_ret"], "long", counts),
        (["gm_map"], "gm", values[:, :1]),
        (["relstring"], "relstring", ["RN", "", "R"]),
    ]
    qids, rows = ["q1", "q%2", "q3"], np.array([0, 2])
    for z in ("", "Z"):
        expected = []
        for q in rows:
            expected.append(f"{z}{'odd%name':<22}\t{qids[q]}\t{value_text(values[q, 0])}")
            expected.append(f"{z}{'P_5':<22}\t{qids[q]}\t{value_text(values[q, 1])}")
            count = value_text(counts[q, 0]) if z else int(counts[q, 0])
            expected.append(f"{z}{'num_ret':<22}\t{qids[q]}\t{count}")
            expected.append(f"{'relstring':<22}\t{qids[q]}\t'{['RN', '', 'R'][q]}'")
        assert per_query_text(results, qids, rows, z) == "".join(line + "\n" for line in expected)
    assert per_query_text(results[:1], qids, rows, "") == ""
