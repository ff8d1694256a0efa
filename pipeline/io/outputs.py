"""Reading a whole OUT back: every result of one section as one table, with ``city`` and ``model``.

A result's files lie under ``OUT/<section>/city=<c>/model=<m>/`` (:func:`mobeval.io.writers.
partition_path`): Hive partitioning, which Polars, DuckDB and Spark turn into ``city`` and
``model`` columns. Within a family the per-unit columns are stable: the unit's key, the family's
fixed columns (``rank``, ``n_candidates``; ``n_days``, ``n_steps``; ``row``, ``target``...) and one
Float64 column per metric asked for, so two models scored with different metrics differ only by
whole metric columns. Readers take the union of the columns (a value a model was not scored on is
null): DuckDB's ``read_parquet(..., union_by_name = true)`` (with ``hive_types_autocast =
false``, so that a city named ``2024`` stays a string), Spark's ``mergeSchema``, and
:func:`scan_outputs` for Polars, whose glob reader takes the first file's columns.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import polars as pl

from mobeval.errors import InputError
from mobeval.io.partitions import PARTITION_PIECES
from mobeval.io.writers import PLAIN_NAME


def scan_outputs(out: str | Path, section: str = "summary") -> pl.LazyFrame:
    """Every result of ``section`` (``summary``, ``per_unit``, ``per_day``) under ``out`` as one
    LazyFrame: the union of the files' columns (missing ones null; a numeric column whose type
    differs between files in their common supertype, e.g. Int32 and Int64 keys as Int64), the
    partition's keys first when results lie under one (``date``: results over time,
    :mod:`mobeval.io.partitions`), then ``city`` and ``model`` (strings, as written), then
    ``run`` when some model has runs (``model=<m>/run=<r>``; null for the results without one).
    A file that is not Parquet, or a column of two kinds (a String key here, an Int64 one
    there), is an InputError naming the file and column.

    >>> scan_outputs("out/nextloc_sample", "per_unit").filter(pl.col("city") == "tky").collect()
    """
    root = Path(out) / section
    found = {
        path: RESULT_FILE.fullmatch(path.relative_to(root).as_posix())
        for path in root.rglob("*.parquet")
    }
    files = sorted(path for path, matched in found.items() if matched is not None)
    if not files:
        raise InputError(
            f"no results in this folder (no {section}/city=*/model=*/*.parquet)", path=str(out)
        )
    first_seen: dict[str, tuple[pl.DataType, Path]] = {}  # each column's type in its first file
    for path in files:  # every footer read now: a damaged file is named here, not met later
        for column, dtype in section_schema([path]).items():
            first, where = first_seen.setdefault(column, (dtype, path))
            if dtype != first and not (dtype.is_numeric() and first.is_numeric()):
                raise InputError(
                    f"{dtype} here, {first} in {where}: not one table (a damaged output?)",
                    path=path,
                    column=column,
                )
    keys = {path: _folder_keys(found[path]) for path in files}
    names = [*dict.fromkeys(key for path in files for key in keys[path] if key != "run")]
    names += ["run"] if any("run" in keys[path] for path in files) else []
    scans = [  # names as written: "2024" and "2026-11-27" stay strings
        pl.scan_parquet(
            path, hive_partitioning=True, hive_schema=dict.fromkeys(keys[path], pl.String)
        )
        for path in files
    ]
    return pl.concat(scans, how="diagonal_relaxed").select(*names, pl.exclude(*names))


def _folder_keys(matched: re.Match) -> list[str]:
    """The Hive keys of a result file's folders (``date``, ``city``, ``model``, ``run``)."""
    partition = matched.group("partition")
    pieces = [*(partition.split("/") if partition else []), "city=", "model="]
    return [piece.split("=", 1)[0] for piece in pieces] + (["run"] if matched.group("run") else [])


# --------------------------------------------------------------------------------------------
# One result's section, read back by compare and report


