"""The byte-level TREC readers (mobeval.kernels.text, mobeval.io.trec_codes.read_run_codes and
read_qrels_codes): the scores and relevances they read on their fast paths are Python's float
(correctly rounded, as strtod) and int, and a run or qrels read into codes holds what the
Polars readers read, for any block size."""

import io
import random

import numpy as np
import pytest

from mobeval.errors import InputError
from mobeval.io.text import whole_lines
from mobeval.io.trec import read_qrels, read_run
from mobeval.io.trec_codes import Interner, read_qrels_codes, read_run_codes
from mobeval.kernels.text import POWERS_OF_TEN, decimal_fast, integer_fast


def _decimals(rng: random.Random, count: int) -> list[str]:
    texts = []
    for _ in range(count):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 19)))
        point = rng.randint(0, len(digits))
        text = rng.choice(["", "-", "+"]) + digits[:point] + "." + digits[point:]
        if rng.random() < 0.5:
            text = text.rstrip(".") if rng.random() < 0.5 else text
        if rng.random() < 0.4:
            text += rng.choice("eE") + rng.choice(["", "-", "+"]) + str(rng.randint(0, 40))
        texts.append(text)
    return texts + ["0", "-0", "0.0", ".5", "5.", "9007199254740993", "1e22", "1e23", "1e-22"]


def test_fast_decimals_are_pythons_floats():
    texts = _decimals(random.Random(7), 20_000)
    fast = 0
    for text in texts:
        data = np.frombuffer(text.encode(), dtype=np.uint8)
        value, read = decimal_fast(data, 0, data.size, POWERS_OF_TEN)
        if read:
            fast += 1
            assert np.float64(value).tobytes() == np.float64(float(text)).tobytes(), text
    assert fast > len(texts) // 3  # the fast path is taken, not always left to the slow one


@pytest.mark.parametrize("text", ["1e", "1e+", ".", "-", "1.2.3", "0x10", "nan", "1e5x", ""])
def test_not_decimals_are_left_to_the_general_reader(text):
    data = np.frombuffer(text.encode(), dtype=np.uint8)
    assert not decimal_fast(data, 0, data.size, POWERS_OF_TEN)[1]


@pytest.mark.parametrize("block_bytes", [64, 300, 1 << 24])
def test_run_codes_hold_what_the_polars_reader_reads(tmp_path, block_bytes):
    rng = random.Random(3)
    lines = ["# a comment", ""]
    for q in range(40):
        for d in range(rng.randint(1, 30)):
            score = rng.choice(_decimals(rng, 1)[:1] + ["1.7976931348623157e308", "0.1"])
            sep = rng.choice([" ", "\t", "  ", " \v "])
            lines.append(sep.join([f"q{q % 7}é", "Q0", f"d{d}\xff", "1", score, "tag"]))
    path = tmp_path / "run.txt"
    path.write_bytes(("\r\n".join(lines) + "\n").encode("latin-1"))
    frame = read_run(path, as_bytes=True)
    codes = read_run_codes(path, block_bytes=block_bytes)
    assert [codes.qids[c] for c in codes.qid] == frame["qid"].to_list()
    assert [codes.docno(i) for i in range(codes.qid.size)] == frame["docno"].to_list()
    assert codes.score.tobytes() == frame["score"].to_numpy().tobytes()
    assert codes.tag == frame["tag"][-1]


@pytest.mark.parametrize(
    "text", ["0", "-7", "+12", "007", "999999999999999999", "-999999999999999999"]
)
def test_fast_integers_are_pythons_ints(text):
    data = np.frombuffer(text.encode(), dtype=np.uint8)
    assert integer_fast(data, 0, data.size) == (int(text), True)


@pytest.mark.parametrize("text", ["", "+", "1.0", "1e2", "9223372036854775807", "1_0", " 1"])
def test_not_short_integers_are_left_to_the_general_reader(text):
    data = np.frombuffer(text.encode(), dtype=np.uint8)
    assert not integer_fast(data, 0, data.size)[1]


