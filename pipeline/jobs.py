"""Job files (TOML) -> validated, typed job specs, and the runner that evaluates every city x model.

A job file::

    out = "../out/nextloc_sample"       # relative to the job file; --out overrides
    chunk_rows = 2000000                  # optional
    url_timeout = 30                      # optional: seconds a URL input may wait (--url-timeout)
    log_format = "json"                   # optional: stderr log lines, text or json (--log-format)
    track = ["mlflow:sqlite:///mlruns.db"]  # optional: trackers logged to at the end (--track)

    [spark]                               # optional: the session --engine spark starts
    master = "spark://head:7077"          # --master overrides it
    conf = { "spark.executor.memory" = "4g" }  # --spark-conf KEY=VALUE adds or replaces one

    [[tasks]]
    type = "nextloc"                      # the evaluation family
    city = "tky"
    truth = "../data_samples/nextloc/tky/truth.parquet"
    k = [1, 5, 10]
    convention = "libcity"
    [tasks.models]                        # model name -> predictions (file, directory or glob)
    markov = "../data_samples/nextloc/tky/markov.parquet"
    gru = { seed1 = "gru_s1.parquet", seed2 = "gru_s2.parquet" }  # runs (seeds, folds) of a model

A model given a table of run name -> predictions has several runs, each a result of its own
(``city=<c>/model=<m>/run=<r>``, ``--resume`` run by run) that compare and the report take
together (docs/jobs.md, docs/compare-and-report.md).

Task types (``TASK_TYPES``): ``nextloc`` (``truth`` = true next locations, models = predictions),
``trajectory`` (``truth`` = the reference trajectories, models = generated ones), ``recs``
(``truth`` = the ratings, models = recommendation lists) and ``logits`` (``truth`` = the targets:
``.npy`` or a Parquet file's ``targets_column``, models = logits ``.npy`` / Parquet files); their
options are the keyword arguments of the matching ``evaluate_*`` function of :mod:`mobeval.api`.

Paths are relative to the job file; a URL (``s3://bucket/key``, ``memory://x``, Spark's
``s3a://`` or ``dbfs:/``) is kept as given. The local engine reads URLs through fsspec
(:mod:`mobeval.io.remote`), the Spark engine through Hadoop. ``mobeval run JOB --resume``
skips every (city, model) whose outputs are complete for the same options and the same input
fingerprints, and redoes the rest.
"""

from __future__ import annotations

import functools
import time
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from mobeval import api
from mobeval.api import Evaluation
from mobeval.engines.base import Engine, default_city_name
from mobeval.engines.cluster import SparkSettings, job_settings
from mobeval.errors import ConfigError, OptionError
from mobeval.families import FAMILIES
from mobeval.io.inputs import check_input, is_uri
from mobeval.io.remote import checked_url_timeout, url_timeout
from mobeval.io.writers import check_inputs_apart, check_name
from mobeval.job_partitions import checked_job_partition, expand_partitions
from mobeval.job_values import VALUE_KINDS, all_items, is_int, is_str, shown
from mobeval.logs import FORMATS
from mobeval.manifest import Manifest
from mobeval.options import DEFAULT_CHUNK_ROWS, check_options, checked_chunk_rows
from mobeval.report.job import ReportSpec, check_report_table, run_report
from mobeval.track import checked_targets, track


@dataclass(frozen=True)
class TaskType:
    """An evaluation family a job can name: its options and the API function that runs it."""

    evaluate: Callable[..., Evaluation]
    truth_argument: str  # the evaluate() argument the task's ``truth`` path goes to
    model_argument: str  # the evaluate() argument each model's path goes to
    options: frozenset[str]


#: The task types, from the families' definitions (:mod:`mobeval.families`).
TASK_TYPES: dict[str, TaskType] = {
    name: TaskType(getattr(api, f"evaluate_{name}"), family.truth, family.model, family.names)
    for name, family in FAMILIES.items()
}
COMMON_KEYS = {"type", "city", "truth", "models"}
JOB_KEYS = {
    "out",
    "chunk_rows",
    "url_timeout",
    "log_format",
    "tasks",
    "report",
    "partition",
    "spark",
    "track",
}


