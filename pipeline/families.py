"""One definition per task family: its options and its presets, read by every face.

A :class:`Family` lists each option once (:class:`Option`: name, job-file kind, default, choices,
help text, whether the family's presets set it, its command-line flag) and names its presets and
its convention. From it are derived:

* the command line's flags and help (:func:`mobeval.cli.add_family_options`, and
  :func:`mobeval.cli.family_options` reads them back);
* the job file's keys and their types (:data:`mobeval.jobs.TASK_TYPES`, ``OPTION_KINDS``);
* the Python keyword arguments: their checks (:func:`mobeval.options.check_options`, which
  refuses a name that is not an option), their defaults (:func:`mobeval.options.option_values`)
  and the signatures ``help()`` shows (:func:`signature`) of :mod:`mobeval.api`'s ``evaluate_*``
  (on either engine);
* the manifest's ``resolved`` options (:func:`resolved_options`): every option as the run used
  it, the preset's fields spelled out (also in ``--format json``);
* the command line's spelling of an option's value in messages (:meth:`Option.cli_spelling`),
  its ``--help`` lines of the presets (``preset_help``) and the summary rows it prints as
  integers (``counts``).

Adding an option is one :class:`Option` here plus the code that uses it (see
``docs/architecture.md``). What a value may be beyond its type is decided by the family's own
resolvers (presets, convention dataclasses, metric parsers), which :mod:`mobeval.options` calls.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from mobeval.errors import OptionError
from mobeval.io.columns import TARGETS_COLUMN, ColumnMap, column_map
from mobeval.metrics import DIVERGENCES
from mobeval.metrics import logits as _logits
from mobeval.metrics import nextloc as _nextloc
from mobeval.metrics import recs as _recs
from mobeval.metrics import recs_population as _recs_population
from mobeval.metrics import trajectory as _trajectory
from mobeval.option_types import FROM_PRESET, SAME, Flag, Option  # noqa: F401 (re-exported)
from mobeval.population_options import POPULATION_OPTIONS


@dataclass(frozen=True)
class Family:
    """A task family: its options, presets and convention, and how its API calls its inputs."""

    name: str
    title: str  # "next-location scoring": messages say "not an option of <title>"
    truth: str  # the evaluate function's truth argument (a job's ``truth`` goes there)
    model: str  # the evaluate function's model argument (each of a job's ``models``)
    options: tuple[Option, ...]
    presets: Callable[[], dict]  # preset name -> convention
    #: every option's value (defaults filled) -> the convention those options resolve to
    convention: Callable[[dict], object]
    #: each preset in one line (``--help``, README): the reference system and what sets it apart
    preset_help: dict[str, str] = field(default_factory=dict)
    #: the summary rows that count things (samples, users...): integers, not rates
    counts: tuple[str, ...] = ()
    #: our names of each input's columns (``truth``, ``pred``): what ``columns`` maps (and keys)
    column_names: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: the count row of the units scored where a scored unit's metric may be undefined (a user
    #: without a relevant item); None where every metric's ``n`` counts the units scored
    units: str | None = None

    @property
    def inputs(self) -> dict[str, tuple[str, ...]]:
        """Each input's names in a ``columns`` entry: ``truth`` / ``pred``, or the evaluate
        function's own (``ratings`` / ``recs``)."""
        return {
            "truth": tuple(dict.fromkeys(("truth", self.truth))),
            "pred": tuple(dict.fromkeys(("pred", self.model))),
        }

    def column_map(self, values: dict) -> ColumnMap:
        """The ``columns`` option of ``values`` checked against the family's inputs and column
        names, the key's included (:func:`mobeval.io.columns.column_map`), split per input."""
        key = values.get("key") or ()
        key = (key,) if isinstance(key, str) else tuple(key)
        names = {r: tuple(dict.fromkeys((*ours, *key))) for r, ours in self.column_names.items()}
        return column_map(values.get("columns"), inputs=self.inputs, names=names, title=self.title)

    def option(self, name: str) -> Option:
        """The option of that name or alias."""
        return self.by_name[self._aliases.get(name, name)]

    @property
    def by_name(self) -> dict[str, Option]:
        return {option.name: option for option in self.options}

    @property
    def file_options(self) -> tuple[str, ...]:
        """The options that name a file read beside the two inputs (the recommendation
        family's ``catalogue``, ``train``, ``original_ratings``): inputs too, which every face
        checks as it checks the two (:func:`mobeval.io.writers.check_inputs_apart`)."""
        return tuple(option.name for option in self.options if option.path)

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self.by_name)

    @property
    def _aliases(self) -> dict[str, str]:
        return {alias: o.name for o in self.options for alias in o.aliases}

    def given_names(self, options: dict) -> dict[str, str]:
        """Option name -> the alias it was given under in ``options`` (``{"k": "cutoffs"}``):
        how a message names it to its user."""
        return {self._aliases[n]: n for n in options if n in self._aliases}

    def canonical(self, options: dict) -> dict:
        """``options`` with each alias renamed to its option's name (``cutoffs`` -> ``k``); an
        option given under two of its names is an OptionError."""
        names = self._aliases
        renamed = {}
        for name, value in options.items():
            canonical = names.get(name, name)
            if canonical in renamed:
                spellings = sorted(n for n in options if names.get(n, n) == canonical)
                raise OptionError(
                    canonical, value, f"given twice, as {' and as '.join(spellings)}: give one"
                )
            renamed[canonical] = value
        return renamed

    def defaults(self) -> dict:
        """The Python default of every option the preset does not set."""
        return {o.name: o.default for o in self.options if o.default is not FROM_PRESET}

    def values(self, options: dict) -> dict:
        """``options`` with every unset default filled (the preset's fields only when given)."""
        given = self.canonical(options)
        return self.defaults() | {n: v for n, v in given.items() if n in self.by_name}

    def overrides(self, values: dict) -> dict:
        """The preset fields that ``values`` set: what changes the preset (None is "the
        preset's" where the default is None, a value where the preset sets the default)."""
        return {
            o.name: values[o.name]
            for o in self.options
            if o.preset
            and o.name in values
            and values[o.name] is not FROM_PRESET
            and (values[o.name] is not None or o.default is FROM_PRESET)
        }


