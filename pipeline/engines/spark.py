"""The Spark engine: the same jobs, the same partition scorer, many machines.

Per (city, model)::

    spark.read (Parquet / CSV)  ->  the task's input plan: columns checked on the driver, with the
    local engine's messages  ->  truth and prediction rows in one table (a side tag, the source
    columns in a struct per side)  ->  repartition(n, *key) (Spark's hash partitioning: a unit is
    whole in one partition whatever the file layout)  ->  sortWithinPartitions(*key, side, file,
    row)  ->  mapInArrow(score_partition)  (mobeval.engines.partition: the local engine's scorer
    classes and Numba kernels, Numba threads = spark.task.cpus)  ->  per-partition folds merged on
    the driver (exact sums)  ->  summary; per-unit sections written by Spark under
    OUT/.staging/city=<c>/model=<m>/ and renamed into OUT/<section>/city=<c>/model=<m> (summary
    last) with the Hadoop FileSystem API  ->  OUT/manifest.json.

Under the input-order tie policies of nextloc (``input``, ``ranx*``), and always for
recommendation lists (ClayRS and RELISON read a user's list in file order), a unit's prediction
rows are put back in their input order (file path, then position in the file) after the shuffle.
``OUT`` is any path Spark can write (``s3a://``, ``abfss://``,
``dbfs:/``, HDFS, local). PySpark is imported here only; ``pip install 'mobeval[spark]'``.

    >>> from pyspark.sql import SparkSession
    >>> from mobeval.engines.spark import evaluate_nextloc_spark, run_job_spark
    >>> spark = SparkSession.builder.getOrCreate()
    >>> evaluate_nextloc_spark(spark, "s3a://b/truth.parquet", "s3a://b/deepmove/", k=[1, 5, 10],
    ...                        out="s3a://b/eval/", city="tky", model="deepmove")
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import os
import pickle
import re
import sys
import time
from pathlib import PurePosixPath

import polars as pl
import pyarrow as pa

from mobeval.api import DEFAULT_CITY, Evaluation, Manifest, default_model_name
from mobeval.engines.local import DEFAULT_CHUNK_ROWS
from mobeval.engines.partition import (
    PRED,
    PRED_SIDE,
    SIDE,
    STATE,
    TRUTH,
    TRUTH_SIDE,
    NextlocPartitionJob,
    RecsPartitionJob,
    SparkNotInstalled,
    TrajectoryPartitionJob,
    rebuild_error,
    score_partition,
)
from mobeval.errors import ConfigError, InputError
from mobeval.families import FAMILIES, RECS, with_options
from mobeval.io.writers import STAGING, check_name, output_lock, partition_path, require_staged
from mobeval.metrics.nextloc import INPUT_ORDER_TIES
from mobeval.metrics.recs import parse_recs_metrics
from mobeval.options import option_values
from mobeval.tasks.nextloc import nextloc_spec, plan_inputs
from mobeval.tasks.recs import RecsPlan, rec_columns
from mobeval.tasks.trajectory import COLUMNS as TRAJECTORY_COLUMNS
from mobeval.tasks.trajectory import TrajectoryScorer, checked_convention

try:
    from pyspark import StorageLevel
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
    from pyspark.sql.types import StructType
except ImportError as error:  # pragma: no cover - depends on the installation
    raise SparkNotInstalled(
        f"the Spark engine needs PySpark 4 ({error}): pip install 'mobeval[spark]'"
    ) from error

PARQUET_SUFFIXES = (".parquet", ".pq")
CSV_SUFFIXES = (".csv", ".csv.gz", ".txt", ".txt.gz")
FILE = "__file"
ROW = "__row"
#: Input bytes per partition when ``partitions`` is not given (Parquet: compressed bytes).
BYTES_PER_PARTITION = 64 << 20
SUMMARY = "summary"
#: The task types the Spark engine runs (``mobeval run --engine spark``).
SPARK_TASKS = ("nextloc", "trajectory", "recs")


def spark_session(app_name: str = "mobeval") -> SparkSession:
    """``SparkSession.builder.getOrCreate()``; started from a plain ``python`` (not spark-submit,
    not a notebook with a session), the workers run this interpreter unless PYSPARK_PYTHON says
    otherwise."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ and SparkSession.getActiveSession() is None:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    try:
        return SparkSession.builder.appName(app_name).getOrCreate()
    except Exception as error:  # noqa: BLE001 - no Java, a bad master URL...
        raise ConfigError(
            f"could not start Spark ({_first_line(error)}); Spark 4 needs Java 17 or later "
            "(JAVA_HOME or java on PATH)"
        ) from None


