"""The command line's parser (:func:`build_parser`) and the arguments of each command: a family's
scoring command (its inputs, its family's options), and validate, run, compare, report,
trec_eval, ndeval, warmup, challenge, samples, track."""

from __future__ import annotations

import argparse

from mobeval import __version__, logs
from mobeval.cli.parser import (
    COMMANDS,
    TREC_INPUTS,
    CommandLineParser,
    add_engine_option,
    add_family_options,
    add_format_option,
    add_output_options,
    add_track_option,
    add_url_timeout_option,
    command_parser,
    input_flags,
    input_format,
)
from mobeval.cli.values import finite, metric_list, name_list
from mobeval.io import partitions


def _validate_arguments(commands, name: str) -> None:
    from mobeval.validate.tasks import TASKS as VALIDATION_TASKS

    validate = command_parser(commands, name)
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
    run = command_parser(commands, name)
    run.add_argument("job", help="job file (TOML)")
    run.add_argument("--resume", action="store_true", help="skip results already complete")
    run.add_argument("--out", default=None, help="output directory (overrides the job's)")
    partitions.add_option(run, job=True)
    add_engine_option(run)
    add_url_timeout_option(run)
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    logs.add_option(run)
    add_format_option(run)
    add_track_option(run)


def _compare_arguments(commands, name: str) -> None:
    compare = command_parser(commands, name)
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
        "--models", type=name_list, default=None, help="the models compared (default: all)"
    )
    compare.add_argument(
        "--metrics", type=metric_list, default=None, help="e.g. acc@5,mrr (default: all pairable)"
    )
    compare.add_argument(
        "--tests",
        type=name_list,
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
        type=finite,
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
        "--confidence", type=finite, default=0.95, help="of the bootstrap interval (0.95)"
    )
    compare.add_argument(
        "--intersect", action="store_true", help="compare the units common to both models"
    )
    compare.add_argument(
        "--cohorts",
        action="store_true",
        help="also compare within each cohort (results scored with --cohorts); printed, the "
        "whole results' comparison alone written",
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
    report = command_parser(commands, name)
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
    trec = command_parser(
        commands,
        name,
        description="A drop-in for trec_eval: same options, measures and text output.",
    )
    from mobeval.trec_eval.arguments import add_arguments as add_trec_eval_arguments

    add_trec_eval_arguments(trec)
    add_url_timeout_option(trec)


def _ndeval_arguments(commands, name: str) -> None:
    ndeval = command_parser(
        commands,
        name,
        description="A drop-in for the TREC Web track's ndeval: same options and CSV; -m for "
        "ir_measures' names of its measures.",
    )
    from mobeval.ndeval.arguments import add_arguments as add_ndeval_arguments

    add_ndeval_arguments(ndeval)
    add_url_timeout_option(ndeval)


def _warmup_arguments(commands, name: str) -> None:
    from mobeval.warmup import FAMILY_NAMES

    warmup = command_parser(
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


def _challenge_arguments(commands, name: str) -> None:
    from mobeval.challenges.tasks import CHALLENGES, ON_INVALID

    challenge = command_parser(
        commands,
        name,
        description="Write into DIR the scoring program of a task: scoring_program/ for "
        "Codabench and CodaLab (python3 $program/score.py $input $output: the reference data in "
        "INPUT/ref, the submission in INPUT/res, scores.json and scores.txt to OUTPUT), "
        "evaluation_script/ for EvalAI (evaluate(test_annotation_file, user_submission_file, "
        "phase_codename)) and the leaderboard's columns; each validates a submission, then "
        "scores it with mobeval (installed where it runs). docs/challenges.md",
    )
    challenge.add_argument("dir", metavar="DIR", help="the folder written (new, or empty)")
    challenge.add_argument(
        "--task", required=True, choices=list(CHALLENGES), metavar="TASK", help="tasks: below"
    )
    challenge.add_argument("--city", default=None, help="the HuMob / GIS Cup city: a..d, test")
    challenge.add_argument(
        "--truth", required=True, help="the reference file's name in the reference data"
    )
    challenge.add_argument(
        "--dataset",
        default=None,
        help="the city's challenge data in the reference data, for the validator "
        "(default: the truth, whose rows are the steps to predict)",
    )
    challenge.add_argument(
        "--submission",
        default=None,
        help="the file a submission holds (default: its only file)",
    )
    challenge.add_argument(
        "--metrics",
        type=metric_list,
        default=None,
        help="the leaderboard's columns, the ranking one first, each cutoff named (ndcg@10); "
        "default: the task's",
    )
    challenge.add_argument("--convention", default=None, help="the family's preset")
    challenge.add_argument(
        "--on-invalid",
        choices=ON_INVALID,
        default="worst",
        help="an invalid submission: worst (every column its worst value, ranked last; the "
        "reasons in detailed_results.html) or fail (no scores, exit 1: the platform marks it "
        "Failed); default: worst. EvalAI's always raises",
    )
    challenge.add_argument(
        "--evalai-split", default="test_split", help="EvalAI's dataset split (test_split)"
    )


def _samples_arguments(commands, name: str) -> None:
    samples = command_parser(
        commands,
        name,
        description="Copy data_samples/ and jobs/ (shipped in the package) into DIR, side by "
        "side: the README's and every --help's examples then run from DIR.",
    )
    samples.add_argument("dir", metavar="DIR", help="where they go (made if missing)")


def _track_arguments(commands, name: str) -> None:
    track = command_parser(
        commands,
        name,
        description="Log every complete result of an output folder to an experiment tracker: "
        "its summary as metrics, its options as parameters, its inputs' digests as tags, its "
        "record and its city's report as files (one tracker run per result).",
    )
    track.add_argument("out", help="a mobeval output folder (OUT)")
    add_track_option(track, "--to")


#: What adds each command's arguments (a scoring command's are its family's options:
#: :func:`build_parser`).
COMMAND_ARGUMENTS = {
    "validate": _validate_arguments,
    "run": _run_arguments,
    "compare": _compare_arguments,
    "report": _report_arguments,
    "trec_eval": _trec_eval_arguments,
    "ndeval": _ndeval_arguments,
    "warmup": _warmup_arguments,
    "challenge": _challenge_arguments,
    "samples": _samples_arguments,
    "track": _track_arguments,
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of the command line. ``command``: the only command whose arguments are added
    (the one being run); the others are listed with their help, their arguments and the
    modules that define them (a family's options, the report's, trec_eval's) not loaded, so
    that ``mobeval --help`` and argument parsing load no Polars and no kernels. None: every
    command's arguments."""
    parser = CommandLineParser(
        prog="mobeval",
        description="Exact, fast, out-of-core evaluation of mobility and recommendation models.",
    )
    parser.add_argument("--version", action="version", version=f"mobeval {__version__}")
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", title="commands (mobeval COMMAND --help)"
    )

    for name, help_text in COMMANDS.items():
        if command is None or command == name:
            COMMAND_ARGUMENTS.get(name, _scoring_arguments)(commands, name)
        else:
            commands.add_parser(name, help=help_text)
    return parser


def _scoring_arguments(commands, family: str) -> None:
    command = command_parser(commands, family, family)
    for flag, _, input_help in input_flags(family):
        command.add_argument(flag, required=True, help=input_help)
    after = None
    if family in TREC_INPUTS:
        option, trec_help = TREC_INPUTS[family]
        after = {option: input_format(trec_help)}
    add_family_options(command, family, after=after)
    add_output_options(command)
