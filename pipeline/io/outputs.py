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

from pathlib import Path

import polars as pl

from mobeval.errors import InputError


def scan_outputs(out: str | Path, section: str = "summary") -> pl.LazyFrame:
    """Every result of ``section`` (``summary``, ``per_unit``, ``per_day``) under ``out`` as one
    LazyFrame: the union of the files' columns (missing ones null; a column whose type differs
    between files in their common supertype, e.g. Int32 and Int64 keys as Int64), ``city`` and
    ``model`` first (strings, as written).

    >>> scan_outputs("out/nextloc_sample", "per_unit").filter(pl.col("city") == "tky").collect()
    """
    root = Path(out) / section
    files = sorted(root.glob("city=*/model=*/*.parquet"))
    if not files:
        raise InputError(
            f"no results in this folder (no {section}/city=*/model=*/*.parquet)", path=str(out)
        )
    hive = {"city": pl.String, "model": pl.String}  # names as written: "2024" stays a string
    scans = [pl.scan_parquet(path, hive_partitioning=True, hive_schema=hive) for path in files]
    return pl.concat(scans, how="diagonal_relaxed").select(
        "city", "model", pl.exclude("city", "model")
    )


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
        column = next((c for c in columns or [] if f'"{c}"' in str(error)), None)
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
