"""The accumulators of a training loop (issue 35): batches folded by ``update`` in any sizes
and order, states merged across processes (pickled as a gather carries them), give the summary
``evaluate_<family>`` gives on the concatenated epoch, to the bit; the state's pickle does not
grow with the epoch. Marked tests run a tiny PyTorch loop, and a two-process gloo gather, where
torch is installed."""

from __future__ import annotations

import multiprocessing
import pickle
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mobeval.accumulate import (
    LogitsAccumulator,
    NextlocAccumulator,
    RecsAccumulator,
    TrajectoryAccumulator,
)
from mobeval.api import evaluate_logits, evaluate_nextloc, evaluate_recs, evaluate_trajectory
from mobeval.errors import ConfigError, InputError

OPTIONS = [
    {"k": [1, 3]},
    {"k": [1, 2], "convention": "sklearn"},
    {"k": [2], "ties": "average", "ignore_target": 0},
    {"metrics": ["acc@1", "mrr", "cross_entropy"], "percent": True},
]


def _epoch(seed: int, rows: int, classes: int, dtype=np.float32):
    """Logits with many ties (small integers) and their targets."""
    rng = np.random.default_rng(seed)
    logits = rng.integers(-3, 4, size=(rows, classes)).astype(dtype)
    logits += rng.normal(0, 1, size=(rows, classes)).astype(dtype) * (rng.random(rows) < 0.5)[
        :, None
    ].astype(dtype)
    return logits, rng.integers(0, classes, size=rows)


def _batches(logits, targets, cuts):
    bounds = [0, *sorted(set(cuts)), len(targets)]
    return [(logits[a:b], targets[a:b]) for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    rows=st.integers(1, 60),
    classes=st.integers(3, 7),
    options=st.sampled_from(OPTIONS),
    cuts=st.lists(st.integers(1, 59), max_size=6),
    order=st.randoms(use_true_random=False),
    double=st.booleans(),
)
def test_any_batches_in_any_order_give_evaluate_logits_bits(
    seed, rows, classes, options, cuts, order, double
):
    logits, targets = _epoch(seed, rows, classes, np.float64 if double else np.float32)
    if options.get("ignore_target") == 0:
        targets[0] = 1  # at least one row scored
    whole = evaluate_logits(logits, targets, **options).summary
    batches = _batches(logits, targets, [c for c in cuts if c < rows])
    order.shuffle(batches)
    metric = LogitsAccumulator(**options)
    for x, y in batches:
        metric.update(x, y)
    assert metric.compute().summary.equals(whole)
    assert metric.rows == rows


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    parts=st.integers(2, 5),
    order=st.randoms(use_true_random=False),
)
def test_merges_in_any_grouping_give_the_same_bits(seed, parts, order):
    logits, targets = _epoch(seed, 50, 5)
    whole = evaluate_logits(logits, targets, k=[1, 3]).summary
    pieces = []
    for x, y in _batches(logits, targets, np.linspace(0, 50, parts + 1)[1:-1].astype(int)):
        piece = LogitsAccumulator(k=[1, 3])
        piece.update(x, y)
        pieces.append(pickle.loads(pickle.dumps(piece)))
    order.shuffle(pieces)
    while len(pieces) > 1:  # a tree of merges, as a gather reduces them
        i = order.randrange(len(pieces) - 1)
        pieces[i : i + 2] = [pieces[i].merge(pieces[i + 1])]
    assert pieces[0].compute().summary.equals(whole)


def _score_half(args) -> bytes:
    """One process's half of the epoch, its accumulator pickled (what a gather sends)."""
    seed, half, batch = args
    logits, targets = _epoch(seed, 400, 6)
    metric = LogitsAccumulator(k=[1, 5])
    rows = range(half * 200, half * 200 + 200)
    for first in range(rows.start, rows.stop, batch):
        stop = min(first + batch, rows.stop)
        metric.update(logits[first:stop], targets[first:stop])
    return pickle.dumps(metric)


def test_two_processes_merge_to_the_whole_epoch():
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        states = pool.map(_score_half, [(7, 0, 32), (7, 1, 17)])
    logits, targets = _epoch(7, 400, 6)
    whole = evaluate_logits(logits, targets, k=[1, 5]).summary
    first, second = (pickle.loads(state) for state in states)
    assert first.merge(second).compute().summary.equals(whole)
    first, second = (pickle.loads(state) for state in states)
    assert second.merge(first).compute().summary.equals(whole)


