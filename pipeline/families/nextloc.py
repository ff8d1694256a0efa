"""The next-location family: top-K lists against the true next location (LibCity, ranx...)."""

from __future__ import annotations

from mobeval.families.family import Family
from mobeval.families.shared import (
    PRESET_HELP,
    cohort_options,
    columns_option,
    cutoffs_option,
    error_unless_option,
    metrics_option,
)
from mobeval.metrics import nextloc as _nextloc
from mobeval.option_types import Flag, Option

NEXTLOC = Family(
    "nextloc",
    "next-location scoring",
    "truth",
    "predictions",
    (
        cutoffs_option("cutoffs of the metrics named @k", single=True),
        metrics_option(None, "e.g. acc@k,ndcg@k,mrr (default: every top-K metric and mrr)"),
        Option("convention", "string", "mobeval", PRESET_HELP, lambda: sorted(_nextloc.PRESETS)),
        Option(
            "ties",
            "string",
            None,
            "override the convention's tie policy",
            lambda: sorted(_nextloc.TIE_POLICIES),
            preset=True,
        ),
        Option(
            "f1",
            "string",
            None,
            "f1@k: aggregate (2PR/(P+R) of the mean P and R, LibCity's) or mean (of each "
            "sample's F1, ranx's and trec_eval's)",
            _nextloc.F1,
            preset=True,
        ),
        Option(
            "missing",
            "string",
            None,
            "a truth sample without predictions: miss (every metric 0) or skip (left out of "
            "the means, as trec_eval); counted either way",
            _nextloc.MISSING,
            preset=True,
        ),
        Option(
            "k_beyond_list",
            "string",
            None,
            "a k larger than a sample's list: allow, or error (as LibCity's torch.topk)",
            _nextloc.K_BEYOND_LIST,
            preset=True,
        ),
        Option(
            "duplicates",
            "string",
            None,
            "a location twice in one list: error, or drop (one entry per location, the last "
            "row's score at the first row's place, as ranx's dict-based run; the ranx preset's)",
            _nextloc.DUPLICATES,
            preset=True,
        ),
        Option(
            "key",
            "key",
            "sample_id",
            "key column(s), e.g. uid,d,t",
            flag=Flag("names", ["sample_id"]),
        ),
        columns_option(
            _nextloc.CANONICAL,
            ("truth", "predictions"),
            "location=poi,pred.score=logit",
            key=True,
        ),
        Option(
            "order_by",
            "string",
            "auto",
            "what ranks long-form predictions with both a score and a rank (auto: the score)",
            lambda: _nextloc.ORDER_CHOICES,
        ),
        error_unless_option(
            "unmatched",
            "drop (and count) predictions whose sample is not in the truth",
            lambda: _nextloc.UNMATCHED,
            "--drop-unmatched",
            "drop",
            defines=False,
        ),
        *cohort_options("samples (or uids)", "sample_id or uid"),
    ),
    lambda: _nextloc.PRESETS,
    lambda v: _nextloc.resolve_convention(v["convention"], **NEXTLOC.overrides(v)),
    {
        "mobeval": "ties by location id, F1 of the mean P and R, misses counted",
        "libcity": "LibCity: as mobeval, a k beyond a list is an error",
        "trec_eval": "trec_eval: ties by docno string (desc.), mean F1, misses skipped",
        "ranx": "ranx 0.3.21: Numba's sort on ties, mean F1, repeats dropped",
    },
    ("samples", "samples_without_predictions", "predictions_without_truth_dropped"),
    _nextloc.INPUT_COLUMNS,
)