# ---------------------------------------------------------------------------------------------
# Paths and files (Hadoop FileSystem API: any file system Spark can reach)


def as_uri(path: str | os.PathLike) -> str:
    """The URI Spark reads: ``s3a://b/k`` stays as given; a job path that went through
    ``pathlib`` (``/jobs/s3a:/b/k``, the job file's folder prefixed) gets its scheme back."""
    text = os.fspath(path)
    if "://" in text:
        return text
    parts = PurePosixPath(text).parts
    for index, part in enumerate(parts):
        if re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]+:", part):
            scheme, rest = part[:-1].lower(), "/".join(parts[index + 1 :])
            return f"{scheme}:/{rest}" if scheme in ("file", "dbfs") else f"{scheme}://{rest}"
    return text


class _Files:
    """The few file operations the engine needs, through Hadoop's FileSystem API."""

    def __init__(self, spark: SparkSession) -> None:
        self.jvm = spark.sparkContext._jvm
        self.conf = spark.sparkContext._jsc.hadoopConfiguration()

    def _path(self, uri: str):
        path = self.jvm.org.apache.hadoop.fs.Path(uri)
        return path, path.getFileSystem(self.conf)

    def exists(self, uri: str) -> bool:
        path, fs = self._path(uri)
        return bool(fs.exists(path))

    def _qualified(self, uri: str) -> str:
        path, fs = self._path(uri)
        return str(fs.makeQualified(path))

    def local_path(self, uri: str) -> str | None:
        """The path on the driver's disk when ``uri`` is on the local file system, else None."""
        path, fs = self._path(uri)
        if fs.getUri().getScheme() != "file":
            return None
        return str(fs.makeQualified(path).toUri().getPath())

    def remove_staged(self, uri: str, root: str) -> None:
        """Delete ``uri`` recursively (nothing if absent) once
        :func:`mobeval.io.writers.require_staged` has checked, on the fully qualified URIs, that
        it lies inside ``root/.staging``."""
        path, fs = self._path(require_staged(self._qualified(uri), self._qualified(root)))
        if fs.exists(path):
            fs.delete(path, True)

    def replace(self, source: str, target: str, *, aside: str, root: str) -> None:
        """Put ``source`` in ``target``'s place by renames: an existing ``target`` is first renamed
        to ``aside`` (in the staging area), then deleted once ``source`` is in place."""
        src, fs = self._path(source)
        dst, _ = self._path(target)
        if fs.exists(dst) and not fs.rename(dst, self._path(aside)[0]):
            raise OSError(f"could not move {target} aside to {aside}")
        fs.mkdirs(dst.getParent())
        if not fs.rename(src, dst):
            raise OSError(f"could not move {source} to {target}")
        self.remove_staged(aside, root)

    def keep_data_files(self, uri: str, root: str) -> None:
        """Delete the ``_SUCCESS`` marker and ``.crc`` checksums Hadoop writes beside part files
        of a staged section ``uri``, so that Polars and DuckDB read the directory as it is."""
        require_staged(self._qualified(uri), self._qualified(root))
        path, fs = self._path(uri)
        if self.jvm.org.apache.hadoop.fs.ChecksumFileSystem._java_lang_class.isInstance(fs):
            fs = fs.getRawFileSystem()  # the checksummed view hides the .crc files
        for status in fs.listStatus(path):
            if status.getPath().getName().startswith(("_", ".")):
                fs.delete(status.getPath(), False)

    def write_text(self, uri: str, text: str) -> None:
        """Write through a temporary name, then rename (atomic where the file system is)."""
        path, fs = self._path(uri)
        temporary = self.jvm.org.apache.hadoop.fs.Path(path.getParent(), f".tmp-{path.getName()}")
        stream = fs.create(temporary, True)
        try:
            stream.write(bytearray(text.encode()))
        finally:
            stream.close()
        if fs.exists(path):
            fs.delete(path, False)
        if not fs.rename(temporary, path):
            raise OSError(f"could not write {uri}")

    def read_text(self, uri: str) -> str | None:
        path, fs = self._path(uri)
        if not fs.exists(path):
            return None
        stream = fs.open(path)
        try:
            return self.jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")
        finally:
            stream.close()

    def data_files(self, uri: str) -> list[tuple[str, int, float]]:
        """(uri, size, mtime) of the files a path or a glob names, sorted; for a directory, its
        Parquet / CSV files (recursively) except hidden ones (``.``, ``_``, as Spark skips)."""
        path, fs = self._path(uri)
        found = []
        for status in fs.globStatus(path) or []:
            if not status.isDirectory():
                found.append(_file_entry(status))
                continue
            root = str(status.getPath().toUri().getPath()).rstrip("/") + "/"
            listing = fs.listFiles(status.getPath(), True)
            while listing.hasNext():
                entry = listing.next()
                inside = str(entry.getPath().toUri().getPath()).removeprefix(root)
                hidden = any(part.startswith((".", "_")) for part in inside.split("/"))
                if not hidden and _format_of(inside):  # a directory's data files, as locally
                    found.append(_file_entry(entry))
        return sorted(found)


