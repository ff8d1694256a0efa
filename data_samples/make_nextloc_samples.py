"""Regenerate data_samples/nextloc: two small synthetic cities, two models each (deterministic).

Users walk between POIs whose popularity follows a Zipf law, with a strong habit of returning to a
few personal favourites. The ``markov`` model ranks candidates by first-order transition counts
learned on the first half of each trajectory (long form: sample_id, location, score, top 20); the
``popularity`` model lists the 20 most visited POIs (list form: sample_id, locations). The truth is
each test step's real next POI; ``cohorts.csv`` each sample's user's cohort (routine: fewer
distinct POIs than the median user before the test steps; explorer).

    python data_samples/make_nextloc_samples.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent / "nextloc"
TOP = 20


def walk(rng, n_users, n_pois, steps):
    popularity = 1.0 / np.arange(1, n_pois + 1) ** 1.1
    popularity /= popularity.sum()
    trajectories = []
    for _ in range(n_users):
        favourites = rng.choice(n_pois, size=4, replace=False, p=popularity)
        here = favourites[0]
        path = [here]
        for _ in range(steps - 1):
            if rng.random() < 0.6:
                here = favourites[rng.integers(4)]
            else:
                here = rng.choice(n_pois, p=popularity)
            path.append(int(here))
        trajectories.append(path)
    return trajectories


def build_city(name: str, seed: int, n_users: int, n_pois: int, steps: int) -> None:
    rng = np.random.default_rng(seed)
    trajectories = walk(rng, n_users, n_pois, steps)
    transitions = np.zeros((n_pois, n_pois))
    visits = np.zeros(n_pois)
    for path in trajectories:
        half = len(path) // 2
        for a, b in zip(path[: half - 1], path[1:half], strict=True):
            transitions[a, b] += 1
        np.add.at(visits, path[:half], 1)
    popular = np.argsort(-visits, kind="stable")[:TOP]
    truth, markov, lists, cohorts = [], [], [], []
    sample = 0
    # a user who visited fewer distinct POIs than the median user before the test steps is a
    # "routine" user, the others "explorer"s: the cohorts of every sample of the user
    distinct = [len(set(path[: len(path) // 2])) for path in trajectories]
    middle = float(np.median(distinct))
    for path, seen in zip(trajectories, distinct, strict=True):
        cohort = "routine" if seen < middle else "explorer"
        half = len(path) // 2
        for previous, actual in zip(path[half - 1 : -1], path[half:], strict=True):
            scores = transitions[previous] + 1e-3 * visits + rng.random(n_pois) * 1e-6
            best = np.argsort(-scores, kind="stable")[:TOP]
            truth.append((sample, actual))
            cohorts.append((sample, cohort))
            markov.extend((sample, int(loc), float(scores[loc])) for loc in best)
            lists.append((sample, [int(loc) for loc in popular]))
            sample += 1
    out = HERE / name
    out.mkdir(parents=True, exist_ok=True)
    pl.DataFrame(
        truth, schema={"sample_id": pl.Int64, "location": pl.Int64}, orient="row"
    ).write_parquet(out / "truth.parquet")
    pl.DataFrame(
        markov,
        schema={"sample_id": pl.Int64, "location": pl.Int64, "score": pl.Float64},
        orient="row",
    ).write_parquet(out / "markov.parquet")
    pl.DataFrame(
        lists, schema={"sample_id": pl.Int64, "locations": pl.List(pl.Int64)}, orient="row"
    ).write_parquet(out / "popularity.parquet")
    pl.DataFrame(
        cohorts, schema={"sample_id": pl.Int64, "cohort": pl.String}, orient="row"
    ).write_csv(out / "cohorts.csv")


if __name__ == "__main__":
    build_city("tky", seed=7, n_users=150, n_pois=400, steps=40)
    build_city("nyc", seed=11, n_users=100, n_pois=300, steps=40)
