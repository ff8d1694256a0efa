"""The Python API (what a notebook uses); the CLI is a thin shell over it.

>>> from mobeval.api import evaluate_nextloc
>>> result = evaluate_nextloc("truth.parquet", "deepmove.parquet", k=[1, 5], convention="libcity")
>>> result.summary                      # Polars DataFrame: metric, value, n
>>> result.per_unit                     # one row per sample (when not written to ``out``)
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from mobeval import __version__
from mobeval.engines.local import DEFAULT_CHUNK_ROWS, checked_chunk_rows, stream_pairs
from mobeval.errors import ConfigError, InputError, MobevalError
from mobeval.families import RECS, resolved_options, with_options
from mobeval.io.sources import Source, as_source, fingerprint
from mobeval.io.writers import (
    STAGING,
    StagedResult,
    check_name,
    output_lock,
    partition_path,
    plain_name,
    write_text_atomic,
)
from mobeval.metrics.recs import parse_recs_metrics
from mobeval.options import option_values
from mobeval.progress import Progress
from mobeval.tasks.logits import (
    LogitsAccumulator,
    is_targets_column,
    iter_logits,
    parse_logits_metrics,
    rows_per_chunk,
)
from mobeval.tasks.nextloc import NextlocScorer, nextloc_spec, plan_inputs
from mobeval.tasks.recs import RecsPlan, RecsScorer, rec_columns
from mobeval.tasks.trajectory import COLUMNS as TRAJECTORY_COLUMNS
from mobeval.tasks.trajectory import TrajectoryPlan, TrajectoryScorer, checked_convention
from mobeval.tasks.trajectory import check_schemas as check_trajectory_schemas

DEFAULT_CITY = "default"


@dataclass
class Evaluation:
    """What one (city, model) evaluation produced.

    ``summary``: metric, value, n. ``tables``: the per-unit tables by section ("per_unit", and
    "per_day" for trajectories) when not written to ``out``; ``outputs``: section -> directory.
    """

    city: str
    model: str
    summary: pl.DataFrame
    tables: dict[str, pl.DataFrame] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    inputs: dict[str, list] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def per_unit(self) -> pl.DataFrame | None:
        """One row per unit (sample, uid, user); None when written to ``out``."""
        return self.tables.get("per_unit")

    def value(self, metric: str) -> float:
        """The summary value of one metric (``result.value("ndcg@10")``)."""
        row = self.summary.filter(pl.col("metric") == metric)
        if row.height == 0:
            raise KeyError(f"no metric {metric!r} in this summary")
        return float(row["value"][0])


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


def default_model_name(source) -> str:
    """The predictions' file (or directory) name without suffixes, made a plain name
    (:func:`mobeval.io.writers.plain_name`): ``deepmove.parquet`` -> deepmove, ``*.parquet`` ->
    all, ``my model.csv`` -> my_model."""
    if isinstance(source, Source | str | os.PathLike):
        name = Path(str(getattr(source, "label", source)).rstrip("/")).name
        for suffix in (".gz", ".parquet", ".pq", ".csv", ".txt", ".npy"):
            name = name.removesuffix(suffix)
        return plain_name(name.replace("*", "all"))
    return "model"


class _Run:
    """One (city, model) result in the making: its sink (staged under ``out`` and committed, or kept
    in memory), its progress line and its clock. As a context manager it holds ``out``'s lock
    (:func:`mobeval.io.writers.output_lock`) and discards every part written when the body
    raises. City and model must be plain names."""

    def __init__(self, out, city: str | None, model: str, total_rows, progress) -> None:
        self.out = None if out is None else Path(out)
        self.city = check_name(city or DEFAULT_CITY, "city")
        self.model = check_name(model, "model")
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
        return StagedResult(self.out, self.city, self.model)

    def restart(self) -> None:
        """Forget every part written so far (the engine starts over)."""
        self.sink.discard()
        self.sink = self._new_sink()

    def add(self, parts: dict[str, pl.DataFrame] | None) -> None:
        for section, frame in (parts or {}).items():
            self.sink.add_part(section, frame)

    def finish(self, summary: pl.DataFrame, inputs: dict[str, list]) -> Evaluation:
        """Commit (summary last) or collect every section; the result."""
        if self.out is not None:
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
        )

    def __enter__(self) -> _Run:
        if self.out is not None:
            self._held.enter_context(output_lock(self.out))
        self.sink = self._new_sink()
        self.meter = Progress(f"{self.city}/{self.model}", self.total_rows, enabled=self.progress)
        return self

    def __exit__(self, kind, error, traceback) -> None:
        try:
            if kind is not None:
                self.sink.discard()
            self.meter.close()
        finally:
            self._held.close()


def _require_columns(source, columns) -> dict[str, pl.DataType]:
    """The source's schema, after checking that it has every one of ``columns``."""
    schema = source.schema()
    missing = [c for c in columns if c not in schema]
    if missing:
        raise InputError(
            f"missing column; columns present: {list(schema)}", path=source.label, column=missing[0]
        )
    return schema


