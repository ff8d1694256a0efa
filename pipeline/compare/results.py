"""Reading an OUT for a comparison (or a report): its manifest's complete results, the
options that define each result's metrics, and each result's files."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from mobeval.errors import ConfigError, InputError
from mobeval.io.outputs import RESULT_NAME, read_manifest, read_summary
from mobeval.io.writers import result_name

#: Summary rows that count things (not metrics).
COUNT_ROWS = frozenset(
    {
        "samples",
        "samples_without_predictions",
        "predictions_without_truth_dropped",
        "uids",
        "uid_days",
        "steps",
        "uids_skipped",
        "rows_out_of_grid",
        "users",
        "real_uids",  # an unpaired run's real population (metrics.trajectory.REAL_COUNTS)
        "real_uid_days",
        "real_steps",
    }
)


@dataclass
class Result:
    """One result of the manifest: ``model`` the name compare and the report show it under (the
    model's, or ``model/run`` for one run of a model that has several), ``name`` where it lies
    in OUT (``city=<c>/model=<m>[/run=<r>]``), ``run`` its run (None: the model's one result)
    and ``stored_as`` the model's own name (``model`` without ``/run``)."""

    city: str
    model: str
    task: str
    config: dict
    entry: dict
    options: dict = field(default_factory=dict)
    name: str = ""
    run: str | None = None
    stored_as: str = ""

    def __post_init__(self) -> None:
        self.name = self.name or result_name(self.city, self.model)
        self.stored_as = self.stored_as or self.model


def effective_options(task: str, config: dict, where: str) -> dict:
    """The options of a result that define its metrics: the family's defaults updated with what
    the manifest recorded, without the options that only select metrics, name inputs or say how
    they are read (``defines=False`` in :mod:`mobeval.families`), and without unset (None)
    ones. The recorded options are checked as a run checks them
    (:func:`mobeval.options.check_options`): a damaged one is an InputError naming ``where``
    (the manifest's entry)."""
    from mobeval.families import FAMILIES
    from mobeval.options import check_options

    family = FAMILIES.get(task)
    if family is None:
        return {}
    recorded = {name: value for name, value in config.items() if name in family.names}
    try:
        check_options(task, recorded)
    except ConfigError as error:
        raise InputError(f"{where}: {error}") from None
    merged = family.values(recorded)
    if isinstance(merged.get("key"), str):
        merged["key"] = [merged["key"]]
    options = {}
    for name, value in merged.items():
        if not family.option(name).defines or value is None:
            continue
        options[name] = json.loads(json.dumps(value, default=str))  # tuples -> lists
    return options


def truth_fingerprint(entry: dict) -> str:
    """The truth input's fingerprint without its path and time (a copy elsewhere is the same)."""
    truth = entry["inputs"].get("truth", [])
    kept = [{k: v for k, v in part.items() if k not in ("path", "mtime")} for part in truth]
    return json.dumps(kept, sort_keys=True)


def result_fingerprint(entry: dict) -> str:
    """What a result's per-unit values depend on, as a digest of its manifest entry: the task,
    the options as the run used them, the inputs (without their path and time), the files
    written and when the run finished. A result scored again gets another one, so a stored
    comparison of its old values is told apart from one of its current values."""
    inputs = {
        role: [{k: v for k, v in part.items() if k not in ("path", "mtime")} for part in parts]
        for role, parts in entry.get("inputs", {}).items()
    }
    kept = {name: entry.get(name) for name in ("task", "config", "resolved", "files", "finished")}
    text = json.dumps({**kept, "inputs": inputs}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def runs_fingerprint(results: list[Result]) -> str:
    """:func:`result_fingerprint` of a model's one result, or a digest of those of its runs."""
    prints = [result_fingerprint(result.entry) for result in results]
    if len(results) == 1 and results[0].run is None:
        return prints[0]
    return hashlib.sha256(",".join(prints).encode()).hexdigest()[:16]


class OutputFolder:
    """An output folder: its manifest's complete results and their per-unit tables, read only
    inside it: a result's recorded folder, its section folder and each of its files must
    resolve inside OUT, links followed (an InputError naming the manifest and the path
    otherwise: a link to results elsewhere is not this OUT's)."""

    def __init__(self, out: str | os.PathLike) -> None:
        self.out = Path(out)
        path = self.out / "manifest.json"
        if not path.is_file():
            raise InputError("no manifest.json: not a mobeval output folder", path=self.out)
        self.manifest, self.root = path, self.out.resolve()
        self.cities: dict[str, dict[str, Result]] = {}
        for name, entry in read_manifest(path).items():
            if entry["status"] != "complete":
                continue
            for section, recorded in entry["outputs"].items():
                self._check_recorded(name, section, recorded)
            partition, city, model, run = RESULT_NAME.fullmatch(name).groups()
            if partition is not None:
                raise ConfigError(
                    f"{self.out}: its results lie under partitions ({name}): compare and report "
                    "read an OUT without partitions; read results over time as one table "
                    "(docs/outputs.md, Results over time), or score a day into an OUT of its own"
                )
            task, config = entry["task"], entry["config"]
            where = f"{path}: results[{json.dumps(name)}].config"
            options = effective_options(task, config, where)
            shown = model if run is None else f"{model}/{run}"  # each run a model of its own
            self.cities.setdefault(city, {})[shown] = Result(
                city, shown, task, config, entry, options, name, run, model
            )

    def _outside(self, name: str, section: str, path: Path | str, why: str) -> InputError:
        return InputError(
            f"results[{json.dumps(name)}].outputs.{section}: {path} {why}, outside the output "
            f"folder {self.out}: compare and report read results only inside OUT",
            path=self.manifest,
        )

    def _check_recorded(self, name: str, section: str, recorded: str) -> None:
        """A result's recorded output folder: relative to OUT and inside it once resolved, links
        followed; or, as manifests before relative paths wrote it, an absolute path ending in
        ``<section>/<name>`` (only the section counts: it is read under this OUT). An
        InputError naming the manifest and the path otherwise."""
        given = Path(recorded)
        if given.is_absolute():
            if given.parts[-1 - len(Path(name).parts) :] != (section, *Path(name).parts):
                raise self._outside(name, section, recorded, f"is not {section}/{name}")
        elif not (resolved := (self.out / given).resolve()).is_relative_to(self.root):
            raise self._outside(name, section, recorded, f"resolves to {resolved}")

    def _checked_inside(self, result: Result, section: str, files: list[Path]) -> list[Path]:
        """``files`` of a result's section, each checked to resolve inside OUT (a link to a
        file or a folder elsewhere is refused: :meth:`_outside`)."""
        for path in [self.out / section / result.name, *files]:
            if not path.resolve().is_relative_to(self.root):
                why = f"resolves to {path.resolve()}"
                raise self._outside(result.name, section, path, why)
        return files

    def models(self, city: str) -> dict[str, list[Result]]:
        """The city's models, each with its results: its runs, in the manifest's order, or its
        one result."""
        grouped: dict[str, list[Result]] = {}
        for result in self.cities[city].values():
            grouped.setdefault(result.stored_as, []).append(result)
        return grouped

    def section_files(self, result: Result, section: str) -> list[Path]:
        """The Parquet files of one section of a result (InputError when absent). The section
        must be among the manifest's outputs of the result; it is looked for under this OUT
        (as ``--resume`` does, so a moved OUT, or an older manifest's absolute paths, work)."""
        listed = section in result.entry["outputs"]
        folder = self.out / section / result.name
        files = sorted(folder.glob("*.parquet")) if listed and folder.is_dir() else []
        if not files:
            what = {"per_day": "per-day", "summary": "summary"}.get(section, "per-unit")
            fix = "score it again with this mobeval to compare it"
            if result.options.get("pairing") == "none":
                fix = "it was scored as unpaired populations (--pairing none): one value each"
            raise InputError(
                f"{result.name}: no {what} outputs ({section}/{result.name}); {fix}",
                path=self.out,
            )
        return self._checked_inside(result, section, files)

    def summary(self, result: Result) -> pl.DataFrame:
        return read_summary(self.section_files(result, "summary"))


def coverage(stored: pl.DataFrame, city) -> tuple[str | None, str]:
    """What a stored comparison gives a report's ``city`` (:class:`mobeval.report.city.City`:
    its models against its baseline, their values and population metrics): why it cannot give
    its markers (a model it did not compare with the baseline; None when it can), and a note
    naming the metrics every model has, not population ones, that it did not compare (a
    comparison of some metrics: the table marks them not tested; "" when there are none)."""
    rows = stored.filter(pl.col("baseline") == city.baseline)
    compared = set(rows.select("metric", "model").iter_rows())
    others = [m for m in city.models if m != city.baseline]
    for model in others:
        if model not in rows["model"].to_list():
            return f"it did not compare {model} with {city.baseline}", ""
    untested = [
        metric
        for metric in city.metrics
        if metric not in city.population
        and all(metric in city.values[m] for m in city.models)
        and any((metric, m) not in compared for m in others)
    ]
    return None, untested and (
        f"OUT/compare/city={city.name} did not compare {', '.join(untested)}: marked not "
        "tested (°); `mobeval compare` without --metrics tests them"
    )