def _file_entry(status) -> tuple[str, int, float]:
    return str(status.getPath()), int(status.getLen()), status.getModificationTime() / 1000


# ---------------------------------------------------------------------------------------------
# Inputs


@dataclasses.dataclass
class _Input:
    label: str
    frame: DataFrame
    schema: dict  # Polars types of the columns, as the scorer will see them
    files: list[tuple[str, int, float]]

    def fingerprint(self) -> list[dict]:
        return [{"path": uri, "size": size, "mtime": mtime} for uri, size, mtime in self.files]


def _format_of(name: str) -> str | None:
    name = name.lower()
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    return None


def _polars_schema(schema: StructType) -> dict:
    arrow = to_arrow_schema(schema)
    return dict(pl.from_arrow(arrow.empty_table()).schema)


def _first_field_is_number(spark: SparkSession, uri: str) -> bool:
    first = spark.read.text(uri).limit(1).collect()
    field = first[0][0].split(",")[0].strip() if first else ""
    return field.lstrip("-").replace(".", "", 1).isdigit()


def _read(spark: SparkSession, path, *, names: tuple[str, ...] | None = None) -> _Input:
    """Read a file, a directory or a glob as the local engine resolves it (same messages)."""
    label = str(path)
    uri = as_uri(path)
    files = _Files(spark)
    try:
        found = files.data_files(uri)
    except Exception as error:  # noqa: BLE001 - a Py4J error: no such bucket, no access...
        raise InputError(f"cannot list this path ({_first_line(error)})", path=label) from None
    if not found:
        pattern = any(ch in uri for ch in "*?[{")
        message = "no file matches this pattern" if pattern else "no such file or directory"
        raise InputError(message, path=label)
    formats = {_format_of(name) for name, _, _ in found}
    if None in formats:
        bad = next(name for name, _, _ in found if _format_of(name) is None)
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
        schema = _polars_schema(frame.schema)
    except Exception as error:  # noqa: BLE001 - AnalysisException, Py4JJavaError
        kind = "Parquet" if file_format == "parquet" else "CSV"
        raise InputError(f"not a readable {kind} file ({_first_line(error)})", path=label) from None
    return _Input(label, frame, schema, found)


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0][:300] if text else type(error).__name__


