"""Recommendation metrics: conventions as data, and metric-name parsing.

Every place where reference systems disagree is one documented field of :class:`RecsConvention`;
a preset is a named bundle of those fields (``RECS_PRESETS``), and any field can be overridden.
Formulas (``L`` list length, ``R`` relevant items of the user, ``hit_i`` = 1 when the item at
1-based position ``i`` is relevant, ``k`` the cutoff):

* ``precision@k = tp@k / k`` (trec_eval, RankSys) or ``tp@k / min(k, L)`` (ClayRS), ``tp@k`` hits
  in the first ``k``.  ``recall@k = tp@k / R``.  ``f<beta>@k = (1 + w) P R / (w P + R)`` with
  ``w = b^2`` (van Rijsbergen 1979; ClayRS) or ``w = b`` (trec_eval ``set_F``: ``(x + 1) P R /
  (R + x P)``), 0 when ``P = R = 0``.  ``r-precision = tp@R / R`` (Buckley & Voorhees).
* ``map@k``: mean over users of ``AP@k = (1/D) sum_{i<=k} hit_i * P@i`` where ``D`` is ``R``
  (trec_eval ``map_cut``, ClayRS MAPAtK, RELISON TRECAveragePrecision), ``min(k, R)`` (RankSys
  AveragePrecision, RecBole) or the hits retrieved.
* ``mrr@k``: mean of ``1 / i*``, ``i*`` the first relevant position ``<= k`` (0 if none).
* ``ndcg@k = DCG@k / IDCG@k``, ``DCG@k = sum_{i<=k} g_i / log_b(i + 1)`` (Jarvelin & Kekalainen,
  ACM TOIS 20(4), 2002); gains binary, linear ``r``, exponential ``2^r - 1`` (Burges et al. 2005)
  or RankSys's ``2^(r - t + 1) - 1`` for ``r >= t``, a negative gain counted as 0 (trec_eval: a
  negative judgment is judged non-relevant) unless ``negative_gain="keep"``; IDCG over every truth
  item, or (ClayRS) over the rated recommended items only, unrated items dropped and positions
  closed up.
* ``dcg@k = DCG@k`` unnormalised, with the convention's gain (ranx ``dcg``: the linear gain,
  Jarvelin & Kekalainen), ``dcg_burges@k`` with the exponential gain ``2^r - 1`` whatever the
  convention's (ranx ``dcg_burges``, Burges et al., ICML 2005): over the list's positions, a user
  without a relevant item scores 0 (ranx).  ``hits@k = tp@k``, the number of relevant items in
  the first ``k`` (ranx ``hits``).
* ``hit_rate@k = [tp@k > 0]``.  ``mse``, ``mae``, ``rmse``: over recommended items that are also
  rated (predicted score vs rating), each rated item once with the score of its first copy in the
  list (ClayRS) unless ``duplicates="count_each"``, per user; the system value is the mean of
  per-user values (so ``rmse`` is ClayRS's mean of per-user RMSE).

System value: ``macro`` = sum of per-user values / users counted (see ``denominator``); ``micro``
(precision, recall, f-measure, r-precision only; others stay macro) = the metric of the summed
``tp``, precision denominators and ``R`` over the users counted.

References: trec_eval (https://github.com/usnistgov/trec_eval); ranx (Bassani, ECIR 2022);
ClayRS 0.5.1 ``clayrs.evaluation.metrics``; RankSys 0.4.3 and RELISON (Sanz-Cruzado & Castells).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from mobeval.errors import ConfigError
from mobeval.metrics.ir_measures import ir_measures_metrics
from mobeval.metrics.trec import TrecMetric, trec_metrics

RELEVANCE_FAMILIES = ("precision", "recall", "fmeasure", "r-precision", "map", "mrr", "hit_rate")
MICRO_FAMILIES = ("precision", "recall", "fmeasure", "r-precision")
NO_CUTOFF_FAMILIES = ("r-precision", "mse", "mae", "rmse")
#: Families whose per-user value is not a fraction: the DCG sums and the number of hits.
UNNORMALISED_FAMILIES = ("dcg", "dcg_burges", "hits")
FAMILIES = (*RELEVANCE_FAMILIES, "ndcg", *UNNORMALISED_FAMILIES, "mse", "mae", "rmse")

_ALIASES = {
    "p": "precision",
    "prec": "precision",
    "precision": "precision",
    "recall": "recall",
    "fmeasure": "fmeasure",
    "f_measure": "fmeasure",
    "r-precision": "r-precision",
    "r_precision": "r-precision",
    "rprec": "r-precision",
    "rprecision": "r-precision",
    "map": "map",
    "ap": "map",
    "mrr": "mrr",
    "rr": "mrr",
    "recip_rank": "mrr",
    "ndcg": "ndcg",
    "dcg": "dcg",
    "dcg_burges": "dcg_burges",
    "hits": "hits",
    "hit_rate": "hit_rate",
    "hitrate": "hit_rate",
    "hit": "hit_rate",
    "hr": "hit_rate",
    "mse": "mse",
    "mae": "mae",
    "rmse": "rmse",
}
_NAME = re.compile(r"^\s*([a-z_\-]+?|f\d+(?:\.\d+)?)\s*(?:@\s*(\d{1,18}))?\s*$")
#: What ``mobeval recs`` / ``evaluate_recs`` report when no metric is named (over the cutoffs).
DEFAULT_METRICS = ("precision", "recall", "ndcg", "map", "mrr")
#: The columns the family reads (a ``columns`` option maps the user's names to these): the
#: ratings' ``user_id`` (the ``key``), ``item_id``, ``rating``; the lists' ``user_id``,
#: ``item_id`` and, as the convention needs them, ``rank`` / ``score``.
COLUMNS = ("user_id", "item_id", "rating", "rank", "score")
INPUT_COLUMNS = {
    "truth": ("user_id", "item_id", "rating"),
    "pred": ("user_id", "item_id", *COLUMNS[3:]),
}
#: The allowed values of every :class:`RecsConvention` field that takes one of a few names.
OPTION_CHOICES = {
    "averaging": ("macro", "micro"),
    "gain": ("binary", "linear", "exponential", "relison"),
    "idcg": ("all_relevant", "retrieved_rated"),
    "no_relevant": ("zero", "nan_skip", "error_if_all_nan"),
    "duplicates": ("error", "count_each", "distinct_tp", "drop"),
    "precision_denominator": ("k", "list_length"),
    "ap_denominator": ("relevant", "min_k_relevant", "hits"),
    "denominator": ("users_in_truth", "users_in_both", "users_with_relevant"),
    "order": ("input", "rank", "score_id_str_desc", "score_id_asc", "ranx"),
    "negative_gain": ("zero", "keep"),
    "f_beta": ("squared", "linear"),
}
#: Values an option no longer takes, each with what to use instead (every face says it).
REMOVED_CHOICES = {
    "duplicates": {
        "first_only": "no reference system keeps a later copy's place as a miss; 'drop' reads "
        "the list as ranx, pytrec_eval and ir_measures hold it (the later copies removed, the "
        "items after them moved up), 'count_each' scores every copy"
    },
}


@dataclass(frozen=True)
class RecsConvention:
    """One reference system's way of scoring ranked lists against rated ground truth.

    Attributes:
        relevant_threshold: an item is relevant when its rating is ``>=`` this number;
            ``"user_mean"``: the user's own mean truth rating (ClayRS default); ``None``: every
            truth item is relevant (RankSys/RELISON test edges).
        averaging: ``"macro"`` (mean of per-user values) or ``"micro"`` (ClayRS ``sys_average``).
        beta: the ``beta`` of a bare ``"fmeasure"``; ``"f2"`` names its own.
        f_beta: how ``beta`` weighs recall: ``"squared"`` (``(1 + b^2) P R / (b^2 P + R)``: the
            textbook, ClayRS) or ``"linear"`` (``(1 + b) P R / (b P + R)``: trec_eval's
            ``set_F.b``, whose parameter is not squared).
        gain: nDCG gain: ``"binary"`` (1 if relevant), ``"linear"`` (the rating), ``"exponential"``
            (``2^r - 1``), ``"relison"`` (``2^(r - gain_threshold + 1) - 1``).
        gain_threshold: graded gains are 0 for ratings below it (RankSys nDCG threshold); ``None``
            gives every rated item its gain.
        negative_gain: ``"zero"`` (every preset): a gain below 0 (a negative rating under the
            linear or exponential gain) counts 0, in the DCG and in the ideal DCG, so nDCG is never
            negative (trec_eval: a judgment below 0 is judged non-relevant, gain 0); ``"keep"``:
            the negative value is used. Whether a negative rating is *relevant* is decided by
            ``relevant_threshold`` alone (any threshold >= 0 makes it non-relevant, as trec_eval).
        log_base: base ``b`` of the ``log_b(i + 1)`` discount (2; ClayRS lets it be e or 10).
        idcg: ``"all_relevant"`` (ideal ranking of every truth item, cut at ``k``) or
            ``"retrieved_rated"`` (ClayRS: the rated recommended items in list order, unrated
            dropped; IDCG is the same gains sorted; an empty list or zero IDCG gives NaN).
        no_relevant: users without relevant items: ``"zero"`` (score 0, counted), ``"nan_skip"``
            (NaN, left out of the mean) or ``"error_if_all_nan"`` (as ``nan_skip``, but a metric of
            ``all_nan_error_metrics`` with every user NaN is an error, as ClayRS raises).
        all_nan_error_metrics: metric families checked by ``"error_if_all_nan"``.
        duplicates: an item repeated in a list: ``"error"`` (trec_eval), ``"count_each"`` (every
            copy is a hit: RankSys), ``"distinct_tp"`` (ClayRS: confusion counts use distinct
            items, AP and nDCG count every copy), ``"drop"`` (a run held as a dict, as ranx,
            pytrec_eval and ir_measures hold it: one entry per item, with the values (score, rank)
            of its LAST row at the place of its FIRST row, as ``d[item] = row`` row by row leaves
            it; the later copies vanish and the items after them move up). mse / mae / rmse pair
            each rated item once, with its first copy's score (ClayRS), except under
            ``"count_each"`` (one error per copy). ``"first_only"`` (later copies misses that
            keep their place) was removed: no reference does it (``REMOVED_CHOICES``).
        precision_denominator: ``"k"`` (trec_eval, RankSys) or ``"list_length"`` (ClayRS: length
            of the cut list, an empty list gives 0).
        ap_denominator: ``"relevant"`` (``R``), ``"min_k_relevant"`` (RankSys AveragePrecision) or
            ``"hits"`` (relevant items retrieved).
        denominator: which users are scored and averaged: ``"users_in_both"`` (trec_eval, ClayRS),
            ``"users_in_truth"`` (missing lists score 0: ranx), ``"users_with_relevant"`` (RankSys
            ``AverageRecommendationMetric``: every user with a list or truth adds its value, the sum
            is divided by the number of users with at least one relevant item).
        require_same_users: the users of the lists and of the truth must be the same set (ClayRS
            raises ValueError otherwise).
        order: list order: ``"input"`` (row order: ClayRS, RELISON), ``"rank"`` (the ``rank``
            column), ``"score_id_str_desc"`` (score descending, ties by item id as a string
            descending: trec_eval), ``"score_id_asc"`` (ties by item id ascending) or ``"ranx"``
            (score descending as a ranx ``Run`` sorts it: Numba's quicksort of the list in file
            order, which keeps tied items in file order on lists of up to 15 items and not on
            longer ones: :func:`mobeval.kernels.ranx_lists.ranx_order`).
        unweighted: read every truth rating as 1.0 (RELISON's evaluation reads the test graph
            unweighted).
    """

    relevant_threshold: float | Literal["user_mean"] | None = None
    averaging: Literal["macro", "micro"] = "macro"
    beta: float = 1.0
    gain: Literal["binary", "linear", "exponential", "relison"] = "binary"
    gain_threshold: float | None = None
    log_base: float = 2.0
    idcg: Literal["all_relevant", "retrieved_rated"] = "all_relevant"
    no_relevant: Literal["zero", "nan_skip", "error_if_all_nan"] = "zero"
    all_nan_error_metrics: tuple[str, ...] = RELEVANCE_FAMILIES
    duplicates: Literal["error", "count_each", "distinct_tp", "drop"] = "error"
    precision_denominator: Literal["k", "list_length"] = "k"
    ap_denominator: Literal["relevant", "min_k_relevant", "hits"] = "relevant"
    denominator: Literal["users_in_truth", "users_in_both", "users_with_relevant"] = "users_in_both"
    require_same_users: bool = False
    order: Literal["input", "rank", "score_id_str_desc", "score_id_asc", "ranx"] = "input"
    unweighted: bool = False
    negative_gain: Literal["zero", "keep"] = "zero"
    f_beta: Literal["squared", "linear"] = "squared"

    def __post_init__(self) -> None:
        for name, allowed in OPTION_CHOICES.items():
            if getattr(self, name) not in allowed:
                raise ConfigError(f"{name} must be one of {allowed}, not {getattr(self, name)!r}")
        thr = self.relevant_threshold
        if isinstance(thr, str) and thr != "user_mean":
            raise ConfigError(f"relevant_threshold must be a number, 'user_mean' or None: {thr!r}")
        if not isinstance(thr, str | None) and not math.isfinite(float(thr)):
            raise ConfigError(f"relevant_threshold must be finite: {thr!r}")
        if not (self.log_base > 0 and self.log_base != 1 and math.isfinite(self.log_base)):
            raise ConfigError(f"log_base must be a positive number other than 1: {self.log_base}")
        if not (self.beta >= 0 and math.isfinite(self.beta)):
            raise ConfigError(f"beta must be a finite number >= 0: {self.beta}")
        gain_threshold = self.gain_threshold
        if gain_threshold is not None and not math.isfinite(float(gain_threshold)):
            raise ConfigError(f"gain_threshold must be finite or None: {gain_threshold!r}")
        if self.gain == "relison" and self.gain_threshold is None:
            raise ConfigError("gain='relison' needs gain_threshold (RankSys uses 0.5)")
        unknown = set(self.all_nan_error_metrics) - set(FAMILIES)
        if unknown:
            raise ConfigError(f"all_nan_error_metrics: unknown metric families {sorted(unknown)}")


RECS_PRESETS: dict[str, RecsConvention] = {
    "clayrs": RecsConvention(
        relevant_threshold="user_mean",
        gain="linear",
        idcg="retrieved_rated",
        no_relevant="error_if_all_nan",
        all_nan_error_metrics=("precision", "recall", "fmeasure", "r-precision", "mrr"),
        duplicates="distinct_tp",
        precision_denominator="list_length",
        denominator="users_in_both",
        require_same_users=True,
        order="input",
    ),
    "relison": RecsConvention(
        relevant_threshold=None,
        gain="relison",
        gain_threshold=0.5,
        no_relevant="zero",
        duplicates="count_each",
        denominator="users_with_relevant",
        order="input",
    ),
    "trec_eval": RecsConvention(
        relevant_threshold=1.0,
        gain="linear",
        no_relevant="zero",
        duplicates="error",
        denominator="users_in_both",
        order="score_id_str_desc",
        f_beta="linear",
    ),
    "ranx": RecsConvention(
        relevant_threshold=1.0,
        gain="linear",
        gain_threshold=1.0,
        no_relevant="zero",
        duplicates="drop",
        denominator="users_in_truth",
        order="ranx",
    ),
}
# RELISON's own evaluation reads the test graph unweighted: every edge has weight 1.
RECS_PRESETS["relison_unweighted"] = dataclasses.replace(RECS_PRESETS["relison"], unweighted=True)
# ir_measures (0.4.3): trec_eval's conventions, but a user the ratings hold without a list scores
# its measures' default (0) and counts in the mean (its evaluators fill every qrels query).
RECS_PRESETS["ir_measures"] = dataclasses.replace(
    RECS_PRESETS["trec_eval"], denominator="users_in_truth"
)


def resolve_convention(convention: str | RecsConvention, **overrides: object) -> RecsConvention:
    """A preset by name (or a convention as is) with fields replaced; ConfigError if unknown."""
    if isinstance(convention, str):
        if convention not in RECS_PRESETS:
            raise ConfigError(
                f"unknown recommendation convention {convention!r}; "
                f"choose one of {sorted(RECS_PRESETS)}"
            )
        convention = RECS_PRESETS[convention]
    fields = {f.name for f in dataclasses.fields(RecsConvention)}
    unknown = sorted(set(overrides) - fields)
    if unknown:
        raise ConfigError(f"unknown convention options {unknown}; known: {sorted(fields)}")
    return dataclasses.replace(convention, **overrides) if overrides else convention


@dataclass(frozen=True)
class RecsMetric:
    """One metric to report: a family, an optional cutoff and, for the f-measure, its beta; for
    the family ``"trec"``, the trec_eval measure (:class:`~mobeval.metrics.trec.TrecMetric`)."""

    family: str
    k: int | None = None
    beta: float | None = None
    trec: TrecMetric | None = None

    @property
    def name(self) -> str:
        """The lowercase output name, e.g. ``precision@10``, ``f2@5``, ``ndcg``, ``rmse``; a
        trec_eval measure's label (``P_5``, ``bpref``, ``nDCG@10`` as the user spelled it)."""
        if self.trec is not None:
            return self.trec.label
        base = f"f{self.beta:g}" if self.family == "fmeasure" else self.family
        return base if self.k is None else f"{base}@{self.k}"


