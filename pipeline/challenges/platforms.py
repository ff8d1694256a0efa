"""What each platform runs, and the files it reads back.

Codabench and CodaLab (:func:`codalab_main`): the scoring program's ``metadata`` says
``command: python3 $program/score.py $input $output``; the platform unzips the reference data in
``$input/ref``, the submission in ``$input/res``, runs the command (Codabench: ``/app/program``,
``/app/input``, ``/app/output``, from ``/app/program``) and reads ``$output/scores.json``
(Codabench) or ``$output/scores.txt`` (CodaLab, and Codabench without the JSON: YAML ``key:
value`` lines); ``detailed_results.html`` is shown where the competition enables detailed
results; a non-zero exit marks the submission Failed. Codabench's compute worker writes
``$output/metadata`` itself and fails a run whose program wrote one: none is written here.

EvalAI (:func:`evalai_evaluate`): the worker imports the evaluation script's package and calls
``evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs)``; the result is
``{"result": [{split: {column: value}}], "submission_result": {split: {...}}}``, and a problem
with the submission is an exception (EvalAI's docs: "raise an Exception with an appropriate
message"; the submission is marked Failed, its stderr holds the message).
"""

from __future__ import annotations

import html
import json
import os
import sys
import tempfile
import zipfile
from pathlib import Path

from mobeval.challenges.scoring import (
    Outcome,
    ReferenceError,
    invalid,
    reference_files,
    score_submission,
    submission_file,
)
from mobeval.errors import MobevalError

#: Where Codabench mounts the scoring step's input and output (its compute worker's volumes).
CODABENCH_INPUT = "/app/input"
CODABENCH_OUTPUT = "/app/output"


class InvalidSubmission(Exception):
    """EvalAI's failed submission: the reasons, one a line."""


def load_spec(path: str | os.PathLike) -> dict:
    """The program's ``challenge.json``."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def score_folders(spec: dict, reference: Path, submitted: Path) -> Outcome:
    """The outcome of what was submitted (a folder, a zip or a file) against the reference (a
    folder, or EvalAI's one annotation file; a zip of the folder is unpacked)."""
    with tempfile.TemporaryDirectory(prefix="mobeval-challenge-") as scratch:
        reference = _unpacked(reference, Path(scratch, "ref"), ReferenceError)
        truth, dataset = reference_files(spec, reference)
        try:
            submitted = _unpacked(submitted, Path(scratch, "res"), ValueError)
        except ValueError as error:
            return invalid(spec, [str(error)])
        if submitted.is_dir():
            found, why = submission_file(spec, submitted)
            if found is None:
                return invalid(spec, [why])
            submitted = found
        return score_submission(spec, truth, dataset, submitted)


def _unpacked(path: Path, into: Path, error: type[Exception]) -> Path:
    """``path``, or the folder its zip is unpacked into."""
    if not path.exists():
        raise error(f"{path}: no such file or folder")
    if path.is_file() and zipfile.is_zipfile(path):
        try:
            with zipfile.ZipFile(path) as archive:
                archive.extractall(into)
        except (zipfile.BadZipFile, OSError, ValueError) as failure:
            raise error(f"{path.name}: a zip that cannot be unpacked ({failure})") from failure
        return into
    return path


# --------------------------------------------------------------------------- Codabench, CodaLab


def codalab_main(spec_path: str | os.PathLike, argv: list[str]) -> int:
    """``score.py [INPUT [OUTPUT]]`` (default: Codabench's ``/app/input``, ``/app/output``):
    score ``INPUT/res`` against ``INPUT/ref``, write ``OUTPUT/scores.json``, ``scores.txt`` and
    ``detailed_results.html``; the exit status (0 scored; 1 invalid under ``on_invalid = fail``:
    no scores file; 2 the organiser's reference or options are wrong: nothing written)."""
    if len(argv) > 2:
        print("usage: score.py [INPUT [OUTPUT]]", file=sys.stderr)
        return 2
    input_dir = Path(argv[0] if argv else CODABENCH_INPUT)
    output_dir = Path(argv[1] if len(argv) > 1 else CODABENCH_OUTPUT)
    spec = load_spec(spec_path)
    try:
        outcome = score_folders(spec, input_dir / "ref", input_dir / "res")
    except MobevalError as error:
        print(f"scoring program: error: {error}", file=sys.stderr)
        return 2
    scored = outcome.valid or spec["on_invalid"] == "worst"
    files = {"detailed_results.html": detailed_results(spec, outcome)}
    if scored:
        files["scores.json"] = json.dumps(outcome.scores) + "\n"
        files["scores.txt"] = "".join(f"{k}: {v!r}\n" for k, v in outcome.scores.items())
    output_dir.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        _write_whole(output_dir / name, text)
    print(_report(spec, outcome))
    if not outcome.valid:
        print("\n".join(["invalid submission:", *outcome.reasons]), file=sys.stderr)
    return 0 if scored else 1


def _write_whole(path: Path, text: str) -> None:
    """``text`` in ``path``, whole or not at all (a temporary file renamed over it)."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def _report(spec: dict, outcome: Outcome) -> str:
    """The log's lines: the task, the submission, valid or not, each column's value."""
    head = f"mobeval {spec['mobeval']} scoring program, task {spec['task']}"
    status = "valid" if outcome.valid else "INVALID: every column at its worst"
    lines = [head, f"submission: {outcome.submission or '(none)'} ({status})"]
    lines += [f"{key}: {value!r}" for key, value in outcome.scores.items()]
    return "\n".join(lines)


def detailed_results(spec: dict, outcome: Outcome) -> str:
    """The detailed results page: the verdict, the reasons, the leaderboard's columns and every
    row of the summary."""
    e = html.escape
    rows = "".join(f"<tr><td>{e(k)}</td><td>{v!r}</td></tr>" for k, v in outcome.scores.items())
    parts = [
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>Detailed results</title></head>",
        f"<body><h1>{e(spec['task'])}: {'valid' if outcome.valid else 'invalid'} submission</h1>",
        f"<p>file: {e(outcome.submission or '(none)')}; mobeval {e(spec['mobeval'])}</p>",
    ]
    if outcome.reasons:
        items = "".join(f"<li>{e(reason)}</li>" for reason in outcome.reasons)
        parts.append(f"<h2>Why it is invalid</h2><ul>{items}</ul>")
    parts.append(f"<h2>Leaderboard</h2><table>{rows}</table>")
    if outcome.summary:
        summary = "".join(f"<tr><td>{e(m)}</td><td>{v!r}</td></tr>" for m, v in outcome.summary)
        parts.append(f"<h2>Summary</h2><table>{summary}</table>")
    return "\n".join([*parts, "</body></html>\n"])


# --------------------------------------------------------------------------- EvalAI


def evalai_evaluate(
    spec_path: str | os.PathLike,
    test_annotation_file: str,
    user_submission_file: str,
    phase_codename: str,
    **kwargs,
) -> dict:
    """EvalAI's ``evaluate``: the scores of a valid submission under the spec's split; an invalid
    one raises :class:`InvalidSubmission` with its reasons (EvalAI marks it Failed)."""
    spec = load_spec(spec_path)
    outcome = score_folders(spec, Path(test_annotation_file), Path(user_submission_file))
    print(_report(spec, outcome) + f"\nphase: {phase_codename}")
    if not outcome.valid:
        raise InvalidSubmission("\n".join(["invalid submission:", *outcome.reasons]))
    split = {spec["evalai_split"]: outcome.scores}
    return {"result": [split], "submission_result": split}
