"""Propensity-scored precision and recall at k (Jain, Prabhu & Varma, "Extreme multi-label loss
functions for recommendation, tagging, ranking & other missing label applications", KDD 2016),
in the normalised form of the Extreme Classification Repository, as pyxclib's ``xc_metrics``
(``psprecision``, ``psrecall``) computes it.

A label (item) ``l`` is observed with propensity ``p_l = 1 / (1 + C e^{-A log(N_l + B)})``,
``C = (log N - 1)(B + 1)^A``, where ``N_l`` counts the training points (users of ``train``)
holding it and ``N`` the training points (``A = 0.55``, ``B = 1.5`` by default; the paper's
Wikipedia values 0.5, 0.4, Amazon's 0.6, 2.6), or ``p_l`` as given. Over the users ``u``
(every user with a list or relevant items), with ``w_l = 1 / p_l``, ``y_ul`` whether ``l`` is
relevant to ``u``, ``L_u`` the first ``k`` items of ``u``'s list (by score, descending; ties by
item id ascending) and ``B_u`` the ``k`` relevant items of largest ``w_l``:

    PSP@k = sum_u (1/k) sum_{l in L_u} y_ul w_l  /  sum_u (1/k) sum_{l in B_u} w_l
    PSR@k = sum_u (1/|y_u|) sum_{l in L_u} y_ul w_l  /  sum_u (1/|y_u|) sum_{l in B_u} w_l

(``|y_u|`` counted as 1 for a user with no relevant item), a ratio of means, as pyxclib's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from mobeval.errors import ConfigError, InputError
from mobeval.metrics.recs_population import PROPENSITY_PRESETS

if TYPE_CHECKING:
    import polars as pl

#: Jain et al.'s defaults (pyxclib's "otherwise" values).
DEFAULT_A, DEFAULT_B = PROPENSITY_PRESETS["jain"]


def inverse_propensity(
    counts: np.ndarray, instances: int, a: float = DEFAULT_A, b: float = DEFAULT_B
):
    """Jain et al.'s inverse propensity ``1 + C (N_l + B)^(-A)``, ``C = (log N - 1)(B + 1)^A``, of
    labels seen ``counts`` times among ``instances`` training points, computed as pyxclib's
    ``compute_inv_propesity`` (numpy's ``log`` and ``power``)."""
    c = (np.log(instances) - 1) * np.power(b + 1, a)
    return 1.0 + c * np.power(np.asarray(counts, dtype=np.float64) + b, -a)


def inverse_propensities(train: pl.DataFrame, a: float = DEFAULT_A, b: float = DEFAULT_B):
    """``item_id -> 1 / p_l`` of the items of ``train`` (``user_id, item_id``: each distinct
    pair one observation), and the weight of an item it never holds (``N_l = 0``)."""
    pairs = train.select("user_id", "item_id").unique()
    counts = pairs.group_by("item_id").len("users")
    return _weights(counts, pairs["user_id"].n_unique(), a, b)


def _weights(items: pl.DataFrame, instances: int, a: float, b: float):
    """``(item_id, weight)`` of ``items`` (``item_id``, ``users``: its ``N_l``) among
    ``instances`` training points, and the weight of an item none holds."""
    weights = inverse_propensity(items["users"].to_numpy(), instances, a, b)
    unseen = float(inverse_propensity(np.zeros(1), instances, a, b)[0])
    return items.select("item_id").with_columns(weight=weights), unseen


def given_propensities(table: pl.DataFrame, path: str | None = None):
    """``item_id -> 1 / p_l`` of a table of ``item_id, propensity`` (each in (0, 1], each item
    once)."""
    import polars as pl

    if not table.schema["propensity"].is_numeric():
        raise InputError(
            f"a propensity is a number, not {table.schema['propensity']}",
            path=path,
            column="propensity",
        )
    twice = table["item_id"].is_duplicated()
    if twice.any():
        raise InputError(
            "an item given two propensities", path=path, column="item_id",
            key=table["item_id"].filter(twice)[0],
        )  # fmt: skip
    bad = table.filter(~((pl.col("propensity") > 0) & (pl.col("propensity") <= 1)))
    if bad.height:
        raise InputError(
            f"a propensity is a probability in (0, 1], not {bad['propensity'][0]}",
            path=path,
            column="propensity",
            key=bad["item_id"][0],
        )
    return table.select("item_id", weight=1.0 / pl.col("propensity").cast(pl.Float64)), None


@dataclass(frozen=True)
class PropensityWeights:
    """What PSP@k and PSR@k read beyond the lists: ``weights`` (``item_id, weight``: 1 / p_l),
    the weight of a relevant item it lacks (``unseen``; None: refused) and the file it came
    from (``path``, for messages)."""

    weights: pl.DataFrame
    unseen: float | None
    path: str | None


def propensity_weights(
    metrics,
    *,
    train: object | None,
    propensities: object | None,
    preset: str | None,
    a: float | None,
    b: float | None,
    tables=None,
) -> PropensityWeights:
    """The weights of PSP@k and PSR@k (``metrics``: those asked for): read
    from ``propensities`` (``item_id, propensity``: :func:`given_propensities`), or Jain et
    al.'s formula over the training interactions ``train`` (``tables``: its
    :class:`~mobeval.tasks.item_tables.TrainTables` if already read), ``A`` and ``B`` those of
    ``preset`` (:data:`PROPENSITY_PRESETS`, default ``jain``) where ``a`` / ``b`` are None."""
    from mobeval.io.inputs import as_source
    from mobeval.tasks.item_tables import read_columns, train_tables

    if propensities is not None:
        source = as_source(propensities)
        table = read_columns(source, ("item_id", "propensity"))
        return PropensityWeights(*given_propensities(table, source.label), source.label)
    if train is None:
        raise ConfigError(
            f"{metrics[0].name} needs propensities: give train=PATH (--train PATH), the training "
            "interactions (user_id, item_id) of Jain et al.'s formula, or propensities=PATH "
            "(--propensities PATH), a file with item_id, propensity"
        )
    default_a, default_b = PROPENSITY_PRESETS[preset or "jain"]
    tables = tables or train_tables(train)
    weights, unseen = _weights(
        tables.items.select("item_id", "users"),
        tables.users.height,
        default_a if a is None else float(a),
        default_b if b is None else float(b),
    )
    return PropensityWeights(weights, unseen, tables.label)


@dataclass
class PropensityScores:
    """Per user (``users``, in order): the four sums of :func:`~mobeval.kernels.diversity.
    propensity_scored` (``sums``); ``psp`` and ``psr``: the ratios of their means."""

    users: list
    sums: np.ndarray
    psp: float
    psr: float


def propensity_scored(
    recs: pl.DataFrame,
    truth: pl.DataFrame,
    weights: pl.DataFrame,
    k: int,
    unseen: float | None = None,
    *,
    path: str | None = None,
) -> PropensityScores:
    """PSP@k and PSR@k of the lists ``recs`` (``user_id, item_id, score``) against the relevant
    items ``truth`` (``user_id, item_id``), items weighted by ``weights`` (``item_id, weight``:
    1 / p_l); a relevant item it lacks weighs ``unseen`` (None: InputError naming the item; an
    item not relevant weighs nothing, whatever its propensity). The means over users are
    pyxclib's: summed in user order (first appearance in ``recs``, then in ``truth``)."""
    import polars as pl

    users = pl.concat([recs["user_id"], truth["user_id"]]).unique(maintain_order=True)
    best = relevant_weights(truth.select("user_id", "item_id").unique(), weights, unseen, path)
    position = pl.col("user_id").replace_strict(users, range(len(users)), return_dtype=pl.Int64)
    lists = recs.sort(position, "score", "item_id", descending=[False, True, False])
    sums = user_sums(lists, best, users, [k])
    means = sums.mean(axis=0)
    return PropensityScores(users.to_list(), sums, means[0] / means[2], means[1] / means[3])


def relevant_weights(
    pairs: pl.DataFrame, weights: pl.DataFrame, unseen: float | None, path: str | None = None
) -> pl.DataFrame:
    """``user_id, item_id, weight``: each relevant (user, item) pair of ``pairs`` (distinct) with
    its item's ``1 / p_l`` from ``weights`` (``unseen`` where it lacks the item; None: an
    InputError naming the first such item)."""
    import polars as pl

    best = pairs.join(weights, on="item_id", how="left", maintain_order="left")
    if unseen is not None:
        best = best.with_columns(pl.col("weight").fill_null(unseen))
    missing = best.filter(pl.col("weight").is_null())
    if missing.height:
        raise InputError(
            "a relevant item without a propensity", path=path, column="item_id",
            key=missing["item_id"][0],
        )  # fmt: skip
    return best


def user_sums(lists: pl.DataFrame, best: pl.DataFrame, users: pl.Series, ks) -> np.ndarray:
    """``(len(users), 4 len(ks))``: per user of ``users`` (every user of ``lists`` and ``best``,
    those with a list first, in the lists' order) and cutoff of ``ks``, the four sums of
    :func:`~mobeval.kernels.diversity.propensity_scored`. ``lists``: ``user_id, item_id``, each
    user's rows together and in rank order; ``best``: :func:`relevant_weights`."""
    import polars as pl

    from mobeval.kernels import diversity as K
    from mobeval.tasks.diversity import group_offsets

    position = pl.col("user_id").replace_strict(users, range(len(users)), return_dtype=pl.Int64)
    best = best.with_columns(u=position).sort("u", "weight", descending=[False, True])
    top = lists.select("user_id", "item_id").join(
        best.select("user_id", "item_id", "weight"),
        on=["user_id", "item_id"],
        how="left",
        maintain_order="left",
    )
    nu = len(users)
    runs = np.cumsum(lists["user_id"].rle().struct.field("len").to_numpy())
    off = np.full(nu + 1, runs[-1] if runs.size else 0, dtype=np.int64)  # no list: empty
    off[0], off[1 : runs.size + 1] = 0, runs
    b = best["u"].to_numpy()
    best_off = group_offsets(b, nu)
    n_relevant = np.bincount(b, minlength=nu).astype(np.int64)
    weight = top["weight"].fill_null(0.0).to_numpy()
    best_weight = best["weight"].to_numpy()
    return np.hstack(
        [K.propensity_scored(off, weight, n_relevant, best_off, best_weight, k) for k in ks]
    )
