"""The choices a report's reader makes, defined once: what ``mobeval report`` takes as flags, a job
file's ``[report]`` as keys and :class:`mobeval.report.Report` as keywords, under the same names.

Each :class:`ReportOption` holds its name, the kind of job value it is
(:data:`mobeval.job_values.VALUE_KINDS`), its help text and the check of its value;
:func:`checked_choices` checks what a face was given (a ConfigError naming ``--<name>`` and the
value). Whether a named metric, model or baseline exists is a question about an OUT, answered by
the report itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mobeval.compare.names import P_COLUMNS
from mobeval.errors import ConfigError
from mobeval.job_values import VALUE_KINDS


def _names(value: object) -> str | None:
    if not value or any(not str(name).strip() or "," in str(name) for name in value):
        return "expected one or more names, e.g. acc@1,mrr"
    return None


def _test(value: object) -> str | None:
    return None if value in P_COLUMNS else f"choose among {', '.join(P_COLUMNS)}"


def _alpha(value: object) -> str | None:
    return None if 0 < value < 1 else "the significance level must lie between 0 and 1"


def _text(value: object) -> str | None:
    return None if value.strip() else "expected some text"


def _anything(value: object) -> str | None:
    return None


@dataclass(frozen=True)
class ReportOption:
    """One choice: ``name`` (the flag is ``--name``, the job key and keyword ``name``), ``kind``
    (a key of :data:`~mobeval.job_values.VALUE_KINDS`), ``help``, and ``check`` (the problem
    with a value of the right kind, or None)."""

    name: str
    kind: str
    help: str
    check: Callable[[object], str | None] = _anything


REPORT_OPTIONS = (
    ReportOption("metrics", "strings", "the metrics shown, in this order (default: all)", _names),
    ReportOption("models", "strings", "the models shown, in this order (default: all)", _names),
    ReportOption("baseline", "string", "the model the others are compared with (default: first)"),
    ReportOption(
        "test",
        "string",
        f"the test behind the markers: {', '.join(P_COLUMNS)} (default: the first one run)",
        _test,
    ),
    ReportOption(
        "alpha",
        "number",
        "significance level: dagger p < alpha, double dagger p < alpha/5 (default 0.05)",
        _alpha,
    ),
    ReportOption("title", "string", "the document's title", _text),
    ReportOption("caption", "string", "the tables' caption, before each table's own", _text),
    ReportOption(
        "transpose",
        "boolean",
        "models as rows (default: chosen by the table's width)",
    ),
    ReportOption(
        "letters",
        "boolean",
        "a compact letter display on every value: Tukey's HSD over every model of the city; "
        "models sharing a letter are not significantly different at alpha",
    ),
    ReportOption(
        "leaderboard",
        "boolean",
        "a ranked table per metric under each city's tables: rank, model, mean (± sd), letters "
        "(Tukey's HSD over every model, as mobeval compare --view leaderboard)",
    ),
    ReportOption(
        "comparisons",
        "boolean",
        "a table per metric of each model against the baseline: difference with its CI, d_z, "
        "r_rb (Wilcoxon), the p-value and the corrected one behind the marker",
    ),
    ReportOption(
        "std",
        "boolean",
        "every mean as mean ± sd over its units (population sd, ddof 0, as ranx's return_std; "
        "default: the mean alone)",
    ),
    ReportOption(
        "fragment",
        "boolean",
        "LaTeX: the tables alone, no preamble, for \\input in a paper (its preamble loads "
        "booktabs, threeparttable, rotating); --format latex only, no plots",
    ),
)
OPTIONS_BY_NAME = {option.name: option for option in REPORT_OPTIONS}
#: The significance level when none is given.
DEFAULT_ALPHA = 0.05


def split_names(value: str) -> list[str]:
    """``"acc@1, mrr"`` -> ``["acc@1", "mrr"]`` (the command line's comma-separated lists)."""
    return [name.strip() for name in value.split(",") if name.strip()] or [value]


def checked_choices(values: dict) -> dict:
    """The given choices (None: not given) checked: each value's kind, then its value; a
    ConfigError names ``--<name>`` and the value. Lists may be given as comma-separated text."""
    checked = {}
    for name, value in values.items():
        option = OPTIONS_BY_NAME[name]
        if value is None:
            continue
        if option.kind == "strings" and isinstance(value, str):
            value = split_names(value)
        if isinstance(value, tuple):
            value = list(value)
        words, is_kind = VALUE_KINDS[option.kind]
        if not is_kind(value):
            raise ConfigError(f"--{name}: {value!r}: expected {words}")
        problem = option.check(value)
        if problem is not None:
            raise ConfigError(f"--{name}: {value!r}: {problem}")
        checked[name] = value
    return checked
