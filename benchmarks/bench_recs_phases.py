"""Where ``score_recs_frame`` spends its CPU, phase by phase, for each preset, in one process.

    python benchmarks/bench_recs_phases.py [--users 200000] [--chunk 20000] [--repeat 3]
                                           [--cases trec_eval clayrs ...] [--shuffled]

The first ``--users`` users of ``datagen.recs_tied_files(1_000_000)`` (the dashboard's 100 M-row
lists: 100 items a user, scores in 1/20 steps, sorted by score; 10 ratings a user) are read into
memory once, then scored in chunks of ``--chunk`` users, as the engine hands them over, for
precision, recall and nDCG at 10 under each case: the presets, and trec_eval's order with ids
compared as integers (``trec_int``: ``order="score_id_asc"``). Printed per case: the CPU seconds
of the whole scoring and of its phases (the metric kernel ``recs_user_stats``, with the lists'
order inside it; the users' blocks ``recs_lists.blocks``; a list order put in place before the
kernel, ``recs_lists.lists`` or, for ranx, ``recs_lists.ranx_runs``;
the exact sums ``ExactColumnSums.add``), the minimum over ``--repeat`` runs, and the summary's
values. ``--shuffled``: each user's rows in a random order (seeded), as hash buckets hand over
lists whose rows were scattered over the file: lists whose scores rise, put in order by the
kernel. Process CPU time (``time.process_time``: every thread); ``NUMBA_NUM_THREADS`` sets the
kernels' threads. Multiply by ``1,000,000 / --users`` for the dashboard's run.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from datagen import recs_tied_files  # noqa: E402

from mobeval.kernels import recs as K  # noqa: E402
from mobeval.kernels.exact_sum import ExactColumnSums  # noqa: E402
from mobeval.tasks import recs as T  # noqa: E402
from mobeval.tasks import recs_lists as R  # noqa: E402

CASES = {
    "trec_eval": {"convention": "trec_eval"},
    "ir_measures": {"convention": "ir_measures"},
    "trec_int": {"convention": "trec_eval", "order": "score_id_asc"},
    "ranx": {"convention": "ranx"},
    "clayrs": {"convention": "clayrs"},
    "relison": {"convention": "relison"},
}
METRICS = ["precision@10", "recall@10", "ndcg@10"]
PHASES = {}  # phase -> CPU seconds in the run being timed


def timed(owner, name: str, phase: str) -> None:
    """``owner.name`` replaced by a wrapper adding its CPU seconds to ``PHASES[phase]``."""
    function = getattr(owner, name)

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        start = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            PHASES[phase] = PHASES.get(phase, 0.0) + time.process_time() - start

    setattr(owner, name, wrapper)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=200_000)
    parser.add_argument("--chunk", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    parser.add_argument("--shuffled", action="store_true", help="each list's rows shuffled")
    args = parser.parse_args()
    ratings_path, recs_path = recs_tied_files(1_000_000)
    recs_file = pq.ParquetFile(recs_path)
    groups = -(-args.users * 100 // recs_file.metadata.row_group(0).num_rows)
    recs = pl.from_arrow(recs_file.read_row_groups(range(groups)))
    recs = recs.filter(pl.col("user_id") < args.users)
    if args.shuffled:
        shuffled = np.random.default_rng(0).permutation(recs.height)
        recs = recs[shuffled].sort("user_id", maintain_order=True)
    ratings = pl.read_parquet(ratings_path, n_rows=args.users * 10)
    bounds = np.arange(0, args.users + args.chunk, args.chunk)
    rec_at = np.searchsorted(recs["user_id"].to_numpy(), bounds)
    tru_at = np.searchsorted(ratings["user_id"].to_numpy(), bounds)
    chunks = [
        (recs[rec_at[i] : rec_at[i + 1]].rechunk(), ratings[tru_at[i] : tru_at[i + 1]].rechunk())
        for i in range(len(bounds) - 1)
    ]
    timed(K, "recs_user_stats", "kernel")
    timed(R, "blocks", "blocks")
    timed(R, "lists", "lists")
    timed(R, "ranx_runs", "lists")  # ranx's lists (deduplicated, ordered) come from here
    timed(ExactColumnSums, "add", "exact sums")
    for case in args.cases:
        runs = []
        for _ in range(args.repeat):
            PHASES.clear()
            start = time.process_time()
            state = None
            for recs_chunk, ratings_chunk in chunks:
                scored = T.score_recs_frame(
                    recs_chunk, ratings_chunk, metrics=METRICS, **CASES[case]
                )
                if state is None:
                    state = scored.state
                else:
                    state.merge(scored.state)
            runs.append({"whole": time.process_time() - start, **PHASES})
        best = {phase: min(run.get(phase, 0.0) for run in runs) for phase in runs[0]}
        values = T.finalize(state)["value"].to_list()
        print(f"{case:12s}", " ".join(f"{k} {v:.3f}" for k, v in best.items()), values, flush=True)


if __name__ == "__main__":
    main()
