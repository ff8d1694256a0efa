"""Synthetic next-location benchmark inputs: N samples x C ranked candidates, sorted by sample_id;
and the code snapshot the benchmark scripts run from.

Written in row groups so that generating 100 M rows needs little memory. Files are cached under
bench_data/ (git-ignored) and reused when present.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

BENCH_DATA = Path(__file__).resolve().parents[1] / "bench_data"
N_LOCATIONS = 50_021  # prime, so base + step * i never repeats within a list
BLOCK = 100_000  # samples generated at a time
ROW_GROUP = 1_000_000  # rows per Parquet row group (pyarrow's default)


def nextloc_files(n_samples: int, n_candidates: int, *, seed: int = 0) -> tuple[Path, Path]:
    """(truth, predictions) Parquet files; the truth is in the list about 60% of the time."""
    BENCH_DATA.mkdir(exist_ok=True)
    stem = f"nextloc_{n_samples}x{n_candidates}"
    truth_path = BENCH_DATA / f"{stem}_truth.parquet"
    pred_path = BENCH_DATA / f"{stem}_pred.parquet"
    if truth_path.exists() and pred_path.exists():
        return truth_path, pred_path
    rng = np.random.default_rng(seed)
    schema = pa.schema(
        [("sample_id", pa.int64()), ("location", pa.int64()), ("score", pa.float64())]
    )
    truths = []
    with pq.ParquetWriter(pred_path, schema) as writer:
        for start in range(0, n_samples, BLOCK):
            count = min(BLOCK, n_samples - start)
            samples = np.arange(start, start + count)
            base = rng.integers(0, N_LOCATIONS, size=count)
            step = rng.integers(1, 997, size=count)
            locations = (base[:, None] + step[:, None] * np.arange(n_candidates)) % N_LOCATIONS
            scores = np.sort(rng.random((count, n_candidates)), axis=1)[:, ::-1]
            hit = rng.random(count) < 0.6
            position = rng.integers(0, n_candidates, size=count)
            truths.append(
                np.where(
                    hit,
                    locations[np.arange(count), position],
                    (base + N_LOCATIONS // 2 + 1) % N_LOCATIONS,
                )
            )
            writer.write_table(
                pa.table(
                    {
                        "sample_id": np.repeat(samples, n_candidates),
                        "location": locations.ravel(),
                        "score": scores.ravel(),
                    },
                    schema=schema,
                ),
                row_group_size=ROW_GROUP,
            )
    pq.write_table(
        pa.table({"sample_id": np.arange(n_samples), "location": np.concatenate(truths)}),
        truth_path,
    )
    return truth_path, pred_path


def city_days(rng: np.random.Generator, rows: int, locations: int) -> np.ndarray:
    """``rows`` days of 48 location ids below ``locations``: stays of 1 to 4 slots, each a
    uniformly drawn location (MoveSim's ``read_data_from_file`` layout: one day per row)."""
    stays = rng.integers(1, 5, (rows, SLOTS))
    starts = np.minimum(np.cumsum(stays, axis=1) // 4, SLOTS - 1)
    return rng.integers(0, locations, (rows, SLOTS))[np.arange(rows)[:, None], starts]


SLOTS = 48  # half-hour slots of a day
GRID = 200  # HuMob's grid: cells 1..200 in x and y
CITY_BLOCK = 1000  # uids generated at a time


def city_files(uids: int, days: int, locations: int, *, seed: int = 0) -> tuple[Path, Path]:
    """(real, generated) HuMob Parquet files (uid, d, t, x, y) of ``uids`` x ``days`` days of 48
    points drawn by :func:`city_days`, location id ``i`` at cell ``(i % 200 + 1, i // 200 + 1)``.
    Each block of :data:`CITY_BLOCK` uids has its own generator (``seed``, first uid), so a city
    of N uids, N a multiple of the block, is the first N uids of any larger one."""
    BENCH_DATA.mkdir(exist_ok=True)
    stem = f"city_{uids}x{days}_{locations}_{seed}"
    paths = (BENCH_DATA / f"{stem}_real.parquet", BENCH_DATA / f"{stem}_gen.parquet")
    if all(path.exists() for path in paths):
        return paths
    schema = pa.schema([(name, pa.int64()) for name in ("uid", "d", "t", "x", "y")])
    with pq.ParquetWriter(paths[0], schema) as real, pq.ParquetWriter(paths[1], schema) as gen:
        for start in range(0, uids, CITY_BLOCK):
            rng = np.random.default_rng((seed, start))
            count = min(CITY_BLOCK, uids - start)
            step = np.arange(count * days * SLOTS)
            steps = {"uid": start + step // (days * SLOTS), "d": step // SLOTS % days}
            steps["t"] = step % SLOTS
            for writer in (real, gen):
                ids = city_days(rng, count * days, locations).ravel()
                cells = {"x": ids % GRID + 1, "y": ids // GRID + 1}
                writer.write_table(pa.table({**steps, **cells}, schema=schema), ROW_GROUP)
    return paths


def city_location_ids(path: Path) -> np.ndarray:
    """The location ids of a :func:`city_files` file, one day per row (MoveSim's layout)."""
    xy = pq.read_table(path, columns=["x", "y"])
    ids = (xy["x"].to_numpy() - 1) + (xy["y"].to_numpy() - 1) * GRID
    return ids.reshape(-1, SLOTS)


RECS_ITEMS, RECS_LISTED = 50_000, 100  # the catalogue, the length of each list


def recs_catalogue_file() -> Path:
    """The catalogue of :func:`recs_tied_files`' items (item_id 0 .. 49,999), in
    ``bench_data/recs_catalogue_50000.parquet``."""
    path = BENCH_DATA / f"recs_catalogue_{RECS_ITEMS}.parquet"
    if not path.exists():
        BENCH_DATA.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"item_id": np.arange(RECS_ITEMS)}), path)
    return path


def recs_population_files(users: int, *, seed: int = 0) -> dict[str, Path]:
    """Recommendation lists of ``users`` x 100 distinct items over a 50,000-item catalogue, in
    ``bench_data/recs_population_<users>/``: ``recs`` (user_id, item_id, score; sorted by user,
    best first: a Zipf-drawn first item, then a strided walk of 37, a skewed popularity),
    ``ratings`` (each user's first item, rating 1) and ``catalogue`` (item_id). Each block of
    :data:`BLOCK` users has its own generator (``seed``, first user): a file of N users, N a
    multiple of the block, holds the first N users of any larger one."""
    folder = BENCH_DATA / f"recs_population_{users}_{seed}"
    paths = {name: folder / f"{name}.parquet" for name in ("recs", "ratings", "catalogue")}
    if all(path.exists() for path in paths.values()):
        return paths
    folder.mkdir(parents=True, exist_ok=True)
    weights = 1.0 / np.arange(1, RECS_ITEMS + 1) ** 0.8
    recs_schema = pa.schema(
        [("user_id", pa.int64()), ("item_id", pa.int64()), ("score", pa.float64())]
    )
    firsts = []
    with pq.ParquetWriter(paths["recs"], recs_schema) as writer:
        for start in range(0, users, BLOCK):
            count = min(BLOCK, users - start)
            first = np.random.default_rng((seed, start)).choice(
                RECS_ITEMS, size=count, p=weights / weights.sum()
            )
            items = (first[:, None] + np.arange(RECS_LISTED) * 37) % RECS_ITEMS  # 37 * 100 < items
            table = {
                "user_id": np.repeat(np.arange(start, start + count), RECS_LISTED),
                "item_id": items.ravel(),
                "score": np.tile(np.arange(RECS_LISTED, 0, -1, dtype=np.float64), count),
            }
            writer.write_table(pa.table(table, schema=recs_schema), ROW_GROUP)
            firsts.append(first)
    ratings = {
        "user_id": np.arange(users),
        "item_id": np.concatenate(firsts),
        "rating": np.ones(users),
    }
    pq.write_table(pa.table(ratings), paths["ratings"])
    pq.write_table(pa.table({"item_id": np.arange(RECS_ITEMS)}), paths["catalogue"])
    return paths


def snapshot_pipeline(folder: str) -> str:
    """Copy pipeline/ into folder as mobeval/ and put folder first on the children's PYTHONPATH.

    Other people edit the sources while benchmarks run; a source change would invalidate the Numba
    cache mid-run (a "warm" case would compile) and mix code versions. The copy keeps the run on
    one version of the code (the one present at its start).
    """
    root = Path(__file__).resolve().parents[1] / "pipeline"
    shutil.copytree(root, Path(folder) / "mobeval", ignore=shutil.ignore_patterns("__pycache__"))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [folder, *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    return folder


def recs_tied_files(users: int, *, seed: int = 0) -> tuple[Path, Path]:
    """(ratings, recs) Parquet files of ``users`` x 100 recommended items over a 50,000-item
    catalogue, in ``bench_data/recs_tied_<users>_<seed>/``. ``recs`` (user_id, item_id, score) is
    sorted by user, score descending, as a recommender writes its top 100; the scores are
    quantised to 1/20 steps, so every list has ties (about five items a score), each tie in a
    random item order. ``ratings`` (user_id, item_id, rating): 10 items a user, rating 1 to 5,
    half of them drawn from the user's list. Each block of :data:`BLOCK` users has its own
    generator (``seed``, first user)."""
    folder = BENCH_DATA / f"recs_tied_{users}_{seed}"
    paths = (folder / "ratings.parquet", folder / "recs.parquet")
    if all(path.exists() for path in paths):
        return paths
    folder.mkdir(parents=True, exist_ok=True)
    recs_schema = pa.schema(
        [("user_id", pa.int64()), ("item_id", pa.int64()), ("score", pa.float64())]
    )
    truth_schema = pa.schema(
        [("user_id", pa.int64()), ("item_id", pa.int64()), ("rating", pa.float64())]
    )
    with (
        pq.ParquetWriter(paths[1], recs_schema) as recs,
        pq.ParquetWriter(paths[0], truth_schema) as truth,
    ):
        for start in range(0, users, BLOCK):
            rng = np.random.default_rng((seed, start))
            count = min(BLOCK, users - start)
            first = rng.integers(0, RECS_ITEMS, size=count)
            items = (first[:, None] + np.arange(RECS_LISTED) * 37) % RECS_ITEMS  # distinct
            items = rng.permuted(items, axis=1)
            scores = -np.sort(-np.floor(rng.random((count, RECS_LISTED)) * 20) / 20, axis=1)
            user_ids = np.arange(start, start + count)
            recs.write_table(
                pa.table(
                    {
                        "user_id": np.repeat(user_ids, RECS_LISTED),
                        "item_id": items.ravel(),
                        "score": scores.ravel(),
                    },
                    schema=recs_schema,
                ),
                ROW_GROUP,
            )
            picks = rng.permuted(np.tile(np.arange(RECS_LISTED), (count, 1)), axis=1)[:, :5]
            listed = np.take_along_axis(items, picks, axis=1)
            other = (first[:, None] + RECS_LISTED * 37 + np.arange(5) * 101) % RECS_ITEMS
            rated = np.sort(np.concatenate([listed, other], axis=1), axis=1)
            truth.write_table(
                pa.table(
                    {
                        "user_id": np.repeat(user_ids, 10),
                        "item_id": rated.ravel(),
                        "rating": rng.integers(1, 6, size=count * 10).astype(np.float64),
                    },
                    schema=truth_schema,
                ),
                ROW_GROUP,
            )
    return paths


#: A population's location spaces (:func:`population_files`) and the box of their GPS points
#: (Beijing, MoveSim's GeoLife city): latitudes, longitudes.
SPACES = ("grid", "ids", "gps", "links")
BOX = (39.75, 116.15, 40.05, 116.60)
TABLE_IDS, TABLE_LINKS = 23_768, 10_000  # MoveSim's geolife table; a road network's links
POPULATION_BLOCK = 10_000  # trajectories generated at a time


def population_table(space: str, *, seed: int = 0) -> Path | None:
    """The location table of ``space``: for ``ids`` a MoveSim ``gps`` file (``lat lon`` a
    line, :data:`TABLE_IDS` lines), for ``links`` a link table (``location``, ``length`` in
    metres, ``lat``, ``lon``, :data:`TABLE_LINKS` rows); None for ``grid`` and ``gps``."""
    if space not in ("ids", "links"):
        return None
    BENCH_DATA.mkdir(exist_ok=True)
    rng = np.random.default_rng((seed, 1))
    if space == "ids":
        path = BENCH_DATA / f"population_gps_{seed}"
        if not path.exists():
            lat = rng.uniform(BOX[0], BOX[2], TABLE_IDS)
            lon = rng.uniform(BOX[1], BOX[3], TABLE_IDS)
            np.savetxt(path, np.column_stack([lat, lon]), fmt="%.6f")
        return path
    path = BENCH_DATA / f"population_links_{seed}.csv"
    if not path.exists():
        pa_table = pa.table(
            {
                "location": rng.permutation(TABLE_LINKS) * 7 + 3,
                "length": rng.uniform(20, 400, TABLE_LINKS).round(2),
                "lat": rng.uniform(BOX[0], BOX[2], TABLE_LINKS),
                "lon": rng.uniform(BOX[1], BOX[3], TABLE_LINKS),
            }
        )
        import pyarrow.csv as pc

        pc.write_csv(pa_table, path)
    return path


def _population_block(rng, count: int, space: str) -> dict[str, np.ndarray]:
    """The location columns of ``count`` trajectories of 48 points (:func:`city_days`)."""
    if space == "gps":  # a walk of up to ~300 m a step from a uniform start inside the box
        start = rng.uniform((BOX[0], BOX[1]), (BOX[2], BOX[3]), (count, 1, 2))
        walk = np.cumsum(rng.normal(0, 0.0015, (count, SLOTS, 2)), axis=1)
        point = np.clip(start + walk, (BOX[0], BOX[1]), (BOX[2], BOX[3])).round(6)
        return {"lat": point[..., 0].ravel(), "lon": point[..., 1].ravel()}
    ids = city_days(rng, count, {"grid": GRID * GRID, "ids": TABLE_IDS}.get(space, TABLE_LINKS))
    ids = ids.ravel()
    if space == "grid":
        return {"x": ids % GRID + 1, "y": ids // GRID + 1}
    return {"location": ids * 7 + 3 if space == "links" else ids}


def population_files(n: int, space: str, *, seed: int = 0) -> tuple[Path, Path]:
    """(real, generated) Parquet files of ``n`` trajectories of 48 points each (columns uid, d
    (0), t (0..47) and the space's: ``x``, ``y``; ``location``; ``lat``, ``lon``), sorted by
    uid. A generated trajectory copies a real one 1 time in 100 and the generated one before
    it 1 time in 100 (``memorised``, ``duplicate_ratio`` not 0). Blocks of
    :data:`POPULATION_BLOCK` trajectories have their own generators, so a population of N is
    the first N trajectories of a larger one."""
    BENCH_DATA.mkdir(exist_ok=True)
    stem = f"population_{space}_{n}_{seed}"
    paths = (BENCH_DATA / f"{stem}_real.parquet", BENCH_DATA / f"{stem}_gen.parquet")
    if all(path.exists() for path in paths):
        return paths
    names = list(_population_block(np.random.default_rng(0), 1, space))
    types = [pa.float64() if name in ("lat", "lon") else pa.int64() for name in names]
    fields = [(name, pa.int64()) for name in ("uid", "d", "t")] + list(
        zip(names, types, strict=True)
    )
    schema = pa.schema(fields)
    with pq.ParquetWriter(paths[0], schema) as real, pq.ParquetWriter(paths[1], schema) as gen:
        for start in range(0, n, POPULATION_BLOCK):
            rng = np.random.default_rng((seed, start))
            count = min(POPULATION_BLOCK, n - start)
            step = np.arange(count * SLOTS)
            steps = {"uid": start + step // SLOTS, "d": np.zeros_like(step), "t": step % SLOTS}
            sides = [_population_block(rng, count, space) for _ in range(2)]
            copied = np.flatnonzero(rng.random(count) < 0.01)
            repeated = np.flatnonzero(rng.random(count) < 0.01)
            for name in names:
                r, g = (side[name].reshape(count, SLOTS) for side in sides)
                g[copied] = r[copied]
                g[repeated[repeated > 0]] = g[repeated[repeated > 0] - 1]
            for writer, side in zip((real, gen), sides, strict=True):
                writer.write_table(pa.table({**steps, **side}, schema=schema), ROW_GROUP)
    return paths


RECS_TRAINED, RECS_CATEGORIES, RECS_DIMENSIONS = 10, 20, 16  # beyond accuracy's side inputs


def recs_train_file(users: int, *, seed: int = 0) -> Path:
    """The training rows of ``users`` users in ``bench_data/recs_population_<users>_<seed>/
    train.parquet`` (user_id, item_id): :data:`RECS_TRAINED` rows a user, items drawn from the
    lists' Zipf popularity over the 50,000-item catalogue (a repeat possible), the rows of a
    block of :data:`BLOCK` users from a generator of their own."""
    path = BENCH_DATA / f"recs_population_{users}_{seed}" / "train.parquet"
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    weights = 1.0 / np.arange(1, RECS_ITEMS + 1) ** 0.8
    schema = pa.schema([("user_id", pa.int64()), ("item_id", pa.int64())])
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, users, BLOCK):
            count = min(BLOCK, users - start)
            rng = np.random.default_rng((seed, start, 1))
            items = rng.choice(RECS_ITEMS, size=count * RECS_TRAINED, p=weights / weights.sum())
            table = {
                "user_id": np.repeat(np.arange(start, start + count), RECS_TRAINED),
                "item_id": items,
            }
            writer.write_table(pa.table(table, schema=schema), ROW_GROUP)
    return path


def recs_beyond_files(users: int, *, seed: int = 0) -> dict[str, Path]:
    """:func:`recs_population_files` and the side inputs of novelty, diversity and serendipity,
    in ``bench_data/recs_population_<users>_<seed>/``: ``train`` (:func:`recs_train_file`),
    ``categories`` (item_id, category: 1 to 3 of :data:`RECS_CATEGORIES` an item) and
    ``embeddings`` (item_id, features: :data:`RECS_DIMENSIONS` normal floats an item)."""
    paths = recs_population_files(users, seed=seed)
    paths["train"] = recs_train_file(users, seed=seed)
    folder = paths["recs"].parent
    extra = {name: folder / f"{name}.parquet" for name in ("categories", "embeddings")}
    paths.update(extra)
    if all(path.exists() for path in extra.values()):
        return paths
    rng = np.random.default_rng((seed, 2))
    per_item = rng.integers(1, 4, size=RECS_ITEMS)
    categories = {
        "item_id": np.repeat(np.arange(RECS_ITEMS), per_item),
        "category": rng.integers(0, RECS_CATEGORIES, size=int(per_item.sum())),
    }
    pq.write_table(pa.table(categories), extra["categories"])
    vectors = rng.normal(size=(RECS_ITEMS, RECS_DIMENSIONS))
    features = pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), RECS_DIMENSIONS)
    pq.write_table(
        pa.table({"item_id": np.arange(RECS_ITEMS), "features": features}), extra["embeddings"]
    )
    return paths


def recs_relevant_files(users: int, *, seed: int = 0) -> dict[str, Path]:
    """:func:`recs_beyond_files` and ``relevant`` (user_id, item_id, rating 1): each user's
    :data:`RECS_TRAINED` draws from the lists' Zipf popularity, apart from its list, each
    distinct item once (PSP and PSR), a block of :data:`BLOCK` users a generator."""
    paths = recs_beyond_files(users, seed=seed)
    paths["relevant"] = paths["recs"].parent / "relevant.parquet"
    if paths["relevant"].exists():
        return paths
    weights = 1.0 / np.arange(1, RECS_ITEMS + 1) ** 0.8
    schema = pa.schema([("user_id", pa.int64()), ("item_id", pa.int64()), ("rating", pa.int64())])
    with pq.ParquetWriter(paths["relevant"], schema) as writer:
        for start in range(0, users, BLOCK):
            count = min(BLOCK, users - start)
            rng = np.random.default_rng((seed, start, 3))
            items = rng.choice(RECS_ITEMS, size=count * RECS_TRAINED, p=weights / weights.sum())
            pairs = np.unique(
                np.stack([np.repeat(np.arange(start, start + count), RECS_TRAINED), items], 1),
                axis=0,
            )
            table = {
                "user_id": pairs[:, 0],
                "item_id": pairs[:, 1],
                "rating": np.ones(len(pairs), dtype=np.int64),
            }
            writer.write_table(pa.table(table, schema=schema), ROW_GROUP)
    return paths
