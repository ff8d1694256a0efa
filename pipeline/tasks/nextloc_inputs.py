"""Next-location runs before their first row: the spec built from the options
(:func:`nextloc_spec`, what ``mobeval.options`` checks) and the two inputs' schemas checked into
an :class:`InputPlan` (:func:`plan_inputs`, the first thing a run does with its inputs).

Polars and :mod:`mobeval.metrics.nextloc` only, no kernel: a run opens its inputs and checks their
columns before Numba and the scorer (:mod:`mobeval.tasks.nextloc`) are imported, so a bad input
is named at once (``tests/test_startup_imports.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from mobeval.errors import ConfigError, InputError
from mobeval.io.columns import missing_column
from mobeval.metrics.nextloc import (
    CANONICAL,
    ORDER_CHOICES,
    UNMATCHED,
    MetricColumns,
    NextlocConvention,
    expand_metrics,
    resolve_convention,
)

TARGET = "__target"
PREFERENCE = "__preference"


@dataclass(frozen=True)
class NextlocSpec:
    """What to compute. ``overrides``: fields of :class:`NextlocConvention` that replace the
    preset's (``ties``, ``f1``, ``missing``, ``k_beyond_list``, ``duplicates``); ``order_by`` picks
    score or rank when both exist (``auto``: score); ``unmatched="drop"`` drops (and counts)
    predictions whose sample is not in the truth."""

    key: tuple[str, ...] = ("sample_id",)
    k: tuple[int, ...] = (1, 5, 10)
    metrics: tuple[str, ...] | None = None
    convention: str = "mobeval"
    overrides: dict[str, str] = field(default_factory=dict)
    order_by: str = "auto"
    unmatched: str = "error"

    def __post_init__(self) -> None:
        if not self.key:
            raise ConfigError("key: give at least one key column")
        if self.order_by not in ORDER_CHOICES:
            raise ConfigError(f"order_by={self.order_by!r} is not one of {ORDER_CHOICES}")
        if self.unmatched not in UNMATCHED:
            raise ConfigError(f"unmatched={self.unmatched!r} is not one of {UNMATCHED}")

    @property
    def resolved_convention(self) -> NextlocConvention:
        return resolve_convention(self.convention, **self.overrides)

    @property
    def metric_columns(self) -> MetricColumns:
        return expand_metrics(self.metrics, list(self.k))


def nextloc_spec(
    *,
    key,
    k,
    metrics,
    convention,
    order_by,
    unmatched,
    columns=None,
    cohorts=None,
    cohort_missing=None,
    **overrides,
) -> NextlocSpec:
    """A checked spec from the evaluate functions' keyword options (one key name or a list, one k
    or several; ``overrides``: the convention fields given, None for the preset's; ``columns`` is
    the engines' business: each input is read under our names, :mod:`mobeval.io.columns`;
    ``cohorts`` and ``cohort_missing`` the API's: :mod:`mobeval.tasks.cohorts`);
    metric names, cutoffs and convention options are validated before anything is read."""
    spec = NextlocSpec(
        key=(key,) if isinstance(key, str) else tuple(key),
        k=(k,) if isinstance(k, int) else tuple(k),
        metrics=None if metrics is None else tuple(metrics),
        convention=convention,
        overrides={name: value for name, value in overrides.items() if value is not None},
        order_by=order_by,
        unmatched=unmatched,
    )
    spec.metric_columns  # noqa: B018 - raises ConfigError on a bad metric name or k
    spec.resolved_convention  # noqa: B018 - raises ConfigError on a bad convention field
    return spec


@dataclass(frozen=True)
class InputPlan:
    """How to read the two inputs: source columns, and expressions giving canonical columns."""

    truth_columns: list[str]
    truth_select: list[pl.Expr]
    pred_columns: list[str]
    pred_select: list[pl.Expr]
    list_form: bool
    order: str  # "score" | "rank" | "list"


def _is_integer(dtype: pl.DataType) -> bool:
    return dtype.is_integer()


def _check_key(schema: dict, key: tuple[str, ...], label: str, role: str, other: dict) -> None:
    """Every key column in ``schema`` (``other``: the other input's, to name a one-column key
    that both inputs hold under another name)."""
    for column in key:
        if column not in schema:
            raise missing_column(
                schema,
                column,
                label,
                role,
                (*key, *CANONICAL),
                "missing key column",
                key_in=other if len(key) == 1 else None,
            )


def plan_inputs(
    truth_schema: dict, truth_label: str, pred_schema: dict, pred_label: str, spec: NextlocSpec
) -> InputPlan:
    """Check both schemas (our column names: :mod:`mobeval.io.columns` renamed the user's) up
    front and decide the prediction form; every problem names the file and the column."""
    key = list(spec.key)
    _check_key(truth_schema, spec.key, truth_label, "truth", pred_schema)
    _check_key(pred_schema, spec.key, pred_label, "pred", truth_schema)
    for column in key:
        left, right = truth_schema[column], pred_schema[column]
        if left != right and not (_is_integer(left) and _is_integer(right)):
            raise InputError(
                f"key type {right} differs from the truth's {left}", path=pred_label, column=column
            )
    key_exprs = [
        pl.col(c).cast(pl.Int64) if _is_integer(truth_schema[c]) else pl.col(c) for c in key
    ]
    truth = (truth_schema, truth_label, "truth", spec.key)
    pred = (pred_schema, pred_label, "pred", spec.key)
    _require(*truth, "location", "integer", _is_integer)
    truth_select = [*key_exprs, pl.col("location").cast(pl.Int64).alias(TARGET)]
    truth_columns = [*key, "location"]

    if "location" in pred_schema:
        _require(*pred, "location", "integer", _is_integer)
        has_score, has_rank = "score" in pred_schema, "rank" in pred_schema
        order = _choose_order(spec.order_by, has_score, has_rank, pred_label)
        if order == "score":
            _require(*pred, "score", "numeric", lambda t: t.is_numeric())
            preference = pl.col("score").cast(pl.Float64)
        else:
            _require(*pred, "rank", "integer", _is_integer)
            preference = -pl.col("rank").cast(pl.Float64)
        columns = [*key, "location", order]
        select = [
            *key_exprs,
            pl.col("location").cast(pl.Int64).alias("location"),
            preference.alias(PREFERENCE),
        ]
        return InputPlan(truth_columns, truth_select, columns, select, False, order)
    if "locations" in pred_schema:
        dtype = pred_schema["locations"]
        if not (isinstance(dtype, pl.List | pl.Array) and _is_integer(dtype.inner)):
            raise InputError(
                f"expected a list of integers, found {dtype}", path=pred_label, column="locations"
            )
        columns = [*key, "locations"]
        select = [*key_exprs, pl.col("locations").cast(pl.List(pl.Int64)).alias("locations")]
        order = "list"
        if "scores" in pred_schema and spec.order_by != "rank":
            inner = pred_schema["scores"]
            if not (isinstance(inner, pl.List | pl.Array) and inner.inner.is_numeric()):
                raise InputError(
                    f"expected a list of numbers, found {inner}", path=pred_label, column="scores"
                )
            columns.append("scores")
            select.append(pl.col("scores").cast(pl.List(pl.Float64)).alias("scores"))
            order = "score"
        return InputPlan(truth_columns, truth_select, columns, select, True, order)
    raise missing_column(
        pred_schema,
        "location",
        pred_label,
        "pred",
        (*key, *CANONICAL),
        "no 'location' column (long form) nor 'locations' list column (list form)",
    )


#: What to do about location ids that are strings (Foursquare's venue ids): the recipe's page.
STRING_IDS_HINT = (
    "location ids must be integers: map each string id to one integer, the same in the truth "
    "and the predictions (a Polars recipe: docs/troubleshooting.md, 'Location ids that are "
    "strings')"
)


def _require(schema, label, role, key, column: str, kind: str, predicate) -> None:
    """``column`` in ``schema`` with values of ``kind``; else an InputError naming the file and
    the column, and what to do: the column it may be under another name
    (:func:`mobeval.io.columns.missing_column`), how to map string location ids to integers."""
    if column not in schema:
        raise missing_column(schema, column, label, role, (*key, *CANONICAL))
    if not predicate(schema[column]):
        hint = (
            f"; {STRING_IDS_HINT}" if schema[column] == pl.String and column == "location" else ""
        )
        raise InputError(
            f"expected {kind} values, found {schema[column]}{hint}", path=label, column=column
        )


def _choose_order(order_by, has_score, has_rank, label) -> str:
    if order_by == "score" or (order_by == "auto" and has_score):
        if not has_score:
            raise InputError("missing column (order_by='score')", path=label, column="score")
        return "score"
    if not has_rank:
        raise InputError(
            "missing column: long-form predictions need 'score' or 'rank' (is this file the "
            "truth? then the truth and the predictions are swapped: give each to the other)",
            path=label,
            column="rank",
        )
    return "rank"
