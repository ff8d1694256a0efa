"""Score ranked recommendation lists against rated ground truth, the way a reference system does.

``score_recs_frame`` takes one chunk of WHOLE users (every row of a user on both sides is in the
chunk), builds the flat per-user arrays of :mod:`mobeval.kernels.recs` (with
:mod:`mobeval.tasks.recs_lists`), runs the kernel once, and returns the per-user values plus a
:class:`RecsState`: exact sums (and micro counters) that a streaming engine folds over chunks
with :meth:`RecsState.merge` before :func:`finalize`.
The summary does not depend on how users were split into chunks (exact sums, see
:mod:`mobeval.kernels.exact_sum`).

Inputs: ``recs`` has ``user_id``, ``item_id`` and, as the convention needs them, ``rank`` (order
``"rank"``) and ``score`` (score orders; predicted rating for mse/mae/rmse). ``ratings`` has
``user_id``, ``item_id``, ``rating``. Ids are integers or strings (a float id is refused before
any read: :func:`mobeval.io.sources.require_ids`); when the two files type an id column
differently both are compared as strings (as ClayRS does).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from mobeval.errors import ConfigError, InputError
from mobeval.kernels import recs as K
from mobeval.kernels.exact_sum import ExactColumnSums
from mobeval.kernels.ranks import segment_offsets
from mobeval.metrics import drop_duplicates_hint
from mobeval.metrics.recs import (
    MICRO_FAMILIES,
    RELEVANCE_FAMILIES,
    RecsConvention,
    RecsMetric,
    parse_recs_metrics,
    resolve_convention,
)
from mobeval.tasks import recs_lists as R
from mobeval.tasks.recs_inputs import PopulationInputs, rec_columns
from mobeval.tasks.summary import count_row, summary_frame

if TYPE_CHECKING:  # the population metrics' and trec_eval's measures: imported where used
    from mobeval.tasks.recs_population import PopulationCounts

_GAINS = {
    "binary": K.GAIN_BINARY,
    "linear": K.GAIN_LINEAR,
    "exponential": K.GAIN_EXPONENTIAL,
    "relison": K.GAIN_RELISON,
}
_DUPS = {
    "error": K.DUP_EACH,
    "count_each": K.DUP_EACH,
    "distinct_tp": K.DUP_DISTINCT_TP,
    "drop": K.DUP_EACH,  # no copy is left once the lists are reduced to one row per item
}
_AP = {"relevant": K.AP_RELEVANT, "min_k_relevant": K.AP_MIN_K_RELEVANT, "hits": K.AP_HITS}
_CUT_STAT = {
    "precision": K.PREC,
    "recall": K.REC,
    "map": K.AP,
    "mrr": K.RR,
    "ndcg": K.NDCG,
    "hit_rate": K.HIT,
    "dcg": K.DCG,
    "dcg_burges": K.DCG_BURGES,
    "hits": K.TP,
}
_USER_STAT = {"r-precision": K.RPREC, "mse": K.MSE, "mae": K.MAE, "rmse": K.RMSE}
_RELEVANT_USERS = "_relevant_users"
#: The families RankSys's ``users_with_relevant`` divides by the users with a relevant item.
_BY_RELEVANT_USERS = (*RELEVANCE_FAMILIES, "ndcg")
_ALL_NAN_MESSAGE = (
    "no user has a rating above the given threshold, so {metric} is undefined for every user "
    "(ClayRS: 'No user has a rating above the given threshold! Try lower it')"
)


@dataclass
class RecsState:
    """Sufficient statistics of a summary: exact per-column sums over the users scored so far, and
    per side ("recs", "ratings") the number of users with no rows there but rows on the other side,
    with the lowest of them."""

    metrics: tuple[RecsMetric, ...]
    convention: RecsConvention
    sums: ExactColumnSums
    path_ratings: str | None = None
    path_recs: str | None = None
    missing: dict[str, tuple[int, object]] = field(default_factory=dict)
    #: the population metrics' item counts (:mod:`mobeval.tasks.recs_population`), if any
    population: PopulationCounts | None = None

    def merge(self, other: RecsState) -> None:
        """Fold the state of another chunk scored with the same metrics and convention."""
        if other.metrics != self.metrics or other.convention != self.convention:
            raise ConfigError("cannot merge recommendation scores of different metrics/conventions")
        self.sums.merge(other.sums)
        if other.population is not None:
            if self.population is None:
                self.population = other.population
            else:
                self.population.merge(other.population)
        for side, (count, first) in other.missing.items():
            known, lowest = self.missing.get(side, (0, first))
            self.missing[side] = (known + count, min(lowest, first))

    def check_same_users(self) -> None:
        """InputError if a user has rows on one side only (ClayRS raises ValueError then)."""
        for side, other in (("recs", "ratings"), ("ratings", "recs")):
            count, first = self.missing.get(side, (0, None))
            if count:
                raise InputError(
                    f"{count} user(s) of the {other} have no rows here; this convention (ClayRS) "
                    "needs the same users on both sides",
                    path=self.path_recs if side == "recs" else self.path_ratings,
                    column="user_id",
                    key=first,
                )


@dataclass
class RecsScores:
    """Per-user values (``user_id`` + one column per metric) and the state of the summary."""

    per_user: pl.DataFrame
    state: RecsState

    def summary(self) -> pl.DataFrame:
        """The system values of this chunk alone (see :func:`finalize`)."""
        return finalize(self.state)


def score_recs_frame(
    recs: pl.DataFrame,
    ratings: pl.DataFrame,
    *,
    metrics: str | Sequence[str],
    cutoffs: Sequence[int] | None = None,
    convention: str | RecsConvention = "trec_eval",
    path_recs: object | None = None,
    path_ratings: object | None = None,
    check_users: bool = True,
    **options: object,
) -> RecsScores:
    """Score one chunk of whole users.

    Args:
        recs: ranked lists (``user_id``, ``item_id``, and ``rank`` / ``score`` when used).
        ratings: ground truth (``user_id``, ``item_id``, ``rating``).
        metrics: names such as ``"precision@10"``, ``"ndcg"``, ``"map@5"``, ``"f2"``, ``"rmse"``.
        cutoffs: grid applied to every metric name without its own ``@k``.
        convention: a preset name of ``RECS_PRESETS`` or a :class:`RecsConvention`.
        path_recs, path_ratings: file names used in error messages.
        check_users: False leaves the same-users check of ``require_same_users`` to the caller
            (a streaming engine calls :meth:`RecsState.check_same_users` once every chunk is in).
        **options: fields of :class:`RecsConvention` overriding the preset.

    Raises:
        InputError: missing columns, nulls, NaN ratings or scores, duplicate truth rows, duplicate
            list items under ``duplicates="error"``, user sets that differ where the convention
            requires them equal.
        ConfigError: unknown metric, preset or option.
    """
    setup = RecsSetup.build(metrics, cutoffs, convention, **options)
    return score_chunk(setup, recs, ratings, path_recs, path_ratings, check_users=check_users)


@contextmanager
def _scores_first(listed: pl.DataFrame, path: object | None, deferred: bool) -> Iterator[None]:
    """An InputError raised inside it made the error of the lists' first NaN or infinite score
    (``listed``: the lists' rows as they came) where there is one and its check is
    ``deferred`` to the kernel: the error that the check, made before, gave first."""
    try:
        yield
    except InputError:
        if deferred:
            R.checked_rows(listed, "score", path)
        raise


@dataclass(frozen=True)
class RecsSetup:
    """What a scoring takes from its metrics and convention alone, built once a scorer
    (:class:`RecsScorer`), not once a chunk: the convention, the metrics parsed, the lists'
    columns, the cutoffs' grid, how far the kernel reads each list (``whole``, ``limit``) and
    its rules (checked; the lists' order filled in by each chunk, from its item ids' type)."""

    conv: RecsConvention
    specs: tuple[RecsMetric, ...]
    trec: tuple
    rec_cols: tuple[str, ...]
    grid: tuple[int, ...]
    whole: bool
    limit: int
    rules: K.StatsRules

    @classmethod
    def build(
        cls,
        metrics: str | Sequence[str],
        cutoffs: Sequence[int] | None,
        convention: str | RecsConvention,
        **options: object,
    ) -> RecsSetup:
        """ConfigError for an unknown metric, preset or option (:func:`score_recs_frame`)."""
        conv = resolve_convention(convention, **options)
        specs = _parsed(metrics, cutoffs, conv.beta)
        trec = [s.trec for s in specs if s.trec is not None]
        if trec:
            from mobeval.tasks.trec import check_trec_convention

            check_trec_convention(conv, trec)
        grid = sorted({K.FULL if s.k is None else s.k for s in specs})
        # the kernel reads each list to its largest cutoff only, unless a statistic needs it
        # whole
        whole = (
            conv.idcg == "retrieved_rated"
            or K.FULL in grid
            or any(s.family in _USER_STAT for s in specs)
        )
        limit = -1 if whole or trec or not grid else grid[-1]
        thr = conv.relevant_threshold
        rules = K.StatsRules(
            rel_threshold=-np.inf if thr is None or thr == "user_mean" else float(thr),
            user_mean_threshold=thr == "user_mean",
            gain_mode=_GAINS[conv.gain],
            gain_threshold=-np.inf if conv.gain_threshold is None else conv.gain_threshold,
            clamp_negative=conv.negative_gain == "zero",
            idcg_rated=conv.idcg == "retrieved_rated",
            dup_mode=_DUPS[conv.duplicates],
            check_duplicates=conv.duplicates == "error",
            precision_over_k=conv.precision_denominator == "k",
            ap_mode=_AP[conv.ap_denominator],
            nan_if_no_relevant=conv.no_relevant != "zero",
            whole_lists=whole,
            order_limit=limit,
        ).checked()
        columns = tuple(rec_columns(conv, specs))
        return cls(conv, specs, tuple(trec), columns, tuple(grid), whole, limit, rules)


def score_chunk(
    setup: RecsSetup,
    recs: pl.DataFrame,
    ratings: pl.DataFrame,
    path_recs: object | None = None,
    path_ratings: object | None = None,
    *,
    check_users: bool = True,
) -> RecsScores:
    """:func:`score_recs_frame` with its ``setup`` built already."""
    conv, specs, trec, grid, limit = (
        setup.conv,
        setup.specs,
        list(setup.trec),
        setup.grid,
        setup.limit,
    )
    need_score = "score" in setup.rec_cols
    recs = R.checked_columns(recs, list(setup.rec_cols), path_recs)
    ratings = R.checked_columns(ratings, ["user_id", "item_id", "rating"], path_ratings)
    recs, ratings = R.common_id_types(recs, ratings)
    listed = recs  # the lists' rows as they came, for a NaN or infinite score's message
    # float64 scores are checked by the kernel that reads every row's, not in a pass here: of
    # lists the metric kernel puts in a score order, every row kept (K.recs_user_stats'
    # not_finite), or in ranx's (R.ranx_runs' not_finite, the copies a dict drops included)
    deferred = (
        need_score
        and not trec
        and recs.schema["score"] == pl.Float64
        and (conv.order == "ranx" or (conv.order in R.SCORE_ORDERS and conv.duplicates != "drop"))
    )
    grouped = R.checked_rows(recs, "score" if need_score and not deferred else None, path_recs)
    with _scores_first(listed, path_recs, deferred):
        R.checked_rows(ratings, "rating", path_ratings, order=False)
        if conv.unweighted:
            ratings = ratings.with_columns(pl.lit(1.0, dtype=pl.Float64).alias("rating"))

        recs, ratings = R.with_item_codes(recs, ratings)
        recs = R.by_user(recs, grouped)
        ratings, users, rec_counts, tru_counts = R.blocks(recs, ratings, path_ratings)
    rec_off = segment_offsets(rec_counts)
    drop = conv.duplicates == "drop"
    if drop and conv.order != "ranx":  # no user loses every row: the users stay as they are
        recs, rec_off = R.one_row_per_item(recs, rec_off)
        rec_counts = np.diff(rec_off)
    tru_off = segment_offsets(tru_counts)
    # a score order is put in place by the kernel, in its copy of each list, unless a trec_eval
    # measure needs the ordered rows
    order_mode, ids_text = K.AS_GIVEN, False
    list_off = rec_off  # ranx's lists: their first `limit` entries (the duplicate check: all)
    if conv.order in R.SCORE_ORDERS and not trec:
        rows, (rec_items, rec_scores) = None, R.as_given(recs)
        order_mode, ids_text = R.score_order(recs, conv.order)
    elif conv.order == "ranx":
        heads = not setup.rules.check_duplicates
        odd = np.zeros(len(users), dtype=np.bool_) if deferred else None
        list_off, rows, rec_items, rec_scores = R.ranx_runs(recs, rec_off, limit, drop, heads, odd)
        if deferred and odd.any():
            R.checked_rows(listed, "score", path_recs)  # the error of the first such score
    else:
        rows, rec_items, rec_scores = R.lists(recs, conv.order, rec_off, limit)
    tru_items = ratings[R.ITEM].to_numpy()
    thr = conv.relevant_threshold
    missing = {}
    for side, counts in (("recs", rec_counts), ("ratings", tru_counts)):
        if not counts.all():  # one pass when every user has rows on this side
            absent = np.flatnonzero(counts == 0)
            missing[side] = (len(absent), users[int(absent[0])])
    trec_values = {}
    if trec:
        from mobeval.tasks.trec import trec_user_values

        level = int(thr) if isinstance(thr, int | float) else 1
        lists = recs if rows is None else recs[rows]
        trec_values = trec_user_values(
            lists, ratings, users, trec, level, path_ratings=path_ratings
        )

    longest = int(max(rec_counts.max(initial=0), tru_counts.max(initial=0), 1))
    cut, usr, dup_pos, not_finite = K.recs_user_stats(
        list_off,
        rec_items,
        rec_scores,
        tru_off,
        tru_items,
        ratings["rating"].to_numpy().astype(np.float64, copy=False),
        np.array(grid, dtype=np.int64),
        _discounts(longest, conv.log_base),
        setup.rules._replace(order_mode=order_mode, ids_text=ids_text),
    )
    if deferred and not_finite.any():
        R.checked_rows(listed, "score", path_recs)  # the error of the first such score
    if conv.duplicates == "error" and (dup_pos >= 0).any():
        u = int(np.flatnonzero(dup_pos >= 0)[0])
        # the first repeat in the list's whole order, as the message names it
        rows, rec_items = R.lists(recs, conv.order, rec_off)[:2]
        row = int(rec_off[u] + K.first_repeat(rec_items[rec_off[u] : rec_off[u + 1]]))
        item = recs["item_id"][row if rows is None else int(rows[row])]
        raise InputError(
            "an item appears twice in a user's list (trec_eval rejects duplicate documents); "
            f"{drop_duplicates_hint('item')}; 'count_each' scores every copy",
            path=path_recs,
            column="item_id",
            key=(users[u], item),
        )

    if conv.denominator == "users_in_both":
        scored = (rec_counts > 0) & (tru_counts > 0)
    elif conv.denominator == "users_in_truth":
        scored = tru_counts > 0
    else:
        scored = np.ones(len(users), dtype=bool)
    index = {k: i for i, k in enumerate(grid)}
    columns = _metric_columns(specs, conv, cut, usr, index, trec_values)
    every = bool(scored.all())  # then no copy of each column
    # float64 arrays made Series as they are (a dtype given takes Polars' slower path: a cast)
    per_user = pl.DataFrame(
        [users if every else users.filter(pl.Series(scored))]
        + [
            pl.Series(name, np.asarray(col if every else col[scored], dtype=np.float64))
            for name, col in columns.items()
        ]
    )
    stats = _stat_columns(specs, conv, cut, usr, index)
    names = [*columns, *stats]
    sums = ExactColumnSums(names, spread=list(columns))  # no count's spread is asked for
    if names:
        values = columns | stats
        sums.add(np.column_stack([values[n] if every else values[n][scored] for n in names]))
    state = RecsState(
        specs,
        conv,
        sums,
        None if path_ratings is None else str(path_ratings),
        None if path_recs is None else str(path_recs),
        missing,
    )
    if conv.require_same_users and check_users:
        state.check_same_users()
    return RecsScores(per_user, state)


def _parsed(metrics: str | Sequence[str], cutoffs, beta: float) -> tuple[RecsMetric, ...]:
    """The per-user metrics named (none: only population metrics were asked for)."""
    return parse_recs_metrics(metrics, cutoffs, beta=beta) if len(metrics) else ()


def finalize(state: RecsState) -> pl.DataFrame:
    """System values: ``metric`` (lowercase name), ``value`` (float64), ``n`` (users averaged),
    ``std`` (over those users, where ``value`` is their mean: :mod:`mobeval.tasks.summary`).

    Macro: sum of per-user values over the users counted (NaN users left out), divided by that
    count, or by the number of users with a relevant item under ``users_with_relevant``; of a
    trec_eval measure, as trec_eval: counts summed, ``gm_*`` the exp of the mean of the logs. Micro:
    the metric of the summed counts. An empty average is NaN, or an InputError for the families
    ``error_if_all_nan`` checks.
    """
    conv = state.convention
    totals = state.sums.sums()
    counts = state.sums.counts
    col = {name: i for i, name in enumerate(state.sums.names)}
    relevant_users = totals[col[_RELEVANT_USERS]]
    stds = state.sums.stds()
    rows = []
    for spec in state.metrics:
        i = col[spec.name]
        if (
            conv.no_relevant == "error_if_all_nan"
            and spec.family in conv.all_nan_error_metrics
            and counts[i] == 0
        ):
            raise InputError(
                _ALL_NAN_MESSAGE.format(metric=spec.name), path=state.path_ratings, column="rating"
            )
        std = None
        if conv.averaging == "micro" and spec.family in MICRO_FAMILIES:
            tp, den, rel = (totals[col[s]] for s in _micro_names(spec))
            value = _micro_value(spec, tp, den, rel, conv.f_beta)
            n = int(counts[col[_micro_names(spec)[0]]])
        elif conv.denominator == "users_with_relevant" and spec.family in _BY_RELEVANT_USERS:
            n = int(relevant_users)
            value = totals[i] / n if n > 0 else np.nan
        else:
            n = int(counts[i])
            value, std = (totals[i] / n, stds[i]) if n > 0 else (np.nan, None)
        if spec.family == "trec" and counts[i] < counts[col[_RELEVANT_USERS]]:
            value, std = np.nan, None  # trec_eval's sum takes a user's NaN (-nan: 0/0) in
        elif spec.family == "trec" and spec.trec.aggregate == "sum":
            value, std = totals[i], None  # a total, not a mean
        elif spec.family == "trec" and spec.trec.aggregate == "gm":
            value, std = np.exp(value), None  # a geometric mean
        rows.append((spec.name, value, n, std))
    return summary_frame(rows)


def _fbeta(p: np.ndarray, r: np.ndarray, beta: float, f_beta: str) -> np.ndarray:
    """``(1 + w) P R / (w P + R)`` with ``w = b^2`` (``f_beta="squared"``) or ``w = b``
    (``"linear"``: trec_eval's set_F), 0 where ``P = R = 0``, NaN where P or R is NaN."""
    w = beta * beta if f_beta == "squared" else beta
    den = w * p + r
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (1 + w) * p * r / np.where(den > 0, den, 1.0), p * r * 0.0)


def _metric_columns(specs, conv, cut, usr, index, trec_values) -> dict[str, np.ndarray]:
    """Per-user value of every requested metric (all users of the chunk); trec_eval's measures
    from ``trec_values`` (:func:`~mobeval.tasks.trec.trec_user_values`)."""
    out = {}
    for s in specs:
        c = index[K.FULL if s.k is None else s.k]
        if s.family == "trec":
            out[s.name] = trec_values[s.name]
        elif s.family == "fmeasure":
            out[s.name] = _fbeta(cut[:, K.PREC, c], cut[:, K.REC, c], s.beta, conv.f_beta)
        elif s.family in _CUT_STAT:
            out[s.name] = cut[:, _CUT_STAT[s.family], c]
        else:
            out[s.name] = usr[:, _USER_STAT[s.family]]
    return out


def _micro_names(spec: RecsMetric) -> tuple[str, str, str]:
    if spec.family == "r-precision":
        return "_rp_tp", "_rp_den", "_rel"
    k = "all" if spec.k is None else str(spec.k)
    return f"_tp@{k}", f"_den@{k}", "_rel"


def _stat_columns(specs, conv, cut, usr, index) -> dict[str, np.ndarray]:
    """Count columns behind micro averages (NaN for users a NaN policy leaves out), and the
    indicator of users with at least one relevant item."""
    n_rel = usr[:, K.NREL]
    skip = (n_rel == 0) & (conv.no_relevant != "zero")
    out = {_RELEVANT_USERS: (n_rel > 0).astype(np.float64)}
    if conv.averaging != "micro":
        return out
    for s in specs:
        if s.family not in MICRO_FAMILIES:
            continue
        tp, den, rel = _micro_names(s)
        if s.family == "r-precision":
            values = (usr[:, K.RP_TP], usr[:, K.RP_DEN])
        else:
            c = index[K.FULL if s.k is None else s.k]
            values = (cut[:, K.TP, c], cut[:, K.DEN, c])
        for name, v in zip((tp, den, rel), (*values, n_rel), strict=True):
            out[name] = np.where(skip, np.nan, v)
    return out


def _micro_value(spec: RecsMetric, tp: float, den: float, rel: float, f_beta: str) -> float:
    precision = tp / den if den > 0 else 0.0
    if spec.family in ("precision", "r-precision"):
        return precision
    recall = tp / rel if rel > 0 else 0.0
    if spec.family == "recall":
        return recall
    return float(_fbeta(np.array([precision]), np.array([recall]), spec.beta, f_beta)[0])


@functools.lru_cache(maxsize=16)
def _discounts(n: int, base: float) -> np.ndarray:
    """``log_b(i + 2)`` for ``i < n``, with numpy's own log2 / log10 / log for those bases;
    read-only, made once for the chunks of a run (their longest lists are often as long)."""
    x = np.arange(2, n + 2, dtype=np.float64)
    if base == 2:
        x = np.log2(x)
    elif base == 10:
        x = np.log10(x)
    elif base == np.e:
        x = np.log(x)
    else:
        x = np.log(x) / np.log(base)
    x.flags.writeable = False
    return x


@dataclass(frozen=True)
class RecsPlan:
    """What the engine reads: the lists' and the ratings' columns, the user column (``key``) cast
    to Int64 or String on both sides when the two files type it differently."""

    pred_columns: tuple[str, ...]
    pred_select: tuple[pl.Expr, ...]
    truth_columns: tuple[str, ...]
    truth_select: tuple[pl.Expr, ...]

    @classmethod
    def build(
        cls, key: str, columns: Sequence[str], recs_schema: dict, ratings_schema: dict
    ) -> RecsPlan:
        """``columns``: :func:`rec_columns`; the schemas: the files' (the key checked present)."""
        user = pl.col(key)
        types = (recs_schema[key], ratings_schema[key])
        if types[0] != types[1]:
            user = user.cast(pl.Int64 if all(t.is_integer() for t in types) else pl.String)
        rest = [c for c in columns if c != "user_id"]
        return cls(
            pred_columns=(key, *rest),
            pred_select=(user, *(pl.col(c) for c in rest)),
            truth_columns=(key, "item_id", "rating"),
            truth_select=(user, pl.col("item_id"), pl.col("rating")),
        )


class RecsScorer:
    """Scores chunks of whole users with :func:`score_recs_frame` and merges their states.

    A user with ratings and no list (or the reverse) arrives as rows on one side only of its chunk,
    so the convention's rule for users missing on one side applies across chunks as within one.
    """

    def __init__(
        self,
        *,
        metrics: Sequence[str],
        cutoffs: Sequence[int] | None,
        convention: RecsConvention,
        key: str,
        path_recs: object,
        path_ratings: object,
        population: PopulationInputs | None = None,
    ) -> None:
        self.metrics = list(metrics)
        self.population = population
        self.cutoffs = cutoffs
        self.convention = convention
        self.key = key
        self.paths = {"recs": path_recs, "ratings": path_ratings}
        self.columns = {
            "recs": rec_columns(convention, _parsed(metrics, cutoffs, convention.beta), population),
            "ratings": ["user_id", "item_id", "rating"],
        }
        self.state: RecsState | None = None
        self.setup: RecsSetup | None = None
        self.users = 0

    def score(self, recs: pl.DataFrame, ratings: pl.DataFrame) -> dict | None:
        if recs.height == 0 and ratings.height == 0:
            return None
        if self.key != "user_id":
            recs, ratings = (f.rename({self.key: "user_id"}, strict=False) for f in (recs, ratings))
        # a side with no row in this chunk may come without columns
        if recs.width == 0:
            recs = _empty(self.columns["recs"], ratings)
        if ratings.width == 0:
            ratings = _empty(self.columns["ratings"], recs)
        if self.setup is None:  # at the first chunk: a bad metric is named after the inputs
            self.setup = RecsSetup.build(self.metrics, self.cutoffs, self.convention)
        paths = self.paths["recs"], self.paths["ratings"]
        if self.population is not None:  # both scorings read the lists by user: sorted once
            recs = R.by_user(R.checked_columns(recs, self.columns["recs"], paths[0]))
        scores = score_chunk(self.setup, recs, ratings, *paths, check_users=False)
        per_user = scores.per_user
        if self.population is not None:
            from mobeval.tasks.recs_population import PopulationCounts

            scores.state.population = PopulationCounts(self.population)
            if self.population.scored:
                R.check_finite(
                    R.checked_columns(recs, ["user_id", "item_id", "score"], self.paths["recs"]),
                    "score",
                    self.paths["recs"],
                )
            # the first positions alone that a population metric reads
            lists = R.ordered(recs, self.convention.order, self.population.depth)
            correlations = scores.state.population.add(lists, ratings)
            if correlations is not None:
                correlations = correlations.cast({"user_id": per_user.schema["user_id"]})
                per_user = per_user.join(
                    correlations, on="user_id", how="left", maintain_order="left"
                )
        if self.state is None:
            self.state = scores.state
        else:
            self.state.merge(scores.state)
        self.users += per_user.height
        if self.key != "user_id":
            per_user = per_user.rename({"user_id": self.key})
        return {"per_unit": per_user}

    def result_sections(self) -> dict[str, pl.DataFrame]:
        """The sections of the whole result beside its summary: the tables of ClayRS's plot
        metrics asked for (``long_tail``, ``popularity_correlation``:
        :meth:`PopulationCounts.sections`)."""
        if self.state is None or self.state.population is None:
            return {}
        return self.state.population.sections()

    def summary(self) -> pl.DataFrame:
        """The system values (:func:`finalize`), then ``users``: the users scored. Users on one
        side only are checked here, once every chunk is in (the engine may start over when the
        inputs turn out not to be sorted)."""
        if self.convention.require_same_users:
            self.state.check_same_users()
        population = self.state.population.rows() if self.state.population is not None else []
        rows = [(metric, value, n, None) for metric, value, n in population]  # no per-user sd
        return pl.concat(
            [finalize(self.state), summary_frame([*rows, count_row("users", self.users)])]
        )


def _empty(columns: list[str], other: pl.DataFrame) -> pl.DataFrame:
    """No rows, ``columns`` typed as in ``other`` (Float64 where ``other`` lacks the column)."""
    return pl.DataFrame(schema={c: other.schema.get(c, pl.Float64) for c in columns})
