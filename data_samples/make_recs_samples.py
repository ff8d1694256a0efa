"""Regenerate data_samples/recs and data_samples/logits: small synthetic inputs (deterministic).

Recommendation lists: 300 users and 500 items with latent tastes (8 factors) and a Zipf popularity.
Each user rated 20 items, drawn in proportion to its affinity, 1..5 stars from the affinity
(``ratings.parquet``: user_id, item_id, rating; the same ratings as MovieLens spells them in
``../movielens/ratings.csv``: userId, movieId, rating). Two models list 30 items per user, best
first (user_id, item_id, score, rank; each user's rows in rank order, as ClayRS reads them): ``mf``
scores items by a noisy copy of the true affinity, ``popular`` by popularity alone.

Beyond-accuracy inputs: ``catalogue.parquet`` (item_id: the 500 items) and ``train.parquet``
(user_id, item_id: 40 earlier interactions per user, drawn from the Zipf popularity), read by
``gini``, ``coverage``, ``avg_popularity``, ``tail_percentage``; ``item_categories.parquet`` and
``item_embeddings.parquet``, the item features of ``diversity`` and ``serendipity``.

Logits: 1,000 next-POI samples over 80 POIs (Zipf popularity); ``targets.npy`` (int64) holds each
true POI, and two models give a float32 ``[1000, 80]`` matrix: ``gru`` adds a signal on the target
to the log-popularity, ``popularity`` is the log-popularity with a little noise.

    python data_samples/make_recs_samples.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
USERS, ITEMS, FACTORS, RATED, LISTED = 300, 500, 8, 20, 30
SAMPLES, POIS = 1000, 80


def zipf(n: int, exponent: float) -> np.ndarray:
    weights = 1.0 / np.arange(1, n + 1) ** exponent
    return weights / weights.sum()


def top_lists(scores: np.ndarray) -> pl.DataFrame:
    """The LISTED best items of every user (ties by item id), one row per (user, item)."""
    best = np.argsort(-scores, axis=1, kind="stable")[:, :LISTED]
    users = np.repeat(np.arange(USERS), LISTED)
    return pl.DataFrame(
        {
            "user_id": users.astype(np.int64),
            "item_id": best.ravel().astype(np.int64),
            "score": np.take_along_axis(scores, best, axis=1).ravel(),
            "rank": np.tile(np.arange(1, LISTED + 1, dtype=np.int32), USERS),
        }
    )


def build_recs(seed: int) -> None:
    rng = np.random.default_rng(seed)
    popularity = zipf(ITEMS, 0.9)
    tastes = rng.normal(size=(USERS, FACTORS)) @ rng.normal(size=(FACTORS, ITEMS)) / 1.5
    affinity = tastes + np.log(popularity) + 6
    rows = []
    for user in range(USERS):
        weights = np.exp(affinity[user] - affinity[user].max())
        items = rng.choice(ITEMS, size=RATED, replace=False, p=weights / weights.sum())
        z = (affinity[user, items] - affinity[user].mean()) / affinity[user].std()
        stars = np.clip(np.round(2.2 + 0.9 * z + rng.normal(0, 0.7, RATED)), 1, 5)
        rows.extend((user, int(i), float(s)) for i, s in zip(items, stars, strict=True))
    out = HERE / "recs"
    out.mkdir(parents=True, exist_ok=True)
    ratings = pl.DataFrame(
        rows, schema={"user_id": pl.Int64, "item_id": pl.Int64, "rating": pl.Float64}, orient="row"
    ).sort("user_id", "item_id")
    ratings.write_parquet(out / "ratings.parquet")
    (HERE / "movielens").mkdir(exist_ok=True)
    movielens = ratings.rename({"user_id": "userId", "item_id": "movieId"})
    movielens.write_csv(HERE / "movielens" / "ratings.csv")
    mf = affinity + rng.normal(0, 0.8, affinity.shape)
    top_lists(mf).write_parquet(out / "mf.parquet")
    popular = np.log(popularity)[None, :] + rng.normal(0, 1e-3, (USERS, ITEMS))
    top_lists(popular).write_parquet(out / "popular.parquet")


def build_population(seed: int) -> None:
    rng = np.random.default_rng(seed)
    popularity = zipf(ITEMS, 0.9)
    items = rng.choice(ITEMS, size=USERS * 40, p=popularity)
    out = HERE / "recs"
    pl.DataFrame({"item_id": np.arange(ITEMS, dtype=np.int64)}).write_parquet(
        out / "catalogue.parquet"
    )
    pl.DataFrame(
        {
            "user_id": np.repeat(np.arange(USERS, dtype=np.int64), 40),
            "item_id": items.astype(np.int64),
        }
    ).write_parquet(out / "train.parquet")


def build_item_features(seed: int) -> None:
    """Item features of diversity and serendipity: ``item_categories.parquet`` (item_id,
    category: one row per item and genre, 1 to 3 of 12 genres an item) and
    ``item_embeddings.parquet`` (item_id, features: 8 floats). The last 10 items have neither
    (their similarity to any item is 0, as Microsoft Recommenders' left join fills it)."""
    rng = np.random.default_rng(seed)
    out = HERE / "recs"
    described = ITEMS - 10
    genres = [f"genre{g:02d}" for g in range(12)]
    rows = []
    for item in range(described):
        picked = rng.choice(12, size=int(rng.integers(1, 4)), replace=False)
        rows.extend((item, genres[g]) for g in sorted(picked))
    pl.DataFrame(
        rows, schema={"item_id": pl.Int64, "category": pl.String}, orient="row"
    ).write_parquet(out / "item_categories.parquet")
    vectors = rng.normal(size=(described, FACTORS))
    pl.DataFrame(
        {"item_id": np.arange(described, dtype=np.int64), "features": vectors.tolist()},
        schema={"item_id": pl.Int64, "features": pl.List(pl.Float64)},
    ).write_parquet(out / "item_embeddings.parquet")


def build_logits(seed: int) -> None:
    rng = np.random.default_rng(seed)
    log_popularity = np.log(zipf(POIS, 1.0))
    targets = rng.choice(POIS, size=SAMPLES, p=np.exp(log_popularity))
    gru = log_popularity + rng.normal(0, 1.2, (SAMPLES, POIS))
    gru[np.arange(SAMPLES), targets] += rng.gamma(2.0, 1.0, SAMPLES)
    popularity = log_popularity + rng.normal(0, 0.05, (SAMPLES, POIS))
    out = HERE / "logits"
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "targets.npy", targets.astype(np.int64))
    np.save(out / "gru.npy", gru.astype(np.float32))
    np.save(out / "popularity.npy", popularity.astype(np.float32))


def build_cohorts() -> None:
    """``recs/user_cohorts.csv``: a user whose mean rating is at least the median user's is
    "generous", the others "critical" (the cohorts of the docs' ``--cohorts`` example)."""
    out = HERE / "recs"
    means = (
        pl.read_parquet(out / "ratings.parquet").group_by("user_id").agg(pl.col("rating").mean())
    )
    generous = pl.col("rating") >= pl.col("rating").median()
    cohort = pl.when(generous).then(pl.lit("generous")).otherwise(pl.lit("critical"))
    means.sort("user_id").select("user_id", cohort.alias("cohort")).write_csv(
        out / "user_cohorts.csv"
    )


if __name__ == "__main__":
    build_recs(seed=3)
    build_population(seed=4)
    build_logits(seed=5)
    build_item_features(seed=6)
    build_cohorts()
