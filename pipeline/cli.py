"""Command line: argument parsing only; every command calls the Python API.

Exit codes (README "Bad input"): 0 done (``validate``: the submission is valid); 1 ``validate``
only: the submission is invalid; 2 bad input or usage: a file that cannot be read or makes no
sense, a wrong option or job value, an output folder that cannot be written (read-only, full,
a file) -- one line ``mobeval: error: ...`` on stderr; 3 an internal error, a bug in mobeval and
never the input's fault (one line ``mobeval: internal error: ...``; ``MOBEVAL_DEBUG=1`` shows the
traceback); 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import copy
import math
import os
import sys
from pathlib import Path

import polars as pl

from mobeval import __version__
from mobeval.errors import ConfigError, MobevalError, OptionError
from mobeval.families import FAMILIES, FROM_PRESET, SAME
from mobeval.validate.humob import TASKS as VALIDATION_TASKS

EXIT_DONE = 0
EXIT_INVALID = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors on one line, like every other error (exit 2)."""

    def error(self, message: str):
        self.exit(EXIT_BAD_INPUT, f"mobeval: error: {message} (see '{self.prog} --help')\n")


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


def _threshold(text: str) -> float | str | None:
    """A number, ``user_mean`` or ``none`` (every rated item is relevant)."""
    if text in ("user_mean", "none"):
        return None if text == "none" else text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number, user_mean or none, not {text!r}"
        ) from None


