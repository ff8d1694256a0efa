"""Score whole uids of a generated trajectory table against the reference (GEO-BLEU, DTW).

Both frames have columns uid, d, t, x, y (any row order) and hold *whole* uids. Rows are matched
by (uid, d, t): both sides are sorted by (uid, d, t), which is what the reference's per-uid
function (``calc_geobleu_single``, yahoojapan/geobleu d9efb0f) requires of its caller — the same
(d, t) sequence on both sides — before it stable-sorts by (d, t) and splits into days. Per day we
compute GEO-BLEU and/or DTW (:mod:`mobeval.kernels.geobleu`), per uid their np.mean over days.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import polars as pl

from mobeval.errors import ConfigError, InputError
from mobeval.io.arrays import kernel_array
from mobeval.io.sources import columns_present
from mobeval.kernels.exact_sum import ExactColumnSums
from mobeval.kernels.geobleu import dtw_days, mean_per_unit
from mobeval.kernels.resampling import percentile_interval, poisson_weights
from mobeval.metrics import GENERATION_RATIOS, POPULATION_METRICS
from mobeval.metrics.population import (
    SHARE_SEED,
    PopulationCounts,
    distribution_table,
    divergence,
    population_counts,
    uid_percent,
)
from mobeval.metrics.trajectory import (
    COLUMNS,
    ON_MISMATCH,
    OUT_OF_GRID,
    REAL_COUNTS,
    TrajectoryConvention,
    geobleu_day_values,
    resolve,
)
from mobeval.tasks.population_space import (
    GRID_MAX,
    GRID_MIN,
    MAX_COORD,
    OFF_GRID,
    GridSpace,
    density_map,
)
from mobeval.tasks.summary import count_row, summary_frame
from mobeval.tasks.trajectory_inputs import METRICS

INT64_MAX = 2**63 - 1
#: What the summary counts of each unpaired population (``real_`` before the real one's).
COUNTED = ("uids", "uid_days", "steps")
#: How many offending uids an error message lists.
SHOW = 5


@dataclass(frozen=True)
class TrajectoryScores:
    """Result of :func:`score_trajectory_frame`.

    per_uid: uid, <metrics>, n_days, n_steps (sorted by uid).
    per_day: uid, d, n_steps, <metrics> (sorted by uid, d).
    n_skipped_uids / skipped_uids: uids left out by on_mismatch="skip" (sorted);
    skipped: the same uids with the reason (uid, reason).
    n_out_of_grid: rows (generated + reference) with x or y outside 1..200 that were scored.
    """

    per_uid: pl.DataFrame
    per_day: pl.DataFrame
    n_skipped_uids: int
    skipped_uids: pl.Series
    skipped: pl.DataFrame
    n_out_of_grid: int
    convention: TrajectoryConvention


def _key(row: dict) -> tuple:
    return tuple(row[c] for c in ("uid", "d", "t") if c in row)


def _step(column: str) -> tuple[pl.Expr, pl.Expr]:
    """(column > the previous row's, column == the previous row's)."""
    return pl.col(column) > pl.col(column).shift(1), pl.col(column) == pl.col(column).shift(1)


(_UID_UP, _SAME_UID), (_D_UP, _SAME_D), (_T_UP, _SAME_T) = map(_step, ("uid", "d", "t"))
#: Rows already in (uid, d, t) order (ties allowed: duplicates are refused next), so that
#: :func:`_clean` sorts only what needs it and otherwise shares the input's buffers.
IN_ORDER = (_UID_UP | (_SAME_UID & (_D_UP | (_SAME_D & (_T_UP | _SAME_T))))).fill_null(True)


def _clean(
    frame: pl.DataFrame, path: object, side: str, columns=COLUMNS, floats=()
) -> pl.DataFrame:
    """``columns`` (uid, d, t and the location columns: x, y, location or lat, lon), all but uid
    as Int64 (a timestamp t as its integer) but ``floats`` as finite Float64, sorted by
    (uid, d, t); checked."""
    where = path if path is not None else f"<{side}>"
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(
            f"missing column; {columns_present(frame.columns)}",
            path=where,
            column=missing[0],
        )
    frame = frame.select(pl.col(columns).to_physical()).with_columns(pl.col(floats).cast(float))
    for col in columns:
        series = frame[col]
        bad = series.is_null()
        what = "null"
        if col in floats:
            bad, what = bad | ~series.is_finite(), "null or not a finite number"
        elif series.dtype.is_float():
            bad = bad | ~series.is_finite() | (series != series.round())
            bad = bad | (series.abs() >= 2.0**63)
            what = "null/NaN, non-integer or beyond 64-bit"
        elif col != "uid" and not series.dtype.is_integer():
            raise InputError(f"must hold integers, found {series.dtype}", path=where, column=col)
        elif series.dtype == pl.UInt64:
            bad = bad | (series > INT64_MAX)
            what = "null or beyond 64-bit"
        if bad.any():
            first = frame.filter(bad).row(0, named=True)
            raise InputError(
                f"{int(bad.sum())} {what} value(s)", path=where, column=col, key=_key(first)
            )
        if col in ("x", "y"):
            far = (series < -MAX_COORD) | (series > MAX_COORD)
            if far.any():
                first = frame.filter(far).row(0, named=True)
                raise InputError(
                    f"{int(far.sum())} value(s) beyond +-{MAX_COORD:,}: no grid cell (the grid is "
                    f"{GRID_MIN}..{GRID_MAX}; out_of_grid='score' takes e.g. 999, not these)",
                    path=where,
                    column=col,
                    key=_key(first),
                )
    frame = frame.with_columns(pl.col(c).cast(pl.Int64) for c in columns[1:] if c not in floats)
    if not frame.select(IN_ORDER.all()).item():
        frame = frame.sort("uid", "d", "t")
    dups = frame.filter((_SAME_UID & _SAME_D & _SAME_T).fill_null(False))
    if dups.height:
        raise InputError(
            f"{dups.height} duplicate (uid, d, t) row(s)",
            path=where,
            column="uid, d, t",
            key=_key(dups.row(0, named=True)),
        )
    return frame


def _mismatched_uids(gen: pl.DataFrame, ref: pl.DataFrame) -> pl.DataFrame:
    """uid, reason for every uid whose (d, t) steps differ or that is on one side only (both
    sides in (uid, d, t) order)."""
    g, r = gen.select("uid", "d", "t"), ref.select("uid", "d", "t")
    if g.equals(r):  # the same steps: no uid to count or join
        return pl.DataFrame({"uid": g["uid"].clear(), "reason": pl.Series([], dtype=pl.String)})
    counts = (
        gen.group_by("uid")
        .len("n_gen")
        .join(ref.group_by("uid").len("n_ref"), on="uid", how="full", coalesce=True)
    )
    reason = (
        pl.when(pl.col("n_ref").is_null())
        .then(pl.lit("only in generated"))
        .when(pl.col("n_gen").is_null())
        .then(pl.lit("only in reference"))
        .when(pl.col("n_gen") != pl.col("n_ref"))
        .then(pl.format("{} generated vs {} reference steps", "n_gen", "n_ref"))
    )
    by_count = counts.select("uid", reason.alias("reason")).drop_nulls("reason")
    if by_count.height:  # else both sides have the same uids, the same rows
        g, r = (side.join(by_count, on="uid", how="anti", maintain_order="left") for side in (g, r))
    differ = (g["d"] != r["d"]) | (g["t"] != r["t"])
    by_step = (
        g.with_columns(r_d=r["d"], r_t=r["t"])
        .filter(differ)
        .group_by("uid", maintain_order=True)
        .first()
        .select(
            "uid",
            pl.format(
                "(d, t) = ({}, {}) generated vs ({}, {}) reference", "d", "t", "r_d", "r_t"
            ).alias("reason"),
        )
    )
    return pl.concat([by_count, by_step]).sort("uid")


def _offsets(starts: np.ndarray, n: int) -> np.ndarray:
    return np.append(starts, n).astype(np.int64)


def score_trajectory_frame(
    generated: pl.DataFrame,
    reference: pl.DataFrame,
    *,
    convention: TrajectoryConvention | str | None = None,
    metrics: Sequence[str] = METRICS,
    on_mismatch: Literal["error", "skip"] = "error",
    out_of_grid: Literal["error", "score"] = "error",
    path_generated: object | None = None,
    path_reference: object | None = None,
) -> TrajectoryScores:
    """Per-uid and per-uid-day GEO-BLEU / DTW of whole uids.

    Checks (InputError naming the file, the column and the first offending key): missing
    columns; null, NaN or non-integer values; duplicate (uid, d, t); uids on one side only or
    whose (d, t) steps differ (``on_mismatch="skip"`` drops and counts them instead: the
    reference raises ValueError for such a uid); x or y outside 1..200, e.g. the 999 mask value
    (``out_of_grid="score"`` scores them as the reference does: far points weigh ~0).
    ``convention`` is a :class:`TrajectoryConvention` or a preset name (default "humob2025").
    Only the requested ``metrics`` columns are computed.
    """
    conv = resolve(convention)
    metrics = tuple(metrics)
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ConfigError(f"unknown trajectory metric(s) {unknown}; known: {', '.join(METRICS)}")
    if on_mismatch not in ON_MISMATCH:
        raise ConfigError(f"on_mismatch must be 'error' or 'skip', got {on_mismatch!r}")
    if out_of_grid not in OUT_OF_GRID:
        raise ConfigError(f"out_of_grid must be 'error' or 'score', got {out_of_grid!r}")
    paths = {"generated": path_generated, "reference": path_reference}
    pair = _checked_pair(generated, reference, on_mismatch, out_of_grid, paths)
    return _scores(pair, conv, metrics)


@dataclass(frozen=True)
class _CheckedPair:
    """Both sides checked by :func:`_clean`, with one uid type, in (uid, d, t) order, the uids
    of ``skipped`` (uid, reason) left out; ``n_out_of_grid`` rows scored outside the grid."""

    generated: pl.DataFrame
    reference: pl.DataFrame
    skipped: pl.DataFrame
    n_out_of_grid: int


#: What a mismatch message says of unpaired populations (a new user's first error).
UNPAIRED = "; pairing='none' scores two populations of any sizes by their distributions"


def _checked_pair(generated, reference, on_mismatch, out_of_grid, paths) -> _CheckedPair:
    """The checks of :func:`score_trajectory_frame` (``paths``: side -> path)."""
    path_generated, path_reference = paths["generated"], paths["reference"]
    gen = _clean(generated, path_generated, "generated")
    ref = _clean(reference, path_reference, "reference")
    if gen["uid"].dtype != ref["uid"].dtype:
        if gen["uid"].dtype.is_integer() and ref["uid"].dtype.is_integer():
            gen = gen.with_columns(pl.col("uid").cast(pl.Int64))
            ref = ref.with_columns(pl.col("uid").cast(pl.Int64))
        else:
            raise InputError(
                f"uid types differ: generated {gen['uid'].dtype}, reference {ref['uid'].dtype}",
                path=path_reference,
                column="uid",
            )

    bad = _mismatched_uids(gen, ref)
    if bad.height and on_mismatch == "error":
        shown = "; ".join(f"uid {u}: {why}" for u, why in bad.head(SHOW).iter_rows())
        raise InputError(
            f"{bad.height} uid(s) whose (d, t) steps differ between generated and reference "
            f"(the reference raises for them; on_mismatch='skip' leaves them out{UNPAIRED}): "
            f"{shown}" + (" ..." if bad.height > SHOW else ""),
            path=path_generated,
            column="uid, d, t",
            key=bad["uid"][0],
        )
    if bad.height:
        gen = gen.join(bad, on="uid", how="anti", maintain_order="left")
        ref = ref.join(bad, on="uid", how="anti", maintain_order="left")

    n_off = 0
    for frame, path, side in (
        (gen, path_generated, "generated"),
        (ref, path_reference, "reference"),
    ):
        off = frame.filter(OFF_GRID)
        n_off += off.height
        if off.height and out_of_grid == "error":
            hint = " (999 is the HuMob mask value)" if (off["x"] == 999).any() else ""
            raise InputError(
                f"{off.height} {side} row(s) with x or y outside {GRID_MIN}..{GRID_MAX}{hint}; "
                "out_of_grid='score' scores them as the reference does",
                path=path if path is not None else f"<{side}>",
                column="x" if ((off["x"] < GRID_MIN) | (off["x"] > GRID_MAX)).any() else "y",
                key=_key(off.row(0, named=True)),
            )

    return _CheckedPair(gen, ref, bad, n_off)


def _starts(frame: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(new_uid, new_day): whether each row starts a uid, a uid-day (rows in (uid, d) order)."""
    n = frame.height
    uid, d = frame["uid"], frame["d"].to_numpy()
    new_uid = np.ones(n, dtype=bool)
    if n:
        new_uid[1:] = (uid.slice(1) != uid.slice(0, n - 1)).to_numpy()
    new_day = new_uid.copy()
    new_day[1:] |= d[1:] != d[:-1]
    return new_uid, new_day


