"""The inputs as the Spark engine reads them: a file, a directory or a glob resolved as the local
engine resolves it (same messages), read by Spark as Parquet or CSV (:func:`read_input`), and
MoveSim's sequence files (:mod:`mobeval.engines.spark.sequences`), and the formats that only the
local engine reads (TREC, RecBole) told by their first bytes and refused by name."""

from __future__ import annotations

import dataclasses
import io
import os

import polars as pl
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType, TimestampType

from mobeval.engines.spark.failures import spark_error
from mobeval.engines.spark.files import Files, as_uri
from mobeval.engines.spark.sequences import read_sequences
from mobeval.errors import ConfigError, InputError
from mobeval.io.columns import checked_renames, renamed_schema
from mobeval.io.recbole import parse_header
from mobeval.io.sequences import SCHEMA, is_sequence_file
from mobeval.io.sources import PARQUET_SUFFIXES, TEXT_SUFFIXES, format_of
from mobeval.io.trec import TrecSource, first_data_line, kind_of_line

#: Bytes read on the driver to tell a TREC file by its first data line, and RecBole's header.
HEAD_BYTES, LINE_BYTES = 1 << 20, 1 << 16


@dataclasses.dataclass
class SparkInput:
    """One input as the Spark engine reads it; ``schema()`` and ``label`` as a local source's."""

    label: str
    frame: DataFrame
    columns: dict  # Polars types of the columns, as the scorer will see them
    files: list[tuple[str, int, float]]
    renames: dict = dataclasses.field(default_factory=dict)  # ours -> the file's column

    def schema(self) -> dict:
        return self.columns

    def has_rows(self) -> bool:
        """Not asked of Spark before the run (a job of its own): an input without rows is
        named after the scoring, by the driver (``holds no rows``)."""
        return True

    def fingerprint(self) -> list[dict]:
        return [{"path": uri, "size": size, "mtime": mtime} for uri, size, mtime in self.files]


def _local_only_format(files: Files, uri: str, found: list) -> str | None:
    """The name of the input's format when it is one that only the local engine reads, told by
    its rules (:func:`mobeval.io.inputs.as_source`) on any file system Spark reads, the files'
    first bytes read on the driver: a single file (not named Parquet) whose first data line is a
    TREC run's or qrels' (:func:`mobeval.io.trec.kind_of_line`, within its first MiB), or a
    RecBole atomic file (named ``.inter``, or named ``.txt`` or not by format and starting with
    RecBole's typed header: :func:`mobeval.io.recbole.parse_header`); else None."""
    single = not uri.lower().endswith(PARQUET_SUFFIXES) and files.is_file(uri)
    if single and kind_of_line(first_data_line(io.BytesIO(files.head(uri, HEAD_BYTES)))):
        return "TREC run or qrels"
    for name, _, _ in found:
        named = format_of(name)
        if named == "recbole":
            return "RecBole atomic"
        if named is None or name.lower().endswith(TEXT_SUFFIXES):
            first = _first_line(files, name)
            if parse_header(first.decode("utf-8", errors="replace")) is not None:
                return "RecBole atomic"
    return None


def _first_line(files: Files, uri: str) -> bytes:
    """The first line of the file at ``uri`` (within :data:`LINE_BYTES`, gunzipped), read on the
    driver."""
    return io.BytesIO(files.head(uri, LINE_BYTES)).readline(LINE_BYTES)


def _local_only(kind: str, label: str) -> InputError:
    return InputError(
        f"a {kind} file, which the Spark engine does not read (it reads Parquet and CSV): "
        "evaluate it on the local engine, or write it as Parquet first",
        path=label,
    )


def _polars_schema(spark: SparkSession, schema: StructType) -> dict:
    """The Polars types of ``schema``'s columns as the partitions receive them (a timestamp
    with the session's time zone, as Spark hands it to Arrow)."""
    zone = spark.conf.get("spark.sql.session.timeZone")
    arrow = to_arrow_schema(schema, timezone=zone)
    return dict(pl.from_arrow(arrow.empty_table()).schema)


def _wall_clock(frame: DataFrame) -> DataFrame:
    """A CSV's timestamps as the text says them (``timestamp_ntz``: Polars' naive datetimes,
    the local engine's), not as instants of the session's time zone, which Spark's inference
    makes of them."""
    stamps = {f.name for f in frame.schema.fields if isinstance(f.dataType, TimestampType)}
    if not stamps:
        return frame
    return frame.select(
        *(
            _column(c).cast("timestamp_ntz").alias(c) if c in stamps else _column(c)
            for c in frame.columns
        )
    )


