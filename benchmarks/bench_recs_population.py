"""Catalogue coverage and Gini of recommendation lists at scale: wall time and peak RSS.

    python benchmarks/bench_recs_population.py [--users 1000000] [--subset 100000] [--repeat 1]
        [--peers-script FILE --peers-python PYTHON]

USERS x 100 recommended items over a 50,000-item catalogue (:func:`datagen.recs_population_files`
in ``bench_data/``: each list a Zipf-drawn first item, then a strided walk: distinct items, a
skewed popularity); each user has one rating (the truth side ``mobeval recs`` pairs the lists
with). ``mobeval recs --metrics gini@100,coverage@100 --population-convention recbole`` runs in a
fresh process (peak RSS: its own ``ru_maxrss``), with the default chunk size and with chunks of
100,000 rows, which give the same bits, on the ``--subset`` (the first users of the full lists)
and on the whole. ``--peers-script`` is a private script (not in the repository) that runs
RecBole's ``GiniIndex.get_gini`` / ``ItemCoverage.get_coverage`` and ClayRS's ``GiniIndex`` /
``CatalogCoverage`` on a folder's lists: called as ``FILE FOLDER recbole|clayrs`` by
``--peers-python`` on the subset (RecBole on the whole too), each run alternated with mobeval's
``--repeat`` times; medians printed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from datagen import RECS_ITEMS, RECS_LISTED, recs_population_files  # noqa: E402
from measure import load, machine_line, run_child  # noqa: E402


def ours(paths: dict[str, Path], chunk_rows: int | None) -> list[str]:
    command = [sys.executable, "-m", "mobeval", "recs", "--ratings", str(paths["ratings"])]
    command += ["--recs", str(paths["recs"]), "--catalogue", str(paths["catalogue"])]
    command += ["--metrics", "gini@100,coverage@100", "--population-convention", "recbole"]
    command += ["--format", "json", "--quiet"]
    return command + (["--chunk-rows", str(chunk_rows)] if chunk_rows else [])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--subset", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--peers-script", type=Path)
    parser.add_argument("--peers-python", default=sys.executable)
    args = parser.parse_args()
    print(f"machine: {machine_line()}; load before: {load()}")
    for users, peers in ((args.subset, ("recbole", "clayrs")), (args.users, ("recbole",))):
        paths = recs_population_files(users)
        print(f"lists: {users:,} users x {RECS_LISTED} items over {RECS_ITEMS:,} items")
        runs = {"mobeval, default chunks": ours(paths, None)}
        runs["mobeval, chunks of 100,000 rows"] = ours(paths, 100_000)
        for peer in peers if args.peers_script else ():
            script = str(args.peers_script)
            runs[peer] = [args.peers_python, script, str(paths["recs"].parent), peer]
        walls, rsss, texts = ({name: [] for name in runs} for _ in range(3))
        for _ in range(args.repeat):
            for name, cmd in runs.items():
                wall, rss, text = run_child(cmd, str(paths["recs"].parent / "out.txt"))
                walls[name].append(wall)
                rsss[name].append(rss)
                texts[name].append(text.strip())
                print(f"  {name:32s} {wall:7.1f} s  {rss:7.0f} MiB  (load {load()})", flush=True)
        for name in runs:
            wall, rss = statistics.median(walls[name]), statistics.median(rsss[name])
            print(f"{name:34s} median {wall:7.1f} s  peak RSS {rss:7.0f} MiB")
        summaries = [
            json.loads(text)["summary"]
            for name in runs
            for text in texts[name]
            if "mobeval" in name
        ]
        print(
            "mobeval: same bits for every run and chunk size:",
            all(s == summaries[0] for s in summaries),
        )
        print(json.dumps(summaries[0]))
        for name in peers if args.peers_script else ():
            print(texts[name][-1])
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