def _scores(pair: _CheckedPair, conv: TrajectoryConvention, metrics) -> TrajectoryScores:
    """The per-uid and per-uid-day ``metrics`` of a checked pair."""
    gen, ref, bad = pair.generated, pair.reference, pair.skipped
    n = gen.height
    uid = gen["uid"]
    d = gen["d"].to_numpy()
    new_uid, new_day = _starts(gen)
    day_starts = np.flatnonzero(new_day)
    day_offsets = _offsets(day_starts, n)
    unit_offsets = _offsets(np.flatnonzero(new_uid[day_starts]), day_starts.size)
    gx, gy, rx, ry = (kernel_array(f[c], np.int64) for f in (gen, ref) for c in ("x", "y"))

    per_day = pl.DataFrame(
        {
            "uid": uid.gather(day_starts),
            "d": d[day_starts],
            "n_steps": np.diff(day_offsets),
        }
    )
    per_uid = pl.DataFrame({"uid": per_day["uid"].gather(unit_offsets[:-1])})
    for metric in metrics:
        if metric == "geobleu":
            values = geobleu_day_values(day_offsets, gx, gy, rx, ry, conv)
        else:
            values = dtw_days(day_offsets, gx, gy, rx, ry, conv.dtw_scale, conv.dtw_free_start)
        per_day = per_day.with_columns(pl.Series(metric, values))
        per_uid = per_uid.with_columns(pl.Series(metric, mean_per_unit(unit_offsets, values)))
    uid_rows = day_offsets[unit_offsets]
    per_uid = per_uid.with_columns(
        n_days=pl.Series(np.diff(unit_offsets)), n_steps=pl.Series(np.diff(uid_rows))
    )
    return TrajectoryScores(
        per_uid=per_uid,
        per_day=per_day,
        n_skipped_uids=bad.height,
        skipped_uids=bad["uid"],
        skipped=bad,
        n_out_of_grid=pair.n_out_of_grid,
        convention=conv,
    )


