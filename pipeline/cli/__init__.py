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

import dataclasses
import os
import sys
from pathlib import Path

from mobeval import logs
from mobeval.cli.commands import build_parser
from mobeval.cli.parser import (  # noqa: F401 (the command line's names, re-exported)
    COMMANDS,
    EXIT_BAD_INPUT,
    EXIT_CLOSED_PIPE,
    EXIT_DONE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    FORMATS,
    PARSERS,
    SCORING,
    TYPED_FLAGS,
    add_family_options,
    family_options,
    input_flags,
)
from mobeval.cli.printing import print_summaries
from mobeval.engines.cluster import SparkSettings
from mobeval.errors import ConfigError, MobevalError, OptionError
from mobeval.io import partitions
from mobeval.messages import cli_spelling, one_line, os_error_text, polars_panic


def _log(text: str) -> None:
    logs.message(text)


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
    if args.track:  # each tracker named and installed, before any work
        from mobeval.track import checked_targets

        checked_targets(args.track)
    try:
        check_options(family, options)  # before OUT is touched
        evaluation = _evaluate_checked(args, progress, family, inputs, options, chunking)
    except OptionError as error:  # named as typed: --k, not k=
        option = FAMILIES[family].by_name.get(error.option)
        flag = option.flag_name if option is not None else None
        flag = vars(args).get(TYPED_FLAGS, {}).get(error.option, flag)  # --cutoffs as typed
        raise ConfigError(error.spelled(flag or error.option)) from None
    print_summaries([(family, options, evaluation)], args.format, job=False)
    if args.track:  # with --out, the result as OUT records it, and its city's report
        from mobeval.track import track

        track([evaluation], args.track, log=_log)


def _evaluate_checked(args, progress, family, inputs, options, chunking):
    from mobeval import api

    evaluate = getattr(api, f"evaluate_{family}")
    runner = api.engine_for(args.engine, progress=progress, settings=_spark_settings(args))
    place = {"city": args.city, "model": args.model, "run": args.run}
    place["partition"] = partitions.checked_partition(args.partition, "--partition")
    place |= {"progress": progress, "engine": runner}
    place |= chunking
    if args.out is None:  # print only: no per-unit values kept, memory bounded by the chunk
        return evaluate(**inputs, **place, per_unit=False, **options)
    return evaluate(**inputs, out=args.out, **place, **options)  # recorded: api.recorded


def _spark_settings(args):
    """``--master``, ``--spark-conf``: the session the Spark engine starts."""
    return SparkSettings(args.master, dict(args.spark_conf))


@logs.scoped
def main(argv: list[str] | None = None) -> int:
    """Run one command; the exit code (see the module docstring). Every failure is one line on
    stderr, never a traceback: Ctrl-C too while the command line is read and the command's
    modules load, before the command's own handling of it is in place (exit 130)."""
    try:
        return _command(sys.argv[1:] if argv is None else argv)
    except KeyboardInterrupt:
        logs.message("mobeval: interrupted", "error")
        return EXIT_INTERRUPTED


def _command(argv: list[str]) -> int:
    # the command is the first word that is not an option (``mobeval`` takes none with a value)
    parser = build_parser(next((word for word in argv if not word.startswith("-")), ""))
    if not argv:  # ``mobeval`` alone asks what it can do: the help, as pip answers (exit 0)
        parser.print_help()
        return EXIT_DONE
    args = parser.parse_args(argv)  # usage errors: one line, SystemExit(2); --help: exit 0
    from mobeval.interrupts import interrupted, quiet_teardown, terminate_as_interrupt
    from mobeval.io.remote import url_timeout  # after --help, which needs neither
    from mobeval.limits import exhausted, memory_limits, out_of_memory

    logs.configure(getattr(args, "log_format", None))  # the errors' format from here on
    from mobeval.io.stdout import STDOUT, checked_stdout

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
    except BaseException as error:  # a Polars panic is a BaseException
        if interrupted(error):  # Ctrl-C or SIGTERM, also where a library wrapped it
            quiet_teardown()
            logs.message("mobeval: interrupted", "error")
            return EXIT_INTERRUPTED
        if not exhausted(error):
            if not isinstance(error, Exception | polars_panic()) or os.environ.get("MOBEVAL_DEBUG"):
                raise
            logs.message(
                f"mobeval: internal error: {type(error).__name__}: {one_line(error)[:500]} "
                "(a bug in mobeval, not in the input: please report it with the command line; "
                "MOBEVAL_DEBUG=1 shows the traceback)",
                "error",
            )
            return EXIT_INTERNAL
        message = out_of_memory(memory_limits(), chunked=args.command in (*SCORING, "run"))
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
    heavy = (*SCORING, "run", "warmup", "trec_eval", "ndeval")
    whole = {"compare": "out", "report": "out", "validate": "submission"}  # read whole, no chunks
    if args.command in (*heavy, *whole):  # before the libraries load, not in them
        why = shortfall(memory_limits(), whole.get(args.command))
        if why is not None:
            raise ConfigError(why)
    if args.command in SCORING:
        family = args.command
        options = family_options(args, family)
        inputs = {name: getattr(args, flag[2:]) for flag, name, _ in input_flags(family)}
        if getattr(args, "input_format", "auto") == "trec":
            inputs = _trec_inputs(family, inputs, options)
        _evaluate(args, progress, family, inputs, options)
        return EXIT_DONE
    return COMMAND_RUNNERS[args.command](args, progress)


