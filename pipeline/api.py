"""The Python API (what a notebook uses); the CLI is a thin shell over it.

>>> from pipeline.api import evaluate_nextloc
>>> result = evaluate_nextloc("truth.parquet", "deepmove.parquet", k=[1, 5, 10], convention="libcity")
>>> result.summary                      # Polars DataFrame: metric, value, n
>>> result.per_unit                     # one row per sample (when not written to ``out``)
"""

from __future__ import annotations

import hashlib
import json
import platform
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import polars as pl

from pipeline import __version__
from pipeline.engines.local import DEFAULT_CHUNK_ROWS, stream_pairs
from pipeline.errors import InputError
from pipeline.io.sources import Source, as_source
from pipeline.io.writers import StagedResult, write_json_atomic
from pipeline.progress import Progress
from pipeline.tasks.nextloc import NextlocScorer, NextlocSpec, plan_inputs

DEFAULT_CITY = "default"


@dataclass
class Evaluation:
    """What one (city, model) evaluation produced."""

    city: str
    model: str
    summary: pl.DataFrame
    per_unit: pl.DataFrame | None = None
    outputs: dict[str, str] = field(default_factory=dict)
    inputs: dict[str, list] = field(default_factory=dict)
    seconds: float = 0.0

    def value(self, metric: str) -> float:
        """The summary value of one metric (``result.value("ndcg@10")``)."""
        row = self.summary.filter(pl.col("metric") == metric)
        if row.height == 0:
            raise KeyError(f"no metric {metric!r} in this summary")
        return float(row["value"][0])


def default_model_name(source) -> str:
    """The predictions' file (or directory) name without suffixes: ``deepmove.parquet`` -> deepmove."""
    if isinstance(source, Source):
        name = Path(source.label.rstrip("/")).name
        for suffix in (".gz", ".parquet", ".pq", ".csv", ".txt"):
            name = name.removesuffix(suffix)
        return name.replace("*", "all") or "model"
    return "model"


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
    :mod:`pipeline.io.writers`) and ``per_unit`` is None; without it both come back in memory.
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
    city = city or DEFAULT_CITY
    model = model or default_model_name(pred_source)
    started = time.perf_counter()
    staged = StagedResult(Path(out), city, model) if out is not None else None
    parts: list[pl.DataFrame] = []
    meter = Progress(f"{city}/{model}", pred_source.row_count_estimate(), enabled=progress)
    try:
        scorer = NextlocScorer(spec, plan, pred_source.label, truth_source.label)
        prediction_rows = 0
        for item in stream_pairs(
            truth_source,
            pred_source,
            plan,
            list(spec.key),
            chunk_rows=chunk_rows,
            progress=meter,
        ):
            if isinstance(item, str):  # not sorted: start again over hash buckets
                scorer = NextlocScorer(spec, plan, pred_source.label, truth_source.label)
                prediction_rows = 0
                parts.clear()
                if staged:
                    staged = StagedResult(Path(out), city, model)
                continue
            chunk, truth_rows = item
            prediction_rows += chunk.height
            part = scorer.score(chunk, truth_rows)
            if part is None:
                continue
            if staged:
                staged.add_part("per_unit", part)
            else:
                parts.append(part)
        if scorer.accumulator.samples == 0:
            raise InputError("holds no rows: nothing to evaluate", path=truth_source.label)
        if prediction_rows == 0:
            raise InputError("holds no rows: nothing to evaluate", path=pred_source.label)
        summary = scorer.accumulator.summary()
        outputs = {}
        if staged:
            staged.add_part("summary", summary)
            outputs = staged.commit()
    except BaseException:
        if staged:
            staged.discard()
        raise
    finally:
        meter.close()
    per_unit = None if staged else pl.concat(parts, how="vertical") if parts else None
    return Evaluation(
        city=city,
        model=model,
        summary=summary,
        per_unit=per_unit,
        outputs=outputs,
        inputs={"truth": truth_source.fingerprint(), "predictions": pred_source.fingerprint()},
        seconds=time.perf_counter() - started,
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


__all__ = ["Evaluation", "evaluate_nextloc", "Manifest", "asdict"]
