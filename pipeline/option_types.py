"""An option of a task family and how the command line spells it (:class:`Option`,
:class:`Flag`), read by :mod:`mobeval.families` (which re-exports them) and by the modules that
define a family's options apart from it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field


class _FromPreset:
    """The default of an option that the preset sets: absent unless given."""

    def __repr__(self) -> str:
        return "FROM_PRESET"


FROM_PRESET = _FromPreset()
#: The command line's default of an option is its default (lists as lists).
SAME = object()


@dataclass(frozen=True)
class Flag:
    """How the command line spells an option.

    ``parse``: the text -> value parser (a name in :data:`mobeval.cli.values.PARSERS`: ``ints``,
    ``names``, ``metrics``, ``mapping``, ``finite``, ``threshold``, ``int``; None: the text as is).
    ``default``: the flag's default (:data:`SAME`: the option's; :data:`FROM_PRESET`: absent
    unless given). ``switch``: a flag without a value (``--drop-unmatched``) that sets the
    option to ``on`` (the option's default otherwise)."""

    parse: str | None = None
    default: object = SAME
    switch: str | None = None
    on: object = None


@dataclass(frozen=True)
class Option:
    """One option of a family.

    ``kind``: its job-file type (a key of :data:`mobeval.job_values.VALUE_KINDS`). ``default``: the
    Python default (:data:`FROM_PRESET`: a field of the convention, set by the preset unless
    given). ``choices``: the allowed values (a callable: read when asked). ``preset``: a field of
    the family's convention, which every preset sets and this option overrides. ``single``
    (Python): one value is accepted where a list is expected. ``nullable`` (Python): None is
    accepted (always when the default is None). ``python``: the Python type check when not the
    kind's (a key of :data:`mobeval.options.TYPE_CHECKS`). ``flag``: its command-line flag
    (None: not on the command line). ``defines``: whether it changes how a metric's value is
    defined (False: it selects what is computed, or how the inputs are read and paired); the
    models :mod:`mobeval.compare` pairs must agree on every option that does. ``aliases``: other
    names of the option, accepted by every face as the name itself (Python keyword, job key,
    ``--flag``; :meth:`Family.canonical`). ``removed``: values it no longer takes, each with
    what to use instead, which every face's message gives. ``path``: its value names a file
    read beside the family's two inputs (:attr:`Family.file_options`): ``True``, a table read as an
    input is (CSV, Parquet...), ``"file"`` a file of the family's own format."""

    name: str
    kind: str
    default: object = None
    help: str | None = None
    choices: Callable[[], Sequence] | Sequence | None = None
    preset: bool = False
    single: bool = False
    nullable: bool = False
    python: str | None = None
    flag: Flag | None = field(default_factory=Flag)
    defines: bool = True
    aliases: tuple[str, ...] = ()
    removed: dict[str, str] = field(default_factory=dict)
    path: bool | str = False

    def allowed(self) -> list | None:
        choices = self.choices() if callable(self.choices) else self.choices
        return None if choices is None else list(choices)

    @property
    def flag_name(self) -> str | None:
        """Its command-line flag: ``--order-by``, a switch's own (``--drop-unmatched``)."""
        if self.flag is None:
            return None
        return self.flag.switch or "--" + self.name.replace("_", "-")

    @property
    def alias_flags(self) -> list[str]:
        """The flags of its aliases (``--cutoffs``), accepted as its own."""
        if self.flag is None or self.flag.switch:
            return []
        return ["--" + alias.replace("_", "-") for alias in self.aliases]

    def python_spelling(self, value: object) -> str:
        """The option set to ``value`` as Python and job files spell it: ``unmatched='drop'``."""
        return f"{self.name}={value!r}"

    def cli_spelling(self, value: object) -> str:
        """The option set to ``value`` as the command line spells it: ``--duplicates drop``,
        ``--drop-unmatched`` (a switch), ``--k 1,5`` (a list); the Python spelling where the
        option has no flag."""
        if self.flag is None:
            return self.python_spelling(value)
        if self.flag.switch:
            return self.flag.switch if value == self.flag.on else f"no {self.flag.switch}"
        if isinstance(value, list | tuple):
            value = ",".join(str(v) for v in value)
        return f"{self.flag_name} {value}"
