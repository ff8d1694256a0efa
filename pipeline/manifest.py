"""``OUT/manifest.json``: what each result of an OUT was scored from, with which options, when.

Every run that writes to OUT records each result here once it is committed (:class:`Manifest`);
``--resume`` compares a result's options and input fingerprints with what it recorded
(:func:`config_hash`); compare and the report read it back
(:func:`mobeval.io.outputs.read_manifest`).
"""

from __future__ import annotations

import hashlib
import json
import platform
import sys
from datetime import datetime
from pathlib import Path

import polars as pl

from mobeval import __version__
from mobeval.engines.base import Evaluation, LocalFiles
from mobeval.errors import MobevalError
from mobeval.families import resolved_options
from mobeval.io.outputs import read_manifest, read_summary
from mobeval.io.writers import partition_path, result_name


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


class Manifest:
    """``OUT/manifest.json``: the job, package versions, input fingerprints and timings per
    result. ``files`` reads and writes it (local files by default; Hadoop's for Spark).

    Made while holding OUT's lock, before anything is computed: an unreadable or damaged
    manifest (:func:`mobeval.io.outputs.read_manifest`) stops the run here. Output directories
    are recorded relative to OUT and looked for under the current OUT, so ``--resume`` works on
    a copy of OUT moved elsewhere (older manifests, which stored absolute paths, are read the
    same way: only their sections count)."""

    def __init__(self, out, job: dict, *, files=None, engine: str = "local") -> None:
        self.files = files or LocalFiles()
        self.out = str(out).rstrip("/")
        self.path = f"{self.out}/manifest.json"
        self.results: dict[str, dict] = self._read()
        self.job = job
        self.engine = engine

    def _read(self) -> dict[str, dict]:
        remedy = "; move it aside or delete it (without it, --resume recomputes every result)"
        return read_manifest(self.path, self.files.read_text, remedy)

    def _output_dir(self, section: str, *names: str | None) -> str:
        """``names``: city, model, run and partition (None for a result without one)."""
        return f"{self.out}/{partition_path(section, *names)}"

    def _file_sizes(self, section: str, *names: str | None) -> dict[str, int]:
        """{file name: size} of a result's section as it is on disk now."""
        listing = self.files.data_files(self._output_dir(section, *names))
        return {uri.rstrip("/").rsplit("/", 1)[-1]: size for uri, size, _ in listing}

    def record(self, evaluation: Evaluation, config: dict, task: str) -> None:
        """Mark one result complete (its directories must be in place), merged into the
        manifest as it is on disk now."""
        names = (evaluation.city, evaluation.model, evaluation.run, evaluation.partition)
        for section in evaluation.outputs:
            if not self.files.exists(self._output_dir(section, *names)):
                raise MobevalError(
                    f"{self._output_dir(section, *names)}: missing after the commit; "
                    f"{result_name(*names)} is not marked complete"
                )
        self.results = self._read()
        self.results[result_name(*names)] = {
            "task": task,
            "engine": self.engine,
            "status": "complete",
            "config": config,
            "resolved": _resolved_options(task, config),
            "config_hash": config_hash(config, evaluation.inputs),
            "inputs": evaluation.inputs,
            "outputs": {s: partition_path(s, *names) for s in evaluation.outputs},
            "files": {s: self._file_sizes(s, *names) for s in evaluation.outputs},
            "seconds": round(evaluation.seconds, 3),
            # to the microsecond: a result scored again is told apart from the one it replaced
            "finished": datetime.now().astimezone().isoformat(timespec="microseconds"),
        }
        self.save()

    def is_complete(
        self,
        city: str,
        model: str,
        run: str | None = None,
        partition: str | None = None,
        *,
        config: dict,
        inputs: dict,
    ) -> bool:
        """Whether the result is recorded complete for this config and these inputs, and every
        one of its section directories exists under this OUT holding the files it was written
        with, of the sizes written (a deleted, truncated or added file means score it again;
        manifests written before the sizes were recorded check the directories only)."""
        names = (city, model, run, partition)
        entry = self.results.get(result_name(*names))
        if not (
            entry is not None
            and entry["status"] == "complete"
            and entry["config_hash"] == config_hash(config, inputs)
            and entry["outputs"]
        ):
            return False
        recorded = entry.get("files")
        for section in entry["outputs"]:
            if not self.files.exists(self._output_dir(section, *names)):
                return False
            if recorded is not None and recorded.get(section) != self._file_sizes(section, *names):
                return False
        return True

    def resumed(
        self, city: str, model: str, run: str | None = None, partition: str | None = None
    ) -> Evaluation:
        """A complete result (:meth:`is_complete`) read back from OUT: its summary as written,
        its sections' directories, its inputs and seconds as recorded; ``resumed`` set."""
        names = (city, model, run, partition)
        entry = self.results[result_name(*names)]
        summary_dir = self._output_dir("summary", *names)
        files = [uri.removeprefix("file:") for uri, _, _ in self.files.data_files(summary_dir)]
        return Evaluation(
            city=city,
            model=model,
            summary=read_summary([Path(f) for f in files]),
            outputs={s: self._output_dir(s, *names) for s in entry["outputs"]},
            inputs=entry["inputs"],
            seconds=entry["seconds"],
            resumed=True,
            run=run,
            partition=partition,
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
