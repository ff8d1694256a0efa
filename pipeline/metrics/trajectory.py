"""GEO-BLEU and DTW conventions, and the single-pair / single-uid Python API.

The reference is yahoojapan/geobleu (commit d9efb0f, the GIS Cup 2025 evaluation); the exact
definitions and every numerical detail are in :mod:`pipeline.kernels.geobleu`. In short, for a
generated day ``g`` and a reference day ``r`` (grid-cell coordinates)::

    GEO-BLEU = BP * (p_1 * ... * p_N) ** (1/N),   p_n = greedy-matched n-gram proximity / (Lg-n+1),
               n-gram proximity = prod_k exp(-beta * |g[i+k] - r[j+k]|),  N = min(max_n, Lg, Lr)
    DTW      = min over warping paths of sum |g[i] - r[j]| / scale    (km with scale 2)

and a uid's value is ``np.mean`` over its days (ascending d; every day counts equally).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from pipeline.errors import ConfigError
from pipeline.kernels.geobleu import dtw_days, dtw_seq, geobleu_days, geobleu_seq, mean_per_unit

Matching = Literal["greedy", "optimal"]


@dataclass(frozen=True)
class TrajectoryConvention:
    """How GEO-BLEU and DTW are computed.

    max_n: largest n-gram order N (GIS Cup 2025: 5; HuMob 2023/2024: 3).
    beta: proximity decay per grid cell, prox = exp(-beta * distance) (0.5: e^-1 at 1 km).
    dtw_scale: DTW distance divisor (2.0 turns 500 m cells into km).
    matching: "greedy" (the reference) or "optimal" (maximum-weight assignment; not the
        reference metric, it measures what greedy matching loses).
    dtw_free_start: True reproduces the pre-2025-05-28 reference DTW, whose first matrix row
        was all zeros (the warping path could start anywhere along the reference).
    """

    max_n: int = 5
    beta: float = 0.5
    dtw_scale: float = 2.0
    matching: Matching = "greedy"
    dtw_free_start: bool = False

    def __post_init__(self) -> None:
        if int(self.max_n) != self.max_n or self.max_n < 1:
            raise ValueError(f"max_n must be a positive integer, got {self.max_n!r}")
        if not np.isfinite(self.beta) or self.beta < 0:
            raise ValueError(f"beta must be finite and >= 0, got {self.beta!r}")
        if not np.isfinite(self.dtw_scale) or self.dtw_scale <= 0:
            raise ValueError(f"dtw_scale must be finite and > 0, got {self.dtw_scale!r}")
        if self.matching not in ("greedy", "optimal"):
            raise ValueError(f"matching must be 'greedy' or 'optimal', got {self.matching!r}")


#: Named conventions. "humob2025" (GIS Cup 2025, reference commit 3afb63c and later) is the
#: default. "humob2024" is the HuMob 2023/2024 setting: N = 3 and the old DTW whose first row
#: was zero. (The old p_n denominator, the number of matched pairs, only differs for unequal
#: lengths, which per-uid scoring never has.)
TRAJECTORY_PRESETS: dict[str, TrajectoryConvention] = {
    "humob2025": TrajectoryConvention(),
    "humob2024": TrajectoryConvention(max_n=3, dtw_free_start=True),
}
DEFAULT_PRESET = "humob2025"


def resolve(convention: TrajectoryConvention | str | None) -> TrajectoryConvention:
    """A convention from a preset name (None: the default preset) or as given."""
    if convention is None:
        return TRAJECTORY_PRESETS[DEFAULT_PRESET]
    if isinstance(convention, str):
        if convention not in TRAJECTORY_PRESETS:
            raise ConfigError(
                f"unknown trajectory convention {convention!r}; "
                f"known: {', '.join(sorted(TRAJECTORY_PRESETS))}"
            )
        return TRAJECTORY_PRESETS[convention]
    return convention


def _xy(points: object, side: str) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) int64 arrays from a sequence of (x, y) pairs; integral grid cells only."""
    arr = np.asarray(points, dtype=np.float64)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"the {side} sequence must be a sequence of (x, y) pairs")
    if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
        raise ValueError(f"the {side} coordinates must be integer grid cells")
    ints = arr.astype(np.int64)
    return np.ascontiguousarray(ints[:, 0]), np.ascontiguousarray(ints[:, 1])


def geobleu(
    generated: Sequence[Sequence[int]],
    reference: Sequence[Sequence[int]],
    *,
    max_n: int = 5,
    beta: float = 0.5,
    matching: Matching = "greedy",
) -> float:
    """GEO-BLEU of one pair of (x, y) sequences, as the reference's ``calc_geobleu_orig``.

    Lengths may differ: N = min(max_n, Lg, Lr), p_n divides by Lg - n + 1, and the brevity
    penalty is exp(1 - Lr/Lg) when Lg <= Lr. An empty reference gives NaN (as the reference);
    an empty generated sequence raises ValueError (the reference divides by zero). Note that
    ``calc_geobleu_orig`` defaults to max_n=3; we default to the GIS Cup 2025 value 5.
    """
    convention = TrajectoryConvention(max_n=max_n, beta=beta, matching=matching)
    gx, gy = _xy(generated, "generated")
    rx, ry = _xy(reference, "reference")
    if gx.size == 0:
        raise ValueError("The length of the generated trajectory is 0: GEO-BLEU is undefined.")
    return float(
        geobleu_seq(gx, gy, rx, ry, convention.max_n, convention.beta, matching == "optimal")
    )


