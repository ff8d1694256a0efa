"""Command line: argument parsing only; every command calls the Python API.

Exit codes (README "Bad input"): 0 done (``validate``: the submission is valid); 1 ``validate``
only: the submission is invalid; 2 bad input or usage: a file that cannot be read or makes no
sense, a wrong option or job value, an output folder that cannot be written (read-only, full,
a file) -- one line ``mobeval: error: ...`` on stderr; 3 an internal error, a bug in mobeval and
never the input's fault (one line ``mobeval: internal error: ...``; ``MOBEVAL_DEBUG=1`` shows the
traceback); 130 interrupted (Ctrl-C, SIGTERM); 141 standard output's reader stopped reading
(``mobeval ... | head``): silent, the work done to its end first. Standard output is otherwise
written whole or the command fails: a write to it that fails or ends short (a full disk, a file
size limit) is exit 2.
"""

from __future__ import annotations

import argparse
import copy
import csv
import difflib
import json
import math
import os
import re
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

from mobeval import __version__, logs
from mobeval.errors import ConfigError, MobevalError, OptionError
from mobeval.messages import cli_spelling, one_line, os_error_text, polars_panic

if TYPE_CHECKING:
    import polars as pl
EXIT_DONE = 0
EXIT_INVALID = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130
#: 128 + SIGPIPE: what a shell reports for ``git log | head`` or ``yes | head``.
EXIT_CLOSED_PIPE = 141

#: What a command prints (``--format``): a table per city, the same as Markdown, the summaries as
#: CSV rows (city, model, metric, value, n), or one JSON object with the resolved options.
FORMATS = ("table", "markdown", "csv", "json")

#: One example per command (its ``--help`` ends with it), on the shipped sample data.
EXAMPLES = {
    "nextloc": "mobeval nextloc --truth data_samples/nextloc/tky/truth.parquet "
    "--pred data_samples/nextloc/tky/markov.parquet --k 1,5,10 --convention libcity",
    "trajectory": "mobeval trajectory --reference data_samples/humob/reference_test.csv.gz "
    "--generated data_samples/humob/weekly_repeat.csv.gz --city test --format json",
    "recs": "mobeval recs --ratings data_samples/recs/ratings.parquet "
    "--recs data_samples/recs/mf.parquet --k 5,10 --out out/recs",
    "logits": "mobeval logits --logits data_samples/logits/gru.npy "
    "--targets data_samples/logits/targets.npy --percent --format markdown",
    "validate": "mobeval validate --task 2025:test --dataset "
    "data_samples/humob/city_test_challengedata.csv.gz "
    "--submission data_samples/humob/weekly_repeat.csv.gz",
    "run": "mobeval run jobs/nextloc_sample.toml --resume",
    "compare": "mobeval compare out/nextloc_sample --city tky --baseline markov",
    "report": "mobeval report out/nextloc_sample --format markdown,html --baseline markov",
    "trec_eval": "mobeval trec_eval -m all_trec -q data_samples/trec/qrels.txt "
    "data_samples/trec/run.txt.gz",
    "warmup": "NUMBA_CACHE_DIR=/opt/mobeval-cache mobeval warmup --family nextloc",
}


#: The scoring commands, one per family, and their help.
SCORING = {
    "nextloc": "score next-location top-K predictions",
    "trajectory": "score generated trajectories: GEO-BLEU and DTW per uid and day",
    "recs": "score recommendation lists against ratings",
    "logits": "score a logits matrix against integer targets",
}
#: Every command and its help (``mobeval --help`` lists them, in this order).
COMMANDS = {
    **SCORING,
    "validate": "check a HuMob / GIS Cup submission file",
    "run": "run a job file: every city x model it lists",
    "compare": "compare models on paired per-unit values: tests, intervals, corrections",
    "report": "write the report of OUT: tables, plots, methods (LaTeX, Markdown, HTML)",
    "trec_eval": "trec_eval's command line: score a TREC run against qrels (see README)",
    "warmup": "compile and cache the kernels now, so that the first run does not wait (README)",
}
#: The input flags of the scoring commands, in ``--help`` order: (command, flag, the API
#: argument it gives, help).
INPUT_FLAGS = (
    ("nextloc", "--truth", "truth", "truth: key columns + location"),
    ("nextloc", "--pred", "predictions", "predictions (long or list form)"),
    ("trajectory", "--generated", "generated", "uid,d,t,x,y (Parquet/CSV/CSV.gz)"),
    ("trajectory", "--reference", "reference", "uid,d,t,x,y of the real trips"),
    ("recs", "--ratings", "ratings", "user_id, item_id, rating (the truth)"),
    ("recs", "--recs", "recs", "user_id, item_id (+ rank / score): the lists"),
    ("logits", "--logits", "logits", "[N, C] floats: .npy or Parquet list"),
    (
        "logits",
        "--targets",
        "targets",
        "[N] integers: .npy, Parquet, or a column of the logits' Parquet",
    ),
)
#: The scoring commands that read TREC files too (``--input-format trec``): the option whose
#: flag ``--input-format`` follows, and its help.
TREC_INPUTS = {
    "nextloc": (
        "order_by",
        "trec: --truth is TREC qrels (each query's relevant docno is its true location), "
        "--pred a TREC run; docnos integers, the key qid",
    ),
    "recs": (
        "key",
        "trec: --ratings is TREC qrels (qid iter docno rel), --recs a TREC run (qid Q0 "
        "docno rank score tag); auto: told by the file's suffix or first line",
    ),
}


