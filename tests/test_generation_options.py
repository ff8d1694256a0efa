"""The generation conventions a user sets over the preset's (--jump-max, --jump-bins,
--near-tolerance, --generation-bins, --generation-binning, --id-range) on every face, against
plain-Python oracles, and their refusals naming the option."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy.spatial.distance import jensenshannon

from tests.test_population_links import face_summary

#: Two small grid populations (uid -> the (x, y) cells of its day), unequal sizes.
REAL = {
    0: [(1, 1), (1, 4), (5, 4), (5, 4)],
    1: [(10, 10), (11, 10), (11, 12), (20, 12)],
    2: [(3, 3), (4, 3), (4, 4), (4, 9)],
}
GENERATED = {
    7: [(2, 1), (1, 5), (5, 4), (6, 4)],
    8: [(10, 10), (11, 10), (11, 12), (20, 12)],
    9: [(3, 3), (3, 3), (9, 3), (9, 4)],
    10: [(40, 40), (40, 41), (42, 43), (44, 43)],
}


def _write(path, population) -> str:
    rows = [(u, 0, t, x, y) for u, cells in population.items() for t, (x, y) in enumerate(cells)]
    pl.DataFrame(rows, schema=["uid", "d", "t", "x", "y"], orient="row").write_csv(path)
    return str(path)


def _jump_histogram(population, top: float, bins: int) -> list[int]:
    """Every jump's bin of ``bins`` equal bins over [0, top], a longer jump in the last."""
    counts = [0] * bins
    for cells in population.values():
        for (x1, y1), (x2, y2) in zip(cells, cells[1:], strict=False):
            counts[min(int(math.hypot(x2 - x1, y2 - y1) / (top / bins)), bins - 1)] += 1
    return counts


def _near_share(tolerance: float) -> float:
    """The share of generated trajectories whose cells, each coordinate floored to a grid of
    side ``tolerance``, are a real trajectory's."""

    def snapped(cells):
        return tuple((math.floor(x / tolerance), math.floor(y / tolerance)) for x, y in cells)

    real = {snapped(cells) for cells in REAL.values()}
    return sum(snapped(cells) in real for cells in GENERATED.values()) / len(GENERATED)


@pytest.mark.parametrize("face", ["cli", "job", "api"])
def test_jump_range_and_near_tolerance_are_options(face, tmp_path, capsys):
    """``jump_max`` 6 over ``jump_bins`` 3 and ``near_tolerance`` 5 (the defaults: 282 cells
    in 282 bins, 2) give plain Python's JS distance of the jump histograms and share of near
    copies, on the command line, in a job file and in Python."""
    real, generated = _write(tmp_path / "real.csv", REAL), _write(tmp_path / "gen.csv", GENERATED)
    options = {"metrics": ["jump", "memorised_near"], "divergence": "jsdist"}
    options |= {"jump_max": 6, "jump_bins": 3, "near_tolerance": 5}
    got = face_summary(face, real, generated, options, tmp_path, capsys)
    histograms = [_jump_histogram(p, 6, 3) for p in (REAL, GENERATED)]
    assert got["jsdist_jump"] == pytest.approx(jensenshannon(*histograms), rel=1e-12)
    assert got["memorised_near"] == _near_share(5) == 0.5
    assert _near_share(2) != 0.5  # the default tolerance gives another share


@pytest.mark.parametrize("face", ["cli", "api"])
def test_generation_binning_bins_and_id_range_are_options(face, tmp_path, capsys):
    """``generation_binning`` range over ``id_range`` R in ``generation_bins`` B: the location
    ids (x - 1) * 200 + (y - 1) in B equal bins over [0, R] (TrajGDM's np.histogram), the
    JS distance plain Python's."""
    real, generated = _write(tmp_path / "real.csv", REAL), _write(tmp_path / "gen.csv", GENERATED)
    options = {"metrics": ["location"], "divergence": "jsdist", "generation_binning": "range"}
    options |= {"generation_bins": 4, "id_range": 8000}
    got = face_summary(face, real, generated, options, tmp_path, capsys)

    def histogram(population):
        ids = [(x - 1) * 200 + (y - 1) for cells in population.values() for x, y in cells]
        return np.histogram(ids, bins=4, range=(0, 8000))[0]

    want = jensenshannon(histogram(REAL), histogram(GENERATED))
    assert got["jsdist_location"] == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--jump-bins", "0", "--jump-bins: must be an integer >= 1, got 0"),
        ("--near-tolerance", "-1", "--near-tolerance: must be a finite number > 0, got -1.0"),
        ("--id-range", "0", "--id-range: must be an integer >= 1, got 0"),
        ("--generation-bins", "0", "--generation-bins: must be an integer >= 1, got 0"),
    ],
)
def test_a_wrong_generation_option_is_named_as_given(flag, value, message, tmp_path, capsys):
    """A wrong value exits 2 naming the flag (not the convention's field it sets)."""
    from mobeval.cli import main

    real, generated = _write(tmp_path / "real.csv", REAL), _write(tmp_path / "gen.csv", GENERATED)
    argv = ["trajectory", "--reference", real, "--generated", generated, "--pairing", "none"]
    assert main([*argv, "--metrics", "jump,location", flag, value]) == 2
    assert message in capsys.readouterr().err
