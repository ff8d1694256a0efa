"""Logits metrics' names and conventions (conventions are data): the metric names and their
parser (:func:`parse_logits_metrics`), the tie policies, the convention dataclass and its presets,
read by :mod:`mobeval.families` and the option checks without the task or its kernels.

Ties: the target's rank among the classes with its score is set by a tie policy (:data:`TIES`):
``optimistic`` (first), ``pessimistic`` (last), ``index`` (lower class index first, a stable
descending sort), ``index_desc`` (higher class index first: scikit-learn's
``top_k_accuracy_score``) or ``average`` (every order of the tied classes equally likely: each
metric its expectation). The metrics and their formulas: :mod:`mobeval.tasks.logits`.
"""

from __future__ import annotations

import dataclasses
import numbers
import re
from collections.abc import Sequence
from dataclasses import dataclass

from mobeval.errors import ConfigError

TIES = ("optimistic", "pessimistic", "average", "index", "index_desc")
#: Each spelling of a metric family ``metrics`` takes.
_ALIASES = {
    "acc": "acc",
    "accuracy": "acc",
    "mrr": "mrr",
    "ndcg": "ndcg",
    "f1": "f1_weighted",
    "f1_weighted": "f1_weighted",
    "f1_macro": "f1_macro",
    "ce": "cross_entropy",
    "loss": "cross_entropy",
    "cross_entropy": "cross_entropy",
}
_NAME = re.compile(r"^\s*([a-z_0-9]+?)\s*(?:@\s*(\d{1,18}|k))?\s*$")


@dataclass(frozen=True)
class LogitsConvention:
    """Options on which classifier evaluators differ (conventions are data).

    Attributes:
        ties: tie policy (``TIES``) of ``acc@k`` and of the per-sample ``rank``.
        mrr_ties / ndcg_ties: the policy of ``mrr`` / ``ndcg@k``; None: ``ties``.
        binary: ``"rank"`` scores fewer than three classes like any other matrix; ``"error"``
            refuses ``acc@k`` there, as ``top_k_accuracy_score`` refuses a two-column score
            matrix (its binary case thresholds one score column at 0.5 or 0 instead of ranking).
    """

    ties: str = "optimistic"
    mrr_ties: str | None = None
    ndcg_ties: str | None = None
    binary: str = "rank"

    def __post_init__(self) -> None:
        for option in ("ties", "mrr_ties", "ndcg_ties"):
            value = getattr(self, option)
            if value is not None and value not in TIES:
                raise ConfigError(f"{option} must be one of {sorted(TIES)}, not {value!r}")
        if self.binary not in ("rank", "error"):
            raise ConfigError(f"binary must be 'rank' or 'error', not {self.binary!r}")

    def ties_of(self, family: str) -> str:
        """The tie policy of a metric family (``acc``, ``mrr``, ``ndcg``)."""
        own = {"mrr": self.mrr_ties, "ndcg": self.ndcg_ties}.get(family)
        return own or self.ties


#: ``sklearn``: ``top_k_accuracy_score`` (higher class index first among ties, two-column matrices
#: refused), ``label_ranking_average_precision_score`` on one-hot targets for ``mrr`` (its rank is
#: the number of scores >= the target's: pessimistic), ``ndcg_score`` on one-hot targets for
#: ``ndcg@k`` (``ignore_ties=False`` averages the gain over each tie group: the expectation).
PRESETS = {
    "mobeval": LogitsConvention(),
    "sklearn": LogitsConvention(
        ties="index_desc", mrr_ties="pessimistic", ndcg_ties="average", binary="error"
    ),
}


def resolve_logits_convention(
    convention: str | LogitsConvention = "mobeval", ties: str | None = None
) -> LogitsConvention:
    """The preset (or a :class:`LogitsConvention`); ``ties`` overrides every family's policy."""
    if isinstance(convention, LogitsConvention):
        base = convention
    elif convention in PRESETS:
        base = PRESETS[convention]
    else:
        raise ConfigError(
            f"unknown logits convention {convention!r}; choose one of {sorted(PRESETS)}"
        )
    if ties is None:
        return base
    if ties not in TIES:
        raise ConfigError(f"ties must be one of {sorted(TIES)}, not {ties!r}")
    return dataclasses.replace(base, ties=ties, mrr_ties=None, ndcg_ties=None)


def parse_logits_metrics(metrics: str | Sequence[str] | None, k: Sequence[int]) -> list[str]:
    """Output names in order: ``acc`` and ``ndcg`` (or ``acc@k``, ``ndcg@k``) expand over ``k``;
    ``acc@3`` is one cutoff."""
    ks = [_check_k(v) for v in k]
    if metrics is None:
        names = ["acc", "mrr", "ndcg", "f1_weighted", "f1_macro", "cross_entropy"]
    else:
        names = metrics.split(",") if isinstance(metrics, str) else list(metrics)
    out: dict[str, None] = {}
    for raw in names:
        m = _NAME.match(str(raw).lower())
        family = _ALIASES.get(m.group(1)) if m else None
        if family is None:
            raise ConfigError(f"unknown logits metric {raw!r}; known: {sorted(_ALIASES)}")
        if family in ("acc", "ndcg"):
            cut = m.group(2)
            for kk in [_check_k(int(cut))] if cut and cut != "k" else ks:
                out[f"{family}@{kk}"] = None
        elif m.group(2):
            raise ConfigError(f"{family} takes no cutoff: {raw!r}")
        else:
            out[family] = None
    if not out:
        raise ConfigError("no metric requested")
    return list(out)


def _check_k(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ConfigError(f"k must be an integer >= 1, not {k!r}")
    if k > 2**31 - 1:  # beyond every row's classes; the cutoffs go to int64 arrays
        raise ConfigError(f"k must be at most {2**31 - 1}, not {k}")
    return int(k)
