"""One definition per task family (a module each: :mod:`.nextloc`, :mod:`.trajectory`,
:mod:`.recs`, :mod:`.logits`): its options and its presets, read by every face.

A :class:`Family` lists each option once (:class:`Option`: name, job-file kind, default, choices,
help text, whether the family's presets set it, its command-line flag) and names its presets and
its convention. From it are derived:

* the command line's flags and help (:func:`mobeval.cli.parser.add_family_options`, and
  :func:`mobeval.cli.parser.family_options` reads them back);
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

Adding an option is one :class:`Option` in its family's module plus the code that uses it (see
``docs/architecture.md``). What a value may be beyond its type is decided by the family's own
resolvers (presets, convention dataclasses, metric parsers), which :mod:`mobeval.options` calls.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
from collections.abc import Callable, Iterator, Mapping

from mobeval.families.family import Family
from mobeval.families.shared import PRESET_HELP
from mobeval.lazy import lazy_exports
from mobeval.option_types import FROM_PRESET, SAME, Flag, Option

#: Each family's definition: the module that holds it and its name there.
_DEFINITIONS = {
    "nextloc": ("mobeval.families.nextloc", "NEXTLOC"),
    "trajectory": ("mobeval.families.trajectory", "TRAJECTORY"),
    "recs": ("mobeval.families.recs", "RECS"),
    "logits": ("mobeval.families.logits", "LOGITS"),
}


class _Families(Mapping):
    """Family name -> :class:`Family`, each family's module imported when it is first asked for:
    a run loads its own family's definition and metric modules only (a next-location run no
    recommendation or trajectory metrics; ``tests/test_startup_imports.py``). A definition may
    be replaced (``FAMILIES[name] = dataclasses.replace(...)``, before the faces read it)."""

    def __init__(self):
        self._loaded: dict[str, Family] = {}

    def __getitem__(self, name: str) -> Family:
        if name not in self._loaded:
            module, definition = _DEFINITIONS[name]
            self._loaded[name] = getattr(importlib.import_module(module), definition)
        return self._loaded[name]

    def __setitem__(self, name: str, family: Family) -> None:
        self._loaded[name] = family

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*_DEFINITIONS, *self._loaded]))

    def __len__(self) -> int:
        return len(dict.fromkeys([*_DEFINITIONS, *self._loaded]))


FAMILIES: Mapping[str, Family] = _Families()

_, __getattr__, __dir__ = lazy_exports(  # NEXTLOC, RECS, ...: their modules on first use
    __name__, {module: (name,) for module, name in _DEFINITIONS.values()}
)
__all__ = [
    "FAMILIES",
    "FROM_PRESET",
    "LOGITS",
    "NEXTLOC",
    "PRESET_HELP",
    "RECS",
    "SAME",
    "TRAJECTORY",
    "Family",
    "Flag",
    "Option",
    "resolved_options",
    "signature",
    "with_options",
]

# --------------------------------------------------------------------------- derived


def signature(family: str, function: Callable) -> inspect.Signature:
    """``function``'s signature with its ``**options`` spelled out as the family's keyword
    options and their defaults (options that only the preset sets stay under ``**options``)."""
    return _spelled(family, inspect.signature(function))


def _spelled(family: str, plain: inspect.Signature) -> inspect.Signature:
    kinds = inspect.Parameter
    spelled = [
        kinds(o.name, kinds.KEYWORD_ONLY, default=o.default)
        for o in FAMILIES[family].options
        if o.default is not FROM_PRESET
    ]
    parameters = plain.parameters.values()
    positional = [
        p for p in parameters if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)
    ]
    keywords = [p for p in parameters if p.kind is kinds.KEYWORD_ONLY]
    rest = [p for p in parameters if p.kind is kinds.VAR_KEYWORD]
    if all(o.default is not FROM_PRESET for o in FAMILIES[family].options):
        rest = []
    return plain.replace(parameters=[*positional, *spelled, *keywords, *rest])


class _LazySignature(inspect.Signature):
    """A signature built when it is first read (``help()``, ``inspect.signature``): importing
    :mod:`mobeval.api` loads no family's definition until a signature or a run asks for it."""

    def __init__(self, build: Callable[[], inspect.Signature]):  # Signature's slots left unset
        self._build = build

    def __getattr__(self, name: str):  # the two slots, unset until first read
        if name not in ("_parameters", "_return_annotation"):
            raise AttributeError(name)
        built = self._build()
        self._parameters, self._return_annotation = built.parameters, built.return_annotation
        return getattr(self, name)


def with_options(family: str) -> Callable[[Callable], Callable]:
    """Give an ``evaluate_*(inputs..., *, out..., **options)`` function the signature of its
    family's options (``help()``, ``inspect.signature``), built when first read."""

    def decorate(function: Callable) -> Callable:
        plain = inspect.signature(function)
        function.__signature__ = _LazySignature(lambda: _spelled(family, plain))
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
        from mobeval.metrics import recs_population as _recs_population

        population = _recs_population.resolve_population(
            values["population_convention"], values["tail_ratio"]
        )
        resolved |= dataclasses.asdict(population)
    if task == "trajectory":  # the unit the distances are in, stated with the options
        from mobeval.population_options import distance_unit

        resolved["distance_unit"] = distance_unit(
            resolved["locations"], resolved["distance"], resolved["unit"]
        )
    if task == "logits":  # a family's policy left None follows ``ties``
        resolved["mrr_ties"] = resolved["mrr_ties"] or resolved["ties"]
        resolved["ndcg_ties"] = resolved["ndcg_ties"] or resolved["ties"]
    return _plain(resolved)