def _input_flags(command: str) -> list[tuple[str, str, str]]:
    """(flag, API argument, help) of each input flag of a scoring ``command``."""
    return [row[1:] for row in INPUT_FLAGS if row[0] == command]


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors on one line, like every other error (exit 2), that point to
    the ``--help`` of the command they concern; no abbreviations (``--k`` is never read as
    ``--key``: an option is what it spells, or unknown)."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)  # subcommands' parsers are made by this class
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        self.exit(EXIT_BAD_INPUT, f"mobeval: error: {message} (see '{self.prog} --help')\n")

    def parse_args(self, args=None, namespace=None):
        """The arguments; an unknown option is named by the subcommand's parser (its ``--help``,
        the option it resembles), not by ``mobeval``'s."""
        parsed, unknown = self.parse_known_args(args, namespace)
        if unknown:
            command = self._command_parser(getattr(parsed, "command", None)) or self
            command.error(_unrecognized(unknown, command))
        return parsed

    def _command_parser(self, name: str | None) -> argparse.ArgumentParser | None:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                return action.choices.get(name)
        return None


def _unrecognized(unknown: list[str], parser: argparse.ArgumentParser) -> str:
    """argparse's message for ``unknown`` arguments, with the option the first one resembles."""
    message = f"unrecognized arguments: {' '.join(unknown)}"
    first = unknown[0].partition("=")[0]
    if first.startswith("-"):
        close = difflib.get_close_matches(first, list(parser._option_string_actions), n=1)
        if close:
            message += f" (did you mean {close[0]}?)"
    return message


def _named_lines(title: str, lines: dict[str, str]) -> list[str]:
    """``title``, then one ``name  text`` line per entry (wrapped to 78 columns)."""
    width = max(map(len, lines)) + 4
    parts = [title]
    for name, text in lines.items():
        parts += textwrap.wrap(
            text, 78, initial_indent=f"  {name:<{width - 2}}", subsequent_indent=" " * width
        )
    return [*parts, ""]


def _validation_tasks() -> dict[str, str]:
    """The validator's rule sets, one line each, from its table."""
    from mobeval.validate.tasks import TASKS as VALIDATION_TASKS

    return {
        name: f"uids {spec.uid_min}..{spec.uid_max}, days {spec.d_min}..{spec.d_max}"
        + ("" if ":" in name else f" (as 2025:{name})")
        for name, spec in VALIDATION_TASKS.items()
    }


def _epilog(command: str, family: str | None = None) -> str:
    """The end of a command's ``--help``: its family's presets (the validator's tasks), one line
    each, and an example, wrapped to 78 columns (printed as is:
    :class:`argparse.RawDescriptionHelpFormatter`)."""
    parts = []
    if family is not None:
        from mobeval.families import FAMILIES

        if FAMILIES[family].preset_help:
            parts += _named_lines("presets (--convention):", FAMILIES[family].preset_help)
    if command == "validate":
        parts += _named_lines("tasks (--task):", _validation_tasks())
    parts.append("example:")
    parts += textwrap.wrap(
        EXAMPLES[command],
        78,
        initial_indent="  ",
        subsequent_indent="      ",
        break_on_hyphens=False,
        break_long_words=False,
    )
    return "\n".join(parts)


def _command(commands, name: str, family: str | None = None, **settings):
    """A subcommand whose ``--help`` ends with its presets and its example (:func:`_epilog`)."""
    help = COMMANDS[name]
    return commands.add_parser(
        name,
        help=help,
        description=textwrap.fill(
            settings.pop("description", help[0].upper() + help[1:] + "."), 78
        ),
        epilog=_epilog(name, family),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        **settings,
    )


