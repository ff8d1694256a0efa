"""``mobeval ndeval`` on a large diversity run: CPU, wall and peak RSS, the same output for every
``--chunk-rows``.

    python benchmarks/bench_ndeval.py [--topics 10000] [--docs 1000] [--subtopics 20]
                                      [--chunk-rows 200000 ...]

Inputs (seeded, cached under ``bench_data/ndeval_<T>x<D>x<S>/``, plain text as ndeval reads it):

* run: ``--topics`` topics (1..T) x ``--docs`` documents each, grouped by topic as a ranker
  writes them, ranks 1..D, scores descending; docnos ``clueweb12-<topic>-<n>``, ``n`` a
  seeded draw of ``2 D`` candidates, so that about half the judged documents are retrieved;
* qrels: 100 judged documents a topic (``n < 100``), each relevant to 0 to 3 of ``--subtopics``
  subtopics (a judgment 1 line each; a document relevant to none: one judgment 0 line).

Each ``--chunk-rows`` (0: the command's default) is one ``mobeval ndeval`` command in a fresh
process (user + system CPU, ``ru_maxrss``); the printed CSVs must be equal byte for byte.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from datagen import BENCH_DATA  # noqa: E402
from measure import load, machine_line, run_measured  # noqa: E402

JUDGED = 100  # judged documents a topic


def ndeval_files(topics: int, docs: int, subtopics: int, seed: int = 0) -> tuple[Path, Path]:
    """(qrels, run) of the module's description, written once."""
    folder = BENCH_DATA / f"ndeval_{topics}x{docs}x{subtopics}"
    qrels, run = folder / "qrels.txt", folder / "run.txt"
    if qrels.exists() and run.exists():
        return qrels, run
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    topic = np.repeat(np.arange(1, topics + 1), JUDGED)
    doc = np.tile(np.arange(JUDGED), topics)
    count = rng.integers(0, 4, size=topic.size)
    rows = np.repeat(np.arange(topic.size), np.maximum(count, 1))
    chosen = [rng.choice(subtopics, size=c, replace=False) + 1 for c in count[count > 0]]
    sub = np.zeros(rows.size, dtype=np.int64)
    sub[np.repeat(count, np.maximum(count, 1)) > 0] = np.concatenate(chosen)
    judged = pl.DataFrame(
        {"t": topic[rows], "s": np.maximum(sub, 1), "d": doc[rows], "j": (sub > 0).astype(int)}
    )
    _write_lines(qrels, judged.select(pl.format("{} {} clueweb12-{}-{} {}", *"tstdj")))
    with run.open("w") as out:
        for start in range(0, topics, 1000):
            block = np.arange(start + 1, min(start + 1000, topics) + 1)
            picks = np.concatenate([rng.permutation(2 * docs)[:docs] for _ in block])
            ranks = np.tile(np.arange(1, docs + 1), block.size)
            frame = pl.DataFrame({"t": np.repeat(block, docs), "n": picks, "r": ranks})
            score = (1.0 / pl.col("r")).round(6)
            _write_lines(
                out, frame.select(pl.format("{} Q0 clueweb12-{}-{} {} {} bench", *"ttnr", score))
            )
    return qrels, run


def _write_lines(target, lines: pl.DataFrame) -> None:
    """A one-column frame of text, a line each, to a path or an open file."""
    lines.write_csv(target, include_header=False, quote_style="never")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--subtopics", type=int, default=20)
    parser.add_argument("--chunk-rows", type=int, nargs="*", default=[0])
    args = parser.parse_args()
    print(f"machine: {machine_line()}; load before: {load()}")
    qrels, run = ndeval_files(args.topics, args.docs, args.subtopics)
    print(f"run: {args.topics:,} topics x {args.docs:,} documents; {args.subtopics} subtopics")
    outputs = []
    for chunk_rows in args.chunk_rows:
        cmd = [sys.executable, "-m", "mobeval", "ndeval", str(qrels), str(run)]
        cmd += ["--chunk-rows", str(chunk_rows)] if chunk_rows else []
        report, text = run_measured(cmd, str(run.parent / "out.csv"))
        outputs.append(text)
        print(
            f"chunk {chunk_rows or 'default':>8} {report['cpu']:7.1f} s CPU "
            f"{report['wall']:7.1f} s wall {report['rss_kib'] / 1024:6.0f} MiB (load {load()})",
            flush=True,
        )
    print(f"the same CSV for every chunking: {all(o == outputs[0] for o in outputs)}")
    print(f"amean: {outputs[0].splitlines()[-1]}")


if __name__ == "__main__":
    main()
