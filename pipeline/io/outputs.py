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
