"""ir_measures' measure names (``nDCG@10``, ``P(rel=2)@5``, ``AP(rel=2)``, ``R@100``...) read as
trec_eval measures of the recommendation family.

ir_measures (MacAvaney, Macdonald & Ounis, ECIR 2022; terrierteam/ir_measures 0.4.3) writes a
measure ``Name(param=value, ...)@cutoff`` and computes most of them with pytrec_eval, which is
trec_eval: :data:`TREC_EQUIVALENTS` maps each such measure to the trec_eval measure its
pytrec_eval provider asks for (``providers/pytrec_eval_provider.py``), ``rel`` to trec_eval's
``-l`` (default 1, ir_measures' own, whatever the convention's ``relevant_threshold``) and
``judged_only=True`` to ``-J``. ``Judged`` and ``RR@k``, which ir_measures computes with its own
Python providers (judged, msmarco), are :data:`~mobeval.metrics.trec.PROVIDER_MEASURES`:
their lists ranked with ties by docno ascending, as those providers sort. The values are those
of :mod:`mobeval.kernels.trec`, reported under the name as the user spelled it.
:data:`UNSUPPORTED` says why the others are refused.
"""

from __future__ import annotations

import ast
import re

from mobeval.errors import ConfigError
from mobeval.metrics.trec import TrecMetric, trec_metrics

#: ir_measures name -> (the trec_eval measure: a function of the cutoff, or of the parameters
#: for the set measures; the parameters ir_measures lets it take; whether a cutoff is needed).
TREC_EQUIVALENTS: dict[str, tuple[str, str, frozenset[str]]] = {
    # name: (trec_eval name without a cutoff, with a cutoff "{k}", parameters)
    "P": ("", "P_{k}", frozenset({"rel", "judged_only"})),
    "R": ("", "recall_{k}", frozenset({"rel", "judged_only"})),
    "AP": ("map", "map_cut_{k}", frozenset({"rel", "judged_only"})),
    "RR": ("recip_rank", "", frozenset({"rel", "judged_only"})),
    "nDCG": ("ndcg", "ndcg_cut_{k}", frozenset({"judged_only", "dcg", "gains"})),
    "Rprec": ("Rprec", "", frozenset({"rel", "judged_only"})),
    "Bpref": ("bpref", "", frozenset({"rel"})),
    "infAP": ("infAP", "", frozenset({"rel"})),
    "Success": ("", "success_{k}", frozenset({"rel", "judged_only"})),
    "IPrec": ("", "iprec_at_recall_{k}", frozenset({"rel", "judged_only"})),
    "NumRet": ("num_ret", "", frozenset({"rel"})),
    "NumRelRet": ("num_rel_ret", "", frozenset({"rel"})),
    "NumRel": ("num_rel", "", frozenset({"rel"})),
    "SetP": ("set_P", "", frozenset({"rel", "relative", "judged_only"})),
    "SetR": ("set_recall", "", frozenset({"rel"})),
    "SetAP": ("set_map", "", frozenset({"rel", "judged_only"})),
    "SetF": ("set_F", "", frozenset({"rel", "beta", "judged_only"})),
}
#: ir_measures name -> (the provider measure, the parameters it takes), when it has a cutoff
#: (``Judged`` without one: the whole list; ``ERR`` needs one, as its gdeval provider).
PROVIDER_EQUIVALENTS = {
    "Judged": ("judged", frozenset()),
    "RR": ("rr_cut", frozenset({"rel"})),
    "ERR": ("err_cut", frozenset()),
}
#: ir_measures' other spellings of the same measures.
ALIASES = {
    "Precision": "P",
    "Recall": "R",
    "MAP": "AP",
    "MRR": "RR",
    "NDCG": "nDCG",
    "BPref": "Bpref",
    "RPrec": "Rprec",
    "SetRelP": "SetP",
}
_OTHER_PROVIDERS = "computed by another provider than pytrec_eval, with conventions of its own"
#: ir_measures' measures mobeval does not compute, and why.
UNSUPPORTED = {
    "RBP": "cwl_eval's rank-biased precision (mobeval's trec_eval `rbp` is trec_eval's)",
    "NumQ": "the summary's users row counts the users",
    "Accuracy": _OTHER_PROVIDERS,
    "Compat": _OTHER_PROVIDERS,
    "BPM": _OTHER_PROVIDERS,
    "SDCG": _OTHER_PROVIDERS,
    "INST": _OTHER_PROVIDERS,
    "INSQ": _OTHER_PROVIDERS,
    **{
        name: "a diversity measure of subtopic judgments: mobeval ndeval -m computes it"
        for name in ("alpha_nDCG", "alpha_DCG", "α_nDCG", "α_DCG", "NRBP", "nNRBP", "StRecall")
    },
    **{
        name: "an intent-aware measure of subtopic judgments: mobeval ndeval -m computes it"
        for name in ("P_IA", "AP_IA", "MAP_IA", "ERR_IA", "nERR_IA")
    },
    **{name: _OTHER_PROVIDERS for name in ("NERR8", "NERR9", "NERR10", "NERR11")},
}
_SYNTAX = re.compile(r"^\s*([^\W\d]\w*)\s*(?:\((.*)\))?\s*(?:@\s*([^\s@]+))?\s*$")