def _require_rows(*sources: tuple[object, str]) -> None:
    """Each (source, what it is) holds a row, checked before any schema check: an empty truth, or
    a header-only CSV (whose columns have no type), is named as such."""
    for source, role in sources:
        if not source.has_rows():
            raise InputError(
                f"{role} empty: the file has no rows, nothing to evaluate", path=source.label
            )


def _evaluate(
    make_scorer,
    truth_source,
    pred_source,
    plan,
    key: list[str],
    *,
    unique_truth: bool,
    out,
    city: str | None,
    model: str | None,
    chunk_rows: int,
    progress: bool | None,
) -> Evaluation:
    """Stream both sources through a fresh scorer; stage, then commit, every output section.

    ``make_scorer()`` returns an object with ``score(chunk, truth) -> {section: frame} | None`` and
    ``summary() -> frame``. If the inputs turn out not to be sorted, a new scorer starts over.
    """
    model = model or default_model_name(pred_source)
    chunk_rows = checked_chunk_rows(chunk_rows)
    with _Run(out, city, model, pred_source.row_count_estimate(), progress) as run:
        scorer = make_scorer()
        rows = {"truth": 0, "predictions": 0}
        for item in stream_pairs(
            truth_source,
            pred_source,
            plan,
            key,
            chunk_rows=chunk_rows,
            progress=run.meter,
            unique_truth=unique_truth,
            temp_dir=run.temp_dir,
        ):
            if isinstance(item, str):  # not sorted: start again over hash buckets
                run.restart()
                scorer, rows = make_scorer(), {"truth": 0, "predictions": 0}
                continue
            chunk, truth_rows = item
            rows["predictions"] += chunk.height
            rows["truth"] += truth_rows.height
            run.add(scorer.score(chunk, truth_rows))
        for side, source in (("truth", truth_source), ("predictions", pred_source)):
            if rows[side] == 0:
                raise InputError("holds no rows: nothing to evaluate", path=source.label)
        inputs = {"truth": truth_source.fingerprint(), "predictions": pred_source.fingerprint()}
        return run.finish(scorer.summary(), inputs)


@with_options("nextloc")
def evaluate_nextloc(
    truth,
    predictions,
    *,
    out: str | Path | None = None,
    city: str | None = None,
    model: str | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    progress: bool | None = None,
    **options,
) -> Evaluation:
    """Score next-location predictions against the true next locations.

    ``truth`` and ``predictions`` are paths (Parquet file, directory or glob; CSV) or Polars
    DataFrames. With ``out`` the per-sample table and the summary are written under ``out`` (see
    :mod:`mobeval.io.writers`); without it both come back in memory.
    Options (``mobeval.families.NEXTLOC``: ``key``, ``k``, ``metrics``, ``convention``...) are
    documented in :class:`mobeval.tasks.nextloc.NextlocSpec` and
    :class:`mobeval.metrics.nextloc.NextlocConvention`; ``ties`` and ``duplicates`` (``"error"``
    or ``"drop"``: one entry per location, as a dict-based run holds it) override the preset's.
    """
    spec = nextloc_spec(**option_values("nextloc", options))
    truth_source, pred_source = as_source(truth), as_source(predictions)
    _require_rows((truth_source, "the truth is"), (pred_source, "the predictions are"))
    plan = plan_inputs(
        truth_source.schema(), truth_source.label, pred_source.schema(), pred_source.label, spec
    )
    return _evaluate(
        lambda: NextlocScorer(spec, plan, pred_source.label, truth_source.label),
        truth_source,
        pred_source,
        plan,
        list(spec.key),
        unique_truth=True,
        out=out,
        city=city,
        model=model,
        chunk_rows=chunk_rows,
        progress=progress,
    )


