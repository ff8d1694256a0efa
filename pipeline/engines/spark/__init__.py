"""The Spark engine: the same jobs, the same partition scorer, many machines.

:class:`SparkEngine` is the engine :mod:`mobeval.api`'s ``evaluate_*`` functions run on with
``engine="spark"`` or ``spark=<SparkSession>`` (and :func:`mobeval.jobs.run_job` with
``engine="spark"``). Per (city, model)::

    spark.read (Parquet / CSV)  ->  the task's input plan: columns checked on the driver, with the
    local engine's messages  ->  truth and prediction rows in one flat table (a side tag, the
    source columns: :func:`_combined`; a job's models of one truth all in it, one side each)  ->
    repartition(n, *key) (Spark's hash partitioning: a unit is whole in one partition whatever
    the file layout)  ->  sortWithinPartitions(*key, side, file, row)  ->
    mapInArrow(score_partition)  (mobeval.engines.partition: the local engine's scorer classes
    and Numba kernels, Numba threads = spark.task.cpus)  ->  per-partition folds merged on the
    driver (exact sums)  ->  summary; per-unit sections written by Spark under
    OUT/.staging/city=<c>/model=<m>/ and renamed into OUT/<section>/city=<c>/model=<m> (summary
    last) with the Hadoop FileSystem API  ->  OUT/manifest.json.

Under the input-order tie policies of nextloc (``input``, ``ranx*``), and always for
recommendation lists (ClayRS and RELISON read a user's list in file order), a unit's prediction
rows are put back in their input order (file path, then position in the file) after the shuffle.
``OUT`` is any path Spark can write (``s3a://``, ``abfss://``,
``dbfs:/``, HDFS, local). PySpark is imported here only; ``pip install 'mobeval[spark]'``.

    >>> from pyspark.sql import SparkSession
    >>> from mobeval.api import evaluate_nextloc
    >>> spark = SparkSession.builder.getOrCreate()
    >>> evaluate_nextloc("s3a://b/truth.parquet", "s3a://b/deepmove/", k=[1, 5, 10], spark=spark,
    ...                  out="s3a://b/eval/", city="tky", model="deepmove")

Logits (rows paired by position, no key) are cut into ranges of whole chunks instead, one per
task, each read by its task from the ``.npy`` or Parquet file (a path every executor can read).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import itertools
import math
import os
import re
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import polars as pl
import pyarrow as pa

from mobeval.engines.base import DEFAULT_CITY, Evaluation, default_model_name
from mobeval.engines.local import checked_chunk_rows
from mobeval.engines.partition import (
    BOTH,
    MODEL,
    PRED,
    PRED_SIDE,
    SIDE,
    TRUTH,
    TRUTH_SIDE,
    FoldList,
    PartitionJobs,
    SparkNotInstalled,
    merged_folds,
    rebuild_error,
    row_ranges,
    score_partition,
    score_rows,
)
from mobeval.engines.spark.failures import explain
from mobeval.errors import ConfigError, InputError, MobevalError
from mobeval.io.logits import input_name, is_targets_column
from mobeval.io.recbole import parse_header
from mobeval.io.sources import PARQUET_SUFFIXES, TEXT_SUFFIXES, format_of
from mobeval.io.text import GZIP_MAGIC
from mobeval.io.trec import TrecSource, first_data_line, kind_of_line
from mobeval.io.writers import (
    STAGING,
    check_name,
    output_lock,
    partition_path,
    require_staged,
    write_text_atomic,
)
from mobeval.progress import Progress

try:
    from pyspark import StorageLevel
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
    from pyspark.sql.types import IntegralType, LongType, StructType
except ImportError as error:  # pragma: no cover - depends on the installation
    raise SparkNotInstalled(
        f"the Spark engine needs PySpark 4 ({error}): pip install 'mobeval[spark]'"
    ) from error

FILE = "__file"
ROW = "__row"
#: Input bytes per partition when ``partitions`` is not given (Parquet: compressed bytes).
BYTES_PER_PARTITION = 64 << 20
SUMMARY = "summary"
#: Bytes read on the driver to tell a TREC file by its first data line, and RecBole's header.
HEAD_BYTES, LINE_BYTES = 1 << 20, 1 << 16


#: Spark's log for a quiet session mobeval starts (log4j2): errors only, on stderr.
QUIET_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
"""


