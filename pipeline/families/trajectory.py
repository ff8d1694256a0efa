"""The trajectory family: GEO-BLEU and DTW per uid and day, and population metrics of real
and generated trajectories, paired or not."""

from __future__ import annotations

from mobeval.families.family import Family
from mobeval.families.shared import (
    PRESET_HELP,
    columns_option,
    error_unless_option,
    metrics_option,
    population_bootstrap_options,
)
from mobeval.metrics import DIVERGENCES
from mobeval.metrics import trajectory as _trajectory
from mobeval.option_types import FROM_PRESET, Flag, Option
from mobeval.population_options import GENERATION_OPTIONS, POPULATION_OPTIONS


def _trajectory_convention(values: dict):
    """The convention the trajectory options resolve to, checked against the metrics asked for
    (:func:`mobeval.tasks.trajectory_inputs.checked_convention`, imported when asked)."""
    from mobeval.tasks.trajectory_inputs import checked_convention

    return checked_convention(**{n: values[n] for n in TRAJECTORY.names})


TRAJECTORY = Family(
    "trajectory",
    "trajectory scoring",
    "reference",
    "generated",
    (
        metrics_option(
            ("geobleu", "dtw"),
            "geobleu, dtw and population metrics (docs/trajectory.md): distance, radius, "
            "duration, dailyloc, grank, irank (MoveSim's), density, trip, length (DiffTraj's), "
            "jump, location, origin_location, destination_location, duplicate_ratio (TrajGDM's), "
            "od (MobilityGPT's), memorised, memorised_near",
        ),
        Option(
            "convention",
            "string",
            "humob2025",
            PRESET_HELP,
            lambda: sorted(_trajectory.TRAJECTORY_PRESETS),
            python="convention",
        ),
        Option(
            "matching",
            "string",
            None,
            "n-gram matching (greedy: the reference's)",
            _trajectory.MATCHINGS,
            preset=True,
        ),
        Option(
            "exp",
            "string",
            None,
            "GEO-BLEU's exp/log: libm (default, any CPU) or numpy (NumPy's on this machine, "
            "as the reference computes them: differs on AVX-512 CPUs)",
            _trajectory.EXPS,
            preset=True,
        ),
        Option(
            "divergence",
            "string",
            "jsd",
            "between the real and generated distributions: jsd, jsdist, kl or emd",
            DIVERGENCES,
        ),
        Option(
            "max_distance",
            "number",
            None,
            "upper edge of the distance histogram, in cells (MoveSim's max_distance)",
            preset=True,
            flag=Flag("finite", FROM_PRESET),
        ),
        Option(
            "unit",
            "string",
            None,
            "distances in grid cells or metres (500 m cells)",
            _trajectory.UNITS,
            preset=True,
        ),
        Option(
            "uid_shares",
            "cutoffs",
            (),
            "also each divergence over nested subsets of the generated uids, in percent of "
            "them (e.g. 25,50): how the value moves with the number of generated uids",
            flag=Flag("ints"),
            defines=False,
        ),
        Option(
            "per_day_divergences",
            "boolean",
            False,
            "also each divergence per day d (the real and generated days d): summary rows "
            "<divergence>_<distribution>@d=<d>",
            flag=Flag(switch="--per-day-divergences", on=True),
            defines=False,
        ),
        *population_bootstrap_options(
            "the divergences", "the generated uids (the real ones fixed)"
        ),
        *POPULATION_OPTIONS,
        *GENERATION_OPTIONS,
        error_unless_option(
            "on_mismatch",
            "skip (and count) uids whose (d, t) steps differ, not fail",
            lambda: _trajectory.ON_MISMATCH,
            "--skip-mismatched",
            "skip",
            defines=False,
        ),
        error_unless_option(
            "out_of_grid",
            "score x/y outside 1..200 (e.g. 999) as the reference does",
            lambda: _trajectory.OUT_OF_GRID,
            "--score-out-of-grid",
            "score",
        ),
        columns_option(
            _trajectory.COLUMNS, ("reference", "generated"), "generated.uid=user", key=False
        ),
    ),
    lambda: _trajectory.TRAJECTORY_PRESETS,
    _trajectory_convention,
    _trajectory.PRESET_NOTES,
    ("uids", "uid_days", "steps", "uids_skipped", "rows_out_of_grid", *_trajectory.REAL_COUNTS),
    {"truth": _trajectory.COLUMNS, "pred": _trajectory.COLUMNS},
    units="uids",
)