def _finite(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, not {text!r}")
    return value


def _int_list(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected integers like 1,5,10, got {text!r}") from None


def _name_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


_PARAMETER_LIST_TAIL = re.compile(r"^[-+0-9.=]+$")


def _metric_list(text: str) -> list[str]:
    """Metric names apart at commas, except the commas of a name's own parameters: inside
    brackets (ir_measures' ``SetF(rel=1, beta=0.5)``, ``nDCG(gains={0:1,1:4})``) and within
    trec_eval's ``-m`` lists after a dot (``P.5,10``, ``ndcg.1=3,2=9``: a part of numbers and
    ``=`` goes on the name before it)."""
    names: list[str] = []
    depth, start = 0, 0
    for i, char in enumerate(text + ","):
        depth += (char in "([{") - (char in ")]}")
        if char == "," and depth <= 0:
            part = text[start:i].strip()
            if names and "." in names[-1] and _PARAMETER_LIST_TAIL.match(part):
                names[-1] += "," + part
            elif part:
                names.append(part)
            start = i + 1
    return names


def _threshold(text: str) -> float | str | None:
    """A number, ``user_mean`` or ``none`` (every rated item is relevant)."""
    if text in ("user_mean", "none"):
        return None if text == "none" else text
    try:
        return _finite(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"expected a finite number, user_mean or none, not {text!r}"
        ) from None


def _mapping(text: str) -> dict[str, str]:
    pairs = {}
    for part in _name_list(text):
        ours, sep, theirs = part.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"expected ours=theirs pairs, got {part!r}")
        pairs[ours.strip()] = theirs.strip()
    return pairs


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of the command line. ``command``: the only command whose arguments are added
    (the one being run); the others are listed with their help, their arguments and the
    modules that define them (a family's options, the report's, trec_eval's) not loaded, so
    that ``mobeval --help`` and argument parsing load no Polars and no kernels. None: every
    command's arguments."""
    parser = _Parser(
        prog="mobeval",
        description="Exact, fast, out-of-core evaluation of mobility and recommendation models.",
    )
    parser.add_argument("--version", action="version", version=f"mobeval {__version__}")
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", title="commands (mobeval COMMAND --help)"
    )

    for name, help_text in COMMANDS.items():
        if command is None or command == name:
            _ARGUMENTS.get(name, _scoring_arguments)(commands, name)
        else:
            commands.add_parser(name, help=help_text)
    return parser


def _scoring_arguments(commands, family: str) -> None:
    command = _command(commands, family, family)
    for flag, _, input_help in _input_flags(family):
        command.add_argument(flag, required=True, help=input_help)
    after = None
    if family in TREC_INPUTS:
        option, trec_help = TREC_INPUTS[family]
        after = {option: _input_format(trec_help)}
    add_family_options(command, family, after=after)
    _add_output_options(command)


def _validate_arguments(commands, name: str) -> None:
    from mobeval.validate.tasks import TASKS as VALIDATION_TASKS

    validate = _command(commands, name)
    validate.add_argument(
        "--task",
        required=True,
        choices=sorted(VALIDATION_TASKS),
        metavar="TASK",
        help="the year and city of the rules (tasks: below)",
    )
    validate.add_argument("--dataset", required=True, help="city_X_challengedata.csv(.gz)")
    validate.add_argument("--submission", required=True, help="the submission csv(.gz)")


def _run_arguments(commands, name: str) -> None:
    run = _command(commands, name)
    run.add_argument("job", help="job file (TOML)")
    run.add_argument("--resume", action="store_true", help="skip results already complete")
    run.add_argument("--out", default=None, help="output directory (overrides the job's)")
    _add_engine_option(run)
    _add_url_timeout_option(run)
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    logs.add_option(run)
    _add_format_option(run)


def _compare_arguments(commands, name: str) -> None:
    compare = _command(commands, name)
    compare.add_argument("out", help="a mobeval output folder (OUT)")
    compare.add_argument("--city", default=None, help="one city (default: every city)")
    compare.add_argument(
        "--baseline", default=None, help="compare every model with this one (default: all pairs)"
    )
    compare.add_argument(
        "--pairs",
        default=None,
        help="all, baseline (--baseline, else the first model, vs each other) or m1:m2,... "
        "(default: baseline with --baseline, else all)",
    )
    compare.add_argument(
        "--models", type=_name_list, default=None, help="the models compared (default: all)"
    )
    compare.add_argument(
        "--metrics", type=_metric_list, default=None, help="e.g. acc@5,mrr (default: all pairable)"
    )
    compare.add_argument(
        "--tests",
        type=_name_list,
        default=["paired-t", "wilcoxon", "randomization"],
        help="any of paired-t, wilcoxon, randomization, tukey (Tukey's HSD over every model of "
        "a city), ttest-ind, ranksums (ClayRS's Ttest and Wilcoxon, unpaired), comma-separated; "
        "default: paired-t,wilcoxon,randomization",
    )
    compare.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (1000)")
    compare.add_argument(
        "--permutations", type=int, default=10000, help="random sign flips (10000)"
    )
    compare.add_argument("--seed", type=int, default=0, help="random seed (0)")
    compare.add_argument(
        "--correction",
        choices=["holm", "bonferroni", "bh", "by", "none"],
        default="holm",
        help="holm, bonferroni, bh (Benjamini-Hochberg), by (Benjamini-Yekutieli) or none, over "
        "each --family (default: holm; Tukey's p-values are left as they are)",
    )
    compare.add_argument(
        "--family",
        choices=["all", "metric"],
        default="all",
        help="the p-values corrected together: all (a city's metrics x pairs x tests) or metric "
        "(one metric's pairs x tests); default: all",
    )
    compare.add_argument(
        "--view",
        choices=["pairs", "leaderboard", "folds"],
        default="pairs",
        help="pairs (a table per model pair), leaderboard (per metric, the models ranked, "
        "with letters: models sharing one are not significantly different) or folds (per model, "
        "each run's city value and their mean, NaN runs left out, as ClayRS's MetricEvaluator; "
        "no tests); default: pairs",
    )
    compare.add_argument(
        "--alpha",
        type=_finite,
        default=0.05,
        help="significance level of the leaderboard's letters (0.05)",
    )
    compare.add_argument(
        "--format",
        choices=["table", "csv", "json"],
        default="table",
        help="what is printed: table, csv or json (the rows of the view); default: table",
    )
    compare.add_argument(
        "--confidence", type=_finite, default=0.95, help="of the bootstrap interval (0.95)"
    )
    compare.add_argument(
        "--intersect", action="store_true", help="compare the units common to both models"
    )
    compare.add_argument(
        "--unit",
        choices=["default", "uid", "day"],
        default="default",
        help="default (each task's unit), uid, or day: trajectories' uid-days",
    )
    compare.add_argument(
        "--runs",
        choices=["mean", "separate"],  # compare.runs.RUNS, spelt here: --help imports no Polars
        default="mean",
        help="a model's runs (seeds, folds): mean (taken together: tests over the per-unit means "
        "across runs, or over the runs as units when units differ between runs; sd over runs "
        "beside) or separate (each run a model of its own); default: mean",
    )


def _report_arguments(commands, name: str) -> None:
    report = _command(commands, name)
    report.add_argument("out", help="a mobeval output folder (OUT)")
    report.add_argument(
        "--format",
        default="html",
        help="latex, markdown or html, or several: html,latex (default html)",
    )
    from mobeval.report.options import REPORT_OPTIONS

    for option in REPORT_OPTIONS:  # the same names as a job's [report] and Report's keywords
        if option.kind == "boolean":
            report.add_argument(
                f"--{option.name}", action="store_true", default=None, help=option.help
            )
        else:
            kind = float if option.kind == "number" else str
            report.add_argument(f"--{option.name}", type=kind, default=None, help=option.help)
    report.add_argument("--city", default=None, help="one city (default: every city)")
    report.add_argument(
        "--output", default=None, help="the report file (default OUT/report/report.<ext>)"
    )
    report.add_argument(
        "--no-plots", action="store_true", help="tables and methods only (no matplotlib needed)"
    )
    report.add_argument(
        "--no-compare",
        action="store_true",
        help="significance markers only from OUT/compare (never computed)",
    )


def _trec_eval_arguments(commands, name: str) -> None:
    trec = _command(
        commands,
        name,
        description="A drop-in for trec_eval: same options, measures and text output.",
    )
    from mobeval.trec_eval.arguments import add_arguments as add_trec_eval_arguments

    add_trec_eval_arguments(trec)
    _add_url_timeout_option(trec)


def _warmup_arguments(commands, name: str) -> None:
    from mobeval.warmup import FAMILY_NAMES

    warmup = _command(
        commands,
        name,
        description="Compile each family's Numba kernels into the cache (NUMBA_CACHE_DIR, else "
        "the kernels' __pycache__ folder) by scoring tiny inputs, for container images and Spark "
        "executors.",
    )
    warmup.add_argument(
        "--family",
        choices=[*FAMILY_NAMES, "all"],
        default="all",
        help="the family to warm up (default: all)",
    )


#: What adds each command's arguments (a scoring command's: :func:`_scoring_arguments`).
_ARGUMENTS = {
    "validate": _validate_arguments,
    "run": _run_arguments,
    "compare": _compare_arguments,
    "report": _report_arguments,
    "trec_eval": _trec_eval_arguments,
    "warmup": _warmup_arguments,
}


def _input_format(help_text: str):
    """The ``--input-format`` flag (auto, trec) of a command, added after one of its options."""

    def add(command: argparse.ArgumentParser) -> None:
        command.add_argument(
            "--input-format",
            choices=["auto", "trec"],
            default="auto",
            metavar="FORMAT",
            help=f"{help_text} (one of: auto, trec; default: auto)",
        )

    return add


#: Text -> value of an option's flag (:attr:`mobeval.families.Flag.parse`).
PARSERS = {
    "ints": _int_list,
    "names": _name_list,
    "metrics": _metric_list,
    "mapping": _mapping,
    "finite": _finite,
    "threshold": _threshold,
    "int": int,
}


class _RemovedValue:
    """The text as is, unless it is a value the option no longer takes (``removed``: value ->
    what to use instead): argparse then says so, before it lists the choices."""

    def __init__(self, removed: dict[str, str]) -> None:
        self.removed = removed

    def __call__(self, text: str) -> str:
        if text in self.removed:
            raise argparse.ArgumentTypeError(f"{text!r} was removed: {self.removed[text]}")
        return text


def _default_text(option, default) -> str | None:
    """How ``--help`` shows an option's default (None: the help text says it)."""
    from mobeval.families import FROM_PRESET

    if default is FROM_PRESET or (option.preset and default is None):
        return "the convention's"
    if default is None or default == {}:
        return None
    if isinstance(default, list | tuple):
        return ",".join(str(v) for v in default)
    return str(default)


#: The namespace attribute where :class:`_StoreSpelled` keeps each option's flag as typed.
_TYPED = "_typed_flags"


class _StoreSpelled(argparse._StoreAction):
    """Store the value, and which of the option's flags gave it (``--cutoffs`` or ``--k``), so
    that a message names the flag the user typed."""

    def __call__(self, parser, namespace, values, option_string=None):
        super().__call__(parser, namespace, values, option_string)
        vars(namespace).setdefault(_TYPED, {})[self.dest] = option_string


def add_family_options(command: argparse.ArgumentParser, family: str, after=None) -> None:
    """The flags of every option of ``family`` that has one, from its definition
    (:mod:`mobeval.families`), in its order, each help ending with its choices and its default;
    ``after``: option name -> more flags added after that option's."""
    from mobeval.families import FAMILIES, FROM_PRESET, SAME

    for option in FAMILIES[family].options:
        flag = option.flag
        if flag is None:
            continue
        if flag.switch:
            command.add_argument(flag.switch, action="store_true", help=option.help)
        else:
            default = option.default if flag.default is SAME else flag.default
            notes = []
            settings = {}
            if flag.parse is not None:
                settings["type"] = PARSERS[flag.parse]
            elif option.removed:
                settings["type"] = _RemovedValue(option.removed)
            if option.choices is not None:
                settings["choices"] = option.allowed()
                settings["metavar"] = option.name.upper()
                notes.append("one of: " + ", ".join(map(str, option.allowed())))
            if _default_text(option, default) is not None:
                notes.append(f"default: {_default_text(option, default)}")
            text = option.help or ""
            if notes:
                text = f"{text} ({'; '.join(notes)})" if text else "; ".join(notes)
            default = argparse.SUPPRESS if default is FROM_PRESET else copy.copy(default)
            if option.alias_flags:
                settings["action"] = _StoreSpelled
            command.add_argument(
                option.flag_name,
                *option.alias_flags,
                dest=option.name,
                default=default,
                help=text,
                **settings,
            )
        if after and option.name in after:
            after[option.name](command)


def family_options(args: argparse.Namespace, family: str) -> dict:
    """The API options of ``family`` the command line gives (read back from its flags; a flag
    of an option that the preset sets is left out unless given)."""
    from mobeval.families import FAMILIES

    options = {}
    for option in FAMILIES[family].options:
        flag = option.flag
        if flag is None:
            continue
        if flag.switch:
            given = getattr(args, flag.switch.removeprefix("--").replace("-", "_"))
            options[option.name] = flag.on if given else option.default
        elif option.name in args:
            options[option.name] = getattr(args, option.name)
    return options


def _add_format_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        metavar="FORMAT",
        help="what is printed: table (one per city), markdown, csv (city, model, metric, value, "
        "n) or json (one object: summaries and resolved options); default: table",
    )


