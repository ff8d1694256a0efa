"""ndeval's measures of a run streamed a batch of topics at a time
(mobeval.tasks.diversity_stream): the same bits as the whole run for any block size and batch
size, batches bounded by ``chunk_rows``, and the runs that cannot stream (topics interleaved, a
topic that is not a number after the first block) read whole, with the same values."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mobeval.cli import main
from mobeval.errors import InputError
from mobeval.io.trec import iter_run, read_qrels, read_run
from mobeval.tasks import diversity_stream
from mobeval.tasks.diversity import score_diversity
from mobeval.tasks.diversity_stream import stream_diversity
from tests.test_diversity import FOLDERS


def _files(name):
    folder, qrels, run = FOLDERS[name]
    return folder / qrels, folder / run


def _batches(monkeypatch) -> list[int]:
    """The heights of the batches scored from now on."""
    heights = []
    scorer = diversity_stream.score_batch

    def counted(judgments, run, keys, **options):
        heights.append(run.height)
        return scorer(judgments, run, keys, **options)

    monkeypatch.setattr(diversity_stream, "score_batch", counted)
    return heights


def _whole_refused():
    raise AssertionError("the run was read whole")


def _same(a, b) -> None:
    assert a.topics == b.topics
    assert a.runid == b.runid
    assert (a.in_qrels == b.in_qrels).all() and (a.in_run == b.in_run).all()
    assert a.run_order == b.run_order
    assert np.array_equal(a.curves, b.curves, equal_nan=True)
    assert np.array_equal(a.single.view(np.int64), b.single.view(np.int64))  # -nan's sign too


@pytest.mark.parametrize("name", ["seeded", "web2012"])
@pytest.mark.parametrize("order", ["rank", "score_docno_desc", "score_docno_asc"])
def test_the_same_bits_for_any_chunking(name, order, monkeypatch):
    qrels_path, run_path = _files(name)
    qrels = read_qrels(qrels_path, keep_iter=True, as_bytes=True)
    run = read_run(run_path, as_bytes=True)
    whole = score_diversity(qrels, run, order=order, max_docs=30)
    for block_bytes, chunk_rows in [(1 << 12, 1), (1 << 13, 500), (1 << 24, 10**9)]:
        heights = _batches(monkeypatch)
        blocks = list(iter_run(run_path, block_bytes=block_bytes, as_bytes=True))
        streamed = stream_diversity(
            qrels, iter(blocks), _whole_refused, chunk_rows=chunk_rows, order=order, max_docs=30
        )
        _same(streamed, whole)
        assert sum(heights) == run.height
        assert max(heights) <= max(chunk_rows, run["qid"].value_counts()["count"].max())
        if chunk_rows == 1:
            assert len(heights) > 1


def _text_files(tmp_path, qrels: str, run: str):
    (tmp_path / "q").write_text(qrels)
    (tmp_path / "r").write_text(run)
    return read_qrels(tmp_path / "q", keep_iter=True, as_bytes=True), tmp_path / "r"


QRELS = "1 1 d1 1\n1 2 d2 1\n2 1 d3 1\n2 1 d1 0\n3 1 d1 1\n"


@pytest.mark.parametrize(
    "run",
    [
        # topics interleaved: topic 1 again after topic 2
        "1 Q0 d1 1 2.0 r\n2 Q0 d3 1 1.0 r\n1 Q0 d2 2 1.0 r\n",
        # a topic not a number after the first block: every topic keyed by its text
        "1 Q0 d2 1 2.0 r\n1 Q0 d1 2 1.0 r\nx Q0 d1 1 1.0 r\n3 Q0 d1 1 1.0 r\n",
    ],
)
def test_a_run_that_cannot_stream_is_read_whole(tmp_path, run):
    qrels, run_path = _text_files(tmp_path, QRELS, run)
    whole = score_diversity(qrels, read_run(run_path, as_bytes=True))
    blocks = iter_run(run_path, block_bytes=20, as_bytes=True)
    reads = []

    def again():
        reads.append(True)
        return read_run(run_path, as_bytes=True)

    _same(stream_diversity(qrels, blocks, again, chunk_rows=1), whole)
    assert reads == [True]


def test_refusals_are_the_whole_runs_for_any_chunking(tmp_path):
    """A rank repeated in a first topic and a document listed twice in a later one: the whole
    run's refusal (the document twice), whatever batch each falls in."""
    run = "1 Q0 d1 1 2.0 r\n1 Q0 d2 1 1.0 r\n3 Q0 d1 1 1.0 r\n3 Q0 d1 2 1.0 r\n"
    qrels, run_path = _text_files(tmp_path, QRELS, run)
    with pytest.raises(InputError, match="query 3 retrieves document d1 twice"):
        score_diversity(qrels, read_run(run_path, as_bytes=True))
    blocks = iter_run(run_path, block_bytes=20, as_bytes=True)
    with pytest.raises(InputError, match="query 3 retrieves document d1 twice"):
        stream_diversity(qrels, blocks, _whole_refused, chunk_rows=1)


@pytest.mark.parametrize("case", ["rank", "traditional", "complete"])
def test_command_line_chunk_rows_prints_ndevals_bytes(case, capsysbinary, monkeypatch):
    """``--chunk-rows 500``: ndeval's CSV, byte for byte, scored in batches of at most 500
    lines (or a topic's, where one has more)."""
    folder, qrels, run = FOLDERS["web2012"]
    expected = json.loads((folder / "expected.json").read_text())["ndeval"][case]
    heights = _batches(monkeypatch)
    assert main(["ndeval", "--chunk-rows", "500", *expected["args"], str(qrels), str(run)]) == 0
    assert capsysbinary.readouterr().out.decode() == expected["ndeval"]
    largest = read_run(run, as_bytes=True)["qid"].value_counts()["count"].max()
    assert len(heights) > 5 and max(heights) <= max(500, largest)