def _mapping(text: str) -> dict[str, str]:
    pairs = {}
    for part in _name_list(text):
        ours, sep, theirs = part.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"expected ours=theirs pairs, got {part!r}")
        pairs[ours.strip()] = theirs.strip()
    return pairs


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mobeval",
        description="Exact, fast, out-of-core evaluation of mobility and recommendation models.",
    )
    parser.add_argument("--version", action="version", version=f"mobeval {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    nextloc = commands.add_parser("nextloc", help="score next-location top-K predictions")
    nextloc.add_argument("--truth", required=True, help="truth: key columns + location")
    nextloc.add_argument("--pred", required=True, help="predictions (long or list form)")
    add_family_options(
        nextloc,
        "nextloc",
        after={
            "order_by": _input_format(
                "trec: --truth is TREC qrels (each query's relevant docno is its true location), "
                "--pred a TREC run; docnos integers, the key qid"
            )
        },
    )
    _add_output_options(nextloc)

    trajectory = commands.add_parser(
        "trajectory", help="score generated trajectories: GEO-BLEU and DTW per uid and day"
    )
    trajectory.add_argument("--generated", required=True, help="uid,d,t,x,y (Parquet/CSV/CSV.gz)")
    trajectory.add_argument("--reference", required=True, help="uid,d,t,x,y of the real trips")
    add_family_options(trajectory, "trajectory")
    _add_output_options(trajectory)

    recs = commands.add_parser("recs", help="score recommendation lists against ratings")
    recs.add_argument("--ratings", required=True, help="user_id, item_id, rating (the truth)")
    recs.add_argument("--recs", required=True, help="user_id, item_id (+ rank / score): the lists")
    add_family_options(
        recs,
        "recs",
        after={
            "key": _input_format(
                "trec: --ratings is TREC qrels (qid iter docno rel), --recs a TREC run (qid Q0 "
                "docno rank score tag); auto (default): told by the file's suffix or first line"
            )
        },
    )
    _add_output_options(recs)

    logits = commands.add_parser("logits", help="score a logits matrix against integer targets")
    logits.add_argument("--logits", required=True, help="[N, C] floats: .npy or Parquet list")
    logits.add_argument(
        "--targets",
        required=True,
        help="[N] integers: .npy, Parquet, or a column of the logits' Parquet",
    )
    add_family_options(logits, "logits")
    _add_output_options(logits)

    validate = commands.add_parser("validate", help="check a HuMob / GIS Cup submission file")
    validate.add_argument(
        "--task",
        required=True,
        choices=sorted(VALIDATION_TASKS),
        help="e.g. 2025:b (GIS Cup 2025, city B) or 2024:c",
    )
    validate.add_argument("--dataset", required=True, help="city_X_challengedata.csv(.gz)")
    validate.add_argument("--submission", required=True, help="the submission csv(.gz)")

    run = commands.add_parser("run", help="run a job file: every city x model it lists")
    run.add_argument("job", help="job file (TOML)")
    run.add_argument("--resume", action="store_true", help="skip results already complete")
    run.add_argument("--out", default=None, help="output directory (overrides the job's)")
    run.add_argument(
        "--engine",
        choices=["local", "spark"],
        default="local",
        help="spark: Apache Spark (pip install 'mobeval[spark]'; see docs/spark.md)",
    )
    run.add_argument("--quiet", action="store_true", help="no progress bar")

    compare = commands.add_parser(
        "compare", help="compare models on paired per-unit values: tests, intervals, corrections"
    )
    compare.add_argument("out", help="a mobeval output folder (OUT)")
    compare.add_argument("--city", default=None, help="one city (default: every city)")
    compare.add_argument(
        "--baseline", default=None, help="compare every model with this one (default: all pairs)"
    )
    compare.add_argument(
        "--metrics", type=_name_list, default=None, help="e.g. acc@5,mrr (default: all pairable)"
    )
    compare.add_argument(
        "--tests",
        type=_name_list,
        default=["paired-t", "wilcoxon", "randomization"],
        help="paired-t,wilcoxon,randomization (default: all three)",
    )
    compare.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (1000)")
    compare.add_argument(
        "--permutations", type=int, default=10000, help="random sign flips (10000)"
    )
    compare.add_argument("--seed", type=int, default=0, help="random seed (0)")
    compare.add_argument("--correction", choices=["holm", "bonferroni", "none"], default="holm")
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
        help="day: trajectories' uid-days (default: each task's unit)",
    )
    report = commands.add_parser(
        "report", help="write the report of OUT: tables, plots, methods (LaTeX, Markdown, HTML)"
    )
    report.add_argument("out", help="a mobeval output folder (OUT)")
    report.add_argument(
        "--format",
        default="html",
        help="latex, markdown or html, or several: html,latex (default html)",
    )
    report.add_argument("--baseline", default=None, help="model compared with (default: first)")
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
    trec = commands.add_parser(
        "trec_eval",
        help="trec_eval's command line: score a TREC run against qrels (see README)",
        description="A drop-in for trec_eval: same options, measures and text output. "
        "Example: mobeval trec_eval -m all_trec -q qrels.txt run.txt",
    )
    from mobeval.trec_eval import add_arguments as add_trec_eval_arguments

    add_trec_eval_arguments(trec)
    return parser


def _input_format(help_text: str):
    """The ``--input-format`` flag (auto, trec) of a command, added after one of its options."""

    def add(command: argparse.ArgumentParser) -> None:
        command.add_argument(
            "--input-format", choices=["auto", "trec"], default="auto", help=help_text
        )

    return add


#: Text -> value of an option's flag (:attr:`mobeval.families.Flag.parse`).
PARSERS = {
    "ints": _int_list,
    "names": _name_list,
    "mapping": _mapping,
    "finite": _finite,
    "threshold": _threshold,
    "int": int,
}


def add_family_options(command: argparse.ArgumentParser, family: str, after=None) -> None:
    """The flags of every option of ``family`` that has one, from its definition
    (:mod:`mobeval.families`), in its order; ``after``: option name -> more flags added after
    that option's."""
    for option in FAMILIES[family].options:
        flag = option.flag
        if flag is None:
            continue
        if flag.switch:
            command.add_argument(flag.switch, action="store_true", help=option.help)
        else:
            settings = {"help": option.help} if option.help is not None else {}
            if flag.parse is not None:
                settings["type"] = PARSERS[flag.parse]
            if option.choices is not None:
                settings["choices"] = option.allowed()
            default = option.default if flag.default is SAME else flag.default
            default = argparse.SUPPRESS if default is FROM_PRESET else copy.copy(default)
            command.add_argument(f"--{option.name.replace('_', '-')}", default=default, **settings)
        if after and option.name in after:
            after[option.name](command)