def _parameters(text: str, spelled: str) -> dict[str, object]:
    """``rel=2, judged_only=True``, ``gains={0: 1, 1: 4}`` -> a dict (each value a Python
    literal), read as the keyword arguments of a call."""
    try:
        call = ast.parse(f"f({text})", mode="eval").body
        if call.args:
            raise ValueError(ast.unparse(call.args[0]))
        params = {}
        for keyword in call.keywords:
            if keyword.arg is None or keyword.arg in params:
                raise ValueError(ast.unparse(keyword))
            try:
                params[keyword.arg] = ast.literal_eval(keyword.value)
            except ValueError:
                raise ValueError(ast.unparse(keyword)) from None
    except (ValueError, SyntaxError) as error:
        part = error.args[0] if isinstance(error, ValueError) and error.args else text
        raise ConfigError(f"{spelled}: cannot read the parameter {part!r} (e.g. rel=2)") from None
    return params


def split_name(text: str) -> tuple[str, dict[str, object], str | None]:
    """``Name(param=value, ...)@cutoff`` -> (name, parameters, cutoff text or None);
    ConfigError when ``text`` is not written so."""
    match = _SYNTAX.match(text)
    if match is None:
        raise ConfigError(f"{text}: not an ir_measures name (Name(param=value)@cutoff)")
    word, inside, cutoff = match.groups()
    return word, _parameters(inside or "", text), cutoff