def _add_output_options(command: argparse.ArgumentParser) -> None:
    from mobeval.options import DEFAULT_CHUNK_ROWS

    command.add_argument(
        "--out",
        default=None,
        help="write per-unit values, summary and manifest under this folder (default: none, "
        "the summary is printed only)",
    )
    command.add_argument(
        "--city",
        default=None,
        help="city name (default: the name of the folder the truth lies in, e.g. tky for "
        "data/tky/truth.parquet)",
    )
    command.add_argument("--model", default=None, help="model name (default: the file's name)")
    command.add_argument(
        "--run",
        default=None,
        help="which run of the model this is (a seed, a fold): written as model=<m>/run=<r>; "
        "compare and report take a model's runs together (default: none)",
    )
    command.add_argument(
        "--chunk-rows",
        type=int,
        default=None,
        help=f"rows per chunk, the memory budget (logits: values; default: {DEFAULT_CHUNK_ROWS})",
    )
    _add_engine_option(command)
    _add_url_timeout_option(command)
    command.add_argument("--quiet", action="store_true", help="no progress bar")
    logs.add_option(command)
    _add_format_option(command)


def _add_url_timeout_option(command: argparse.ArgumentParser) -> None:
    from mobeval.io.remote import DEFAULT_URL_TIMEOUT

    command.add_argument(
        "--url-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="how long an input at a URL (http, s3...) may keep the command waiting, to connect "
        "and for each next piece of data, before it fails naming the URL "
        f"(default: {DEFAULT_URL_TIMEOUT:g}; a job file's url_timeout)",
    )