def _col(name: str):
    return F.col("`" + name.replace("`", "``") + "`")


def _key_exprs(key: list[str], left: dict, right: dict) -> list:
    """Key columns as Spark hashes them: integers of any width as long (as the plan casts them)."""
    exprs = []
    for column in key:
        both_integer = left[column].is_integer() and right[column].is_integer()
        exprs.append(_col(column).cast("long").alias(column) if both_integer else _col(column))
    return exprs


def _combined(
    truth: _Input, pred: _Input, key: list[str], truth_columns, pred_columns, *, input_order: bool
):
    """Truth and prediction rows in one table: keys, side, one struct of source columns per side,
    and with ``input_order`` the prediction rows' input position (file, then position in the file:
    Spark's row ids grow along a file's splits) so that a unit's rows can be put back in the
    local engine's order after the shuffle (the input-order tie policies and next-location
    ``duplicates="drop"`` depend on it)."""
    keys = _key_exprs(key, truth.schema, pred.schema)
    truth_struct = F.struct(*[_col(c) for c in truth_columns])
    pred_struct = F.struct(*[_col(c) for c in pred_columns])
    truth_type = truth.frame.select(truth_struct.alias(TRUTH)).schema[TRUTH].dataType
    pred_type = pred.frame.select(pred_struct.alias(PRED)).schema[PRED].dataType
    position = []
    if input_order:
        position = [F.col("_metadata.file_path").alias(FILE), F.monotonically_increasing_id()]
    left = truth.frame.select(
        *keys,
        F.lit(TRUTH_SIDE).cast("byte").alias(SIDE),
        truth_struct.alias(TRUTH),
        F.lit(None).cast(pred_type).alias(PRED),
        *(
            [F.lit(None).cast("string").alias(FILE), F.lit(None).cast("long").alias(ROW)]
            if input_order
            else []
        ),
    )
    right = pred.frame.select(
        *keys,
        F.lit(PRED_SIDE).cast("byte").alias(SIDE),
        F.lit(None).cast(truth_type).alias(TRUTH),
        pred_struct.alias(PRED),
        *([position[0], position[1].alias(ROW)] if input_order else []),
    )
    return left.unionByName(right)


def _arrow_output(sections: dict[str, dict]) -> tuple[StructType, pa.Schema]:
    """The mapInArrow schema: a struct column per section (Polars types given), then ``state``."""
    fields = []
    for section, schema in sections.items():
        arrow = pl.DataFrame(schema=schema).to_arrow().schema
        fields.append(pa.field(section, pa.struct(list(arrow))))
    fields.append(pa.field(STATE, pa.binary()))
    spark_schema = from_arrow_schema(pa.schema(fields))
    return spark_schema, to_arrow_schema(spark_schema)


def _partition_count(spark: SparkSession, inputs: list[_Input], partitions: int | None) -> int:
    if partitions is not None:
        if partitions < 1:
            raise ConfigError(f"partitions must be a positive integer, got {partitions!r}")
        return partitions
    size = sum(size for source in inputs for _, size, _ in source.files)
    return max(spark.sparkContext.defaultParallelism, math.ceil(size / BYTES_PER_PARTITION))


def _task_cpus(spark: SparkSession) -> int:
    return int(spark.sparkContext.getConf().get("spark.task.cpus", "1"))


# ---------------------------------------------------------------------------------------------
# Running one (city, model)


