"""The Spark session the engine runs on: starting one (quiet or not, on the master and with the
settings asked for: :class:`mobeval.engines.cluster.SparkSettings`), Spark's log level for the
length of a run, the description of each Spark job a run starts (the Spark UI's jobs and stages
named by city, model and phase: :func:`described`), and the session's settings the engine reads
(``spark.task.cpus``)."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path

from pyspark.sql import SparkSession

from mobeval.engines.cluster import SparkSettings
from mobeval.engines.spark.failures import explain, first_line
from mobeval.errors import ConfigError
from mobeval.io.writers import write_text_atomic
from mobeval.progress import wanted

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
    return not wanted(progress)


def spark_session(
    app_name: str = "mobeval", *, quiet: bool = False, settings: SparkSettings | None = None
) -> SparkSession:
    """``SparkSession.builder.getOrCreate()``; started from a plain ``python`` (not spark-submit,
    not a notebook with a session), the workers run this interpreter unless PYSPARK_PYTHON says
    otherwise. ``quiet``: a session started here shows no stage progress bars
    (``spark.ui.showConsoleProgress``) and logs errors only, from its start (its driver JVM reads
    :data:`QUIET_LOG4J2`); a session already running keeps its settings.

    ``settings``: the master and Spark settings of the session started here (``--master``,
    ``--spark-conf``); with a session already running in this process they could not apply
    (Spark would keep its master and most settings without a word): a ConfigError.
    ``spark.pyspark.python`` is also the executors' Python here, as under spark-submit (PySpark
    itself reads only PYSPARK_PYTHON when the driver is a plain ``python``)."""
    settings = settings or SparkSettings()
    running = SparkSession.getActiveSession()
    if settings and running is not None:
        raise ConfigError(
            f"a Spark session is already running in this process (master "
            f"{running.sparkContext.master}): {settings.shown()} apply to a session mobeval "
            "starts; set them on that session, or run mobeval in a process of its own"
        )
    builder = SparkSession.builder.appName(app_name)
    if settings.master is not None:
        builder = builder.master(settings.master)
    for key, value in settings.conf.items():
        builder = builder.config(key, value)
    if "PYSPARK_GATEWAY_PORT" not in os.environ and running is None:
        if "spark.pyspark.python" in settings.conf:
            os.environ["PYSPARK_PYTHON"] = settings.conf["spark.pyspark.python"]
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        if quiet:
            config = Path(tempfile.gettempdir()) / "mobeval-spark-quiet-log4j2.properties"
            if not config.is_file() or config.read_text() != QUIET_LOG4J2:
                write_text_atomic(QUIET_LOG4J2, config)
            builder = builder.config("spark.ui.showConsoleProgress", "false")
            java_options = settings.conf.get("spark.driver.extraJavaOptions", "")
            builder = builder.config(
                "spark.driver.extraJavaOptions",
                f"{java_options} -Dlog4j2.configurationFile={config}".strip(),
            )
    try:
        return builder.getOrCreate()
    except Exception as error:  # noqa: BLE001 - no Java, a bad master URL...
        explained = explain(str(error))
        raise ConfigError(
            f"could not start Spark: {explained[1]}"
            if explained
            else f"could not start Spark ({first_line(error)}); Spark 4 needs Java 17 or later "
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


def task_cpus(spark: SparkSession) -> int:
    """The cores of one Spark task (``spark.task.cpus``): the Numba threads of a partition."""
    return int(spark.sparkContext.getConf().get("spark.task.cpus", "1"))


#: The local properties a Spark job takes its name from: its description (the Spark UI's job
#: and SQL query) and its call site (its stages' names).
DESCRIBED = ("spark.job.description", "callSite.short", "callSite.long")


@contextlib.contextmanager
def described(spark: SparkSession, what: str):
    """Every Spark job the body starts (from this thread) described as ``mobeval: <what>``
    (``what``: the city, the models and the phase, e.g. ``tky/markov+gru: score, write
    per_unit``) in the Spark UI and its REST API, its stages named likewise; the thread's own
    descriptions restored afterwards (SparkContext.setLocalProperty: per thread)."""
    context = spark.sparkContext
    before = {key: context.getLocalProperty(key) for key in DESCRIBED}
    for key in DESCRIBED:
        context.setLocalProperty(key, f"mobeval: {what}")
    try:
        yield
    finally:
        for key, value in before.items():
            context.setLocalProperty(key, value)