def is_quiet(progress: bool | None) -> bool:
    """Whether a run is quiet: ``progress=False`` (``--quiet``), or not asked and stderr is not a
    terminal."""
    return progress is False or (progress is None and not sys.stderr.isatty())


def spark_session(app_name: str = "mobeval", *, quiet: bool = False) -> SparkSession:
    """``SparkSession.builder.getOrCreate()``; started from a plain ``python`` (not spark-submit,
    not a notebook with a session), the workers run this interpreter unless PYSPARK_PYTHON says
    otherwise. ``quiet``: a session started here shows no stage progress bars
    (``spark.ui.showConsoleProgress``) and logs errors only, from its start (its driver JVM reads
    :data:`QUIET_LOG4J2`); a session already running keeps its settings."""
    builder = SparkSession.builder.appName(app_name)
    if "PYSPARK_GATEWAY_PORT" not in os.environ and SparkSession.getActiveSession() is None:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        if quiet:
            config = Path(tempfile.gettempdir()) / "mobeval-spark-quiet-log4j2.properties"
            if not config.is_file() or config.read_text() != QUIET_LOG4J2:
                write_text_atomic(QUIET_LOG4J2, config)
            builder = builder.config("spark.ui.showConsoleProgress", "false").config(
                "spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={config}"
            )
    try:
        return builder.getOrCreate()
    except Exception as error:  # noqa: BLE001 - no Java, a bad master URL...
        explained = explain(str(error))
        raise ConfigError(
            f"could not start Spark: {explained[1]}"
            if explained
            else f"could not start Spark ({_first_line(error)}); Spark 4 needs Java 17 or later "
            "(JAVA_HOME or java on PATH)"
        ) from None


@contextlib.contextmanager
def quiet_log(spark: SparkSession, quiet: bool):
    """With ``quiet``: Spark's log at ERROR for the body, the session's own level restored
    afterwards (whatever the body raised)."""
    if not quiet:
        yield
        return
    context = spark.sparkContext
    level = str(context._jvm.org.apache.logging.log4j.LogManager.getRootLogger().getLevel())
    context.setLogLevel("ERROR")
    try:
        yield
    finally:
        context.setLogLevel(level)


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
        self._systems: dict[str, object] = {}  # scheme://authority -> its FileSystem

    def _path(self, uri: str):
        """Hadoop's Path of ``uri`` and its FileSystem (one look-up per scheme and authority: a
        result's commit makes some twenty calls on the same one)."""
        path = self.jvm.org.apache.hadoop.fs.Path(uri)
        root = re.match(r"[A-Za-z][A-Za-z0-9+.-]*://[^/]*|[A-Za-z][A-Za-z0-9+.-]*:", uri)
        where = root.group(0) if root else ""  # no scheme: the default file system
        if where not in self._systems:
            self._systems[where] = path.getFileSystem(self.conf)
        return path, self._systems[where]

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

    def write_bytes(self, uri: str, data: bytes) -> None:
        """Write a new file (its folder made if needed)."""
        path, fs = self._path(uri)
        stream = fs.create(path, True)
        try:
            stream.write(bytearray(data))
        finally:
            stream.close()

    def is_file(self, uri: str) -> bool:
        path, fs = self._path(uri)
        return bool(fs.exists(path)) and bool(fs.getFileStatus(path).isFile())

    def head(self, uri: str, size: int) -> bytes:
        """The file's first ``size`` bytes, gunzipped (the first ``size`` of those) when it starts
        with gzip's magic bytes whatever its name, as the local engine opens text files
        (:func:`mobeval.io.text.open_binary`); a damaged gzip stream gives what came out of it."""
        path, fs = self._path(uri)
        stream = fs.open(path)
        try:
            data = bytes(stream.readNBytes(size))
        finally:
            stream.close()
        if data[:2] != GZIP_MAGIC:
            return data
        gunzip = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            return gunzip.decompress(data, size)
        except zlib.error:
            return b""

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
                if not hidden and format_of(inside):  # a directory's data files, as locally
                    found.append(_file_entry(entry))
        return sorted(found)


def _file_entry(status) -> tuple[str, int, float]:
    return str(status.getPath()), int(status.getLen()), status.getModificationTime() / 1000


# ---------------------------------------------------------------------------------------------
# Inputs


