"""``compare()``: the comparison of OUT's models, city by city (every check first, then the
statistics), its options checked, and its table written to ``OUT/compare``."""

from __future__ import annotations

import contextlib
import math
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import polars as pl

from mobeval.compare.cohorts import cohort_views
from mobeval.compare.corrections import CORRECTIONS, FAMILIES, corrected
from mobeval.compare.intervals import bootstrap_cis
from mobeval.compare.names import TESTS
from mobeval.compare.pairing import (
    POPULATION,
    UNITS,
    alignment,
    check_same_scoring,
    common_rows,
    in_order,
    key_order,
    load_side,
    model_pairs,
    percent_metrics,
    read_column,
    unit_keys,
)
from mobeval.compare.results import OutputFolder, runs_fingerprint
from mobeval.compare.runs import RUNS, RUNS_AS_UNITS, runs_mode, runs_side
from mobeval.compare.significance import (
    cohen_dz_moments,
    difference_moments,
    paired_t_moments,
    pooled_t,
    randomizations,
    rank_biserial_ranked,
    rank_sum,
    signed_ranks,
    tukey_hsd,
    wilcoxon_ranked,
)
from mobeval.compare.stored import write_comparison
from mobeval.errors import ConfigError, InputError
from mobeval.io.scratch import ScratchFolder

#: At most this many metrics are read and resampled together (their resamples and sign flips
#: shared: the same numbers as one at a time, fewer passes over the units)...
METRICS_AT_ONCE = 8
#: ... and no more than fit in this many bytes of every model's columns (units x models x 8
#: bytes per metric; at least one metric): memory is bounded by one metric's columns, not by
#: models x metrics.
COLUMNS_BUDGET = 256 * 2**20

SCHEMA = {
    "city": pl.String,
    "task": pl.String,
    "unit": pl.String,
    "metric": pl.String,
    "baseline": pl.String,
    "model": pl.String,
    "baseline_fingerprint": pl.String,
    "model_fingerprint": pl.String,
    "runs": pl.String,
    "runs_baseline": pl.Int64,
    "runs_model": pl.Int64,
    "sd_runs_baseline": pl.Float64,
    "sd_runs_model": pl.Float64,
    "n": pl.Int64,
    "n_baseline_only": pl.Int64,
    "n_model_only": pl.Int64,
    "percent": pl.Boolean,
    "mean_baseline": pl.Float64,
    "mean_model": pl.Float64,
    "diff": pl.Float64,
    "rel_change_pct": pl.Float64,
    "cohen_dz": pl.Float64,
    "rank_biserial": pl.Float64,
    "confidence": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "resamples": pl.Int64,
    "seed": pl.Int64,
    "p_t": pl.Float64,
    "p_wilcoxon": pl.Float64,
    "wilcoxon_method": pl.String,
    "p_randomization": pl.Float64,
    "randomization_method": pl.String,
    "permutations": pl.Int64,
    "p_tukey": pl.Float64,
    "n_tukey": pl.Int64,
    "p_ttest_ind": pl.Float64,
    "p_ranksums": pl.Float64,
    "correction": pl.String,
    "family": pl.String,
}
#: The columns :func:`~mobeval.compare.corrections.corrected` adds to :data:`SCHEMA`'s.
CORRECTED = {
    "family_size": pl.Int64,
    "p_t_corrected": pl.Float64,
    "p_wilcoxon_corrected": pl.Float64,
    "p_randomization_corrected": pl.Float64,
    "p_tukey_corrected": pl.Float64,
    "p_ttest_ind_corrected": pl.Float64,
    "p_ranksums_corrected": pl.Float64,
}
#: The tests run when none are named (Tukey's HSD is asked for: ``tests="tukey"``).
DEFAULT_TESTS = ("paired-t", "wilcoxon", "randomization")