# --------------------------------------------------------------------------- the families

#: The help of every family's ``convention``: its presets are listed with the family's help.
PRESET_HELP = "a reference system's conventions (presets: below), each overridable"


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


def _cutoffs(help: str, **settings) -> Option:
    """The cutoffs of a family's ranking metrics (next location, logits: of those named @k;
    recommendations: of those named without @k), 1, 5 and 10 unless given.

    One name in every family: ``k`` (``--k``, ``k = [...]``, ``k=[...]``), as the metric names
    write a cutoff (``acc@k``, ``ndcg@10``) and as ranx, LibCity and ClayRS call it.
    ``cutoffs``, the recommendation family's first spelling, stays an alias everywhere
    (``--cutoffs``, ``cutoffs = [...]``, ``cutoffs=[...]``), so that scripts written for either
    family work in both."""
    flag = Flag("ints", [1, 5, 10])
    return Option(
        "k", "cutoffs", (1, 5, 10), help, flag=flag, defines=False, aliases=("cutoffs",), **settings
    )


def _metrics(default: tuple | None, help: str, **settings) -> Option:
    """The metrics a family computes (``default`` None: the help text says which)."""
    flag = Flag("metrics") if default is None else Flag("metrics", list(default))
    return Option("metrics", "strings", default, help, flag=flag, defines=False, **settings)


def _columns(ours: Sequence[str], inputs: tuple[str, str], example: str, key: bool) -> Option:
    """Our column names -> the user's, in both inputs or in one (``truth.``, ``pred.`` or the
    input's own name first: :mod:`mobeval.io.columns`); ``inputs``: the family's own names of
    the truth and the predictions; ``key``: whether the key's columns are mapped too."""
    prefixes = ", ".join(
        " or ".join(f"{name}." for name in dict.fromkeys(names))
        for names in (("truth", inputs[0]), ("pred", inputs[1]))
    )
    help = (
        f"your column names as ours=yours, in both inputs, or in one ({prefixes}), e.g. "
        f"{example}; ours: {', '.join(ours)}{' and the key' if key else ''}"
    )
    return Option("columns", "mapping", None, help, flag=Flag("mapping", {}), defines=False)


def _error_unless(name: str, help: str, choices, switch: str, on: str, **settings) -> Option:
    """An input check that fails ("error") unless its command-line ``switch`` (a flag without a
    value) sets it to ``on``."""
    flag = Flag(switch=switch, on=on)
    return Option(name, "string", "error", help, choices, flag=flag, **settings)


