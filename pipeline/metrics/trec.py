"""trec_eval's measures: their names and order, the nicknames (``official``, ``all_trec``,
``set``), each measure's parameters (``-m P.5,10``) checked and resolved."""

from __future__ import annotations

from dataclasses import dataclass

from mobeval.errors import ConfigError
from mobeval.io.numbers import c_atof, c_atol, c_int, c_merge_sorted

LONG_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
FRACTIONS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
R_MULTIPLES = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

#: name -> (parameter kind, default parameters), in trec_eval's order of measures.
MEASURES: dict[str, tuple[str, tuple]] = {
    "runid": ("none", ()),
    "num_q": ("none", ()),
    "num_ret": ("none", ()),
    "num_rel": ("none", ()),
    "num_rel_ret": ("none", ()),
    "map": ("none", ()),
    "gm_map": ("none", ()),
    "Rprec": ("none", ()),
    "bpref": ("none", ()),
    "recip_rank": ("none", ()),
    "iprec_at_recall": ("double_cut", FRACTIONS),
    "P": ("long_cut", LONG_CUTS),
    "relstring": ("double", (10.0,)),
    "recall": ("long_cut", LONG_CUTS),
    "infAP": ("none", ()),
    "gm_bpref": ("none", ()),
    "Rprec_mult": ("double_cut", R_MULTIPLES),
    "utility": ("double", (1.0, -1.0, 0.0, 0.0)),
    "11pt_avg": ("double", FRACTIONS),
    "binG": ("none", ()),
    "G": ("pair", ()),
    "dcg": ("pair", ()),
    "ideal_dcg": ("pair", ()),
    "ndcg": ("pair", ()),
    "ndcg_rel": ("pair", ()),
    "Rndcg": ("pair", ()),
    "ndcg_cut": ("long_cut", LONG_CUTS),
    "map_cut": ("long_cut", LONG_CUTS),
    "relative_P": ("long_cut", LONG_CUTS),
    "success": ("long_cut", (1, 5, 10)),
    "set_P": ("none", ()),
    "set_relative_P": ("none", ()),
    "set_recall": ("none", ()),
    "set_map": ("none", ()),
    "set_F": ("double", (1.0,)),
    "num_nonrel_judged_ret": ("none", ()),
    "map_avgjg": ("none", ()),
    "P_avgjg": ("long_cut", LONG_CUTS),
    "Rprec_mult_avgjg": ("double_cut", R_MULTIPLES),
    "rbp": ("pair", ()),
    "rbp_resid": ("pair", ()),
    "unj": ("long_cut", (5, 10, 20)),
}
OFFICIAL = [
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
]
NICKNAMES = {
    "official": OFFICIAL,
    "all_trec": OFFICIAL
    + [
        "relstring",
        "recall",
        "unj",
        "rbp",
        "rbp_resid",
        "infAP",
        "gm_bpref",
        "utility",
        "11pt_avg",
        "ndcg",
        "relative_P",
        "Rprec_mult",
        "success",
        "map_cut",
        "ndcg_cut",
        "ndcg_rel",
        "Rndcg",
        "binG",
        "G",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
        "num_nonrel_judged_ret",
    ],
    "qrels_jg": ["runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"],
    "set": [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "utility",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
    ],
}
COUNTS = {"num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}


@dataclass
class Measure:
    name: str
    kind: str
    params: tuple
    printable: str | None  # the parameter text given with -m, None for the defaults


def _long_params(name: str, text: str) -> tuple:
    """trec_eval's ``get_long_cutoffs``: each comma-separated part read by C's ``atol``
    (``23.4`` -> 23, ``abc`` -> 0), ordered by glibc's ``qsort`` with trec_eval's ``comp_long``
    (the difference cut to ``int``), then refused as trec_eval refuses them: a first cutoff
    below 1 or two equal neighbours."""
    values = [c_atol(part) for part in text.split(",")]
    values = c_merge_sorted(values, lambda a, b: c_int(a - b))
    if values[0] <= 0:
        raise ConfigError(
            f"-m {name}.{text}: cutoff {values[0]} is not positive (each read as C's atol "
            "reads it: '23.4' is 23, 'abc' 0; trec_eval: Negative cutoff detected)"
        )
    _refuse_neighbours(name, text, values)
    return tuple(values)


def _refuse_neighbours(name: str, text: str, values: list) -> None:
    """trec_eval's ``duplicate cutoffs detected``: two equal neighbours in the sorted cutoffs."""
    for a, b in zip(values, values[1:], strict=False):
        if a == b:
            raise ConfigError(f"-m {name}.{text}: duplicate cutoffs ({a} twice)")


def _double_params(name: str, text: str, *, sort: bool) -> tuple:
    """trec_eval's ``get_double_cutoffs`` (``sort``: ordered by ``qsort`` with ``comp_double``,
    two equal neighbours refused) or ``get_double_params`` (as given, any): each part read by
    C's ``atof`` (``.5`` -> 0.5, ``abc`` -> 0.0, ``1e400`` -> inf, ``nan``). ``utility`` takes
    exactly four (trec_eval stops on any other count)."""
    values = [c_atof(part) for part in text.split(",")]
    if name == "utility" and len(values) != 4:
        raise ConfigError(
            f"-m {name}.{text}: {len(values)} coefficients; utility takes 4 "
            "(trec_eval: improper number of coefficients)"
        )
    if sort:
        values = c_merge_sorted(values, lambda a, b: (a > b) - (a < b))
        _refuse_neighbours(name, text, values)
    return tuple(values)


def _pair_params(name: str, text: str) -> tuple:
    """trec_eval's ``get_param_pairs``: ``name=value`` parts, each value read by C's ``atof``;
    refused, as trec_eval refuses them, when a part has no ``=`` (or two in a row, or an empty
    part). A name is kept as text: the gain measures read those that are integers
    (``setup_gains``' ``valid_int``) and skip the others; rbp and rbp_resid read ``p`` too."""
    last = ","
    for char in text:
        if char in ",=":
            if char == last:
                last = ","
                break
            last = char
    if last != "=":
        raise ConfigError(
            f"-m {name}.{text}: malformed pair parameters (name=value, comma separated; "
            "trec_eval: malformed pair parameters)"
        )
    pairs = []
    for part in text.split(","):
        key, _, value = part.partition("=")
        pairs.append((key, c_atof(value)))
    return tuple(pairs)


def resolve_measures(requested: list[str]) -> list[Measure]:
    """``-m`` arguments -> the measures to compute, in trec_eval's order, each with the
    parameters of the first ``-m`` that gave its name some."""
    marked: set[str] = set()
    given: dict[str, str] = {}
    for item in requested or ["official"]:
        name, dot, text = item.partition(".")
        if dot and not text and name in (*NICKNAMES, *MEASURES):
            raise ConfigError(f"-m {item}: no parameters after the '.' (write -m {name})")
        if name in NICKNAMES:  # parameters of a set: trec_eval keeps them for no measure
            marked.update(NICKNAMES[name])
            continue
        if name not in MEASURES:
            known = ", ".join([*NICKNAMES, *MEASURES])
            raise ConfigError(f"-m {item}: unknown measure (known: {known})")
        marked.add(name)
        if dot and name not in given:
            given[name] = text
    measures = []
    for name, (kind, default) in MEASURES.items():
        if name not in marked:
            continue
        text = given.get(name)
        if text is None or kind == "none":
            params = default
        elif kind == "long_cut":
            params = _long_params(name, text)
        elif kind == "double_cut":
            params = _double_params(name, text, sort=True)
        elif kind == "double":
            params = _double_params(name, text, sort=False)
        else:
            params = _pair_params(name, text)
        measures.append(Measure(name, kind, params, text if kind != "none" else None))
    return measures


def measure_names(measure: Measure) -> list[str]:
    if measure.kind == "long_cut":
        return [f"{measure.name}_{k}" for k in measure.params]
    if measure.kind == "double_cut":  # append_double's buffer: 8 characters for the value
        return [f"{measure.name}_{f:3.2f}"[: len(measure.name) + 9] for f in measure.params]
    if measure.printable is not None:
        return [f"{measure.name}_{measure.printable}"]
    return [measure.name]


# --- trec_eval's measures as metrics of the recommendation family -------------------------------

#: Measures with no number per user: the run's tag, the query count (``users`` in a summary) and
#: the relevance string (text); a set of measures given by its nickname goes on without them.
NOT_PER_USER = {
    "runid": "the run's tag is not a number",
    "num_q": "the summary's users row counts the users",
    "relstring": "a string of relevance levels is text, not a number",
}
#: Measures of ir_measures' other providers, not trec_eval's (no ``-m`` name, in no set),
#: computed on the same judged lists: ``judged`` (Judged@k) and ``rr_cut`` (RR@k) of its own
#: Python providers, ranked with ties by docno ascending as those sort
#: (:func:`mobeval.kernels.trec.provider_scores`), each a ``long_cut`` whose cutoff 0 is the
#: whole list; ``err_cut`` (ERR@k) of its gdeval provider, in trec_eval's order as ``gdeval.pl``
#: sorts (:func:`mobeval.kernels.diversity.gdeval_err`).
PROVIDER_MEASURES = ("judged", "rr_cut", "err_cut")
#: How a measure's per-user values make the summary's value (trec_eval's): counts are summed;
#: ``gm_*`` hold ``log(max(v, 1e-5))`` per user and the summary is ``exp`` of their mean.
AGGREGATES = {**{name: "sum" for name in COUNTS}, "gm_map": "gm", "gm_bpref": "gm"}


@dataclass(frozen=True)
class TrecMetric:
    """One per-user value of a trec_eval measure: the measure (``name``, parameter ``kind``,
    ``params`` of one value for the cut kinds, ``printable`` as ``-m`` gave them), the relevance
    level (``level``: ``-l``; None: the convention's ``relevant_threshold``), whether unjudged
    documents are dropped first (``judged_only``: ``-J``), ``label``, the name it is reported
    under (trec_eval's printed name, or the user's own spelling), and whether score ties fall
    by docno ascending (``docno_ascending``: :data:`PROVIDER_MEASURES`) instead of trec_eval's
    descending; ``gains``: (level, level read instead) pairs applied to the judgments first, as
    ir_measures' ``nDCG(gains=...)`` does; ``default``: the value of a user the ratings hold
    without a list, scored under ``denominator="users_in_truth"`` (ir_measures' names: its
    measures' DEFAULT, 0, as its evaluators give a qrels query the run lacks; None: trec_eval's
    names, which score the users on both sides only)."""

    name: str
    kind: str
    params: tuple
    printable: str | None
    label: str
    level: int | None = None
    judged_only: bool = False
    docno_ascending: bool = False
    gains: tuple[tuple[int, int], ...] | None = None
    default: float | None = None

    @property
    def measure(self) -> Measure:
        return Measure(self.name, self.kind, self.params, self.printable)

    @property
    def aggregate(self) -> str:
        """``mean``, ``sum`` or ``gm`` (:data:`AGGREGATES`)."""
        return AGGREGATES.get(self.name, "mean")


def _cut_form(text: str) -> str | None:
    """``P_5`` -> ``P.5``, ``iprec_at_recall_0.20`` -> ``iprec_at_recall.0.20``: a printed name
    of a cut measure as its ``-m`` text (the longest measure name that prefixes it)."""
    for name in sorted(MEASURES, key=len, reverse=True):
        kind = MEASURES[name][0]
        if kind in ("long_cut", "double_cut") and text.startswith(name + "_"):
            return f"{name}.{text[len(name) + 1 :]}"
    return None


def trec_metrics(text: str) -> list[TrecMetric] | None:
    """The per-user values a recommendation metric name asks of trec_eval's measures, or None
    when ``text`` names none: a measure (``bpref``, ``ndcg_cut``: its default parameters), a
    printed name (``P_5``, ``iprec_at_recall_0.20``), ``-m``'s spelling (``P.5,10``,
    ``rbp.p=0.8``) or a set (``official``, ``all_trec``, ``set``: without :data:`NOT_PER_USER`).
    Names are case-sensitive, as trec_eval's; a wrong parameter is a ConfigError."""
    text = text.strip()
    name = text.partition(".")[0]
    if name not in MEASURES and name not in NICKNAMES:
        cut = _cut_form(text)
        if cut is None:
            return None
        text = cut
    if name in NOT_PER_USER:
        raise ConfigError(f"{text}: not a recommendation metric ({NOT_PER_USER[name]})")
    if name == "qrels_jg" or name.endswith("_avgjg"):
        raise ConfigError(f"{text}: judgment groups are read by `trec_eval -R qrels_jg` only")
    out = []
    for measure in resolve_measures([text]):
        if measure.name in NOT_PER_USER:
            continue
        cut = measure.kind in ("long_cut", "double_cut")
        for params in [(p,) for p in measure.params] if cut else [measure.params]:
            single = Measure(measure.name, measure.kind, params, measure.printable)
            (label,) = measure_names(single)
            out.append(TrecMetric(measure.name, measure.kind, params, measure.printable, label))
    return out
