"""GEO-BLEU and DTW conventions, and the single-pair / single-uid Python API.

The reference is yahoojapan/geobleu (commit d9efb0f, the GIS Cup 2025 evaluation); the exact
definitions and every numerical detail are in :mod:`mobeval.kernels.geobleu`. In short, for a
generated day ``g`` and a reference day ``r`` (grid-cell coordinates)::

    GEO-BLEU = BP * (p_1 * ... * p_N) ** (1/N),   p_n = greedy-matched n-gram proximity / (Lg-n+1),
               n-gram proximity = prod_k exp(-beta * |g[i+k] - r[j+k]|),  N = min(max_n, Lg, Lr)
    DTW      = min over warping paths of sum |g[i] - r[j]| / scale    (km with scale 2)

and a uid's value is ``np.mean`` over its days (ascending d; every day counts equally).

Which exp (``TrajectoryConvention.exp``): the reference calls ``np.exp`` on one float64 scalar per
point pair (and scipy's gmean ``np.exp(np.mean(np.log(p)))``). NumPy evaluates that with the C
library's exp (libm) unless the CPU has AVX-512F, where it takes its own SIMD exp / log, which
differ from libm by 1 ulp on some arguments; the greedy matching can turn such an ulp into a
different matching. ``exp="libm"`` (default) computes with libm everywhere, so the values do not
depend on the CPU; ``exp="numpy"`` takes every exp and log from NumPy on the running machine,
called as the reference calls them, so that the values are the ones the reference prints there.

The functions that score import their kernels when called: the conventions, presets and
choices here load no Numba (``--help``, option checks; issue 25).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from mobeval.errors import ConfigError, OptionError
from mobeval.kernels.codes import MAX_ORDER, MAX_TABLE
from mobeval.metrics.generation import MOBILITYGPT, TRAJGDM, GenerationConvention

if TYPE_CHECKING:  # the functions that score import it: the convention's checks need no NumPy
    import numpy as np

Matching = Literal["greedy", "optimal"]
Exp = Literal["libm", "numpy"]
EXPS = ("libm", "numpy")
MATCHINGS = ("greedy", "optimal")
Unit = Literal["cells", "metres"]
UNITS = ("cells", "metres")
Bins = Literal["closed", "arange"]
BINS = ("closed", "arange")
#: The columns the family reads, in both inputs.
COLUMNS = ("uid", "d", "t", "x", "y")
#: uids whose (d, t) steps differ: an error, or skipped and counted.
ON_MISMATCH = ("error", "skip")
#: x / y outside the grid: an error, or scored as the reference does.
OUT_OF_GRID = ("error", "score")
#: How the two inputs are read: rows paired by (uid, d, t), or two populations of any sizes.
PAIRINGS = ("uid", "none")
#: Where a row's point lies (:mod:`mobeval.tasks.population_space`): grid cells x, y, or
#: location ids with a location table, road-link ids with a link table, GPS points.
SPACES = ("grid", "ids", "links", "gps")
#: How distances between points are measured: in the coordinates' plane (their units), or
#: along great circles of latitude / longitude points (metres).
DISTANCES = ("planar", "haversine")
#: The sphere of ``distance="haversine"``: the IUGG mean Earth radius R1, metres.
EARTH_RADIUS = 6_371_008.8
#: A road-link id the link table does not hold: an error, or a link of length 0 (MobilityGPT).
UNKNOWN_LINKS = ("error", "zero")
#: The summary's counts of the real population when unpaired (uids, uid_days and steps count
#: the generated one).
REAL_COUNTS = ("real_uids", "real_uid_days", "real_steps")
#: A HuMob grid cell's side in metres (200 x 200 cells of 500 m).
CELL_METRES = 500.0


@dataclass(frozen=True)
class TrajectoryConvention:
    """How GEO-BLEU and DTW are computed.

    max_n: largest n-gram order N (GIS Cup 2025: 5; HuMob 2023/2024: 3), at most 128.
    beta: proximity decay per grid cell, prox = exp(-beta * distance) (0.5: e^-1 at 1 km).
    dtw_scale: DTW distance divisor (2.0 turns 500 m cells into km).
    matching: "greedy" (the reference) or "optimal" (maximum-weight assignment; not the
        reference metric, it measures what greedy matching loses).
    dtw_free_start: True reproduces the pre-2025-05-28 reference DTW, whose first matrix row
        was all zeros (the warping path could start anywhere along the reference).
    exp: "libm" (the C library's exp and log: the reference's values wherever NumPy uses them,
        i.e. on CPUs without AVX-512F) or "numpy" (NumPy's np.exp / np.log on the running
        machine, called as the reference calls them: its values on this machine, whatever the
        CPU). See the module docstring.

    The population distributions (:mod:`mobeval.metrics.population`; MoveSim's values under
    the "movesim" preset):
    unit: "cells" (grid cells) or "metres" (cells of CELL_METRES m): distances and radii.
    max_distance: the distance histogram's upper edge D, in cells (radius: D too; MoveSim's
        squared radius: D^2).
    distance_bins: bins of the distance and radius histograms.
    squared: jumps and radii squared (MoveSim) or not.
    bins: "closed" (equal bins over [0, D], values beyond D in the last) or "arange" (MoveSim's
        np.arange edges, values at or beyond the last edge dropped).
    fractions: durations and distinct locations divided by the 48 slots of a day (MoveSim).
    last_stay: each day's last stay counted (MoveSim: False).
    rank_histogram: G-rank / I-rank compare histograms of the top-k shares (MoveSim) rather than
        the top-k counts rank by rank.
    top_k: locations ranked by G-rank and I-rank.
    density_cells: DiffTraj's density and trip grids have density_cells x density_cells cells
        over the 200 x 200 grid (DiffTraj: 16).
    guard: added to a histogram's sum before dividing by it (MoveSim: 1e-14).
    scipy_jsd: the JSD computed by ``scipy.stats.entropy`` call for call as MoveSim's
        ``get_js_divergence`` (its bits; MoveSim: True) rather than by the Numba kernel (the same
        formula, within a few ulps, and 5 to 250 times faster).
    full_days: points every day must hold (MoveSim: 48; 0: any).
    generation: how the generation metrics beyond MoveSim's bin and compare
        (:mod:`mobeval.metrics.generation`; TrajGDM's and MobilityGPT's under their presets).
    """

    max_n: int = 5
    beta: float = 0.5
    dtw_scale: float = 2.0
    matching: Matching = "greedy"
    dtw_free_start: bool = False
    exp: Exp = "libm"
    unit: Unit = "cells"
    max_distance: float = 282.0
    distance_bins: int = 282
    squared: bool = False
    bins: Bins = "closed"
    fractions: bool = False
    last_stay: bool = True
    rank_histogram: bool = False
    top_k: int = 100
    density_cells: int = 16
    guard: float = 0.0
    scipy_jsd: bool = False
    full_days: int = 0
    generation: GenerationConvention = GenerationConvention()

    @property
    def cell_size(self) -> float:
        """Coordinates are multiplied by this: 1 (cells) or CELL_METRES (metres)."""
        return CELL_METRES if self.unit == "metres" else 1.0

    def __post_init__(self) -> None:
        # OptionError: a ConfigError naming the option (exit 2), and a ValueError as before
        integral = _is_real(self.max_n) and float(self.max_n).is_integer()
        if not integral or not 1 <= self.max_n <= MAX_ORDER:
            raise OptionError(
                "max_n", self.max_n, f"must be an integer in 1..{MAX_ORDER}, got {self.max_n!r}"
            )
        if not _is_real(self.beta) or not math.isfinite(self.beta) or self.beta < 0:
            raise OptionError("beta", self.beta, f"must be finite and >= 0, got {self.beta!r}")
        if not _is_real(self.dtw_scale) or not math.isfinite(self.dtw_scale) or self.dtw_scale <= 0:
            raise OptionError(
                "dtw_scale", self.dtw_scale, f"must be finite and > 0, got {self.dtw_scale!r}"
            )
        if not isinstance(self.matching, str) or self.matching not in MATCHINGS:
            raise OptionError(
                "matching", self.matching, f"must be 'greedy' or 'optimal', got {self.matching!r}"
            )
        if not isinstance(self.exp, str) or self.exp not in EXPS:
            raise OptionError("exp", self.exp, f"must be 'libm' or 'numpy', got {self.exp!r}")
        if self.unit not in UNITS:
            raise OptionError("unit", self.unit, f"must be one of {UNITS}, got {self.unit!r}")
        if self.bins not in BINS:
            raise OptionError("bins", self.bins, f"must be one of {BINS}, got {self.bins!r}")
        if not _is_real(self.max_distance) or not math.isfinite(self.max_distance):
            raise OptionError("max_distance", self.max_distance, "must be a finite number > 0")
        if self.max_distance <= 0:
            raise OptionError("max_distance", self.max_distance, "must be a finite number > 0")


def _is_real(value: object) -> bool:
    """An int, a float, a NumPy integer or float (``numbers.Real``), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


