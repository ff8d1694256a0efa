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

from mobeval.errors import InputError
from mobeval.kernels import diversity as K
from mobeval.tasks.diversity import group_offsets

if TYPE_CHECKING:
    import polars as pl

#: Jain et al.'s defaults (pyxclib's "otherwise" values).
DEFAULT_A = 0.55
DEFAULT_B = 1.5


def inverse_propensities(train: pl.DataFrame, a: float = DEFAULT_A, b: float = DEFAULT_B):
    """``item_id -> 1 / p_l`` of the items of ``train`` (``user_id, item_id``: each distinct
    pair one observation), and the weight of an item it never holds (``N_l = 0``)."""
    import polars as pl

    pairs = train.select("user_id", "item_id").unique()
    instances = pairs["user_id"].n_unique()
    counts = pairs.group_by("item_id").len()
    weights = K.inverse_propensity(counts["len"].to_numpy(), instances, a, b)
    unseen = float(K.inverse_propensity(np.zeros(1), instances, a, b)[0])
    return pl.DataFrame({"item_id": counts["item_id"], "weight": weights}), unseen


def given_propensities(table: pl.DataFrame, path: str | None = None):
    """``item_id -> 1 / p_l`` of a table of ``item_id, propensity`` (each in (0, 1])."""
    import polars as pl

    bad = table.filter(~((pl.col("propensity") > 0) & (pl.col("propensity") <= 1)))
    if bad.height:
        raise InputError(
            f"a propensity is a probability in (0, 1], not {bad['propensity'][0]}",
            path=path,
            column="propensity",
            key=bad["item_id"][0],
        )
    return table.select("item_id", weight=1.0 / pl.col("propensity").cast(pl.Float64)), None


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
    item not relevant weighs nothing, whatever its propensity)."""
    import polars as pl

    users = pl.concat([recs["user_id"], truth["user_id"]]).unique(maintain_order=True)
    position = pl.col("user_id").replace_strict(users, range(len(users)), return_dtype=pl.Int64)
    best = truth.select("user_id", "item_id").unique()
    best = best.join(weights, on="item_id", how="left", maintain_order="left")
    if unseen is not None:
        best = best.with_columns(pl.col("weight").fill_null(unseen))
    missing = best.filter(pl.col("weight").is_null())
    if missing.height:
        raise InputError(
            "a relevant item without a propensity", path=path, column="item_id",
            key=missing["item_id"][0],
        )  # fmt: skip
    best = best.with_columns(u=position).sort("u", "weight", descending=[False, True])
    top = (
        recs.sort("user_id", "score", "item_id", descending=[False, True, False])
        .filter(pl.int_range(pl.len()).over("user_id") < k)
        .join(best, on=["user_id", "item_id"], how="left", maintain_order="left")
        .with_columns(pl.col("weight").fill_null(0.0), u=position)
        .sort("u", maintain_order=True)
    )
    nu = len(users)
    sums = K.propensity_scored(
        group_offsets(top["u"].to_numpy(), nu),
        top["weight"].to_numpy(),
        np.bincount(best["u"].to_numpy(), minlength=nu).astype(np.int64),
        group_offsets(best["u"].to_numpy(), nu),
        best["weight"].to_numpy(),
        k,
    )
    means = sums.mean(axis=0)
    return PropensityScores(users.to_list(), sums, means[0] / means[2], means[1] / means[3])