def test_the_state_does_not_grow_with_the_epoch():
    sizes = []
    for rows in (100, 100_000):
        logits, targets = _epoch(3, rows, 8)
        metric = LogitsAccumulator(k=[1, 5])
        for first in range(0, rows, 1000):
            metric.update(logits[first : first + 1000], targets[first : first + 1000])
        sizes.append(len(pickle.dumps(metric)))
    assert sizes[1] < sizes[0] + 256 and sizes[1] < 16_384  # a few digits more per exact sum


def test_frames_are_batches_too():
    logits, targets = _epoch(11, 30, 4)
    whole = evaluate_logits(logits, targets).summary
    metric = LogitsAccumulator()
    metric.update(pl.DataFrame({"logits": logits[:10], "target": targets[:10]}))
    table = pa.table({"logits": list(logits[10:]), "target": targets[10:]})
    metric.update(table)
    assert metric.compute().summary.equals(whole)
    renamed = LogitsAccumulator(logits_column="scores", targets_column="y")
    renamed.update(pl.DataFrame({"scores": logits, "y": targets}))
    assert renamed.compute().summary.equals(whole)


def test_what_cannot_be_merged_or_computed_is_refused():
    with pytest.raises(ConfigError, match="same options"):
        LogitsAccumulator(k=[1]).merge(LogitsAccumulator(k=[5]))
    with pytest.raises(InputError, match="no logits rows"):
        LogitsAccumulator().compute()
    three, four = LogitsAccumulator(), LogitsAccumulator()
    three.update(*_epoch(1, 5, 3))
    four.update(*_epoch(1, 5, 4))
    with pytest.raises(InputError, match="classes"):
        three.merge(four)
    with pytest.raises(InputError, match="row 7"):  # rows numbered across batches
        three.update(np.zeros((5, 3), np.float32), np.array([0, 1, 9, 0, 0]))


@pytest.mark.torch
def test_a_pytorch_loop_gives_evaluate_logits_bits():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 5)
    optimiser = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(96, 4), torch.randint(0, 5, (96,))
    for _ in range(3):  # epochs: train, then score the validation set batch by batch
        for first in range(0, 64, 16):
            optimiser.zero_grad()
            loss = torch.nn.functional.cross_entropy(
                model(x[first : first + 16]), y[first : first + 16]
            )
            loss.backward()
            optimiser.step()
        metric, seen = LogitsAccumulator(k=[1, 3]), []
        with torch.no_grad():
            for first in range(64, 96, 10):
                logits = model(x[first : first + 10])
                metric.update(logits, y[first : first + 10])  # CPU tensors, through DLPack
                seen.append(logits.numpy().copy())
        whole = evaluate_logits(np.concatenate(seen), y[64:].numpy(), k=[1, 3]).summary
        assert metric.compute().summary.equals(whole)
        expected = torch.nn.functional.cross_entropy(torch.from_numpy(np.concatenate(seen)), y[64:])
        assert metric.compute().value("cross_entropy") == pytest.approx(float(expected), rel=1e-6)


def _gather_rank(rank: int, init: str, world: int, result: str) -> None:
    """One process of a torch.distributed (gloo) group: its share of the validation batches
    folded, the states gathered with all_gather_object and merged; rank 0 writes the summary."""
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    logits, targets = _epoch(5, 300, 7)
    metric = LogitsAccumulator(k=[1, 5])
    for first in range(rank * 20, 300, 20 * world):  # a distributed sampler's batches
        batch = slice(first, first + 20)
        metric.update(torch.from_numpy(logits[batch]), torch.from_numpy(targets[batch]))
    states = [None] * world
    dist.all_gather_object(states, metric)
    merged = states[0]
    for state in states[1:]:
        merged.merge(state)
    if rank == 0:
        merged.compute().summary.write_parquet(result)
    dist.destroy_process_group()


