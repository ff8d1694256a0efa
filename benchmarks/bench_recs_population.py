"""Catalogue coverage and Gini of recommendation lists at scale: wall time and peak RSS.

USERS x 100 recommended items over a 50,000-item catalogue (each list a Zipf-drawn first item,
then a strided walk: distinct items, a skewed popularity); each user has one rating (the truth
side ``mobeval recs`` pairs the lists with). ``mobeval recs --metrics gini@100,coverage@100
--population-convention recbole`` runs in a fresh process (peak RSS: its own ``ru_maxrss``),
with the default chunk size and with chunks of 100,000 rows, which give the same bits. The files
stay in ``--folder`` for the peers' runs (RecBole's ``GiniIndex.get_gini`` /
``ItemCoverage.get_coverage``, ClayRS's ``GiniIndex`` / ``CatalogCoverage`` on the same lists).

    python benchmarks/bench_recs_population.py [--users 1000000] [--folder /tmp/population]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import load, machine_line, run_child  # noqa: E402

ITEMS, LISTED = 50_000, 100


def make_data(folder: Path, users: int) -> dict[str, Path]:
    """The lists (user_id, item_id, score; best first), one rating per user, the catalogue."""
    rng = np.random.default_rng(0)
    weights = 1.0 / np.arange(1, ITEMS + 1) ** 0.8
    paths = {name: folder / f"{name}.parquet" for name in ("recs", "ratings", "catalogue")}
    # distinct items per list: a Zipf-drawn first item, then a strided walk (37 * 100 < ITEMS)
    first = rng.choice(ITEMS, size=users, p=weights / weights.sum())
    items = (np.repeat(first, LISTED) + np.tile(np.arange(LISTED) * 37, users)) % ITEMS
    recs = pl.DataFrame(
        {
            "user_id": np.repeat(np.arange(users, dtype=np.int64), LISTED),
            "item_id": items.astype(np.int64),
            "score": np.tile(np.arange(LISTED, 0, -1, dtype=np.float64), users),
        }
    )
    recs.write_parquet(paths["recs"])
    recs.group_by("user_id").first().select("user_id", "item_id", pl.lit(1.0).alias("rating")).sort(
        "user_id"
    ).write_parquet(paths["ratings"])
    pl.DataFrame({"item_id": np.arange(ITEMS, dtype=np.int64)}).write_parquet(paths["catalogue"])
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--folder", type=Path, default=None)
    args = parser.parse_args()
    folder = args.folder or Path(tempfile.mkdtemp(prefix="population-"))
    folder.mkdir(parents=True, exist_ok=True)
    paths = make_data(folder, args.users)
    print(f"machine: {machine_line()}; load before: {load()}")
    print(f"lists: {args.users:,} users x {LISTED} items over {ITEMS:,} items: {paths['recs']}")
    command = [sys.executable, "-m", "mobeval", "recs", "--ratings", str(paths["ratings"])]
    command += ["--recs", str(paths["recs"]), "--catalogue", str(paths["catalogue"])]
    command += ["--metrics", "gini@100,coverage@100", "--population-convention", "recbole"]
    command += ["--format", "json"]
    outputs = {}
    for label, extra in (
        ("default chunks", []),
        ("chunks of 100,000 rows", ["--chunk-rows", "100000"]),
    ):
        wall, rss, text = run_child(command + extra, str(folder / "out.json"))
        outputs[label] = json.loads(text)["summary"]
        print(f"  mobeval, {label}: {wall:7.1f} s  peak RSS {rss:7.0f} MiB  (load {load()})")
    first, *others = outputs.values()
    print("same bits for both chunk sizes:", all(summary == first for summary in others))
    print(json.dumps(first))


if __name__ == "__main__":
    main()
