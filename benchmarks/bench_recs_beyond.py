"""Novelty, diversity and serendipity of recommendation lists at scale: CPU, wall and peak RSS.

    python benchmarks/bench_recs_beyond.py [--users 100000] [--chunk-rows 100000 ...]
        [--cases counts,elliot,expected,diversity,serendipity,categories,embeddings,propensity]

USERS x 100 recommended items over a 50,000-item catalogue with 10 training rows a user and the
items' categories and embeddings (:func:`datagen.recs_beyond_files` in ``bench_data/``; case
``propensity``: PSP and PSR, Jain et al.'s propensities of the training rows, against 10
relevant items a user apart from the lists, :func:`datagen.recs_relevant_files`). Each
case is one ``mobeval recs`` command at cutoff 100 in a fresh process (its own ``ru_maxrss``,
user + system CPU), once per ``--chunk-rows`` (none: the default chunk); the summaries of one
case must have the same bits for every chunking.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from datagen import recs_relevant_files  # noqa: E402
from measure import load, machine_line, run_measured  # noqa: E402

MSR = ("--population-convention", "msrecommenders")
CASES = {
    "counts": ("novelty@100,coverage@100,distributional_coverage@100", *MSR),
    "elliot": (
        "epc@100,efd@100,arp@100,aplt@100,aclt@100",
        "--population-convention",
        "elliot",
        "--relevant-threshold",
        "1",
    ),
    "expected": (
        "epc@100,efd@100",
        "--population-convention",
        "elliot",
        "--relevant-threshold",
        "1",
    ),
    "diversity": ("diversity@100", *MSR),
    "serendipity": ("serendipity@100", *MSR),
    "categories": ("diversity@100,serendipity@100", *MSR, "--item-similarity", "features"),
    "embeddings": ("diversity@100", *MSR, "--item-similarity", "features"),
    "propensity": ("psp@5,psr@5,psp@100,psr@100", "--convention", "trec_eval"),
}


def command(paths: dict[str, Path], case: str, chunk_rows: int | None) -> list[str]:
    metrics, *options = CASES[case]
    ratings = paths["relevant" if case == "propensity" else "ratings"]
    cmd = [sys.executable, "-m", "mobeval", "recs", "--ratings", str(ratings)]
    cmd += ["--recs", str(paths["recs"]), "--train", str(paths["train"]), "--metrics", metrics]
    cmd += [*options, "--format", "json", "--quiet"]
    if case in ("categories", "embeddings"):
        cmd += ["--item-features", str(paths[case])]
    return cmd + (["--chunk-rows", str(chunk_rows)] if chunk_rows else [])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--chunk-rows", type=int, nargs="*", default=[0, 100_000])
    parser.add_argument("--cases", default=",".join(CASES))
    args = parser.parse_args()
    print(f"machine: {machine_line()}; load before: {load()}")
    paths = recs_relevant_files(args.users)
    print(f"lists: {args.users:,} users x 100 items; training rows: {args.users * 10:,}")
    for case in args.cases.split(","):
        summaries = []
        for chunk_rows in args.chunk_rows:
            report, text = run_measured(
                command(paths, case, chunk_rows or None), str(paths["recs"].parent / "out.txt")
            )
            summary = json.loads(text)["summary"]
            summaries.append(summary)
            print(
                f"{case:12s} chunk {chunk_rows or 'default':>8} {report['cpu']:7.1f} s CPU "
                f"{report['wall']:7.1f} s wall {report['rss_kib'] / 1024:6.0f} MiB "
                f"(load {load()})",
                flush=True,
            )
        same = all(s == summaries[0] for s in summaries)
        print(f"{case:12s} same bits for every chunking: {same}; {json.dumps(summaries[0])}")
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