#: Named conventions. "humob2025" (GIS Cup 2025, reference commit 3afb63c and later) is the
#: default. "humob2024" is the HuMob 2023/2024 setting: N = 3 and the old DTW whose first row
#: was zero. (The old p_n denominator, the number of matched pairs, only differs for unequal
#: lengths, which per-uid scoring never has.)
TRAJECTORY_PRESETS: dict[str, TrajectoryConvention] = {
    "humob2025": TrajectoryConvention(),
    "humob2024": TrajectoryConvention(max_n=3, dtw_free_start=True),
    "movesim": TrajectoryConvention(
        max_distance=282.0,
        distance_bins=10000,
        squared=True,
        bins="arange",
        fractions=True,
        last_stay=False,
        rank_histogram=True,
        guard=1e-14,
        scipy_jsd=True,
        full_days=48,
    ),
    "trajgdm": TrajectoryConvention(generation=TRAJGDM),
    "mobilitygpt": TrajectoryConvention(generation=MOBILITYGPT),
}
DEFAULT_PRESET = "humob2025"
#: What each preset is, for ``--help``.
PRESET_NOTES = {
    "humob2025": "GIS Cup 2025 (yahoojapan/geobleu d9efb0f): GEO-BLEU N = 5, DTW",
    "humob2024": "HuMob 2024: GEO-BLEU N = 3, the earlier DTW (free start)",
    "movesim": "MoveSim (FIBLAB 93e6837) distributions; GEO-BLEU/DTW as humob2025",
    "trajgdm": "TrajGDM (f3238de) distributions, duplicate ratio; GEO-BLEU/DTW as humob2025",
    "mobilitygpt": "MobilityGPT (2f3fd1e) distributions; GEO-BLEU/DTW as humob2025",
}


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


