"""Experiment trackers: a result's summary, options, inputs and report logged to MLflow or to
Weights & Biases (the ``mlflow`` and ``wandb`` extras: ``pip install 'mobeval[mlflow]'``).

>>> import mobeval
>>> result = mobeval.evaluate_nextloc("truth.parquet", "markov.parquet", k=[1, 5])
>>> mobeval.to_mlflow(result, "sqlite:///mlruns.db", experiment="tky")  # a new run: its id
>>> mobeval.to_wandb("out/tky", project="tky")      # every result of an OUT, one run each
>>> mobeval.to_mlflow(metric.compute(), step=epoch)  # inside an active run: a training loop's

``results``: an :class:`~mobeval.engines.base.Evaluation` (``evaluate_*``, an accumulator's
``compute``), a list of them, or an output folder (every complete result of its manifest). Each
result is one tracker run, named ``city/model`` (``city/model/run`` for one run of a model),
holding:

* **metrics**: the summary's values (metric -> value, counts such as ``samples`` included) at
  ``step`` (0 when not given). W&B takes mobeval's names as they are; MLflow refuses ``@``, so
  its keys are :func:`mlflow_key`'s (``acc@5`` -> ``acc_at_5``), read back by
  :func:`metric_name`;
* **parameters** (W&B: the run's config): every option as the run used it (the manifest's
  ``resolved``: :func:`mobeval.families.resolved_options`), as text (JSON for lists), with
  ``params`` (your own: learning rate, epoch...) beside them;
* **tags** (W&B: the config's ``mobeval`` entry): ``mobeval.city``, ``mobeval.model``,
  ``mobeval.run``, ``mobeval.task``, ``mobeval.version`` and one ``mobeval.input.<role>`` per
  input: the digest of its fingerprint without path and time (:func:`input_digest`: the same
  data gives the same digest wherever it lies);
* **files** (MLflow: artifacts; W&B: the run's files): ``mobeval.json``, the result's record
  (its task, config, resolved options, inputs' fingerprints as the manifest writes them, the
  package versions and the summary rows with ``n`` and ``std``), and ``report.html``, the
  city's report (:class:`mobeval.report.Report`, plots where matplotlib is installed), for a
  result that lies in an output folder.

Where a run is active (``mlflow.active_run()``, ``wandb.run``) and no store or project is
named, the result is logged into it, unfinished (a training loop's run, ``step`` its epoch);
several results need a run each, so they are refused there. Otherwise each result gets a new
run, finished once logged. The command line's ``--track mlflow:URI`` / ``--track wandb:PROJECT``
and a job file's ``track`` name the same targets (:func:`parse_target`); ``mobeval track OUT
--to TARGET`` logs an output folder's results.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import string
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mobeval import __version__
from mobeval.engines.base import Evaluation
from mobeval.errors import ConfigError, MobevalError
from mobeval.families import resolved_options
from mobeval.io.writers import partition_path, result_name
from mobeval.manifest import package_versions

#: Tracker -> (the module it needs, the extra that installs it).
TRACKERS = {"mlflow": ("mlflow", "mlflow"), "wandb": ("wandb", "wandb")}

#: What MLflow takes in a metric key as it is (its rule on Linux and macOS: letters, digits,
#: ``_ . - / :`` and spaces; a space is written as an escape here, which no name needs).
_MLFLOW_SAFE = frozenset(string.ascii_letters + string.digits + "_.-/:")
#: An escape of :func:`mlflow_key`: ``_at_`` is ``@``, ``_x<hex>_`` the character of that code.
_ESCAPE = re.compile(r"_(at|x[0-9a-f]+)_")


def mlflow_key(name: str) -> str:
    """A metric's MLflow key: ``@`` written ``_at_`` (``acc@5`` -> ``acc_at_5``), any other
    character MLflow refuses written ``_x<hex code>_`` (``P(rel=2)@5`` ->
    ``P_x28_rel_x3d_2_x29__at_5``), and an ``_`` that would start one of these escapes
    written ``_x5f_`` (trec_eval's ``iprec_at_recall_0.10`` -> ``iprec_x5f_at_recall_0.10``),
    so that every key reads back as one name (:func:`metric_name`). Built from the end: whether
    an ``_`` starts an escape depends on what follows it as written."""
    key = ""
    for char in reversed(name):
        if char == "@":
            token = "_at_"
        elif char == "_":
            token = "_x5f_" if _ESCAPE.match("_" + key) else "_"
        elif char in _MLFLOW_SAFE:
            token = char
        else:
            token = f"_x{ord(char):x}_"
        key = token + key
    return key


def metric_name(key: str) -> str:
    """The mobeval name of an MLflow key written by :func:`mlflow_key` (``acc_at_5`` ->
    ``acc@5``): each escape, read from the left, replaced by its character."""
    return _ESCAPE.sub(lambda m: "@" if m[1] == "at" else chr(int(m[1][1:], 16)), key)


def input_digest(fingerprint: list[dict]) -> str:
    """An input's digest: its files' fingerprints (sizes, footers' hashes; a frame's rows)
    without their paths and times, hashed: the same data gives the same digest wherever it
    lies, as ``compare`` tells a truth (:func:`mobeval.compare.results.truth_fingerprint`)."""
    kept = [{k: v for k, v in part.items() if k not in ("path", "mtime")} for part in fingerprint]
    return hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Logged:
    """One result as a tracker takes it (see the module's docstring)."""

    name: str  # the run's name: city/model[/run]
    metrics: dict[str, float]  # mobeval's names
    params: dict[str, str]
    tags: dict[str, str]
    record: dict  # mobeval.json
    report: str | None  # the city's report, one HTML page; None outside an output folder


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _logged(name: str, summary, record: dict, report: str | None, params: dict) -> Logged:
    """A :class:`Logged` from a result's summary frame and record (``params``: the caller's)."""
    config = record["config"]
    tags = {"mobeval.task": record["task"] or "", "mobeval.version": __version__}
    tags |= {f"mobeval.{k}": config[k] for k in ("city", "model", "run") if k in config}
    tags |= {f"mobeval.input.{role}": input_digest(f) for role, f in record["inputs"].items()}
    return Logged(
        name=name,
        metrics={
            row["metric"]: float(row["value"])
            for row in summary.iter_rows(named=True)
            if row["value"] is not None
        },
        params={k: _text(v) for k, v in {**(record["resolved"] or {}), **params}.items()},
        tags=tags,
        record={**record, "summary": summary.to_dicts()},
        report=report,
    )


def _out_of(evaluation: Evaluation) -> Path | None:
    """The local output folder ``evaluate_*(out=...)`` wrote the result into, if any."""
    written = evaluation.outputs.get("summary")
    if written is None:
        return None
    names = (evaluation.city, evaluation.model, evaluation.run)
    tail = "/" + partition_path("summary", *names)
    out = Path(written.removesuffix(tail)) if written.endswith(tail) else None
    return out if out is not None and (out / "manifest.json").is_file() else None


class _Folders:
    """The output folders met while logging, each read once: its complete results by name, its
    package versions, and each city's report as one HTML page (plots where matplotlib is)."""

    def __init__(self) -> None:
        self.read: dict[Path, tuple[object, dict, dict]] = {}
        self.reports: dict[tuple[Path, str], str] = {}

    def results(self, out: Path) -> dict:
        """{result name: :class:`mobeval.compare.results.Result`} of OUT's manifest."""
        from mobeval.compare.results import OutputFolder

        if out not in self.read:
            folder = OutputFolder(out)
            results = {r.name: r for shown in folder.cities.values() for r in shown.values()}
            versions = json.loads((out / "manifest.json").read_text()).get("versions", {})
            self.read[out] = (folder, results, versions)
        return self.read[out][1]

    def logged(self, out: Path, name: str, params: dict) -> Logged:
        """The result ``name`` of OUT as its manifest records it, with its city's report."""
        from mobeval.report import Report

        self.results(out)
        folder, results, versions = self.read[out]
        result = results[name]
        if (out, result.city) not in self.reports:
            plots = importlib.util.find_spec("matplotlib") is not None
            report = Report(out, city=result.city, plots=plots)
            self.reports[out, result.city] = report.to_html()
        kept = {k: result.entry.get(k) for k in ("task", "config", "resolved", "inputs")}
        record = {"result": name, **kept, "versions": versions}
        shown = "/".join(filter(None, (result.city, result.stored_as, result.run)))
        summary = folder.summary(result)
        return _logged(shown, summary, record, self.reports[out, result.city], params)


def logged_results(results, params: dict | None = None) -> list[Logged]:
    """Each result of ``results`` (an Evaluation, a list of them, an output folder) as logged:
    a result written to a local output folder (``evaluate_*(out=...)``, a job's) as that
    folder's manifest records it, with its city's report; another from the Evaluation itself."""
    params, folders = dict(params or {}), _Folders()
    if isinstance(results, str | os.PathLike):
        out = Path(results)
        return [folders.logged(out, name, params) for name in folders.results(out)]
    logged = []
    for evaluation in [results] if isinstance(results, Evaluation) else list(results):
        if isinstance(evaluation, Logged):  # made already (track: one report for every target)
            logged.append(evaluation)
            continue
        if not isinstance(evaluation, Evaluation):
            raise ConfigError(
                f"a tracker logs Evaluations or an output folder, got {type(evaluation).__name__}"
            )
        name = result_name(evaluation.city, evaluation.model, evaluation.run)
        out = _out_of(evaluation)
        if out is not None and name in folders.results(out):
            logged.append(folders.logged(out, name, params))
            continue
        config, task = evaluation.config, evaluation.config.get("type", "")
        record = {
            "result": name,
            "task": task,
            "config": config,
            "resolved": resolved_options(task, config) if task else {},
            "inputs": evaluation.inputs,
            "versions": package_versions(),
        }
        shown = f"{evaluation.city}/{evaluation.label}"
        logged.append(_logged(shown, evaluation.summary, record, None, params))
    return logged


def _files(logged: Logged, folder: Path) -> list[Path]:
    """``mobeval.json`` and ``report.html`` written into ``folder``."""
    written = [folder / "mobeval.json"]
    written[0].write_text(json.dumps(logged.record, indent=2, default=str) + "\n")
    if logged.report is not None:
        written.append(folder / "report.html")
        written[-1].write_text(logged.report, encoding="utf-8")
    return written


def _tracker(name: str):
    """The tracker's module, or a ConfigError saying which extra installs it."""
    module, extra = TRACKERS[name]
    if importlib.util.find_spec(module) is None:
        raise ConfigError(
            f"logging to {name} needs the {module} package: pip install 'mobeval[{extra}]'"
        )
    return importlib.import_module(module)


def _one_run_each(logged: list[Logged], tracker: str) -> None:
    if len(logged) > 1:
        raise ConfigError(
            f"{len(logged)} results, one {tracker} run each: a run is active; end it, or log "
            "the results one by one into it"
        )


def _experiment_id(client, experiment: str | None) -> str:
    """The id of the MLflow experiment named ``experiment`` (or ``MLFLOW_EXPERIMENT_NAME``),
    made if missing; MLflow's ``Default`` (id 0) without a name."""
    experiment = experiment or os.environ.get("MLFLOW_EXPERIMENT_NAME")
    if not experiment:
        return "0"
    found = client.get_experiment_by_name(experiment)
    return found.experiment_id if found is not None else client.create_experiment(experiment)


def to_mlflow(
    results,
    uri: str | None = None,
    *,
    experiment: str | None = None,
    step: int | None = None,
    params: dict | None = None,
) -> list[str]:
    """Log ``results`` to MLflow (module docstring): into the active run when there is one and
    neither ``uri`` nor ``experiment`` is given, else a new run per result in ``experiment``
    (made if missing; default: ``MLFLOW_EXPERIMENT_NAME``, else MLflow's ``Default``) of the
    tracking store ``uri`` (default: MLflow's own: ``MLFLOW_TRACKING_URI``, else ``./mlruns``;
    ``sqlite:///mlruns.db``, ``http://host:5000``...). Returns the runs' ids. The metric keys
    are :func:`mlflow_key`'s (:func:`metric_name` reads them back)."""
    mlflow = _tracker("mlflow")
    from mlflow.entities import Metric, Param, RunTag
    from mlflow.tracking import MlflowClient

    logged = logged_results(results, params)
    active = mlflow.active_run() if uri is None and experiment is None else None
    client = MlflowClient(tracking_uri=uri)
    if active is None:
        experiment_id = _experiment_id(client, experiment)
    else:
        _one_run_each(logged, "MLflow")
    ids = []
    for result in logged:
        names = {mlflow_key(name): name for name in result.metrics}
        if active is None:
            run_id = client.create_run(experiment_id, run_name=result.name).info.run_id
        else:
            run_id = active.info.run_id
        now = int(time.time() * 1000)
        metrics = [Metric(k, result.metrics[n], now, step or 0) for k, n in names.items()]
        params_ = [Param(k, v) for k, v in result.params.items()]
        try:
            for first in range(0, max(len(metrics), len(params_), 1), 100):  # MLflow's batch
                client.log_batch(
                    run_id,
                    metrics=metrics[first : first + 100],
                    params=params_[first : first + 100],
                    tags=[RunTag(k, v) for k, v in result.tags.items()] if first == 0 else [],
                )
            with tempfile.TemporaryDirectory() as folder:
                for path in _files(result, Path(folder)):
                    client.log_artifact(run_id, str(path))
        except Exception:
            if active is None:
                client.set_terminated(run_id, "FAILED")
            raise
        if active is None:
            client.set_terminated(run_id)
        ids.append(run_id)
    return ids


def to_wandb(
    results,
    project: str | None = None,
    *,
    entity: str | None = None,
    step: int | None = None,
    params: dict | None = None,
    **init,
) -> list[str]:
    """Log ``results`` to Weights & Biases (module docstring): into the active run
    (``wandb.run``) when there is one and no ``project`` is given, else a new run per result
    in ``project`` of ``entity`` (``wandb.init``'s defaults: ``WANDB_PROJECT``,
    ``WANDB_ENTITY``), its tags the task and the city; ``init``: more of ``wandb.init``'s
    arguments (``mode="offline"``, ``dir``, ``group``...; ``WANDB_MODE=offline`` works as
    well). Metrics keep mobeval's names. Returns the runs' ids."""
    wandb = _tracker("wandb")
    logged = logged_results(results, params)
    active = wandb.run if project is None and entity is None else None
    if active is not None:
        _one_run_each(logged, "W&B")
    ids = []
    for result in logged:
        mobeval = {k.removeprefix("mobeval."): v for k, v in result.tags.items()}
        config = {**result.params, "mobeval": mobeval}
        if active is None:
            tags = [mobeval.get("task"), mobeval.get("city")]
            run = wandb.init(
                project=project,
                entity=entity,
                name=result.name,
                config=config,
                tags=[t for t in tags if t],
                job_type="evaluation",
                reinit="create_new",
                **init,
            )
        else:
            run = active
            run.config.update(config, allow_val_change=True)
        try:
            run.log(result.metrics, step=step)
            for path in _files(result, Path(run.dir)):
                run.save(str(path), base_path=run.dir, policy="now")
        finally:
            if active is None:
                run.finish()
        ids.append(run.id)
    return ids


def parse_target(target: str, where: str = "--track") -> tuple[str, str | None]:
    """``mlflow[:URI]`` or ``wandb[:[ENTITY/]PROJECT]`` -> (tracker, URI or project or None),
    its package checked installed (a ConfigError naming ``where`` and the extra otherwise)."""
    tracker, _, place = target.partition(":")
    if tracker not in TRACKERS:
        raise ConfigError(
            f"{where}: {target!r}: expected mlflow[:URI] or wandb[:PROJECT] "
            "(mlflow:sqlite:///mlruns.db, wandb:my-project)"
        )
    try:
        _tracker(tracker)
    except ConfigError as error:
        raise ConfigError(f"{where}: {error}") from None
    return tracker, place or None


def checked_targets(targets: Sequence[str], where: str = "--track") -> tuple[str, ...]:
    """``targets``, each checked by :func:`parse_target` before any work."""
    for target in targets:
        parse_target(target, where)
    return tuple(targets)


def track(
    results, targets: Sequence[str], log: Callable[[str], None] = print, where: str = "--track"
) -> None:
    """Log ``results`` to each of ``targets`` (:func:`parse_target`), a line each: the command
    line's ``--track`` and ``mobeval track``, a job file's ``track``. A tracker that fails is a
    MobevalError naming it (the results themselves are complete)."""
    if not targets:
        return
    logged = logged_results(results)
    for target in targets:
        tracker, place = parse_target(target, where)
        try:
            if tracker == "mlflow":
                ids = to_mlflow(logged, place)
            else:
                entity, _, project = (place or "").rpartition("/")
                quiet = _tracker("wandb").Settings(silent=True)  # a line of ours a run
                ids = to_wandb(logged, project or None, entity=entity or None, settings=quiet)
        except MobevalError:
            raise
        except Exception as error:  # noqa: BLE001 - the tracker's own failure, named
            raise MobevalError(f"{target}: logging failed: {error}") from None
        for result, run_id in zip(logged, ids, strict=True):
            log(f"{result.name}: logged to {target} (run {run_id})")
