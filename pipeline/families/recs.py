"""The recommendation family: lists against rated or graded ground truth (ClayRS, RankSys,
RecBole, trec_eval, ranx...)."""

from __future__ import annotations

from mobeval.families.family import Family
from mobeval.families.shared import (
    PRESET_HELP,
    cohort_options,
    columns_option,
    cutoffs_option,
    metrics_option,
    population_bootstrap_options,
)
from mobeval.metrics import recs as _recs
from mobeval.metrics import recs_population as _recs_population
from mobeval.option_types import FROM_PRESET, Flag, Option

#: The help of each choice the recommendation presets set (``--averaging``...).
_RECS_CHOICE_HELP = {
    "averaging": "macro (mean over users) or micro (pooled counts, ClayRS's sys_average)",
    "gain": "nDCG gain: binary, linear (the rating), exponential (2^r - 1), relison",
    "idcg": "ideal DCG of every relevant item, or of the recommended rated ones",
    "no_relevant": "users without a relevant item: scored 0, skipped (NaN), or an error",
    "duplicates": "an item twice in one list (README: Recommendation lists)",
    "precision_denominator": "precision@k divides by k, or by min(k, list length)",
    "ap_denominator": "AP divides by R, by min(k, R), or by the hits",
    "denominator": "the users averaged over",
    "order": "list order: rows, rank, or score (ties by id string desc. / id asc. / ranx's sort)",
    "negative_gain": "a gain below 0 counts 0, or as it is",
    "f_beta": "f<b>: (1+b^2)PR/(b^2 P+R) (squared) or (1+b)PR/(bP+R) (linear, trec_eval)",
}


def _choice(name: str) -> Option:
    return Option(
        name,
        "string",
        FROM_PRESET,
        _RECS_CHOICE_HELP[name],
        _recs.OPTION_CHOICES[name],
        preset=True,
        python="choice",
        flag=Flag(default=FROM_PRESET),
        removed=_recs.REMOVED_CHOICES.get(name, {}),
    )


