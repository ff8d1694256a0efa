"""One submission scored for a challenge: found in what the participant sent, validated, scored
by the family's ``evaluate_*``, or told invalid with every reason.

Whose fault: a reference file that is missing or unreadable, or an option the family refuses,
is the organiser's (:class:`ReferenceError`, an OptionError: the program stops, exit 2, no
score); everything else that goes wrong with a submission is the submission's (an invalid
:class:`Outcome`: no file, several files, the validator's errors, a file mobeval cannot read as
the task's input, a metric that is not a number).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from mobeval.challenges.tasks import worst
from mobeval.errors import InputError, MobevalError, OptionError

#: The entries of a submission folder that are never the submission: hidden files, what macOS
#: zips carry, and the ``metadata`` file CodaLab writes beside a prediction.
IGNORED = ("__MACOSX", "metadata")


class ReferenceError(MobevalError):
    """The organiser's reference data is missing or cannot be read: no submission can be
    scored."""


@dataclass
class Outcome:
    """``valid``; ``scores``: each leaderboard column's value (its worst when invalid);
    ``reasons``: why the submission is invalid; ``summary``: every row of mobeval's summary
    (metric, value: the counts too); ``submission``: the file scored."""

    valid: bool
    scores: dict[str, float]
    reasons: list[str] = field(default_factory=list)
    summary: list[tuple[str, float]] = field(default_factory=list)
    submission: str | None = None


def invalid(spec: dict, reasons: list[str], submission: Path | None = None) -> Outcome:
    """The outcome of a submission that failed: every column at its worst."""
    scores = {c["key"]: worst(c["key"]) for c in spec["columns"]}
    return Outcome(
        False, scores, reasons, submission=None if submission is None else submission.name
    )


def submission_file(spec: dict, folder: Path) -> tuple[Path | None, str | None]:
    """(the submission's file, None), or (None, why there is none): the file named by the spec
    anywhere under ``folder``, else its only file (:data:`IGNORED` and hidden entries aside)."""
    files = sorted(
        path
        for path in folder.rglob("*")
        if path.is_file()
        and not any(
            part.startswith(".") or part in IGNORED for part in path.relative_to(folder).parts
        )
    )
    names = ", ".join(str(p.relative_to(folder)) for p in files[:10])
    wanted = spec["submission"]
    if wanted is not None:
        found = [p for p in files if p.name == wanted]
        if len(found) == 1:
            return found[0], None
        if not found:
            return None, f"the submission holds no file named {wanted}" + (
                f" (it holds: {names})" if files else " (it holds no file)"
            )
        return None, f"the submission holds {len(found)} files named {wanted}: submit one"
    if not files:
        return None, "the submission holds no file"
    if len(files) > 1:
        return None, f"the submission holds {len(files)} files ({names}): submit one"
    return files[0], None


def reference_files(spec: dict, reference: Path) -> tuple[Path, Path]:
    """(truth, the validator's dataset) in the reference folder as the spec names them; a single
    file given instead of a folder (EvalAI's annotation file) is both."""
    if reference.is_file():
        return reference, reference
    truth = reference / spec["truth"]
    dataset = reference / (spec["dataset"] or spec["truth"])
    for path in {truth, dataset}:
        if not path.is_file():
            held = sorted(p.name for p in reference.iterdir()) if reference.is_dir() else []
            raise ReferenceError(
                f"{path}: no such reference file (the reference folder holds: "
                f"{', '.join(held) or 'nothing'})"
            )
    return truth, dataset


def _names_reference(error: InputError, references: tuple[Path, ...]) -> bool:
    return error.path is not None and any(
        os.path.abspath(error.path) == os.path.abspath(path) for path in references
    )


def score_submission(spec: dict, truth: Path, dataset: Path, submission: Path) -> Outcome:
    """Validate ``submission`` (trajectory tasks: the HuMob / GIS Cup validator against
    ``dataset``'s steps, :func:`mobeval.validate.humob.validate_submission`), then score it
    against ``truth`` with the spec's options (the summary alone: ``per_unit=False``)."""
    from mobeval import api
    from mobeval.validate.humob import validate_submission

    evaluate = {
        "trajectory": api.evaluate_trajectory,
        "nextloc": api.evaluate_nextloc,
        "recs": api.evaluate_recs,
    }[spec["family"]]
    try:
        if spec["validator"] is not None:
            report = validate_submission(spec["validator"], dataset, submission)
            if not report.ok:
                return invalid(spec, report.summary().splitlines(), submission)
        result = evaluate(
            truth,
            submission,
            city="challenge",
            model="submission",
            per_unit=False,
            progress=False,
            **spec["options"],
        )
    except OptionError:
        raise
    except InputError as error:
        if _names_reference(error, (truth, dataset)):
            raise ReferenceError(str(error)) from error
        return invalid(spec, [str(error)], submission)
    except MobevalError as error:
        return invalid(spec, [str(error)], submission)
    summary = [(str(m), float(v)) for m, v in result.summary.select("metric", "value").iter_rows()]
    values = dict(summary)
    missing = [c["key"] for c in spec["columns"] if c["key"] not in values]
    if missing:
        raise OptionError("metrics", missing, f"not in the summary (its rows: {', '.join(values)})")
    scores = {c["key"]: values[c["key"]] for c in spec["columns"]}
    not_numbers = [key for key, value in scores.items() if not math.isfinite(value)]
    if not_numbers:
        reasons = [f"{key} is {scores[key]}: not a number to rank" for key in not_numbers]
        outcome = invalid(spec, reasons, submission)
        outcome.summary = summary
        return outcome
    return Outcome(True, scores, summary=summary, submission=submission.name)