def family_options(args: argparse.Namespace, family: str) -> dict:
    """The API options of ``family`` the command line gives (read back from its flags; a flag
    of an option that the preset sets is left out unless given)."""
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


def _add_output_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--city", default=None, help="city name for the outputs (default)")
    command.add_argument("--model", default=None, help="model name (default: predictions' name)")
    command.add_argument("--out", required=True, help="output directory")
    command.add_argument(
        "--chunk-rows", type=int, default=None, help="rows per chunk (logits: values)"
    )
    command.add_argument("--quiet", action="store_true", help="no progress bar")


def _log(text: str) -> None:
    print(text, file=sys.stderr)


def print_summaries(evaluations) -> None:
    """One table per city: metrics as rows, models as columns."""
    if not evaluations:
        return
    frames = [
        e.summary.with_columns(pl.lit(e.city).alias("city"), pl.lit(e.model).alias("model"))
        for e in evaluations
    ]
    long = pl.concat(frames)
    with pl.Config(
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
        float_precision=6,
        fmt_str_lengths=40,
    ):
        for (city,), part in long.partition_by("city", as_dict=True, maintain_order=True).items():
            table = part.pivot(on="model", index="metric", values="value", maintain_order=True)
            print(f"city={city}")
            print(table)


def _evaluate(args, progress, evaluate_name: str, inputs: dict, options: dict) -> None:
    """Run one evaluation of the API into ``args.out`` and record it in the manifest, holding the
    folder's lock throughout (an unreadable manifest stops the run before any work); print it."""
    from mobeval.engines.local import checked_chunk_rows
    from mobeval.io.writers import check_name

    for option, name in (("--city", args.city), ("--model", args.model)):
        if name is not None:
            check_name(name, option)
    chunking = {}
    if args.chunk_rows is not None:
        chunking["chunk_rows"] = checked_chunk_rows(args.chunk_rows, "--chunk-rows")
    try:
        _evaluate_checked(args, progress, evaluate_name, inputs, options, chunking)
    except OptionError as error:  # named as typed: --k, not k=
        raise ConfigError(error.spelled(_flag(args.command, error.option))) from None


def _flag(command: str, option: str) -> str:
    """The command line's flag for an API option (``order_by`` -> ``--order-by``)."""
    parser = build_parser()
    for action in parser._subparsers._group_actions[0].choices[command]._actions:
        if action.dest == option and action.option_strings:
            return action.option_strings[0]
    return "--" + option.replace("_", "-")


def _evaluate_checked(args, progress, evaluate_name, inputs, options, chunking) -> None:
    from mobeval import api
    from mobeval.io.writers import output_lock
    from mobeval.options import check_options

    check_options(evaluate_name.removeprefix("evaluate_"), options)  # before OUT is touched
    with output_lock(args.out):
        manifest = api.Manifest(Path(args.out), {"command": args.command, **options})
        evaluation = getattr(api, evaluate_name)(
            **inputs,
            out=args.out,
            city=args.city,
            model=args.model,
            progress=progress,
            **chunking,
            **options,
        )
        manifest.record(evaluation, options, args.command)
    print_summaries([evaluation])


def _one_line(text: str) -> str:
    return " ".join(line.strip() for line in str(text).splitlines() if line.strip())


def _os_error_text(error: OSError) -> str:
    """``path: reason`` of a failed file operation (``reason`` alone if it names no file)."""
    reason = error.strerror or str(error) or type(error).__name__
    if error.filename is None:
        return reason
    where = str(error.filename)
    if error.filename2 is not None:
        where += f" -> {error.filename2}"
    return f"{where}: {reason}"


