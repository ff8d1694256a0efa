"""Cold start: a run compiles each kernel once, and only the kernels its options use.

The kernels' Python wrappers hand Numba one argument type per kernel (read-only C-contiguous
int64 / float64 arrays, plain ints), so inputs that differ in dtype, layout or writability do not
each compile a specialisation. Checked in a fresh process on an empty ``NUMBA_CACHE_DIR``, where
a dispatcher's ``signatures`` are exactly what that process compiled. The batch kernels run on
blocks of units on threads (``kernels/blocks.py``): their values do not depend on the blocks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from mobeval.kernels import blocks
from mobeval.kernels.geobleu import geobleu_days, geobleu_seq
from mobeval.kernels.ranks import ID_ASC, target_rank_bounds


def _signatures(tmp_path, script: str) -> dict[str, int]:
    """Run ``script`` (which fills ``used``: name -> dispatcher) in a fresh process on an empty
    cache; the number of signatures each dispatcher compiled."""
    code = textwrap.dedent(script) + textwrap.dedent(
        """
        import json
        print(json.dumps({name: len(d.signatures) for name, d in used.items()}))
        """
    )
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def test_inputs_of_any_dtype_layout_or_writability_compile_one_specialisation(tmp_path):
    counts = _signatures(
        tmp_path,
        """
        import numpy as np
        from mobeval.kernels import exact_sum, geobleu, ranks, topk

        offsets = np.array([0, 3, 6])
        locations = np.array([4, 2, 9, 2, 5, 2])  # the second list holds 2 twice
        preference = np.array([0.5, 0.9, 0.1, 0.3, 0.3, 0.2])
        targets = np.array([2, 7])
        frozen = [a.copy() for a in (offsets, locations, preference, targets)]
        for a in frozen:
            a.flags.writeable = False
        strided = [np.repeat(a, 2)[::2] for a in (offsets, locations, preference, targets)]
        variants = [
            (offsets, locations, preference, targets),
            frozen,
            (offsets.astype(np.int32), locations.astype(np.uint64), preference.astype(np.float32),
             targets.astype(np.uint32)),
            strided,
        ]
        for offs, locs, prefs, tgts in variants:
            lo, hi, _ = ranks.target_rank_bounds(offs, locs, prefs, tgts, 0, 2, True)
            topk.single_target_metrics(lo, hi, [topk.ACC, topk.NDCG], [1, 0])
            topk.single_target_metrics(lo[::-1], hi.astype(np.float32), np.array([0, 0]), [5, 1])
            ranks.drop_repeated(offs, locs, prefs, True, 2)
        sums = exact_sum.ExactColumnSums(["a", "b"])
        sums.add(np.ones((4, 2)))
        sums.add(np.ones((2, 4)).T)  # Fortran order
        sums.add(np.ones((3, 2), dtype=np.float32))
        sums.add(np.ones((2 * exact_sum.BLOCK_ROWS + 1, 2)))  # blocks on threads, then merged
        sums.merge(sums)
        days = np.array([0, 2, 4])
        x = np.array([1, 2, 3, 4])
        for d, xs in ((days, x), (days.astype(np.int32), x.astype(np.uint16)), (days, x[::-1])):
            values = geobleu.geobleu_days(d, xs, xs, xs, xs, 3, 0.5, False)
            geobleu.dtw_days(d, xs, xs, xs, xs, 2, False)
            geobleu.mean_per_unit(np.array([0, 2]), values)
            geobleu.mean_per_unit(np.array([0, 2], dtype=np.int32), values.copy())
        used = {
            "ranks._rank_units": ranks._rank_units,
            "ranks._dict_units": ranks._dict_units,
            "topk._single_target_units": topk._single_target_units,
            "exact_sum._fold_blocks": exact_sum._fold_blocks,
            "exact_sum._merge_bins": exact_sum._merge_bins,
            "geobleu._geobleu_units": geobleu._geobleu_units,
            "geobleu._dtw_units": geobleu._dtw_units,
            "geobleu._mean_per_unit": geobleu._mean_per_unit,
        }
        """,
    )
    assert counts == dict.fromkeys(counts, 1)


def test_a_greedy_geobleu_run_does_not_compile_the_hungarian_algorithm(tmp_path):
    counts = _signatures(
        tmp_path,
        """
        import numpy as np
        from mobeval.kernels import geobleu

        days = np.array([0, 3, 6])
        x = np.array([1, 2, 3, 3, 2, 1])
        geobleu.geobleu_days(days, x, x, x[::-1], x, 3, 0.5, False)
        used = {"greedy": geobleu._greedy_sum, "optimal": geobleu._optimal_sum}
        """,
    )
    assert counts == {"greedy": 1, "optimal": 0}


@pytest.mark.parametrize("optimal", [False, True])
def test_geobleu_days_equal_the_single_pair_kernel_day_by_day(optimal):
    rng = np.random.default_rng(7)
    lengths = rng.integers(1, 12, 300)
    days = np.concatenate([[0], np.cumsum(lengths)])
    gx, gy, rx, ry = (rng.integers(1, 30, days[-1]) for _ in range(4))
    values = geobleu_days(days, gx, gy, rx, ry, 5, 0.5, optimal)
    for i in range(len(lengths)):
        day = slice(days[i], days[i + 1])
        one = geobleu_seq(gx[day], gy[day], rx[day], ry[day], 5, 0.5, optimal)
        assert values[i] == one or (np.isnan(values[i]) and np.isnan(one))


def test_ranks_do_not_depend_on_the_number_of_blocks():
    rng = np.random.default_rng(3)
    lengths = rng.integers(0, 30, 5000)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    locations = rng.integers(0, 40, offsets[-1])
    preference = np.round(rng.random(offsets[-1]), 1)  # many ties
    targets = rng.integers(0, 40, len(lengths))
    results = [
        target_rank_bounds(offsets, locations, preference, targets, ID_ASC, n, True)
        for n in (1, 3, 64, 5000)
    ]
    for lo, hi, duplicate in results[1:]:
        assert np.array_equal(lo, results[0][0]) and np.array_equal(hi, results[0][1])
        assert duplicate == results[0][2]


def test_run_blocks_covers_every_unit_once_and_raises_a_kernels_error(monkeypatch):
    seen = []

    def kernel(out, first, last):
        seen.append((first, last))
        out[first:last] += 1

    monkeypatch.setattr(blocks, "thread_count", lambda: 3)
    out = np.zeros(1000, dtype=np.int64)
    blocks.run_blocks(kernel, 1000, out, grain=10)
    assert out.tolist() == [1] * 1000 and len(seen) == 12  # 4 blocks per thread
    out[:] = 0
    blocks.run_blocks(kernel, 1000, out, grain=400)  # no block under 400 units: 3 blocks
    assert out.tolist() == [1] * 1000 and len(seen) == 15

    def failing(first, last):
        raise ValueError(f"unit {first}")

    with pytest.raises(ValueError, match="unit"):
        blocks.run_blocks(failing, 100, grain=1)


def test_a_recs_run_compiles_the_gain_once_for_every_gain_mode(tmp_path):
    counts = _signatures(
        tmp_path,
        """
        import numpy as np
        from mobeval.kernels import recs

        off = np.array([0, 2])
        items = np.array([3, 5])
        ratings = np.array([4.0, 1.0])
        for mode in (recs.GAIN_BINARY, recs.GAIN_LINEAR, recs.GAIN_EXPONENTIAL, recs.GAIN_RELISON):
            rules = recs.StatsRules(3.0, False, mode, 2.0, True, False, recs.DUP_EACH, True, True,
                                    recs.AP_RELEVANT, True).checked()
            recs.recs_user_stats(off, items, ratings, off, items, ratings, np.array([1, recs.FULL]),
                                 np.log2(np.arange(2, 4)), rules)
        used = {"gain": recs._gain, "user_stats": recs._user_stats}
        """,
    )
    assert counts == {"gain": 1, "user_stats": 1}