def checked_options(
    tests, correction, confidence, resamples, permutations, seed, unit, family="all", runs="mean"
):
    given = [tests] if isinstance(tests, str) else list(tests)
    tests = [name.strip() for text in given for name in str(text).split(",") if name.strip()]
    unknown = [t for t in tests if t not in TESTS]
    if unknown or not tests:
        raise ConfigError(f"--tests: {unknown or tests!r}: choose among {', '.join(TESTS)}")
    if correction not in CORRECTIONS:
        raise ConfigError(f"--correction: {correction!r}: choose among {', '.join(CORRECTIONS)}")
    if family not in FAMILIES:
        raise ConfigError(f"--family: {family!r}: choose among {', '.join(FAMILIES)}")
    if not (isinstance(confidence, float | int) and 0 < confidence < 1):
        raise ConfigError(f"--confidence: {confidence!r} is not between 0 and 1")
    for option, value in (("--resamples", resamples), ("--permutations", permutations)):
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 10**9:
            raise ConfigError(f"{option}: {value!r} is not an integer between 0 and 10^9")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**63:
        raise ConfigError(f"--seed: {seed!r} is not an integer between 0 and 2^63 - 1")
    if unit not in UNITS:
        raise ConfigError(f"--unit: {unit!r}: choose among {', '.join(UNITS)}")
    if runs not in RUNS:
        raise ConfigError(f"--runs: {runs!r}: choose among {', '.join(RUNS)}")
    return list(dict.fromkeys(tests))


def _note(log: Callable[[str], None] | None, text: str) -> None:
    if log is not None:
        log(text)


def _stderr(text: str) -> None:
    print(text, file=sys.stderr)


def compare(
    out: str | os.PathLike,
    *,
    city: str | None = None,
    baseline: str | None = None,
    models: Sequence[str] | str | None = None,
    metrics: Sequence[str] | str | None = None,
    pairs: Sequence[str] | str | None = None,
    tests: Sequence[str] | str = DEFAULT_TESTS,
    resamples: int = 1000,
    permutations: int = 10000,
    seed: int = 0,
    correction: str = "holm",
    family: str = "all",
    confidence: float = 0.95,
    intersect: bool = False,
    unit: str = "default",
    runs: str = "mean",
    cohorts: bool = False,
    write: bool = False,
    log: Callable[[str], None] | None = _stderr,
    check: Callable[[pl.DataFrame], object] | None = None,
) -> pl.DataFrame:
    """Compare the models of OUT's cities pairwise on their per-unit values (package docstring).

    Args:
        out: a mobeval output folder (with ``manifest.json``).
        city: one city (default: every city with two models or more).
        baseline: compare every model against this one (default: every pair, the earlier model
            of the manifest as the baseline).
        pairs: ``all`` (every pair), ``baseline`` (``baseline``, else the first model, against
            each other model) or a list of ``"baseline_model:model"`` (a string: comma-separated);
            default: ``baseline`` when a baseline is given, else ``all``.
        models: the models of each city compared (default: all).
        metrics: metric names (default: every metric that can be paired).
        tests: among ``paired-t``, ``wilcoxon``, ``randomization``, ``tukey`` (Tukey's HSD over
            every model of the city: the studentized range, already adjusted over its pairs),
            ``ttest-ind`` and ``ranksums`` (ClayRS's ``Ttest`` and ``Wilcoxon``: unpaired).
        resamples: bootstrap resamples of the interval (0: none).
        permutations: random sign vectors of the randomization test when it is not exact.
        seed: of the bootstrap and of the sign flips.
        correction: ``holm``, ``bonferroni``, ``bh``, ``by`` or ``none``, over each ``family``.
        family: ``all`` (every p-value of a city: metrics x pairs x tests) or ``metric`` (those
            of one metric of a city: pairs x tests).
        confidence: of the bootstrap interval.
        intersect: compare the units common to both models instead of refusing different sets.
        unit: ``default`` (each task's unit), ``uid`` (trajectories), ``day`` (trajectories'
            uid-days).
        runs: ``mean``: a model's runs (seeds, folds) taken together: the tests over its
            per-unit means across runs, or over its runs as units when the units differ
            between runs, and the sd over runs beside (:mod:`mobeval.compare.runs`);
            ``separate``: each run a model of its own (``model/run``).
        cohorts: also compare within each cohort (results scored with ``cohorts``): rows with
            a ``cohort`` (null: the whole result's rows, the only ones written).
        write: also write ``OUT/compare/city=<c>/part-0.parquet`` (holding OUT's lock), except
            over a stored comparison that tests more (:mod:`mobeval.compare.stored`: it is kept,
            and a note says so).
        log: where the notes go (metrics left out, cities skipped); None: nowhere.
        check: called on the comparison before anything is written (the leaderboard view:
            every pair compared); what it raises stops the command with nothing written.

    Returns:
        One row per (city, metric, baseline, model): :data:`SCHEMA` and :data:`CORRECTED`.

    Raises:
        ConfigError, InputError: what would mislead (different options, different units, one
            model, missing per-unit outputs, an unknown baseline or metric); nothing is written.
    """
    tests = checked_options(
        tests, correction, confidence, resamples, permutations, seed, unit, family, runs
    )
    if isinstance(pairs, str) and pairs not in ("all", "baseline"):
        pairs = [p.strip() for p in pairs.split(",") if p.strip()]
    if isinstance(metrics, str):
        metrics = [m.strip() for m in metrics.split(",") if m.strip()]
    if isinstance(models, str):
        models = [m.strip() for m in models.split(",") if m.strip()]
    if write and not (Path(out) / "manifest.json").is_file():
        raise InputError("no manifest.json: not a mobeval output folder", path=out)
    from mobeval.io.writers import output_lock

    with output_lock(out) if write else contextlib.nullcontext():
        frame = _compare(
            out,
            city=city,
            baseline=baseline,
            pairs=pairs,
            models=models,
            metrics=metrics,
            tests=tests,
            resamples=resamples,
            permutations=permutations,
            seed=seed,
            correction=correction,
            family=family,
            confidence=confidence,
            intersect=intersect,
            unit=unit,
            runs=runs,
            log=log,
            cohorts=cohorts,
        )
        whole = frame.filter(pl.col("cohort").is_null()).drop("cohort") if cohorts else frame
        if check is not None:
            check(whole)
        if write:
            write_comparison(Path(out), whole, log)
    return frame