@dataclass
class TrajectoryAccumulator:
    """The city summary as a fold over per-uid tables, plus what the checks collect on the side.

    :meth:`add` folds a per-uid table (exact sums of the metrics over uids, ``n_days`` and
    ``n_steps`` summed); ``skipped`` (uid, reason) and the out-of-grid counts are recorded by the
    scorer. :meth:`merge` combines two folds (Spark folds each partition, the driver merges); the
    first out-of-grid key of a side is then the smallest one.
    """

    metrics: tuple[str, ...]
    sums: ExactColumnSums
    skipped: list[pl.DataFrame] = field(default_factory=list)
    off_grid: dict[str, int] = field(default_factory=lambda: {"generated": 0, "reference": 0})
    first_off_grid: dict[str, tuple] = field(default_factory=dict)
    uids: int = 0
    uid_days: int = 0
    steps: int = 0
    #: side (or (side, d) with per-day divergences) -> the population's histograms
    #: (:mod:`mobeval.metrics.population`)
    population: dict[str | tuple[str, int], PopulationCounts] = field(default_factory=dict)
    #: the generated population's histograms in each resample of the Poisson bootstrap of its
    #: uids (:meth:`TrajectoryScorer._fold_resamples`)
    resampled: list[PopulationCounts] = field(default_factory=list)
    #: unpaired: side -> its uids, uid_days and steps
    counts: dict[str, Counter] = field(
        default_factory=lambda: {"generated": Counter(), "reference": Counter()}
    )

    @classmethod
    def empty(cls, metrics: Sequence[str]) -> TrajectoryAccumulator:
        return cls(tuple(metrics), ExactColumnSums(list(metrics)))

    def add(self, per_uid: pl.DataFrame) -> None:
        """Fold a per-uid table (uid, <metrics>, n_days, n_steps)."""
        if per_uid.height == 0:
            return
        if self.metrics:
            self.sums.add(per_uid.select(self.metrics).to_numpy())
        self.uids += per_uid.height
        self.uid_days += int(per_uid["n_days"].sum())
        self.steps += int(per_uid["n_steps"].sum())

    def merge(self, other: TrajectoryAccumulator) -> None:
        self.sums.merge(other.sums)
        self.skipped += other.skipped
        for side, count in other.off_grid.items():
            self.off_grid[side] += count
        for side, first in other.first_off_grid.items():
            mine = self.first_off_grid.get(side)
            self.first_off_grid[side] = first if mine is None else min(mine, first)
        self.uids += other.uids
        self.uid_days += other.uid_days
        self.steps += other.steps
        for side, counted in other.counts.items():
            self.counts[side].update(counted)
        for side, counts in other.population.items():
            self.population.setdefault(side, PopulationCounts()).merge(counts)
        if not self.resampled:
            self.resampled = [PopulationCounts() for _ in other.resampled]
        for mine, theirs in zip(self.resampled, other.resampled, strict=False):
            mine.merge(theirs)