def _add_engine_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--engine",
        choices=["local", "spark"],
        default="local",
        help="local, or spark: Apache Spark (pip install 'mobeval[spark]'; docs/spark.md); "
        "default: local",
    )


def _log(text: str) -> None:
    logs.message(text)


# --------------------------------------------------------------------------- what is printed


def _is_count(task: str, metric: str) -> bool:
    from mobeval.families import FAMILIES

    return metric in FAMILIES[task].counts


def _number(value: float, count: bool) -> int | float:
    """A summary value as printed: a count as an integer, anything else as the float it is."""
    return int(value) if count and math.isfinite(value) else value


def _json_number(value: float, count: bool) -> int | float | str | None:
    """JSON has no NaN or infinity: NaN is null, an infinity the string "inf" / "-inf"."""
    if math.isnan(value):
        return None
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return _number(value, count)


def _stds(summary: pl.DataFrame) -> list[float | None]:
    """The summary's ``std`` per row (None where it has none: a count, a summary written before
    mobeval kept it)."""
    if "std" not in summary.columns:
        return [None] * summary.height
    return summary["std"].to_list()


def _json_text(document: dict) -> str:
    """``document`` indented, each list of plain values on one line (``"k": [1, 5, 10]``)."""
    text = json.dumps(document, indent=2)
    flat = re.compile(r"\[\n\s*([^\[\]{}]*?)\n\s*\]")
    return flat.sub(lambda m: "[" + re.sub(r",\n\s*", ", ", m.group(1)) + "]", text)