def _compare(out, cohorts: bool = False, **options) -> pl.DataFrame:
    """:func:`_compare_in` over OUT's results, with a scratch folder for the runs' unit means
    (removed on every way out); with ``cohorts``, then over each cohort's view of them
    (:func:`mobeval.compare.cohorts.cohort_views`), a ``cohort`` column after ``city``."""
    with ScratchFolder(tempfile.gettempdir(), "mobeval-runs-") as scratch:
        source = OutputFolder(out)
        frame = _compare_in(source, scratch, out=out, **options)
        if not cohorts:
            return frame
        views = cohort_views(source, frame["city"].unique(maintain_order=True).to_list(), scratch)
        parts = [frame.with_columns(pl.lit(None, pl.String).alias("cohort"))] + [
            _compare_in(OutputFolder(view), scratch, out=out, **options).with_columns(
                pl.lit(name, pl.String).alias("cohort")
            )
            for name, view in views.items()
        ]
        return pl.concat(parts).select("city", "cohort", pl.exclude("city", "cohort"))


def _listing(source: OutputFolder, city: str, runs: str) -> dict[str, list]:
    """The city's models, each with its results (``runs="separate"``: each run on its own)."""
    if runs == "separate":
        return {model: [result] for model, result in source.cities[city].items()}
    return source.models(city)