class TrajectoryScorer:
    """Scores chunks of whole uids and folds the city score (the mean over uids) exactly.

    Mismatched uids and out-of-grid rows are collected over every chunk, so that the error raised
    by :meth:`summary` (``on_mismatch="error"`` / ``out_of_grid="error"``) gives the full count.
    """

    def __init__(
        self,
        *,
        convention,
        metrics,
        on_mismatch,
        out_of_grid,
        path_generated,
        path_reference,
        divergence="jsd",
        uid_shares=(),
        per_day_divergences=False,
        resamples=0,
        seed=0,
        confidence=0.95,
        pairing="uid",
        space=None,
    ) -> None:
        self.convention = resolve(convention)
        self.pairing, self.space = pairing, space or GridSpace()
        self.resamples, self.seed, self.confidence = resamples, seed, confidence
        self.uid_shares = tuple(sorted(uid_shares))
        self.per_day_divergences = per_day_divergences
        self.metrics = tuple(m for m in metrics if m in METRICS)
        self.distributions = tuple(m for m in metrics if m in POPULATION_METRICS)
        self.divergence = divergence
        self.on_mismatch = on_mismatch
        self.out_of_grid = out_of_grid
        self.paths = {"generated": path_generated, "reference": path_reference}
        self.accumulator = TrajectoryAccumulator.empty(self.metrics)

    def score(self, generated: pl.DataFrame, reference: pl.DataFrame) -> dict | None:
        if generated.width == 0:
            generated = reference.clear()
        if reference.width == 0:
            reference = generated.clear()
        if generated.height == 0 and reference.height == 0:
            return None
        acc = self.accumulator
        if self.space.outside is not None:
            for side, frame in (("generated", generated), ("reference", reference)):
                off = frame.filter(self.space.outside)
                if off.height:
                    acc.off_grid[side] += off.height
                    acc.first_off_grid.setdefault(side, _key(off.row(0, named=True)))
        if self.pairing == "none":
            self._fold_populations(
                *(self._side(f, s) for f, s in ((generated, "generated"), (reference, "reference")))
            )
            return None
        uid_type = generated["uid"].dtype
        pair = _checked_pair(generated, reference, "skip", "score", self.paths)
        scores = _scores(pair, self.convention, self.metrics)
        if scores.skipped.height:
            acc.skipped.append(scores.skipped)
        acc.add(scores.per_uid)
        if self.distributions:
            # the checked frames, in (uid, d, t) order, without the skipped uids; the generated
            # uids of their own type, which the uid shares and the bootstrap hash
            generated = pair.generated.with_columns(pl.col("uid").cast(uid_type))
            self._fold_populations(generated, pair.reference)
        return {"per_unit": scores.per_uid, "per_day": scores.per_day}

    def _side(self, frame: pl.DataFrame, side: str) -> pl.DataFrame:
        """One unpaired side's rows, checked by :func:`_clean` (its location columns) and in
        (uid, d, t) order, counted into the summary's counts of its side."""
        columns = ("uid", "d", "t", *self.space.columns)
        frame = _clean(frame, self.paths[side], side, columns, self.space.floats)
        counts = self.accumulator.counts[side]
        counts["uids"] += frame["uid"].n_unique()
        counts["uid_days"] += int(_starts(frame)[1].sum())
        counts["steps"] += frame.height
        return frame

    def _fold_populations(self, generated: pl.DataFrame, reference: pl.DataFrame) -> None:
        """Folds the histograms of both sides' whole uids (checked, in (uid, d, t) order): each
        side's, and the generated uids' shares and bootstrap resamples."""
        for side, frame in (("generated", generated), ("reference", reference)):
            self._fold(side, frame, side, self.per_day_divergences)
        percent = uid_percent(generated["uid"])
        for low, high in zip((0, *self.uid_shares), self.uid_shares, strict=False):
            band = generated.filter((percent >= low) & (percent < high))
            self._fold(f"generated<{high}", band, "generated", False)
        if self.resamples:
            self._fold_resamples(generated)

    def _fold(self, key: str, frame: pl.DataFrame, side: str, per_day: bool) -> None:
        """Folds one side's whole uids into ``population[key]``; ``per_day``: each day d's
        histograms into ``population[key, d]``, merged for the whole (the same counts)."""
        population = self.accumulator.population
        if not per_day:
            population.setdefault(key, PopulationCounts()).merge(self._population(frame, side))
            return
        whole = PopulationCounts()
        for (d,), day in frame.partition_by("d", as_dict=True).items():
            counts = self._population(day, side)
            population.setdefault((key, int(d)), PopulationCounts()).merge(counts)
            whole.merge(counts)
        whole.uids = frame["uid"].n_unique()
        population.setdefault(key, PopulationCounts()).merge(whole)

    def _fold_resamples(self, frame: pl.DataFrame) -> None:
        """Folds the generated uids of ``frame`` into each resample of the Poisson bootstrap of
        the generated uids: uid ``u`` counts ``w[u, r] ~ Poisson(1)`` times in resample ``r``
        (:func:`mobeval.kernels.resampling.poisson_weights`, from the hash of its id, as
        :func:`mobeval.metrics.population.uid_percent` hashes it), so resample ``r`` adds the
        histograms of the uids of each weight ``k > 0``, ``k`` times."""
        resampled = self.accumulator.resampled
        if not resampled:
            resampled += [PopulationCounts() for _ in range(self.resamples)]
        uids = frame["uid"].unique().sort()
        weights = poisson_weights(uids.hash(SHARE_SEED).to_numpy(), self.resamples, self.seed)
        row_uid = uids.search_sorted(frame["uid"]).to_numpy()
        for counts, uid_weights in zip(resampled, weights.T, strict=True):
            row_weights = uid_weights[row_uid]
            for weight in np.unique(uid_weights[uid_weights > 0]):
                part = self._population(frame.filter(row_weights == weight), "generated")
                counts.merge(part.scaled(int(weight)))

    def _population(self, frame: pl.DataFrame, side: str) -> PopulationCounts:
        """The histograms of one side's whole uids (rows in (uid, d, t) order)."""
        starts = np.flatnonzero(_starts(frame)[1])
        offsets = _offsets(starts, frame.height)
        need = self.convention.full_days
        if need:
            lengths = np.diff(offsets)
            short = np.flatnonzero(lengths != need)
            if short.size:
                first = frame.row(int(starts[short[0]]), named=True)
                raise InputError(
                    f"{short.size} uid-day(s) without exactly {need} points (MoveSim's "
                    f"sequences; this one has {lengths[short[0]]}): the movesim convention "
                    "needs full days",
                    path=self.paths[side],
                    column="uid, d",
                    key=(first["uid"], first["d"]),
                )
        space, points = self.space, self.space.points(frame, self.paths[side])
        x, y, codes = points.x, points.y, points.codes
        counts = population_counts(
            offsets, x, y, codes, self.convention, space.sphere, points.cells
        )
        counts.uids = frame["uid"].n_unique()
        generation = self.convention.generation
        counts.generation = self.space.generation(offsets, points, generation, self.distributions)
        return counts

    def output_schemas(self, uid_type: pl.DataType) -> dict[str, dict[str, pl.DataType]]:
        """Columns and types of the per-uid and per-uid-day tables (none when unpaired)."""
        if self.pairing == "none":
            return {}
        metrics = dict.fromkeys(self.metrics, pl.Float64)
        return {
            "per_unit": {"uid": uid_type, **metrics, "n_days": pl.Int64, "n_steps": pl.Int64},
            "per_day": {"uid": uid_type, "d": pl.Int64, "n_steps": pl.Int64, **metrics},
        }

    def _raise_deferred(self) -> None:
        acc = self.accumulator
        skipped = pl.concat(acc.skipped).sort("uid") if acc.skipped else None
        if skipped is not None and self.on_mismatch == "error":
            shown = "; ".join(f"uid {u}: {why}" for u, why in skipped.head(SHOW).iter_rows())
            raise InputError(
                f"{skipped.height} uid(s) whose (d, t) steps differ between generated and "
                f"reference or that are on one side only (on_mismatch='skip' leaves them out"
                f"{UNPAIRED}): "
                f"{shown}" + (" ..." if skipped.height > SHOW else ""),
                path=self.paths["generated"],
                column="uid, d, t",
                key=skipped["uid"][0],
            )
        for side, count in acc.off_grid.items():
            if count and self.out_of_grid == "error":
                raise InputError(
                    f"{count} row(s) with {self.space.outside_text}",
                    path=self.paths[side],
                    column=", ".join(self.space.columns),
                    key=acc.first_off_grid[side],
                )

    def summary(self) -> pl.DataFrame:
        """City score per metric (mean over uids, ``n`` = uids, ``std`` over uids), then the
        counts."""
        self._raise_deferred()
        acc = self.accumulator
        if self.pairing == "none":  # the generated population's counts, then the real one's
            acc.uids, acc.uid_days, acc.steps = (acc.counts["generated"][c] for c in COUNTED)
        uids = acc.uids
        totals = acc.sums.sums()
        skipped = sum(frame.height for frame in acc.skipped)
        off_grid = sum(acc.off_grid.values())
        stds = acc.sums.stds()
        rows = [
            (m, totals[j] / uids if uids else float("nan"), uids, stds[j])
            for j, m in enumerate(self.metrics)
        ]
        population = acc.population
        real = population.get("reference")
        rows += self._with_intervals(
            self._divergence_rows(real, population.get("generated"), "", uids)
        )
        subset = PopulationCounts()
        for share in self.uid_shares:
            subset.merge(population.get(f"generated<{share}", PopulationCounts()))
            rows += self._divergence_rows(real, subset, f"@{share}%", subset.uids)
        for d in sorted({key[1] for key in population if isinstance(key, tuple)}):
            day = population.get(("generated", d))
            rows += self._divergence_rows(
                population.get(("reference", d)), day, f"@d={d}", day.uids if day else 0
            )
        rows += [
            count_row("uids", uids),
            count_row("uid_days", acc.uid_days),
            count_row("steps", acc.steps),
            count_row("uids_skipped", skipped),
            count_row("rows_out_of_grid", off_grid),
        ]
        if self.pairing == "none":
            real = acc.counts["reference"]
            rows += [count_row(n, real[c]) for n, c in zip(REAL_COUNTS, COUNTED, strict=True)]
        return summary_frame(rows)

    def _with_intervals(self, rows: list[tuple]) -> list[tuple]:
        """The whole population's divergence ``rows``, each followed by its percentile interval
        over the bootstrap's resamples of the generated uids (the real population fixed):
        ``<divergence>_<name>:low`` and ``:high`` (none without ``resamples``)."""
        if not self.resamples:
            return rows
        real = self.accumulator.population.get("reference")
        resampled = np.array(
            [
                [value for _, value, _, _ in self._divergence_rows(real, counts, "", 0)]
                for counts in self.accumulator.resampled or [PopulationCounts()] * self.resamples
            ]
        ).reshape(self.resamples, len(rows))
        lows, highs = percentile_interval(resampled, self.confidence)
        out = []
        for (name, value, n, std), low, high in zip(rows, lows, highs, strict=True):
            out += [(name, value, n, std), (f"{name}:low", low, n, None)]
            out.append((f"{name}:high", high, n, None))
        return out

    def result_sections(self) -> dict[str, pl.DataFrame]:
        """The sections of the whole result beside its summary (called after :meth:`summary`):
        ``distributions``, the whole population's real and generated histograms that the
        divergences compare (:func:`mobeval.metrics.population.distribution_table`), and
        ``density_map``, the visits per location (:func:`density_map`), when ``metrics`` names
        distributions and both sides have days."""
        population = self.accumulator.population
        real, generated = population.get("reference"), population.get("generated")
        if not (self.distributions and real and generated and real.days and generated.days):
            return {}
        table = distribution_table(real, generated, self.convention, self.distributions)
        return {"distributions": table, "density_map": density_map(real, generated, self.space)}

    def _divergence_rows(self, real, generated, suffix: str, n: int) -> list[tuple]:
        """The summary rows ``<divergence>_<name><suffix>`` of two populations (NaN where one is
        empty), over ``n`` uids; no std: no per-uid values."""
        if real is None or generated is None or not (real.days and generated.days):
            values = dict.fromkeys(self.distributions, float("nan"))
        else:
            values = {
                name: divergence(real, generated, self.convention, name, self.divergence)
                for name in self.distributions
            }
        return [
            (
                (name if name in GENERATION_RATIOS else f"{self.divergence}_{name}") + suffix,
                v,
                n,
                None,
            )
            for name, v in values.items()
        ]