def _population_bootstrap(metrics: str, units: str) -> tuple[Option, ...]:
    """The Poisson bootstrap interval of a family's population ``metrics`` over its ``units``
    (:func:`mobeval.kernels.resampling.poisson_weights`): resamples, seed, confidence."""
    return (
        Option(
            "population_resamples",
            "integer",
            0,
            f"{metrics}: resamples of a Poisson bootstrap of {units}, giving <metric>:low and "
            "<metric>:high rows (0: none)",
            flag=Flag("int"),
        ),
        Option(
            "population_seed", "integer", 0, "the seed of --population-resamples", flag=Flag("int")
        ),
        Option(
            "population_confidence",
            "number",
            0.95,
            "the confidence of --population-resamples' percentile interval",
        ),
    )


NEXTLOC = Family(
    "nextloc",
    "next-location scoring",
    "truth",
    "predictions",
    (
        _cutoffs("cutoffs of the metrics named @k", single=True),
        _metrics(None, "e.g. acc@k,ndcg@k,mrr (default: every top-K metric and mrr)"),
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
        _columns(
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
        _error_unless(
            "unmatched",
            "drop (and count) predictions whose sample is not in the truth",
            lambda: _nextloc.UNMATCHED,
            "--drop-unmatched",
            "drop",
            defines=False,
        ),
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


def _trajectory_convention(values: dict):
    """The convention the trajectory options resolve to, checked against the metrics asked for
    (:func:`mobeval.tasks.trajectory_inputs.checked_convention`, imported when asked)."""
    from mobeval.tasks.trajectory_inputs import checked_convention

    return checked_convention(**{n: values[n] for n in TRAJECTORY.names})


TRAJECTORY = Family(
    "trajectory",
    "trajectory scoring",
    "reference",
    "generated",
    (
        _metrics(
            ("geobleu", "dtw"),
            "geobleu, dtw and population metrics (docs/trajectory.md): distance, radius, "
            "duration, dailyloc, grank, irank (MoveSim's), density, trip, length (DiffTraj's), "
            "jump, location, origin_location, destination_location, duplicate_ratio (TrajGDM's), "
            "od (MobilityGPT's), memorised, memorised_near",
        ),
        Option(
            "convention",
            "string",
            "humob2025",
            PRESET_HELP,
            lambda: sorted(_trajectory.TRAJECTORY_PRESETS),
            python="convention",
        ),
        Option(
            "matching",
            "string",
            None,
            "n-gram matching (greedy: the reference's)",
            _trajectory.MATCHINGS,
            preset=True,
        ),
        Option(
            "exp",
            "string",
            None,
            "GEO-BLEU's exp/log: libm (default, any CPU) or numpy (NumPy's on this machine, "
            "as the reference computes them: differs on AVX-512 CPUs)",
            _trajectory.EXPS,
            preset=True,
        ),
        Option(
            "divergence",
            "string",
            "jsd",
            "between the real and generated distributions: jsd, jsdist, kl or emd",
            DIVERGENCES,
        ),
        Option(
            "max_distance",
            "number",
            None,
            "upper edge of the distance histogram, in cells (MoveSim's max_distance)",
            preset=True,
            flag=Flag("finite", FROM_PRESET),
        ),
        Option(
            "unit",
            "string",
            None,
            "distances in grid cells or metres (500 m cells)",
            _trajectory.UNITS,
            preset=True,
        ),
        Option(
            "uid_shares",
            "cutoffs",
            (),
            "also each divergence over nested subsets of the generated uids, in percent of "
            "them (e.g. 25,50): how the value moves with the number of generated uids",
            flag=Flag("ints"),
            defines=False,
        ),
        Option(
            "per_day_divergences",
            "boolean",
            False,
            "also each divergence per day d (the real and generated days d): summary rows "
            "<divergence>_<distribution>@d=<d>",
            flag=Flag(switch="--per-day-divergences", on=True),
            defines=False,
        ),
        *_population_bootstrap("the divergences", "the generated uids (the real ones fixed)"),
        *POPULATION_OPTIONS,
        _error_unless(
            "on_mismatch",
            "skip (and count) uids whose (d, t) steps differ, not fail",
            lambda: _trajectory.ON_MISMATCH,
            "--skip-mismatched",
            "skip",
            defines=False,
        ),
        _error_unless(
            "out_of_grid",
            "score x/y outside 1..200 (e.g. 999) as the reference does",
            lambda: _trajectory.OUT_OF_GRID,
            "--score-out-of-grid",
            "score",
        ),
        _columns(_trajectory.COLUMNS, ("reference", "generated"), "generated.uid=user", key=False),
    ),
    lambda: _trajectory.TRAJECTORY_PRESETS,
    _trajectory_convention,
    _trajectory.PRESET_NOTES,
    ("uids", "uid_days", "steps", "uids_skipped", "rows_out_of_grid", *_trajectory.REAL_COUNTS),
    {"truth": _trajectory.COLUMNS, "pred": _trajectory.COLUMNS},
    units="uids",
)


RECS = Family(
    "recs",
    "recommendation scoring",
    "ratings",
    "recs",
    (
        _metrics(
            _recs.DEFAULT_METRICS,
            "e.g. precision,recall,f1,ndcg@10,map,mrr,hit_rate,r-precision,rmse,gini,coverage",
            single=True,
        ),
        _cutoffs("cutoffs of the metrics named without @k", nullable=True),
        Option(
            "convention",
            "string",
            "clayrs",
            PRESET_HELP,
            lambda: sorted(_recs.RECS_PRESETS),
            python="convention",
        ),
        Option("key", "string", "user_id", "the user column"),
        _columns(
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
            "training interactions (a file with item_id): avg_popularity, tail_percentage",
            path=True,
        ),
        Option(
            "population_convention",
            "string",
            "clayrs",
            "gini, coverage, entropy as ClayRS 0.5.1 or RecBole 1.2.1 compute them",
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
        *_population_bootstrap(
            "gini, coverage, entropy, avg_popularity, tail_percentage, delta_gap, pop_ratio",
            "the users",
        ),
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

LOGITS = Family(
    "logits",
    "logits scoring",
    "targets",
    "logits",
    (
        _cutoffs("cutoffs of the metrics named @k"),
        _metrics(
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
        _columns(
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

FAMILIES: dict[str, Family] = {f.name: f for f in (NEXTLOC, TRAJECTORY, RECS, LOGITS)}


# --------------------------------------------------------------------------- derived


def signature(family: str, function: Callable) -> inspect.Signature:
    """``function``'s signature with its ``**options`` spelled out as the family's keyword
    options and their defaults (options that only the preset sets stay under ``**options``)."""
    kinds = inspect.Parameter
    spelled = [
        kinds(o.name, kinds.KEYWORD_ONLY, default=o.default)
        for o in FAMILIES[family].options
        if o.default is not FROM_PRESET
    ]
    parameters = inspect.signature(function).parameters.values()
    positional = [
        p for p in parameters if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)
    ]
    keywords = [p for p in parameters if p.kind is kinds.KEYWORD_ONLY]
    rest = [p for p in parameters if p.kind is kinds.VAR_KEYWORD]
    if all(o.default is not FROM_PRESET for o in FAMILIES[family].options):
        rest = []
    return inspect.signature(function).replace(parameters=[*positional, *spelled, *keywords, *rest])


def with_options(family: str) -> Callable[[Callable], Callable]:
    """Give an ``evaluate_*(inputs..., *, out..., **options)`` function the signature of its
    family's options (``help()``, ``inspect.signature``)."""

    def decorate(function: Callable) -> Callable:
        function.__signature__ = signature(family, function)
        return function

    return decorate


def _plain(value):
    return json.loads(json.dumps(value, default=str))


def resolved_options(task: str, config: dict) -> dict:
    """Every option of a ``task`` result as the run used it: the defaults of what was not given,
    the preset's fields spelled out (``relevant_threshold = 4``, ``max_n = 5``), JSON values.
    ``config``: the options as typed (other keys such as ``city`` are left out)."""
    family = FAMILIES[task]
    values = family.values({n: v for n, v in (config or {}).items() if n in family.names})
    resolved = dict(values)
    convention = family.convention(values)
    if dataclasses.is_dataclass(convention):
        resolved |= dataclasses.asdict(convention)
    if task == "recs":  # the population metrics' convention, its fields spelled out
        population = _recs_population.resolve_population(
            values["population_convention"], values["tail_ratio"]
        )
        resolved |= dataclasses.asdict(population)
    if task == "logits":  # a family's policy left None follows ``ties``
        resolved["mrr_ties"] = resolved["mrr_ties"] or resolved["ties"]
        resolved["ndcg_ties"] = resolved["ndcg_ties"] or resolved["ties"]
    return _plain(resolved)
