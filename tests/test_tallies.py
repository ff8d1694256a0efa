"""The generation metrics' tallies in bounded memory: rows beyond the budget spilled to sorted
runs on disk and read back a block of keys at a time, the same values as plain Python's for any
budget, chunking and row order, whole through pickles, nothing left on disk."""

from __future__ import annotations

import gc
import json
import pickle
import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from mobeval.kernels.auc import score_keys
from mobeval.kernels.tallies import collapse, key_values, matched, upto
from mobeval.metrics import tallies
from mobeval.metrics.generation import TRAJGDM, GenerationConvention
from mobeval.metrics.generation_counts import (
    GenerationCounts,
    generation_counts,
    generation_divergence,
    generation_ratio,
    mobilitygpt_metrics,
)
from mobeval.metrics.tallies import Tally, aligned_blocks
from tests.conftest import GOLDEN


@pytest.fixture
def small_budget(monkeypatch, tmp_path):
    """Tallies of at most 16 rows in memory, their runs in ``tmp_path`` (returned)."""
    monkeypatch.setattr(tallies, "TALLY_ROWS", 16)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def _runs_on_disk(folder: Path) -> list[Path]:
    return sorted(folder.glob("mobeval-tally-*/run-*.bin"))


def test_collapse_cut_and_match_are_plain_pythons():
    rng = np.random.default_rng(3)
    rows = np.column_stack([rng.integers(-3, 3, (500, 2)), rng.integers(0, 9, (500, 2))])
    table = collapse(rows, 2)
    sums = Counter()
    for a, b, n, d in rows.tolist():
        sums[a, b] += 1j * d + n
    assert [(a, b) for a, b, _, _ in table.tolist()] == sorted(sums)
    assert [(n, d) for _, _, n, d in table.tolist()] == [
        (int(sums[k].real), int(sums[k].imag)) for k in sorted(sums)
    ]
    for key in [(-4, 0), (0, -1), (0, 0), (2, 2), (3, 0)]:
        assert upto(table, 2, np.array(key)) == sum(k <= key for k in sorted(sums))
    other = collapse(np.column_stack([rng.integers(-3, 3, (9, 2)), np.ones((9, 2))]), 2)
    theirs = {tuple(k) for k in other[:, :2].tolist()}
    assert matched(table, other, 2).tolist() == [tuple(k) in theirs for k in table[:, :2].tolist()]
    values = np.array([-2.5, -0.0, 0.0, 1e-300, 3.25, np.inf])
    keys = score_keys(values)
    assert (np.diff(keys) >= 0).all() and key_values(keys).tolist() == (values + 0.0).tolist()


def test_a_tally_spills_beyond_its_budget_and_reads_back_plain_pythons_counts(small_budget):
    """2,000 one-row chunks fold into a tally that never holds more than its budget (16 rows)
    and a chunk, the rest in sorted runs on disk; read back a block of keys at a time, the rows
    are plain Python's counts, whole after a pickle; the runs go with the tally."""
    rng = np.random.default_rng(7)
    keys = rng.integers(0, 300, (2000, 2))
    tally = Tally(2)
    for a, b in keys:
        tally.add(Tally.of(np.array([a]), np.array([b])))
        assert tally.rows_in_memory <= 16 + 1
    assert len(tally.runs) > 10 and len(_runs_on_disk(small_budget)) == len(tally.runs)
    want = sorted(Counter(map(tuple, keys.tolist())).items())
    got = [((a, b), n) for a, b, n, drawn in tally.whole().tolist() if n == drawn]
    assert got == want
    blocks = list(aligned_blocks([tally]))
    assert len(blocks) > 1 and max(len(block) for (block,) in blocks) <= 16
    copy = pickle.loads(pickle.dumps(tally))
    assert copy.runs == [] and copy.whole().tolist() == tally.whole().tolist()
    del tally, blocks
    gc.collect()
    assert _runs_on_disk(small_budget) == [] and not list(small_budget.glob("mobeval-tally-*"))


def _folded(trajectories, names, chunk: int) -> GenerationCounts:
    total = GenerationCounts()
    for start in range(0, len(trajectories), chunk):
        part = trajectories[start : start + chunk]
        ids = np.asarray([v for t in part for v in t], dtype=np.int64)
        offsets = np.cumsum([0] + [len(t) for t in part], dtype=np.int64)
        x = ids.astype(float)
        total.merge(generation_counts(offsets, x, x * 0, ids, GenerationConvention(), names))
    return total


@pytest.mark.parametrize("chunk", [1, 7, 500])
def test_ratios_of_spilled_hash_tallies_are_plain_pythons(small_budget, chunk):
    """The trajectories' hashes spilled (16 rows in memory) from chunks of 1, 7 and 500
    trajectories: the ratios are plain Python's counts of the sequences."""
    rng = np.random.default_rng(5)
    generated = [tuple(rng.integers(0, 6, 3)) for _ in range(2000)]
    real = [tuple(rng.integers(0, 6, 3)) for _ in range(500)]
    names = ("duplicate_ratio", "memorised")
    folds = [_folded(t, names, chunk) for t in (real, generated)]
    assert all(f.tallies["trajectory"].runs for f in folds)
    seen, known = Counter(generated), set(real)
    duplicates = sum(n for n in seen.values() if n > 1) / len(generated)
    copies = sum(n for t, n in seen.items() if t in known) / len(generated)
    assert generation_ratio(*folds, "duplicate_ratio") == duplicates
    assert generation_ratio(*folds, "memorised") == copies


