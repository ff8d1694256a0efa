"""The tasks a scoring program can be written for, as data: the family that scores a submission,
the convention, the validator's rules (HuMob / GIS Cup) and the leaderboard's columns, the
primary (ranking) one first.

The spec of one program (:func:`challenge_spec`) is a plain dict, written beside the program as
``challenge.json`` and read back by it (:mod:`mobeval.challenges.platforms`).
"""

from __future__ import annotations

from dataclasses import dataclass

from mobeval import __version__
from mobeval.errors import ConfigError, OptionError
from mobeval.metrics import lower_is_better
from mobeval.validate.tasks import TASKS as VALIDATION_TASKS

#: What a program does with a submission that fails validation (``--on-invalid``):
#: ``worst``: the leaderboard's columns get their worst values (:data:`WORST`) and the reasons go
#: to ``detailed_results.html`` and the log, the program exits 0 (it ranks last: Codabench shows a
#: failed run's missing scores as n/a, which its leaderboards have ranked first, codalab/codabench
#: issues 1284, 2470); ``fail``: no scores file, the reasons in the log and the detailed results,
#: exit 1 (the platform marks the submission Failed).
ON_INVALID = ("worst", "fail")

#: The worst value a column gets (with the sign that ranks it last): the largest whole number
#: Codabench's score column holds (``DecimalField(max_digits=20, decimal_places=10)``), so the
#: value is stored as written on every platform.
WORST = 9_999_999_999.0


@dataclass(frozen=True)
class Challenge:
    """One named task: its family, convention, the validator's year (trajectory tasks: the
    HuMob / GIS Cup rules, ``mobeval validate``'s), the leaderboard's default columns (primary
    first) and a one-line help."""

    family: str
    help: str
    metrics: tuple[str, ...]
    convention: str | None = None
    year: str | None = None


CHALLENGES = {
    "humob-geobleu": Challenge(
        "trajectory",
        "HuMob 2024 ranked by GEO-BLEU (N = 3), DTW beside; the 2024 validator",
        ("geobleu", "dtw"),
        "humob2024",
        "2024",
    ),
    "humob-dtw": Challenge(
        "trajectory",
        "HuMob 2024 ranked by DTW (lower first), GEO-BLEU beside; the 2024 validator",
        ("dtw", "geobleu"),
        "humob2024",
        "2024",
    ),
    "gis-cup": Challenge(
        "trajectory",
        "GIS Cup 2025 (yahoojapan/geobleu d9efb0f) ranked by GEO-BLEU (N = 5), DTW beside; "
        "the 2025 validator",
        ("geobleu", "dtw"),
        "humob2025",
        "2025",
    ),
    "nextloc": Challenge(
        "nextloc",
        "a next-location leaderboard: truth sample_id, location; submissions sample_id, "
        "location, score (--metrics, --convention)",
        ("acc@1", "acc@5", "mrr"),
    ),
    "recs": Challenge(
        "recs",
        "a recommendation leaderboard: ratings user_id, item_id, rating; submissions "
        "user_id, item_id, score (--metrics, --convention)",
        ("ndcg@10", "map@10"),
    ),
}


def sorting(metric: str) -> str:
    """``asc`` where a lower value is better (:func:`mobeval.metrics.lower_is_better`), else
    ``desc``: Codabench's column sorting."""
    return "asc" if lower_is_better(metric) else "desc"


def worst(metric: str) -> float:
    """The value that ranks a column's entry last: ``+WORST`` where lower is better, ``-WORST``
    where higher is."""
    return WORST if lower_is_better(metric) else -WORST


def challenge_spec(
    task: str,
    *,
    city: str | None = None,
    metrics: list[str] | None = None,
    convention: str | None = None,
    truth: str,
    dataset: str | None = None,
    submission: str | None = None,
    on_invalid: str = "worst",
    split: str = "test_split",
) -> dict:
    """The spec of a scoring program for ``task`` (a key of :data:`CHALLENGES`), checked: the
    options as the family checks them (:func:`mobeval.options.check_options`), the validator's
    task (trajectory: ``<year>:<city>``), the file names plain names.

    ``truth``: the reference file's name in the platform's reference folder; ``dataset``: the
    city's challenge data there (trajectory; default: the truth, whose rows are the steps to
    predict); ``submission``: the file a submission must hold (default: its only file);
    ``split``: EvalAI's dataset split the scores go to."""
    from mobeval.options import check_options

    if task not in CHALLENGES:
        raise ConfigError(f"unknown task {task!r}; known: {', '.join(CHALLENGES)}")
    challenge = CHALLENGES[task]
    if on_invalid not in ON_INVALID:
        raise ConfigError(f"on_invalid must be one of {list(ON_INVALID)}, got {on_invalid!r}")
    for what, name in (("truth", truth), ("dataset", dataset), ("submission", submission)):
        if name is not None and (not name or "/" in name or name in (".", "..")):
            raise ConfigError(f"{what}: a file name in its folder, not {name!r}")
    validator = None
    if challenge.family == "trajectory":
        if metrics is not None:
            raise ConfigError(f"{task}'s columns are its own ({', '.join(challenge.metrics)})")
        if city is None:
            raise ConfigError(f"{task} needs the city: --city (a..d or test)")
        validator = f"{challenge.year}:{city.lower()}"
        if validator not in VALIDATION_TASKS:
            known = sorted(k.partition(":")[2] for k in VALIDATION_TASKS if k[:4] == challenge.year)
            raise ConfigError(f"{task}: no city {city!r} in {challenge.year}; known: {known}")
    elif city is not None or dataset is not None:
        raise ConfigError(f"{task} takes no city or dataset: they are the trajectory tasks'")
    metrics = list(metrics or challenge.metrics)
    for metric in metrics:
        if metric.endswith("@k"):
            raise OptionError("metrics", metrics, f"name each cutoff ({metric[:-1]}10), not @k")
    options = {"metrics": metrics}
    if convention or challenge.convention:
        options["convention"] = convention or challenge.convention
    check_options(challenge.family, options)
    return {
        "task": task,
        "family": challenge.family,
        "validator": validator,
        "options": options,
        "columns": [{"key": m, "sorting": sorting(m)} for m in metrics],
        "truth": truth,
        "dataset": dataset,
        "submission": submission,
        "on_invalid": on_invalid,
        "evalai_split": split,
        "mobeval": __version__,
    }