def _unreadable(files: list[Path], columns: list[str] | None, error: Exception) -> InputError:
    """The error of reading ``files``, naming the first file that cannot be read alone (a
    damaged file, or one without one of ``columns``)."""
    for path in files:
        try:
            pl.read_parquet(path, columns=columns, hive_partitioning=False)
        except (pl.exceptions.PolarsError, OSError) as own:
            error = own
            break
    else:
        path = files[0].parent  # each file reads alone: they do not agree with each other
    reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    if isinstance(error, pl.exceptions.ColumnNotFoundError):
        named = re.search(r'column "([^"]*)"', str(error))  # not the valid columns listed after
        column = named.group(1) if named else None
        return InputError("column missing from this output file", path=path, column=column)
    return InputError(f"not a readable mobeval output file ({reason})", path=path)


def read_section(files: list[Path], columns: list[str] | None = None) -> pl.DataFrame:
    """The Parquet ``files`` of one result's section (``columns`` of them, or all) as one table;
    InputError naming the file for a damaged file, a missing column or files that disagree."""
    try:
        return pl.read_parquet(files, columns=columns, hive_partitioning=False)
    except (pl.exceptions.PolarsError, OSError) as error:
        raise _unreadable(files, columns, error) from None


def section_schema(files: list[Path]) -> pl.Schema:
    """The columns and types of a section's first file (InputError naming it when damaged)."""
    try:
        return pl.read_parquet_schema(files[0])
    except (pl.exceptions.PolarsError, OSError) as error:
        raise _unreadable(files[:1], None, error) from None


#: The columns every summary file holds: the kind of type each must have, and its test.
SUMMARY_COLUMNS = {
    "metric": ("string", lambda dtype: dtype == pl.String),
    "value": ("numeric", lambda dtype: dtype.is_numeric()),
    "n": ("integer", lambda dtype: dtype.is_integer()),
}


def read_summary(files: list[Path]) -> pl.DataFrame:
    """A result's summary (metric, value, n, ...), its three columns checked (InputError naming
    the file and the column otherwise)."""
    summary = read_section(files)
    for name, (kind, fits) in SUMMARY_COLUMNS.items():
        dtype = summary.schema.get(name)
        if dtype is None or not fits(dtype):
            why = "is missing" if dtype is None else f"is {dtype}"
            raise InputError(
                f"a summary's {name} column must be {kind}; this one {why}",
                path=files[0].parent,
                column=name,
            )
    return summary


# --------------------------------------------------------------------------------------------
# The manifest, read back by compare, report and every run that writes to OUT


class Each(NamedTuple):
    """A JSON container (``dict`` or ``list``) whose every value is of the kind ``item``."""

    container: type
    item: object


class Record(NamedTuple):
    """A JSON object with these keys: ``required`` ones and ``optional`` ones, each of a kind
    (other keys are let be)."""

    required: dict[str, object]
    optional: dict[str, object]


#: One result of a manifest (:meth:`mobeval.api.Manifest.record`). Every manifest since the
#: first has the required keys; ``engine``, ``resolved`` and ``files`` came later. A kind is a
#: JSON type (``float``: any number, ``None``: null), a tuple of them, :class:`Each` or
#: :class:`Record`.
MANIFEST_RESULT = Record(
    required={
        "task": str,
        "status": str,
        "config": dict,
        "config_hash": str,
        "inputs": Each(dict, Each(list, dict)),
        "outputs": Each(dict, str),
        "seconds": float,
        "finished": str,
    },
    optional={"engine": str, "resolved": (dict, None), "files": Each(dict, Each(dict, int))},
)

#: ``OUT/manifest.json`` as a whole.
MANIFEST = Record(
    required={},
    optional={"job": dict, "versions": Each(dict, str), "results": Each(dict, MANIFEST_RESULT)},
)

