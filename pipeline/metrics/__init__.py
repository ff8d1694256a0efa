"""Metric names, options and convention presets of each task (conventions are data)."""


def drop_duplicates_hint(entry: str) -> str:
    """What ``duplicates="drop"`` does, for the message that rejects an ``entry`` (item, location)
    twice in one list: the recommendation and the next-location tasks say it alike."""
    return (
        f"duplicates='drop' keeps one entry per {entry} as ranx, pytrec_eval "
        f"and ir_measures do (the last row's score, at the first row's place; the {entry}s after "
        "a copy move up)"
    )


#: The distributions of a trajectory population (:mod:`mobeval.metrics.population`): MoveSim's
#: six, then DiffTraj's three; and the divergences between two: a summary row
#: ``<divergence>_<distribution>`` (``jsd_radius``).
MOVESIM_DISTRIBUTIONS = ("distance", "radius", "duration", "dailyloc", "grank", "irank")
DIFFTRAJ_DISTRIBUTIONS = ("density", "trip")
DISTRIBUTIONS = MOVESIM_DISTRIBUTIONS + DIFFTRAJ_DISTRIBUTIONS
#: The distributions over a 2-D grid of cells, whose bins have no order (no ``emd``).
GRID_DISTRIBUTIONS = ("density", "trip")
#: The distributions of :mod:`mobeval.metrics.generation` (TrajGDM's, MobilityGPT's, DiffTraj's
#: Length), compared by a divergence as those above; and its ratios over the generated
#: trajectories (TrajGDM's duplicate ratio, memorisation), one summary row each of that name.
GENERATION_DISTRIBUTIONS = (
    "jump",
    "location",
    "origin_location",
    "destination_location",
    "od",
    "trip_length",
    "length",
    "link_radius",
    "gravity",
)
#: ``connectivity`` (MobilityGPT's share of generated trajectories along the link graph) is the
#: one ratio where higher is better.
GENERATION_RATIOS = ("duplicate_ratio", "memorised", "memorised_near", "connectivity")
#: The generation distributions over location ids, whose bins have no order (no ``emd``).
ID_DISTRIBUTIONS = ("location", "origin_location", "destination_location", "od")
#: Every metric that the folded populations give (one summary row each, no per-uid value).
POPULATION_METRICS = DISTRIBUTIONS + GENERATION_DISTRIBUTIONS + GENERATION_RATIOS
#: ``jsdist``: the Jensen-Shannon distance, the square root of ``jsd`` (scipy's jensenshannon).
DIVERGENCES = ("jsd", "jsdist", "kl", "emd")

#: Metrics where a lower value is better (the report bolds their minimum, compare's leaderboard
#: ranks it first).
LOWER_IS_BETTER = frozenset(
    {
        "dtw",
        "mse",
        "mae",
        "rmse",
        "cross_entropy",
        "gini",
        "avg_popularity",
        *DIVERGENCES,
        *(ratio for ratio in GENERATION_RATIOS if ratio != "connectivity"),
    }
)


def family_of(metric: str) -> str:
    """``ndcg@10`` -> ``ndcg``; ``f2@5`` -> ``fmeasure``; ``geobleu`` -> ``geobleu``;
    ``jsd_radius`` -> ``jsd`` (a population divergence: ``<divergence>_<distribution>``)."""
    base = metric.partition("@")[0]
    if base[:1] == "f" and base[1:].replace(".", "", 1).isdigit():
        return "fmeasure"
    divergence, _, distribution = base.partition("_")
    if divergence in DIVERGENCES and distribution in DISTRIBUTIONS + GENERATION_DISTRIBUTIONS:
        return divergence
    return base


def cutoff_of(metric: str) -> int | None:
    _, at, k = metric.partition("@")
    return int(k) if at and k.isdigit() else None


def lower_is_better(metric: str) -> bool:
    """Whether a lower value of ``metric`` is better (:data:`LOWER_IS_BETTER`)."""
    return family_of(metric) in LOWER_IS_BETTER