def _validate(args, progress) -> int:
    from mobeval.validate.humob import validate_submission

    report = validate_submission(args.task, args.dataset, args.submission)
    print(report.summary())
    return EXIT_DONE if report.ok else EXIT_INVALID


def _run_job(args, progress) -> int:
    from mobeval.jobs import load_job, run_job

    partition = partitions.partition_pairs(args.partition)
    job = load_job(args.job, out=args.out, url_timeout=args.url_timeout, partition=partition)
    if args.track:  # --track replaces the job file's track, checked as the file's is
        from mobeval.track import checked_targets

        job = dataclasses.replace(job, track=checked_targets(args.track))
    given = args.log_format or job.log_format
    logs.configure(logs.chosen(given, quiet=args.quiet, by_default=True))
    evaluations = run_job(
        job,
        resume=args.resume,
        progress=progress,
        log=_log,
        engine=args.engine,
        settings=_spark_settings(args),
    )
    tasks = {(t.partition, t.city, model): t for t in job.tasks for model in t.models}
    chosen = [tasks[e.partition, e.city, e.model] for e in evaluations]
    print_summaries(
        [(t.type, t.options, e) for t, e in zip(chosen, evaluations, strict=True)], args.format
    )
    _log(f"outputs: {args.out or job.out}")
    return EXIT_DONE


def _compare(args, progress) -> int:
    from mobeval.compare import compare, fold_rows, print_comparison
    from mobeval.compare.leaderboard import leaderboard
    from mobeval.compare.printing import print_folds, print_leaderboard, print_rows

    if args.cohorts and args.view != "pairs":
        raise ConfigError(f"--cohorts compares pairs within each cohort, not --view {args.view}")
    if args.view == "folds":
        table = fold_rows(args.out, city=args.city, models=args.models, metrics=args.metrics)
        if args.format != "table":
            print_rows(table, args.format)
        else:
            print_folds(table)
        return EXIT_DONE
    options = ("city", "baseline", "pairs", "models", "metrics", "tests", "resamples")
    options += ("permutations", "seed", "correction", "family", "confidence", "intersect")
    given = {option: getattr(args, option) for option in (*options, "unit", "runs", "cohorts")}
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
    return EXIT_DONE


def _report(args, progress) -> int:
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
    return EXIT_DONE


def _trec_eval(args, progress) -> int:
    from mobeval.trec_eval import main_from_args

    return main_from_args(args)


def _ndeval(args, progress) -> int:
    from mobeval.ndeval import main_from_args

    return main_from_args(args)


def _warmup(args, progress) -> int:
    from mobeval.warmup import FAMILY_NAMES, cache_location, warmup

    families = FAMILY_NAMES if args.family == "all" else (args.family,)
    cache = cache_location()  # checked before any compilation
    for family, seconds in warmup(families).items():
        print(f"{family}: {seconds:.1f} s", file=sys.stderr)
    print(f"cache: {cache}", file=sys.stderr)
    return EXIT_DONE


def _challenge(args, progress) -> int:
    from mobeval.challenges.program import write_program
    from mobeval.challenges.tasks import challenge_spec

    given = {name: getattr(args, name) for name in ("city", "metrics", "convention", "truth")}
    given |= {"dataset": args.dataset, "submission": args.submission}
    try:
        spec = challenge_spec(
            args.task, **given, on_invalid=args.on_invalid, split=args.evalai_split
        )
    except OptionError as error:
        raise ConfigError(error.spelled(f"--{error.option}")) from None
    write_program(args.dir, spec)
    folder = Path(args.dir)
    print(f"Codabench, CodaLab: {folder / 'scoring_program'} (zip its files)")
    print(f"EvalAI: {folder / 'evaluation_script'} (zip its files)")
    print(f"leaderboards: {folder / 'codabench_leaderboard.yaml'}, ", end="")
    print(folder / "evalai_leaderboard.yaml")
    return EXIT_DONE


def _samples(args, progress) -> int:
    from mobeval.samples import copy_samples

    folders = copy_samples(args.dir)
    print(f"samples: {', '.join(map(str, folders))}", file=sys.stderr)
    return EXIT_DONE


def _track(args, progress) -> int:
    from mobeval.track import checked_targets, track

    track(args.out, checked_targets(args.to, "--to"), log=_log, where="--to")
    return EXIT_DONE


#: Each command but the scoring ones: its runner, (parsed arguments, progress) -> exit code.
COMMAND_RUNNERS = {
    "validate": _validate,
    "run": _run_job,
    "compare": _compare,
    "report": _report,
    "trec_eval": _trec_eval,
    "ndeval": _ndeval,
    "warmup": _warmup,
    "challenge": _challenge,
    "samples": _samples,
    "track": _track,
}
