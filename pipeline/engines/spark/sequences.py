"""MoveSim's sequence files (``real.data``, ``test.data``; :mod:`mobeval.io.sequences`) as the
Spark engine reads them: the rows the local engine's :class:`mobeval.io.sequences.SequenceSource`
gives, ``uid`` the line's number from 0, ``d`` 0, ``t`` the id's place in its line and
``location`` the id, so that a population scores to the local bits.

Spark reads the file as text (gzipped or not; a ``.gz`` file is one partition, as Hadoop cannot
split it), numbers the lines by ``zipWithIndex`` (one counting pass over the partitions; the
numbers follow the file's order) and splits each line on white space (``posexplode``). A line
that is not integers apart by spaces or tabs is found by a regular expression, as the local
reader's :data:`mobeval.io.sequences.LINE`, and named in the local reader's words (the first such
line).
"""

from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from mobeval.errors import InputError

#: :data:`mobeval.io.sequences.LINE` as Java writes it, anchored: Spark's ``rlike`` finds.
LINE = r"^\s*-?\d{1,18}(?:[ \t]+-?\d{1,18})*\s*$"
_LINES = StructType([StructField("value", StringType()), StructField("uid", LongType())])


def read_sequences(spark: SparkSession, uri: str, label: str):
    """The rows (columns :data:`mobeval.io.sequences.SCHEMA`) of the sequence file at ``uri``
    as a Spark DataFrame; InputError naming ``label``, the column and the first line that holds
    no id or a non-integer, as the local engine names it."""
    numbered = spark.read.text(uri).rdd.zipWithIndex().map(lambda row: (row[0][0], row[1]))
    lines = spark.createDataFrame(numbered, _LINES)
    bad = lines.filter(~F.col("value").rlike(LINE)).orderBy("uid").limit(1).collect()
    if bad:
        value, number = bad[0]
        what = "holds no location id" if not value.strip() else "holds a non-integer"
        raise InputError(
            f"line {number + 1} {what} (a sequence file is location ids apart by spaces, one "
            "trajectory a line)",
            path=label,
            column="location",
            key=number,
        )
    ids = F.split(F.regexp_replace("value", r"^\s+|\s+$", ""), r"[ \t]+")
    return lines.select("uid", F.posexplode(ids).alias("t", "location")).select(
        "uid",
        F.lit(0).cast("long").alias("d"),
        F.col("t").cast("long"),
        F.col("location").cast("long"),
    )
