"""The files ``mobeval challenge`` writes into DIR, whole or not at all (staged beside DIR, then
renamed into place):

* ``scoring_program/``: Codabench's and CodaLab's scoring program (zip it for the bundle):
  ``score.py``, ``metadata`` (``command: python3 $program/score.py $input $output``) and
  ``challenge.json`` (the spec: :func:`mobeval.challenges.tasks.challenge_spec`);
* ``evaluation_script/``: EvalAI's (``__init__.py`` importing ``evaluate`` from ``main.py``,
  and ``challenge.json``);
* ``codabench_leaderboard.yaml``, ``evalai_leaderboard.yaml``: the leaderboard's columns for
  Codabench's ``competition.yaml`` and EvalAI's ``challenge_config.yaml``.

The programs import mobeval (the same version: the scores are its numbers): the platform's
image must have it installed (Codabench's ``docker_image``, EvalAI's ``__init__.py`` install).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from mobeval.errors import ConfigError

_IMPORT = """\
try:
    from mobeval.challenges.platforms import {function}
except ImportError as error:  # the image lacks mobeval: say which one it needs
    raise ImportError(
        "this scoring program needs mobeval {version} installed "
        f"(pip install mobeval=={version}): {{error}}"
    ) from None
"""

SCORE_PY = '''\
"""Scoring program for the task {task}, written by mobeval {version} (mobeval challenge).

Codabench and CodaLab run it as its metadata says: python3 $program/score.py $input $output
(INPUT/ref: the reference data, INPUT/res: the submission; scores.json, scores.txt and
detailed_results.html written to OUTPUT). Without arguments: /app/input and /app/output.
"""

import sys
from pathlib import Path

{imports}
if __name__ == "__main__":
    sys.exit(codalab_main(Path(__file__).with_name("challenge.json"), sys.argv[1:]))
'''

METADATA = """\
command: python3 $program/score.py $input $output
description: {task} scoring program (mobeval {version}); needs mobeval installed.
"""

MAIN_PY = '''\
"""EvalAI evaluation script for the task {task}, written by mobeval {version} (mobeval
challenge). An invalid submission raises an exception naming every reason."""

from pathlib import Path

{imports}
SPEC = Path(__file__).with_name("challenge.json")


def evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs):
    return evalai_evaluate(
        SPEC, test_annotation_file, user_submission_file, phase_codename, **kwargs
    )
'''

INIT_PY = "from .main import evaluate  # noqa: F401 (EvalAI's worker calls it)\n"


def _codabench_leaderboard(spec: dict) -> str:
    """The ``leaderboards:`` section of Codabench's ``competition.yaml`` (YAML; JSON strings)."""
    lines = [
        f"# Codabench competition.yaml: the leaderboard of {spec['task']} (mobeval challenge)",
        "leaderboards:",
        f"  - title: {json.dumps(spec['task'])}",
        "    key: main",
        "    columns:",
    ]
    for index, column in enumerate(spec["columns"]):
        lines += [
            f"      - title: {json.dumps(column['key'])}",
            f"        key: {json.dumps(column['key'])}",
            f"        index: {index}",
            f"        sorting: {column['sorting']}",
            "        precision: 6",
        ]
    return "\n".join(lines) + "\n"


def _evalai_leaderboard(spec: dict) -> str:
    """The ``leaderboard:`` schema of EvalAI's ``challenge_config.yaml`` and the order of the
    primary column (``is_leaderboard_order_descending`` of each phase split)."""
    keys = [c["key"] for c in spec["columns"]]
    schema = {"labels": keys, "default_order_by": keys[0]}
    descending = spec["columns"][0]["sorting"] == "desc"
    return "\n".join(
        [
            f"# EvalAI challenge_config.yaml: the leaderboard of {spec['task']}",
            "leaderboard:",
            "  - id: 1",
            f"    schema: {json.dumps(schema)}",
            f"# each challenge_phase_splits entry: is_leaderboard_order_descending: {descending}",
            f"# dataset split codename the scores go to: {spec['evalai_split']}",
            "",
        ]
    )


def program_files(spec: dict) -> dict[str, str]:
    """Each file's path under DIR and its text."""
    fields = {"task": spec["task"], "version": spec["mobeval"]}
    spec_text = json.dumps(spec, indent=2) + "\n"
    return {
        "scoring_program/score.py": SCORE_PY.format(
            **fields, imports=_IMPORT.format(function="codalab_main", version=spec["mobeval"])
        ),
        "scoring_program/metadata": METADATA.format(**fields),
        "scoring_program/challenge.json": spec_text,
        "evaluation_script/__init__.py": INIT_PY,
        "evaluation_script/main.py": MAIN_PY.format(
            **fields, imports=_IMPORT.format(function="evalai_evaluate", version=spec["mobeval"])
        ),
        "evaluation_script/challenge.json": spec_text,
        "codabench_leaderboard.yaml": _codabench_leaderboard(spec),
        "evalai_leaderboard.yaml": _evalai_leaderboard(spec),
    }


def write_program(directory: str | os.PathLike, spec: dict) -> list[Path]:
    """Write the programs of ``spec`` into ``directory`` (a new folder, or an empty one), whole
    or not at all; the paths written."""
    directory = Path(directory)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise ConfigError(f"{directory}: exists and is not an empty folder; name a new one")
    files = program_files(spec)
    parent = directory.absolute().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=parent))
        try:
            for name, text in files.items():
                path = staging / name
                path.parent.mkdir(exist_ok=True)
                path.write_text(text, encoding="utf-8")
            if directory.exists():
                directory.rmdir()
            staging.rename(directory)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    except OSError as error:
        raise ConfigError(f"{directory}: cannot be written ({error.strerror or error})") from None
    return [directory / name for name in files]