@pytest.mark.parametrize("block_bytes", [64, 300, 1 << 24])
def test_qrels_codes_hold_what_the_polars_reader_reads(tmp_path, block_bytes):
    rng = random.Random(5)
    levels = ["0", "1", "-1", "+2", "1.7", "2e1", "-0.5", "9223372036854775807", "0003"]
    lines = ["# a comment", ""]
    for q in range(40):
        for d in range(rng.randint(1, 30)):
            sep = rng.choice([" ", "\t", "  ", " \v "])
            lines.append(sep.join([f"q{q % 7}é", "0", f"d{d}\xff", rng.choice(levels)]))
    path = tmp_path / "qrels.txt"
    path.write_bytes(("\r\n".join(lines) + "\n").encode("latin-1"))
    frame = read_qrels(path, as_bytes=True)
    codes = read_qrels_codes(path, block_bytes=block_bytes)
    assert [codes.qids[c] for c in codes.qid] == frame["qid"].to_list()
    assert [codes.docno(i) for i in range(codes.qid.size)] == frame["docno"].to_list()
    assert codes.rel.tolist() == frame["rel"].to_list()


def test_interner_codes_are_the_order_of_first_appearance_across_blocks():
    rng = random.Random(11)
    pool = ["", "a", "ab", "ba", "b", "abc", "q1", "q10", "q01"]
    keys = [k for _ in range(300) for k in [rng.choice(pool)] * rng.randint(1, 4)]
    oracle: dict[str, int] = {}
    expected = [oracle.setdefault(k, len(oracle)) for k in keys]
    interner, got = Interner(), []
    for first in range(0, len(keys), 97):  # blocks, a run of equal keys cut between two
        block = keys[first : first + 97]
        data = np.frombuffer("".join(block).encode(), dtype=np.uint8)
        ends = np.cumsum([len(k) for k in block], dtype=np.int64)
        got += interner.codes(data, ends - [len(k) for k in block], ends).tolist()
    assert got == expected
    assert interner.strings() == list(oracle)


@pytest.mark.parametrize("block_bytes", [64, 300, 1 << 24])
@pytest.mark.parametrize(
    ("kind", "good", "bad", "column"),
    [
        ("run", "q1 Q0 d{} 1 0.5 t", "q1 Q0 d 1 x t", "score"),
        ("run", "q1 Q0 d{} 1 0.5 t", "q1 Q0 d 1 0.5", "tag"),
        ("qrels", "q1 0 d{} 1", "q1 0 d", "rel"),
    ],
)
def test_a_bad_line_is_named_by_its_number_in_the_file(
    tmp_path, block_bytes, kind, good, bad, column
):
    """The line numbers of the readers into codes count every line (comments, blank lines, CR
    LF ends) of every block before the bad one, read ahead on other threads or not."""
    lines = ["# a comment", ""] + [good.format(i) for i in range(150)]
    lines.insert(97, bad)
    path = tmp_path / kind
    path.write_bytes(("\r\n".join(lines) + "\n").encode())
    reader = read_run_codes if kind == "run" else read_qrels_codes
    with pytest.raises(InputError, match="^.*line 98: ") as error:
        reader(path, block_bytes=block_bytes)
    assert error.value.column == column


def test_whole_lines_are_the_files_lines_for_any_read_size():
    """Blocks of whole lines, each ended by one LF, together the file with every CR LF and lone
    CR written as LF (a CR LF cut in two by a read too), a last line without an end given one,
    a blank last one dropped (a CR ending the file is held as the first half of a CR LF: it
    ends nothing): whatever the size of the reads."""
    rng = random.Random(17)
    for _ in range(300):
        data = bytes(rng.choice(b"ab \r\n") for _ in range(rng.randint(0, 60)))
        text = data.removesuffix(b"\r").replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        last = text[text.rfind(b"\n") + 1 :]
        expected = text + b"\n" if last.strip() else text[: len(text) - len(last)]
        for size in (1, 2, 3, 7, 64):
            blocks = list(whole_lines(io.BytesIO(data), size))
            assert all(block.endswith(b"\n") for block in blocks)
            assert b"".join(blocks) == expected, (data, size)
