"""trec_eval's order of a query's list (``form_res_rels.c``, ``comp_sim_docno``: score
descending, then docno descending in byte order) as
:func:`mobeval.kernels.trec_order.rank_and_judge` gives it, against Python's sort on the same
keys: many ties, docnos that share their first 8 bytes or differ only in a trailing zero byte,
queries' lines interleaved, lines of no query."""

import numpy as np
import pytest

from mobeval.kernels.trec_order import NONPOOL, UNJUDGED, rank_and_judge

POOL = [
    b"ABCDEFGH",
    b"ABCDEFGH\x00",
    b"ABCDEFGH1",
    b"ABCDEFGH\xff",
    b"AB",
    b"AB\x00",
    b"B",
    b"\xff",
]
POOL += [b"D%d" % i for i in range(40)]


def _texts(docnos: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(docnos) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docnos], out=offsets[1:])
    return np.frombuffer(b"".join(docnos), dtype=np.uint8), offsets


def _judgment(judgments: dict, docno: bytes) -> int:
    if docno not in judgments:
        return NONPOOL
    return UNJUDGED if judgments[docno] < 0 else judgments[docno]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("docno_ascending", [False, True])
def test_lists_in_trec_evals_order(seed, docno_ascending):
    rng = np.random.default_rng(seed)
    nq = 5
    run, qrels = [], []  # (query, docno, score) / (query, docno, rel)
    for q in range(-1, nq):
        for i in rng.choice(len(POOL), size=int(rng.integers(0, len(POOL))), replace=False):
            score = float(rng.choice([0.0, -0.0, 1.5, 2.0, rng.normal()]))
            run.append((q, POOL[i], score))
        if q >= 0:
            for i in rng.choice(len(POOL), size=int(rng.integers(0, 12)), replace=False):
                qrels.append((q, POOL[i], int(rng.integers(-1, 3))))
    run = [run[i] for i in rng.permutation(len(run))]  # queries interleaved
    run_data, run_offsets = _texts([d for _, d, _ in run])
    qrels_data, qrels_offsets = _texts([d for _, d, _ in qrels])
    off, rel, repeated, judged_twice = rank_and_judge(
        run_data,
        run_offsets,
        np.array([q for q, _, _ in run], dtype=np.int32),
        np.array([s for _, _, s in run]),
        qrels_data,
        qrels_offsets,
        np.array([q for q, _, _ in qrels], dtype=np.int32),
        np.array([r for _, _, r in qrels], dtype=np.int64),
        nq,
        -1,
        False,
        docno_ascending,
    )
    assert (repeated, judged_twice) == (-1, -1)
    for q in range(nq):
        judgments = {d: r for g, d, r in qrels if g == q}
        lines = [(s, d) for g, d, s in run if g == q]
        if docno_ascending:
            ranked = sorted(lines, key=lambda line: (-line[0], line[1]))
        else:
            ranked = sorted(lines, reverse=True)
        expected = [_judgment(judgments, d) for _, d in ranked]
        assert rel[off[q] : off[q + 1]].tolist() == expected