#: The kind (a key of VALUE_KINDS) of every option of every task type (their definitions).
OPTION_KINDS: dict[str, dict[str, str]] = {
    name: {option.name: option.kind for option in family.options}
    for name, family in FAMILIES.items()
}


def _checked_options(where: str, kind: str, options: dict) -> dict:
    """The task's options after checking each value's type (OptionError naming the key); a
    single cutoff becomes a one-element list."""
    checked = {}
    for name, value in options.items():
        words, check = VALUE_KINDS[OPTION_KINDS[kind].get(name, "string")]
        if not check(value):
            raise OptionError(name, value, f"expected {words}, got {shown(value)}")
        if OPTION_KINDS[kind].get(name) == "cutoffs" and is_int(value):
            value = [value]
        checked[name] = value
    return checked


@dataclass(frozen=True)
class TaskSpec:
    type: str
    city: str
    truth: Path | str  # a path (the job file's folder joined) or a URL as given
    #: model name -> predictions, or -> {run name: predictions} for a model of several runs
    models: dict[str, Path | str | dict[str, Path | str]]
    options: dict = field(default_factory=dict)
    #: ``date=2026-11-27``: the partition its results lie under (:mod:`mobeval.job_partitions`)
    partition: str | None = None
    #: one of the partitions a value ``"*"`` found: skipped when complete in OUT
    incremental: bool = False
    index: int = 0  # its entry in the file (tasks[index]): a task is one per partition

    def results(self) -> list[tuple[str, str | None, Path | str]]:
        """(model, run or None, predictions) of every result of the task, in the file's order."""
        return [
            (model, run, path)
            for model, given in self.models.items()
            for run, path in (given.items() if isinstance(given, dict) else [(None, given)])
        ]


@dataclass(frozen=True)
class JobSpec:
    path: Path
    out: Path
    chunk_rows: int
    tasks: tuple[TaskSpec, ...]
    report: ReportSpec | None = None  # the [report] table: compare + report after the last model
    url_timeout: float | None = None  # seconds (mobeval.io.remote.url_timeout); None: the default
    log_format: str | None = None  # mobeval.logs.FORMATS; None: as the command line says
    waiting: tuple[str, ...] = ()  # results of a partition "*" whose inputs are not all there
    spark: SparkSettings = field(default_factory=SparkSettings)  # the [spark] table
    track: tuple[str, ...] = ()  # trackers every result is logged to (mobeval.track.parse_target)


