"""Paired comparison of models scored on the same units: ``mobeval compare OUT``.

>>> from mobeval.compare import compare
>>> table = compare("out/nextloc_sample", baseline="popularity")   # a polars DataFrame
>>> compare("out/nextloc_sample", write=True)   # also OUT/compare/city=<c>/part-0.parquet

For every city of OUT, every metric whose city value is the mean of its per-unit values, and every
model against the baseline (or every pair), the per-unit values are paired by the unit key
(samples, uids, uid-days, users, logits rows) and the differences ``d = model - baseline`` go
through the chosen tests. Reading OUT (manifest, per-unit Parquet) is :class:`_Out`'s job; the
statistics below take NumPy arrays.

Conventions (README "Compare models"):

* ``paired-t``: ``scipy.stats.ttest_rel(baseline, model)``, two-sided: ``t = mean(d) /
  sqrt(var(d, ddof=1) / n)``, Student's t with ``n - 1`` degrees of freedom; every difference zero
  gives NaN (0/0), as scipy.
* ``wilcoxon``: ``scipy.stats.wilcoxon(baseline, model)`` with its defaults: zero differences
  dropped (``zero_method="wilcox"``), average ranks for tied ``|d|``, no continuity correction,
  ``method="auto"``: the exact null distribution when n <= 50 with no ties and no zeros, the exact
  sign-flip distribution of the rank sum when n <= 13 otherwise, else the normal approximation with
  the tie correction (n counts the zeros in these thresholds, as scipy).
* ``randomization``: Fisher's sign-flip test of the mean difference, two-sided: the share of sign
  vectors ``s`` with ``|sum(s d)| >= |sum(d)| - 1e-9 max|d|`` (the tolerance absorbs rounding, so
  that mathematically equal sums count). A zero difference changes no sum. Every sign vector of
  the m non-zero differences when m <= 16 (or ``2**m <= permutations``): the exact p = count /
  2**m, the share among all 2**n vectors; otherwise ``permutations`` random sign vectors of all n
  units (shared by the metrics paired on the same units), p = (count + 1) / (permutations + 1).
* Bootstrap: ``resamples`` resamples of the units with replacement; the percentile interval of the
  resampled mean differences (``np.percentile``, linear interpolation), as
  ``scipy.stats.bootstrap(method="percentile")``.
* Random numbers: counter-based streams per (seed, resample index) in
  :mod:`mobeval.kernels.resampling`, so a seed gives the same numbers for any thread count; the
  units are in unit-key order, so the numbers do not depend on the row order of the files.
* Corrections (``holm``, ``bonferroni``, ``none``) over every p-value of a city (models x metrics x
  tests); a NaN p-value is left out of the family and stays NaN.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from mobeval.errors import ConfigError, InputError
from mobeval.io.outputs import (
    RESULT_NAME,
    read_manifest,
    read_section,
    read_summary,
    section_schema,
)
from mobeval.kernels import resampling

TESTS = ("paired-t", "wilcoxon", "randomization")
CORRECTIONS = ("holm", "bonferroni", "none")
UNITS = ("default", "uid", "day")
#: p-value column of each test.
P_COLUMNS = {"paired-t": "p_t", "wilcoxon": "p_wilcoxon", "randomization": "p_randomization"}
#: Non-zero differences up to which the randomization test enumerates every sign vector.
EXACT_MAX_NONZERO = 16
#: Metrics read and resampled together (memory: units x this x 8 bytes per model).
METRICS_AT_ONCE = 8
#: Absolute tolerance of the randomization test, times max|d|.
FLIP_TOLERANCE = 1e-9
#: Summary rows that count things (not metrics).
COUNT_ROWS = frozenset(
    {
        "samples",
        "samples_without_predictions",
        "predictions_without_truth_dropped",
        "uids",
        "uid_days",
        "steps",
        "uids_skipped",
        "rows_out_of_grid",
        "users",
    }
)
_UNIT_NAMES = {"nextloc": "sample", "trajectory": "uid", "recs": "user", "logits": "row"}

SCHEMA = {
    "city": pl.String,
    "task": pl.String,
    "unit": pl.String,
    "metric": pl.String,
    "baseline": pl.String,
    "model": pl.String,
    "n": pl.Int64,
    "n_baseline_only": pl.Int64,
    "n_model_only": pl.Int64,
    "percent": pl.Boolean,
    "mean_baseline": pl.Float64,
    "mean_model": pl.Float64,
    "diff": pl.Float64,
    "rel_change_pct": pl.Float64,
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
    "correction": pl.String,
    "p_t_corrected": pl.Float64,
    "p_wilcoxon_corrected": pl.Float64,
    "p_randomization_corrected": pl.Float64,
}


# --------------------------------------------------------------------------------------------
# Statistics on NumPy arrays of paired differences d = model - baseline


def paired_t(d: np.ndarray) -> float:
    """Two-sided p-value of the paired t-test (``scipy.stats.ttest_rel``, to the last bits)."""
    from scipy import special

    d = np.asarray(d, dtype=np.float64)
    n = d.size
    if n == 0:
        return math.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.mean(d)
        var = np.mean((d - mean) ** 2) * (np.float64(n) / np.float64(n - 1))
        t = mean / np.sqrt(var / np.float64(n))
        return float(2 * special.stdtr(np.float64(n - 1), -np.abs(t)))


def _average_ranks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Average ranks (1-based) of ``values`` and the size of each tie group."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    sizes = np.diff(np.r_[starts, ordered.size])
    group_rank = starts + 1 + (sizes - 1) / 2.0
    ranks = np.empty(values.size, dtype=np.float64)
    ranks[order] = np.repeat(group_rank, sizes)
    return ranks, sizes


def _signed_rank_pmf(n: int) -> np.ndarray:
    """P(R+ = r), r = 0 .. n(n+1)/2, of the signed-rank statistic without ties (the recursion
    scipy uses: each rank is positive with probability 1/2)."""
    c = np.ones(1, dtype=np.float64)
    for k in range(1, n + 1):
        previous = c
        c = np.zeros(k * (k + 1) // 2 + 1, dtype=np.float64)
        m = len(previous)
        c[:m] = previous * 0.5
        c[-m:] += previous * 0.5
    return c


def wilcoxon(d: np.ndarray) -> tuple[float, str]:
    """Two-sided p-value of the Wilcoxon signed-rank test with scipy's defaults, and the method
    used (``exact``, ``permutation`` or ``asymptotic``)."""
    from scipy import special

    d = np.asarray(d, dtype=np.float64)
    if d.size == 0:
        return math.nan, "none"
    nonzero = d[d != 0]
    m = nonzero.size
    ranks, sizes = _average_ranks(np.abs(nonzero))
    r_plus = float(np.sum(ranks[nonzero > 0]))
    has_ties = bool(np.any(sizes > 1))
    if d.size > 50 or ((has_ties or m < d.size) and d.size > 13):
        count = float(m)
        mean = count * (count + 1.0) * 0.25
        spread = count * (count + 1.0) * (2.0 * count + 1.0)
        tie_correct = float(np.sum(sizes.astype(np.float64) ** 3 - sizes))
        with np.errstate(divide="ignore", invalid="ignore"):
            se = np.sqrt((spread - tie_correct / 2) / 24)
            z = (r_plus - mean) / se
        return float(2 * special.ndtr(-np.abs(z))), "asymptotic"
    if not has_ties and m == d.size:
        pmf = _signed_rank_pmf(m)
        centre = m * (m + 1) / 4
        k_low, k_high = math.floor(r_plus), math.ceil(r_plus)
        sf = pmf[k_low:].sum() if k_low <= centre else 1 - pmf[:k_low].sum()
        cdf = pmf[: k_high + 1].sum() if k_high <= centre else 1 - pmf[k_high + 1 :].sum()
        return float(np.clip(2 * min(sf, cdf), 0, 1)), "exact"
    # ties or zeros, n <= 13: every sign vector of the non-zero differences (zeros only double
    # each count, so the shares are those of all 2**n vectors)
    masks = np.arange(2**m, dtype=np.int64)
    positive = ((masks[:, None] >> np.arange(m)) & 1) == 0
    null = positive.astype(np.float64) @ ranks if m else np.zeros(1)
    gamma = abs(np.finfo(np.float64).eps * 100 * r_plus)
    less = np.count_nonzero(null <= r_plus + gamma) / null.size
    greater = np.count_nonzero(null >= r_plus - gamma) / null.size
    return float(np.clip(min(less, greater) * 2, 0, 1)), "permutation"


def randomization(d: np.ndarray, permutations: int, seed: int) -> tuple[float, str]:
    """Two-sided p-value of Fisher's sign-flip test of the mean difference and its method
    (``exact`` or ``monte-carlo``); see the module docstring."""
    p, method = randomizations(np.asarray(d, dtype=np.float64)[:, None], permutations, seed)
    return float(p[0]), method[0]


def randomizations(d: np.ndarray, permutations: int, seed: int) -> tuple[np.ndarray, list[str]]:
    """:func:`randomization` of every column of ``d`` (float64[n, m]): the exact test per column
    where it applies, the Monte-Carlo one for the others together (the same numbers as one by
    one: every column sees the same sign vectors)."""
    d = np.ascontiguousarray(d, dtype=np.float64)
    columns = d.shape[1]
    pvalues = np.full(columns, math.nan)
    methods = ["none"] * columns
    thresholds = np.zeros(columns)
    sampled = []
    for c in range(columns):
        nonzero = np.ascontiguousarray(d[d[:, c] != 0, c])
        m = nonzero.size
        if m == 0:
            pvalues[c], methods[c] = (1.0 if d.shape[0] else math.nan), "exact"
            continue
        # the observed sum over the non-zero values is the sum over all (adding 0.0 is exact)
        thresholds[c] = abs(resampling.flip_sum(nonzero, 0)) - FLIP_TOLERANCE * float(
            np.max(np.abs(nonzero))
        )
        if m <= EXACT_MAX_NONZERO or (m < 62 and 2**m <= permutations):
            count = resampling.signflip_count_exact(nonzero, thresholds[c])
            pvalues[c], methods[c] = float(count) / float(2**m), "exact"
        elif permutations >= 1:
            sampled.append(c)
    if sampled:
        counts = resampling.signflip_count_mc(
            np.ascontiguousarray(d[:, sampled]), permutations, seed, thresholds[sampled]
        )
        for c, count in zip(sampled, counts, strict=True):
            pvalues[c], methods[c] = (count + 1) / (permutations + 1), "monte-carlo"
    return pvalues, methods


def bootstrap_ci(
    d: np.ndarray, resamples: int, seed: int, confidence: float
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``d`` (NaN when there is nothing to
    resample)."""
    low, high = bootstrap_cis(np.asarray(d, dtype=np.float64)[:, None], resamples, seed, confidence)
    return float(low[0]), float(high[0])