def ir_measures_metrics(text: str) -> list[TrecMetric] | None:
    """The trec_eval measure an ir_measures name asks for, labelled as spelled, or None when
    ``text`` is not an ir_measures name (case-sensitive: ``nDCG@10`` is one, ``ndcg@10`` is
    mobeval's own). ConfigError for a measure mobeval does not compute (the reason said) or a
    parameter the measure does not take."""
    match = _SYNTAX.match(text)
    if match is None:
        return None
    word, inside, cutoff = match.groups()
    if word in UNSUPPORTED:
        raise ConfigError(f"{text}: ir_measures' {word} is not supported ({UNSUPPORTED[word]})")
    name = ALIASES.get(word, word)
    if name == "ERR" and cutoff is None:
        raise ConfigError(f"{text}: ir_measures' ERR needs a cutoff (ERR@20), as gdeval's -k")
    if name in PROVIDER_EQUIVALENTS and (cutoff is not None or name == "Judged"):
        return [_provider_metric(text, name, _parameters(inside or "", text), cutoff)]
    if name not in TREC_EQUIVALENTS:
        return None
    plain, cut, allowed = TREC_EQUIVALENTS[name]
    params = _parameters(inside or "", text)
    if word == "SetRelP":
        params.setdefault("relative", True)
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ConfigError(
            f"{text}: ir_measures' {name} takes {sorted(allowed)}, not {', '.join(unknown)}"
        )
    if params.get("dcg", "log2") != "log2":
        raise ConfigError(
            f"{text}: only dcg='log2' is trec_eval's nDCG (ir_measures computes "
            f"dcg={params['dcg']!r} with another provider)"
        )
    if cutoff is None and not plain and not inside:
        return None  # P, R: mobeval's own names (ir_measures' need a cutoff)
    if cutoff is None and not plain:
        raise ConfigError(f"{text}: ir_measures' {name} needs a cutoff ({name}@10)")
    if cutoff is not None and not cut:
        raise ConfigError(f"{text}: ir_measures' {name} takes no cutoff in trec_eval")
    trec = cut.format(k=cutoff) if cutoff is not None else plain
    if name == "SetP" and params.get("relative"):
        trec = "set_relative_P"
    if name == "SetF" and "beta" in params:
        trec = f"set_F.{params['beta']}"
    level = _level(text, params)
    judged_only = params.get("judged_only", False)
    if not isinstance(judged_only, bool):
        raise ConfigError(f"{text}: judged_only must be True or False, not {judged_only!r}")
    if name == "NumRet" and "rel" in params:  # NumRet(rel=r): the relevant ones retrieved
        trec = "num_rel_ret"
    gains = _gains(text, params.get("gains"))
    (metric,) = trec_metrics(trec)
    return [
        TrecMetric(
            metric.name,
            metric.kind,
            metric.params,
            metric.printable,
            label=text.strip(),
            level=level,
            judged_only=judged_only,
            gains=gains,
            default=0.0,
        )
    ]


def _gains(text: str, gains: object) -> tuple[tuple[int, int], ...] | None:
    """nDCG's ``gains``: ir_measures maps each judged level to its gain (int to int; a level
    not listed keeps its own) before pytrec_eval reads the qrels."""
    if gains is None:
        return None
    pairs = gains.items() if isinstance(gains, dict) else [(None, None)]
    if not all(type(k) is int and type(v) is int for k, v in pairs):
        raise ConfigError(f"{text}: gains maps levels to gains, integers ({{0: 1, 1: 4}})")
    return tuple(sorted(gains.items()))


def _level(text: str, params: dict[str, object]) -> int:
    """The relevance level ``rel`` (default 1), an integer."""
    level = params.get("rel", 1)
    if isinstance(level, bool) or not isinstance(level, int):
        raise ConfigError(f"{text}: rel must be an integer relevance level, not {level!r}")
    return level


def _provider_metric(text: str, name: str, params: dict[str, object], cutoff) -> TrecMetric:
    """``Judged[@k]``, ``RR[(rel=r)]@k`` or ``ERR@k``, as ir_measures' judged, msmarco and gdeval
    providers compute them (:data:`~mobeval.metrics.trec.PROVIDER_MEASURES`): the first two on
    lists with ties by docno ascending, as those providers sort; ERR as ``gdeval.pl`` sorts
    (trec_eval's order, ties by docno descending)."""
    measure, allowed = PROVIDER_EQUIVALENTS[name]
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ConfigError(
            f"{text}: ir_measures' {name}@k ({measure}) takes {sorted(allowed) or 'no parameter'}"
            f", not {', '.join(unknown)}"
        )
    k = 0
    if cutoff is not None:
        k = int(cutoff) if cutoff.isdigit() else 0
        if not 1 <= k < 2**63:
            raise ConfigError(f"{text}: the cutoff of {name} is a whole number from 1 to 2^63-1")
    level = _level(text, params)
    if level < 0:  # trec_eval's judgments hold no negative level (they are unjudged)
        raise ConfigError(f"{text}: rel must be >= 0 for {name}@k")
    return TrecMetric(
        measure,
        "long_cut",
        (k,),
        None,
        label=text.strip(),
        level=level,
        docno_ascending=measure != "err_cut",
        default=0.0,
    )