@dataclasses.dataclass
class _Input:
    """One input as the Spark engine reads it; ``schema()`` and ``label`` as a local source's."""

    label: str
    frame: DataFrame
    columns: dict  # Polars types of the columns, as the scorer will see them
    files: list[tuple[str, int, float]]

    def schema(self) -> dict:
        return self.columns

    def has_rows(self) -> bool:
        """Not asked of Spark before the run (a job of its own): an input without rows is
        named after the scoring, by the driver (``holds no rows``)."""
        return True

    def fingerprint(self) -> list[dict]:
        return [{"path": uri, "size": size, "mtime": mtime} for uri, size, mtime in self.files]


def _local_only_format(files: _Files, uri: str, found: list) -> str | None:
    """The name of the input's format when it is one that only the local engine reads, told by
    its rules (:func:`mobeval.io.sources.as_source`) on any file system Spark reads, the files'
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
            first = io.BytesIO(files.head(name, LINE_BYTES)).readline(LINE_BYTES)
            if parse_header(first.decode("utf-8", errors="replace")) is not None:
                return "RecBole atomic"
    return None


def _local_only(kind: str, label: str) -> InputError:
    return InputError(
        f"a {kind} file, which the Spark engine does not read (it reads Parquet and CSV): "
        "evaluate it on the local engine, or write it as Parquet first",
        path=label,
    )


def _polars_schema(schema: StructType) -> dict:
    arrow = to_arrow_schema(schema)
    return dict(pl.from_arrow(arrow.empty_table()).schema)


def _first_field_is_number(spark: SparkSession, uri: str) -> bool:
    first = spark.read.text(uri).limit(1).collect()
    field = first[0][0].split(",")[0].strip() if first else ""
    return field.lstrip("-").replace(".", "", 1).isdigit()


def _read(spark: SparkSession, path, *, names: tuple[str, ...] | None = None) -> _Input:
    """Read a file, a directory or a glob as the local engine resolves it (same messages); a
    Spark DataFrame as it is."""
    if isinstance(path, DataFrame):
        return _Input("<Spark DataFrame>", path, _polars_schema(path.schema), [])
    if isinstance(path, TrecSource):  # the command line's --input-format trec
        raise _local_only("TREC run or qrels", path.label)
    if not isinstance(path, str | os.PathLike):
        raise ConfigError(
            f"the Spark engine reads paths (a file, a directory or a glob that Spark can read) "
            f"or Spark DataFrames, not a {type(path).__name__}"
        )
    label = str(path)
    uri = as_uri(path)
    files = _Files(spark)
    try:
        found = files.data_files(uri)
    except Exception as error:  # noqa: BLE001 - a Py4J error: no such bucket, no access...
        raise _failure(error, "cannot list this path", path=label) from None
    if not found:
        pattern = any(ch in uri for ch in "*?[{")
        message = "no file matches this pattern" if pattern else "no such file or directory"
        raise InputError(message, path=label)
    try:
        local_only = _local_only_format(files, uri, found)
    except Exception as error:  # noqa: BLE001 - a Py4J error: no access...
        raise _failure(error, "cannot read this path", path=label) from None
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
        schema = _polars_schema(frame.schema)
    except Exception as error:  # noqa: BLE001 - AnalysisException, Py4JJavaError
        kind = "Parquet" if file_format == "parquet" else "CSV"
        raise _failure(error, f"not a readable {kind} file", path=label) from None
    return _Input(label, frame, schema, found)


def _failure(error: BaseException, doing: str, *, path: str) -> MobevalError:
    """What to raise for an exception Spark threw while ``doing`` something with ``path``: the
    explained failure (:func:`mobeval.engines.spark.failures.explain`: an InputError naming the
    path when the path is the problem, a ConfigError when the setup is), else an InputError with
    the exception's first line."""
    explained = explain(str(error))
    if explained is None:
        return InputError(f"{doing} ({_first_line(error)})", path=path)
    failure, message = explained
    return InputError(message, path=path) if failure.input else ConfigError(message)


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0][:300] if text else type(error).__name__


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


