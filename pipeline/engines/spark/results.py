"""From scored partitions to results: the sections of a group's results written by Spark (or
collected) in the pass that scores them, each result's folds merged on the driver into its
scorer (exact sums), its summary computed, and its files committed under OUT (staged, then
replacing the result OUT holds whole: :func:`mobeval.io.writers.commit_result`)
(:func:`finished_group`); and the progress line fed by the folds as they reach the driver
(:func:`rows_scored`)."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import threading
import time

import polars as pl
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from mobeval.engines.base import Evaluation, result_sections
from mobeval.engines.partition import MODEL, merged_folds, rebuild_error
from mobeval.engines.spark.failures import spark_error
from mobeval.engines.spark.files import Files, as_uri
from mobeval.engines.spark.hashes import attach_counter, hash_rows
from mobeval.engines.spark.session import described
from mobeval.errors import InputError
from mobeval.io.writers import STAGING, commit_result, partition_path, undo_interrupted_commits
from mobeval.progress import Progress
from mobeval.tasks.summary import require_scored

SUMMARY = "summary"


def _merged(folds: list, index: int, labels: dict[str, str]):
    """Result ``index``'s folds from every partition (:func:`mobeval.engines.partition.
    merged_folds`) merged into one accumulator, one partition's at a time; the first input
    error raised (the smallest unit key's, as the local engine streams units in key order), and
    an input that gave no row named."""
    rows = {"truth": 0, "predictions": 0}
    accumulator, errors = None, []
    for partition in merged_folds(folds):
        state = partition[index]
        if state["error"] is not None:
            errors.append(state["error"])
        elif accumulator is None:
            accumulator = state["accumulator"]
        else:
            accumulator.merge(state["accumulator"])
        for side, count in state["rows"].items():
            rows[side] += count
        del partition, state  # merged: let it go before the next partition's is unpickled
    if errors:
        with contextlib.suppress(TypeError):  # keys with nulls: any of the errors will do
            errors.sort(key=lambda item: (item[0] is None, item[0] or ()))
        raise rebuild_error(errors[0][1])
    for side in ("truth", "predictions"):
        if rows[side] == 0:
            raise InputError("holds no rows: nothing to evaluate", path=labels[side])
    return accumulator


@dataclasses.dataclass
class Result:
    """One (city, model) of a group: its scorer (the driver's: folds merged into it), the labels
    and fingerprints of its inputs, its model name and run (None: a model without runs), its
    family's count rows and the column that names its units (for
    :func:`mobeval.tasks.summary.require_scored`)."""

    scorer: object
    labels: dict[str, str]
    fingerprints: dict[str, list]
    model: str
    run: str | None = None
    counts: tuple[str, ...] = ()
    units: str | None = None
    column: str | None = None


def _staged_section(
    files: Files, staging: str, section: str, index: int, schema: dict | None
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


def finished_group(
    spark: SparkSession,
    scored: DataFrame,
    folds,
    results: list[Result],
    sections: dict[str, dict],
    *,
    out,
    city: str,
    started: float,
    partition: str | None = None,
):
    """Write (or collect) the sections of every result of a group, which runs the scoring (its
    folds arrive in ``folds``); then, result by result, in order: merge its folds, compute its
    summary, commit it (the summary written by the driver, every section renamed into place,
    the summary last) and yield its :class:`Evaluation`. A result that fails (bad input) raises
    there: the results before it are committed, those after it are not (as a job run one result
    at a time stops at the first failure); the group's staging area is removed whatever
    happens. ``partition``: the one every result lies under (``date=2026-11-27``), or None."""
    files = Files(spark)
    root = None if out is None else as_uri(out).rstrip("/")
    staging = None if out is None else f"{root}/{STAGING}/city={city}/model={results[0].model}"
    labels = results[0].labels
    tables, hashes = {}, hash_rows(scored)
    if staging is not None:  # a killed run's (OUT on HDFS, object stores); a journal refused
        undo_interrupted_commits(files, root)  # leaves the staging area as it is
    try:
        if staging is not None:
            files.remove_staged(staging, root)
        named = f"{city}/" + "+".join("/".join(filter(None, (r.model, r.run))) for r in results)
        try:
            if not sections:  # print-only (per_unit=False): scored into no sink
                with described(spark, f"{named}: score (print only)"):
                    scored.write.format("noop").mode("overwrite").save()
            for index, section in enumerate(sections):  # the first scores, the others reuse it
                part = scored.where(F.col(section).isNotNull()).select(MODEL, f"{section}.*")
                phase = (
                    f"{'score, ' if index == 0 else ''}{'collect' if staging is None else 'write'}"
                )
                with described(spark, f"{named}: {phase} {section}"):
                    if staging is None:
                        tables[section] = pl.from_arrow(part.toArrow())
                    else:
                        part.write.mode("overwrite").partitionBy(MODEL).parquet(
                            f"{staging}/{section}"
                        )
        except Exception as error:  # noqa: BLE001 - an executor's failure: explained if known
            path = f"{labels['truth']} / {', '.join(r.labels['predictions'] for r in results)}"
            doing = "Spark could not read, score or write the results"
            raise spark_error(error, doing, path=path) from None
        for index, result in enumerate(results):
            result.scorer.accumulator = _merged(folds.value, index, result.labels)
            if hashes is not None:  # the totals the summary reads, counted in one Spark job
                counter = attach_counter(result.scorer.accumulator, hashes, index)
                result.scorer.summary()
                counter.count()
            summary = result.scorer.summary()
            require_scored(
                summary,
                counts=result.counts,
                units=result.units,
                truth=result.labels["truth"],
                predictions=result.labels["predictions"],
                column=result.column,
            )
            whole = result_sections(result.scorer)
            own, outputs = {}, {}
            if staging is None:
                own = {
                    section: table.filter(pl.col(MODEL) == index).drop(MODEL)
                    for section, table in tables.items()
                } | whole
            else:
                for section, frame in (whole | {SUMMARY: summary}).items():
                    buffer = io.BytesIO()
                    frame.write_parquet(buffer)
                    at = f"{staging}/{section}/{MODEL}={index}/part-00000.parquet"
                    files.write_bytes(at, buffer.getvalue())
                staged = {
                    section: _staged_section(files, staging, section, index, sections.get(section))
                    for section in [*sections, *whole, SUMMARY]
                }
                for section in staged:
                    files.keep_data_files(staged[section], root)
                names = (city, result.model, result.run, partition)
                commit_result(files, root, names, staged, staging)
                outputs = {
                    section: f"{root}/{partition_path(section, *names)}" for section in staged
                }
            yield Evaluation(
                city=city,
                model=result.model,
                run=result.run,
                partition=partition,
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
def rows_scored(folds, meter: Progress, every: float = 0.5):
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
    succeeded = False
    try:
        yield
        succeeded = True
    finally:
        done.set()
        watcher.join()
        catch_up()
        meter.close(succeeded)