@with_options("trajectory")
def evaluate_trajectory(
    reference,
    generated,
    *,
    out: str | Path | None = None,
    city: str | None = None,
    model: str | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    progress: bool | None = None,
    **options,
) -> Evaluation:
    """GEO-BLEU and DTW per uid and day of generated trajectories (uid, d, t, x, y), city = mean
    over uids, exactly as yahoojapan/geobleu computes them (see :mod:`mobeval.tasks.trajectory`).

    ``reference`` and ``generated`` are paths (Parquet, CSV or the challenge's CSV.gz with or
    without header) or Polars DataFrames; rows are paired by (uid, d, t) in any order. Sections:
    ``per_unit`` (uid, geobleu, dtw, n_days, n_steps), ``per_day`` (uid, d, n_steps, geobleu, dtw),
    ``summary``.
    ``matching="optimal"`` swaps the reference's greedy n-gram matching for an optimal one.
    ``exp="numpy"`` takes GEO-BLEU's exp and log from NumPy on this machine, as the reference
    does (default ``"libm"``, the C library's: see :class:`mobeval.metrics.trajectory.
    TrajectoryConvention`).
    """
    values = option_values("trajectory", options)
    chosen = checked_convention(**values)
    reference_source = as_source(reference, names=TRAJECTORY_COLUMNS)
    generated_source = as_source(generated, names=TRAJECTORY_COLUMNS)
    _require_rows(
        (reference_source, "the reference is"), (generated_source, "the generated trajectories are")
    )
    check_trajectory_schemas(
        _require_columns(reference_source, TRAJECTORY_COLUMNS),
        reference_source.label,
        _require_columns(generated_source, TRAJECTORY_COLUMNS),
        generated_source.label,
    )

    def make_scorer():
        return TrajectoryScorer(
            convention=chosen,
            metrics=tuple(values["metrics"]),
            on_mismatch=values["on_mismatch"],
            out_of_grid=values["out_of_grid"],
            path_generated=generated_source.label,
            path_reference=reference_source.label,
        )

    return _evaluate(
        make_scorer,
        reference_source,
        generated_source,
        TrajectoryPlan(),
        ["uid"],
        unique_truth=False,
        out=out,
        city=city,
        model=model,
        chunk_rows=chunk_rows,
        progress=progress,
    )


