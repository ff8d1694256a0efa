"""The Python API (what a notebook uses); the CLI is a thin shell over it.

>>> from pipeline.api import evaluate_nextloc
>>> result = evaluate_nextloc("truth.parquet", "deepmove.parquet", k=[1, 5, 10], convention="libcity")
>>> result.summary                      # Polars DataFrame: metric, value, n
>>> result.per_unit                     # one row per sample (when not written to ``out``)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from pipeline import __version__
from pipeline.engines.local import DEFAULT_CHUNK_ROWS, stream_pairs
from pipeline.errors import ConfigError, InputError
from pipeline.io.sources import Source, as_source
from pipeline.io.writers import StagedResult, write_json_atomic
from pipeline.progress import Progress
from pipeline.metrics.trajectory import resolve as resolve_trajectory_convention
from pipeline.tasks.nextloc import NextlocScorer, NextlocSpec, plan_inputs
from pipeline.tasks.trajectory import COLUMNS as TRAJECTORY_COLUMNS
from pipeline.tasks.trajectory import METRICS as TRAJECTORY_METRICS
from pipeline.tasks.trajectory import TrajectoryPlan, TrajectoryScorer

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
    """The predictions' file (or directory) name without suffixes: ``deepmove.parquet`` -> deepmove."""
    if isinstance(source, Source):
        name = Path(source.label.rstrip("/")).name
        for suffix in (".gz", ".parquet", ".pq", ".csv", ".txt"):
            name = name.removesuffix(suffix)
        return name.replace("*", "all") or "model"
    return "model"


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
    city = city or DEFAULT_CITY
    model = model or default_model_name(pred_source)
    started = time.perf_counter()
    new_sink = (lambda: StagedResult(Path(out), city, model)) if out is not None else _InMemory
    sink = new_sink()
    meter = Progress(f"{city}/{model}", pred_source.row_count_estimate(), enabled=progress)
    try:
        scorer = make_scorer()
        rows = {"truth": 0, "predictions": 0}
        for item in stream_pairs(
            truth_source,
            pred_source,
            plan,
            key,
            chunk_rows=chunk_rows,
            progress=meter,
            unique_truth=unique_truth,
        ):
            if isinstance(item, str):  # not sorted: start again over hash buckets
                sink.discard()
                sink, scorer, rows = new_sink(), make_scorer(), {"truth": 0, "predictions": 0}
                continue
            chunk, truth_rows = item
            rows["predictions"] += chunk.height
            rows["truth"] += truth_rows.height
            for section, frame in (scorer.score(chunk, truth_rows) or {}).items():
                sink.add_part(section, frame)
        for side, source in (("truth", truth_source), ("predictions", pred_source)):
            if rows[side] == 0:
                raise InputError("holds no rows: nothing to evaluate", path=source.label)
        summary = scorer.summary()
        if out is not None:
            sink.add_part("summary", summary)
            outputs, tables = sink.commit(), {}
        else:
            outputs, tables = {}, sink.tables()
    except BaseException:
        sink.discard()
        raise
    finally:
        meter.close()
    return Evaluation(
        city=city,
        model=model,
        summary=summary,
        tables=tables,
        outputs=outputs,
        inputs={"truth": truth_source.fingerprint(), "predictions": pred_source.fingerprint()},
        seconds=time.perf_counter() - started,
    )


def evaluate_nextloc(
    truth,
    predictions,
    *,
    key: str | list[str] = "sample_id",
    k: list[int] | tuple[int, ...] = (1, 5, 10),
    metrics: list[str] | None = None,
    convention: str = "mobeval",
    ties: str | None = None,
    columns: dict[str, str] | None = None,
    order_by: str = "auto",
    unmatched: str = "error",
    out: str | Path | None = None,
    city: str | None = None,
    model: str | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    progress: bool | None = None,
) -> Evaluation:
    """Score next-location predictions against the true next locations.

    ``truth`` and ``predictions`` are paths (Parquet file, directory or glob; CSV) or Polars DataFrames.
    With ``out`` the per-sample table and the summary are written under ``out`` (see
    :mod:`pipeline.io.writers`); without it both come back in memory.
    Options are documented in :class:`pipeline.tasks.nextloc.NextlocSpec` and
    :class:`pipeline.metrics.nextloc.NextlocConvention`.
    """
    spec = NextlocSpec(
        key=(key,) if isinstance(key, str) else tuple(key),
        k=(k,) if isinstance(k, int) else tuple(k),
        metrics=None if metrics is None else tuple(metrics),
        convention=convention,
        ties=ties,
        columns=dict(columns or {}),
        order_by=order_by,
        unmatched=unmatched,
    )
    spec.metric_columns  # noqa: B018 - validates metric names and k before any reading
    truth_source, pred_source = as_source(truth), as_source(predictions)
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