def _column(name: str):
    return F.col(f"`{name.replace('`', '``')}`")


def _first_field_is_number(spark: SparkSession, uri: str) -> bool:
    first = spark.read.text(uri).limit(1).collect()
    field = first[0][0].split(",")[0].strip() if first else ""
    return field.lstrip("-").replace(".", "", 1).isdigit()


def read_input(spark: SparkSession, path, *, names: tuple[str, ...] | None = None) -> SparkInput:
    """Read a file, a directory or a glob as the local engine resolves it (same messages); a
    Spark DataFrame as it is."""
    if isinstance(path, DataFrame):
        return SparkInput(
            "<Spark DataFrame>", path, _polars_schema(path.sparkSession, path.schema), []
        )
    if isinstance(path, TrecSource):  # the command line's --input-format trec
        raise _local_only("TREC run or qrels", path.label)
    if not isinstance(path, str | os.PathLike):
        raise ConfigError(
            f"the Spark engine reads paths (a file, a directory or a glob that Spark can read) "
            f"or Spark DataFrames, not a {type(path).__name__}"
        )
    label = str(path)
    uri = as_uri(path)
    files = Files(spark)
    try:
        found = files.data_files(uri)
    except Exception as error:  # noqa: BLE001 - a Py4J error: no such bucket, no access...
        raise spark_error(error, "cannot list this path", path=label) from None
    if not found:
        pattern = any(ch in uri for ch in "*?[{")
        message = "no file matches this pattern" if pattern else "no such file or directory"
        raise InputError(message, path=label)
    single = not uri.lower().endswith(PARQUET_SUFFIXES) and files.is_file(uri)
    try:
        if single and is_sequence_file(uri, _first_line(files, uri)):
            return SparkInput(label, read_sequences(spark, uri, label), dict(SCHEMA), found)
    except InputError:
        raise
    except Exception as error:  # noqa: BLE001 - a Py4J error: no access...
        raise spark_error(error, "cannot read this path", path=label) from None
    try:
        local_only = _local_only_format(files, uri, found)
    except Exception as error:  # noqa: BLE001 - a Py4J error: no access...
        raise spark_error(error, "cannot read this path", path=label) from None
    if local_only is not None:
        raise _local_only(local_only, label)
    formats = {format_of(name) for name, _, _ in found}
    if None in formats:
        bad = next(name for name, _, _ in found if format_of(name) is None)
        raise InputError("unknown file type (expected .parquet, .csv or .csv.gz)", path=bad)
    if len(formats) > 1:
        raise InputError("mixes Parquet and CSV files; give one format", path=label)
    file_format = formats.pop()
    uris = [name for name, _, _ in found]
    try:
        if file_format == "parquet":
            frame = spark.read.parquet(*uris)
        else:
            header = not (names and _first_field_is_number(spark, uris[0]))
            frame = spark.read.csv(uris, header=header, inferSchema=True)
            if not header:
                frame = frame.toDF(*names[: len(frame.columns)])
            frame = _wall_clock(frame)
        schema = _polars_schema(spark, frame.schema)
    except Exception as error:  # noqa: BLE001 - AnalysisException, Py4JJavaError
        kind = "Parquet" if file_format == "parquet" else "CSV"
        raise spark_error(error, f"not a readable {kind} file", path=label) from None
    return SparkInput(label, frame, schema, found)


def renamed_input(source: SparkInput, columns, role: str) -> SparkInput:
    """``source`` with its columns read under our names as ``columns`` (a
    :class:`mobeval.io.columns.ColumnMap`) maps them for this input (``role``), checked as the
    local engine's :func:`mobeval.io.columns.renamed` checks them."""
    if columns is None or not (columns.truth or columns.pred):
        return source
    renames = checked_renames(source.columns, columns, role, source.label)
    back = {theirs: ours for ours, theirs in renames.items()}
    frame = source.frame.select(*(_column(c).alias(back.get(c, c)) for c in source.frame.columns))
    schema = renamed_schema(source.columns, renames, source.label)
    return dataclasses.replace(source, frame=frame, columns=schema, renames=renames)