def _combined(
    truth: _Input,
    preds: list[_Input],
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
    results' predictions share their columns: their types must agree (:func:`_group_key`)."""
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


def _arrow_output(sections: dict[str, dict]) -> tuple[StructType, pa.Schema]:
    """The mapInArrow schema: the result's index in its group (``MODEL``), then a struct column
    per section (Polars types given)."""
    fields = [pa.field(MODEL, pa.int32(), nullable=False)]
    for section, schema in sections.items():
        arrow = pl.DataFrame(schema=schema).to_arrow().schema
        fields.append(pa.field(section, pa.struct(list(arrow))))
    spark_schema = from_arrow_schema(pa.schema(fields))
    return spark_schema, to_arrow_schema(spark_schema)


def _partition_count(spark: SparkSession, inputs: list[_Input], partitions: int | None) -> int:
    if partitions is not None:
        return partitions
    size = sum(
        size for source in {id(s): s for s in inputs}.values() for _, size, _ in source.files
    )
    return max(spark.sparkContext.defaultParallelism, math.ceil(size / BYTES_PER_PARTITION))


def _task_cpus(spark: SparkSession) -> int:
    return int(spark.sparkContext.getConf().get("spark.task.cpus", "1"))


# ---------------------------------------------------------------------------------------------
# Running one (city, model)


def _score(combined: DataFrame, score, spark_schema: StructType, *, key, n_partitions: int):
    """``combined`` hash-partitioned by ``key``, sorted within partitions (by key, side, and the
    input position where kept), through ``score`` (the partition function) in mapInArrow."""
    order = [c for c in (FILE, ROW) if c in combined.columns]
    return (
        combined.repartition(n_partitions, *[_col(c) for c in key])
        .sortWithinPartitions(*[_col(c) for c in key], SIDE, *order)
        .drop(*order)
        .mapInArrow(score, spark_schema)
    )


def _merged(folds: list, index: int, labels: dict[str, str]):
    """Result ``index``'s folds from every partition (:func:`mobeval.engines.partition.
    merged_folds`) merged into one accumulator; the first input error raised (the smallest unit
    key's, as the local engine streams units in key order), and an input that gave no row
    named."""
    states = [partition[index] for partition in merged_folds(folds)]
    errors = [state["error"] for state in states if state["error"] is not None]
    if errors:
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


@dataclasses.dataclass
class _Result:
    """One (city, model) of a group: its scorer (the driver's: folds merged into it), the labels
    and fingerprints of its inputs, its model name."""

    scorer: object
    labels: dict[str, str]
    fingerprints: dict[str, list]
    model: str


def _staged_section(
    files: _Files, staging: str, section: str, index: int, schema: dict | None
) -> str:
    """Where result ``index``'s rows of ``section`` lie in a group's staging area (Spark writes
    them partitioned by ``MODEL``); a result with no row there gets an empty Parquet file of the
    section's schema."""
    staged = f"{staging}/{section}/{MODEL}={index}"
    if schema is not None and not files.exists(staged):
        buffer = io.BytesIO()
        pl.DataFrame(schema=schema).write_parquet(buffer)
        files.write_bytes(f"{staged}/part-00000.parquet", buffer.getvalue())
    return staged


def _finished_group(
    spark: SparkSession,
    scored: DataFrame,
    folds,
    results: list[_Result],
    sections: dict[str, dict],
    *,
    out,
    city: str,
    started: float,
):
    """Write (or collect) the sections of every result of a group, which runs the scoring (its
    folds arrive in ``folds``); then, result by result, in order: merge its folds, compute its
    summary, commit it (the summary written by the driver, every section renamed into place,
    the summary last) and yield its :class:`Evaluation`. A result that fails (bad input) raises
    there: the results before it are committed, those after it are not (as a job run one result
    at a time stops at the first failure); the group's staging area is removed whatever
    happens."""
    files = _Files(spark)
    root = None if out is None else as_uri(out).rstrip("/")
    staging = None if out is None else f"{root}/{STAGING}/city={city}/model={results[0].model}"
    labels = results[0].labels
    tables = {}
    try:
        if staging is not None:
            files.remove_staged(staging, root)
        try:
            if not sections:  # print-only (per_unit=False): scored into no sink
                scored.write.format("noop").mode("overwrite").save()
            for section in sections:
                part = scored.where(F.col(section).isNotNull()).select(MODEL, f"{section}.*")
                if staging is None:
                    tables[section] = pl.from_arrow(part.toArrow())
                else:
                    part.write.mode("overwrite").partitionBy(MODEL).parquet(f"{staging}/{section}")
        except Exception as error:  # noqa: BLE001 - an executor's failure: explained if known
            path = f"{labels['truth']} / {', '.join(r.labels['predictions'] for r in results)}"
            doing = "Spark could not read, score or write the results"
            raise _failure(error, doing, path=path) from None
        for index, result in enumerate(results):
            result.scorer.accumulator = _merged(folds.value, index, result.labels)
            summary = result.scorer.summary()
            own, outputs = {}, {}
            if staging is None:
                own = {
                    section: table.filter(pl.col(MODEL) == index).drop(MODEL)
                    for section, table in tables.items()
                }
            else:
                buffer = io.BytesIO()
                summary.write_parquet(buffer)
                summary_at = f"{staging}/{SUMMARY}/{MODEL}={index}/part-00000.parquet"
                files.write_bytes(summary_at, buffer.getvalue())
                staged = {
                    section: _staged_section(files, staging, section, index, sections.get(section))
                    for section in [*sections, SUMMARY]
                }
                for section in staged:
                    files.keep_data_files(staged[section], root)
                for section in staged:  # the summary last: it marks the result complete
                    final = f"{root}/{partition_path(section, city, result.model)}"
                    aside = f"{staging}/replaced-{section}"
                    files.replace(staged[section], final, aside=aside, root=root)
                    outputs[section] = final
            yield Evaluation(
                city=city,
                model=result.model,
                summary=summary,
                tables=own,
                outputs=outputs,
                inputs=result.fingerprints,
                seconds=time.perf_counter() - started,
            )
    finally:
        if staging is not None:
            files.remove_staged(staging, root)


@contextlib.contextmanager
def _rows_scored(folds, meter: Progress, every: float = 0.5):
    """While the body runs, ``meter`` (the local engine's progress line, when enabled) shows the
    prediction rows scored so far: each partition's count, read from its fold as it reaches the
    driver."""
    if not meter.enabled:
        yield
        return
    done = threading.Event()
    seen = [0]

    def catch_up() -> None:
        arrived = list(folds.value)
        for states in merged_folds(arrived[seen[0] :]):
            meter.advance(sum(state["rows"]["predictions"] for state in states))
        seen[0] = len(arrived)

    def watch() -> None:
        while not done.wait(every):
            catch_up()

    watcher = threading.Thread(target=watch, name="mobeval-progress", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()
        catch_up()
        meter.close()


def _out_lock(spark: SparkSession, out):
    """OUT's lock (:func:`mobeval.io.writers.output_lock`) when OUT is on the driver's local file
    system; nothing elsewhere (HDFS, object stores: two runs on one such OUT are not prevented)."""
    local = None if out is None else _Files(spark).local_path(as_uri(out))
    return contextlib.nullcontext() if local is None else output_lock(local)


def _positive(value, name: str) -> int | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
        return value
    raise ConfigError(f"{name} must be a positive integer, got {value!r}")


class _Planner:
    """An engine that keeps what it is asked to run instead of running it (:meth:`SparkEngine.
    run_all`); inputs are read by the Spark engine, each path once (a job's truth is read once
    for all its models)."""

    name = "spark"

    def __init__(self, engine: SparkEngine) -> None:
        self.engine = engine
        self.files = engine.files
        self.runs: list[tuple] = []
        self._sources: dict = {}

    def source(self, data, *, names: tuple[str, ...] | None = None) -> _Input:
        if not isinstance(data, str | os.PathLike):
            return self.engine.source(data, names=names)
        known = (as_uri(data), names)
        if known not in self._sources:
            self._sources[known] = self.engine.source(data, names=names)
        return self._sources[known]

    def run(self, plan, truth: _Input, predictions: _Input, where: dict) -> None:
        self.runs.append(("keyed", plan, truth, predictions, where))

    def run_rows(self, job, where: dict) -> None:
        self.runs.append(("rows", job, where))


def _group_key(run: tuple):
    """What results must share to be scored in one Spark job: the truth input, the key, the
    input columns and the predictions' types of them (their rows share columns), the sections,
    the tie handling and where the results go. Logits runs are never grouped."""
    if run[0] == "rows":
        return ("rows", id(run))
    _, plan, truth, predictions, where = run
    inputs = plan.inputs
    pred_types = tuple(predictions.columns[c] for c in inputs.pred_columns)
    shared = {name: value for name, value in where.items() if name != "model"}
    return (
        id(truth),
        tuple(plan.key),
        tuple(inputs.truth_columns),
        tuple(inputs.pred_columns),
        repr(pred_types),
        repr(plan.sections),
        plan.input_order,
        repr(sorted(shared.items(), key=lambda item: item[0])),
    )


class SparkEngine:
    """The Spark engine (:class:`mobeval.engines.base.Engine`): a plan's partition job runs in
    ``mapInArrow`` partitions (see the module docstring), the folds are merged on the driver.

    ``spark``: the SparkSession (None: the active one, or a new one, when first needed:
    :func:`spark_session`); ``partitions``: hash partitions per result (default: the default
    parallelism, or one per 64 MiB of input if more)."""

    name = "spark"

    def __init__(
        self,
        spark: SparkSession | None = None,
        *,
        partitions: int | None = None,
        progress: bool | None = None,
    ):
        self._spark = spark
        self.partitions = _positive(partitions, "partitions")
        self.progress = progress

    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            self._spark = spark_session(quiet=is_quiet(self.progress))
        return self._spark

    @property
    def files(self) -> _Files:
        return _Files(self.spark)

    def source(self, data, *, names: tuple[str, ...] | None = None) -> _Input:
        with quiet_log(self.spark, is_quiet(self.progress)):
            return _read(self.spark, data, names=names)

    def run(self, plan, truth: _Input, predictions: _Input, where: dict) -> Evaluation:
        """Truth and predictions in one table, hash-partitioned by the plan's key and sorted
        within partitions, scored by the plan's partition job (a group of one:
        :meth:`run_group`)."""
        [evaluation] = self.run_group([(plan, truth, predictions, where)])
        return evaluation

    def run_all(self, calls):
        """Evaluations in the order of ``calls`` (each a function of an engine that evaluates one
        result: ``call(engine=...)``), the results that share a truth scored together: each call
        is first made on a :class:`_Planner`, which reads the inputs (the truth once) and keeps the
        plan; then every run of consecutive keyed plans of one truth, compatible inputs and one
        OUT is one Spark job (:meth:`run_group`). A call that fails while planning stops there:
        the results before it are evaluated, then its error raised."""
        planner = _Planner(self)
        failure = None
        for call in calls:
            try:
                call(engine=planner)
            except Exception as error:  # noqa: BLE001 - raised once the earlier results are in
                failure = error
                break
        for _, runs in itertools.groupby(planner.runs, key=_group_key):
            runs = list(runs)
            if runs[0][0] == "rows":
                yield from (self.run_rows(job, where) for _, job, where in runs)
            else:
                yield from self.run_group([run[1:] for run in runs])
        if failure is not None:
            raise failure

    def run_group(self, runs: list[tuple]) -> Iterator[Evaluation]:
        """Score ``runs`` ((plan, truth, predictions, where), sharing the truth input, the key, the
        input columns and their types, the sections and ``where`` but the model) in one Spark job:
        the truth and every result's predictions in one table (:func:`_combined`), one shuffle,
        one write per section partitioned by result; then each result's folds merged and its
        sections committed, result by result (:func:`_finished_group`)."""
        plan, truth, _, where = runs[0]
        preds = [run[2] for run in runs]
        sections = plan.sections if where["per_unit"] else {}
        spark_schema, arrow_schema = _arrow_output(sections)
        inputs = plan.inputs
        combined, layout = _combined(
            truth,
            preds,
            plan.key,
            inputs.truth_columns,
            inputs.pred_columns,
            input_order=plan.input_order,
        )
        n_partitions = _partition_count(self.spark, [truth, *preds], self.partitions)
        group = PartitionJobs(
            jobs=tuple(run[0].job for run in runs),
            key=plan.key,
            columns=(layout[TRUTH], layout[PRED]),
            output=arrow_schema,
            chunk_rows=checked_chunk_rows(where["chunk_rows"]),
            threads=_task_cpus(self.spark),
        )

        def scoring(folds) -> DataFrame:
            score = functools.partial(score_partition, group, folds)
            return _score(combined, score, spark_schema, key=plan.key, n_partitions=n_partitions)

        results = []
        for run_plan, _, pred, run_where in runs:
            sources = {"truth": truth, "predictions": pred}
            results.append(
                _Result(
                    scorer=run_plan.job.scorer(),
                    labels={side: source.label for side, source in sources.items()},
                    fingerprints={side: source.fingerprint() for side, source in sources.items()},
                    model=check_name(
                        run_where["model"] or default_model_name(as_uri(pred.label)), "model"
                    ),
                )
            )
        return self._finished(scoring, results, sections, where)

    def run_rows(self, job, where: dict) -> Evaluation:
        """Logits: the rows cut into ranges of whole chunks, one range per task; each task reads
        its rows from the files (:meth:`mobeval.engines.partition.LogitsPartitionJob.chunks`)."""
        for side, value in (("logits", job.logits), ("targets", job.targets)):
            if input_name(value) is None and not (side == "targets" and is_targets_column(value)):
                raise ConfigError(
                    f"the Spark engine reads the {side} from a .npy or Parquet file that every "
                    "executor can read, not from an array in this process"
                )
        n_rows, n_classes = job.shape()
        if n_rows == 0:  # the local engine's message for an input without rows
            list(job.chunks(job.accumulator()))
        ranges = row_ranges(
            n_rows, job.chunk_rows, self.partitions or self.spark.sparkContext.defaultParallelism
        )
        sections = {"per_unit": job.per_unit_schema()} if where["per_unit"] else {}
        spark_schema, arrow_schema = _arrow_output(sections)
        job = dataclasses.replace(
            job, output=arrow_schema, n_classes=n_classes, threads=_task_cpus(self.spark)
        )

        def scoring(folds) -> DataFrame:
            score = functools.partial(score_rows, job, ranges, folds)
            return self.spark.range(len(ranges), numPartitions=len(ranges)).mapInArrow(
                score, spark_schema
            )

        label = input_name(job.logits)
        result = _Result(
            scorer=job.scorer(),
            labels={"truth": input_name(job.targets) or label, "predictions": label},
            fingerprints=job.fingerprints(self.fingerprint),
            model=check_name(where["model"] or default_model_name(label), "model"),
        )
        [evaluation] = self._finished(scoring, [result], sections, where)
        return evaluation

    def _finished(self, scoring, results, sections, where) -> Iterator[Evaluation]:
        """Score (``scoring(folds)``: the scored DataFrame, its partitions' folds added to
        ``folds``), write (or collect) the sections, merge the folds; the results, one by one
        (:func:`_finished_group`). A single section is written in the pass that scores it;
        several are scored once into Spark's cache. Quiet (no log below ERROR) unless the
        engine's ``progress`` asks for it or stderr is a terminal."""
        started = time.perf_counter()
        quiet = is_quiet(self.progress)
        city = check_name(where["city"] or DEFAULT_CITY, "city")
        folds = self.spark.sparkContext.accumulator([], FoldList())
        scored = scoring(folds)
        if len(sections) > 1:
            scored = scored.persist(StorageLevel.MEMORY_AND_DISK)
        models = ",".join(result.model for result in results)
        meter = Progress(f"{city}/{models}", None, enabled=self.progress)
        evaluations, failure = [], None
        try:
            with (
                _out_lock(self.spark, where["out"]),
                quiet_log(self.spark, quiet),
                _rows_scored(folds, meter),
            ):
                for evaluation in _finished_group(
                    self.spark,
                    scored,
                    folds,
                    results,
                    sections,
                    out=where["out"],
                    city=city,
                    started=started,
                ):
                    evaluations.append(evaluation)
        except Exception as error:  # noqa: BLE001 - raised once the results before it are out
            if not evaluations:
                raise
            failure = error
        finally:
            if len(sections) > 1:
                scored.unpersist()
        yield from evaluations
        if failure is not None:
            raise failure

    def location(self, path) -> str:
        return as_uri(path).rstrip("/")

    def lock(self, out):
        return _out_lock(self.spark, out)

    def check_inputs(self, inputs) -> None:
        """Every URI of a job names data files (local paths were looked for by ``load_job``);
        logits are read by the executors with NumPy and pyarrow: a local or shared path."""
        from mobeval.jobs import is_uri

        files = None
        for kind, where, path in inputs:
            if not is_uri(path):
                continue
            if kind == "logits":
                raise ConfigError(
                    f"{where}: {as_uri(path)}: logits are read by each executor from a local or "
                    "shared file system path, not a URI"
                )
            files = files or _Files(self._spark)
            if not files.data_files(as_uri(path)):
                raise ConfigError(
                    f"{where}: {as_uri(path)}: no data file there (no such file, nothing matches "
                    "the pattern, or a folder without .parquet / .csv files)"
                )

    def fingerprint(self, path) -> list[dict]:
        return [
            {"path": uri, "size": size, "mtime": mtime}
            for uri, size, mtime in self.files.data_files(as_uri(path))
        ]


__all__ = ["SparkEngine", "as_uri", "is_quiet", "quiet_log", "spark_session"]