#: The name of a result in the manifest: ``city=<c>/model=<m>``, or ``city=<c>/model=<m>/run=<r>``
#: for one run of a model (:func:`mobeval.io.writers.result_name`), all plain names, after its
#: partition if it has one (``date=2026-11-27/city=<c>/...``: :mod:`mobeval.io.partitions`).
RESULT_NAME = re.compile(
    f"(?:(?P<partition>{PARTITION_PIECES})/)?city=(?P<city>{PLAIN_NAME.pattern})"
    f"/model=(?P<model>{PLAIN_NAME.pattern})(?:/run=(?P<run>{PLAIN_NAME.pattern}))?"
)
#: A result's file under its section: its result name, then the file's name.
RESULT_FILE = re.compile(f"{RESULT_NAME.pattern}/[^/]+[.]parquet")

_JSON_NAMES = {dict: "an object", list: "an array", str: "a string", int: "an integer"}
_JSON_NAMES |= {float: "a number", type(None): "null", bool: "true or false"}


def _kind_name(kind: object) -> str:
    if isinstance(kind, Each | Record):  # named tuples, not alternatives
        return _kind_name(kind.container if isinstance(kind, Each) else dict)
    if isinstance(kind, tuple):
        return " or ".join(_kind_name(k) for k in kind)
    return _JSON_NAMES[type(None) if kind is None else kind]


def _fits(value: object, kind: object) -> bool:
    """Whether ``value`` is of the JSON type of ``kind`` (its items not looked at)."""
    if isinstance(kind, Each):
        return isinstance(value, kind.container)
    if isinstance(kind, Record):
        return isinstance(value, dict)
    if isinstance(kind, tuple):
        return any(_fits(value, k) for k in kind)
    if kind is None or isinstance(value, bool):  # JSON's true and false are not numbers
        return value is kind
    return isinstance(value, int | float) if kind is float else isinstance(value, kind)


def misfit(value: object, kind: object, where: str = "") -> str | None:
    """Where ``value`` (read from JSON; its path ``where``, ``results["x"].config``, empty for the
    document) first departs from ``kind``, and how; None when all of it fits."""
    if not _fits(value, kind):
        return f"{where or 'the document'} is {_JSON_NAMES[type(value)]}, not {_kind_name(kind)}"
    inner = []
    if isinstance(kind, Each):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        inner = [(item, kind.item, f"{where}[{json.dumps(name)}]") for name, item in items]
    elif isinstance(kind, Record):
        missing = [name for name in kind.required if name not in value]
        if missing:
            return f"{where} has no {json.dumps(missing[0])}"
        kinds = kind.required | kind.optional
        inner = [(value[n], kinds[n], f"{where}.{n}".lstrip(".")) for n in kinds if n in value]
    return next((found for args in inner if (found := misfit(*args)) is not None), None)


def _local_text(path: str) -> str | None:
    return Path(path).read_text() if Path(path).exists() else None


def read_manifest(
    path: object, read_text: Callable[[str], str | None] = _local_text, remedy: str = ""
) -> dict[str, dict]:
    """The results of the manifest at ``path`` (``OUT/manifest.json``; ``read_text`` reads it,
    None when there is none: no results), the whole document checked first (:data:`MANIFEST`,
    :data:`RESULT_NAME`): every reader of a manifest reads it here. A damaged one is an
    InputError naming the file, the first result and key that is wrong and how, then ``remedy``
    (what the user may do)."""
    try:
        text = read_text(str(path))
        document = {} if text is None else json.loads(text)
    except (ValueError, OSError) as error:  # not UTF-8, not JSON, unreadable
        reason = str(error).strip().splitlines()[0][:200] or type(error).__name__
    else:
        reason = misfit(document, MANIFEST)
        if reason is None:
            names = [n for n in document.get("results", {}) if not RESULT_NAME.fullmatch(n)]
            if names:
                reason = f"results[{json.dumps(names[0])}] is not named city=<c>/model=<m>"
    if reason is not None:
        raise InputError(f"not a readable mobeval manifest ({reason}){remedy}", path=path)
    return document.get("results", {})
