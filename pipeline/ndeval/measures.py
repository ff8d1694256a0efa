"""ir_measures' names of ndeval's measures (terrierteam/ir_measures 0.4.3, its pyndeval
provider): ``alpha_nDCG(rel=1, alpha=0.5)@k``, ``alpha_DCG@k``, ``ERR_IA@k``, ``nERR_IA@k``,
``P_IA@k``, ``StRecall@k`` (cutoffs 1 to 20, pyndeval's), ``AP_IA`` (``MAP_IA``),
``NRBP(rel=1, alpha=0.5, beta=0.5)`` and ``nNRBP``, each read as the ndeval column it asks
pyndeval for."""

from __future__ import annotations

from dataclasses import dataclass

from mobeval.errors import ConfigError
from mobeval.metrics.ir_measures import split_name
from mobeval.tasks.diversity import DEPTH

#: ir_measures' name -> (ndeval's column, the parameters it takes, whether it takes a cutoff).
NAMES = {
    "alpha_nDCG": ("alpha-nDCG", frozenset({"rel", "alpha", "judged_only"}), True),
    "alpha_DCG": ("alpha-DCG", frozenset({"rel", "alpha", "judged_only"}), True),
    "ERR_IA": ("ERR-IA", frozenset({"rel", "judged_only"}), True),
    "nERR_IA": ("nERR-IA", frozenset({"rel", "judged_only"}), True),
    "P_IA": ("P-IA", frozenset({"rel", "judged_only"}), True),
    "StRecall": ("strec", frozenset({"rel"}), True),
    "AP_IA": ("MAP-IA", frozenset({"rel", "judged_only"}), False),
    "NRBP": ("NRBP", frozenset({"rel", "alpha", "beta"}), False),
    "nNRBP": ("nNRBP", frozenset({"rel", "alpha", "beta"}), False),
}
ALIASES = {"α_nDCG": "alpha_nDCG", "α_DCG": "alpha_DCG", "MAP_IA": "AP_IA"}


@dataclass(frozen=True)
class DiversityMeasure:
    """One ir_measures name: ndeval's ``column`` (at ``cutoff``), its relevance ``level``,
    ``alpha`` and ``beta``; ``label`` as spelled."""

    label: str
    column: str
    cutoff: int | None
    level: int
    alpha: float
    beta: float


def parse_measure(text: str) -> DiversityMeasure:
    """``text`` as an ir_measures diversity measure; ConfigError naming what is wrong."""
    word, params, cutoff = split_name(text)
    name = ALIASES.get(word, word)
    if name not in NAMES:
        raise ConfigError(f"-m {text}: not an ir_measures diversity measure ({', '.join(NAMES)})")
    column, allowed, has_cutoff = NAMES[name]
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ConfigError(f"-m {text}: {name} takes {sorted(allowed)}, not {', '.join(unknown)}")
    if params.get("judged_only", False) is not False:
        raise ConfigError(
            f"-m {text}: judged_only=True is not computed (ir_measures 0.4.3's pyndeval provider "
            "fails on it, so there is no value to reproduce)"
        )
    if has_cutoff and not (cutoff and cutoff.isdigit() and 1 <= int(cutoff) <= DEPTH):
        raise ConfigError(f"-m {text}: {name} needs a cutoff from 1 to {DEPTH} (pyndeval's)")
    if not has_cutoff and cutoff is not None:
        raise ConfigError(f"-m {text}: {name} takes no cutoff")
    level = params.get("rel", 1)
    if isinstance(level, bool) or not isinstance(level, int):
        raise ConfigError(f"-m {text}: rel must be an integer relevance level, not {level!r}")
    numbers = {key: params.get(key, 0.5) for key in ("alpha", "beta")}
    for key, value in numbers.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"-m {text}: {key} must be a number, not {value!r}")
    return DiversityMeasure(
        text.strip(),
        column,
        int(cutoff) if has_cutoff else None,
        level,
        float(numbers["alpha"]),
        float(numbers["beta"]),
    )
