"""Next-location metrics: names, options and convention presets (conventions are data).

A metric name is lowercase ``name@5`` (one cutoff), ``name@k`` (every requested k) or a bare
``mrr``, ``map``, ``ndcg`` (no cutoff). ``DEFAULT_METRICS``: every top-K metric at every k, and
``mrr``.

Where reference systems disagree, the difference is an option of :class:`NextlocConvention`, and a
preset is a named bundle of options (see ``docs/conventions.md``):

=============  ===========  =========  =================  ======================  ==========
preset         ties         f1         samples w/o preds  k > #candidates         duplicates
=============  ===========  =========  =================  ======================  ==========
``mobeval``    id_asc       aggregate  miss (counted)     allowed                 error
``libcity``    id_asc (*)   aggregate  miss (counted)     error (LibCity raises)  error
``trec_eval``  id_desc_str  mean       skipped            allowed                 error
``ranx``       ranx         mean       miss (counted)     allowed                 drop
=============  ===========  =========  =================  ======================  ==========

(*) LibCity takes the top K with ``torch.topk``, whose order among tied scores is implementation
defined; on tie-free scores every tie policy gives LibCity's numbers. ``id_asc`` is our
deterministic stand-in, and the per-sample rank always lies between the optimistic and pessimistic
bounds. ``ranx`` is the order a freshly built ranx ``Run`` gets from Numba's sort (the input order
on lists of up to 15 items; see :mod:`mobeval.kernels.ranks`). ``duplicates``: a location twice in
one sample's list is an error (trec_eval refuses duplicate docnos), or (``drop``) the list is read
as a dict filled row by row, as ranx holds a run (see :class:`NextlocConvention`).
"""

from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mobeval.errors import ConfigError
from mobeval.kernels import codes

if TYPE_CHECKING:
    import numpy as np

TIE_POLICIES = {
    "id_asc": codes.ID_ASC,
    "id_asc_str": codes.ID_ASC_STR,
    "id_desc_str": codes.ID_DESC_STR,
    "input": codes.INPUT,
    "ranx": codes.RANX,
    "ranx_comparable": codes.RANX_COMPARABLE,
    "ranx_dict": codes.RANX_DICT,
    "optimistic": codes.OPTIMISTIC,
    "pessimistic": codes.PESSIMISTIC,
    "average": codes.AVERAGE,
}

#: Tie policies that read a sample's candidates in their input order.
INPUT_ORDER_TIES = frozenset({"input", "ranx", "ranx_comparable", "ranx_dict"})

CUTOFF_METRICS = {
    "acc": codes.ACC,
    "precision": codes.PRECISION,
    "recall": codes.RECALL,
    "f1": codes.F1,
    "mrr": codes.MRR,
    "map": codes.MAP,
    "ndcg": codes.NDCG,
}
#: The values of each choice of :class:`NextlocConvention` besides ``ties`` (see its fields).
F1 = ("aggregate", "mean")
MISSING = ("miss", "skip")
K_BEYOND_LIST = ("allow", "error")
DUPLICATES = ("error", "drop")
#: The columns the family reads (long form: one row per candidate; wide: lists per sample).
CANONICAL = ("location", "score", "rank", "locations", "scores")
#: Those each input reads: the truth a location per sample, the predictions any of them.
INPUT_COLUMNS = {"truth": ("location",), "pred": CANONICAL}
#: What ranks long-form predictions with both a score and a rank (``order_by``).
ORDER_CHOICES = ("auto", "score", "rank")
#: Predictions whose sample is not in the truth: an error, or dropped and counted.
UNMATCHED = ("error", "drop")

UNCUT_METRICS = {"mrr": codes.MRR, "map": codes.MAP, "ndcg": codes.NDCG}
#: How a metric's city value is made from its per-sample values, per metric code: ``"mean"`` (the
#: mean over the samples counted: every metric not listed), or ``"hits"``: under
#: ``NextlocConvention.f1 == "aggregate"``, 2 P R / (P + R) of the mean precision and recall, both
#: from the summed hits at the same cutoff (LibCity's F1@k; the mean under ``f1="mean"``).
AGGREGATION = {codes.F1: "hits"}
DEFAULT_METRICS = ("acc@k", "precision@k", "recall@k", "f1@k", "mrr@k", "map@k", "ndcg@k", "mrr")


def _check_choice(option: str, value: object, allowed) -> None:
    if value not in allowed:
        raise ConfigError(f"{option}={value!r} is not one of {sorted(allowed)}")


