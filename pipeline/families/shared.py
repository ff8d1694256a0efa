"""Option builders every family shares: cutoffs, metrics, column maps, input checks and the
population bootstrap."""

from __future__ import annotations

from collections.abc import Sequence

from mobeval.option_types import Flag, Option

#: The help of every family's ``convention``: its presets are listed with the family's help.
PRESET_HELP = "a reference system's conventions (presets: below), each overridable"


def cutoffs_option(help: str, **settings) -> Option:
    """The cutoffs of a family's ranking metrics (next location, logits: of those named @k;
    recommendations: of those named without @k), 1, 5 and 10 unless given.

    One name in every family: ``k`` (``--k``, ``k = [...]``, ``k=[...]``), as the metric names
    write a cutoff (``acc@k``, ``ndcg@10``) and as ranx, LibCity and ClayRS call it.
    ``cutoffs``, the recommendation family's first spelling, stays an alias everywhere
    (``--cutoffs``, ``cutoffs = [...]``, ``cutoffs=[...]``), so that scripts written for either
    family work in both."""
    flag = Flag("ints", [1, 5, 10])
    return Option(
        "k", "cutoffs", (1, 5, 10), help, flag=flag, defines=False, aliases=("cutoffs",), **settings
    )


def metrics_option(default: tuple | None, help: str, **settings) -> Option:
    """The metrics a family computes (``default`` None: the help text says which)."""
    flag = Flag("metrics") if default is None else Flag("metrics", list(default))
    return Option("metrics", "strings", default, help, flag=flag, defines=False, **settings)


def columns_option(ours: Sequence[str], inputs: tuple[str, str], example: str, key: bool) -> Option:
    """Our column names -> the user's, in both inputs or in one (``truth.``, ``pred.`` or the
    input's own name first: :mod:`mobeval.io.columns`); ``inputs``: the family's own names of
    the truth and the predictions; ``key``: whether the key's columns are mapped too."""
    prefixes = ", ".join(
        " or ".join(f"{name}." for name in dict.fromkeys(names))
        for names in (("truth", inputs[0]), ("pred", inputs[1]))
    )
    help = (
        f"your column names as ours=yours, in both inputs, or in one ({prefixes}), e.g. "
        f"{example}; ours: {', '.join(ours)}{' and the key' if key else ''}"
    )
    return Option("columns", "mapping", None, help, flag=Flag("mapping", {}), defines=False)


def error_unless_option(name: str, help: str, choices, switch: str, on: str, **settings) -> Option:
    """An input check that fails ("error") unless its command-line ``switch`` (a flag without a
    value) sets it to ``on``."""
    flag = Flag(switch=switch, on=on)
    return Option(name, "string", "error", help, choices, flag=flag, **settings)


def population_bootstrap_options(metrics: str, units: str) -> tuple[Option, ...]:
    """The Poisson bootstrap interval of a family's population ``metrics`` over its ``units``
    (:func:`mobeval.kernels.resampling.poisson_weights`): resamples, seed, confidence."""
    return (
        Option(
            "population_resamples",
            "integer",
            0,
            f"{metrics}: resamples of a Poisson bootstrap of {units}, giving <metric>:low and "
            "<metric>:high rows (0: none)",
            flag=Flag("int"),
        ),
        Option(
            "population_seed", "integer", 0, "the seed of --population-resamples", flag=Flag("int")
        ),
        Option(
            "population_confidence",
            "number",
            0.95,
            "the confidence of --population-resamples' percentile interval",
        ),
    )


def cohort_options(units: str, example: str) -> tuple[Option, ...]:
    """Every metric sliced by cohort (:mod:`mobeval.tasks.cohorts`): the unit -> cohort table,
    and what a unit it lacks becomes. Named apart from the recommendation family's
    ``user_groups`` (delta gap's and pop ratio's groups of users by popularity ratio)."""
    return (
        Option(
            "cohorts",
            "string",
            None,
            f"a table of {units} -> cohort (a file with the key's columns, e.g. {example}, and "
            "cohort): every metric also per cohort, in the section cohorts",
            defines=False,
            path=True,
        ),
        Option(
            "cohort_missing",
            "string",
            "error",
            "a unit the --cohorts table lacks: error, or unassigned (a cohort of its own)",
            ("error", "unassigned"),
            python="choice",
            defines=False,
        ),
    )
