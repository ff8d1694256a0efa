"""Spark that explains itself: failures named with their cause and the setting to change, and
quiet runs (issue 14, items 1 and 2).

The first tests read the failure table without a JVM; the others provoke the failures on
``local[2]``: an executor whose Python cannot import mobeval (a subprocess whose PYSPARK_PYTHON is
this interpreter without its site-packages' path hooks, so PySpark and NumPy import and mobeval
does not), a path Spark has no file system for, and a quiet run whose stderr is captured.
"""

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="PySpark is not installed: pip install 'mobeval[spark]'")
from mobeval.engines.spark.failures import (  # noqa: E402
    FAILURES,
    explain,
    spark_error,
    worker_lines,
)
from mobeval.errors import EngineStopped  # noqa: E402
from tests.conftest import REPO_ROOT  # noqa: E402

WORKER_IMPORT_ERROR = """\
An exception was thrown from the Python worker:
Traceback (most recent call last):
  File "/env/lib/python3.11/site-packages/pyspark/worker.py", line 4207, in invoke_udf
    func, profiler, deserializer, serializer = read_udfs(
  File "/env/lib/python3.11/site-packages/pyspark/serializers.py", line 483, in loads
    return cloudpickle.loads(obj, encoding=encoding)
ModuleNotFoundError: No module named 'mobeval'
 SQLSTATE: 38000
"""

MISSING = "java.lang.ClassNotFoundException: Class org.apache.hadoop.fs.s3a.S3AFileSystem not found"
JVM_ERROR = f"""\
An error occurred while calling o225.getFileSystem.
: java.lang.RuntimeException: {MISSING}
\tat org.apache.hadoop.conf.Configuration.getClass(Configuration.java:2737)
\tat org.apache.hadoop.fs.FileSystem.getFileSystemClass(FileSystem.java:3569)
Caused by: {MISSING}
\tat org.apache.hadoop.conf.Configuration.getClassByName(Configuration.java:2641)
"""


def test_the_worker_lines_are_its_exception_not_the_frames():
    assert worker_lines(WORKER_IMPORT_ERROR) == ["ModuleNotFoundError: No module named 'mobeval'"]
    assert worker_lines(JVM_ERROR) == [
        f"java.lang.RuntimeException: {MISSING}",
        f"Caused by: {MISSING}",
    ]


@pytest.mark.parametrize(
    ("text", "cause", "setting"),
    [
        (WORKER_IMPORT_ERROR, "cannot import mobeval", "PYSPARK_PYTHON"),
        ("ModuleNotFoundError: No module named 'numba'", "lacks a package", "PYSPARK_PYTHON"),
        (
            'java.io.IOException: Cannot run program "/home/ana/venv/bin/python": error=2, No '
            "such file or directory",
            "cannot start their Python",
            "spark.pyspark.python",
        ),
        (
            "[PYTHON_VERSION_MISMATCH] Python in worker has different version (3, 10) than that "
            "in driver 3.11",
            "another Python version",
            "PYSPARK_PYTHON",
        ),
        (
            "java.lang.UnsupportedClassVersionError: org/apache/spark/launcher/Main has been "
            "compiled by a more recent version of the Java Runtime (class file version 61.0)",
            "Java is older",
            "JAVA_HOME",
        ),
        (
            "py4j.protocol.Py4JError: org.apache.spark.api.python.PythonUtils."
            "getPythonAuthSocketTimeout does not exist in the JVM",
            "do not fit together",
            "SPARK_HOME",
        ),
        (
            "org.apache.spark.SparkException: Job aborted due to stage failure: "
            "java.lang.OutOfMemoryError: Java heap space",
            "out of memory",
            "spark.executor.memoryOverhead",
        ),
        (
            "ExecutorLostFailure: Container killed by YARN for exceeding memory limits. 9.1 GB of "
            "9 GB physical memory used",
            "out of memory",
            "spark.executor.memoryOverhead",
        ),
        (JVM_ERROR, "no file system", "spark.jars.packages"),
        (
            "An error occurred while calling o28.getFileSystem.\n: org.apache.hadoop.fs."
            'UnsupportedFileSystemException: No FileSystem for scheme "memory"',
            "inside this Python process",
            "local engine",
        ),
        (
            "java.nio.file.AccessDeniedException: s3a://lake/t.parquet: getFileStatus on "
            "s3a://lake/t.parquet: 403 Forbidden",
            "access denied",
            "spark.hadoop.fs.s3a",
        ),
        (
            "org.apache.spark.SparkException: Job 3 cancelled because SparkContext was shut down",
            "the Spark driver stopped",
            "--resume",
        ),
        (
            "java.lang.IllegalStateException: Cannot call methods on a stopped SparkContext.",
            "the Spark driver stopped",
            "spark.driver.memory",
        ),
        (
            "org.apache.spark.SparkException: Job aborted due to stage failure: Master removed "
            "our application: KILLED",
            "the Spark cluster was lost",
            "--master",
        ),
        (
            "Application has been killed. Reason: All masters are unresponsive! Giving up.",
            "the Spark cluster was lost",
            "--resume",
        ),
    ],
)
def test_each_known_failure_names_its_cause_and_the_setting(text, cause, setting):
    failure, message = explain(text)
    assert cause in message and setting in message
    assert "\n" not in message
    assert message.endswith(" | ".join(worker_lines(text)))


