"""The command line's parser: every command's arguments, a family's options derived from its
definition (:mod:`mobeval.families`) and read back from the parsed flags, each command's help
and example. Building it loads no Polars and no kernels (``mobeval --help`` is instant)."""

from __future__ import annotations

import argparse
import copy
import difflib
import textwrap
from typing import TYPE_CHECKING

from mobeval import logs
from mobeval.cli.values import PARSERS, spark_conf
from mobeval.io import partitions

if TYPE_CHECKING:
    pass

#: The exit codes (:mod:`mobeval.cli` says when each is given).
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
    "report": "mobeval report out/nextloc_sample --format markdown,html --baseline markov "
    "--no-plots",
    "trec_eval": "mobeval trec_eval -m all_trec -q data_samples/trec/qrels.txt "
    "data_samples/trec/run.txt.gz",
    "ndeval": "mobeval ndeval -traditional data_samples/web2012/qrels-for-ndeval.txt.gz "
    "data_samples/web2012/ql-cata-filtered.txt.gz",
    "warmup": "NUMBA_CACHE_DIR=/opt/mobeval-cache mobeval warmup --family nextloc",
    "challenge": "mobeval challenge --task gis-cup --city a --truth reference_a.csv.gz gis_cup_a",
    "samples": "mobeval samples mobeval-samples && cd mobeval-samples && "
    "mobeval run jobs/nextloc_sample.toml",
    "track": "mobeval track out/nextloc_sample --to mlflow:sqlite:///mlruns.db",
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
    "trec_eval": "score a TREC run against qrels with trec_eval's options, output and values",
    "ndeval": "score a run with ndeval's diversity measures over subtopic qrels",
    "warmup": "compile the Numba kernels into their cache now, so that a first run starts at once",
    "challenge": "write a challenge's scoring program: Codabench, CodaLab and EvalAI",
    "samples": "copy the sample data and job files every documented example runs on",
    "track": "log OUT's results to MLflow or Weights & Biases (docs/trackers.md)",
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


def input_flags(command: str) -> list[tuple[str, str, str]]:
    """(flag, API argument, help) of each input flag of a scoring ``command``."""
    return [row[1:] for row in INPUT_FLAGS if row[0] == command]


class CommandLineParser(argparse.ArgumentParser):
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
    if command == "challenge":
        from mobeval.challenges.tasks import CHALLENGES

        parts += _named_lines("tasks (--task):", {k: c.help for k, c in CHALLENGES.items()})
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


def command_parser(commands, name: str, family: str | None = None, **settings):
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


def input_format(help_text: str):
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
TYPED_FLAGS = "_typed_flags"


class _StoreSpelled(argparse._StoreAction):
    """Store the value, and which of the option's flags gave it (``--cutoffs`` or ``--k``), so
    that a message names the flag the user typed."""

    def __call__(self, parser, namespace, values, option_string=None):
        super().__call__(parser, namespace, values, option_string)
        vars(namespace).setdefault(TYPED_FLAGS, {})[self.dest] = option_string


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


def add_format_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        metavar="FORMAT",
        help="what is printed: table (one per city), markdown, csv (city, model, metric, value, "
        "n) or json (one object: summaries and resolved options); default: table",
    )


def add_output_options(command: argparse.ArgumentParser) -> None:
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
    partitions.add_option(command)
    command.add_argument(
        "--chunk-rows",
        type=int,
        default=None,
        help=f"rows per chunk, the memory budget (logits: values; default: {DEFAULT_CHUNK_ROWS})",
    )
    add_engine_option(command)
    add_url_timeout_option(command)
    command.add_argument("--quiet", action="store_true", help="no progress bar")
    logs.add_option(command)
    add_format_option(command)
    add_track_option(command)


def add_track_option(command: argparse.ArgumentParser, flag: str = "--track") -> None:
    """``--track`` (a scoring command's, ``run``'s) or ``--to`` (``mobeval track``'s, required)."""
    command.add_argument(
        flag,
        action="append",
        required=flag == "--to",
        default=None,
        metavar="TARGET",
        help="log each result (summary, options, inputs, report) to mlflow[:URI] or "
        "wandb[:[ENTITY/]PROJECT]; repeat for several (docs/trackers.md)"
        + ("; replaces the job file's track" if flag == "--track" else ""),
    )


def add_url_timeout_option(command: argparse.ArgumentParser) -> None:
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


def add_engine_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--engine",
        choices=["local", "spark"],
        default="local",
        help="local, or spark: Apache Spark (pip install 'mobeval[spark]'; docs/spark.md); "
        "default: local",
    )
    command.add_argument(
        "--master",
        default=None,
        metavar="URL",
        help="with --engine spark: the master of the session mobeval starts (spark://HOST:7077, "
        "yarn, k8s://..., local[4]; a job file's [spark] master)",
    )
    command.add_argument(
        "--spark-conf",
        type=spark_conf,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="with --engine spark: a Spark setting of that session (repeatable; e.g. "
        "spark.executor.memory=4g, spark.pyspark.python=./env/bin/python; over a job file's "
        "[spark] conf)",
    )