def _result_object(task: str, options: dict, evaluation) -> dict:
    """One result as JSON: where it is, the options as the run used them, the summary."""
    from mobeval.families import resolved_options

    summary = evaluation.summary
    return {
        "task": task,
        "city": evaluation.city,
        "model": evaluation.model,
        **({} if evaluation.run is None else {"run": evaluation.run}),
        "options": resolved_options(task, options),
        "summary": {
            m: _json_number(v, _is_count(task, m))
            for m, v in zip(summary["metric"], summary["value"], strict=True)
        },
        "n": dict(zip(summary["metric"], summary["n"], strict=True)),
        "std": {
            m: _json_number(sd, False)
            for m, sd in zip(summary["metric"], _stds(summary), strict=True)
            if sd is not None
        },
        "outputs": evaluation.outputs or None,
        "seconds": round(evaluation.seconds, 3),
        "resumed": evaluation.resumed,  # read back from OUT by run --resume, not computed
    }


def print_summaries(
    results: list[tuple[str, dict, object]], fmt: str = "table", *, job: bool = True
) -> None:
    """Print (task, options as typed, evaluation) results as ``fmt`` (:data:`FORMATS`): table
    and markdown give one table per city (metrics as rows, models as columns; counts as
    integers, the rest with 6 decimals; a table wider than the terminal is split into tables of
    the models that fit, each with the metric column, markdown's is kept whole to paste), csv one
    row per city, model and metric, json one object: ``{"results": [...]}`` for a ``job``, the
    one result's object for a single command."""
    import polars as pl

    from mobeval.compare.printing import fitted, whole_tables

    if fmt == "json":
        objects = [_result_object(*result) for result in results]
        print(_json_text({"results": objects} if job else objects[0]))
        return
    rows = [
        (e.city, e.label, metric, _number(value, _is_count(task, metric)), n, sd)
        for task, _, e in results
        for metric, value, n, sd in zip(
            *(e.summary[c] for c in ("metric", "value", "n")), _stds(e.summary), strict=True
        )
    ]
    if fmt == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(["city", "model", "metric", "value", "n", "std"])
        writer.writerows(rows)
        return
    if not rows:
        return
    shown = [
        (city, model, metric, str(v) if isinstance(v, int) else f"{v:.6f}")
        for city, model, metric, v, _, _ in rows
    ]
    long = pl.DataFrame(shown, schema=["city", "model", "metric", "value"], orient="row")
    style = "MARKDOWN" if fmt == "markdown" else "UTF8_FULL_CONDENSED"
    with whole_tables(fmt_str_lengths=200, tbl_formatting=style):
        cities = long.partition_by("city", as_dict=True, maintain_order=True).items()
        for i, ((city,), part) in enumerate(cities):
            table = part.pivot(on="model", index="metric", values="value", maintain_order=True)
            if fmt == "markdown":  # a paragraph, then the table whole, to paste
                print(("\n" if i else "") + f"**city={city}**\n")
                print(table.fill_null(""))
                continue
            print(f"city={city}")
            for piece in fitted(table.fill_null(""), ["metric"]):  # the terminal's width
                print(piece)