def load_job(
    path: str | Path,
    *,
    out: str | Path | None = None,
    url_timeout: float | None = None,
    partition: dict[str, str] | None = None,
) -> JobSpec:
    """Read and check a job file; every mistake is a ConfigError naming the file and the entry.
    ``out`` and ``url_timeout`` override the file's (``--out``, ``--url-timeout``); each key of
    ``partition`` (``--partition``) the value of the file's ``partition`` table
    (:mod:`mobeval.job_partitions`)."""
    path = Path(path)
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such job file") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a folder, not a job file") from None
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"{path}: not UTF-8 text (byte 0x{error.object[error.start]:02x} at offset "
            f"{error.start}); a TOML job file is UTF-8"
        ) from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the job file ({error.strerror or error})") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML ({error})") from None
    unknown = set(document) - JOB_KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown top-level key {sorted(unknown)[0]!r}")
    base = path.resolve().parent
    out_value = out if out is not None else document.get("out")
    if out_value is None:
        raise ConfigError(f"{path}: no 'out' directory (set it in the file or pass --out)")
    if not isinstance(out_value, str | Path):
        raise ConfigError(f"{path}: out: expected a string (a folder), got {shown(out_value)}")
    chunk_rows = checked_chunk_rows(
        document.get("chunk_rows", DEFAULT_CHUNK_ROWS), f"{path}: chunk_rows"
    )
    if url_timeout is None and "url_timeout" in document:
        url_timeout = checked_url_timeout(document["url_timeout"], f"{path}: url_timeout")
    tasks = document.get("tasks")
    if not tasks:
        raise ConfigError(f"{path}: no [[tasks]] entry")
    if not all_items(lambda task: isinstance(task, dict))(tasks):
        raise ConfigError(
            f"{path}: tasks: expected an array of tables ([[tasks]] entries), got {shown(tasks)}"
        )
    specs = tuple(_task(path, base, index, task) for index, task in enumerate(tasks))
    seen = set()
    for spec in specs:
        for model in spec.models:
            if (spec.city, model) in seen:
                raise ConfigError(f"{path}: city {spec.city!r}, model {model!r} appears twice")
            seen.add((spec.city, model))
    given = checked_job_partition(f"{path}: partition", document.get("partition", {}))
    given |= checked_job_partition("--partition", partition or {})
    specs, waiting = expand_partitions(path, specs, given)
    out_path = (Path(out_value) if out is not None else base / out_value).resolve()
    report = None
    if "report" in document and given:
        raise ConfigError(
            f"{path}: report: compare and report read an OUT without partitions; query results "
            "over time as one table (docs/outputs.md, Results over time)"
        )
    if "report" in document:  # checked now, with the rest (mobeval.report.job)
        report = check_report_table(path, document["report"], specs)
    log_format = document.get("log_format")
    if log_format is not None and log_format not in FORMATS:
        raise ConfigError(
            f"{path}: log_format: expected one of {', '.join(FORMATS)}, got {shown(log_format)}"
        )
    track = document.get("track", [])
    track = [track] if isinstance(track, str) else track
    if not all_items(is_str)(track):
        raise ConfigError(
            f"{path}: track: expected a string or an array of them, got {shown(track)}"
        )
    track = checked_targets(track, f"{path}: track")  # named and installed, before any work
    spark = job_settings(str(path), document["spark"]) if "spark" in document else SparkSettings()
    job = JobSpec(
        path, out_path, chunk_rows, specs, report, url_timeout, log_format, waiting, spark, track
    )
    for kind, where, input_path in task_inputs(job):  # every input in place before any model runs
        if not is_uri(input_path):  # a URL: looked for by the engine that reads it, before it runs
            check_input(kind, input_path, where)
            try:
                check_inputs_apart(out_path, [input_path])
            except ConfigError as error:
                raise ConfigError(f"{where}: {error}") from None
    return job


