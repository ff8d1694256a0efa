"""mobeval trec_eval vs the trec_eval binary on a large run: wall time, peak RSS, same output.

    python benchmarks/bench_trec_eval.py --trec-eval /path/to/trec_eval
                                         [--queries 5000] [--docs 1000] [--repeat 3]

Inputs (seeded, cached under bench_data/trec_<Q>x<D>/, plain text as trec_eval reads only that):

* run: ``--queries`` queries (qids 1..Q, so that their byte order differs from numeric order) x
  ``--docs`` retrieved documents each (docnos ``D<n>``, distinct within a query), scores with 3
  decimals so that a list holds many ties (trec_eval breaks them by docno, descending);
* qrels: 100 judged documents per query, 60 of them retrieved at random ranks, 40 not; relevance
  0 (40%), 1 (40%) or 2 (20%). Every query is in both files: the trec_eval build used here
  (10.0-rc3) stops with "result qid '...' not found in qrels" when a qrels query has no run lines.

Cases, each a fresh process (ours: ``python -m mobeval.cli trec_eval``, Numba cache populated
first; trec_eval: the binary), ours and trec_eval alternating, median of ``--repeat``:
``-m all_trec`` and ``-m official`` (summary, stdout kept), and ``-q -m all_trec`` with stdout to
/dev/null. Peak RSS: the child's own ``ru_maxrss`` (os.wait4). Outputs: each case's stdout of the
two programs compared line by line (both print 4 decimals, so identical lines are equal at 4
decimals; lines that differ are counted, and those one unit apart in the 4th decimal said so);
the ``-q`` case is compared on one more untimed run of each, written to files.
Without ``--trec-eval`` (or when the path is not an executable), mobeval is timed alone.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
from datagen import BENCH_DATA, snapshot_pipeline
from measure import load, machine_line, run_child

JUDGED, FROM_RUN = 100, 60


def make_files(n_queries: int, n_docs: int, seed: int = 0) -> tuple[Path, Path]:
    folder = BENCH_DATA / f"trec_{n_queries}x{n_docs}"
    qrels, run = folder / "qrels.txt", folder / "run.txt"
    if (folder / "done").exists():
        return qrels, run
    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    pool = 1_000_003  # prime: base + step * i never repeats within a list
    qids = np.arange(1, n_queries + 1)
    base = rng.integers(0, pool, size=n_queries)
    step = rng.integers(1, 9973, size=n_queries)
    docs = (base[:, None] + step[:, None] * np.arange(n_docs + JUDGED)) % pool
    retrieved = docs[:, :n_docs]
    scores = np.round(rng.random((n_queries, n_docs)) * 10, 3)
    scores = -np.sort(-scores, axis=1)
    in_run = np.ones(n_queries, dtype=bool)
    run_frame = pl.DataFrame(
        {
            "qid": np.repeat(qids[in_run], n_docs),
            "q0": "Q0",
            "docno": retrieved[in_run].ravel(),
            "rank": np.tile(np.arange(1, n_docs + 1), int(in_run.sum())),
            "score": scores[in_run].ravel(),
            "tag": "bench",
        }
    ).with_columns(pl.format("D{}", "docno").alias("docno"))
    run_frame.write_csv(run, separator=" ", include_header=False, float_precision=3)
    # judged: FROM_RUN retrieved documents at random ranks + documents beyond the list
    picks = np.argsort(rng.random((n_queries, n_docs)), axis=1)[:, :FROM_RUN]
    judged = np.concatenate(
        [
            np.take_along_axis(retrieved, picks, axis=1),
            docs[:, n_docs : n_docs + JUDGED - FROM_RUN],
        ],
        axis=1,
    )
    rel = rng.choice([0, 1, 2], p=[0.4, 0.4, 0.2], size=judged.shape)
    # every query in both files: this trec_eval build (10.0-rc3) stops with "result qid ... not
    # found in qrels" when a qrels query has no run lines
    has_qrels = np.ones(n_queries, dtype=bool)
    pl.DataFrame(
        {
            "qid": np.repeat(qids[has_qrels], JUDGED),
            "iter": 0,
            "docno": judged[has_qrels].ravel(),
            "rel": rel[has_qrels].ravel(),
        }
    ).with_columns(pl.format("D{}", "docno").alias("docno")).write_csv(
        qrels, separator=" ", include_header=False
    )
    (folder / "done").write_text("")
    print(
        f"made {run} ({run.stat().st_size:,} B) and {qrels} ({qrels.stat().st_size:,} B) "
        f"in {time.perf_counter() - t0:.1f} s"
    )
    return qrels, run


def compare_outputs(ours: str, theirs: str) -> str:
    """Line by line: identical, or how many lines differ and by how much at 4 decimals."""
    a, b = ours.splitlines(), theirs.splitlines()
    if a == b:
        return f"identical ({len(a):,} lines)"
    if len(a) != len(b):
        return f"DIFFERENT: ours {len(a):,} lines, trec_eval {len(b):,}"
    differ = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
    last_digit, other = 0, []
    for x, y in differ:
        fx, fy = x.split("\t"), y.split("\t")
        try:
            same_key = fx[:2] == fy[:2]
            gap = abs(float(fx[2]) - float(fy[2]))
        except (IndexError, ValueError):
            same_key, gap = False, None
        if same_key and gap is not None and gap <= 1.0001e-4:
            last_digit += 1
        else:
            other.append((x, y))
    text = f"{len(differ):,} of {len(a):,} lines differ"
    if last_digit:
        text += f", {last_digit:,} of them by 1 in the 4th decimal"
    first = differ[0]
    text += f"; first: ours {first[0].split()} / trec_eval {first[1].split()}"
    return ("DIFFERENT: " if other else "") + text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trec-eval", default=None, help="path of the trec_eval binary")
    parser.add_argument("--queries", type=int, default=5000)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    peer = args.trec_eval
    if peer is not None and not (os.path.isfile(peer) and os.access(peer, os.X_OK)):
        print(f"trec_eval: {peer} is not an executable file; timing mobeval alone")
        peer = None
    elif peer is None:
        print("trec_eval: no --trec-eval PATH given; timing mobeval alone")
    tmp = tempfile.mkdtemp(prefix="bench-trec-")
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    snapshot_pipeline(tmp)
    print(f"machine: {machine_line()}; python {sys.version.split()[0]}")
    print(f"load average at start (1/5/15 min): {load()}")
    qrels, run = make_files(args.queries, args.docs)
    print(
        f"run: {args.queries:,} queries x {args.docs:,} docs ({run.stat().st_size / 2**20:.0f} "
        f"MiB); qrels: {JUDGED} judged per query ({qrels.stat().st_size / 2**20:.1f} MiB)"
    )
    ours_base = [sys.executable, "-m", "mobeval.cli", "trec_eval"]
    cases = [
        ("-m all_trec", ["-m", "all_trec"], True),
        ("-m official", ["-m", "official"], True),
        ("-q -m all_trec > /dev/null", ["-q", "-m", "all_trec"], False),
    ]
    out_file = os.path.join(tmp, "stdout.txt")
    run_child([*ours_base, "-m", "all_trec", str(qrels), str(run)], os.devnull)  # Numba cache
    print(f"\n  {'case':<30} {'program':<10} {'median':>8} {'peak RSS':>10}  runs (s)")
    ratios = []
    for label, options, keep in cases:
        stats = {"mobeval": ([], [], None), "trec_eval": ([], [], None)}
        for _ in range(args.repeat):
            programs = [("mobeval", ours_base)] + ([("trec_eval", [peer])] if peer else [])
            for name, base in programs:
                wall, rss, text = run_child(
                    [*base, *options, str(qrels), str(run)], out_file if keep else os.devnull
                )
                times, peaks, _ = stats[name]
                times.append(wall)
                peaks.append(rss)
                stats[name] = (times, peaks, text)
        for name in ("mobeval", "trec_eval"):
            times, peaks, _ = stats[name]
            if times:
                print(
                    f"  {label:<30} {name:<10} {statistics.median(times):>6.2f} s "
                    f"{max(peaks):>6.0f} MiB  {', '.join(f'{t:.2f}' for t in times)}"
                )
        if peer:
            ours_t = statistics.median(stats["mobeval"][0])
            peer_t = statistics.median(stats["trec_eval"][0])
            ratios.append(
                (label, ours_t, peer_t, max(stats["mobeval"][1]), max(stats["trec_eval"][1]))
            )
            if keep:
                ours_text, peer_text = stats["mobeval"][2], stats["trec_eval"][2]
            else:  # one more run of each, to files, for the comparison
                _, _, ours_text = run_child([*ours_base, *options, str(qrels), str(run)], out_file)
                _, _, peer_text = run_child([peer, *options, str(qrels), str(run)], out_file)
            print(f"  {'':<30} output: {compare_outputs(ours_text, peer_text)}")
    if ratios:
        print("\n  ratios (mobeval / trec_eval; > 1: mobeval slower or larger):")
        for label, ours_t, peer_t, ours_m, peer_m in ratios:
            print(
                f"    {label:<30} time {ours_t / peer_t:5.2f}x ({ours_t:.2f} s / {peer_t:.2f} s), "
                f"peak RSS {ours_m / peer_m:5.2f}x ({ours_m:.0f} / {peer_m:.0f} MiB)"
            )
    print(f"load average at end (1/5/15 min): {load()}")


if __name__ == "__main__":
    main()
