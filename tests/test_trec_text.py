"""The byte-level TREC run reader (mobeval.kernels.text, mobeval.io.trec.read_run_codes): the
scores it reads on its fast path are the bits Python's float (correctly rounded, as strtod)
gives, and a run read into codes holds what the Polars reader reads, for any block size."""

import random

import numpy as np
import pytest

from mobeval.io.trec import read_run, read_run_codes
from mobeval.kernels.text import POWERS_OF_TEN, decimal_fast


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
