"""A job's partition (``partition = { date = "2026-11-27" }``, ``mobeval run --partition``): each
of its tasks made concrete, one task per partition.

A task's input paths may name a partition key in braces
(``truth = "lake/date={date}/truth.parquet"``); each is filled with the partition's value. A
value ``"*"`` is every value found on disk: the task's inputs that name the key are looked up
with ``*`` in its place, and the task is scored once per value found, each result under its own
partition (``date=2026-11-21/city=tky/model=markov``) and skipped when the manifest already
holds it complete for the same options and inputs (a growing dataset: each run scores the new
partitions only). A result whose truth or predictions are not there yet for a value (the day's
predictions came, its truth did not) is left for a later run, with a line saying so.
"""

from __future__ import annotations

import dataclasses
import glob
from collections.abc import Mapping
from pathlib import Path

from mobeval.errors import ConfigError
from mobeval.families import FAMILIES
from mobeval.io.inputs import is_uri
from mobeval.io.partitions import (
    PARTITION_VALUE,
    checked_partition,
    fill,
    ordered,
    placeholders,
    template_regex,
)

#: The value of a job's partition key that means every value found on disk.
EVERY = "*"


def checked_job_partition(where: str, given: object) -> dict[str, str]:
    """A job file's ``partition`` table (or ``--partition``'s pairs) checked: key -> value, each
    a partition's key and a plain value (:func:`mobeval.io.partitions.checked_partition`) or
    ``"*"``."""
    if not isinstance(given, Mapping):
        raise ConfigError(f'{where}: expected a table of key = value, e.g. {{ date = "*" }}')
    checked_partition({k: "x" if v == EVERY else v for k, v in given.items()}, where)
    return dict(given)


def _paths(task) -> dict[str, Path | str]:
    """Every input path of a task, by the entry naming it (``truth``, ``models.gru.seed1``,
    a file option's name)."""
    paths = {"truth": task.truth}
    for model, run, path in task.results():
        paths["models." + ".".join(filter(None, (model, run)))] = path
    for name in FAMILIES[task.type].file_options:
        if isinstance(task.options.get(name), str):
            paths[name] = task.options[name]
    return paths


def _filled(task, values: Mapping[str, str]):
    """``task`` with ``values`` in every input path (a Path stays a Path)."""

    def one(path):
        return type(path)(fill(str(path), values)) if isinstance(path, Path) else fill(path, values)

    models = {
        name: {run: one(p) for run, p in given.items()} if isinstance(given, dict) else one(given)
        for name, given in task.models.items()
    }
    files = FAMILIES[task.type].file_options
    options = {
        name: one(value) if name in files and isinstance(value, str) else value
        for name, value in task.options.items()
    }
    return dataclasses.replace(task, truth=one(task.truth), models=models, options=options)


def _found(where: str, template: str, keys: list[str]) -> list[dict[str, str]]:
    """The values of ``keys`` for which something lies at ``template`` (up to the piece of its
    last placeholder), read from the paths found."""
    if is_uri(template):
        raise ConfigError(
            f"{where}: {template}: a partition value '*' is looked up on this machine's disk, "
            "not at a URL; give the value (--partition KEY=VALUE)"
        )
    end = max(template.rfind("{" + key + "}") for key in keys)
    cut = template.find("/", end)
    prefix = template if cut < 0 else template[:cut]
    regex, found = template_regex(prefix), []
    for path in glob.glob(fill(prefix, dict.fromkeys(keys, "*"))):
        matched = regex.fullmatch(path)
        if matched is None:
            continue
        values = {key: matched.group(key) for key in keys}
        bad = next((v for v in values.values() if not PARTITION_VALUE.fullmatch(v)), None)
        if bad is not None:
            raise ConfigError(f"{where}: {path}: {bad!r} is not a partition value (a plain name)")
        found.append(values)
    return found


def _present(path) -> bool:
    return is_uri(str(path)) or bool(glob.glob(str(path)))


def expand_partitions(path: Path, tasks: tuple, partition: dict[str, str]):
    """The job's ``tasks`` made concrete under ``partition`` (key -> value or ``"*"``, in
    order): (tasks, each with its ``partition`` set; lines naming each result left for later).
    A placeholder naming no key of the partition is a ConfigError naming the entry."""
    wild = [key for key, value in partition.items() if value == EVERY]
    fixed = {key: value for key, value in partition.items() if value != EVERY}
    concrete, waiting = [], []
    for index, task in enumerate(tasks):
        where = f"{path}: tasks[{index}]"
        task = _filled(task, fixed)
        paths = _paths(task)
        for entry, given in paths.items():
            unknown = [key for key in placeholders(str(given)) if key not in wild]
            if unknown:
                raise ConfigError(
                    f"{where}.{entry}: {{{unknown[0]}}} names no partition key (give "
                    f"--partition {unknown[0]}=VALUE, or partition = {{ {unknown[0]} = ... }})"
                )
        if not wild:
            concrete.append(dataclasses.replace(task, partition=checked_partition(partition)))
            continue
        templates = {e: str(p) for e, p in paths.items() if set(wild) <= set(placeholders(str(p)))}
        if not templates:
            raise ConfigError(
                f"{where}: partition {wild[0]} = '*' but no input path names {{{wild[0]}}} "
                '(e.g. truth = "lake/date={date}/truth.parquet")'
            )
        found = ordered(v for e, t in templates.items() for v in _found(f"{where}.{e}", t, wild))
        for values in found:
            one = _filled(task, values)
            name = checked_partition({**partition, **values})
            kept = {}
            for model, given in one.models.items():
                runs = given if isinstance(given, dict) else {None: given}
                missing = [p for p in [one.truth, *runs.values()] if not _present(p)]
                if missing:
                    label = "/".join(filter(None, (name, one.city, model)))
                    waiting.append(f"{label}: {missing[0]}: not there yet, left for a later run")
                else:
                    kept[model] = given
            if kept:
                concrete.append(
                    dataclasses.replace(one, models=kept, partition=name, incremental=True)
                )
    return tuple(concrete), tuple(waiting)