def bootstrap_cis(
    d: np.ndarray, resamples: int, seed: int, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`bootstrap_ci` of every column of ``d`` (float64[n, m]), with the same resampled
    units for every column (the same numbers as one by one)."""
    d = np.ascontiguousarray(d, dtype=np.float64)
    n, columns = d.shape
    if n == 0 or resamples < 1:
        return np.full(columns, math.nan), np.full(columns, math.nan)
    if n >= 2**32:
        raise ConfigError(f"{n} units: the bootstrap takes at most 2^32 - 1")
    means = resampling.bootstrap_means(d, resamples, seed)
    alpha = (1 - confidence) / 2
    low, high = np.percentile(means, [alpha * 100, (1 - alpha) * 100], axis=0)
    return low, high


def adjust(pvalues: Sequence[float], method: str) -> np.ndarray:
    """Holm's step-down or Bonferroni's correction (``none``: unchanged); NaN p-values are left
    out of the family and stay NaN."""
    p = np.asarray(pvalues, dtype=np.float64)
    out = p.copy()
    valid = np.flatnonzero(~np.isnan(p))
    m = valid.size
    if method == "none" or m == 0:
        return out
    if method == "bonferroni":
        out[valid] = np.minimum(1.0, p[valid] * m)
        return out
    if method != "holm":
        raise ConfigError(f"--correction: {method!r} is not one of {', '.join(CORRECTIONS)}")
    order = valid[np.argsort(p[valid], kind="stable")]
    scaled = np.minimum(1.0, p[order] * (m - np.arange(m)))
    out[order] = np.maximum.accumulate(scaled)
    return out


# --------------------------------------------------------------------------------------------
# Reading OUT


@dataclass
class _Result:
    """One (city, model) result of the manifest."""

    city: str
    model: str
    task: str
    config: dict
    entry: dict
    options: dict = field(default_factory=dict)


def _effective_options(task: str, config: dict, where: str) -> dict:
    """The options of a result that define its metrics: the family's defaults updated with what
    the manifest recorded, without the options that only select metrics, name inputs or say how
    they are read (``defines=False`` in :mod:`mobeval.families`), and without unset (None)
    ones. The recorded options are checked as a run checks them
    (:func:`mobeval.options.check_options`): a damaged one is an InputError naming ``where``
    (the manifest's entry)."""
    from mobeval.families import FAMILIES
    from mobeval.options import check_options

    family = FAMILIES.get(task)
    if family is None:
        return {}
    recorded = {name: value for name, value in config.items() if name in family.names}
    try:
        check_options(task, recorded)
    except ConfigError as error:
        raise InputError(f"{where}: {error}") from None
    merged = family.values(recorded)
    if isinstance(merged.get("key"), str):
        merged["key"] = [merged["key"]]
    options = {}
    for name, value in merged.items():
        if not family.option(name).defines or value is None:
            continue
        options[name] = json.loads(json.dumps(value, default=str))  # tuples -> lists
    return options


def _truth_fingerprint(entry: dict) -> str:
    """The truth input's fingerprint without its path and time (a copy elsewhere is the same)."""
    truth = entry["inputs"].get("truth", [])
    kept = [{k: v for k, v in part.items() if k not in ("path", "mtime")} for part in truth]
    return json.dumps(kept, sort_keys=True)


class _Out:
    """An output folder: its manifest's complete results and their per-unit tables."""

    def __init__(self, out: str | os.PathLike) -> None:
        self.out = Path(out)
        path = self.out / "manifest.json"
        if not path.is_file():
            raise InputError("no manifest.json: not a mobeval output folder", path=self.out)
        self.cities: dict[str, dict[str, _Result]] = {}
        for name, entry in read_manifest(path).items():
            if entry["status"] != "complete":
                continue
            city, model = RESULT_NAME.fullmatch(name).groups()
            task, config = entry["task"], entry["config"]
            where = f"{path}: results[{json.dumps(name)}].config"
            options = _effective_options(task, config, where)
            self.cities.setdefault(city, {})[model] = _Result(
                city, model, task, config, entry, options
            )

    def section_files(self, result: _Result, section: str) -> list[Path]:
        """The Parquet files of one section of a result (InputError when absent). The section
        must be among the manifest's outputs of the result; it is looked for under this OUT
        (as ``--resume`` does, so a moved OUT, or an older manifest's absolute paths, work)."""
        listed = section in result.entry["outputs"]
        folder = self.out / section / f"city={result.city}" / f"model={result.model}"
        files = sorted(folder.glob("*.parquet")) if listed and folder.is_dir() else []
        if not files:
            what = {"per_day": "per-day", "summary": "summary"}.get(section, "per-unit")
            raise InputError(
                f"city={result.city}/model={result.model}: no {what} outputs "
                f"({section}/city={result.city}/model={result.model}); score it again with "
                "this mobeval to compare it",
                path=self.out,
            )
        return files

    def summary(self, result: _Result) -> pl.DataFrame:
        return read_summary(self.section_files(result, "summary"))


#: The units other than its default one that a task's results can be paired on (``unit``), and
#: why the others' cannot.
OTHER_UNITS = {"trajectory": ("uid", "day")}
UNIT_REFUSED = {
    "day": "only trajectory results have per-day values",
    "uid": "its units are paired by default (leave the unit out)",
}


def unit_refused(task: str, unit: str) -> str | None:
    """Why results of ``task`` cannot be paired by ``unit`` (one of :data:`UNITS`), or None."""
    if unit == "default" or unit in OTHER_UNITS.get(task, ()):
        return None
    return UNIT_REFUSED[unit]


def _unit_keys(result: _Result, unit: str) -> tuple[str, list[str], str]:
    """(section, key columns, unit name) of a result's paired units."""
    refused = unit_refused(result.task, unit)
    if refused is not None:
        raise ConfigError(
            f"--unit {unit}: city={result.city}/model={result.model} is a {result.task} result; "
            f"{refused}"
        )
    if unit == "day":
        return "per_day", ["uid", "d"], "uid-day"
    if result.task == "nextloc":
        return "per_unit", list(result.options.get("key") or ["sample_id"]), "sample"
    if result.task == "trajectory":
        return "per_unit", ["uid"], "uid"
    if result.task == "recs":
        return "per_unit", list(result.options.get("key") or ["user_id"])[:1], "user"
    if result.task == "logits":
        return "per_unit", ["row"], "row"
    raise ConfigError(f"city={result.city}/model={result.model}: cannot compare {result.task!r}")


@dataclass
class _Side:
    """One model's paired material in a city: its files, unit keys and usable metrics."""

    result: _Result
    files: list[Path]
    keys: pl.DataFrame  # key columns + "__row" (position in the files' concatenation)
    scale: dict[str, float]
    columns: list[str]
    summary: pl.DataFrame


def _read_keys(files: list[Path], keys: list[str], label: str) -> pl.DataFrame:
    schema = section_schema(files)
    missing = [k for k in keys if k not in schema]
    if missing:
        raise InputError(
            f"missing unit key column; columns: {list(schema)}",
            path=files[0].parent,
            column=missing[0],
        )
    frame = read_section(files, keys).with_row_index("__row")
    duplicated = frame.select(keys).is_duplicated()
    if duplicated.any():
        first = frame.filter(duplicated).row(0, named=True)
        raise InputError(
            f"{label}: a unit appears twice",
            path=files[0].parent,
            key=", ".join(f"{k}={first[k]}" for k in keys),
        )
    return frame


def _read_column(files: list[Path], name: str) -> np.ndarray:
    return read_section(files, [name])[name].cast(pl.Float64).to_numpy()


# --------------------------------------------------------------------------------------------
# The comparison


def _checked_options(tests, correction, confidence, resamples, permutations, seed, unit):
    given = [tests] if isinstance(tests, str) else list(tests)
    tests = [name.strip() for text in given for name in str(text).split(",") if name.strip()]
    unknown = [t for t in tests if t not in TESTS]
    if unknown or not tests:
        raise ConfigError(f"--tests: {unknown or tests!r}: choose among {', '.join(TESTS)}")
    if correction not in CORRECTIONS:
        raise ConfigError(f"--correction: {correction!r}: choose among {', '.join(CORRECTIONS)}")
    if not (isinstance(confidence, float | int) and 0 < confidence < 1):
        raise ConfigError(f"--confidence: {confidence!r} is not between 0 and 1")
    for option, value in (("--resamples", resamples), ("--permutations", permutations)):
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 10**9:
            raise ConfigError(f"{option}: {value!r} is not an integer between 0 and 10^9")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**63:
        raise ConfigError(f"--seed: {seed!r} is not an integer between 0 and 2^63 - 1")
    if unit not in UNITS:
        raise ConfigError(f"--unit: {unit!r}: choose among {', '.join(UNITS)}")
    return list(dict.fromkeys(tests))


def _check_same_scoring(city: str, results: list[_Result]) -> None:
    """Refuse results of one city scored by different tasks, options or truths."""
    first = results[0]
    for other in results[1:]:
        if other.task != first.task:
            raise ConfigError(
                f"city={city}: {first.model} is a {first.task} result and {other.model} a "
                f"{other.task} one; compare results of one task"
            )
        names = sorted(set(first.options) | set(other.options))
        for name in names:
            a, b = first.options.get(name), other.options.get(name)
            if a != b:
                raise ConfigError(
                    f"city={city}: {first.model} and {other.model} were scored under different "
                    f"options ({name}: {json.dumps(a)} vs {json.dumps(b)}); their metrics do not "
                    "mean the same thing, score them the same way to compare them"
                )
        if _truth_fingerprint(first.entry) != _truth_fingerprint(other.entry):
            raise ConfigError(
                f"city={city}: {first.model} and {other.model} were scored against different "
                "truth files; compare models scored on the same truth"
            )


def _percent_metrics(result: _Result) -> set[str]:
    if result.task == "logits" and result.options.get("percent"):
        from mobeval.tasks.logits import PERCENT_METRICS

        return set(PERCENT_METRICS)
    return set()


def _load_side(
    source: _Out, result: _Result, unit: str, log: Callable[[str], None]
) -> tuple[_Side, dict[str, str]]:
    """One model's side, and the metrics it cannot pair with the reason."""
    section, keys, _ = _unit_keys(result, unit)
    files = source.section_files(result, section)
    summary = source.summary(result)
    schema = section_schema(files)
    label = f"city={result.city}/model={result.model}"
    key_frame = _read_keys(files, keys, label)
    percent = _percent_metrics(result)
    scale, columns, unpaired = {}, [], {}
    for metric, value, n in summary.select("metric", "value", "n").iter_rows():
        if metric in COUNT_ROWS or metric in keys:
            continue
        if metric not in schema or not schema[metric].is_numeric():
            unpaired[metric] = "no per-unit values (aggregated over all units)"
            continue
        factor = 100.0 if metric.partition("@")[0] in percent else 1.0
        if section == "per_unit":
            values = _read_column(files, metric) * factor
            kept = values[~np.isnan(values)]
            mean = math.fsum(kept) / kept.size if kept.size else math.nan
            same = kept.size == n and (
                (math.isnan(mean) and math.isnan(value))
                or math.isclose(mean, value, rel_tol=1e-9, abs_tol=1e-12)
            )
            if not same:
                unpaired[metric] = (
                    "the city value is not the mean of the per-unit values (an aggregate, "
                    "or another denominator)"
                )
                continue
        scale[metric] = factor
        columns.append(metric)
    return _Side(result, files, key_frame, scale, columns, summary), unpaired


def _pairs(models: list[str], baseline: str | None) -> list[tuple[str, str]]:
    if baseline is not None:
        return [(baseline, m) for m in models if m != baseline]
    return [(a, b) for i, a in enumerate(models) for b in models[i + 1 :]]


def _alignment(
    city: str, unit_name: str, a: _Side, b: _Side, intersect: bool
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Row positions of the common units in each side, in unit-key order; the counts of units
    on one side only (an InputError when there are some and not ``intersect``)."""
    keys = [c for c in a.keys.columns if c != "__row"]
    for key in keys:
        if a.keys.schema[key] != b.keys.schema[key]:
            raise InputError(
                f"unit keys of type {b.keys.schema[key]}, {a.keys.schema[key]} in "
                f"{a.files[0].parent}: the results cannot be paired (score them again)",
                path=b.files[0].parent,
                column=key,
            )
    joined = a.keys.rename({"__row": "__a"}).join(
        b.keys.rename({"__row": "__b"}), on=keys, how="full", coalesce=True, nulls_equal=True
    )
    only_a = int(joined["__b"].is_null().sum())
    only_b = int(joined["__a"].is_null().sum())
    common = joined.drop_nulls(["__a", "__b"]).sort(keys)
    if (only_a or only_b) and not intersect:
        raise InputError(
            f"city={city}: {a.result.model} and {b.result.model} were scored on different "
            f"{unit_name}s ({only_a} only in {a.result.model}, {only_b} only in "
            f"{b.result.model}); --intersect compares the {common.height} common ones"
        )
    return (
        common["__a"].to_numpy().astype(np.int64),
        common["__b"].to_numpy().astype(np.int64),
        only_a,
        only_b,
    )


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
    metrics: Sequence[str] | str | None = None,
    tests: Sequence[str] | str = TESTS,
    resamples: int = 1000,
    permutations: int = 10000,
    seed: int = 0,
    correction: str = "holm",
    confidence: float = 0.95,
    intersect: bool = False,
    unit: str = "default",
    write: bool = False,
    log: Callable[[str], None] | None = _stderr,
) -> pl.DataFrame:
    """Compare the models of OUT's cities pairwise on their per-unit values (module docstring).

    Args:
        out: a mobeval output folder (with ``manifest.json``).
        city: one city (default: every city with two models or more).
        baseline: compare every model against this one (default: every pair, the earlier model
            of the manifest as the baseline).
        metrics: metric names (default: every metric that can be paired).
        tests: among ``paired-t``, ``wilcoxon``, ``randomization``.
        resamples: bootstrap resamples of the interval (0: none).
        permutations: random sign vectors of the randomization test when it is not exact.
        seed: of the bootstrap and of the sign flips.
        correction: ``holm``, ``bonferroni`` or ``none``, over every p-value of a city.
        confidence: of the bootstrap interval.
        intersect: compare the units common to both models instead of refusing different sets.
        unit: ``default`` (each task's unit), ``uid`` (trajectories), ``day`` (trajectories'
            uid-days).
        write: also write ``OUT/compare/city=<c>/part-0.parquet`` (holding OUT's lock).
        log: where the notes go (metrics left out, cities skipped); None: nowhere.

    Returns:
        One row per (city, metric, baseline, model): :data:`SCHEMA`.

    Raises:
        ConfigError, InputError: what would mislead (different options, different units, one
            model, missing per-unit outputs, an unknown baseline or metric); nothing is written.
    """
    tests = _checked_options(tests, correction, confidence, resamples, permutations, seed, unit)
    if isinstance(metrics, str):
        metrics = [m.strip() for m in metrics.split(",") if m.strip()]
    if write and not (Path(out) / "manifest.json").is_file():
        raise InputError("no manifest.json: not a mobeval output folder", path=out)
    arguments = (out, city, baseline, metrics, tests, resamples, permutations, seed, correction)
    arguments += (confidence, intersect, unit, log)
    if not write:
        return _compare(*arguments)
    from mobeval.io.writers import output_lock

    with output_lock(out):
        frame = _compare(*arguments)
        _write(Path(out), frame)
    return frame


def _compare(
    out,
    city,
    baseline,
    metrics,
    tests,
    resamples,
    permutations,
    seed,
    correction,
    confidence,
    intersect,
    unit,
    log,
) -> pl.DataFrame:
    source = _Out(out)
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
    plans = []
    for name in cities:
        results = source.cities[name]
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
    prepared = []
    for name in plans:
        results = list(source.cities[name].values())
        _check_same_scoring(name, results)
        sides, unpaired = {}, {}
        for result in results:
            side, left_out = _load_side(source, result, unit, log)
            sides[result.model] = side
            for metric, reason in left_out.items():
                unpaired.setdefault(metric, reason)
        unit_name = _unit_keys(results[0], unit)[2]
        available = [
            m
            for m in sides[results[0].model].summary["metric"]
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
            for metric, reason in unpaired.items():
                _note(log, f"note: city={name}: {metric} left out: {reason}")
            partial = {
                m for side in sides.values() for m in side.columns if m not in available
            } - set(unpaired)
            for metric in sorted(partial):
                _note(log, f"note: city={name}: {metric} left out: not scored for every model")
        if not wanted:
            raise ConfigError(f"city={name}: no metric can be paired")
        pairs = _pairs(list(sides), baseline)
        alignments = {
            (a, b): _alignment(name, unit_name, sides[a], sides[b], intersect) for a, b in pairs
        }
        for (a, b), (_, _, only_a, only_b) in alignments.items():
            if only_a or only_b:
                common = alignments[(a, b)][0].size
                _note(
                    log,
                    f"note: city={name}: {a} vs {b}: {common} common {unit_name}s compared "
                    f"({only_a} only in {a}, {only_b} only in {b} left out)",
                )
        prepared.append((name, results[0].task, unit_name, sides, wanted, pairs, alignments))
    frames = []
    for name, task, unit_name, sides, wanted, pairs, alignments in prepared:
        rows = {}
        for first in range(0, len(wanted), METRICS_AT_ONCE):
            group = wanted[first : first + METRICS_AT_ONCE]
            values = {
                model: {m: _read_column(side.files, m) * side.scale[m] for m in group}
                for model, side in sides.items()
            }
            for a, b in pairs:
                ia, ib, only_a, only_b = alignments[(a, b)]
                paired = {}
                for metric in group:
                    va, vb = values[a][metric][ia], values[b][metric][ib]
                    nan_a, nan_b = np.isnan(va), np.isnan(vb)
                    if (nan_a != nan_b).any() and not intersect:
                        raise InputError(
                            f"city={name}: {metric} has no value (NaN, left out of the mean) "
                            f"for {int((nan_a & ~nan_b).sum())} {unit_name}s only in {a} and "
                            f"{int((nan_b & ~nan_a).sum())} only in {b}; --intersect compares "
                            f"the {int((~nan_a & ~nan_b).sum())} with both"
                        )
                    keep = ~(nan_a | nan_b)
                    paired[metric] = (keep, va[keep], vb[keep])
                # metrics with the same units resample together (the same numbers as alone)
                batches: dict[bytes, list[str]] = {}
                for metric, (keep, _, _) in paired.items():
                    batches.setdefault(np.packbits(keep).tobytes(), []).append(metric)
                for batch in batches.values():
                    stats = _batch_stats(
                        [paired[m][1] for m in batch],
                        [paired[m][2] for m in batch],
                        tests,
                        resamples,
                        permutations,
                        seed,
                        confidence,
                    )
                    for metric, values_of in zip(batch, stats, strict=True):
                        percent = any(side.scale[metric] == 100.0 for side in sides.values())
                        rows[(metric, a, b)] = (
                            name, task, unit_name, metric, a, b, values_of["n"], only_a,
                            only_b, percent, values_of["mean_a"], values_of["mean_b"],
                            values_of["diff"], values_of["relative"], float(confidence),
                            values_of["low"], values_of["high"], resamples, seed,
                            values_of["p_t"], values_of["p_w"], values_of["w_method"],
                            values_of["p_r"], values_of["r_method"], permutations, correction,
                            None, None, None,
                        )  # fmt: skip
        ordered = [rows[(metric, a, b)] for metric in wanted for a, b in pairs]
        frame = pl.DataFrame(ordered, schema=SCHEMA, orient="row")
        frames.append(_corrected(frame, tests, correction))
    return pl.concat(frames)


def _batch_stats(baselines, models, tests, resamples, permutations, seed, confidence) -> list[dict]:
    """Means, interval and p-values of each metric of a batch paired on the same units."""
    n = baselines[0].size
    d = np.empty((n, len(baselines)), dtype=np.float64)
    for c, (va, vb) in enumerate(zip(baselines, models, strict=True)):
        d[:, c] = vb - va
    low, high = bootstrap_cis(d, resamples, seed, confidence)
    if "randomization" in tests:
        p_r, r_methods = randomizations(d, permutations, seed)
    out = []
    for c, (va, vb) in enumerate(zip(baselines, models, strict=True)):
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_a = float(np.mean(va)) if n else math.nan
            mean_b = float(np.mean(vb)) if n else math.nan
            diff = mean_b - mean_a
            relative = 100.0 * diff / abs(mean_a) if mean_a != 0 else math.nan
        column = np.ascontiguousarray(d[:, c])
        p_w, w_method = wilcoxon(column) if "wilcoxon" in tests else (None, None)
        out.append(
            {
                "n": n,
                "mean_a": mean_a,
                "mean_b": mean_b,
                "diff": diff,
                "relative": relative,
                "low": float(low[c]),
                "high": float(high[c]),
                "p_t": paired_t(column) if "paired-t" in tests else None,
                "p_w": p_w,
                "w_method": w_method,
                "p_r": float(p_r[c]) if "randomization" in tests else None,
                "r_method": r_methods[c] if "randomization" in tests else None,
            }
        )
    return out


def _corrected(frame: pl.DataFrame, tests: list[str], correction: str) -> pl.DataFrame:
    """The corrected p-values over every p-value of the city's frame (models x metrics x tests)."""
    columns = [P_COLUMNS[t] for t in TESTS if t in tests]
    if not columns or frame.height == 0:
        return frame
    pooled = np.concatenate(
        [frame[c].cast(pl.Float64).fill_null(np.nan).to_numpy() for c in columns]
    )
    corrected = adjust(pooled, correction).reshape(len(columns), frame.height)
    return frame.with_columns(
        pl.Series(f"{c}_corrected", corrected[i], dtype=pl.Float64) for i, c in enumerate(columns)
    )


def _write(out: Path, frame: pl.DataFrame) -> None:
    """``OUT/compare/city=<c>/part-0.parquet`` per city, staged in ``OUT/.staging`` and moved into
    place (a previous comparison of the city moved aside first, then deleted): whole or absent.
    The caller holds OUT's lock; every city's folder is checked before anything is written
    (:func:`mobeval.io.writers.checked_destination`: never through a link that leaves OUT)."""
    from mobeval.io.writers import STAGING, checked_destination, remove_staged, write_parquet

    token = secrets.token_hex(4)
    parts = frame.partition_by("city", as_dict=True, maintain_order=True).items()
    finals = {
        city: checked_destination(out / "compare" / f"city={city}", out) for (city,), _ in parts
    }
    for (city,), part in parts:
        staged = out / STAGING / f"compare-{token}" / f"city={city}"
        staged.mkdir(parents=True, exist_ok=True)
        write_parquet(part.drop("city"), staged / "part-0.parquet")
        final = finals[city]
        final.parent.mkdir(parents=True, exist_ok=True)
        aside = out / STAGING / f"compare-{token}" / f"replaced-city={city}"
        with contextlib.suppress(FileNotFoundError):
            os.replace(final, aside)
        os.replace(staged, final)
        remove_staged(aside, out)
    remove_staged(out / STAGING / f"compare-{token}", out)


def whole_tables(**settings) -> pl.Config:
    """Polars' printing set to show a table whole (every row and column, without its shape and
    column types), with ``settings`` (:class:`polars.Config`'s) beside: the tables mobeval prints
    (``compare``, the summaries of the scoring commands)."""
    return pl.Config(
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
        **settings,
    )


def print_comparison(frame: pl.DataFrame, file=None) -> None:
    """One table per city: metric, model vs baseline, n, means, difference, relative change,
    bootstrap interval and the corrected p-values of the tests run."""
    file = file or sys.stdout
    if frame.height == 0:
        return
    correction = frame["correction"][0]
    suffix = "" if correction == "none" else f" ({correction})"
    labels = {"p_t": "p t-test", "p_wilcoxon": "p wilcoxon", "p_randomization": "p random."}
    tests = [c for c in labels if frame[c].is_not_null().any()]

    def fmt(value):
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "-"
        return f"{value:.1e}" if value < 0.001 else f"{value:.4f}"

    with whole_tables(float_precision=4, fmt_str_lengths=40, tbl_width_chars=250):
        for (city,), part in frame.partition_by("city", as_dict=True, maintain_order=True).items():
            confidence = part["confidence"][0]
            table = part.select(
                "metric",
                pl.format("{} vs {}", "model", "baseline").alias("model vs baseline"),
                "n",
                pl.col("mean_baseline").alias("baseline"),
                pl.col("mean_model").alias("model"),
                "diff",
                pl.col("rel_change_pct").alias("rel %"),
                pl.format(
                    "[{}, {}]",
                    pl.col("ci_low").round_sig_figs(4),
                    pl.col("ci_high").round_sig_figs(4),
                ).alias(f"{confidence:.0%} CI"),
                *[
                    pl.col(f"{c}_corrected")
                    .map_elements(fmt, return_dtype=pl.String)
                    .alias(labels[c] + suffix)
                    for c in tests
                ],
            )
            print(f"city={city} ({part['unit'][0]}s paired)", file=file)
            print(table, file=file)
    file.flush()