def _compare_in(
    source,
    scratch,
    *,
    out,
    city,
    baseline,
    pairs,
    models,
    metrics,
    tests,
    resamples,
    permutations,
    seed,
    correction,
    family,
    confidence,
    intersect,
    unit,
    runs,
    log,
) -> pl.DataFrame:
    if not source.cities:
        raise InputError("no complete result in the manifest: nothing to compare", path=out)
    if city is not None:
        if city not in source.cities:
            raise ConfigError(
                f"--city: no results for city {city!r} in {out} (cities: "
                f"{', '.join(source.cities)})"
            )
        cities = [city]
    else:
        cities = list(source.cities)
    if models is not None:
        known = {model for name in source.cities for model in _listing(source, name, runs)}
        unknown = [m for m in models if m not in known]
        if unknown:
            raise ConfigError(
                f"--models: no model {unknown[0]!r} in {out} (models: {', '.join(sorted(known))})"
            )
    plans = []
    for name in cities:
        results = _listing(source, name, runs)
        if models is not None:
            results = {m: r for m, r in results.items() if m in models}
            if not results:
                continue
        if len(results) < 2:
            text = f"city={name} has a single model ({next(iter(results))}); a comparison needs two"
            if city is not None or len(cities) == 1:
                raise ConfigError(text)
            _note(log, f"note: {text}: skipped")
            continue
        if baseline is not None and baseline not in results:
            raise ConfigError(
                f"--baseline: no model {baseline!r} in city={name} (models: {', '.join(results)})"
            )
        plans.append(name)
    if not plans:
        raise ConfigError(f"{out}: no city has two models to compare")
    # Every check first (nothing is computed or written before they all pass).
    prepared, prints = [], {}
    for name in plans:
        listing = {
            m: r for m, r in _listing(source, name, runs).items() if models is None or m in models
        }
        results = [result for group in listing.values() for result in group]
        mode = runs_mode(source, listing, unit) if runs == "mean" else None
        if mode == RUNS_AS_UNITS:  # folds: a run's truth is shared by the models' same run
            check_same_scoring(name, results, truth=False)
            for run in dict.fromkeys(result.run for result in results):
                check_same_scoring(name, [r for r in results if r.run == run])
        else:
            check_same_scoring(name, results)
        sides, unpaired = {}, {}
        for model, group in listing.items():
            if mode is None or (len(group) == 1 and group[0].run is None and mode != RUNS_AS_UNITS):
                side, left_out = load_side(source, group[0], unit, log)
            else:
                side, left_out = runs_side(source, group, unit, mode, scratch, log)
            sides[model] = side
            for metric, reason in left_out.items():
                unpaired.setdefault(metric, reason)
        unit_name = "run" if mode == RUNS_AS_UNITS else unit_keys(results[0], unit)[2]
        if mode is not None:
            counts = ", ".join(f"{m} {side.runs}" for m, side in sides.items() if side.runs)
            paired = "the runs as units" if mode == RUNS_AS_UNITS else f"per-{unit_name} means"
            _note(log, f"note: city={name}: runs ({counts}): tests over {paired} across runs")
        chosen = model_pairs(list(sides), baseline, pairs)
        # the units every model has, in key order (one array per model, not two per pair: 190
        # pairs of 20 models); the models' keys read one at a time when their units are the same
        same = key_order(sides)
        if same is not None:
            (everywhere, units), alignments = same, {}
        else:  # different units: every model's keys, each pair aligned
            keys = {model: side.read_keys() for model, side in sides.items()}
            alignments = {
                (a, b): alignment(name, unit_name, sides[a], sides[b], keys[a], keys[b], intersect)
                for a, b in chosen
            }
            schemas = [frame.schema for frame in keys.values()]
            everywhere = (
                {
                    model: slice(None) if in_order(rows, keys[model].height) else rows
                    for model, rows in common_rows(keys).items()
                }
                if all(schema == schemas[0] for schema in schemas)
                else None
            )
            units = max(frame.height for frame in keys.values())
            del keys
        available = [
            m
            for m in next(iter(sides.values())).summary["metric"]
            if all(m in s.columns for s in sides.values())
        ]
        if metrics is not None:
            wanted = []
            for metric in metrics:
                if metric in unpaired:
                    raise ConfigError(
                        f"city={name}: metric {metric!r} cannot be paired: {unpaired[metric]}"
                    )
                if metric not in available:
                    raise ConfigError(
                        f"city={name}: no metric {metric!r} scored for every model (metrics: "
                        f"{', '.join(available)})"
                    )
                wanted.append(metric)
        else:
            wanted = available
            population = [m for m, reason in unpaired.items() if reason == POPULATION]
            if population:
                _note(log, f"note: city={name}: {', '.join(population)} not paired: {POPULATION}")
            for metric, reason in unpaired.items():
                if reason != POPULATION:
                    _note(log, f"note: city={name}: {metric} left out: {reason}")
            partial = {
                m for side in sides.values() for m in side.columns if m not in available
            } - set(unpaired)
            for metric in sorted(partial):
                _note(log, f"note: city={name}: {metric} left out: not scored for every model")
        if not wanted:
            raise ConfigError(f"city={name}: no metric can be paired")
        for (a, b), (_, _, only_a, only_b) in alignments.items():
            if only_a or only_b:
                common = alignments[(a, b)][0].size
                _note(
                    log,
                    f"note: city={name}: {a} vs {b}: {common} common {unit_name}s compared "
                    f"({only_a} only in {a}, {only_b} only in {b} left out)",
                )
        prepared.append(
            (name, results[0].task, unit_name, sides, wanted, chosen, alignments, everywhere, mode)
            + (units,)
        )
        prints[name] = {model: runs_fingerprint(group) for model, group in listing.items()}
    frames = []
    for (
        name,
        task,
        unit_name,
        sides,
        wanted,
        chosen,
        alignments,
        everywhere,
        mode,
        units,
    ) in prepared:
        rows, slow, one_sided = {}, {}, []
        at_once = max(1, min(METRICS_AT_ONCE, COLUMNS_BUDGET // (8 * units * len(sides) or 1)))
        for first in range(0, len(wanted), at_once):
            group = wanted[first : first + at_once]
            # with the same units everywhere, every column in key order once (pairs take views)
            order = {m: slice(None) for m in sides} if not alignments else everywhere
            values = {
                model: {
                    m: _scaled(read_column(side.files, m), side.scale[m])[
                        slice(None) if alignments else everywhere[model]
                    ]
                    for m in group
                }
                for model, side in sides.items()
            }
            # which columns have a NaN: the pairs of two columns without one skip the masks
            holes = {
                model: {m: bool(np.isnan(column).any()) for m, column in columns.items()}
                for model, columns in values.items()
            }
            tukey = {m: _tukey(values, m, order) for m in group} if "tukey" in tests else {}
            for metric, (_, _, flagged) in tukey.items():
                if flagged:
                    slow[metric] = flagged
            # with the same units, each model's means once, and every pair's differences
            # formed in one scratch column (no temporary array per pair)
            means, scratch = {}, None
            if not alignments:
                scratch = np.empty(units, dtype=np.float64)
                with np.errstate(invalid="ignore"):  # inf - inf: NaN, as np.mean gives it
                    means = {
                        model: {
                            m: float(np.mean(column)) if units else math.nan
                            for m, column in columns.items()
                        }
                        for model, columns in values.items()
                    }
            for a, b in chosen:
                ia, ib, only_a, only_b = alignments.get((a, b)) or (order[a], order[b], 0, 0)
                paired = {}
                for metric in group:
                    va, vb = values[a][metric][ia], values[b][metric][ib]
                    if not (holes[a][metric] or holes[b][metric]):
                        summary = (
                            _pair_summary(va, vb)
                            if scratch is None
                            else (means[a][metric], means[b][metric])
                            + difference_moments(va, vb, scratch)
                        )
                        paired[metric] = (None, va, vb, summary)
                        continue
                    nan_a, nan_b = np.isnan(va), np.isnan(vb)
                    keep = ~(nan_a | nan_b)  # a unit NaN on either side: out of both, said
                    if (nan_a != nan_b).any():
                        one_sided.append(
                            f"{metric}, {a} vs {b}: {int((nan_a & ~nan_b).sum())} only in {a}, "
                            f"{int((nan_b & ~nan_a).sum())} only in {b} ({int(keep.sum())} paired)"
                        )
                    whole_pair = bool(keep.all())
                    va, vb = (va, vb) if whole_pair else (va[keep], vb[keep])
                    paired[metric] = (keep, va, vb, _pair_summary(va, vb))
                # metrics with the same units resample together (the same numbers as alone)
                batches: dict[bytes | None, list[str]] = {}
                for metric, (keep, _, _, _) in paired.items():
                    units_of = None if keep is None else np.packbits(keep).tobytes()
                    batches.setdefault(units_of, []).append(metric)
                for batch in batches.values():
                    stats = _batch_stats(
                        [paired[m][1] for m in batch],
                        [paired[m][2] for m in batch],
                        [paired[m][3] for m in batch],
                        tests,
                        resamples,
                        permutations,
                        seed,
                        confidence,
                    )
                    for metric, values_of in zip(batch, stats, strict=True):
                        percent = metric.partition("@")[0] in percent_metrics(sides[a].result)
                        p_tukey, n_tukey, _ = tukey.get(metric, (None, None, None))
                        rows[(metric, a, b)] = {
                            "city": name, "task": task, "unit": unit_name, "metric": metric,
                            "baseline": a, "model": b, "baseline_fingerprint": prints[name][a],
                            "model_fingerprint": prints[name][b], "runs": mode,
                            "runs_baseline": sides[a].runs or None,
                            "runs_model": sides[b].runs or None,
                            "sd_runs_baseline": sides[a].sd_over_runs.get(metric),
                            "sd_runs_model": sides[b].sd_over_runs.get(metric),
                            "n_baseline_only": only_a,
                            "n_model_only": only_b, "percent": percent,
                            "confidence": float(confidence), "resamples": resamples,
                            "seed": seed, "permutations": permutations,
                            "p_tukey": None if p_tukey is None else p_tukey[a][b],
                            "n_tukey": n_tukey, "correction": correction, "family": family,
                            **values_of,
                        }  # fmt: skip
            # this group's columns (and the pairs' views of them) freed before the next
            # group's are read: one group's columns held, not two
            del values, paired, va, vb, scratch
        if one_sided:
            _note(log, f"note: city={name}: {unit_name}s without a value (NaN) on one side only, "
                  f"left out of both sides: {'; '.join(one_sided)}")  # fmt: skip
        if slow:
            _note(log, _integration_note(name, slow))
        ordered = [rows[(metric, a, b)] for metric in wanted for a, b in chosen]
        frame = pl.DataFrame(ordered, schema=SCHEMA)
        frames.append(corrected(frame, tests, correction, family))
    return pl.concat(frames)


def _scaled(column: np.ndarray, factor: float) -> np.ndarray:
    """``column * factor``, the column itself when the factor is 1 (no copy)."""
    return column if factor == 1.0 else column * factor


def _pair_summary(va: np.ndarray, vb: np.ndarray) -> tuple[float, float, int, float, float]:
    """``(mean_a, mean_b, n, total, squares)`` of one pair's values (``np.mean`` of each, NaN
    without units, and the :func:`~mobeval.compare.significance.moments` of ``vb - va``)."""
    if not va.size:
        return math.nan, math.nan, 0, 0.0, 0.0
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, as np.mean gives it
        mean_a, mean_b = float(np.mean(va)), float(np.mean(vb))
    return mean_a, mean_b, *difference_moments(va, vb)


def _batch_stats(
    baselines, models, summaries, tests, resamples, permutations, seed, confidence
) -> list[dict]:
    """Means, interval and p-values of each metric of a batch paired on the same units
    (``summaries``: per metric, :func:`_pair_summary`'s numbers); the differences themselves are
    formed only for the tests that resample or rank them."""
    n = baselines[0].size
    columns = len(baselines)
    if resamples > 0 or "randomization" in tests or "wilcoxon" in tests:
        d = np.empty((n, columns), dtype=np.float64)
        for c, (va, vb) in enumerate(zip(baselines, models, strict=True)):
            d[:, c] = vb - va
        low, high = bootstrap_cis(d, resamples, seed, confidence)
    else:
        d, low, high = None, np.full(columns, math.nan), np.full(columns, math.nan)
    if "randomization" in tests:
        p_r, r_methods = randomizations(d, permutations, seed)
    out = []
    for c, (va, vb) in enumerate(zip(baselines, models, strict=True)):
        mean_a, mean_b, _, total, squares = summaries[c]
        with np.errstate(invalid="ignore", divide="ignore"):
            diff = mean_b - mean_a
            relative = 100.0 * diff / abs(mean_a) if mean_a != 0 else math.nan
        ranked = signed_ranks(np.ascontiguousarray(d[:, c])) if "wilcoxon" in tests else None
        p_w, w_method = wilcoxon_ranked(n, *ranked) if ranked else (None, None)
        out.append(
            {
                "n": n,
                "mean_baseline": mean_a,
                "mean_model": mean_b,
                "diff": diff,
                "rel_change_pct": relative,
                "cohen_dz": cohen_dz_moments(n, total, squares),
                "rank_biserial": rank_biserial_ranked(*ranked[:2]) if ranked else None,
                "ci_low": float(low[c]),
                "ci_high": float(high[c]),
                "p_t": paired_t_moments(n, total, squares) if "paired-t" in tests else None,
                "p_wilcoxon": p_w,
                "wilcoxon_method": w_method,
                "p_randomization": float(p_r[c]) if "randomization" in tests else None,
                "randomization_method": r_methods[c] if "randomization" in tests else None,
                "p_ttest_ind": (
                    pooled_t(n, mean_a, _squares(va, mean_a), n, mean_b, _squares(vb, mean_b))
                    if "ttest-ind" in tests
                    else None
                ),
                "p_ranksums": rank_sum(va, vb) if "ranksums" in tests else None,
            }
        )
    return out


def _squares(values: np.ndarray, mean: float) -> float:
    """The sum of squared deviations of ``values`` from their ``mean``: ``sum_u (x_u - mean)^2``
    (Tukey's HSD and the pooled t take a model's values as its size, mean and this sum)."""
    return float(np.sum((values - mean) ** 2))


def _tukey(
    values: dict[str, dict[str, np.ndarray]], metric: str, everywhere: dict[str, np.ndarray]
) -> tuple[dict[str, dict[str, float]], int, list[float]]:
    """Tukey's HSD p-values of every pair of models on ``metric`` (``p[a][b]``), the units
    compared: those every model has (``everywhere``: each model's rows of them, in key order, or
    a slice of all when its values are already so), less those where a model has no value; and
    the p-values of the pairs scipy's integration flagged (:func:`tukey_hsd`)."""
    keep = None
    for model, rows in everywhere.items():  # one model's copy at a time
        present = ~np.isnan(values[model][metric][rows])
        keep = present if keep is None else keep & present
    counts, means, squares = [], [], []
    every = bool(keep.all())  # no unit left out: the columns as they are, not copied
    for model, rows in everywhere.items():
        column = values[model][metric][rows]
        column = column if every else column[keep]
        mean = np.mean(column) if column.size else math.nan
        counts.append(column.size)
        means.append(mean)
        squares.append(_squares(column, mean))
    pvalues, flagged = tukey_hsd(counts, means, squares)
    models = list(everywhere)
    table = {
        a: {b: float(pvalues[i, j]) for j, b in enumerate(models)} for i, a in enumerate(models)
    }
    return table, int(keep.sum()), [float(p) for p in pvalues[np.triu(flagged, 1)]]


def _integration_note(city: str, flagged: dict[str, list[float]]) -> str:
    """The one line that replaces scipy's ``IntegrationWarning`` of a city's Tukey p-values
    (``flagged``: per metric, the p-values of the pairs flagged), saying whether a decision
    can hang on them: not when every one is above 0.5, far from any significance level."""
    pvalues = [p for values in flagged.values() for p in values]
    smallest = min(pvalues)
    verdict = (
        "far from any significance level, no decision depends on their last digits"
        if smallest > 0.5
        else "they may be inexact: check them with another tool"
    )
    return (
        f"note: city={city}: Tukey's HSD: scipy's numerical integral of the studentized range "
        f"converged slowly (IntegrationWarning) for {len(pvalues)} pair(s) of "
        f"{', '.join(flagged)}; their p_tukey are scipy's (as scipy.stats.tukey_hsd gives), the "
        f"smallest {smallest:.12g}: {verdict}"
    )
