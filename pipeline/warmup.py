"""Fill the Numba cache before the first real run: ``mobeval warmup [--family ...]``.

mobeval's kernels are compiled by Numba on their first call and cached on disk (``cache=True``):
in ``NUMBA_CACHE_DIR`` if it is set, else next to their sources (``pipeline/kernels/__pycache__``)
when that folder is writable, else in the user's cache folder (``~/.cache/numba``), Numba's
order. A fresh machine, container or Spark executor therefore pays the compilation once per cache
folder; this module pays it ahead of time, e.g. while a container image is built, or once on a
shared folder that every executor names in ``NUMBA_CACHE_DIR``.

It compiles what real runs use, by making real runs: each family's public ``evaluate_*`` function
on a tiny input, once per preset and per option that reaches other kernels (list-form predictions
and ``duplicates="drop"`` for next location, optimal matching and NumPy's exp for trajectories,
float32 and float64 logits), and on predictions out of key order read each of the three ways.
The kernels' Python wrappers hand Numba one type per argument whatever the input's source, dtype,
layout or writability (a Parquet file, a CSV, a DataFrame, a mapped ``.npy``:
:func:`mobeval.kernels.blocks.readonly`), so a run after a warm-up loads every kernel from the
cache and compiles none (``tests/test_warmup.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

# NumPy, Polars and the API are imported by the warmers themselves: ``mobeval warmup --help``
# loads none of them.
FAMILY_NAMES = ("nextloc", "recs", "trajectory", "logits")


def _unsorted(evaluate, truth: pl.DataFrame, predictions: pl.DataFrame, key: str) -> None:
    """``evaluate`` on predictions out of key order, the three ways the local engine reads them
    (:mod:`mobeval.engines.local`): each unit's rows together in another order (streamed again
    as they come, the truth in memory), then rows of units interleaved, fitting in one chunk
    (sorted in memory) and not (hash buckets)."""
    import polars as pl

    grouped = predictions.sort(key, descending=True, maintain_order=True)
    place = pl.int_range(pl.len()).over(key)
    scattered = predictions.sort(place, pl.col(key), descending=[False, True])
    for frame, chunk_rows in ((grouped, 5), (scattered, 10**6), (scattered, 5)):
        evaluate(truth, frame, chunk_rows=chunk_rows, progress=False)


def _nextloc() -> None:
    import numpy as np
    import polars as pl

    from mobeval.api import evaluate_nextloc
    from mobeval.families import FAMILIES

    n, length = 3, 20  # 20 > 15 tied candidates: ranx's sort runs too
    sample = np.repeat(np.arange(n), length)
    location = np.tile(np.arange(length), n)
    score = np.where(sample == 0, 1.0, -location.astype(np.float64))  # sample 0: all tied
    long = pl.DataFrame({"sample_id": sample, "location": location, "score": score})
    truth = pl.DataFrame({"sample_id": np.arange(n), "location": [5, 0, 99]})
    lists = long.group_by("sample_id", maintain_order=True).agg(
        pl.col("location").alias("locations"), pl.col("score").alias("scores")
    )
    for convention in FAMILIES["nextloc"].presets():
        for predictions in (long, lists, lists.drop("scores")):
            evaluate_nextloc(truth, predictions, convention=convention, progress=False)
    evaluate_nextloc(truth, long, duplicates="drop", progress=False)
    _unsorted(evaluate_nextloc, truth, long, "sample_id")


def _recs() -> None:
    import numpy as np
    import polars as pl

    from mobeval.api import evaluate_recs
    from mobeval.families import FAMILIES

    users, items = np.repeat(np.arange(3), 6), np.tile(np.arange(6), 3)
    ratings = pl.DataFrame({"user_id": users, "item_id": items, "rating": (items % 5) + 1.0})
    recs = pl.DataFrame(
        {
            "user_id": users,
            "item_id": (items * 7 + users) % 9,
            "score": 10.0 - items,
            "rank": (items + 1).astype(np.int32),
        }
    )
    for convention in FAMILIES["recs"].presets():
        evaluate_recs(ratings, recs, convention=convention, progress=False)
    _unsorted(evaluate_recs, ratings, recs.drop("rank"), "user_id")


def _trajectory() -> None:
    import numpy as np
    import polars as pl

    from mobeval.api import evaluate_trajectory
    from mobeval.families import FAMILIES

    steps = 12
    uid, t = np.repeat([1, 2], steps), np.tile(np.arange(steps), 2)
    reference = pl.DataFrame({"uid": uid, "d": 60, "t": t, "x": 10 + t, "y": 20 + t % 3})
    generated = reference.with_columns(pl.col("x") + pl.col("t") % 2)
    for convention in FAMILIES["trajectory"].presets():
        for matching in ("greedy", "optimal"):
            for exp in ("libm", "numpy"):
                evaluate_trajectory(
                    reference,
                    generated,
                    convention=convention,
                    matching=matching,
                    exp=exp,
                    progress=False,
                )
    _unsorted(evaluate_trajectory, reference, generated, "uid")


def _logits() -> None:
    import numpy as np

    from mobeval.api import evaluate_logits
    from mobeval.families import FAMILIES

    rng = np.random.default_rng(0)
    logits = rng.normal(size=(8, 12))
    logits[0, :] = 0.0  # ties
    targets = np.arange(8) % 12
    for convention in FAMILIES["logits"].presets():
        for dtype in (np.float64, np.float32):
            evaluate_logits(logits.astype(dtype), targets, convention=convention, progress=False)


WARMERS: dict[str, Callable[[], None]] = {
    "nextloc": _nextloc,
    "recs": _recs,
    "trajectory": _trajectory,
    "logits": _logits,
}


def warmup(families: list[str] | tuple[str, ...] = FAMILY_NAMES) -> dict[str, float]:
    """Run every family of ``families`` on its tiny inputs (compiling and caching its kernels, or
    loading them when cached already); the seconds each took."""
    seconds = {}
    for family in families:
        started = time.perf_counter()
        WARMERS[family]()
        seconds[family] = time.perf_counter() - started
    return seconds


def cache_location() -> str:
    """Where this process's Numba cache is written (Numba's own order): ``NUMBA_CACHE_DIR``, else
    the kernels' ``__pycache__`` folder if it can be written, else the user's cache folder. A
    ``NUMBA_CACHE_DIR`` that cannot be made or written (a file, a read-only folder), which Numba
    would pass over silently for the next place, is a ConfigError naming it."""
    import os
    import tempfile
    from pathlib import Path

    import numba
    from numba.misc.appdirs import AppDirs

    import mobeval.kernels
    from mobeval.errors import ConfigError

    if numba.config.CACHE_DIR:
        try:  # Numba's own test of a cache folder (caching._CacheLocator.ensure_cache_path)
            os.makedirs(numba.config.CACHE_DIR, exist_ok=True)
            tempfile.TemporaryFile(dir=numba.config.CACHE_DIR).close()
        except OSError as error:
            why = "a file, not a folder" if os.path.isfile(numba.config.CACHE_DIR) else error
            raise ConfigError(
                f"NUMBA_CACHE_DIR={numba.config.CACHE_DIR}: the kernels cannot be cached there "
                f"({getattr(why, 'strerror', None) or why}); Numba would cache them elsewhere, "
                "unseen"
            ) from None
        return numba.config.CACHE_DIR
    kernels = Path(mobeval.kernels.__file__).parent
    if os.access(kernels, os.W_OK):
        return str(kernels / "__pycache__")
    return AppDirs(appname="numba", appauthor=False).user_cache_dir