RECS = Family(
    "recs",
    "recommendation scoring",
    "ratings",
    "recs",
    (
        metrics_option(
            _recs.DEFAULT_METRICS,
            "e.g. precision,recall,f1,ndcg@10,map,mrr,hit_rate,r-precision,rmse,gini,coverage",
            single=True,
        ),
        cutoffs_option("cutoffs of the metrics named without @k", nullable=True),
        Option(
            "convention",
            "string",
            "clayrs",
            PRESET_HELP,
            lambda: sorted(_recs.RECS_PRESETS),
            python="convention",
        ),
        Option("key", "string", "user_id", "the user column"),
        columns_option(
            _recs.COLUMNS,
            ("ratings", "recs"),
            "truth.user_id=userId,truth.item_id=movieId",
            key=False,
        ),
        Option(
            "relevant_threshold",
            "threshold",
            FROM_PRESET,
            "relevant if rating >= X; user_mean; none (every rated item)",
            preset=True,
            flag=Flag("threshold", FROM_PRESET),
        ),
        Option(
            "gain_threshold",
            "number",
            FROM_PRESET,
            "graded gains are 0 below this rating (RankSys)",
            preset=True,
            nullable=True,
            flag=Flag("finite", FROM_PRESET),
        ),
        Option(
            "log_base",
            "number",
            FROM_PRESET,
            "base of nDCG's log discount",
            preset=True,
            flag=Flag("finite", FROM_PRESET),
        ),
        *(_choice(name) for name in _recs.OPTION_CHOICES),
        Option(
            "catalogue",
            "string",
            None,
            "the items that may be recommended (a file with item_id): coverage, RecBole's gini",
            path=True,
        ),
        Option(
            "train",
            "string",
            None,
            "training interactions (a file with user_id, item_id): avg_popularity, "
            "tail_percentage, novelty, diversity, serendipity, epc, efd, aplt, aclt, psp, psr",
            path=True,
        ),
        Option(
            "item_features",
            "string",
            None,
            "the items' categories (item_id, category) or vectors (item_id, features, or "
            "numeric columns): diversity and serendipity with --item-similarity features",
            path=True,
        ),
        Option(
            "item_similarity",
            "string",
            None,
            "diversity's and serendipity's item similarity: cooccurrence in --train or the "
            "cosine of the --item-features (default: the population convention's)",
            lambda: list(_recs_population.CHOICES["item_similarity"]),
        ),
        Option(
            "serendipity_relevance",
            "string",
            None,
            "serendipity's relevance: one (every listed item) or ratings (relevant ratings as "
            "the ranking convention reads them; default: the population convention's)",
            lambda: list(_recs_population.CHOICES["serendipity_relevance"]),
        ),
        Option(
            "propensities",
            "string",
            None,
            "psp, psr: each item's propensity (a file with item_id, propensity in (0, 1]); "
            "default: Jain et al.'s formula over --train",
            path=True,
        ),
        Option(
            "propensity_preset",
            "string",
            None,
            "psp, psr: the formula's A, B of a dataset of Jain et al.: jain (0.55, 1.5, the "
            "default), amazon (0.6, 2.6), wikipedia (0.5, 0.4)",
            lambda: sorted(_recs_population.PROPENSITY_PRESETS),
        ),
        *(
            Option(
                f"propensity_{name}",
                "number",
                None,
                f"psp, psr: the formula's {name.upper()} (default: the preset's)",
                flag=Flag("finite"),
            )
            for name in "ab"
        ),
        Option(
            "population_convention",
            "string",
            "clayrs",
            "beyond-accuracy metrics as ClayRS 0.5.1, RecBole 1.2.1, Microsoft Recommenders "
            "or Elliot compute them",
            lambda: sorted(_recs_population.POPULATION_PRESETS),
        ),
        Option(
            "tail_ratio",
            "number",
            None,
            "long tail of tail_percentage: <= 1 the least popular share of items, > 1 a count "
            "(RecBole's; default 0.1)",
        ),
        Option(
            "original_ratings",
            "string",
            None,
            "the item popularity of delta_gap, pop_ratio and popularity_correlation: a file "
            "with user_id, item_id (default: --train)",
            path=True,
        ),
        Option(
            "user_groups",
            "strings",
            None,
            "delta_gap's and pop_ratio's user groups by popularity ratio, e.g. "
            "popular=0.2,diverse=0.8",
            flag=Flag("names"),
        ),
        Option(
            "pop_percentage",
            "number",
            0.2,
            "delta_gap, pop_ratio: the share of items that are the most popular (ClayRS's "
            "pop_percentage)",
        ),
        *population_bootstrap_options(
            "gini, coverage, entropy, avg_popularity, tail_percentage, delta_gap, pop_ratio",
            "the users",
        ),
        *cohort_options("users", "user_id"),
        Option("beta", "number", FROM_PRESET, preset=True, flag=None),
        Option("all_nan_error_metrics", "strings", FROM_PRESET, preset=True, flag=None),
        Option("require_same_users", "boolean", FROM_PRESET, preset=True, flag=None),
        Option("unweighted", "boolean", FROM_PRESET, preset=True, flag=None),
    ),
    lambda: _recs.RECS_PRESETS,
    lambda v: _recs.resolve_convention(v["convention"], **RECS.overrides(v)),
    {
        "clayrs": "ClayRS 0.5.1: relevant >= the user's mean rating",
        "relison": "RELISON / RankSys 0.4.3: every rated item relevant",
        "relison_unweighted": "as relison, every rating read as 1",
        "ir_measures": "ir_measures 0.4.3: as trec_eval, a user without a list scoring 0",
        "trec_eval": "trec_eval 10.0 / pytrec_eval: relevant >= 1",
        "ranx": "ranx 0.3.21: relevant >= 1, ties as its Numba sort, a list read as a dict",
    },
    ("users",),
    _recs.INPUT_COLUMNS,
    units="users",
)
