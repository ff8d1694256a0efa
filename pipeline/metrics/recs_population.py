"""Beyond-accuracy metrics of recommendation lists: what the whole population of lists covers.

These are values of the population, not of a user: counts of each item over every user's first
``k`` items (``c_i``, ``T = sum_i c_i``), or means over users of a per-user share, reported as
rows of the summary (``metric``, ``value``, ``n``: the users whose lists were counted). Names
(``k`` the cutoff, as every recommendation metric: ``gini@10``; without ``@k`` over the cutoffs,
or the whole list when there are none):

* ``gini@k``: the Gini index of the item counts (Gini 1912; ClayRS ``GiniIndex``, RecBole
  ``GiniIndex``): with the ``N`` counts sorted ascending ``x_1 <= ... <= x_N``,
  ``G = sum_j (2 j - N - 1) x_j / (N T)``. ClayRS counts the recommended items only (``N`` = the
  distinct items recommended); RecBole every item of the catalogue, the ones never recommended
  at 0 (``N`` = the catalogue size, with its padding item: ``gini_items``).
* ``coverage@k``: the distinct recommended items of the catalogue over the catalogue's size
  (ClayRS ``CatalogCoverage(top_n=k)``, or ``PredictionCoverage`` without a cutoff: a percentage
  rounded to 2 decimals, items outside the catalogue ignored; RecBole ``ItemCoverage``: a
  fraction of its ``num_items``, which counts its padding item ``[PAD]``).
* ``entropy@k``: Shannon's entropy of the shares ``p_i = c_i / T``, ``H = -sum_i p_i ln p_i``
  (RecBole ``ShannonEntropy``, which divides it by the number of distinct items recommended:
  ``entropy_divisor``).
* ``avg_popularity@k``: the mean over users of the mean popularity of the user's first ``k``
  items, an item's popularity its number of rows in the training interactions (``train``; 0 if
  absent) (Abdollahpouri et al. 2017's ARP; RecBole ``AveragePopularity``).
* ``delta_gap@k``: ClayRS's ``DeltaGap`` (Abdollahpouri et al., "The unfairness of popularity
  bias in recommendation", RMSE 2019), one row per user group ``delta_gap@k:<group>``:
  ``(GAP_recs - GAP_profile) / GAP_profile`` (0 when ``GAP_profile = 0``), ``GAP`` the mean over
  the group's users with a list of the mean popularity of their items (the first ``k`` of the
  list; every row of the training profile), an item's popularity its rows in the original
  ratings over their number of users. The groups (``user_groups``, fractions summing to 1) cut
  the users of the training profiles sorted by their popularity ratio (the share of their
  distinct items among the ``round(n pop_percentage)`` most popular, ties in order of first
  appearance), descending, ties in order of first appearance, group ``g`` ending at
  ``round(users * (p_1 + ... + p_g))`` (Python's ``round``, as ClayRS).
* ``pop_ratio@k``: the data of ClayRS's ``PopRatioProfileVsRecs`` plot (its ``store_frame``
  table), two rows per user group of ``delta_gap``'s: ``pop_ratio@k:<group>:profile`` and
  ``pop_ratio@k:<group>:recs``, the mean over the group's users with a list of their popularity
  ratio (``|distinct items ∩ most popular| / |distinct items|``) in the training profile and in
  the first ``k`` items of the list; ``n`` the group's users with a list.
* ``pearson@k``, ``spearman@k``, ``kendall@k``: ClayRS's ``Correlation(method, top_n)``, per user
  the correlation (Pearson's r; Spearman's rho, r of the average ranks; Kendall's tau-b) between
  the predicted scores and the ratings of the rated items among the first ``k`` of the list (NaN
  with fewer than 2 of them or a constant side), a column of ``per_unit``; the system value is
  the mean over the users whose value is not NaN (``n``).
* ``gauc``: RecBole's ``GAUC``: per user the AUC of its rated items (positives) among its list
  ranked by the predicted score (ties: mean ranks), ``AUC_u = ((L+1) P - P (P+1)/2 - S) /
  (P (L - P))`` (``L`` items, ``P`` positives, ``S`` the sum of their descending ranks), a
  ``per_unit`` column; the system value ``sum_u P_u AUC_u / sum_u P_u`` over the users with a
  positive and a negative (``n``). The list must hold every candidate the user was scored on
  (RecBole ranks the full catalogue less the user's history).
* ``auc``: RecBole's ``AUC``: one ROC curve over every scored (user, item) pair of the lists
  (each item's first row in a user's list), positive when the user rated the item (RecBole's
  label 1; its label-0 pairs are the pairs of the lists without a rating), ranked by the
  predicted score; ties count one half (the ROC curve's diagonal step, as RecBole's
  ``_binary_clf_curve`` and scikit-learn draw it): with ``P`` positives, ``N`` negatives,
  ``AUC = sum_{pos p, neg q} ([s_p > s_q] + [s_p = s_q] / 2) / (P N)``
  (:mod:`mobeval.kernels.auc`); NaN without a positive or a negative; ``n`` the pairs scored.
* ``long_tail@k``: the data of ClayRS's ``LongTailDistr`` plot, no summary row but a table of
  its own (the ``long_tail`` section): per side, ``truth`` (every row of the ratings) and
  ``recs`` (the first ``k`` items of every list), each item's count ``c_i`` and its
  ``position`` (0, 1, ...) in the items sorted by count, descending (ClayRS's
  ``Counter.most_common()``, the x of its curve); ties by item id (ClayRS: by first appearance,
  which its plot does not show: the curve is the same).
* ``popularity_correlation@k``: the data of ClayRS's ``PopRecsCorrelation`` scatter (the
  ``popularity_correlation`` section): per item of the original ratings (``original_ratings``,
  default ``train``) its ``popularity``, its rows over the original ratings' users (ClayRS
  ``get_item_popularity``), and ``recommended``, its count among the first ``k`` items of every
  list (0 if never recommended: ClayRS's ``mode='w_zeros'``; ``recommended > 0`` its
  ``'no_zeros'``).
* ``tail_percentage@k``: the mean over users of the share of long-tail items among the user's
  first ``k`` (RecBole ``TailPercentage``): with ``tail_ratio > 1`` the items of the training
  interactions seen at most ``tail_ratio`` times, else the ``max(floor(n tail_ratio), 1)`` least
  popular of its ``n`` items (ties by item id).

Microsoft Recommenders' ``python_evaluation`` (recommenders-team/recommenders@d580143), over
the first ``k`` items of each list (its ``reco_df``), the training interactions its
``train_df`` (``c_i`` an item's rows, ``N`` all rows), ``sim`` the convention's
``item_similarity`` (:mod:`mobeval.kernels.similarity`: co-occurrence cosine or feature cosine):

* ``novelty@k``: ``sum_i n_i (-log2(c_i / N)) / sum_i n_i`` (Castells, Vargas & Wang, ECIR
  2011), ``n_i`` the item's count in the lists; an item outside the training rows adds 0.
* ``diversity@k``: the mean over users of ``1 - ILS_u``, ``ILS_u`` the mean ``sim`` of the pairs
  of distinct items of the list (Ziegler et al. 2005); users without such a pair left out.
* ``serendipity@k``: the mean over users with training rows of the mean over their list of
  ``1 - mean_j sim(i, j)``, ``j`` over the user's training rows (Zhang et al., WSDM 2012).
* ``distributional_coverage@k``: ``-sum_i p_i log2 p_i``, ``p_i = n_i / sum n`` (Shani &
  Gunawardana 2010); its ``catalog_coverage`` is ``coverage`` under ``msrecommenders``.

Elliot (sisinflab/elliot@fc27efe), an item's popularity its distinct training users ``u_i``
(``U`` the training users), its long tail every training item outside the short head (the most
popular items holding 80 % of the distinct training pairs):

* ``epc@k``, ``efd@k``: per user with a relevant rating, ``sum_r rel_r disc_r nov_r / sum_r
  disc_r`` over its first ``k``, ``disc_r = ln 2 / ln(r + 2)``, ``nov = 1 - u_i / U`` (EPC; 1
  outside the training rows) or ``-log2(u_i / sum u)`` (EFD; its largest value outside them)
  (Vargas & Castells, RecSys 2011); the mean over those users.
* ``aplt@k``, ``aclt@k``: the mean over users of the number of distinct long-tail items of the
  first ``k`` (ACLT), over the list's length (APLT) (Abdollahpouri et al. 2017, 2019);
  ``avg_popularity`` is its ``ARP`` under ``elliot``.

Propensity-scored precision and recall (Jain, Prabhu & Varma, KDD 2016; pyxclib's
``psprecision`` / ``psrecall``, :mod:`mobeval.tasks.recs_propensity`), each relevant item ``l``
weighed by ``w_l = 1 / p_l`` (given, ``propensities``, or Jain et al.'s formula over ``train``):

* ``psp@k``: ``sum_u (1/k) sum_{l in top k} y_ul w_l / sum_u (1/k) sum_{l in best k} w_l``;
* ``psr@k``: the same with ``1 / |y_u|`` in place of ``1 / k``; the best ``k`` are the user's
  relevant items of largest ``w_l``, the users every user with a list or a rating.

A list shorter than ``k`` counts what it has: its items are counted, and its per-user shares
divide by its length (RecBole's lists always hold ``k`` items, where the two agree).

References: ClayRS 0.5.1 ``clayrs/evaluation/metrics/fairness_metrics.py`` and
``plot_metrics.py``; RecBole 1.2.1
``recbole/evaluator/metrics.py`` (Zhao et al., CIKM 2021); Ge, Delgado-Battenfeld & Jannach,
"Beyond accuracy: evaluating recommender systems by coverage and serendipity", RecSys 2010.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass

from mobeval.errors import ConfigError

#: metric family -> the inputs beyond the lists it needs (``catalogue`` / ``train``); the
#: catalogue only where the convention counts over it (see :meth:`PopulationConvention.needs`).
FAMILIES = (
    "gini",
    "coverage",
    "entropy",
    "avg_popularity",
    "tail_percentage",
    "delta_gap",
    "pop_ratio",
    "pearson",
    "spearman",
    "kendall",
    "gauc",
    "auc",
    "long_tail",
    "popularity_correlation",
    "novelty",
    "diversity",
    "serendipity",
    "distributional_coverage",
    "epc",
    "efd",
    "aplt",
    "aclt",
    "psp",
    "psr",
)
#: Propensity-scored precision and recall (:mod:`mobeval.tasks.recs_propensity`): their own sums.
PROPENSITY_FAMILIES = ("psp", "psr")
#: ``(A, B)`` of Jain et al.'s propensity formula for the paper's datasets (KDD 2016, section
#: 4; pyxclib's ``compute_inv_propesity`` docstring): Wikipedia-LSHTC, Amazon, every other one.
PROPENSITY_PRESETS = {"jain": (0.55, 1.5), "amazon": (0.6, 2.6), "wikipedia": (0.5, 0.4)}
#: ClayRS's Correlation methods.
CORRELATION_FAMILIES = ("pearson", "spearman", "kendall")
#: The families that rank the whole list (no ``@k``).
NO_CUTOFF_FAMILIES = ("gauc", "auc")
#: The families with a value per user (a ``per_unit`` column); they read the lists' scores.
PER_UNIT_FAMILIES = (*CORRELATION_FAMILIES, "gauc")
#: The families that read the lists' scores.
SCORE_FAMILIES = (*PER_UNIT_FAMILIES, "auc")
#: ClayRS's families of user groups (``user_groups``, ``pop_percentage``): one row per group.
GROUP_FAMILIES = ("delta_gap", "pop_ratio")
#: ClayRS's plot metrics: no summary row, a result section each (named as the family).
PLOT_FAMILIES = ("long_tail", "popularity_correlation")
#: The families whose value is a mean over users (exact sums of per-user shares).
PER_USER_FAMILIES = ("avg_popularity", "tail_percentage")
#: Microsoft Recommenders' and Elliot's means over users (:mod:`mobeval.tasks.recs_beyond`): the
#: users the reference leaves out have no value (NaN), and ``n`` counts the others.
BEYOND_USER_FAMILIES = ("diversity", "serendipity", "epc", "efd", "aplt", "aclt")
#: Every family whose value is a mean of per-user values folded into exact sums.
MEAN_FAMILIES = (*PER_USER_FAMILIES, *BEYOND_USER_FAMILIES)
#: The families the local engine alone computes, and why: on Spark each partition's counts per
#: distinct score (24 bytes each, :class:`mobeval.tasks.recs_population.ScoreCounts`) would reach
#: the driver whole, in memory unbounded by any budget (:func:`check_engine`).
LOCAL_ENGINE_FAMILIES = {
    "auc": "every partition's counts per distinct score (24 bytes each) would reach the driver "
    "whole, its memory bounded by no budget",
}
#: The families computed from the item counts alone (their bootstrap interval is
#: :class:`mobeval.tasks.recs_population.BootstrapCounts`').
COUNT_FAMILIES = ("gini", "coverage", "entropy", "distributional_coverage")
#: The families ``population_resamples`` gives a bootstrap interval over users: the item counts'
#: (:class:`mobeval.tasks.recs_population.BootstrapCounts`) and the per-user values' (weighted
#: exact sums, :class:`mobeval.kernels.exact_sum.WeightedColumnSums`).
BOOTSTRAP_FAMILIES = (*COUNT_FAMILIES, *MEAN_FAMILIES, *GROUP_FAMILIES)

_ALIASES = {
    "gini": "gini",
    "gini_index": "gini",
    "giniindex": "gini",
    "coverage": "coverage",
    "catalog_coverage": "coverage",
    "catalogue_coverage": "coverage",
    "prediction_coverage": "coverage",
    "itemcoverage": "coverage",
    "item_coverage": "coverage",
    "entropy": "entropy",
    "shannonentropy": "entropy",
    "shannon_entropy": "entropy",
    "avg_popularity": "avg_popularity",
    "averagepopularity": "avg_popularity",
    "average_popularity": "avg_popularity",
    "arp": "avg_popularity",
    "tail_percentage": "tail_percentage",
    "tailpercentage": "tail_percentage",
    "pearson": "pearson",
    "spearman": "spearman",
    "kendall": "kendall",
    "delta_gap": "delta_gap",
    "deltagap": "delta_gap",
    "pop_ratio": "pop_ratio",
    "popratioprofilevsrecs": "pop_ratio",
    "gauc": "gauc",
    "auc": "auc",
    "long_tail": "long_tail",
    "longtaildistr": "long_tail",
    "long_tail_distr": "long_tail",
    "popularity_correlation": "popularity_correlation",
    "poprecscorrelation": "popularity_correlation",
    "pop_recs_correlation": "popularity_correlation",
    "novelty": "novelty",
    "diversity": "diversity",
    "serendipity": "serendipity",
    "distributional_coverage": "distributional_coverage",
    "epc": "epc",
    "efd": "efd",
    "aplt": "aplt",
    "aclt": "aclt",
    "psp": "psp",
    "psprecision": "psp",
    "psr": "psr",
    "psrecall": "psr",
}
_NAME = re.compile(r"^\s*([a-z_]+)\s*(?:@\s*(\d{1,18}))?\s*$")


@dataclass(frozen=True)
class PopulationConvention:
    """Where ClayRS and RecBole define these metrics differently, one field each.

    * ``gini_items``: ``recommended`` (ClayRS: the items recommended at least once) or
      ``catalogue`` (RecBole: every catalogue item, 0 if never recommended).
    * ``coverage_unit``: ``percent_2dp`` (ClayRS: ``round(100 covered / |I|, 2)``) or
      ``fraction`` (RecBole: ``covered / num_items``, unrounded).
    * ``catalogue_padding``: items added to the catalogue's size (RecBole 1: its ``num_items``
      counts the padding item ``[PAD]``; ClayRS 0).
    * ``outside_catalogue``: a recommended item missing from the catalogue: ``ignore`` (ClayRS
      intersects) or ``error`` (RecBole's items all come from its catalogue).
    * ``entropy_divisor``: ``none`` (Shannon's entropy) or ``distinct_items`` (RecBole divides
      by the number of distinct items recommended).
    * ``tail_ratio``: RecBole's ``tail_ratio`` (default 0.1): the long tail's definition.
    * ``coverage_items``: the items ``coverage`` counts over: ``catalogue`` (``--catalogue``) or
      ``train`` (Microsoft Recommenders' ``catalog_coverage``: the distinct items of the
      training interactions, every distinct recommended item counted: ``outside_catalogue``
      ``count``).
    * ``popularity``: an item's popularity in ``avg_popularity`` (``arp``): its ``rows`` in the
      training interactions (RecBole) or its distinct ``users`` there (Elliot's ``ARP``).
    * ``item_similarity``: the item similarity of ``diversity`` and ``serendipity``:
      ``cooccurrence`` in the training users (Microsoft Recommenders' default
      ``item_cooccurrence_count``) or the cosine of the ``features`` (``--item-features``, its
      ``item_feature_vector``).
    * ``serendipity_relevance``: the relevance ``rel`` of ``serendipity``: ``one`` (every listed
      item, Microsoft Recommenders' default) or ``ratings`` (1 where the user's rating of the item
      is relevant under the ranking convention's ``relevant_threshold``, else 0: its
      ``col_relevance`` column).
    """

    gini_items: str = "recommended"
    coverage_unit: str = "percent_2dp"
    catalogue_padding: int = 0
    outside_catalogue: str = "ignore"
    entropy_divisor: str = "none"
    tail_ratio: float = 0.1
    coverage_items: str = "catalogue"
    popularity: str = "rows"
    item_similarity: str = "cooccurrence"
    serendipity_relevance: str = "one"

    def __post_init__(self) -> None:
        for name, allowed in CHOICES.items():
            if getattr(self, name) not in allowed:
                raise ConfigError(
                    f"{name} must be one of {list(allowed)}, not {getattr(self, name)!r}"
                )
        if not self.tail_ratio > 0:
            raise ConfigError(f"tail_ratio must be > 0, not {self.tail_ratio!r}")

    def needs(self, family: str) -> tuple[str, ...]:
        """The inputs beyond the lists that ``family`` needs under this convention."""
        features = ("item_features",) if self.item_similarity == "features" else ()
        if family == "coverage":
            return ("catalogue",) if self.coverage_items == "catalogue" else ("train",)
        if family == "gini" and self.gini_items == "catalogue":
            return ("catalogue",)
        if family == "diversity":
            return features or ("train",)
        if family == "serendipity":
            return ("train", *features)
        if family in (*MEAN_FAMILIES, *GROUP_FAMILIES, "popularity_correlation", "novelty"):
            return ("train",)
        return ()


CHOICES = {
    "gini_items": ("recommended", "catalogue"),
    "coverage_unit": ("percent_2dp", "fraction"),
    "catalogue_padding": (0, 1),
    "outside_catalogue": ("ignore", "error", "count"),
    "entropy_divisor": ("none", "distinct_items"),
    "coverage_items": ("catalogue", "train"),
    "popularity": ("rows", "users"),
    "item_similarity": ("cooccurrence", "features"),
    "serendipity_relevance": ("one", "ratings"),
}

POPULATION_PRESETS = {
    "clayrs": PopulationConvention(),
    "recbole": PopulationConvention(
        gini_items="catalogue",
        coverage_unit="fraction",
        catalogue_padding=1,
        outside_catalogue="error",
        entropy_divisor="distinct_items",
    ),
    "msrecommenders": PopulationConvention(
        coverage_unit="fraction", outside_catalogue="count", coverage_items="train"
    ),
    "elliot": PopulationConvention(popularity="users"),
}


def resolve_population(
    preset: str, tail_ratio: float | None = None, **choices: str | None
) -> PopulationConvention:
    """A preset of :data:`POPULATION_PRESETS` by name, its ``tail_ratio`` and the fields named in
    ``choices`` (``item_similarity``, ``serendipity_relevance``) replaced where given."""
    if preset not in POPULATION_PRESETS:
        raise ConfigError(
            f"unknown population convention {preset!r}; choose one of {sorted(POPULATION_PRESETS)}"
        )
    given = {name: value for name, value in choices.items() if value is not None}
    if tail_ratio is not None:
        given["tail_ratio"] = float(tail_ratio)
    return dataclasses.replace(POPULATION_PRESETS[preset], **given)


def population_of(values: dict) -> PopulationConvention:
    """The population convention a recs scoring's option ``values`` name: the preset
    ``population_convention`` and its overrides."""
    return resolve_population(
        values["population_convention"],
        values["tail_ratio"],
        item_similarity=values["item_similarity"],
        serendipity_relevance=values["serendipity_relevance"],
    )


@dataclass(frozen=True)
class PopulationMetric:
    """One population metric: its family and cutoff (None: the whole list)."""

    family: str
    k: int | None = None

    @property
    def name(self) -> str:
        return self.family if self.k is None else f"{self.family}@{self.k}"


def is_population_metric(name: object) -> bool:
    """Whether a metric name is one of this module's (``gini@10``, ``itemcoverage``...)."""
    match = _NAME.match(str(name).lower())
    return match is not None and match.group(1) in _ALIASES


def split_metrics(metrics: str | Sequence[str]) -> tuple[list[str], list[str]]:
    """The names of ``metrics`` in two lists: the per-user accuracy metrics
    (:func:`mobeval.metrics.recs.parse_recs_metrics`'s) and the population metrics (this
    module's), each in the order given."""
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    population = [n for n in names if is_population_metric(n)]
    return [n for n in names if not is_population_metric(n)], population


def parse_population_metrics(
    names: Sequence[str], cutoffs: Sequence[int] | None
) -> tuple[PopulationMetric, ...]:
    """Population metric names x cutoffs: ``"gini@10"`` keeps its cutoff, a bare ``"gini"``
    takes every cutoff of ``cutoffs`` (none: the whole list). Distinct, in the order given."""
    grid = [None] if not cutoffs else [int(k) for k in cutoffs]
    out: dict[str, PopulationMetric] = {}
    for raw in names:
        match = _NAME.match(str(raw).lower())
        if match is None or match.group(1) not in _ALIASES:
            raise ConfigError(f"unknown population metric {raw!r}; known: {sorted(_ALIASES)}")
        family, k = _ALIASES[match.group(1)], match.group(2)
        if k is not None and int(k) < 1:
            raise ConfigError(f"a cutoff must be an integer >= 1, not {k}: {raw!r}")
        if family in NO_CUTOFF_FAMILIES and k is not None:
            raise ConfigError(f"{family} takes no cutoff (it ranks the whole list): {raw!r}")
        cuts = [None] if family in NO_CUTOFF_FAMILIES else [int(k)] if k is not None else grid
        for cut in cuts:
            metric = PopulationMetric(family, cut)
            out.setdefault(metric.name, metric)
    return tuple(out.values())


def check_engine(metrics: Sequence[PopulationMetric], engine: str) -> None:
    """A ConfigError, before anything is read, for a metric of :data:`LOCAL_ENGINE_FAMILIES` on
    an engine other than the local one (``engine``: its name)."""
    if engine == "local":
        return
    for metric in metrics:
        if metric.family in LOCAL_ENGINE_FAMILIES:
            raise ConfigError(
                f"{metric.name} is computed by the local engine only: on the {engine} engine "
                f"{LOCAL_ENGINE_FAMILIES[metric.family]}; run it with engine='local' "
                "(--engine local, the default), whose memory is bounded: it spills the counts to "
                "disk past a budget"
            )


def parse_user_groups(groups: Sequence[str]) -> tuple[tuple[str, float], ...]:
    """``["popular=0.2", "niche=0.8"]`` -> ``(("popular", 0.2), ("niche", 0.8))``, checked as
    ClayRS checks them: each fraction in (0, 1], their sum (in the order given) exactly 1."""
    out = []
    for text in groups:
        name, sep, fraction = str(text).partition("=")
        try:
            value = float(fraction)
        except ValueError:
            value = None
        if not sep or not name.strip() or value is None:
            raise ConfigError(f"a user group is NAME=FRACTION, e.g. popular=0.2, not {text!r}")
        if not 0 < value <= 1:
            raise ConfigError(f"user group {text!r}: a fraction must be in (0, 1]")
        out.append((name.strip(), value))
    if len({name for name, _ in out}) < len(out):
        raise ConfigError(f"user groups named twice: {list(groups)}")
    total = sum(value for _, value in out)
    if total != 1:
        raise ConfigError(
            f"the user groups' fractions sum to {total!r}, not 1 (ClayRS refuses it too): "
            "give fractions that add up to exactly 1"
        )
    return tuple(out)