@with_options("recs")
def evaluate_recs(
    ratings,
    recs,
    *,
    out: str | Path | None = None,
    city: str | None = None,
    model: str | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    progress: bool | None = None,
    **options,
) -> Evaluation:
    """Score ranked recommendation lists against rated ground truth, user by user, as the
    ``convention``'s reference system does (see :mod:`mobeval.metrics.recs`).

    ``ratings``: ``user_id`` (the ``key`` column), ``item_id``, ``rating``, several rows per user.
    ``recs``: ``user_id``, ``item_id`` and, as the convention needs them, ``rank`` / ``score``.
    Paths (Parquet file, directory or glob; CSV) or Polars DataFrames. Under ``"clayrs"`` and
    ``"relison"`` a user's list is its rows in file order, which streaming keeps. ``metrics``
    without ``@k`` expand over ``cutoffs``. ``**options``: fields of
    :class:`mobeval.metrics.recs.RecsConvention` overriding the preset (``relevant_threshold=4``,
    ``averaging="micro"``...). Sections: ``per_unit`` (the key, one column per metric), ``summary``
    (the system values, then ``users``).
    """
    values = option_values("recs", options)
    metrics, cutoffs, key = values["metrics"], values["cutoffs"], values["key"]
    conv = RECS.convention(values)
    columns = rec_columns(conv, parse_recs_metrics(metrics, cutoffs, beta=conv.beta))
    ratings_source, recs_source = as_source(ratings), as_source(recs)
    _require_rows((ratings_source, "the ratings are"), (recs_source, "the lists are"))
    ratings_schema = _require_columns(ratings_source, [key, "item_id", "rating"])
    recs_schema = _require_columns(recs_source, [key, *columns[1:]])

    def make_scorer():
        return RecsScorer(
            metrics=[metrics] if isinstance(metrics, str) else list(metrics),
            cutoffs=cutoffs,
            convention=conv,
            key=key,
            path_recs=recs_source.label,
            path_ratings=ratings_source.label,
        )

    return _evaluate(
        make_scorer,
        ratings_source,
        recs_source,
        RecsPlan.build(key, columns, recs_schema, ratings_schema),
        [key],
        unique_truth=False,
        out=out,
        city=city,
        model=model,
        chunk_rows=chunk_rows,
        progress=progress,
    )


@with_options("logits")
def evaluate_logits(
    logits,
    targets,
    *,
    out: str | Path | None = None,
    city: str | None = None,
    model: str | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    progress: bool | None = None,
    **options,
) -> Evaluation:
    """Paper-style scores of a logits matrix ``[N, C]`` against integer targets ``[N]``
    (:mod:`mobeval.tasks.logits`): ``acc@k``, ``mrr``, ``ndcg@k``, ``f1_weighted``, ``f1_macro``,
    ``cross_entropy``.

    ``logits``: a 2-D float array, a ``.npy`` file (memory-mapped) or a Parquet file whose
    ``logits_column`` is a list of floats. ``targets``: an integer array, a ``.npy`` file, a Parquet
    file (its ``targets_column``) or the name of a column of the logits' Parquet file. Rows are
    paired by position. ``chunk_rows`` is the memory budget in values, as the other tasks' rows:
    a chunk holds ``chunk_rows // C`` logits rows. ``convention``: ``mobeval`` or ``sklearn`` (each
    metric family's tie policy); ``ties`` overrides it. Sections: ``per_unit`` (row, target, rank,
    top1, each row's values), ``summary``.
    """
    values = option_values("logits", options)
    accumulator = LogitsAccumulator(
        parse_logits_metrics(values["metrics"], values["k"]),
        ties=values["ties"],
        convention=values["convention"],
        ignore_target=values["ignore_target"],
    )
    columns = {name: values[name] for name in ("logits_column", "targets_column")}
    inputs = {
        "truth": [{"column": targets}] if is_targets_column(targets) else fingerprint(targets),
        "predictions": fingerprint(logits),
    }
    rows = rows_per_chunk(logits, targets, checked_chunk_rows(chunk_rows), **columns)
    with _Run(out, city, model or default_model_name(logits), None, progress) as run:
        parts = iter_logits(
            accumulator, logits, targets, chunk_rows=rows, per_sample=True, **columns
        )
        for n_rows, frame in parts:
            run.add({"per_unit": frame})
            run.meter.advance(n_rows)
        return run.finish(accumulator.finalize(percent=values["percent"]), inputs)


def package_versions() -> dict[str, str]:
    import numba
    import numpy
    import pyarrow

    return {
        "mobeval": __version__,
        "python": platform.python_version(),
        "numba": numba.__version__,
        "numpy": numpy.__version__,
        "polars": pl.__version__,
        "pyarrow": pyarrow.__version__,
        **({"pyspark": sys.modules["pyspark"].__version__} if "pyspark" in sys.modules else {}),
    }


