"""The :class:`Family` record: a task family's options, presets and convention, and how its
API calls its inputs (the definitions are one module per family beside this one)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from mobeval.errors import OptionError
from mobeval.io.columns import ColumnMap, column_map
from mobeval.option_types import FROM_PRESET, Option


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
