"""One evaluation path, two engines: what the API hands to an engine, and the local engine.

:mod:`mobeval.api` turns a family's options and two inputs into a :class:`Plan` (keyed families:
next location, trajectories, recommendation lists) or a logits job (rows paired by position:
:class:`mobeval.engines.partition.LogitsPartitionJob`) and hands it to an engine. Every engine
implements :class:`Engine`:

* :class:`LocalEngine`: this process, streaming both inputs in chunks of whole units
  (:func:`mobeval.engines.local.stream_pairs`) through the plan's scorer;
* :class:`mobeval.engines.spark.SparkEngine`: the same scorers (the plan's partition job) in
  Spark's ``mapInArrow`` partitions, folds merged on the driver.

Both run the same scorer classes and kernels and fold into the same exact sums, so they give the
same numbers; :func:`mobeval.jobs.run_job` runs a job file's results through either.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Protocol

import polars as pl

from mobeval.engines.names import check_chosen_model
from mobeval.engines.reads import first_reads
from mobeval.errors import ConfigError, InputError
from mobeval.io.columns import renamed
from mobeval.io.inputs import as_source, check_input, fingerprint, is_uri
from mobeval.io.prefetch import AheadSource, ReadsAhead
from mobeval.io.sources import Source
from mobeval.io.writers import (
    STAGING,
    StagedResult,
    check_name,
    check_result_slot,
    output_lock,
    plain_name,
    write_text_atomic,
)
from mobeval.limits import BYTES_PER_VALUE, fitted_chunk_rows, memory_limits, shortfall
from mobeval.logs import ResultLog
from mobeval.options import checked_chunk_rows
from mobeval.progress import WRITING, Progress

DEFAULT_CITY = "default"


@dataclass
class Evaluation:
    """What one (city, model) evaluation produced.

    ``summary``: metric, value, n, std (:mod:`mobeval.tasks.summary`: the population sd of the
    per-unit values beside each mean, as ranx's ``return_std``). ``tables``: the per-unit
    tables by section ("per_unit", and "per_day" for trajectories) when neither written to
    ``out`` nor dropped (``per_unit=False``), and the sections of the whole result
    ("distributions" for trajectories' population histograms) when not written to ``out``;
    ``outputs``: section -> directory. ``resumed``: read back from an OUT where it was complete
    (a job's ``--resume``), not computed by this run; ``seconds`` are then the run's that wrote it.
    ``run``: which run of the model this is (a seed, a fold: ``model=<m>/run=<r>``), or None.
    ``partition``: the partition it lies under (``date=2026-11-27``: results over time,
    :mod:`mobeval.io.partitions`), or None.
    ``config``: the result's family (``type``), names and options as given, as the manifest
    records them (:func:`mobeval.api.result_config`); empty for a result read back from OUT
    (``resumed``: the manifest holds it).
    """

    city: str
    model: str
    summary: pl.DataFrame
    tables: dict[str, pl.DataFrame] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    inputs: dict[str, list] = field(default_factory=dict)
    seconds: float = 0.0
    resumed: bool = False
    run: str | None = None
    partition: str | None = None
    config: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        """The model's name, and its run after a slash when it has one (``gru/seed1``)."""
        return self.model if self.run is None else f"{self.model}/{self.run}"

    @property
    def per_unit(self) -> pl.DataFrame | None:
        """One row per unit (sample, uid, user); None when written to ``out`` or dropped
        (``per_unit=False``)."""
        return self.tables.get("per_unit")

    def value(self, metric: str) -> float:
        """The summary value of one metric (``result.value("ndcg@10")``)."""
        row = self.summary.filter(pl.col("metric") == metric)
        if row.height == 0:
            raise KeyError(f"no metric {metric!r} in this summary")
        return float(row["value"][0])

    def to_polars(self) -> pl.DataFrame:
        """The summary as one long table: ``city``, ``model``, ``run``, ``metric``, ``value``,
        ``n``, ``std`` (results concatenate: ``pl.concat([e.to_polars() for e in results])``)."""
        from mobeval.engines.view import long_summary

        return long_summary(self)

    def to_pandas(self):
        """:meth:`to_polars` as a pandas DataFrame (pandas is not a dependency: an ImportError
        saying what to install where it is missing)."""
        from mobeval.engines.view import pandas_summary

        return pandas_summary(self)

    def _repr_html_(self) -> str:
        """The summary as a compact HTML table: what Jupyter shows for a result."""
        from mobeval.engines.view import summary_html

        return summary_html(self)


@dataclass(frozen=True)
class Plan:
    """One keyed family's evaluation of one (truth, predictions) pair, engine-free.

    ``key``: the unit key (every row of a unit is scored together). ``inputs``: the input plan
    (``truth_columns`` / ``pred_columns`` read from each side, ``truth_select`` / ``pred_select``
    the Polars expressions that normalise them). ``job``: the partition job
    (:mod:`mobeval.engines.partition`), picklable; ``job.scorer()`` is a fresh scorer (``score(
    chunk, truth) -> {section: frame}``, ``summary()``, an exact ``accumulator``). ``sections``:
    each per-unit section's Polars schema (integer keys as Int64, as Spark hashes them).
    ``unique_truth``: one truth row per unit. ``input_order``: a unit's prediction rows must keep
    their input order (file, then position), which a shuffle does not. ``truth_order_first``: a
    sorted stream reads the truth's key columns first to check their order (a family whose
    chunks would report a unit without truth rows before a mis-sorted truth is found: next
    location, trajectories); False: the order is checked as the truth is read, and before an
    InputError is reported (recs: 0.16 s of a 100 M-row run's CPU and wall)."""

    key: list[str]
    inputs: object
    job: object
    sections: dict[str, dict]
    unique_truth: bool
    input_order: bool
    truth_order_first: bool = True


class Engine(Protocol):
    """What :mod:`mobeval.api` and :mod:`mobeval.jobs` ask of an engine."""

    name: str  # "local", "spark": the manifest's ``engine``
    files: object  # the manifest's file system: read_text, write_text, exists

    def source(self, data, *, names: tuple[str, ...] | None = None, columns=None, role="truth"):
        """An input: ``label``, ``schema()`` (Polars types), ``fingerprint()``; its columns read
        under our names as ``columns`` (a :class:`mobeval.io.columns.ColumnMap`) maps them for
        this input (``role``: ``truth`` or ``pred``)."""

    def run(self, plan: Plan, truth, predictions, where: dict) -> Evaluation:
        """Score a keyed plan; ``where``: out, city, model, chunk_rows, progress, per_unit."""

    def run_rows(self, job, where: dict) -> Evaluation:
        """Score a logits job (rows paired by position); ``where`` as :meth:`run`."""

    def run_all(self, calls) -> Iterator[Evaluation]:
        """The evaluations of ``calls`` (functions of an engine, each evaluating one result:
        ``call(engine=self)``), in order; Spark scores those that share a truth together."""

    def location(self, path):
        """An output folder as this engine names it (Spark: a URI)."""

    def lock(self, out):
        """A context manager holding ``out`` for one run (:func:`mobeval.io.writers.output_lock`
        where it can)."""

    def check_inputs(self, inputs: list[tuple[str, str, object]]) -> None:
        """Before a job runs: every (task type, entry, path) readable by this engine, else a
        ConfigError naming the entry."""

    def fingerprint(self, path) -> list[dict]:
        """The input's files (path, size, modification time): what ``--resume`` compares."""


def default_model_name(source) -> str:
    """The predictions' file (or directory) name without suffixes, made a plain name
    (:func:`mobeval.io.writers.plain_name`): ``deepmove.parquet`` -> deepmove, ``*.parquet`` ->
    all, ``my model.csv`` -> my_model, MoveSim's ``gene.data`` -> gene, ``bpr.run`` -> bpr.run
    (any input read from a file: a source read with renamed columns, a TREC run: its file's);
    ``model`` for an object without a file. A name chosen here never replaces another input's result
    (:func:`mobeval.engines.names.check_chosen_model`)."""
    source = getattr(source, "source", source)
    label = getattr(source, "label", source)
    if isinstance(label, str | os.PathLike) and not str(label).startswith("<"):
        name = Path(str(label).rstrip("/")).name
        for suffix in (".gz", ".parquet", ".pq", ".csv", ".txt", ".tsv", ".inter", ".npy", ".data"):
            name = name.removesuffix(suffix)
        return plain_name(name.replace("*", "all"))
    return "model"


def default_city_name(truth) -> str:
    """The city of a result given none: the name of the folder the truth lies in, made a plain
    name (:func:`mobeval.io.writers.plain_name`): ``data_samples/nextloc/tky/truth.parquet`` ->
    tky, ``ml-latest-small/ratings.csv`` -> ml-latest-small, ``s3://bucket/tky/*.parquet`` -> tky
    (a folder of parts: the folder it lies in); ``default`` for a Python object or a file at the
    root. A dataset's folder names its city or its corpus more often than the file does, whose
    name (truth, ratings, targets) is the role it plays."""
    from mobeval.io.remote import url_scheme

    label = getattr(truth, "label", truth)
    if not isinstance(label, str | os.PathLike) or str(label).startswith("<"):  # <DataFrame>
        return DEFAULT_CITY
    text = str(label).rstrip("/")
    if url_scheme(text):
        folder = PurePosixPath(text.partition("://")[2]).parent.name
    else:
        folder = Path(text).absolute().parent.name
    return plain_name(folder) if folder else DEFAULT_CITY


def result_sections(scorer) -> dict[str, pl.DataFrame]:
    """The sections a scorer computes once for the whole result, after its summary, from its
    merged fold (``result_sections()``, where the family has any: the trajectory family's
    ``distributions``); written beside the summary by every engine."""
    sections = getattr(scorer, "result_sections", None)
    return {} if sections is None else sections()


class _InMemory:
    """Collects per-unit parts in memory (the same interface as StagedResult)."""

    def __init__(self) -> None:
        self.parts: dict[str, list[pl.DataFrame]] = {}

    def add_part(self, section: str, frame: pl.DataFrame) -> None:
        self.parts.setdefault(section, []).append(frame)

    def tables(self) -> dict[str, pl.DataFrame]:
        return {section: pl.concat(frames) for section, frames in self.parts.items()}

    def discard(self) -> None:
        self.parts.clear()


class _Run:
    """One (city, model) result in the making on this machine: its sink (staged under ``out`` and
    committed, or kept in memory), its progress line and its clock. As a context manager it holds
    ``out``'s lock (:func:`mobeval.io.writers.output_lock`) and discards every part written when
    the body raises. City and model must be plain names. Without ``per_unit`` each chunk's
    per-unit parts are let go as they come (neither written nor kept: memory stays one chunk's,
    whatever the input's size); the summary alone is the result."""

    def __init__(self, out, names: tuple, total_rows, progress, per_unit: bool = True) -> None:
        """``names``: city, model, run and partition (:func:`mobeval.io.writers.result_name`)."""
        city, model, run, self.partition = names
        self.out = None if out is None else Path(out)
        self.per_unit = per_unit
        self.city = check_name(city, "city")
        self.model = check_name(model, "model")
        self.run = None if run is None else check_name(run, "run")
        #: Where the local engine puts its hash buckets: inside the staging area, which the next
        #: run on ``out`` empties if this one is killed (no ``out``: the system's temporary folder).
        self.temp_dir = None if self.out is None else self.out / STAGING
        self.started = time.perf_counter()
        self.total_rows = total_rows
        self.progress = progress
        self._held = ExitStack()

    def _new_sink(self) -> StagedResult | _InMemory:
        if self.out is None:
            return _InMemory()
        return StagedResult(self.out, *self.names)

    def restart(self) -> None:
        """Forget every part written so far (the engine starts over)."""
        self.sink.discard()
        self.sink = self._new_sink()

    def add(self, parts: dict[str, pl.DataFrame] | None) -> None:
        if not self.per_unit:
            return
        for section, frame in (parts or {}).items():
            self.sink.add_part(section, frame)

    def finish(self, summary: pl.DataFrame, inputs: dict[str, list], sections=None) -> Evaluation:
        """Commit (summary last) or collect every section, with the ``sections`` of the whole
        result (:func:`result_sections`); the result."""
        for section, frame in (sections or {}).items():
            self.sink.add_part(section, frame)
        if self.out is not None:
            self.meter.phase(WRITING)
            self.sink.add_part("summary", summary)
            outputs, tables = self.sink.commit(), {}
        else:
            outputs, tables = {}, self.sink.tables()
        return Evaluation(
            city=self.city,
            model=self.model,
            summary=summary,
            tables=tables,
            outputs=outputs,
            inputs=inputs,
            seconds=time.perf_counter() - self.started,
            run=self.run,
            partition=self.partition,
        )

    @property
    def names(self) -> tuple:
        return (self.city, self.model, self.run, self.partition)

    def __enter__(self) -> _Run:
        try:
            if self.out is not None:
                self._held.enter_context(output_lock(self.out))
                check_result_slot(self.out, *self.names)
            self.sink = self._new_sink()
            label = "/".join(n for n in (self.partition, *self.names[:3]) if n is not None)
            log = ResultLog.configured(*self.names[:3], self.out, self.partition)
            shown = False if log is not None else self.progress  # log lines instead of a bar
            self.meter = Progress(label, self.total_rows, enabled=shown, log=log)
        except BaseException:  # refused: the lock let go now, as no __exit__ will
            self._held.close()
            raise
        return self

    def __exit__(self, kind, error, traceback) -> None:
        try:
            if kind is not None:
                self.sink.discard()
            self.meter.close(succeeded=kind is None)
        finally:
            self._held.close()


class LocalFiles:
    """The local file system as the manifest uses it (the Spark engine passes Hadoop's)."""

    def read_text(self, path: str) -> str | None:
        return Path(path).read_text() if Path(path).exists() else None

    def write_text(self, path: str, text: str) -> None:
        write_text_atomic(text, Path(path))

    def exists(self, path: str) -> bool:
        return Path(path).exists()

    def data_files(self, path: str) -> list[tuple[str, int, float]]:
        """(path, size, mtime) of the files under the folder ``path``, sorted (as the Spark
        engine's Hadoop listing gives them)."""
        found = [(f, f.stat()) for f in Path(path).rglob("*") if f.is_file()]
        return sorted((str(f), status.st_size, status.st_mtime) for f, status in found)


def fitting() -> list:
    """This process's memory limits (:func:`mobeval.limits.memory_limits`), each checked to leave
    room for a run: a ConfigError naming the limit and what to raise it to, before any work."""
    limits = memory_limits()
    why = shortfall(limits)
    if why is not None:
        raise ConfigError(why)
    return limits


def fitted_logits_job(job, limits: list):
    """``job`` (a logits partition job) with its chunks fitted to ``limits``: a logits chunk
    costs :data:`~mobeval.limits.BYTES_PER_VALUE` a value (rows x classes), so its rows are the
    values a limit leaves divided by the classes (at least one row)."""
    if not limits:
        return job
    classes = max(1, job.shape()[1])
    values = fitted_chunk_rows(job.chunk_rows * classes, limits, BYTES_PER_VALUE)
    return replace(job, chunk_rows=max(1, min(job.chunk_rows, values // classes)))


class LocalEngine:
    """This process: both inputs streamed in chunks of whole units (sorted, or over hash buckets:
    :func:`mobeval.engines.local.stream_pairs`) through the plan's scorer."""

    name = "local"
    files = LocalFiles()

    def source(self, data, *, names: tuple[str, ...] | None = None, columns=None, role="truth"):
        return renamed(as_source(data, names=names), columns, role)

    @contextmanager
    def reading(self, truth, predictions, columns: tuple, key, where: dict, order_first=True):
        """``truth`` and ``predictions`` as :meth:`run` will read them, the first batches of a
        sorted stream decoding on a thread from now on (:func:`mobeval.engines.reads.first_reads`,
        :mod:`mobeval.io.prefetch`), while the run loads its kernels: ``columns``, the plan's
        (truth's, predictions'), ``order_first``, its ``truth_order_first``. The batches not read
        when the block ends are let go. Files on this machine only (an input at a URL waits on
        its network, each read under :func:`mobeval.io.remote.url_timeout`), and none under a
        memory limit (the run's chunks are fitted to it when it starts)."""
        sources = (getattr(s, "source", s) for s in (truth, predictions))
        local = all(isinstance(s, Source) and s.filesystem is None for s in sources)
        if not local or memory_limits():
            yield truth, predictions
            return
        chunk_rows = checked_chunk_rows(where["chunk_rows"])
        ahead = ReadsAhead(first_reads(truth, predictions, *columns, key, chunk_rows, order_first))
        try:
            yield AheadSource(truth, ahead), AheadSource(predictions, ahead)
        finally:
            ahead.close()

    def run(self, plan: Plan, truth, predictions, where: dict) -> Evaluation:
        """Stream both sources through a fresh scorer; stage, then commit, every section. If the
        inputs turn out not to be sorted, a new scorer starts over on hash buckets."""
        from mobeval.engines.local import stream_pairs  # its kernels: after the inputs' checks

        model = where["model"] or default_model_name(predictions)
        city = where["city"] or default_city_name(truth)
        chunk_rows = fitted_chunk_rows(checked_chunk_rows(where["chunk_rows"]), fitting())
        total = predictions.row_count_estimate()
        names = (city, model, where["run"], where["partition"])
        check_chosen_model(where, names, predictions.label, predictions.fingerprint)
        with _Run(where["out"], names, total, where["progress"], where["per_unit"]) as run:
            scorer = plan.job.scorer()
            rows = {"truth": 0, "predictions": 0}
            pairs = stream_pairs(
                truth,
                predictions,
                plan.inputs,
                plan.key,
                chunk_rows=chunk_rows,
                progress=run.meter,
                unique_truth=plan.unique_truth,
                truth_order_first=plan.truth_order_first,
                temp_dir=run.temp_dir,
            )
            try:
                for item in pairs:
                    if not isinstance(item, str):
                        chunk, truth_rows = item
                        try:
                            parts = scorer.score(chunk, truth_rows)
                        except InputError as error:  # raised again, or "restart": mis-sorted truth
                            item = pairs.throw(error)
                    if isinstance(item, str):  # not sorted: start again over hash buckets
                        run.restart()
                        scorer, rows = plan.job.scorer(), {"truth": 0, "predictions": 0}
                        continue
                    rows["predictions"] += chunk.height
                    rows["truth"] += truth_rows.height
                    run.add(parts)
            finally:  # its reading threads stop, even while an error's traceback holds this frame
                pairs.close()
            for side, source in (("truth", truth), ("predictions", predictions)):
                if rows[side] == 0:
                    raise InputError("holds no rows: nothing to evaluate", path=source.label)
            summary = scorer.summary()
            from mobeval.tasks.summary import require_scored  # the scorer's: after the first read

            require_scored(
                summary,
                counts=where["counts"],
                units=where["units"],
                truth=truth.label,
                predictions=predictions.label,
                column=plan.key[0],
            )
            inputs = {"truth": truth.fingerprint(), "predictions": predictions.fingerprint()}
            return run.finish(summary, inputs, result_sections(scorer))

    def run_all(self, calls) -> Iterator[Evaluation]:
        """One call after the other."""
        for call in calls:
            yield call(engine=self)

    def run_rows(self, job, where: dict) -> Evaluation:
        """Every logits chunk, in row order, through one accumulator."""
        model = where["model"] or default_model_name(job.logits)
        city = where["city"] or default_city_name(job.truth_file)
        label = str(job.logits) if isinstance(job.logits, str | os.PathLike) else "<array>"
        names = (city, model, where["run"], where["partition"])
        check_chosen_model(where, names, label, lambda: job.fingerprints()["predictions"])
        job = fitted_logits_job(job, fitting())
        with _Run(where["out"], names, None, where["progress"], where["per_unit"]) as run:
            accumulator = job.accumulator()
            for n_rows, frame in job.chunks(accumulator):
                run.add({"per_unit": frame})
                run.meter.advance(n_rows)
            summary = accumulator.finalize(percent=job.percent)
            from mobeval.io.logits import input_name  # the logits job's: after the first read
            from mobeval.tasks.summary import require_scored

            require_scored(
                summary,
                counts=where["counts"],
                units=where["units"],
                truth=input_name(job.truth_file),
                predictions=input_name(job.logits),
                column="target",
            )
            return run.finish(summary, job.fingerprints())

    def location(self, path) -> Path:
        return Path(path)

    def lock(self, out):
        return output_lock(out)

    def check_inputs(self, inputs) -> None:
        """Every URL of a job looked for as it will be read (through fsspec:
        :func:`mobeval.io.inputs.check_input`; the local paths were ``load_job``'s to check). A URI
        that fsspec cannot open (Hadoop's ``dbfs:/``, a scheme whose package is missing) is
        refused with the hint that the Spark engine reads it."""
        from mobeval.io.remote import filesystem, url_scheme

        for kind, where, path in inputs:
            if not is_uri(path):
                continue
            try:
                if url_scheme(str(path)) is None:
                    raise InputError("a path on another file system", path=path)
                filesystem(str(path))
            except InputError as error:
                raise ConfigError(
                    f"{where}: {error}; the local engine cannot read it (run the job with "
                    "--engine spark)"
                ) from None
            check_input(kind, path, where)

    def fingerprint(self, path) -> list[dict]:
        return fingerprint(path)


__all__ = [
    "DEFAULT_CITY",
    "Engine",
    "Evaluation",
    "LocalEngine",
    "LocalFiles",
    "Plan",
    "default_city_name",
    "default_model_name",
]
