"""The engine class, :class:`SparkEngine` (:class:`mobeval.engines.base.Engine`): what it reads,
how a job's results are grouped into Spark jobs (the results of one truth scored together:
:meth:`SparkEngine.run_all`), one group's run from the inputs to its evaluations
(:meth:`SparkEngine.run_group`), logits by ranges of rows (:meth:`SparkEngine.run_rows`), and a
job's URIs looked for before any model runs (:meth:`SparkEngine.check_inputs`)."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import os
import time
from collections.abc import Iterator

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession

from mobeval.engines.base import Evaluation, default_city_name, default_model_name
from mobeval.engines.cluster import SparkSettings
from mobeval.engines.names import check_chosen_model
from mobeval.engines.partition import (
    PRED,
    TRUTH,
    FoldList,
    PartitionJobs,
    row_ranges,
    score_partition,
    score_rows,
)
from mobeval.engines.spark.failures import explained_failures
from mobeval.engines.spark.files import Files, as_uri, out_lock
from mobeval.engines.spark.hashes import (
    HASH_SCHEMA,
    HASHES,
    detach_hashes,
    hash_rows,
    wants_hashes,
)
from mobeval.engines.spark.inputs import SparkInput, read_input, renamed_input
from mobeval.engines.spark.layout import (
    arrow_output,
    combined_table,
    partition_count,
    shuffle_and_score,
)
from mobeval.engines.spark.results import Result, finished_group, rows_scored
from mobeval.engines.spark.session import (
    described,
    is_quiet,
    quiet_log,
    spark_session,
    task_cpus,
)
from mobeval.errors import ConfigError
from mobeval.io.logits import input_name, is_targets_column
from mobeval.io.writers import check_name, check_result_slot
from mobeval.options import checked_chunk_rows
from mobeval.progress import Progress


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

    def source(self, data, *, names=None, columns=None, role="truth") -> SparkInput:
        if not isinstance(data, str | os.PathLike):
            return self.engine.source(data, names=names, columns=columns, role=role)
        known = (as_uri(data), names, repr(columns), role)
        if known not in self._sources:
            self._sources[known] = self.engine.source(data, names=names, columns=columns, role=role)
        return self._sources[known]

    def run(self, plan, truth: SparkInput, predictions: SparkInput, where: dict) -> None:
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
    shared = {name: value for name, value in where.items() if name not in ("model", "run")}
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
    ``mapInArrow`` partitions (see :mod:`mobeval.engines.spark`), the folds are merged on the
    driver.

    ``spark``: the SparkSession (None: the active one, or a new one, when first needed:
    :func:`spark_session`, on ``settings``' master with its Spark settings); ``partitions``:
    hash partitions per result (default: the default parallelism, or one per 64 MiB of input if
    more)."""

    name = "spark"

    def __init__(
        self,
        spark: SparkSession | None = None,
        *,
        partitions: int | None = None,
        progress: bool | None = None,
        settings: SparkSettings | None = None,
    ):
        self._spark = spark
        self.partitions = _positive(partitions, "partitions")
        self.progress = progress
        self.settings = settings or SparkSettings()
        if spark is not None and self.settings:
            raise ConfigError(
                f"{self.settings.shown()}: a SparkSession given to mobeval keeps its own master "
                "and settings; give the session or the settings, not both"
            )

    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            self._spark = spark_session(quiet=is_quiet(self.progress), settings=self.settings)
        if self._spark.sparkContext._jsc is None:  # what SparkSession.stop() leaves
            raise ConfigError(
                "the Spark session given to mobeval is stopped (spark.stop() was called, or its "
                "driver shut down): give a running session, or none (mobeval then starts one)"
            )
        return self._spark

    @property
    def files(self) -> Files:
        return Files(self.spark)

    def source(self, data, *, names=None, columns=None, role="truth") -> SparkInput:
        """An input read (its Spark jobs, reading a schema or a CSV's first line, described as
        ``read <path>``: the city and model are not known yet)."""
        label = os.fspath(data) if isinstance(data, str | os.PathLike) else "a DataFrame"
        with (
            explained_failures(),
            quiet_log(self.spark, is_quiet(self.progress)),
            described(self.spark, f"read {label}"),
        ):
            return renamed_input(read_input(self.spark, data, names=names), columns, role)

    def run(self, plan, truth: SparkInput, predictions: SparkInput, where: dict) -> Evaluation:
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
        the truth and every result's predictions in one table (:func:`combined_table`), one shuffle,
        one write per section partitioned by result; then each result's folds merged and its
        sections committed, result by result (:func:`finished_group`)."""
        plan, truth, _, where = runs[0]
        preds = [run[2] for run in runs]
        sections = plan.sections if where["per_unit"] else {}
        hidden = {HASHES: HASH_SCHEMA} if wants_hashes(run[0].job.scorer() for run in runs) else {}
        spark_schema, arrow_schema = arrow_output(sections | hidden)
        inputs = plan.inputs
        combined, layout = combined_table(
            truth,
            preds,
            plan.key,
            inputs.truth_columns,
            inputs.pred_columns,
            input_order=plan.input_order,
        )
        n_partitions = partition_count(self.spark, [truth, *preds], self.partitions)
        group = PartitionJobs(
            jobs=tuple(run[0].job for run in runs),
            key=plan.key,
            columns=(layout[TRUTH], layout[PRED]),
            output=arrow_schema,
            chunk_rows=checked_chunk_rows(where["chunk_rows"]),
            threads=task_cpus(self.spark),
        )

        def scoring(folds) -> DataFrame:
            detach = detach_hashes if hidden else None
            score = functools.partial(score_partition, group, folds, detach=detach)
            return shuffle_and_score(
                combined, score, spark_schema, key=plan.key, n_partitions=n_partitions
            )

        results = []
        city = where["city"] or default_city_name(truth.label)
        for run_plan, _, pred, run_where in runs:
            sources = {"truth": truth, "predictions": pred}
            model = run_where["model"] or default_model_name(as_uri(pred.label))
            model = check_name(model, "model")
            names = (city, model, run_where["run"], run_where["partition"])
            check_chosen_model(run_where, names, pred.label, pred.fingerprint, self.files.read_text)
            results.append(
                Result(
                    scorer=run_plan.job.scorer(),
                    labels={side: source.label for side, source in sources.items()},
                    fingerprints={side: source.fingerprint() for side, source in sources.items()},
                    model=model,
                    run=None if run_where["run"] is None else check_name(run_where["run"], "run"),
                    counts=run_where["counts"],
                    units=run_where["units"],
                    column=plan.key[0],
                )
            )
        return self._finished(scoring, results, sections, {**where, "city": city})

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
        spark_schema, arrow_schema = arrow_output(sections)
        job = dataclasses.replace(
            job, output=arrow_schema, n_classes=n_classes, threads=task_cpus(self.spark)
        )

        def scoring(folds) -> DataFrame:
            score = functools.partial(score_rows, job, ranges, folds)
            return self.spark.range(len(ranges), numPartitions=len(ranges)).mapInArrow(
                score, spark_schema
            )

        label = input_name(job.logits)
        city = where["city"] or default_city_name(input_name(job.truth_file))
        model = check_name(where["model"] or default_model_name(label), "model")
        fingerprints = job.fingerprints(self.fingerprint)
        check_chosen_model(
            where,
            (city, model, where["run"], where["partition"]),
            label,
            lambda: fingerprints["predictions"],
            self.files.read_text,
        )
        result = Result(
            scorer=job.scorer(),
            labels={"truth": input_name(job.targets) or label, "predictions": label},
            fingerprints=fingerprints,
            model=model,
            run=None if where["run"] is None else check_name(where["run"], "run"),
            column="target",
        )
        [evaluation] = self._finished(scoring, [result], sections, {**where, "city": city})
        return evaluation

    def _finished(self, scoring, results, sections, where) -> Iterator[Evaluation]:
        """Score (``scoring(folds)``: the scored DataFrame, its partitions' folds added to
        ``folds``), write (or collect) the sections, merge the folds; the results, one by one
        (:func:`finished_group`). A single section is written in the pass that scores it;
        several (or the hash rows of :mod:`mobeval.engines.spark.hashes`) are scored once into
        Spark's cache. Quiet (no log below ERROR) unless the engine's ``progress`` asks for it or
        stderr is a terminal."""
        with explained_failures():  # the driver stopped, the cluster lost: named
            started = time.perf_counter()
            quiet = is_quiet(self.progress)
            city = check_name(where["city"], "city")
            folds = self.spark.sparkContext.accumulator([], FoldList())
            scored = scoring(folds)
            cached = len(sections) > 1 or hash_rows(scored) is not None  # read again
            if cached:
                scored = scored.persist(StorageLevel.MEMORY_AND_DISK)
            models = ",".join("/".join(filter(None, (r.model, r.run))) for r in results)
            place = "/".join(filter(None, (where["partition"], city)))
            meter = Progress(f"{place}/{models}", None, enabled=self.progress)
            evaluations, failure = [], None
            try:
                with (
                    out_lock(self.spark, where["out"]),
                    quiet_log(self.spark, quiet),
                    rows_scored(folds, meter),
                ):
                    self._check_slots(results, city, where)  # before anything is computed
                    for evaluation in finished_group(
                        self.spark,
                        scored,
                        folds,
                        results,
                        sections,
                        out=where["out"],
                        city=city,
                        started=started,
                        partition=where["partition"],
                    ):
                        evaluations.append(evaluation)
            except Exception as error:  # noqa: BLE001 - raised once the results before it are out
                if not evaluations:
                    raise
                failure = error
            finally:
                if cached:
                    scored.unpersist()
            yield from evaluations
            if failure is not None:
                raise failure

    def _check_slots(self, results: list[Result], city: str, where: dict) -> None:
        """Each result's place in OUT checked as the local engine checks it (all runs or one
        result, one partition layout: :func:`mobeval.io.writers.check_result_slot`), on Spark's
        file system."""
        out = where["out"]
        if out is None:
            return
        files, root = Files(self.spark), as_uri(out).rstrip("/")
        for result in results:
            check_result_slot(
                root,
                city,
                result.model,
                result.run,
                where["partition"],
                lambda pattern: files.matches(f"{root}/{pattern}"),
            )

    def location(self, path) -> str:
        return as_uri(path).rstrip("/")

    def lock(self, out):
        return out_lock(self.spark, out)

    def check_inputs(self, inputs) -> None:
        """Every URI of a job names data files (local paths were looked for by ``load_job``);
        logits are read by the executors with NumPy and pyarrow: a local or shared path."""
        from mobeval.io.inputs import is_uri

        files = None
        for kind, where, path in inputs:
            if not is_uri(path):
                continue
            if kind == "logits":
                raise ConfigError(
                    f"{where}: {as_uri(path)}: logits are read by each executor from a local or "
                    "shared file system path, not a URI"
                )
            files = files or Files(self._spark)
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