def config_hash(config: dict, inputs: dict) -> str:
    """A hash of a task's configuration and its inputs' fingerprints (what --resume compares)."""
    text = json.dumps({"config": config, "inputs": inputs}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class LocalFiles:
    """The local file system as the manifest uses it (the Spark engine passes Hadoop's instead)."""

    def read_text(self, path: str) -> str | None:
        return Path(path).read_text() if Path(path).exists() else None

    def write_text(self, path: str, text: str) -> None:
        write_text_atomic(text, Path(path))

    def exists(self, path: str) -> bool:
        return Path(path).exists()


class Manifest:
    """``OUT/manifest.json``: the job, package versions, input fingerprints and timings per
    result. ``files`` reads and writes it (local files by default; Hadoop's for Spark).

    Made while holding OUT's lock, before anything is computed: an unreadable manifest stops the
    run here. Output directories are recorded relative to OUT and looked for under the current
    OUT, so ``--resume`` works on a copy of OUT moved elsewhere (older manifests, which stored
    absolute paths, are read the same way: only their sections count)."""

    def __init__(self, out, job: dict, *, files=None, engine: str = "local") -> None:
        self.files = files or LocalFiles()
        self.out = str(out).rstrip("/")
        self.path = f"{self.out}/manifest.json"
        self.results: dict[str, dict] = self._read()
        self.job = job
        self.engine = engine

    def _read(self) -> dict[str, dict]:
        try:
            text = self.files.read_text(self.path)
            results = json.loads(text).get("results", {}) if text is not None else {}
            if not isinstance(results, dict):
                raise ValueError("'results' is not an object")
        except (ValueError, AttributeError, OSError) as error:
            raise ConfigError(
                f"{self.path}: not a readable mobeval manifest ({_first_line(error)}); move it "
                "aside or delete it (without it, --resume recomputes every result)"
            ) from None
        return results

    def _output_dir(self, section: str, city: str, model: str) -> str:
        return f"{self.out}/{partition_path(section, city, model)}"

    def record(self, evaluation: Evaluation, config: dict, task: str) -> None:
        """Mark one result complete (its directories must be in place), merged into the
        manifest as it is on disk now."""
        city, model = evaluation.city, evaluation.model
        for section in evaluation.outputs:
            if not self.files.exists(self._output_dir(section, city, model)):
                raise MobevalError(
                    f"{self._output_dir(section, city, model)}: missing after the commit; "
                    f"city={city}/model={model} is not marked complete"
                )
        self.results = self._read()
        self.results[f"city={city}/model={model}"] = {
            "task": task,
            "engine": self.engine,
            "status": "complete",
            "config": config,
            "resolved": _resolved_options(task, config),
            "config_hash": config_hash(config, evaluation.inputs),
            "inputs": evaluation.inputs,
            "outputs": {s: partition_path(s, city, model) for s in evaluation.outputs},
            "seconds": round(evaluation.seconds, 3),
            "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        self.save()

    def is_complete(self, city: str, model: str, config: dict, inputs: dict) -> bool:
        """Whether the result is recorded complete for this config and these inputs, and every
        one of its section directories exists under this OUT."""
        entry = self.results.get(f"city={city}/model={model}")
        return bool(
            entry
            and entry.get("status") == "complete"
            and entry.get("config_hash") == config_hash(config, inputs)
            and entry.get("outputs")
            and all(
                self.files.exists(self._output_dir(section, city, model))
                for section in entry["outputs"]
            )
        )

    def save(self) -> None:
        document = {"job": self.job, "versions": package_versions(), "results": self.results}
        self.files.write_text(self.path, json.dumps(document, indent=2, default=str) + "\n")


def _resolved_options(task: str, config: dict) -> dict | None:
    """Every option as the run used it, next to ``config`` (what was typed): the defaults, the
    preset's fields spelled out (:func:`mobeval.families.resolved_options`), for compare and the
    report; None if it cannot be told (never stops a recorded result)."""
    try:
        return resolved_options(task, config)
    except Exception:  # noqa: BLE001 - informative only; the result itself is complete
        return None


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0][:200] if lines else type(error).__name__


__all__ = [
    "Evaluation",
    "Manifest",
    "evaluate_logits",
    "evaluate_nextloc",
    "evaluate_recs",
    "evaluate_trajectory",
]
