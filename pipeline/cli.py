"""Command line: argument parsing only; every command calls the Python API."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import polars as pl

from pipeline import __version__
from pipeline.errors import MobevalError
from pipeline.metrics.nextloc import PRESETS, TIE_POLICIES
from pipeline.metrics.trajectory import TRAJECTORY_PRESETS
from pipeline.validate.humob import TASKS as VALIDATION_TASKS


def _int_list(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected integers like 1,5,10, got {text!r}") from None


def _name_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _mapping(text: str) -> dict[str, str]:
    pairs = {}
    for part in _name_list(text):
        ours, sep, theirs = part.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"expected ours=theirs pairs, got {part!r}")
        pairs[ours.strip()] = theirs.strip()
    return pairs


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mobeval",
        description="Exact, fast, out-of-core evaluation of mobility and recommendation models.",
    )
    parser.add_argument("--version", action="version", version=f"mobeval {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    nextloc = commands.add_parser("nextloc", help="score next-location top-K predictions")
    nextloc.add_argument("--truth", required=True, help="truth: key columns + location")
    nextloc.add_argument("--pred", required=True, help="predictions (long or list form)")
    nextloc.add_argument("--k", type=_int_list, default=[1, 5, 10], help="cutoffs (1,5,10)")
    nextloc.add_argument(
        "--metrics",
        type=_name_list,
        default=None,
        help="e.g. acc@k,ndcg@k,mrr (default: every top-K metric and mrr)",
    )
    nextloc.add_argument("--convention", choices=sorted(PRESETS), default="mobeval")
    nextloc.add_argument(
        "--ties",
        choices=sorted(TIE_POLICIES),
        default=None,
        help="override the convention's tie policy",
    )
    nextloc.add_argument(
        "--key", type=_name_list, default=["sample_id"], help="key column(s), e.g. uid,d,t"
    )
    nextloc.add_argument(
        "--columns", type=_mapping, default={}, help="column names, e.g. location=poi,score=logit"
    )
    nextloc.add_argument("--order-by", choices=["auto", "score", "rank"], default="auto")
    nextloc.add_argument(
        "--drop-unmatched",
        action="store_true",
        help="drop (and count) predictions whose sample is not in the truth",
    )
    _add_output_options(nextloc)

    trajectory = commands.add_parser(
        "trajectory", help="score generated trajectories: GEO-BLEU and DTW per uid and day"
    )
    trajectory.add_argument("--generated", required=True, help="uid,d,t,x,y (Parquet/CSV/CSV.gz)")
    trajectory.add_argument("--reference", required=True, help="uid,d,t,x,y of the real trips")
    trajectory.add_argument("--metrics", type=_name_list, default=["geobleu", "dtw"])
    trajectory.add_argument("--convention", choices=sorted(TRAJECTORY_PRESETS),
                            default="humob2025", help="humob2025 (N=5) or humob2024 (N=3)")
    trajectory.add_argument("--matching", choices=["greedy", "optimal"], default=None,
                            help="n-gram matching (greedy: the reference's)")
    trajectory.add_argument("--skip-mismatched", action="store_true",
                            help="skip (and count) uids whose (d, t) steps differ, not fail")
    trajectory.add_argument("--score-out-of-grid", action="store_true",
                            help="score x/y outside 1..200 (e.g. 999) as the reference does")
    _add_output_options(trajectory)

    validate = commands.add_parser("validate", help="check a HuMob / GIS Cup submission file")
    validate.add_argument("--task", required=True, choices=sorted(VALIDATION_TASKS),
                          help="e.g. 2025:b (GIS Cup 2025, city B) or 2024:c")
    validate.add_argument("--dataset", required=True, help="city_X_challengedata.csv(.gz)")
    validate.add_argument("--submission", required=True, help="the submission csv(.gz)")

    run = commands.add_parser("run", help="run a job file: every city x model it lists")
    run.add_argument("job", help="job file (TOML)")
    run.add_argument("--resume", action="store_true", help="skip results already complete")
    run.add_argument("--out", default=None, help="output directory (overrides the job's)")
    run.add_argument("--engine", choices=["local"], default="local")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def _add_output_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--city", default=None, help="city name for the outputs (default)")
    command.add_argument("--model", default=None, help="model name (default: predictions' name)")
    command.add_argument("--out", required=True, help="output directory")
    command.add_argument("--chunk-rows", type=int, default=None, help="rows per chunk")
    command.add_argument("--quiet", action="store_true", help="no progress bar")


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


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    progress = False if getattr(args, "quiet", False) else None
    try:
        if args.command == "nextloc":
            from pipeline.api import Manifest, evaluate_nextloc
            from pipeline.engines.local import DEFAULT_CHUNK_ROWS

            options = {
                "k": args.k,
                "metrics": args.metrics,
                "convention": args.convention,
                "ties": args.ties,
                "key": args.key,
                "columns": args.columns,
                "order_by": args.order_by,
                "unmatched": "drop" if args.drop_unmatched else "error",
            }
            evaluation = evaluate_nextloc(
                args.truth,
                args.pred,
                out=args.out,
                city=args.city,
                model=args.model,
                chunk_rows=args.chunk_rows or DEFAULT_CHUNK_ROWS,
                progress=progress,
                **options,
            )
            manifest = Manifest(Path(args.out), {"command": "nextloc", **options})
            manifest.record(evaluation, options, "nextloc")
            print_summaries([evaluation])
        elif args.command == "trajectory":
            from pipeline.api import Manifest, evaluate_trajectory
            from pipeline.engines.local import DEFAULT_CHUNK_ROWS

            options = {
                "metrics": args.metrics, "convention": args.convention,
                "matching": args.matching,
                "on_mismatch": "skip" if args.skip_mismatched else "error",
                "out_of_grid": "score" if args.score_out_of_grid else "error",
            }
            evaluation = evaluate_trajectory(
                args.reference, args.generated, out=args.out, city=args.city, model=args.model,
                chunk_rows=args.chunk_rows or DEFAULT_CHUNK_ROWS, progress=progress, **options,
            )
            Manifest(Path(args.out), {"command": "trajectory", **options}).record(
                evaluation, options, "trajectory"
            )
            print_summaries([evaluation])
        elif args.command == "validate":
            from pipeline.validate.humob import validate_submission

            report = validate_submission(args.task, args.dataset, args.submission)
            print(report.summary())
            return 0 if report.ok else 1
        elif args.command == "run":
            from pipeline.jobs import load_job, run_job

            job = load_job(args.job, out=args.out)
            evaluations = run_job(
                job,
                resume=args.resume,
                progress=progress,
                log=lambda text: print(text, file=sys.stderr),
            )
            print_summaries(evaluations)
            print(f"outputs: {job.out}", file=sys.stderr)
    except MobevalError as error:
        print(f"mobeval: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