@pytest.mark.parametrize("case", ["tdrive", "geolife"])
def test_trajgdms_values_hold_with_its_tallies_spilled(small_budget, monkeypatch, case):
    """TrajGDM's golden values (tests/golden/trajgdm: its own code's) from chunks of 37
    trajectories folded into tallies of 16 rows in memory: the ids' histograms binned a block
    at a time from the runs, the duplicates counted over them."""
    spilled = _counting_spills(monkeypatch)
    expected = json.loads((GOLDEN / "trajgdm" / "expected.json").read_text())[case]
    data = json.loads((GOLDEN / "trajgdm" / f"{case}.json").read_text())
    maxi = expected["maxi"]
    convention = replace(TRAJGDM, locations=expected["num_loc"])
    names = ("jump", "location", "origin_location", "destination_location")
    folds = []
    for side in (data["real"], data["generated"]):
        total = GenerationCounts()
        for start in range(0, len(side), 37):
            part = side[start : start + 37]
            ids = np.asarray([v for t in part for v in t], dtype=np.int64)
            offsets = np.cumsum([0] + [len(t) for t in part], dtype=np.int64)
            x, y = (ids // maxi).astype(float), (ids % maxi).astype(float)
            asked = (*names, "duplicate_ratio")
            total.merge(generation_counts(offsets, x, y, ids, convention, asked))
        folds.append(total)
    got = {n: generation_divergence(*folds, convention, n, "jsdist") for n in names}
    got["duplicate_ratio"] = generation_ratio(*folds, "duplicate_ratio")
    assert len(spilled) > 10 and got == {n: expected[n] for n in got}  # bit for bit
    del folds, total
    gc.collect()
    assert _runs_on_disk(small_budget) == []  # let go with their tallies


def test_mobilitygpts_values_hold_with_its_tallies_spilled(small_budget, monkeypatch):
    """MobilityGPT's golden values (tests/golden/mobilitygpt) with tallies of 16 rows in
    memory: its bins span both sides' least and largest trip length, read from the runs' ends,
    and the trip lengths are binned a block at a time."""
    spilled = _counting_spills(monkeypatch)
    expected = json.loads((GOLDEN / "mobilitygpt" / "expected.json").read_text())
    data = json.loads((GOLDEN / "mobilitygpt" / "inputs.json").read_text())
    got = mobilitygpt_metrics(data["test"], data["synthetic"], data["geo_id"], data["length"])
    assert spilled and all(got[name] == expected[name] for name in got)  # bit for bit


def _counting_spills(monkeypatch) -> list:
    """A list that gets one entry per run a tally spills."""
    spilled, write = [], tallies.write_whole
    monkeypatch.setattr(tallies, "write_whole", lambda *a: spilled.append(1) or write(*a))
    return spilled


def test_an_unpaired_run_with_spilled_tallies_gives_the_same_summary_and_leaves_nothing(
    small_budget, monkeypatch
):
    """``evaluate_trajectory(pairing="none")`` on shuffled rows in chunks of 37 rows with 16-row
    tallies: the summary of the default budget's run in file order, the ratios plain Python's,
    and no run left on disk."""
    from mobeval import evaluate_trajectory
    from tests.test_generation import _grid_city

    (gen, ref), gen_days, real_days = _grid_city(np.random.default_rng(17), n_uids=60)
    names = ["location", "origin_location", "length", "duplicate_ratio", "memorised"]
    options = {"pairing": "none", "metrics": names, "chunk_rows": 37, "progress": False}
    spilled = _counting_spills(monkeypatch)
    shuffled = [f.sample(fraction=1.0, shuffle=True, seed=2) for f in (ref, gen)]
    result = evaluate_trajectory(*shuffled, convention="trajgdm", **options)
    small = dict(result.summary.select("metric", "value").iter_rows())
    monkeypatch.setattr(tallies, "TALLY_ROWS", 1 << 18)
    result = evaluate_trajectory(ref, gen, convention="trajgdm", **options)
    assert spilled and small == dict(result.summary.select("metric", "value").iter_rows())
    drawn = Counter(tuple(map(tuple, p)) for p in gen_days.values())
    real = {tuple(map(tuple, p)) for p in real_days.values()}
    assert small["duplicate_ratio"] == sum(n for n in drawn.values() if n > 1) / len(gen_days)
    assert small["memorised"] == sum(n for t, n in drawn.items() if t in real) / len(gen_days)
    del result
    gc.collect()
    assert not list(small_budget.glob("mobeval-tally-*"))
