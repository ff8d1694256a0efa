"""Every option of every task family checked before any work, naming the option.

:func:`check_options` is called first by each ``evaluate_*`` of :mod:`mobeval.api` (so the
command line, a job and Python see the same checks) and by :func:`mobeval.jobs.load_job` for
every task of a job file (so a bad value stops the job before its first model runs). It checks
each value's type (a wrong type would otherwise reach a comparison deep inside a convention and
end as a TypeError), then resolves the options through the family's own resolvers (presets,
convention dataclasses, metric parsers: the one definition of what a value may be), one option at
a time, so that each failure is an :class:`mobeval.errors.OptionError` naming its option. Each face
then spells the option as its user did: ``--k`` (:mod:`mobeval.cli`), ``tasks[0].k``
(:mod:`mobeval.jobs`), ``k=`` (Python). Nothing is read: paths are not options.
"""

from __future__ import annotations

import math
import numbers
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from mobeval.errors import ConfigError, OptionError
from mobeval.families import FAMILIES, Family, Option

#: Rows per chunk unless given (logits: values): the memory budget of every engine.
DEFAULT_CHUNK_ROWS = 2_000_000


def checked_chunk_rows(value: object, option: str = "chunk_rows") -> int:
    """``value`` if it is a positive integer, else a ConfigError naming ``option`` (the one check
    of the chunk size: the CLI's ``--chunk-rows``, a job's ``chunk_rows``, the API's)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 1:
        return int(value)  # a NumPy integer too
    raise ConfigError(f"{option} must be a positive integer, got {value!r}")


@contextmanager
def naming(option: str, value: object) -> Iterator[None]:
    """Whatever a resolver raises about ``value`` becomes an OptionError naming ``option``."""
    try:
        yield
    except OptionError:
        raise
    except (ConfigError, ValueError, TypeError) as error:
        raise OptionError(option, value, str(error)) from None


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _fail(option: str, value: object, expected: str) -> OptionError:
    return OptionError(
        option, value, f"expected {expected}, got {type(value).__name__} {_shown(value)}"
    )


def _is_int(value: object) -> bool:
    """An int or a NumPy integer (both ``numbers.Integral``; NumPy's bool is not), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    """An int, a float, a NumPy integer or float (``numbers.Real``), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _numpy_type(name: str) -> tuple[type, ...]:
    """NumPy's type ``name`` (``ndarray``, ``bool_``), or none before NumPy is imported (no value
    is one before): the options of a command are checked without importing NumPy."""
    numpy = sys.modules.get("numpy")
    return () if numpy is None else (getattr(numpy, name),)


def _is_list(value: object) -> bool:
    return isinstance(value, (list, tuple, range, *_numpy_type("ndarray")))


def _name(option: str, value: object, *, optional: bool = False) -> None:
    """A non-empty string (None too when ``optional``)."""
    if optional and value is None:
        return
    if not isinstance(value, str) or not value.strip():
        raise _fail(option, value, "a non-empty string" + (" or None" if optional else ""))


def _input(option: str, value: object) -> None:
    """A file option's value (``Option.path``: a recs task's catalogue, train, original_ratings):
    what the family's two inputs take, a path (non-empty) or a data object (a Polars or pandas
    DataFrame, an Arrow Table...: :mod:`mobeval.io.objects`, which refuses one it cannot read,
    naming what it reads); a number, a bool or a list is refused here."""
    if value is None or isinstance(value, os.PathLike):
        return
    if isinstance(value, str):
        _name(option, value, optional=True)
    elif isinstance(value, numbers.Number | list | tuple | set):
        raise _fail(option, value, "a path, a DataFrame or an Arrow Table, or None")


def _names(option: str, value: object, *, single: bool, optional: bool) -> None:
    """A list of non-empty strings (one string too when ``single``); an empty list is left to
    the family's parser, whose message says what to give."""
    if optional and value is None:
        return
    if single and isinstance(value, str):
        value = [value]
    if not (_is_list(value) and all(isinstance(v, str) and v.strip() for v in value)):
        words = "a list of names" + (" (or one name)" if single else "")
        raise _fail(option, value, words + (" or None" if optional else ""))


def _cutoffs(option: str, value: object, *, single: bool, optional: bool = False) -> None:
    """Integers (the values themselves are checked by the family's parser)."""
    if optional and value is None:
        return
    if single and _is_int(value):
        return
    if not (_is_list(value) and all(_is_int(v) for v in value)):
        raise _fail(option, value, "a list of integers, e.g. [1, 5, 10]")


def _finite(option: str, value: object, *, optional: bool = False) -> None:
    if optional and value is None:
        return
    if not _is_number(value) or not math.isfinite(value):
        raise _fail(option, value, "a finite number" + (" or None" if optional else ""))


def _boolean(option: str, value: object) -> None:
    if not isinstance(value, (bool, *_numpy_type("bool_"))):
        raise _fail(option, value, "True or False")


def _convention(option: str, value: object, kind: type) -> None:
    if not isinstance(value, str | kind):
        raise _fail(option, value, f"a preset name or a {kind.__name__}")


def _whole(options: dict, resolve: Callable[..., object]) -> object:
    """Every option at once through ``resolve`` (cross-option rules); an error that does not say
    which option it is about is named by its first word when that is one of ``options``."""
    try:
        return resolve()
    except OptionError:
        raise
    except (ConfigError, ValueError, TypeError) as error:
        text = str(error)
        for name in sorted(options, key=len, reverse=True):
            if text.startswith((f"{name}=", f"{name}:", f"{name} ")):
                raise OptionError(name, options[name], text) from None
        if isinstance(error, ConfigError):
            raise
        raise ConfigError(text) from None


# --------------------------------------------------------------------------- types


def _choice(option: str, value: object, allowed: list, removed: dict[str, str]) -> None:
    if isinstance(value, str) and value in removed:
        raise OptionError(option, value, f"{value!r} was removed: {removed[value]}")
    if not isinstance(value, str) or value not in allowed:
        raise OptionError(option, value, f"must be one of {allowed}, not {_shown(value)}")


def _integer(option: str, value: object, *, optional: bool = False) -> None:
    if optional and value is None:
        return
    if not (_is_int(value) and -(2**63) <= value < 2**63):
        raise _fail(option, value, "an integer" + (" or None" if optional else ""))


def _threshold(option: str, value: object) -> None:
    if value is None or value == "user_mean":
        return
    if not _is_number(value) or not math.isfinite(value):
        raise _fail(option, value, "a finite number, 'user_mean' or None")


def _mapping(option: str, value: object, *, optional: bool = False) -> None:
    if optional and value is None:
        return

    def named(v) -> bool:
        return isinstance(v, str) and bool(v.strip())

    if not (
        isinstance(value, dict)
        and all(
            named(v) or (isinstance(v, dict) and all(map(named, v.values())))
            for v in value.values()
        )
    ):
        raise _fail(
            option,
            value,
            'a mapping of our name -> your column, e.g. {"location": "poi"}, or of an input '
            'to one, e.g. {"truth": {"user_id": "userId"}}',
        )


#: The Python type check of each option: by its ``python`` name, else by its job-file kind
#: (:class:`mobeval.families.Option`); ``f`` the family, ``o`` the option, ``v`` its value.
TYPE_CHECKS: dict[str, Callable[[Family, Option, object], None]] = {
    "string": lambda f, o, v: _name(o.name, v, optional=_nullable(o)),
    "strings": lambda f, o, v: _names(o.name, v, single=o.single, optional=_nullable(o)),
    "key": lambda f, o, v: _names(o.name, v, single=True, optional=_nullable(o)),
    "cutoffs": lambda f, o, v: _cutoffs(o.name, v, single=o.single, optional=_nullable(o)),
    "number": lambda f, o, v: _finite(o.name, v, optional=_nullable(o)),
    "boolean": lambda f, o, v: _boolean(o.name, v),
    "integer": lambda f, o, v: _integer(o.name, v, optional=_nullable(o)),
    "threshold": lambda f, o, v: _threshold(o.name, v),
    "mapping": lambda f, o, v: _mapping(o.name, v, optional=_nullable(o)),
    "input": lambda f, o, v: _input(o.name, v),
    "choice": lambda f, o, v: _choice(o.name, v, o.allowed(), o.removed),
    "convention": lambda f, o, v: _convention(o.name, v, type(next(iter(f.presets().values())))),
}


def _nullable(option: Option) -> bool:
    return option.nullable or option.default is None


# --------------------------------------------------------------------------- the families


def _nextloc(values: dict) -> object:
    from mobeval.tasks.nextloc_inputs import nextloc_spec

    return nextloc_spec(**values)


def _population_bootstrap(values: dict, intervals: list[str], takes: str) -> None:
    """The population bootstrap's options (``families._population_bootstrap``), in any family:
    ``intervals``, the asked metrics it gives an interval to (resamples without one: an error,
    not a silent nothing); ``takes``, those it can."""
    if values["population_resamples"] > 0 and not intervals:
        raise ConfigError(
            f"population_resamples={values['population_resamples']!r} gives an interval to "
            f"{takes}; metrics asks for none of them"
        )
    if values["population_resamples"] < 0:
        raise ConfigError(
            f"population_resamples must be >= 0, not {values['population_resamples']!r}"
        )
    if not 0 < values["population_confidence"] < 1:
        raise ConfigError(
            f"population_confidence must be in (0, 1), not {values['population_confidence']!r}"
        )


def _trajectory(values: dict) -> object:
    from mobeval.metrics import POPULATION_METRICS
    from mobeval.tasks.trajectory_inputs import checked_convention

    asked = [m for m in values["metrics"] if m in POPULATION_METRICS]
    _population_bootstrap(values, asked, "the population divergences and ratios")
    return checked_convention(**values)


def _recs(values: dict) -> object:
    from mobeval.metrics.recs import parse_recs_metrics
    from mobeval.metrics.recs_population import (
        BOOTSTRAP_FAMILIES,
        parse_population_metrics,
        parse_user_groups,
        population_of,
        split_metrics,
    )

    convention = FAMILIES["recs"].convention(values)
    accuracy, population = split_metrics(values["metrics"])
    population_of(values)
    if values["user_groups"]:
        parse_user_groups(values["user_groups"])
    if not 0 < values["pop_percentage"] <= 1:
        raise ConfigError(f"pop_percentage must be in (0, 1], not {values['pop_percentage']!r}")
    parsed = parse_population_metrics(population, values["k"]) if population else ()
    _propensity(values, parsed)
    asked = [m.name for m in parsed if m.family in BOOTSTRAP_FAMILIES]
    takes = f"{', '.join(BOOTSTRAP_FAMILIES[:-1])} and {BOOTSTRAP_FAMILIES[-1]}"
    _population_bootstrap(values, asked, takes)
    if not population:
        return parse_recs_metrics(accuracy, values["k"], beta=convention.beta)
    if accuracy:
        parsed = parse_recs_metrics(accuracy, values["k"], beta=convention.beta) + parsed
    return parsed


def _propensity(values: dict, metrics) -> None:
    """PSP's and PSR's options: a cutoff each (of ``metrics``), a preset of Jain et al.'s, whose
    formula applies only where the propensities are not given."""
    from mobeval.metrics.recs_population import PROPENSITY_FAMILIES, PROPENSITY_PRESETS

    for m in metrics:
        if m.family in PROPENSITY_FAMILIES and m.k is None:
            raise ConfigError(
                f"{m.family} needs a cutoff (pyxclib's k): name it {m.family}@10, or give the "
                "cutoffs (k=[10], --k 10)"
            )

    preset = values["propensity_preset"]
    if preset is not None:
        _choice("propensity_preset", preset, sorted(PROPENSITY_PRESETS), {})
    formula = [
        n for n in ("propensity_preset", "propensity_a", "propensity_b") if values[n] is not None
    ]
    if values["propensities"] is not None and formula:
        raise ConfigError(
            f"{formula[0]}={values[formula[0]]!r}: the propensities are given (propensities=..., "
            "--propensities): the formula's propensity_preset, propensity_a and propensity_b do "
            "not apply"
        )


def _logits(values: dict) -> object:
    from mobeval.metrics.logits import parse_logits_metrics

    return parse_logits_metrics(values["metrics"], values["k"]), FAMILIES["logits"].convention(
        values
    )


#: What each family builds from its options (spec, convention, metric columns): the family's
#: own checks of what a value may be, and of how the options go together.
BUILDERS: dict[str, Callable[[dict], object]] = {
    "nextloc": _nextloc,
    "trajectory": _trajectory,
    "recs": _recs,
    "logits": _logits,
}
#: Options that are only checked together (``gain="relison"`` needs a ``gain_threshold``;
#: ``population_resamples`` a metric that takes its interval).
TOGETHER = {
    "recs": ("gain", "gain_threshold", "population_resamples"),
    "trajectory": (
        "population_resamples",
        "pairing",
        "locations",
        "location_table",
        "unknown_links",
        "region_table",
        "link_graph",
        "gps_grid",
        "distance",
    ),
}


def check_options(family: str, options: dict) -> None:
    """Check every option of a ``family`` task (``nextloc``, ``trajectory``, ``recs``,
    ``logits``): the options a face was given (the ``**options`` of its ``evaluate_*``
    function, a job task's keys, the command line's flags). First each value's type
    (:data:`TYPE_CHECKS`, by the family's definition in :mod:`mobeval.families`; a name that is
    not an option is refused), then each
    option alone through the family's builder (:data:`BUILDERS`, the others at their defaults),
    then all of them together. An OptionError names the first wrong option; nothing is read."""
    definition = FAMILIES[family]
    try:
        _check(definition, definition.canonical(options))  # cutoffs=[5] is k=[5]
    except OptionError as error:  # named as given: cutoffs=, not k=
        alias = definition.given_names(options).get(error.option)
        if alias is None:
            raise
        raise OptionError(alias, error.value, error.detail) from None


def _check(definition: Family, given: dict) -> None:
    """:func:`check_options` of the options ``given`` by their names (no alias)."""
    family = definition.name
    for name, value in given.items():
        if name not in definition.by_name:
            known = sorted(definition.names)
            raise OptionError(name, value, f"not an option of {definition.title}; known: {known}")
        option = definition.by_name[name]
        kind = option.python or ("input" if option.path else option.kind)
        TYPE_CHECKS[kind](definition, option, value)
    definition.column_map(definition.values(given))  # the key's columns are ours too
    build, defaults = BUILDERS[family], definition.values({})
    for option in definition.options:  # one at a time, in the definition's order
        if option.name in given and option.name not in TOGETHER.get(family, ()):
            with naming(option.name, given[option.name]):
                build(defaults | {option.name: given[option.name]})
    try:
        _whole(given, lambda: build(definition.values(given)))
    except ConfigError as error:  # gain="relison" without a gain_threshold (either one given)
        if isinstance(error, OptionError) or "needs gain_threshold" not in str(error):
            raise
        name = "gain_threshold" if "gain_threshold" in given else "gain"
        raise OptionError(name, given.get(name), str(error)) from None


def option_values(family: str, options: dict) -> dict:
    """Every option of a ``family`` call, checked (:func:`check_options`), with the definition's
    defaults filled in (the preset's fields only when given): what the ``evaluate_*`` functions
    read."""
    check_options(family, options)
    return FAMILIES[family].values(options)  # aliases renamed