#: NumPy proximity tables already built, by beta (a table for a smaller span is a prefix).
_NUMPY_TABLES: dict[float, np.ndarray] = {}


def numpy_proximity_table(size: int, beta: float, *, exp_fn=None) -> np.ndarray:
    """exp(-beta * distance) for every squared distance k < ``size``, from NumPy's exp.

    Each entry is one call of ``exp_fn`` (default ``np.exp``) on one float64 scalar, the way the
    reference's ``calc_point_proximity`` calls it: ``np.exp(-beta * distance)`` with ``distance
    = np.sqrt(dx**2. + dy**2.) / 1.`` (the sqrt and the product are correctly rounded, so only
    the exp can differ between machines). Built once per beta and process (80,000 entries, about
    0.1 s, cover the 200 x 200 grid); an injected ``exp_fn`` (tests) is never cached.
    """
    import numpy as np

    if size > MAX_TABLE:
        raise ConfigError(
            f"exp='numpy' tabulates NumPy's exp over every squared distance up to the "
            f"coordinates' span: {size} entries here, more than {MAX_TABLE}; use exp='libm'"
        )
    cached = exp_fn is None
    table = _NUMPY_TABLES.get(beta, np.empty(0)) if cached else np.empty(0)
    if table.size < size:
        call = np.exp if exp_fn is None else exp_fn
        distance = np.sqrt(np.arange(table.size, size, dtype=np.float64)) / 1.0
        fresh = np.fromiter((call(arg) for arg in -beta * distance), np.float64, size - table.size)
        table = np.concatenate([table, fresh])
        if cached:
            _NUMPY_TABLES[beta] = table
    return table[:size]


def numpy_finish(pn, n, len_gen, len_ref, *, exp_fn=None, log_fn=None) -> np.ndarray:
    """BP * gmean(p_1..p_N) per row, with NumPy's exp and log as the reference computes it.

    ``pn`` / ``n``: the rows of :func:`mobeval.kernels.geobleu.geobleu_pn_days`. scipy's gmean
    is ``np.exp(np.mean(np.log(p)))`` (np.log(0) = -inf gives 0.0; N = 0 gives NaN) and
    ``BP = 1 if Lg > Lr else np.exp(1 - Lr / Lg)``. NumPy's exp / log loops are elementwise, so
    one call over all rows gives each row the bits of the reference's per-day calls (a test
    checks this on the running machine).
    """
    import numpy as np

    from mobeval.kernels.geobleu import mean_rows

    exp_fn = np.exp if exp_fn is None else exp_fn
    log_fn = np.log if log_fn is None else log_fn
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.ascontiguousarray(log_fn(pn), dtype=np.float64)
        means = mean_rows(logs, np.asarray(n, dtype=np.int64))
        gmean = np.asarray(exp_fn(means), dtype=np.float64)
        lg = np.asarray(len_gen, dtype=np.float64)
        lr = np.asarray(len_ref, dtype=np.float64)
        bp = np.where(lg > lr, 1.0, np.asarray(exp_fn(1.0 - lr / lg), dtype=np.float64))
    return bp * gmean