def parse_recs_metrics(
    metrics: str | Sequence[str], cutoffs: Sequence[int] | None = None, *, beta: float = 1.0
) -> tuple[RecsMetric, ...]:
    """Expand metric names x cutoffs into distinct :class:`RecsMetric` in the order given.

    ``"precision@10"`` keeps its own cutoff; a bare ``"ndcg"`` takes every cutoff of ``cutoffs``
    (none: the whole list); ``r-precision``, ``mse``, ``mae``, ``rmse`` never take one. ``"f1"``,
    ``"f0.5"`` name an f-measure's beta; a bare ``"fmeasure"`` uses ``beta``. ir_measures'
    names (``nDCG@10``, ``P(rel=2)@5``: :mod:`~mobeval.metrics.ir_measures`) and trec_eval's
    (``bpref``, ``P_5``, ``P.5,10``, ``all_trec``: :func:`~mobeval.metrics.trec.trec_metrics`),
    case-sensitive, name trec_eval measures (family ``"trec"``; the cutoffs do not apply); a
    name that is also mobeval's own (``map``, ``recall``, ``ndcg``) keeps mobeval's meaning.
    """
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    grid: list[int | None] = [None]
    if cutoffs is not None and len(cutoffs) > 0:
        grid = [_check_cutoff(k) for k in cutoffs]
    out: dict[str, RecsMetric] = {}
    for raw in names:
        trec = ir_measures_metrics(str(raw))
        m = _NAME.match(str(raw).lower())
        if trec is None and (m is None or m.group(1) not in _ALIASES):
            trec = trec_metrics(str(raw))
        if trec is not None:
            for metric in trec:
                out.setdefault(metric.label, RecsMetric("trec", trec=metric))
            continue
        if m is None:
            raise ConfigError(f"cannot read metric name {raw!r} (expected e.g. 'ndcg@10', 'map')")
        word, k = m.group(1), m.group(2)
        metric_beta = None
        if re.fullmatch(r"f\d+(?:\.\d+)?", word):
            family, metric_beta = "fmeasure", float(word[1:])
        elif word in _ALIASES:
            family = _ALIASES[word]
            metric_beta = beta if family == "fmeasure" else None
        else:
            raise ConfigError(f"unknown recommendation metric {raw!r}; known: {sorted(_ALIASES)}")
        if family in NO_CUTOFF_FAMILIES:
            if k is not None:
                raise ConfigError(f"{family} takes no cutoff: {raw!r}")
            ks: list[int | None] = [None]
        else:
            ks = [_check_cutoff(int(k))] if k is not None else grid
        for kk in ks:
            spec = RecsMetric(family, kk, metric_beta)
            out.setdefault(spec.name, spec)
    if not out:
        raise ConfigError("no metric requested")
    return tuple(out.values())


def _check_cutoff(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ConfigError(f"a cutoff must be an integer >= 1, not {k!r}")
    if k > 2**31 - 1:  # beyond every list's length; int64 kernels must not overflow
        raise ConfigError(f"a cutoff must be at most {2**31 - 1}, not {k}")
    return int(k)