# --------------------------------------------------------------------------- single commands


def _evaluate(args, progress, family: str, inputs: dict, options: dict) -> None:
    """Run one evaluation of the API and print it. With ``--out``, into that folder, recorded
    in its manifest, holding the folder's lock throughout (an unreadable manifest stops the run
    before any work); without it, in memory, nothing written."""
    from mobeval.families import FAMILIES
    from mobeval.io.writers import check_name
    from mobeval.options import check_options, checked_chunk_rows

    for option, name in (("--city", args.city), ("--model", args.model), ("--run", args.run)):
        if name is not None:
            check_name(name, option)
    chunking = {}
    if args.chunk_rows is not None:
        chunking["chunk_rows"] = checked_chunk_rows(args.chunk_rows, "--chunk-rows")
    try:
        check_options(family, options)  # before OUT is touched
        evaluation = _evaluate_checked(args, progress, family, inputs, options, chunking)
    except OptionError as error:  # named as typed: --k, not k=
        option = FAMILIES[family].by_name.get(error.option)
        flag = option.flag_name if option is not None else None
        flag = vars(args).get(_TYPED, {}).get(error.option, flag)  # --cutoffs as typed
        raise ConfigError(error.spelled(flag or error.option)) from None
    print_summaries([(family, options, evaluation)], args.format, job=False)


def _evaluate_checked(args, progress, family, inputs, options, chunking):
    from mobeval import api

    evaluate = getattr(api, f"evaluate_{family}")
    runner = api.engine_for(args.engine, progress=progress)
    place = {"city": args.city, "model": args.model, "run": args.run}
    place |= {"progress": progress, "engine": runner}
    place |= chunking
    if args.out is None:  # print only: no per-unit values kept, memory bounded by the chunk
        return evaluate(**inputs, **place, per_unit=False, **options)
    return evaluate(**inputs, out=args.out, **place, **options)  # recorded: api.recorded


@logs.scoped
def main(argv: list[str] | None = None) -> int:
    """Run one command; the exit code (see the module docstring). Every failure is one line on
    stderr, never a traceback."""
    argv = sys.argv[1:] if argv is None else argv
    # the command is the first word that is not an option (``mobeval`` takes none with a value)
    parser = build_parser(next((word for word in argv if not word.startswith("-")), ""))
    if not argv:  # ``mobeval`` alone asks what it can do: the help, as pip answers (exit 0)
        parser.print_help()
        return EXIT_DONE
    args = parser.parse_args(argv)  # usage errors: one line, SystemExit(2); --help: exit 0
    from mobeval.interrupts import interrupted, terminate_as_interrupt
    from mobeval.io.remote import url_timeout  # after --help, which needs neither
    from mobeval.limits import fit_process, memory_limits, out_of_memory

    fit_process()  # before NumPy, Arrow and Numba load
    logs.configure(getattr(args, "log_format", None))  # the errors' format from here on
    from mobeval.io.writers import STDOUT, checked_stdout

    try:
        with (
            terminate_as_interrupt(),
            checked_stdout(),  # stdout whole, or exit 2
            url_timeout(getattr(args, "url_timeout", None), "--url-timeout"),
        ):
            return _run(args)
    except MobevalError as error:
        message = one_line(error)
        if args.command in SCORING:  # what a message suggests, as the flag to type
            message = cli_spelling(message, args.command)
    except OSError as error:  # the output folder or an input: read-only, full, permission...
        if isinstance(error, BrokenPipeError) and error.filename == STDOUT:
            return EXIT_CLOSED_PIPE  # the reader has what it wanted: nothing more to say
        message = one_line(os_error_text(error))
    except MemoryError:
        message = out_of_memory(memory_limits())
    except BaseException as error:  # a Polars panic is a BaseException
        if interrupted(error):  # Ctrl-C or SIGTERM, also where a library wrapped it
            logs.message("mobeval: interrupted", "error")
            return EXIT_INTERRUPTED
        if not isinstance(error, Exception | polars_panic()) or os.environ.get("MOBEVAL_DEBUG"):
            raise
        logs.message(
            f"mobeval: internal error: {type(error).__name__}: {one_line(error)[:500]} "
            "(a bug in mobeval, not in the input: please report it with the command line; "
            "MOBEVAL_DEBUG=1 shows the traceback)",
            "error",
        )
        return EXIT_INTERNAL
    logs.message(f"mobeval: error: {message}", "error")
    return EXIT_BAD_INPUT