def geobleu_day_values(
    day_offsets, gen_x, gen_y, ref_x, ref_y, convention, *, exp_fn=None, log_fn=None
) -> np.ndarray:
    """GEO-BLEU of every uid-day (layout of :func:`mobeval.kernels.geobleu.geobleu_days`)
    under ``convention``, its ``exp`` included; ``exp_fn`` / ``log_fn`` replace NumPy's (tests)."""
    import numpy as np

    from mobeval.kernels.geobleu import (
        geobleu_days,
        geobleu_pn_days,
        proximity_table_size,
    )

    optimal = convention.matching == "optimal"
    if convention.exp == "libm":
        return geobleu_days(
            day_offsets, gen_x, gen_y, ref_x, ref_y, convention.max_n, convention.beta, optimal
        )
    size = int(proximity_table_size(gen_x, gen_y, ref_x, ref_y))
    table = numpy_proximity_table(size, convention.beta, exp_fn=exp_fn)
    pn, n = geobleu_pn_days(
        day_offsets, gen_x, gen_y, ref_x, ref_y, convention.max_n, optimal, table
    )
    lengths = np.diff(day_offsets)
    return numpy_finish(pn, n, lengths, lengths, exp_fn=exp_fn, log_fn=log_fn)


def _xy(points: object, side: str) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) int64 arrays from a sequence of (x, y) pairs; integral grid cells only."""
    import numpy as np

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
    exp: Exp = "libm",
) -> float:
    """GEO-BLEU of one pair of (x, y) sequences, as the reference's ``calc_geobleu_orig``.

    Lengths may differ: N = min(max_n, Lg, Lr), p_n divides by Lg - n + 1, and the brevity
    penalty is exp(1 - Lr/Lg) when Lg <= Lr. An empty reference gives NaN (as the reference);
    an empty generated sequence raises ValueError (the reference divides by zero). Note that
    ``calc_geobleu_orig`` defaults to max_n=3; we default to the GIS Cup 2025 value 5.
    ``exp="numpy"`` takes every exp and log from NumPy (see :class:`TrajectoryConvention`).
    """
    from mobeval.kernels.geobleu import (
        geobleu_pn_seq,
        geobleu_seq,
        proximity_table_size,
    )

    convention = TrajectoryConvention(max_n=max_n, beta=beta, matching=matching, exp=exp)
    gx, gy = _xy(generated, "generated")
    rx, ry = _xy(reference, "reference")
    if gx.size == 0:
        raise ValueError("The length of the generated trajectory is 0: GEO-BLEU is undefined.")
    optimal = matching == "optimal"
    if exp == "libm":
        return float(geobleu_seq(gx, gy, rx, ry, convention.max_n, convention.beta, optimal))
    size = int(proximity_table_size(gx, gy, rx, ry))
    table = numpy_proximity_table(size, convention.beta)
    pn, n = geobleu_pn_seq(gx, gy, rx, ry, convention.max_n, optimal, table)
    return float(numpy_finish(pn[None, :], [n], [gx.size], [rx.size])[0])


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
    from mobeval.kernels.geobleu import dtw_seq

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
    import numpy as np

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
    exp: Exp = "libm",
) -> float:
    """GEO-BLEU of one uid from its (d,t,x,y) or (uid,d,t,x,y) rows (``calc_geobleu_single``).

    The mean over days (np.mean, bit for bit) of the day values; see :func:`_uid_days` for the
    argument checks. The caller's lists are not modified.
    """
    import numpy as np

    from mobeval.kernels.geobleu import mean_per_unit

    convention = TrajectoryConvention(max_n=max_n, beta=beta, matching=matching, exp=exp)
    offsets, gx, gy, rx, ry = _uid_days(rows_gen, rows_ref)
    days = geobleu_day_values(offsets, gx, gy, rx, ry, convention)
    return float(mean_per_unit(np.array([0, days.size], dtype=np.int64), days)[0])


def dtw_uid(
    rows_gen: Sequence[Sequence[int]],
    rows_ref: Sequence[Sequence[int]],
    *,
    scale: float = 2.0,
    free_start: bool = False,
) -> float:
    """DTW of one uid (``calc_dtw_single``): np.mean over days of the day DTW values."""
    import numpy as np

    from mobeval.kernels.geobleu import dtw_days, mean_per_unit

    convention = TrajectoryConvention(dtw_scale=scale, dtw_free_start=free_start)
    offsets, gx, gy, rx, ry = _uid_days(rows_gen, rows_ref)
    days = dtw_days(offsets, gx, gy, rx, ry, float(convention.dtw_scale), free_start)
    return float(mean_per_unit(np.array([0, days.size], dtype=np.int64), days)[0])