def test_a_driver_jvm_that_no_longer_answers_is_told_by_the_python_error_it_gives():
    from py4j.protocol import Py4JNetworkError

    for error in (
        ConnectionRefusedError(111, "Connection refused"),
        Py4JNetworkError("Answer from Java side is empty"),
    ):
        failure, message = explain(error)
        assert message.startswith("the Spark driver stopped during the run")
        assert failure.stopped and not failure.input
        stopped = spark_error(error, "Spark could not read, score or write", path="truth.parquet")
        assert isinstance(stopped, EngineStopped) and "truth.parquet" not in str(stopped)
    # a Java ConnectException inside a Spark error is a store's endpoint, not the driver
    assert explain("java.net.ConnectException: Connection refused (s3.local:9000)") is None
    assert explain(OSError("Connection refused")) is None


def test_unknown_failures_are_left_to_the_caller():
    assert explain("java.lang.IllegalStateException: something else entirely") is None
    assert len({failure.pattern for failure in FAILURES}) == len(FAILURES)


# --------------------------------------------------------------------------- on local[2]


def _skip_without_spark() -> None:
    pytest.importorskip("pyspark", reason="PySpark is not installed: pip install 'mobeval[spark]'")
    from tests.test_spark import _java_problem

    if _java_problem():
        pytest.skip(_java_problem())


def _without_mobeval(tmp_path: Path) -> Path:
    """An interpreter that imports PySpark, NumPy, Polars... and not mobeval: this Python with
    no site processing (so no editable-install hook), the site-packages on PYTHONPATH."""
    script = tmp_path / "python-without-mobeval"
    packages = sysconfig.get_paths()["purelib"]
    script.write_text(f'#!/bin/sh\nPYTHONPATH="{packages}" exec "{sys.executable}" -S "$@"\n')
    script.chmod(0o755)
    probe = subprocess.run(
        [script, "-c", "import pyspark, numpy, polars, mobeval"], capture_output=True, text=True
    )
    assert "No module named 'mobeval'" in probe.stderr
    return script


def _mobeval(args: list[str], tmp_path: Path, **env) -> subprocess.CompletedProcess:
    """``python -m mobeval ARGS`` with stderr captured (not a terminal)."""
    environment = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-m", "mobeval", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=environment,
        timeout=600,
    )


@pytest.mark.spark
def test_an_executor_without_mobeval_is_named_with_pythonpath_advice(tmp_path):
    _skip_without_spark()
    job = REPO_ROOT / "jobs" / "nextloc_sample.toml"
    ran = _mobeval(
        ["run", str(job), "--engine", "spark", "--out", str(tmp_path / "out"), "--quiet"],
        tmp_path,
        PYSPARK_PYTHON=str(_without_mobeval(tmp_path)),
    )
    assert ran.returncode == 2, ran.stderr[-3000:]
    last = ran.stderr.strip().splitlines()[-1]
    assert last.startswith("mobeval: error: ")
    assert "cannot import mobeval" in last and "PYSPARK_PYTHON" in last
    assert "Spark said: ModuleNotFoundError: No module named 'mobeval'" in last
    assert not (tmp_path / "out" / "summary").exists()


@pytest.mark.spark
def test_a_quiet_run_prints_no_spark_progress_nor_warnings(tmp_path):
    _skip_without_spark()
    job = REPO_ROOT / "jobs" / "nextloc_sample.toml"
    ran = _mobeval(
        ["run", str(job), "--engine", "spark", "--out", str(tmp_path / "out"), "--quiet"],
        tmp_path,
        PYSPARK_PYTHON=sys.executable,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    noisy = [
        line
        for line in ran.stderr.splitlines()
        if "[Stage" in line or " WARN " in line or " INFO " in line or "log4j" in line
    ]
    assert noisy == [], noisy
    assert "tky/markov: done in" in ran.stderr and "(spark)" in ran.stderr
