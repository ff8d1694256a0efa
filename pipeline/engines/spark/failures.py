"""What a Spark failure means and what to change, read from the failure's own text.

Spark reports a problem on an executor as a long Java exception whose message embeds the Python
worker's traceback (or the JVM's ``Caused by:`` chain). :func:`explain` matches that text against
:data:`FAILURES` (the first pattern that matches wins) and returns one line: the cause, the
setting to change, and the first lines of the worker's own error (:func:`worker_lines`).
:func:`spark_error` turns such an exception into the error mobeval raises (an input's or the
setup's). No PySpark here: the table is plain data, tested without a JVM.
"""

from __future__ import annotations

import contextlib
import re
import sys
from dataclasses import dataclass

from mobeval.errors import ConfigError, EngineStopped, InputError, MobevalError


@dataclass(frozen=True)
class Failure:
    """A kind of failure: ``pattern`` (a regular expression searched in the exception's text),
    ``cause`` (what went wrong), ``advice`` (what to change; ``{python}`` is the driver's
    interpreter, ``{version}`` its ``major.minor``), ``input``: about an input path (the
    message names it), not the environment; ``stopped``: the driver or the cluster went away
    under the run (an :class:`~mobeval.errors.EngineStopped`, naming no input nor option)."""

    pattern: str
    cause: str
    advice: str
    input: bool = False
    stopped: bool = False


_PYTHON = (
    "install mobeval and its dependencies in the Python the executors run (docs/spark.md: the "
    "wheel), or point PYSPARK_PYTHON (spark.pyspark.python) at one that has them (this driver "
    "runs {python})"
)

#: The failures mobeval explains, most specific first.
FAILURES = (
    Failure(
        r"No module named '?mobeval",
        "the executors' Python cannot import mobeval",
        _PYTHON,
    ),
    Failure(
        r"No module named '?(pyspark|numba|numpy|polars|pyarrow)\b",
        "the executors' Python lacks a package mobeval needs",
        _PYTHON,
    ),
    Failure(
        r'Cannot run program "[^"]*python',
        "the executors cannot start their Python (no such program on the workers)",
        _PYTHON,
    ),
    Failure(
        r"PYTHON_VERSION_MISMATCH|Python in worker has different version",
        "the executors run another Python version than the driver",
        "point PYSPARK_PYTHON (spark.pyspark.python) at a Python {version} with mobeval "
        "installed, the driver's version",
    ),
    Failure(
        r"UnsupportedClassVersionError|class file version",
        "this Java is older than the Spark it runs needs",
        "Spark 4 needs Java 17 or later: set JAVA_HOME (or PATH) to one",
    ),
    Failure(
        r"does not exist in the JVM|NoSuchMethodError|NoSuchFieldError|"
        r"JAVA_GATEWAY_EXITED|Java gateway process exited",
        "PySpark and the Spark (or Java) it started do not fit together",
        "use the Spark that comes with PySpark (unset SPARK_HOME) or install the pyspark "
        "version of your SPARK_HOME; Spark 4 needs Java 17 or later (JAVA_HOME)",
    ),
    Failure(
        r"Master removed our application|All masters are unresponsive|"
        r"Application has been killed|Master has been lost|Lost connection to master",
        "the Spark cluster was lost during the run (its master removed this application, or no "
        "master answered)",
        "check the master and its workers (their logs, the master's web UI) and the master URL "
        "(--master, spark.master), then run again: --resume keeps the results already written",
        stopped=True,
    ),
    Failure(
        r"SparkContext was shut down|stopped SparkContext|SparkContext has been shutdown|"
        r"^(Py4JNetworkError|ConnectionRefusedError|ConnectionResetError|BrokenPipeError)\b|"
        r"Answer from Java side is empty|Error while (sending|receiving)",
        "the Spark driver stopped during the run (its SparkContext was shut down, or its JVM "
        "exited or was killed)",
        "see the driver's log (spark.driver.memory if it ran out of memory), then run again: "
        "--resume keeps the results already written",
        stopped=True,
    ),
    Failure(
        r"OutOfMemoryError|exceeding memory limits|MemoryError|exit code 137|"
        r"killed by signal 9|Python worker exited unexpectedly",
        "an executor ran out of memory (or its Python worker was killed)",
        "raise spark.executor.memoryOverhead (or spark.executor.pyspark.memory: a task's Python "
        "holds one chunk) or lower chunk_rows",
    ),
    Failure(
        r'No FileSystem for scheme "memory"',
        "memory:// is a file system inside this Python process (fsspec's), which Spark cannot read",
        "give Spark paths on a file system every executor reads, or evaluate on the local engine "
        "(it reads fsspec URLs)",
        input=True,
    ),
    Failure(
        r"No FileSystem for scheme|ClassNotFoundException: Class org\.apache\.hadoop\.fs\.|"
        r"UnsupportedFileSystemException",
        "Spark has no file system for this path's scheme",
        "add the scheme's connector to spark.jars.packages (s3a://: "
        "org.apache.hadoop:hadoop-aws of Spark's Hadoop version; gs://: the GCS connector; "
        "abfss://: hadoop-azure)",
        input=True,
    ),
    Failure(
        r"AccessDenied|Permission denied|403 Forbidden|\bForbidden\b|not authorized",
        "access denied",
        "give the driver and every executor read access (credentials: the "
        "spark.hadoop.fs.s3a.* / fs.gs.* / fs.azure.* settings, or the cluster's role)",
        input=True,
    ),
    Failure(
        r"FileNotFoundException|No such file or directory|PATH_NOT_FOUND",
        "a file was not found while Spark read it (moved or deleted during the run, or not on "
        "the executors' file system)",
        "put the inputs where every executor can read them (a shared file system or an object "
        "store, not a driver's local disk) and leave them in place while the run reads them",
        input=True,
    ),
)