def _score(
    spark: SparkSession,
    combined: DataFrame,
    job,
    spark_schema: StructType,
    *,
    key: list[str],
    n_partitions: int,
) -> DataFrame:
    order = [c for c in (FILE, ROW) if c in combined.columns]
    scored = (
        combined.repartition(n_partitions, *[_col(c) for c in key])
        .sortWithinPartitions(*[_col(c) for c in key], SIDE, *order)
        .drop(*order)
        .mapInArrow(functools.partial(score_partition, job), spark_schema)
    )
    return scored.persist(StorageLevel.MEMORY_AND_DISK)


def _collect_states(scored: DataFrame, labels: dict[str, str]):
    """Run the scoring (cached), then merge the partitions' folds; raise the first input error."""
    try:
        blobs = [row[0] for row in scored.where(F.col(STATE).isNotNull()).select(STATE).collect()]
    except Exception as error:  # noqa: BLE001 - a file Spark could not read mid-way, say
        raise InputError(
            f"Spark could not read or score the inputs ({_first_line(error)})",
            path=f"{labels['truth']} / {labels['predictions']}",
        ) from None
    states = [pickle.loads(blob) for blob in blobs]
    errors = [state["error"] for state in states if state["error"] is not None]
    if errors:
        # The error of the smallest unit key (the local engine streams units in key order).
        with contextlib.suppress(TypeError):  # keys with nulls: any of the errors will do
            errors.sort(key=lambda item: (item[0] is None, item[0] or ()))
        raise rebuild_error(errors[0][1])
    rows = {"truth": 0, "predictions": 0}
    accumulator = None
    for state in states:
        for side, count in state["rows"].items():
            rows[side] += count
        if accumulator is None:
            accumulator = state["accumulator"]
        else:
            accumulator.merge(state["accumulator"])
    for side in ("truth", "predictions"):
        if rows[side] == 0:
            raise InputError("holds no rows: nothing to evaluate", path=labels[side])
    return accumulator


def _finish(
    spark: SparkSession,
    scored: DataFrame,
    scorer,
    sections: list[str],
    *,
    labels: dict[str, str],
    out,
    city: str,
    model: str,
) -> tuple[pl.DataFrame, dict, dict]:
    """Merge the folds into ``scorer``, compute the summary, then write (or collect) the
    sections."""
    scorer.accumulator = _collect_states(scored, labels)
    summary = scorer.summary()
    if out is None:
        tables = {
            section: pl.from_arrow(
                scored.where(F.col(section).isNotNull()).select(f"{section}.*").toArrow()
            )
            for section in sections
        }
        return summary, tables, {}
    files = _Files(spark)
    root = as_uri(out).rstrip("/")
    staging = f"{root}/{STAGING}/city={city}/model={model}"
    files.remove_staged(staging, root)
    try:
        for section in sections:
            part = scored.where(F.col(section).isNotNull()).select(f"{section}.*")
            part.write.mode("overwrite").parquet(f"{staging}/{section}")
        rows = [tuple(row) for row in summary.iter_rows()]
        spark.createDataFrame(rows, "metric string, value double, n long").coalesce(1).write.mode(
            "overwrite"
        ).parquet(f"{staging}/{SUMMARY}")
        outputs = {}
        for section in [*sections, SUMMARY]:
            files.keep_data_files(f"{staging}/{section}", root)
        for section in [*sections, SUMMARY]:  # the summary last: it marks the result complete
            final = f"{root}/{partition_path(section, city, model)}"
            aside = f"{staging}/replaced-{section}"
            files.replace(f"{staging}/{section}", final, aside=aside, root=root)
            outputs[section] = final
    finally:
        files.remove_staged(staging, root)
    return summary, {}, outputs


def _out_lock(spark: SparkSession, out):
    """OUT's lock (:func:`mobeval.io.writers.output_lock`) when OUT is on the driver's local file
    system; nothing elsewhere (HDFS, object stores: two runs on one such OUT are not prevented)."""
    local = None if out is None else _Files(spark).local_path(as_uri(out))
    return contextlib.nullcontext() if local is None else output_lock(local)