def _trec_inputs(family: str, inputs: dict, options: dict) -> dict:
    """``--input-format trec``: the truth read as TREC qrels, the model as a TREC run; for
    next-location scoring, the key the files' ``qid`` unless ``--key`` names another."""
    from mobeval.families import FAMILIES
    from mobeval.io.trec import TrecSource

    truth, model = FAMILIES[family].truth, FAMILIES[family].model
    if family == "nextloc" and options["key"] == FAMILIES[family].option("key").flag.default:
        options["key"] = ["qid"]
    return {
        truth: TrecSource.open(inputs[truth], "qrels", task=family),
        model: TrecSource.open(inputs[model], "run", task=family),
    }


def _run(args) -> int:
    from mobeval.limits import memory_limits, shortfall

    progress = False if getattr(args, "quiet", False) else None
    if args.command in (*SCORING, "run", "warmup", "trec_eval") and shortfall(memory_limits()):
        raise ConfigError(shortfall(memory_limits()))  # before the libraries load, not in them
    if args.command in SCORING:
        family = args.command
        options = family_options(args, family)
        inputs = {name: getattr(args, flag[2:]) for flag, name, _ in _input_flags(family)}
        if getattr(args, "input_format", "auto") == "trec":
            inputs = _trec_inputs(family, inputs, options)
        _evaluate(args, progress, family, inputs, options)
    elif args.command == "validate":
        from mobeval.validate.humob import validate_submission

        report = validate_submission(args.task, args.dataset, args.submission)
        print(report.summary())
        return EXIT_DONE if report.ok else EXIT_INVALID
    elif args.command == "run":
        from mobeval.jobs import load_job, run_job

        job = load_job(args.job, out=args.out, url_timeout=args.url_timeout)
        given = args.log_format or job.log_format
        logs.configure(logs.chosen(given, quiet=args.quiet, by_default=True))
        evaluations = run_job(
            job, resume=args.resume, progress=progress, log=_log, engine=args.engine
        )
        tasks = {(t.city, model): t for t in job.tasks for model in t.models}
        print_summaries(
            [(tasks[e.city, e.model].type, tasks[e.city, e.model].options, e) for e in evaluations],
            args.format,
        )
        _log(f"outputs: {args.out or job.out}")
    elif args.command == "compare":
        from mobeval.compare import compare, fold_rows, print_comparison
        from mobeval.compare.leaderboard import leaderboard
        from mobeval.compare.printing import print_folds, print_leaderboard, print_rows

        if args.view == "folds":
            table = fold_rows(args.out, city=args.city, models=args.models, metrics=args.metrics)
            if args.format != "table":
                print_rows(table, args.format)
            else:
                print_folds(table)
            return EXIT_DONE
        options = ("city", "baseline", "pairs", "models", "metrics", "tests", "resamples")
        options += ("permutations", "seed", "correction", "family", "confidence", "intersect")
        given = {option: getattr(args, option) for option in (*options, "unit", "runs")}
        view = (lambda t: leaderboard(t, alpha=args.alpha)) if args.view == "leaderboard" else None
        table = compare(args.out, write=True, log=_log, check=view, **given)
        table = table if view is None else view(table)
        if args.format != "table":
            print_rows(table, args.format)
        elif args.view == "leaderboard":
            print_leaderboard(table)
        else:
            print_comparison(table)
        print(f"outputs: {Path(args.out) / 'compare'}", file=sys.stderr)
    elif args.command == "report":
        from mobeval.report import write_reports
        from mobeval.report.options import REPORT_OPTIONS

        written = write_reports(
            args.out,
            args.format,
            output=args.output,
            **{option.name: getattr(args, option.name) for option in REPORT_OPTIONS},
            city=args.city,
            log=_log,
            plots=not args.no_plots,
            compute_compare=not args.no_compare,
        )
        for path in written:
            print(f"report: {path}", file=sys.stderr)
    elif args.command == "trec_eval":
        from mobeval.trec_eval import main_from_args

        return main_from_args(args)
    elif args.command == "warmup":
        from mobeval.warmup import FAMILY_NAMES, cache_location, warmup

        families = FAMILY_NAMES if args.family == "all" else (args.family,)
        cache = cache_location()  # checked before any compilation
        for family, seconds in warmup(families).items():
            print(f"{family}: {seconds:.1f} s", file=sys.stderr)
        print(f"cache: {cache}", file=sys.stderr)
    return EXIT_DONE


if __name__ == "__main__":
    sys.exit(main())
