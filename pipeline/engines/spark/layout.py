"""The rows Spark shuffles: the truth's and every result's prediction rows in one flat table
(:func:`combined_table`: the key columns, a side tag, each side's source columns where
:func:`_layout` puts them, and the prediction rows' input position where their order matters),
hash-partitioned by the key into :func:`partition_count` partitions, sorted within partitions
and scored in ``mapInArrow`` (:func:`shuffle_and_score`) into the sections' struct columns
(:func:`arrow_output`)."""

from __future__ import annotations

import functools
import math

import polars as pl
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import IntegralType, LongType, StructType

from mobeval.engines.partition import BOTH, MODEL, PRED, PRED_SIDE, SIDE, TRUTH, TRUTH_SIDE
from mobeval.engines.spark.inputs import SparkInput

FILE = "__file"
ROW = "__row"
#: Input bytes per partition when ``partitions`` is not given (Parquet: compressed bytes).
BYTES_PER_PARTITION = 64 << 20


def _col(name: str):
    return F.col("`" + name.replace("`", "``") + "`")


def _key_exprs(key: list[str], *schemas: dict) -> list:
    """Key columns as Spark hashes them: integers of any width as long (as the plan casts them)."""
    exprs = []
    for column in key:
        integers = all(schema[column].is_integer() for schema in schemas)
        exprs.append(_col(column).cast("long").alias(column) if integers else _col(column))
    return exprs


def _layout(key: list[str], names: dict[str, list[str]], types: dict) -> dict[str, dict]:
    """Where each side's source columns lie in the flat table: ``{side prefix: {source column:
    table column}}``. A key column serves a side whose column has the key's type (as hashed:
    integers as long); a column both sides read with one type is one ``__both:`` column;
    anything else is the side's own (``__truth:c``, ``__pred:c``: null on the other side's
    rows)."""
    integer = {c: all(isinstance(types[side, c], IntegralType) for side in names) for c in key}
    layout = {side: {} for side in names}
    for side, columns in names.items():
        for c in columns:
            other = PRED if side == TRUTH else TRUTH
            same = c in names[other] and types[other, c] == types[side, c]
            if c in key and (types[side, c] == LongType() if integer[c] else same):
                layout[side][c] = c
            elif same:
                layout[side][c] = f"{BOTH}:{c}"
            else:
                layout[side][c] = f"{side}:{c}"
    return layout


def combined_table(
    truth: SparkInput,
    preds: list[SparkInput],
    key: list[str],
    truth_columns,
    pred_columns,
    *,
    input_order: bool,
):
    """Truth and every result's prediction rows in one flat table, and its layout
    (:func:`_layout`): keys, side (the truth 0, result ``i``'s predictions ``PRED_SIDE + i``),
    the source columns (``location``, read by both sides, once: ``__both:location``; one side's
    own: ``__pred:score``, null on the truth's rows), and with ``input_order`` the prediction
    rows' input position (file, then position in the file: Spark's row ids grow along a file's
    splits) so that a unit's rows can be put back in the local engine's order after the shuffle
    (the input-order tie policies and next-location ``duplicates="drop"`` depend on it). The
    results' predictions share their columns: their types must agree (the engine's
    ``_group_key``)."""
    schemas = {TRUTH: truth.frame.schema, PRED: preds[0].frame.schema}  # one JVM call each
    names = {TRUTH: list(truth_columns), PRED: list(pred_columns)}
    types = {(side, c): schemas[side][c].dataType for side in names for c in names[side]}
    layout = _layout(key, names, types)
    keys = _key_exprs(key, truth.columns, *[pred.columns for pred in preds])
    position = [
        F.col("_metadata.file_path").alias(FILE),
        F.monotonically_increasing_id().alias(ROW),
    ]
    table = {}  # table column -> (side whose source holds it, source column), in order
    for side in (TRUTH, PRED):
        for c, column in layout[side].items():
            if column not in key:
                table.setdefault(column, (side, c))
    sides = [(TRUTH_SIDE, truth, TRUTH)]
    sides += [(PRED_SIDE + index, pred, PRED) for index, pred in enumerate(preds)]
    frames = []
    for side, source, own in sides:
        columns = [
            _col(c).alias(column)
            if layout[own].get(c) == column
            else F.lit(None).cast(types[holder, c]).alias(column)
            for column, (holder, c) in table.items()
        ]
        if input_order:
            columns += (
                position
                if own == PRED
                else [F.lit(None).cast("string").alias(FILE), F.lit(None).cast("long").alias(ROW)]
            )
        frames.append(source.frame.select(*keys, F.lit(side).cast("int").alias(SIDE), *columns))
    return functools.reduce(DataFrame.unionByName, frames), layout


def arrow_output(sections: dict[str, dict]) -> tuple[StructType, pa.Schema]:
    """The mapInArrow schema: the result's index in its group (``MODEL``), then a struct column
    per section (Polars types given)."""
    fields = [pa.field(MODEL, pa.int32(), nullable=False)]
    for section, schema in sections.items():
        arrow = pl.DataFrame(schema=schema).to_arrow().schema
        fields.append(pa.field(section, pa.struct(list(arrow))))
    spark_schema = from_arrow_schema(pa.schema(fields))
    return spark_schema, to_arrow_schema(spark_schema)


def partition_count(spark: SparkSession, inputs: list[SparkInput], partitions: int | None) -> int:
    if partitions is not None:
        return partitions
    size = sum(
        size for source in {id(s): s for s in inputs}.values() for _, size, _ in source.files
    )
    return max(spark.sparkContext.defaultParallelism, math.ceil(size / BYTES_PER_PARTITION))


def shuffle_and_score(
    combined: DataFrame, score, spark_schema: StructType, *, key, n_partitions: int
):
    """``combined`` hash-partitioned by ``key``, sorted within partitions (by key, side, and the
    input position where kept), through ``score`` (the partition function) in mapInArrow."""
    order = [c for c in (FILE, ROW) if c in combined.columns]
    return (
        combined.repartition(n_partitions, *[_col(c) for c in key])
        .sortWithinPartitions(*[_col(c) for c in key], SIDE, *order)
        .drop(*order)
        .mapInArrow(score, spark_schema)
    )