def _evaluate(spark, combined, job, scorer, sections, key, inputs, **where) -> Evaluation:
    check_name(where["city"], "city")
    check_name(where["model"], "model")
    started = time.perf_counter()
    spark_schema = where.pop("spark_schema")
    partitions = _partition_count(spark, list(inputs.values()), where.pop("partitions"))
    scored = _score(spark, combined, job, spark_schema, key=key, n_partitions=partitions)
    labels = {side: source.label for side, source in inputs.items()}
    try:
        with _out_lock(spark, where["out"]):
            summary, tables, outputs = _finish(
                spark, scored, scorer, sections, labels=labels, **where
            )
    finally:
        scored.unpersist()
    return Evaluation(
        city=where["city"],
        model=where["model"],
        summary=summary,
        tables=tables,
        outputs=outputs,
        inputs={side: source.fingerprint() for side, source in inputs.items()},
        seconds=time.perf_counter() - started,
    )


@with_options("nextloc")
def evaluate_nextloc_spark(
    spark: SparkSession,
    truth,
    predictions,
    *,
    out=None,
    city: str | None = None,
    model: str | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    partitions: int | None = None,
    **options,
) -> Evaluation:
    """:func:`mobeval.api.evaluate_nextloc` on Spark: the same options, the same numbers.

    ``truth`` and ``predictions`` are paths (or globs) Spark can read; ``out`` any path Spark can
    write (without it the tables come back to the driver). ``partitions``: how many hash
    partitions (default: the default parallelism, or one per 64 MiB of input if more);
    ``chunk_rows``: rows scored at once inside a partition (the memory budget of a task).
    """
    spec = nextloc_spec(**option_values("nextloc", options))
    truth_in, pred_in = _read(spark, truth), _read(spark, predictions)
    plan = plan_inputs(truth_in.schema, truth_in.label, pred_in.schema, pred_in.label, spec)
    key_list = list(spec.key)
    key_schema = {
        c: pl.Int64 if truth_in.schema[c].is_integer() else truth_in.schema[c] for c in key_list
    }
    job = NextlocPartitionJob(
        spec, truth_in.schema, pred_in.schema, truth_in.label, pred_in.label, None, chunk_rows, 1
    )
    scorer = job.scorer()
    spark_schema, arrow_schema = _arrow_output({"per_unit": scorer.per_unit_schema(key_schema)})
    job = dataclasses.replace(job, output=arrow_schema, threads=_task_cpus(spark))
    combined = _combined(
        truth_in,
        pred_in,
        key_list,
        plan.truth_columns,
        plan.pred_columns,
        # the input-order ties read it, and so does duplicates="drop" (a location's last row)
        input_order=(
            scorer.convention.ties in INPUT_ORDER_TIES or scorer.convention.duplicates == "drop"
        )
        and not plan.list_form,
    )
    return _evaluate(
        spark,
        combined,
        job,
        scorer,
        ["per_unit"],
        key_list,
        {"truth": truth_in, "predictions": pred_in},
        spark_schema=spark_schema,
        partitions=partitions,
        out=out,
        city=city or DEFAULT_CITY,
        model=model or default_model_name(as_uri(predictions)),
    )