def main(argv: list[str] | None = None) -> int:
    """Run one command; the exit code (see the module docstring). Every failure is one line on
    stderr, never a traceback."""
    args = build_parser().parse_args(argv)  # usage errors: one line, SystemExit(2)
    try:
        return _run(args)
    except MobevalError as error:
        message = _one_line(error)
    except OSError as error:  # the output folder or an input: read-only, full, permission...
        message = _one_line(_os_error_text(error))
    except MemoryError:
        message = "out of memory: a smaller --chunk-rows (a job's chunk_rows) needs less"
    except KeyboardInterrupt:
        print("mobeval: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (Exception, pl.exceptions.PanicException) as error:  # a panic is a BaseException
        if os.environ.get("MOBEVAL_DEBUG"):
            raise
        print(
            f"mobeval: internal error: {type(error).__name__}: {_one_line(error)[:500]} "
            "(a bug in mobeval, not in the input: please report it with the command line; "
            "MOBEVAL_DEBUG=1 shows the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    print(f"mobeval: error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def _run(args) -> int:
    progress = False if getattr(args, "quiet", False) else None
    if args.command == "nextloc":
        options = family_options(args, "nextloc")
        inputs = {"truth": args.truth, "predictions": args.pred}
        if args.input_format == "trec":
            from mobeval.io.trec import TrecSource

            inputs = {
                "truth": TrecSource.open(args.truth, "qrels", task="nextloc"),
                "predictions": TrecSource.open(args.pred, "run", task="nextloc"),
            }
            if options["key"] == ["sample_id"]:
                options["key"] = ["qid"]
        _evaluate(args, progress, "evaluate_nextloc", inputs, options)
    elif args.command == "trajectory":
        options = family_options(args, "trajectory")
        inputs = {"reference": args.reference, "generated": args.generated}
        _evaluate(args, progress, "evaluate_trajectory", inputs, options)
    elif args.command == "recs":
        options = family_options(args, "recs")
        inputs = {"ratings": args.ratings, "recs": args.recs}
        if args.input_format == "trec":
            from mobeval.io.trec import TrecSource

            inputs = {
                "ratings": TrecSource.open(args.ratings, "qrels"),
                "recs": TrecSource.open(args.recs, "run"),
            }
        _evaluate(args, progress, "evaluate_recs", inputs, options)
    elif args.command == "logits":
        options = family_options(args, "logits")
        inputs = {"logits": args.logits, "targets": args.targets}
        _evaluate(args, progress, "evaluate_logits", inputs, options)
    elif args.command == "validate":
        from mobeval.validate.humob import validate_submission

        report = validate_submission(args.task, args.dataset, args.submission)
        print(report.summary())
        return EXIT_DONE if report.ok else EXIT_INVALID
    elif args.command == "run":
        from mobeval.jobs import load_job, run_job

        job = load_job(args.job, out=args.out)
        if args.engine == "spark":
            from mobeval.engines.spark import run_job_spark, spark_session

            evaluations = run_job_spark(
                job, spark_session(), out=args.out, resume=args.resume, log=_log
            )
            if job.report is not None and (Path(job.out) / "manifest.json").is_file():
                from mobeval.report_job import run_report

                run_report(job, log=_log)  # a local OUT only (the local engine: in run_job)
        else:
            evaluations = run_job(job, resume=args.resume, progress=progress, log=_log)
        print_summaries(evaluations)
        print(f"outputs: {args.out or job.out}", file=sys.stderr)
    elif args.command == "compare":
        from mobeval.compare import compare, print_comparison

        options = ("city", "baseline", "metrics", "tests", "resamples", "permutations", "seed")
        options += ("correction", "confidence", "intersect", "unit")
        table = compare(args.out, write=True, log=_log, **{o: getattr(args, o) for o in options})
        print_comparison(table)
        print(f"outputs: {Path(args.out) / 'compare'}", file=sys.stderr)
    elif args.command == "report":
        from mobeval.report import write_reports

        written = write_reports(
            args.out,
            args.format,
            output=args.output,
            baseline=args.baseline,
            city=args.city,
            plots=not args.no_plots,
            compute_compare=not args.no_compare,
        )
        for path in written:
            print(f"report: {path}", file=sys.stderr)
    elif args.command == "trec_eval":
        from mobeval.trec_eval import main_from_args

        return main_from_args(args)
    return EXIT_DONE


if __name__ == "__main__":
    sys.exit(main())
