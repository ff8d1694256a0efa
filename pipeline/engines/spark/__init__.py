"""The Spark engine: the same jobs, the same partition scorer, many machines.

:class:`SparkEngine` is the engine :mod:`mobeval.api`'s ``evaluate_*`` functions run on with
``engine="spark"`` or ``spark=<SparkSession>`` (and :func:`mobeval.jobs.run_job` with
``engine="spark"``). Per (city, model)::

    spark.read (Parquet / CSV)  ->  the task's input plan: columns checked on the driver, with the
    local engine's messages  ->  truth and prediction rows in one flat table (a side tag, the
    source columns: :func:`layout.combined_table`; a job's models of one truth all in it, one
    side each)  ->  repartition(n, *key) (Spark's hash partitioning: a unit is whole in one
    partition whatever the file layout)  ->  sortWithinPartitions(*key, side, file, row)  ->
    mapInArrow(score_partition)  (mobeval.engines.partition: the local engine's scorer classes
    and Numba kernels, Numba threads = spark.task.cpus)  ->  per-partition folds merged on the
    driver (exact sums)  ->  summary; per-unit sections written by Spark under
    OUT/.staging/city=<c>/model=<m>/ and renamed into OUT/<section>/city=<c>/model=<m> (summary
    last) with the Hadoop FileSystem API  ->  OUT/manifest.json.

Under the input-order tie policies of nextloc (``input``, ``ranx*``), and always for
recommendation lists (ClayRS and RELISON read a user's list in file order), a unit's prediction
rows are put back in their input order (file path, then position in the file) after the shuffle.
``OUT`` is any path Spark can write (``s3a://``, ``abfss://``,
``dbfs:/``, HDFS, local). PySpark is imported in this package only (importing it without PySpark
raises :class:`mobeval.engines.partition.SparkNotInstalled`); ``pip install 'mobeval[spark]'``.

    >>> from pyspark.sql import SparkSession
    >>> from mobeval.api import evaluate_nextloc
    >>> spark = SparkSession.builder.getOrCreate()
    >>> evaluate_nextloc("s3a://b/truth.parquet", "s3a://b/deepmove/", k=[1, 5, 10], spark=spark,
    ...                  out="s3a://b/eval/", city="tky", model="deepmove")

Logits (rows paired by position, no key) are cut into ranges of whole chunks instead, one per
task, each read by its task from the ``.npy`` or Parquet file (a path every executor can read).

One concern per module, each importing only those above it:

* :mod:`~mobeval.engines.spark.failures`: what a Spark failure means and what to change (no
  PySpark: plain data), and the error mobeval raises for it;
* :mod:`~mobeval.engines.spark.session`: the SparkSession (started quiet or not), Spark's log
  level during a run, ``spark.task.cpus``;
* :mod:`~mobeval.engines.spark.files`: URIs and the Hadoop FileSystem operations, OUT's lock;
* :mod:`~mobeval.engines.spark.inputs`: a path or DataFrame read as an input, the formats only
  the local engine reads refused;
* :mod:`~mobeval.engines.spark.layout`: the flat table of truth and prediction rows, the
  partition count, the shuffle into ``mapInArrow``;
* :mod:`~mobeval.engines.spark.hashes`: the population ratios' trajectory hashes as rows of the
  scored table, their totals counted by Spark (the driver never holds them);
* :mod:`~mobeval.engines.spark.results`: the sections written, the folds merged, the results
  committed under OUT, the progress line;
* :mod:`~mobeval.engines.spark.engine`: :class:`SparkEngine`, which plans, groups and runs.
"""

from __future__ import annotations

from mobeval.engines.partition import SparkNotInstalled

try:  # every PySpark module the package imports: a missing PySpark is named here, once
    import pyspark.sql.functions  # noqa: F401
    import pyspark.sql.pandas.types  # noqa: F401
except ImportError as error:  # pragma: no cover - depends on the installation
    raise SparkNotInstalled(
        f"the Spark engine needs PySpark 4 ({error}): pip install 'mobeval[spark]'"
    ) from error

from mobeval.engines.spark.engine import SparkEngine
from mobeval.engines.spark.files import as_uri
from mobeval.engines.spark.layout import BYTES_PER_PARTITION
from mobeval.engines.spark.session import is_quiet, quiet_log, spark_session

__all__ = [
    "BYTES_PER_PARTITION",
    "SparkEngine",
    "as_uri",
    "is_quiet",
    "quiet_log",
    "spark_session",
]