@with_options("trajectory")
def evaluate_trajectory_spark(
    spark: SparkSession,
    reference,
    generated,
    *,
    out=None,
    city: str | None = None,
    model: str | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    partitions: int | None = None,
    **options,
) -> Evaluation:
    """:func:`mobeval.api.evaluate_trajectory` on Spark (GEO-BLEU and DTW per uid and uid-day):
    the same options, the same numbers; see :func:`evaluate_nextloc_spark` for ``out``,
    ``partitions`` and ``chunk_rows``."""
    values = option_values("trajectory", options)
    chosen = checked_convention(**values)
    ref_in = _read(spark, reference, names=TRAJECTORY_COLUMNS)
    gen_in = _read(spark, generated, names=TRAJECTORY_COLUMNS)
    for source in (ref_in, gen_in):
        missing = [c for c in TRAJECTORY_COLUMNS if c not in source.schema]
        if missing:
            raise InputError(
                f"missing column; columns present: {list(source.schema)}",
                path=source.label,
                column=missing[0],
            )
    ref_uid, gen_uid = ref_in.schema["uid"], gen_in.schema["uid"]
    if ref_uid.is_integer() and gen_uid.is_integer():
        uid_type = pl.Int64
    elif ref_uid == gen_uid:
        uid_type = ref_uid
    else:
        raise InputError(
            f"uid types differ: generated {gen_uid}, reference {ref_uid}",
            path=ref_in.label,
            column="uid",
        )
    options = {
        "convention": chosen,
        "metrics": tuple(values["metrics"]),
        "on_mismatch": values["on_mismatch"],
        "out_of_grid": values["out_of_grid"],
        "path_generated": gen_in.label,
        "path_reference": ref_in.label,
    }
    scorer = TrajectoryScorer(**options)
    sections = scorer.output_schemas(uid_type)
    spark_schema, arrow_schema = _arrow_output(sections)
    job = TrajectoryPartitionJob(options, arrow_schema, chunk_rows, _task_cpus(spark))
    combined = _combined(
        ref_in, gen_in, ["uid"], TRAJECTORY_COLUMNS, TRAJECTORY_COLUMNS, input_order=False
    )
    return _evaluate(
        spark,
        combined,
        job,
        scorer,
        list(sections),
        ["uid"],
        {"truth": ref_in, "predictions": gen_in},
        spark_schema=spark_schema,
        partitions=partitions,
        out=out,
        city=city or DEFAULT_CITY,
        model=model or default_model_name(as_uri(generated)),
    )


def _require_columns(source: _Input, columns) -> None:
    """The local engine's check (and message) of the columns a task reads."""
    missing = [c for c in columns if c not in source.schema]
    if missing:
        raise InputError(
            f"missing column; columns present: {list(source.schema)}",
            path=source.label,
            column=missing[0],
        )


@with_options("recs")
def evaluate_recs_spark(
    spark: SparkSession,
    ratings,
    recs,
    *,
    out=None,
    city: str | None = None,
    model: str | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    partitions: int | None = None,
    **options,
) -> Evaluation:
    """:func:`mobeval.api.evaluate_recs` on Spark (recommendation lists against ratings, user by
    user): the same options, the same numbers, the same messages; a user's list is its rows in
    input order (file, then position in the file), restored after the shuffle. See
    :func:`evaluate_nextloc_spark` for ``out``, ``partitions`` and ``chunk_rows``."""
    values = option_values("recs", options)
    metrics, cutoffs, key = values["metrics"], values["cutoffs"], values["key"]
    conv = RECS.convention(values)
    specs = parse_recs_metrics(metrics, cutoffs, beta=conv.beta)
    columns = rec_columns(conv, specs)
    ratings_in, recs_in = _read(spark, ratings), _read(spark, recs)
    _require_columns(ratings_in, [key, "item_id", "rating"])
    _require_columns(recs_in, [key, *columns[1:]])
    plan = RecsPlan.build(key, columns, recs_in.schema, ratings_in.schema)
    recs_user, ratings_user = recs_in.schema[key], ratings_in.schema[key]
    if recs_user.is_integer() and ratings_user.is_integer():
        user_type = pl.Int64
    else:
        user_type = recs_user if recs_user == ratings_user else pl.String
    per_unit = {key: user_type, **{spec.name: pl.Float64 for spec in specs}}
    spark_schema, arrow_schema = _arrow_output({"per_unit": per_unit})
    job = RecsPartitionJob(
        {
            "metrics": [metrics] if isinstance(metrics, str) else list(metrics),
            "cutoffs": cutoffs,
            "convention": conv,
            "key": key,
            "path_recs": recs_in.label,
            "path_ratings": ratings_in.label,
        },
        tuple(columns),
        recs_in.schema,
        ratings_in.schema,
        arrow_schema,
        chunk_rows,
        _task_cpus(spark),
    )
    combined = _combined(
        ratings_in, recs_in, [key], plan.truth_columns, plan.pred_columns, input_order=True
    )
    return _evaluate(
        spark,
        combined,
        job,
        job.scorer(),
        ["per_unit"],
        [key],
        {"truth": ratings_in, "predictions": recs_in},
        spark_schema=spark_schema,
        partitions=partitions,
        out=out,
        city=city or DEFAULT_CITY,
        model=model or default_model_name(as_uri(recs)),
    )


