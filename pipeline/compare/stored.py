"""The stored comparison ``OUT/compare/city=<c>/part-0.parquet``: written whole, and never
replaced by one that tests less.

A quick look (``mobeval compare OUT --metrics acc@1,mrr``, ``--models``, ``--tests paired-t``)
compares part of what a job's full comparison did. Stored over it, it would erase the rest:
the report would then mark the other metrics "not tested". So a city's stored comparison is
replaced only by one that covers it: every (metric, baseline, model) it holds for the results
as they are now (its fingerprints still the manifest's), by every test it ran, and not merely
more pairs of the same models (whose correction over a larger family would change the stored
pairs' p-values: a leaderboard's every pair after a job's pairs against its baseline). One that does
not cover it is returned and printed but not written; a note says so and what it lacks. A
stored comparison of results scored again since (or written by an older mobeval, without
fingerprints) tests nothing current and is replaced.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable
from pathlib import Path

import polars as pl

from mobeval.compare.names import P_COLUMNS
from mobeval.compare.results import OutputFolder, runs_fingerprint
from mobeval.errors import InputError
from mobeval.io.outputs import read_section
from mobeval.io.writers import STAGING, checked_destination, remove_staged, write_parquet

_KEY = ("metric", "baseline", "model")


def _current(source: OutputFolder, city: str) -> dict[str, str]:
    """The fingerprint of each model of the city as a comparison names it: the model (its runs
    taken together, or its one result) and each run on its own (``model/run``)."""
    if city not in source.cities:
        return {}
    prints = {model: runs_fingerprint(group) for model, group in source.models(city).items()}
    return prints | {
        shown: runs_fingerprint([result]) for shown, result in source.cities[city].items()
    }


def _ran(frame: pl.DataFrame) -> set[str]:
    return {test for test, column in P_COLUMNS.items() if frame[column].is_not_null().any()}


def _adds(live: pl.DataFrame, new: pl.DataFrame) -> bool:
    """Whether ``new`` compares metrics, tests or models that ``live`` does not."""
    models = [set(frame["baseline"]) | set(frame["model"]) for frame in (live, new)]
    metrics = [set(frame["metric"]) for frame in (live, new)]
    return bool(models[1] - models[0] or metrics[1] - metrics[0] or _ran(new) - _ran(live))


def missing_from(stored: pl.DataFrame, new: pl.DataFrame, current: dict[str, str]) -> str | None:
    """What the ``stored`` comparison of a city tests of its ``current`` results (model ->
    fingerprint) that ``new`` does not, in words: a metric of a pair, a test, or its pairs'
    p-values corrected over a family of their size where ``new`` only adds pairs of the same
    models, metrics and tests (the leaderboard's every pair after a job's baseline pairs);
    None when ``new`` covers it."""
    if not {"baseline_fingerprint", "model_fingerprint"} <= set(stored.columns):
        return None  # an older mobeval's: it cannot tell which results it tested
    live = stored.filter(
        (pl.col("baseline").replace_strict(current, default=None) == pl.col("baseline_fingerprint"))
        & (pl.col("model").replace_strict(current, default=None) == pl.col("model_fingerprint"))
    )
    family = "family_size" in stored.columns  # older comparisons did not record it
    compared = {row[:3]: row[3] for row in new.select(*_KEY, "family_size").iter_rows()}
    held = list(live.select(*_KEY, "family_size" if family else pl.lit(None)).iter_rows())
    lacking = [row for row in held if row[:3] not in compared]
    if lacking:
        metric, baseline, model, _ = lacking[0]
        more = f" and {len(lacking) - 1} more" if len(lacking) > 1 else ""
        return f"{metric} of {model} vs {baseline}{more}"
    other = [row for row in held if family and compared[row[:3]] != row[3]]
    if other and not _adds(live, new):  # more pairs of the same: other corrected p-values
        metric, baseline, model, size = other[0]
        return (
            f"{metric} of {model} vs {baseline} corrected over a family of {size} p-values, "
            f"not {compared[other[0][:3]]}"
        )
    tests = sorted(_ran(live) - _ran(new)) if live.height else []
    return f"the {', '.join(tests)} test(s)" if tests else None


def write_comparison(out: Path, frame: pl.DataFrame, note: Callable[[str], None] | None) -> None:
    """``OUT/compare/city=<c>/part-0.parquet`` per city of ``frame``, staged in
    ``OUT/.staging`` and moved into place (the city's previous comparison moved aside first,
    then deleted): whole or absent; a city whose stored comparison ``frame`` does not cover
    (:func:`missing_from`) keeps it, and ``note`` (when given) says why. The caller holds
    OUT's lock; every city's folder is checked before anything is written
    (:func:`mobeval.io.writers.checked_destination`: never through a link that leaves OUT)."""
    token = secrets.token_hex(4)
    parts = frame.partition_by("city", as_dict=True, maintain_order=True).items()
    finals = {
        city: checked_destination(out / "compare" / f"city={city}", out) for (city,), _ in parts
    }
    source = OutputFolder(out)
    for (city,), part in parts:
        final = finals[city]
        stored = final / "part-0.parquet"
        lacking = None
        if stored.is_file():
            with contextlib.suppress(InputError, OSError, pl.exceptions.PolarsError):
                lacking = missing_from(read_section([stored]), part, _current(source, city))
        if lacking is not None:
            if note is not None:
                kept = out / "compare" / f"city={city}"
                note(
                    f"note: city={city}: {kept} kept: it also tests {lacking}, which this "
                    "comparison does not; this one is printed, not written (compare all of "
                    "that to replace it, or remove the folder)"
                )
            continue
        staged = out / STAGING / f"compare-{token}" / f"city={city}"
        staged.mkdir(parents=True, exist_ok=True)
        write_parquet(part.drop("city"), staged / "part-0.parquet")
        final.parent.mkdir(parents=True, exist_ok=True)
        aside = out / STAGING / f"compare-{token}" / f"replaced-city={city}"
        with contextlib.suppress(FileNotFoundError):
            os.replace(final, aside)
        os.replace(staged, final)
        remove_staged(aside, out)
    remove_staged(out / STAGING / f"compare-{token}", out)
