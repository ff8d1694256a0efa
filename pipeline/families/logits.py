"""The logits family: class scores per sample against the target class."""

from __future__ import annotations

from mobeval.families.family import Family
from mobeval.families.shared import PRESET_HELP, columns_option, cutoffs_option, metrics_option
from mobeval.io.columns import TARGETS_COLUMN
from mobeval.metrics import logits as _logits
from mobeval.option_types import Flag, Option

LOGITS = Family(
    "logits",
    "logits scoring",
    "targets",
    "logits",
    (
        cutoffs_option("cutoffs of the metrics named @k"),
        metrics_option(
            None,
            "any of acc@k, mrr, ndcg@k, f1_weighted, f1_macro, cross_entropy (default: all)",
            single=True,
        ),
        Option(
            "convention",
            "string",
            "mobeval",
            PRESET_HELP,
            lambda: sorted(_logits.PRESETS),
            python="convention",
        ),
        Option(
            "ties",
            "string",
            None,
            "rank of a target tied with other classes; overrides the convention's",
            lambda: sorted(_logits.TIES),
            preset=True,
        ),
        Option(
            "percent",
            "boolean",
            False,
            "rates in percent, as papers do",
            flag=Flag(switch="--percent", on=True),
        ),
        Option(
            "ignore_target",
            "integer",
            None,
            "a padding class whose rows are left out (default: none)",
            flag=Flag("int"),
        ),
        columns_option(
            ("logits", TARGETS_COLUMN),
            ("targets", "logits"),
            "logits=probs,target=y",
            key=False,
        ),
        Option("logits_column", "string", "logits", "Parquet logits column", defines=False),
        Option(
            "targets_column",
            "string",
            TARGETS_COLUMN,
            "Parquet targets column",
            defines=False,
        ),
    ),
    lambda: _logits.PRESETS,
    lambda v: _logits.resolve_logits_convention(v["convention"], v["ties"]),
    {
        "mobeval": "--ties (optimistic) for every metric",
        "sklearn": "scikit-learn's tie rule per metric (top_k_accuracy_score, ndcg_score...)",
    },
    (),
    {"truth": (TARGETS_COLUMN,), "pred": ("logits", TARGETS_COLUMN)},  # theirs: a column
)