SPARK_EVALUATE = {
    name: (globals()[f"evaluate_{name}_spark"], FAMILIES[name].truth, FAMILIES[name].model)
    for name in SPARK_TASKS
}


# ---------------------------------------------------------------------------------------------
# Jobs


def run_job_spark(
    job,
    spark: SparkSession,
    *,
    out: str | None = None,
    resume: bool = False,
    log=print,
    partitions: int | None = None,
) -> list[Evaluation]:
    """:func:`mobeval.jobs.run_job` on Spark: every (city, model) of a loaded job
    (:func:`mobeval.jobs.load_job`), written under ``out`` (default: the job's) by Spark;
    with ``resume``, results complete for the same options and inputs are skipped."""
    unsupported = sorted({task.type for task in job.tasks} - set(SPARK_TASKS))
    if unsupported:
        raise ConfigError(
            f"{job.path}: the Spark engine runs {', '.join(SPARK_TASKS)} tasks, "
            f"not {', '.join(unsupported)} (use --engine local)"
        )
    root = as_uri(out if out is not None else job.out).rstrip("/")
    files = _Files(spark)
    from mobeval.jobs import is_uri, task_inputs

    for _, where, path in task_inputs(job):  # local paths were looked for by load_job
        if is_uri(path) and not files.data_files(as_uri(path)):
            raise ConfigError(
                f"{where}: {as_uri(path)}: no data file there (no such file, nothing matches the "
                "pattern, or a folder without .parquet / .csv files)"
            )
    results = []
    with _out_lock(spark, root):
        manifest = Manifest(
            root, {"file": str(job.path), "chunk_rows": job.chunk_rows}, files=files, engine="spark"
        )
        for task in job.tasks:
            evaluate, truth_argument, model_argument = SPARK_EVALUATE[task.type]
            for model, prediction_path in task.models.items():
                config = {"type": task.type, "city": task.city, "model": model, **task.options}
                if resume:
                    inputs = {
                        "truth": _fingerprint(files, task.truth),
                        "predictions": _fingerprint(files, prediction_path),
                    }
                    if manifest.is_complete(task.city, model, config, inputs):
                        log(f"{task.city}/{model}: complete, skipped (--resume)")
                        continue
                started = time.perf_counter()
                evaluation = evaluate(
                    spark,
                    **{truth_argument: task.truth, model_argument: prediction_path},
                    out=root,
                    city=task.city,
                    model=model,
                    chunk_rows=job.chunk_rows,
                    partitions=partitions,
                    **task.options,
                )
                manifest.record(evaluation, config, task.type)
                log(f"{task.city}/{model}: done in {time.perf_counter() - started:.2f}s (spark)")
                results.append(evaluation)
    return results


def _fingerprint(files: _Files, path) -> list[dict]:
    return [
        {"path": uri, "size": size, "mtime": mtime}
        for uri, size, mtime in files.data_files(as_uri(path))
    ]


__all__ = [
    "as_uri",
    "evaluate_nextloc_spark",
    "evaluate_recs_spark",
    "evaluate_trajectory_spark",
    "run_job_spark",
    "spark_session",
]