def _task(path: Path, base: Path, index: int, task: dict) -> TaskSpec:
    where = f"{path}: tasks[{index}]"
    kind = task.get("type")
    if not isinstance(kind, str) or kind not in TASK_TYPES:
        raise ConfigError(f"{where}: type {kind!r} is not one of {sorted(TASK_TYPES)}")
    given_names = FAMILIES[kind].given_names(task)  # an option as the file spells it
    try:  # an alias is its option: cutoffs = [5] is k = [5]
        task = FAMILIES[kind].canonical(task)
    except OptionError as error:
        raise ConfigError(error.spelled(f"{where}.{error.option}")) from None
    unknown = set(task) - COMMON_KEYS - TASK_TYPES[kind].options
    if unknown:
        allowed = sorted(COMMON_KEYS | TASK_TYPES[kind].options)
        raise ConfigError(f"{where}: unknown key {sorted(unknown)[0]!r}; allowed: {allowed}")
    for required in ("truth", "models"):
        if required not in task:
            raise ConfigError(f"{where}: missing {required!r}")
    models = task["models"]
    if not isinstance(models, dict) or not models:
        raise ConfigError(f"{where}: 'models' must be a table of name = path")
    if not is_str(task["truth"]):
        raise ConfigError(f"{where}.truth: expected a path (a string), got {shown(task['truth'])}")
    for name, value in models.items():
        runs = value.items() if isinstance(value, dict) and value else [(None, value)]
        for run, path in runs:
            if not is_str(path):
                entry = f"{where}.models.{name}" + ("" if run is None else f".{run}")
                raise ConfigError(
                    f"{entry}: expected a path (a string) or a table of run = path, "
                    f"got {shown(path)}"
                )
    options = {name: value for name, value in task.items() if name not in COMMON_KEYS}
    try:  # every value resolved through its preset / convention now, not when its model runs
        options = _checked_options(where, kind, options)
        check_options(kind, options)
    except OptionError as error:
        name = given_names.get(error.option, error.option)
        raise ConfigError(error.spelled(f"{where}.{name}")) from None
    except ConfigError as error:
        raise ConfigError(f"{where}: {error}") from None
    for name in FAMILIES[kind].file_options:  # a file, like the truth: relative to the job file
        if is_str(options.get(name)):
            options[name] = str(_job_path(base, options[name]))
    return TaskSpec(
        index=index,
        type=kind,
        city=check_name(
            task.get("city", default_city_name(_job_path(base, task["truth"]))), f"{where}.city"
        ),
        truth=_job_path(base, task["truth"]),
        models={
            check_name(name, f"{where}.models"): (
                {
                    check_name(run, f"{where}.models.{name}"): _job_path(base, path)
                    for run, path in value.items()
                }
                if isinstance(value, dict)
                else _job_path(base, value)
            )
            for name, value in models.items()
        },
        options=options,
    )


def _job_path(base: Path, value: str) -> Path | str:
    """A job file's input: a URL as given (never joined to the job file's folder), anything else
    relative to that folder."""
    return value if is_uri(value) else base / value


def task_inputs(job: JobSpec) -> Iterator[tuple[str, str, Path | str]]:
    """(task type, the entry as a message names it, path) of every input of a job: each task's
    truth, models and file options (:attr:`mobeval.families.Family.file_options`: a recs
    task's ``catalogue``...), the paths its evaluate calls will read."""
    for task in job.tasks:
        where = f"{job.path}: tasks[{task.index}]"
        yield task.type, f"{where}.truth", task.truth
        for name, run, model_path in task.results():
            entry = f"{where}.models.{name}" + ("" if run is None else f".{run}")
            yield task.type, entry, model_path
        family = FAMILIES[task.type]
        for name in family.file_options:
            if task.options.get(name) is not None:
                kind = "file" if family.by_name[name].path == "file" else task.type
                yield kind, f"{where}.{name}", task.options[name]


