"""``mobeval.cli.main`` called in-process with a text-only standard output (a notebook's, or
``contextlib.redirect_stdout(io.StringIO())``): every command prints through the text stream
(``trec_eval``'s bytes as UTF-8 text, a byte that is not UTF-8 as ``\\xNN``), never exit 3."""

import contextlib
import io
from pathlib import Path

from mobeval.cli import main

SUITE = Path(__file__).parent / "golden" / "trec_eval_suite"


def _in_process(argv: list[str]) -> tuple[int, str]:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(argv)
    return code, printed.getvalue()


def test_trec_eval_prints_to_a_text_only_stdout():
    qrels, run = SUITE / "qrels.test.gz", SUITE / "results.test.gz"
    code, out = _in_process(["trec_eval", str(qrels), str(run)])
    assert code == 0
    assert out == (SUITE / "out.test").read_text()


def test_identifiers_print_as_utf8_text_and_other_bytes_escaped(tmp_path):
    """trec_eval prints a qid's own bytes: UTF-8 ones read back as their text, a Latin-1 byte
    (not UTF-8) as ``\\xe9``, never lost."""
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_bytes("q\u00e9 0 d 1\n".encode() + b"q\xe9 0 d 1\n")
    run.write_bytes("q\u00e9 Q0 d 1 1.0 t\n".encode() + b"q\xe9 Q0 d 1 1.0 t\n")
    code, out = _in_process(["trec_eval", "-q", "-m", "P.1", str(qrels), str(run)])
    assert code == 0
    assert out.splitlines() == [
        "P_1                   \tq\u00e9\t1.0000",  # the bytes c3 a9 sort before e9
        "P_1                   \tq\\xe9\t1.0000",
        "P_1                   \tall\t1.0000",
    ]