@dataclass(frozen=True)
class NextlocConvention:
    """Documented options on which next-location evaluators differ.

    Attributes:
        ties: how candidates with the same score are ordered (see ``mobeval.kernels.ranks``).
        f1: ``"aggregate"``: F1@k = 2 P R / (P + R) of the averaged precision and recall (LibCity);
            ``"mean"``: the mean of per-sample F1 (ranx). Equal up to rounding with one true item.
        missing: samples in the truth without predictions: ``"miss"`` counts them, every metric 0
            (LibCity, ranx); ``"skip"`` leaves them out of the averages (trec_eval averages over
            queries present in both run and qrels). Their number is reported either way.
        k_beyond_list: ``"allow"`` or ``"error"`` when k exceeds a sample's number of candidates
            (LibCity's ``topk`` raises when K is larger than the number of locations).
        duplicates: a location twice in one sample's list: ``"error"`` (trec_eval refuses
            duplicate docnos) or ``"drop"``: the list as a dict filled row by row holds it
            (``d[location] = score``: ranx's ``Run``, pytrec_eval, ir_measures), one entry per
            location with the score (or rank) of its LAST row at the place of its FIRST row; the
            later copies vanish, the locations after them move up, and ``n_candidates`` counts
            distinct locations. A list without scores is ranked by place (the first copy's).
    """

    ties: str = "id_asc"
    f1: str = "aggregate"
    missing: str = "miss"
    k_beyond_list: str = "allow"
    duplicates: str = "error"

    def __post_init__(self) -> None:
        _check_choice("ties", self.ties, TIE_POLICIES)
        _check_choice("f1", self.f1, F1)
        _check_choice("missing", self.missing, MISSING)
        _check_choice("k_beyond_list", self.k_beyond_list, K_BEYOND_LIST)
        _check_choice("duplicates", self.duplicates, DUPLICATES)


PRESETS = {
    "mobeval": NextlocConvention(),
    "libcity": NextlocConvention(k_beyond_list="error"),
    "trec_eval": NextlocConvention(ties="id_desc_str", f1="mean", missing="skip"),
    "ranx": NextlocConvention(ties="ranx", f1="mean", duplicates="drop"),
}


def resolve_convention(preset: str = "mobeval", **overrides: str | None) -> NextlocConvention:
    """The preset's options, with any non-None override applied (``ties="pessimistic"``...)."""
    if preset not in PRESETS:
        raise ConfigError(f"unknown convention {preset!r}; choose one of {sorted(PRESETS)}")
    changes = {name: value for name, value in overrides.items() if value is not None}
    return dataclasses.replace(PRESETS[preset], **changes)


@dataclass(frozen=True)
class MetricColumns:
    """The per-sample metric columns a request expands to, in output order."""

    names: tuple[str, ...]
    metric_codes: np.ndarray  # int64, mobeval.kernels.topk metric ids
    cutoffs: np.ndarray  # int64, codes.NO_CUTOFF for none

    def aggregation(self, j: int, convention: NextlocConvention) -> str:
        """How column ``j``'s city value is made under ``convention`` (see AGGREGATION)."""
        way = AGGREGATION.get(int(self.metric_codes[j]), "mean")
        return way if way != "hits" or convention.f1 == "aggregate" else "mean"

    @property
    def max_cutoff(self) -> int:
        return int(self.cutoffs.max(initial=0))


def expand_metrics(metrics: list[str] | tuple[str, ...] | None, k: list[int] | tuple[int, ...]):
    """Expand metric names into columns: ``ndcg@k`` gives ``ndcg@1, ndcg@5, ...`` for every k,
    ``ndcg@20`` is taken as written, a bare ``mrr`` / ``map`` / ``ndcg`` has no cutoff."""
    ks = _check_cutoffs(k)
    columns: dict[str, tuple[int, int]] = {}
    for raw in DEFAULT_METRICS if metrics is None else metrics:
        item = raw.strip().lower()
        base, at, cut = item.partition("@")
        if at and base in CUTOFF_METRICS:
            cutoffs = ks if cut == "k" else _check_cutoffs([_parse_int(cut, raw)])
            for cutoff in cutoffs:
                columns.setdefault(f"{base}@{cutoff}", (CUTOFF_METRICS[base], cutoff))
        elif not at and base in UNCUT_METRICS:
            columns.setdefault(base, (UNCUT_METRICS[base], codes.NO_CUTOFF))
        elif not at and base in CUTOFF_METRICS:
            raise ConfigError(f"metric {raw!r} needs a cutoff: {base}@k (every k) or {base}@10")
        else:
            known = [f"{m}@k" for m in CUTOFF_METRICS] + sorted(UNCUT_METRICS)
            raise ConfigError(f"unknown metric {raw!r}; known: {', '.join(known)}")
    if not columns:
        raise ConfigError("metrics: give at least one metric, e.g. acc@k,ndcg@k,mrr")
    import numpy as np  # the kernels' arrays: the options are checked without NumPy

    metric_codes = np.array([code for code, _ in columns.values()], dtype=np.int64)
    cutoffs_array = np.array([cutoff for _, cutoff in columns.values()], dtype=np.int64)
    return MetricColumns(tuple(columns), metric_codes, cutoffs_array)


#: The largest cutoff accepted (any k beyond a list's length gives the same values).
MAX_CUTOFF = 2**31 - 1


def _parse_int(text: str, context: str) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= 12):
        raise ConfigError(f"cutoff in {context!r} is not an integer from 1 to {MAX_CUTOFF}")
    return int(text)


def _check_cutoffs(k) -> list[int]:
    values = [k] if isinstance(k, int) else list(k)
    if not values:
        raise ConfigError("k: give at least one cutoff, e.g. --k 1,5,10")
    for value in values:
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"k must be integers >= 1, got {value!r}")
        if value > MAX_CUTOFF:
            raise ConfigError(f"k must be at most {MAX_CUTOFF}, got {value}")
    return [int(v) for v in values]