def evaluate_trajectory(
    reference,
    generated,
    *,
    metrics: list[str] | tuple[str, ...] = ("geobleu", "dtw"),
    convention: str = "humob2025",
    matching: str | None = None,
    on_mismatch: str = "error",
    out_of_grid: str = "error",
    out: str | Path | None = None,
    city: str | None = None,
    model: str | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    progress: bool | None = None,
) -> Evaluation:
    """GEO-BLEU and DTW per uid and day of generated trajectories (uid, d, t, x, y), city = mean over
    uids, exactly as yahoojapan/geobleu computes them (see :mod:`pipeline.tasks.trajectory`).

    ``reference`` and ``generated`` are paths (Parquet, CSV or the challenge's CSV.gz with or without
    header) or Polars DataFrames; rows are paired by (uid, d, t) in any order. Sections: ``per_unit``
    (uid, geobleu, dtw, n_days, n_steps), ``per_day`` (uid, d, n_steps, geobleu, dtw), ``summary``.
    ``matching="optimal"`` swaps the reference's greedy n-gram matching for an optimal one.
    """
    base = resolve_trajectory_convention(convention)
    chosen = dataclasses.replace(base, matching=matching) if matching else base
    unknown = [m for m in metrics if m not in TRAJECTORY_METRICS]
    if unknown or not metrics:
        raise ConfigError(f"unknown trajectory metric(s) {unknown}; known: {TRAJECTORY_METRICS}")
    for option, value, allowed in (
        ("on_mismatch", on_mismatch, ("error", "skip")),
        ("out_of_grid", out_of_grid, ("error", "score")),
    ):
        if value not in allowed:
            raise ConfigError(f"{option}={value!r} is not one of {allowed}")
    reference_source = as_source(reference, names=TRAJECTORY_COLUMNS)
    generated_source = as_source(generated, names=TRAJECTORY_COLUMNS)
    for source in (reference_source, generated_source):
        schema = source.schema()
        missing = [c for c in TRAJECTORY_COLUMNS if c not in schema]
        if missing:
            raise InputError(
                f"missing column; columns present: {list(schema)}",
                path=source.label,
                column=missing[0],
            )

    def make_scorer():
        return TrajectoryScorer(
            convention=chosen,
            metrics=tuple(metrics),
            on_mismatch=on_mismatch,
            out_of_grid=out_of_grid,
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
    }


def config_hash(config: dict, inputs: dict) -> str:
    """A hash of a task's configuration and its inputs' fingerprints (what --resume compares)."""
    text = json.dumps({"config": config, "inputs": inputs}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class Manifest:
    """``OUT/manifest.json``: the job, package versions, input fingerprints and timings per result."""

    def __init__(self, out: Path, job: dict) -> None:
        self.path = out / "manifest.json"
        previous = json.loads(self.path.read_text()) if self.path.exists() else {}
        self.results: dict[str, dict] = previous.get("results", {})
        self.job = job

    def record(self, evaluation: Evaluation, config: dict, task: str) -> None:
        self.results[f"city={evaluation.city}/model={evaluation.model}"] = {
            "task": task,
            "status": "complete",
            "config": config,
            "config_hash": config_hash(config, evaluation.inputs),
            "inputs": evaluation.inputs,
            "outputs": evaluation.outputs,
            "seconds": round(evaluation.seconds, 3),
            "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        self.save()

    def is_complete(self, city: str, model: str, config: dict, inputs: dict) -> bool:
        entry = self.results.get(f"city={city}/model={model}")
        return bool(
            entry
            and entry.get("status") == "complete"
            and entry.get("config_hash") == config_hash(config, inputs)
            and all(Path(p).is_dir() for p in entry.get("outputs", {}).values())
        )

    def save(self) -> None:
        write_json_atomic(
            {"job": self.job, "versions": package_versions(), "results": self.results}, self.path
        )


__all__ = ["Evaluation", "Manifest", "evaluate_nextloc", "evaluate_trajectory"]
