"""How the generation metrics beyond MoveSim's bin and compare (conventions as data, no NumPy).

The metrics (:mod:`mobeval.metrics.generation_counts` computes them) and their sources:

* TrajGDM (Chu et al., ICDE 2024; chuchen2017/TrajGDM f3238de ``utils/metrics.py``,
  ``Evaluation_metrics.js_traj``): the Jensen-Shannon *distance* (``jsdist``) of the
  ``jump`` lengths, the ``location`` ids of every point, the ``origin_location`` and
  ``destination_location`` ids (first and last points), and the ``duplicate_ratio``, the share
  of the generated trajectories whose whole sequence occurs more than once among them;
* MobilityGPT (Haydari et al., 2024; ucdrubinet/MobilityGPT 2f3fd1e ``evaluate.py``,
  ``TrajectoryEvaluator``): the JS distance of ``od`` (origins and destinations pooled:
  ``js_od``), ``location`` (every link: ``js_link``), ``trip_length`` (the sum of a
  trajectory's link lengths: ``js_length``), ``link_radius`` (``js_radius``) and ``gravity``
  (``js_gravity``), and ``connectivity``, the share of the generated trajectories along the link
  graph (:mod:`mobeval.metrics.generation_links`);
* DiffTraj / ControlTraj's Length: ``length``, the points per trajectory;
* memorisation: ``memorised``, the share of the generated trajectories that copy a real one
  point for point, and ``memorised_near``, within ``tolerance`` (every coordinate in the same
  cell of a grid of side ``tolerance``).

How each system bins (``binning``):

* ``"all"`` (mobeval's default, nothing dropped): ids and lengths one bin per value that either
  side holds; trip lengths and radii ``bins`` (gravity ``gravity_bins``) equal bins over
  [min, max] of both sides; jumps
  ``jump_bins`` equal bins over [0, ``jump_max``], a longer jump in the last;
* ``"range"`` (TrajGDM: ``np.histogram(v, bins, range=(0, R))``): ``bins`` equal bins over
  [0, R], R = ``locations`` for ids (TrajGDM's ``num_loc``: 100 bins of location ids), the
  largest value of both sides for lengths, ``jump_max`` for jumps (``jump_bins`` bins); values
  outside [0, R] dropped;
* ``"arange"`` (MobilityGPT's ``_arr_to_distribution``): edges ``np.arange(lo, hi, (hi - lo) /
  bins)`` with lo, hi the least and largest value of both sides (jumps: 0 and ``jump_max``,
  ``jump_bins``); values from the last edge on (the top bin) dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from mobeval.errors import OptionError

Binning = Literal["all", "range", "arange"]
BINNINGS = ("all", "range", "arange")
#: The HuMob grid's cells as TrajGDM's location ids: ``(x - 1) * 200 + (y - 1)``, ``maxi`` 200.
GRID_SIDE = 200
GRID_LOCATIONS = GRID_SIDE * GRID_SIDE


@dataclass(frozen=True)
class GenerationConvention:
    """How the generation metrics are computed (module docstring).

    binning: "all", "range" (TrajGDM) or "arange" (MobilityGPT).
    bins: bins of the id, length and trip-length histograms under "range" / "arange" (TrajGDM
        100, MobilityGPT 300) and of the trip lengths under "all".
    locations: the upper edge R of the location-id range under "range" (TrajGDM's num_loc).
    jump_max, jump_bins: the jump histogram's upper edge (grid cells) and bins.
    float32: jumps rounded to float32 (TrajGDM's torch tensors).
    density: each histogram divided by its bins' widths and its sum before the divergence
        (``np.histogram(density=True)``, TrajGDM; it changes only the last bits).
    distinct_links: a trip's length counts each link once (MobilityGPT's ``isin``) rather than
        at every point.
    tolerance: ``memorised_near``'s cell side, in coordinate units (> 0).
    scipy: the JS distance by ``scipy.spatial.distance.jensenshannon`` itself (the references'
        bits) rather than the Numba kernel (the same formula within a few ulps).
    gravity_bins: bins of the gravity histogram, under every binning (MobilityGPT: 100).
    """

    binning: Binning = "all"
    bins: int = 100
    locations: int = GRID_LOCATIONS
    jump_max: float = 282.0
    jump_bins: int = 282
    float32: bool = False
    density: bool = False
    distinct_links: bool = False
    tolerance: float = 2.0
    scipy: bool = False
    gravity_bins: int = 100

    def __post_init__(self) -> None:
        if self.binning not in BINNINGS:
            raise OptionError("binning", self.binning, f"must be one of {BINNINGS}")
        for name in ("bins", "locations", "jump_bins", "gravity_bins"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise OptionError(name, value, f"must be an integer >= 1, got {value!r}")
        for name in ("jump_max", "tolerance"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
                raise OptionError(name, value, f"must be a finite number > 0, got {value!r}")


#: The fields of :class:`GenerationConvention` that each preset sets and a user may override,
#: by the option that sets them (:data:`mobeval.population_options.GENERATION_OPTIONS`).
GENERATION_FIELDS = {
    "jump_max": "jump_max",
    "jump_bins": "jump_bins",
    "near_tolerance": "tolerance",
    "generation_bins": "bins",
    "generation_binning": "binning",
    "id_range": "locations",
}

#: TrajGDM's ``Evaluation_metrics(maxi, num_loc)`` on the HuMob grid (maxi 200, num_loc 40000).
TRAJGDM = GenerationConvention(
    binning="range", jump_max=50.0, jump_bins=100, float32=True, density=True, scipy=True
)
#: MobilityGPT's ``TrajectoryEvaluator``.
MOBILITYGPT = GenerationConvention(binning="arange", bins=300, distinct_links=True, scipy=True)