@pytest.mark.torch
def test_torch_distributed_gather_gives_evaluate_logits_bits(tmp_path):
    spawn = pytest.importorskip("torch.multiprocessing").spawn
    result = str(tmp_path / "summary.parquet")
    init = f"file://{tmp_path / 'init'}"
    spawn(_gather_rank, args=(init, 2, result), nprocs=2, join=True)
    logits, targets = _epoch(5, 300, 7)
    assert pl.read_parquet(result).equals(evaluate_logits(logits, targets, k=[1, 5]).summary)


# --------------------------------------------------------------------------- keyed families

SAMPLES = Path(__file__).resolve().parents[1] / "data_samples"


def _keyed(family: str):
    """(accumulator class, evaluate_<family>, truth, predictions, unit column, options)."""
    if family == "nextloc":
        tky = SAMPLES / "nextloc" / "tky"
        truth, pred = (pl.read_parquet(tky / f) for f in ("truth.parquet", "markov.parquet"))
        return NextlocAccumulator, evaluate_nextloc, truth, pred, "sample_id", {"k": [1, 5]}
    if family == "recs":
        ratings = pl.read_parquet(SAMPLES / "recs" / "ratings.parquet")
        lists = pl.read_parquet(SAMPLES / "recs" / "mf.parquet")
        options = {
            "metrics": ["ndcg@10", "map@10", "coverage@10", "gini@10", "avg_popularity@10"],
            "catalogue": ratings.select("item_id"),
            "train": ratings,
        }
        return RecsAccumulator, evaluate_recs, ratings, lists, "user_id", options
    humob = SAMPLES / "humob"
    reference = pl.read_csv(humob / "reference_test.csv.gz")
    columns = reference.columns
    generated = pl.read_csv(humob / "weekly_repeat.csv.gz", has_header=False, new_columns=columns)
    return TrajectoryAccumulator, evaluate_trajectory, reference, generated, "uid", {}


@pytest.mark.parametrize("family", ["nextloc", "recs", "trajectory"])
@settings(max_examples=6, deadline=None)
@given(parts=st.integers(1, 6), seed=st.integers(0, 2**32 - 1))
def test_keyed_batches_in_any_split_and_order_give_evaluate_bits(family, parts, seed):
    accumulator, evaluate, truth, pred, unit, options = _keyed(family)
    whole = evaluate(truth, pred, **options).summary
    units = np.random.default_rng(seed).permutation(truth[unit].unique().to_numpy())
    metric = accumulator(**options)
    for part in np.array_split(units, parts):
        keep = pl.col(unit).is_in(part.tolist())
        metric.update(truth.filter(keep), pred.filter(keep))
    assert metric.compute().summary.equals(whole)


def _nextloc_half(args) -> bytes:
    half, parts = args
    _, _, truth, pred, unit, options = _keyed("nextloc")
    mine = truth[unit].unique().sort().to_numpy()[half::2]
    metric = NextlocAccumulator(**options)
    for part in np.array_split(mine, parts):
        keep = pl.col(unit).is_in(part.tolist())
        metric.update(truth.filter(keep), pred.filter(keep))
    return pickle.dumps(metric)


def test_keyed_states_from_two_processes_merge_to_the_whole():
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        states = pool.map(_nextloc_half, [(0, 3), (1, 4)])
    _, evaluate, truth, pred, _, options = _keyed("nextloc")
    whole = evaluate(truth, pred, **options).summary
    first, second = (pickle.loads(state) for state in states)
    assert first.merge(second).compute().summary.equals(whole)
    assert max(map(len, states)) < 16_384  # counts and exact sums, not the 3,000 samples


def test_a_recs_state_carries_no_frame_and_merges_only_its_own():
    accumulator, _, ratings, lists, _, options = _keyed("recs")
    metric = accumulator(**options)
    metric.update(ratings, lists)
    carried = pickle.loads(pickle.dumps(metric))
    assert carried.options is None and len(pickle.dumps(metric)) < 64_000
    with pytest.raises(ConfigError, match="read back from a pickle"):
        carried.update(ratings, lists)
    other = accumulator(**(options | {"train": ratings.head(10)}))  # another popularity
    with pytest.raises(ConfigError, match="same options"):
        accumulator(**options).merge(other)
    with pytest.raises(ConfigError, match="same options"):
        metric.merge(NextlocAccumulator())
