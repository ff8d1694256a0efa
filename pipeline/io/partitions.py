"""Results over time: a partition (``date=2026-11-27``) above each result in every section.

A nightly job scores each day's predictions into one OUT; each day's results lie under
``OUT/<section>/date=<d>/city=<c>/model=<m>[/run=<r>]/`` (``--partition date=2026-11-27``, a job's
``partition = { date = "2026-11-27" }``, Python's ``partition={"date": "2026-11-27"}``), so that
Spark, DuckDB and Polars read the whole history of a section as one table, ``date`` a column
beside ``city`` and ``model``. A result's name in the manifest starts with its partition
(``date=2026-11-27/city=tky/model=markov``): it is recorded, resumed, replaced and refused on its
own, as any result (:mod:`mobeval.io.writers`).

A partition is one or more ``key=value`` pieces, in the order given (``date=2026-11-27/hour=03``):
a key is a lower-case identifier other than ``city``, ``model``, ``run`` and the summary's
columns; a value a plain name without ``=``. Every result of an OUT has the same keys in the same
order, or none (:func:`check_partition_layout`): Spark refuses a tree whose folders name other
columns at one depth (``CONFLICTING_DIRECTORY_STRUCTURES``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from mobeval.errors import ConfigError

#: A partition key: a lower-case identifier (Spark's and Hive's columns ignore case).
PARTITION_KEY = re.compile(r"[a-z_][a-z0-9_]{0,63}")
#: A partition value: a plain name without ``=`` (a Hive folder ``key=value`` parses one way).
PARTITION_VALUE = re.compile(r"[A-Za-z0-9_+-][A-Za-z0-9_.+-]{0,199}")
#: A partition's folder path: ``key=value`` pieces joined by ``/``.
PARTITION_PIECES = (
    f"{PARTITION_KEY.pattern}={PARTITION_VALUE.pattern}"
    f"(?:/{PARTITION_KEY.pattern}={PARTITION_VALUE.pattern})*"
)
#: Keys a partition may not take: the result's own folders and the summary's columns.
RESERVED_KEYS = ("city", "model", "run", "metric", "value", "n", "std")


def checked_partition(given: object, option: str = "partition") -> str | None:
    """``given`` (a mapping key -> value in order, an iterable of ``KEY=VALUE`` strings, one
    such string with ``/`` between pieces, or None) as a partition's folder path
    ``key=value[/key=value...]``, None for no partition; a ConfigError naming ``option`` and the
    first piece that is not a key (:data:`PARTITION_KEY`, not :data:`RESERVED_KEYS`, not twice)
    and a plain value (:data:`PARTITION_VALUE`)."""
    if given is None:
        return None
    if isinstance(given, str):
        given = given.split("/")
    pairs = given.items() if isinstance(given, Mapping) else [_pair(p, option) for p in given]
    seen = []
    for key, value in pairs:
        piece = f"{key}={value}"
        if not isinstance(key, str) or not PARTITION_KEY.fullmatch(key) or key in RESERVED_KEYS:
            raise ConfigError(
                f"{option}: {piece!r}: the key must be a lower-case identifier (letters, digits "
                f"and _) other than {', '.join(RESERVED_KEYS)}"
            )
        if not isinstance(value, str) or not PARTITION_VALUE.fullmatch(value):
            raise ConfigError(
                f"{option}: {piece!r}: the value must be a plain name (letters, digits and "
                "_ - . +, not starting with '.', at most 200 characters)"
            )
        if key in seen:
            raise ConfigError(f"{option}: {key!r} given twice")
        seen.append(key)
    return "/".join(f"{key}={value}" for key, value in pairs) or None


def add_option(command, job: bool = False) -> None:
    """``--partition KEY=VALUE`` (repeatable) on a scoring command, or on ``mobeval run``
    (``job``: a key's value there, ``*`` for every value found)."""
    command.add_argument(
        "--partition",
        action="append",
        metavar="KEY=VALUE",
        help="results over time: write each result under KEY=VALUE in every section (e.g. "
        "date=2026-11-27; again for more keys, nested in order)"
        + (
            "; in a job, the value of the job's partition key (* for every value found)"
            if job
            else ""
        ),
    )


def partition_pairs(items: list[str] | None, option: str = "--partition") -> dict[str, str]:
    """``--partition KEY=VALUE`` given again and again, as key -> value in order (the values
    not checked: a job's may be ``*``); a ConfigError for a piece without ``=``."""
    pairs = [_pair(item, option) for item in items or []]
    repeated = next((key for i, (key, _) in enumerate(pairs) if key in dict(pairs[:i])), None)
    if repeated is not None:
        raise ConfigError(f"{option}: {repeated!r} given twice")
    return dict(pairs)


def _pair(piece: object, option: str) -> tuple[object, object]:
    if not isinstance(piece, str) or "=" not in piece:
        raise ConfigError(f"{option}: {piece!r} is not KEY=VALUE (e.g. date=2026-11-27)")
    key, _, value = piece.partition("=")
    return key, value


def partition_values(partition: str | None) -> dict[str, str]:
    """The keys and values of a partition's path, in order (``{}`` for None)."""
    return dict(piece.split("=", 1) for piece in partition.split("/")) if partition else {}


def partition_shape(partition: str | None) -> str:
    """The glob of every partition with the same keys: ``date=*/hour=*`` (empty for None)."""
    return "/".join(f"{key}=*" for key in partition_values(partition))


def check_partition_layout(
    where: str, partition: str | None, matches: Callable[[str], bool]
) -> None:
    """A ConfigError when the OUT at ``where`` holds results under other partition keys than
    ``partition``'s (other keys, another order, or a partition where this result has none, or
    none where it has one): one OUT is one table for Spark, DuckDB and Polars only when every
    result lies at the same depth under the same keys. ``matches(pattern)``: whether a glob
    relative to OUT names something (the local disk, or Spark's file system)."""
    shape = partition_shape(partition)
    if not matches("summary/*") or matches(f"summary/{shape}{'/' if shape else ''}city=*"):
        return
    mine = f"under {shape.replace('*', '<v>')}/" if shape else "without a partition"
    raise ConfigError(
        f"{where.rstrip('/')}/summary holds results partitioned otherwise; this one would be "
        f"{mine}: every result of an OUT has the same --partition keys, in the same order (one "
        "table for Spark, DuckDB and Polars): give them, or another --out"
    )


def fill(template: str, values: Mapping[str, str]) -> str:
    """``template`` with each ``{key}`` of ``values`` replaced by its value."""
    for key, value in values.items():
        template = template.replace(f"{{{key}}}", value)
    return template


#: A placeholder in a job's input path: ``{date}``.
PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]{0,63})\}")


def placeholders(template: str) -> list[str]:
    """The partition keys a job's input path names, in order, each once."""
    return list(dict.fromkeys(PLACEHOLDER.findall(template)))


def template_regex(template: str) -> re.Pattern:
    """A regular expression matching the paths a template's glob finds, each placeholder a
    named group of one path piece (``{date}`` -> ``(?P<date>[^/]+)``; again: the same text);
    the template's own ``*`` and ``?`` match within a piece, as the glob's do."""
    pieces, seen = [], set()
    for index, text in enumerate(PLACEHOLDER.split(template)):
        if index % 2:  # a placeholder's key
            pieces.append(f"(?P={text})" if text in seen else f"(?P<{text}>[^/]+)")
            seen.add(text)
        else:
            pieces.append(re.escape(text).replace(r"\*", "[^/]*").replace(r"\?", "[^/]"))
    return re.compile("".join(pieces))


def ordered(found: Iterable[dict[str, str]]) -> list[dict[str, str]]:
    """Each set of values once, sorted by its values in key order (days in date order)."""
    unique = {tuple(values.items()): values for values in found}
    return [unique[key] for key in sorted(unique, key=lambda items: [v for _, v in items])]