def dtw(
    generated: Sequence[Sequence[int]],
    reference: Sequence[Sequence[int]],
    *,
    scale: float = 2.0,
    free_start: bool = False,
) -> float:
    """DTW of one pair of (x, y) sequences, as ``calc_dtw_orig(.., scale_factor=scale)``.

    Not normalised by the path length; an empty side gives inf, both empty give 0.0.
    """
    convention = TrajectoryConvention(dtw_scale=scale, dtw_free_start=free_start)
    gx, gy = _xy(generated, "generated")
    rx, ry = _xy(reference, "reference")
    return float(dtw_seq(gx, gy, rx, ry, float(convention.dtw_scale), free_start))


def _uid_days(
    rows_gen: Sequence[Sequence[int]], rows_ref: Sequence[Sequence[int]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The reference's ``check_arguments`` + day split: (day_offsets, gen_x, gen_y, ref_x, ref_y).

    Checks, in the reference's order (ValueError on failure): both non-empty; equal lengths;
    one tuple length per side, the same on both sides, 4 (d,t,x,y) or 5 (uid,d,t,x,y; the uid
    is dropped, never compared); the same (d, t) at every position in input order. Then both are
    stable-sorted by (d, t) and split into days (ascending d).
    """
    for name, rows in (("generated", rows_gen), ("reference", rows_ref)):
        if len(rows) == 0:
            raise ValueError(f"The length of the {name} trajectory is 0.")
    if len(rows_gen) != len(rows_ref):
        raise ValueError(
            "The length doesn't match between the generated and reference trajectories "
            f"({len(rows_gen)} vs {len(rows_ref)} steps)."
        )
    widths = []
    for name, rows in (("generated", rows_gen), ("reference", rows_ref)):
        lengths = {len(row) for row in rows}
        if len(lengths) != 1:
            raise ValueError(
                f"The numbers of columns of the {name} trajectory are inconsistent: "
                f"{sorted(lengths)}"
            )
        widths.append(lengths.pop())
    if widths[0] != widths[1]:
        raise ValueError(
            "The numbers of columns are different between the generated and reference "
            f"trajectories ({widths[0]} vs {widths[1]})."
        )
    if widths[0] not in (4, 5):
        raise ValueError("The numbers of columns must be 4, (d, t, x, y), or 5, (uid, d, t, x, y).")
    arrays = []
    for name, rows in (("generated", rows_gen), ("reference", rows_ref)):
        arr = np.asarray([row[widths[0] - 4 :] for row in rows], dtype=np.float64)
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            raise ValueError(f"the {name} d, t, x, y values must be integers")
        arrays.append(arr.astype(np.int64))
    gen, ref = arrays
    differ = np.flatnonzero((gen[:, 0] != ref[:, 0]) | (gen[:, 1] != ref[:, 1]))
    if differ.size:
        i = int(differ[0])
        raise ValueError(
            f"Day and time are not the same at step {i}, d={gen[i, 0]} and t={gen[i, 1]} for "
            f"generated while d={ref[i, 0]} and t={ref[i, 1]} for reference."
        )
    order = np.lexsort((gen[:, 1], gen[:, 0]))  # stable: duplicates keep their input order
    gen = gen[order]
    ref = ref[order]
    starts = np.flatnonzero(np.r_[True, gen[1:, 0] != gen[:-1, 0]])
    offsets = np.r_[starts, gen.shape[0]].astype(np.int64)
    columns = [np.ascontiguousarray(a[:, k]) for a in (gen, ref) for k in (2, 3)]
    return offsets, *columns


def geobleu_uid(
    rows_gen: Sequence[Sequence[int]],
    rows_ref: Sequence[Sequence[int]],
    *,
    max_n: int = 5,
    beta: float = 0.5,
    matching: Matching = "greedy",
) -> float:
    """GEO-BLEU of one uid from its (d,t,x,y) or (uid,d,t,x,y) rows (``calc_geobleu_single``).

    The mean over days (np.mean, bit for bit) of the day values; see :func:`_uid_days` for the
    argument checks. The caller's lists are not modified.
    """
    convention = TrajectoryConvention(max_n=max_n, beta=beta, matching=matching)
    offsets, gx, gy, rx, ry = _uid_days(rows_gen, rows_ref)
    days = geobleu_days(
        offsets, gx, gy, rx, ry, convention.max_n, convention.beta, matching == "optimal"
    )
    return float(mean_per_unit(np.array([0, days.size], dtype=np.int64), days)[0])


def dtw_uid(
    rows_gen: Sequence[Sequence[int]],
    rows_ref: Sequence[Sequence[int]],
    *,
    scale: float = 2.0,
    free_start: bool = False,
) -> float:
    """DTW of one uid (``calc_dtw_single``): np.mean over days of the day DTW values."""
    convention = TrajectoryConvention(dtw_scale=scale, dtw_free_start=free_start)
    offsets, gx, gy, rx, ry = _uid_days(rows_gen, rows_ref)
    days = dtw_days(offsets, gx, gy, rx, ry, float(convention.dtw_scale), free_start)
    return float(mean_per_unit(np.array([0, days.size], dtype=np.int64), days)[0])