def run_job(
    job: JobSpec,
    *,
    resume: bool = False,
    progress: bool | None = None,
    log=print,
    engine: str | Engine | None = None,
    spark=None,
    partitions: int | None = None,
    out: str | Path | None = None,
    settings: SparkSettings | None = None,
) -> list[Evaluation]:
    """Evaluate every (city, model) of the job; with ``resume``, skip those already complete.
    Every result comes back, in the job's order: those skipped read back from OUT
    (:meth:`mobeval.api.Manifest.resumed`, ``resumed=True``).

    ``engine`` (``"local"``, ``"spark"``; a SparkSession as ``spark`` means Spark), ``partitions``:
    as :func:`mobeval.api.evaluate_nextloc`'s. ``out`` overrides the job's output folder (with
    Spark any URI it can write). Every input is looked for before any model runs. Holds the output
    folder's lock throughout (:func:`mobeval.io.writers.output_lock`; with Spark where OUT is on
    the driver's disk): another run on the same folder is refused. The manifest is read before
    anything is computed. The job's ``[report]`` is written when OUT is on this machine. URL
    inputs wait at most the job's ``url_timeout`` (:func:`mobeval.io.remote.url_timeout`).
    ``settings`` (``--master``, ``--spark-conf``) over the job's ``[spark]`` table: the session
    the Spark engine starts (the table is the Spark engine's alone: a local run leaves it).
    Every result is then logged to the job's ``track`` (:func:`mobeval.track.track`)."""
    settings = settings or SparkSettings()
    if engine == "spark" or (engine is None and spark is not None):
        settings = job.spark.over(settings) if spark is None else settings
    runner = api.engine_for(engine, spark, partitions, progress, settings)
    with url_timeout(job.url_timeout):  # every read of a URL input, the checks included
        runner.check_inputs(list(task_inputs(job)))
        root = runner.location(out if out is not None else job.out)
        results = []
        with runner.lock(root), api.caller_records():  # each result recorded below
            manifest = Manifest(
                root,
                {"file": str(job.path), "chunk_rows": job.chunk_rows},
                files=runner.files,
                engine=runner.name,
            )
            for line in job.waiting:
                log(line)
            skipped = []  # a partition "*"'s results complete in OUT: one line says how many
            for task in job.tasks:
                task_type = TASK_TYPES[task.type]
                pending = []  # (model, config, call): the engine runs them (Spark: together)
                task_results = []  # resumed, then computed: put back in the models' order
                for model, run, prediction_path in task.results():
                    config = {"type": task.type, "city": task.city, "model": model, **task.options}
                    config |= {} if run is None else {"run": run}
                    names = (task.city, model, run, task.partition)
                    label = "/".join(filter(None, (task.partition, task.city, model, run)))
                    if resume or task.incremental:
                        inputs = {
                            "truth": runner.fingerprint(task.truth),
                            "predictions": runner.fingerprint(prediction_path),
                            **api.file_fingerprints(runner, task.type, task.options),
                        }
                        if manifest.is_complete(*names, config=config, inputs=inputs):
                            if not resume:  # a partition "*": the new partitions only
                                skipped.append(label)
                                continue
                            log(f"{label}: complete, resumed from OUT (--resume)")
                            task_results.append(manifest.resumed(*names))
                            continue
                    call = functools.partial(
                        task_type.evaluate,
                        **{
                            task_type.truth_argument: task.truth,
                            task_type.model_argument: prediction_path,
                        },
                        out=root,
                        city=task.city,
                        model=model,
                        run=run,
                        partition=task.partition,
                        chunk_rows=job.chunk_rows,
                        progress=progress,
                        **task.options,
                    )
                    pending.append((label, config, call))
                if skipped and pending:
                    log(_skipped(skipped))
                    skipped.clear()
                evaluations = runner.run_all([call for _, _, call in pending])
                for label, config, _ in pending:
                    started = time.perf_counter()
                    try:
                        evaluation = next(evaluations)
                    except OptionError as error:  # an option's value: name the job entry
                        where = f"{job.path}: tasks[{task.index}].{error.option}"
                        raise ConfigError(error.spelled(where)) from None
                    except ConfigError as error:
                        raise ConfigError(f"{job.path}: tasks[{task.index}]: {error}") from None
                    evaluation.inputs |= api.file_fingerprints(runner, task.type, task.options)
                    manifest.record(evaluation, config, task.type)
                    seconds = max(time.perf_counter() - started, evaluation.seconds)
                    on = "" if runner.name == "local" else f" ({runner.name})"
                    log(f"{label}: done in {seconds:.2f}s{on}")
                    task_results.append(evaluation)
                order = [(model, run) for model, run, _ in task.results()]
                results += sorted(task_results, key=lambda e: order.index((e.model, e.run)))
            if skipped:
                log(_skipped(skipped))
            if job.report is not None and Path(str(root), "manifest.json").is_file():
                run_report(job, log=log)  # compare every city, then write the report (a local OUT)
            track(results, job.track, log=log)  # OUT whole: each result with its city's report
        return results


def _skipped(labels: list[str]) -> str:
    """The line saying which results a partition ``"*"`` found complete in OUT."""
    shown = labels[0] if len(labels) == 1 else f"{labels[0]} ... {labels[-1]}"
    return f"{len(labels)} result(s) complete in OUT, skipped: {shown}"