#: Lines of the worker's error shown, and characters per line.
SHOWN_LINES, SHOWN_WIDTH = 3, 200


def worker_lines(text: str, limit: int = SHOWN_LINES) -> list[str]:
    """The first lines of the worker's own error inside a Spark exception's text: the exception
    lines after a Python traceback's last frame (``ModuleNotFoundError: No module named ...``),
    else the JVM's first exception line (after Py4J's ``An error occurred while calling ...``)
    and its ``Caused by:`` lines; each cut at SHOWN_WIDTH."""
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    found = []
    if any(line.startswith("Traceback (most recent call last)") for line in lines):
        start = max(i for i, line in enumerate(lines) if line.startswith("Traceback"))
        frames = lines[start + 1 :]
        tail = [line for line in frames if not line.startswith((" ", "\t"))]
        found = [line for line in tail if not line.startswith(("SQLSTATE", " SQLSTATE"))]
    if not found:
        skipped = ("at ", "...", "An error occurred while calling")
        head = [line.removeprefix(": ") for line in lines if not line.lstrip().startswith(skipped)]
        caused = [line for line in head if line.startswith("Caused by:")]
        found = [*head[:1], *caused]
    unique = list(dict.fromkeys(line.strip() for line in found))
    return [line[:SHOWN_WIDTH] for line in unique[:limit]]


def explain(text: str | BaseException) -> tuple[Failure, str] | None:
    """The failure that ``text`` (an exception's text, or the exception: its text matched as
    ``Type: text``, as a Py4J error that the Java side never answered is told by its type)
    shows and its one-line message: cause, advice, then the worker's first lines; None if no
    known failure matches."""
    matched = text if isinstance(text, str) else f"{type(text).__name__}: {text}"
    text = str(text)
    for failure in FAILURES:
        if re.search(failure.pattern, matched):
            version = f"{sys.version_info.major}.{sys.version_info.minor}"
            advice = failure.advice.format(python=sys.executable, version=version)
            said = " | ".join(worker_lines(text))
            return failure, f"{failure.cause}: {advice}" + (f"; Spark said: {said}" if said else "")
    return None


def spark_error(error: BaseException, doing: str, *, path: str) -> MobevalError:
    """What to raise for an exception Spark threw while ``doing`` something with ``path``: the
    explained failure (:func:`explain`: an InputError naming the path when the path is the
    problem, a ConfigError when the setup is), else an InputError with the exception's first
    line."""
    explained = explain(error)
    if explained is None:
        return InputError(f"{doing} ({first_line(error)})", path=path)
    return _raised(*explained, path=path)


def _raised(failure: Failure, message: str, *, path: str | None = None) -> MobevalError:
    """The error raised for an explained failure: an input's (naming ``path``), the engine
    stopped, or the setup's."""
    if failure.input:
        return InputError(message, path=path)
    return EngineStopped(message) if failure.stopped else ConfigError(message)


@contextlib.contextmanager
def explained_failures():
    """A failure of the body that :func:`explain` knows and that is not an input's (the driver
    stopped, the cluster lost: EngineStopped; the executors' Python...: ConfigError) raised with
    its message, wherever in a run the Py4J call that met it was; anything else as it was."""
    try:
        yield
    except MobevalError:
        raise
    except Exception as error:
        explained = explain(error)
        if explained is None or explained[0].input:
            raise
        raise _raised(*explained) from None


def first_line(error: BaseException) -> str:
    """The first line of an exception's text (at most 300 characters), or its type's name."""
    text = str(error).strip().splitlines()
    return text[0][:300] if text else type(error).__name__


__all__ = [
    "FAILURES",
    "Failure",
    "explain",
    "explained_failures",
    "first_line",
    "spark_error",
    "worker_lines",
]
