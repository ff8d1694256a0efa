"""Paper-style scores of a logits matrix ``[N, C]`` against integer targets ``[N]``, in row chunks.

Metrics (``r_i`` the 1-based rank of target ``y_i`` under the tie policy, ``N`` scored rows):

* ``acc@k = (1/N) sum_i [r_i <= min(k, C)]`` (``sklearn.metrics.top_k_accuracy_score``).
* ``mrr = (1/N) sum_i 1 / r_i`` over the full ranking (no cutoff).
* ``ndcg@k = (1/N) sum_i [r_i <= k] / log2(r_i + 1)`` (one relevant class, IDCG = 1;
  Jarvelin & Kekalainen 2002).
* ``f1_weighted`` / ``f1_macro``: F1 of the top-1 prediction per class, ``F1_c = 2 tp_c /
  (n_true_c + n_pred_c)``, over the labels present in the targets or the predictions, averaged with
  weights ``n_true_c`` or equally (``sklearn.metrics.f1_score(average="weighted" | "macro")``).
* ``cross_entropy = (1/N) sum_i -log softmax(x_i)[y_i]``, natural log, stable log-sum-exp with
  terms in the logits' precision (``torch.nn.functional.cross_entropy``, reduction "mean"; the
  float32 error bound: :mod:`mobeval.kernels.logits`). A ``-inf`` target logit (or logits
  so far apart that the loss overflows) gives that row ``+inf``, and the mean is ``+inf``; a row
  with a NaN or ``+inf`` logit, or (with cross_entropy) only ``-inf`` logits, is an InputError.

Sums are exact (:class:`~mobeval.kernels.exact_sum.ExactColumnSums`) and the F1 confusion counts
are integers, so any chunking gives the same bits. Rows whose target equals ``ignore_target``
(padding) are left out of every metric. Reference: the seed next_location_metrics_guide.md.

Ties: the target's rank among the classes with its score is set by a tie policy (``TIES`` of
:mod:`mobeval.metrics.logits`):
``optimistic`` (first), ``pessimistic`` (last), ``index`` (lower class index first, a stable
descending sort), ``index_desc`` (higher class index first: scikit-learn's ``top_k_accuracy_score``,
``np.argsort(y_score, kind="mergesort")[:, ::-1]``) or ``average``: every order of the tied classes
equally likely, so each metric is its expectation over the target's equally likely positions in
its tie group (``acc@k`` = the fraction of those positions ``<= k``, ``mrr`` the mean of ``1/r``,
``ndcg@k`` the mean of its gain), scored by the kernel the next-location task uses
(:func:`mobeval.kernels.topk.single_target_metrics`). A convention (``PRESETS`` of
:mod:`mobeval.metrics.logits`) sets the policy of each metric family.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from mobeval.errors import InputError
from mobeval.io.logits import TARGETS_COLUMN, iter_logits
from mobeval.kernels import topk
from mobeval.kernels.exact_sum import ExactColumnSums
from mobeval.kernels.logits import logits_rows
from mobeval.metrics.logits import (
    LogitsConvention,
    parse_logits_metrics,
    resolve_logits_convention,
)
from mobeval.tasks.summary import summary_frame

#: How a metric's value is made over the rows, per metric (every other: ``"mean"`` of the
#: per-row values, exact sums): ``"confusion"``: from the per-class confusion counts.
AGGREGATION = {"f1_weighted": "confusion", "f1_macro": "confusion"}
PERCENT_METRICS = ("acc", "mrr", "ndcg", "f1_weighted", "f1_macro")
_TOPK_CODES = {"acc": topk.ACC, "mrr": topk.MRR, "ndcg": topk.NDCG}
DEFAULT_CHUNK_ROWS = 16384


@dataclass
class LogitsScores:
    """``summary``: ``metric``, ``value``, ``n`` (rows scored); ``per_sample`` when asked for."""

    summary: pl.DataFrame
    per_sample: pl.DataFrame | None = None


def rank_bounds(
    n_greater: np.ndarray, n_lower: np.ndarray, n_higher: np.ndarray, ties: str
) -> tuple[np.ndarray, np.ndarray]:
    """The target's 1-based rank range (lo, hi) from the kernel's counts: lo == hi except under
    ``average``, where every rank from the first to the last place of the tie group is equally
    likely."""
    first = 1.0 + n_greater
    last = first + n_lower + n_higher
    if ties == "optimistic":
        return first, first
    if ties == "pessimistic":
        return last, last
    if ties == "index":
        rank = first + n_lower
        return rank, rank
    if ties == "index_desc":
        rank = first + n_higher
        return rank, rank
    return first, last


class LogitsAccumulator:
    """Folds row chunks: exact sums of per-row values and integer confusion counts."""

    def __init__(
        self,
        metrics: Sequence[str],
        *,
        ties: str | None = None,
        convention: str | LogitsConvention = "mobeval",
        ignore_target: int | None = None,
    ) -> None:
        self.convention = resolve_logits_convention(convention, ties)
        self.metrics = list(metrics)
        self.ties = self.convention.ties
        self.ignore_target = ignore_target
        self._sum_names = [m for m in self.metrics if AGGREGATION.get(m, "mean") == "mean"]
        self.sums = ExactColumnSums(self._sum_names)
        self.n_classes: int | None = None
        self.n_true = self.n_pred = self.n_tp = np.zeros(0, dtype=np.int64)

    def add(
        self,
        logits: np.ndarray,
        targets: np.ndarray,
        *,
        first_row: int = 0,
        path: object | None = None,
        targets_at: tuple[object | None, str | None] = (None, None),
        per_sample: bool = False,
    ) -> pl.DataFrame | None:
        """Score one chunk (rows ``first_row...``); returns its per-sample frame if asked.

        ``path``: the logits' file; ``targets_at``: the targets' file and column (error messages).
        """
        logits, targets = self._check(logits, targets, first_row, path, targets_at)
        keep = targets != self.ignore_target if self.ignore_target is not None else None
        t = targets if keep is None else np.where(keep, targets, -1)
        n_greater, n_lower, n_higher, top1, ce, bad = logits_rows(
            logits, t, "cross_entropy" in self.metrics
        )
        if bad.any():
            row = first_row + int(np.flatnonzero(bad)[0])
            raise InputError("NaN or +inf in the logits row", path=path, key=f"row {row}")
        if "cross_entropy" in self.metrics:
            # Only a row whose logits are all -inf gets here with a NaN loss: softmax is 0/0.
            undefined = (t >= 0) & np.isnan(ce)
            if undefined.any():
                row = first_row + int(np.flatnonzero(undefined)[0])
                raise InputError(
                    "every logit is -inf in the row: softmax and cross_entropy are undefined",
                    path=path,
                    key=f"row {row}",
                )
        counts = (n_greater, n_lower, n_higher)
        if keep is not None:
            counts = tuple(c[keep] for c in counts)
            top1, ce, t = top1[keep], ce[keep], targets[keep]
        values = self._row_values(counts, ce)
        lo, hi = rank_bounds(*counts, self.convention.ties)
        rank = (lo + hi) / 2.0  # the expected rank under "average"
        if self._sum_names:
            self.sums.add(np.column_stack([values[name] for name in self._sum_names]))
        c = self.n_classes
        self.n_true += np.bincount(t, minlength=c)
        self.n_pred += np.bincount(top1, minlength=c)
        self.n_tp += np.bincount(t[top1 == t], minlength=c)
        if not per_sample:
            return None
        rows = np.arange(first_row, first_row + len(targets), dtype=np.int64)
        return pl.DataFrame(
            {
                "row": rows if keep is None else rows[keep],
                "target": t,
                "rank": rank,
                "top1": top1,
                **{name: values[name] for name in self._sum_names},
            }
        )

    def finalize(self, *, percent: bool = False) -> pl.DataFrame:
        """``metric``, ``value`` (fractions, or percent for the rate metrics), ``n``, ``std``
        (over rows; none for the F1 of the confusion counts)."""
        totals = dict(zip(self._sum_names, self.sums.sums(), strict=True))
        stds = dict(zip(self._sum_names, self.sums.stds(), strict=True))
        n = int(self.n_true.sum())
        rows = []
        for name in self.metrics:
            if AGGREGATION.get(name) == "confusion":
                value = _f1(self.n_true, self.n_pred, self.n_tp, weighted=name == "f1_weighted")
                std = None
            else:
                value, std = (totals[name] / n, stds[name]) if n else (np.nan, None)
            if percent and name.split("@")[0] in PERCENT_METRICS:
                value *= 100.0
                std = None if std is None else std * 100.0
            rows.append((name, value, n, std))
        return summary_frame(rows)

    def _row_values(self, counts, ce: np.ndarray) -> dict[str, np.ndarray]:
        """Each metric per row, from the kernel's counts under its family's tie policy. A rank is
        at most C, so ``[r <= k]`` is ``[r <= min(k, C)]``."""
        out = {}
        by_ties: dict[str, list[str]] = {}
        for name in self._sum_names:
            family, _, _ = name.partition("@")
            if family == "cross_entropy":
                out[name] = ce
            else:
                by_ties.setdefault(self.convention.ties_of(family), []).append(name)
        for ties, names in by_ties.items():
            lo, hi = rank_bounds(*counts, ties)
            codes = np.array([_TOPK_CODES[n.partition("@")[0]] for n in names], dtype=np.int64)
            cutoffs = np.array(
                [int(n.partition("@")[2] or topk.NO_CUTOFF) for n in names], dtype=np.int64
            )
            values = topk.single_target_metrics(lo, hi, codes, cutoffs)
            for j, name in enumerate(names):
                out[name] = values[:, j]
        return out

    def _has_acc(self) -> bool:
        return any(name.startswith("acc@") for name in self.metrics)

    def _check(self, logits, targets, first_row, path, targets_at):
        logits = np.asarray(logits)
        targets = np.asarray(targets)
        if not np.issubdtype(logits.dtype, np.floating):
            raise InputError(f"logits must be float32 or float64, not {logits.dtype}", path=path)
        if logits.dtype not in (np.float32, np.float64):
            logits = logits.astype(np.float32)
        if targets.ndim != 1 or not np.issubdtype(targets.dtype, np.integer):
            raise InputError(
                f"targets must be a 1-D integer array, not {targets.dtype} {targets.shape}",
                path=targets_at[0],
                column=targets_at[1],
            )
        if len(targets) != len(logits):
            raise InputError(
                f"{len(logits)} logits rows but {len(targets)} targets",
                path=path,
                key=f"row {first_row}",
            )
        width = logits.shape[1]
        if self.n_classes is None:
            if width == 0:
                raise InputError("logits rows have no class", path=path)
            if self.convention.binary == "error" and width < 3 and self._has_acc():
                raise InputError(
                    f"{width} classes: scikit-learn's top_k_accuracy_score refuses a score matrix "
                    "of fewer than 3 columns (its binary case thresholds one score column at 0.5 "
                    "or 0 instead of ranking); leave out acc@k, or rank the classes with "
                    "--convention mobeval --ties index_desc",
                    path=path,
                )
            self.n_classes = width
            self.n_true, self.n_pred, self.n_tp = (np.zeros(width, dtype=np.int64) for _ in "abc")
        elif width != self.n_classes:
            raise InputError(
                f"row width {width} differs from the first rows' {self.n_classes}",
                path=path,
                key=f"row {first_row}",
            )
        out = (targets < 0) | (targets >= width)  # before the cast: a uint64 may not fit
        if self.ignore_target is not None:
            out &= targets != self.ignore_target
        if out.any():
            i = int(np.flatnonzero(out)[0])
            hint = ""
            if targets[i] < 0 and self.ignore_target is None:
                hint = "; a padding target (PyTorch's ignore_index) is left out by ignore_target"
            raise InputError(
                f"target {targets[i]} outside [0, {width}) (the logits have {width} classes)"
                + hint,
                path=targets_at[0],
                column=targets_at[1],
                key=f"row {first_row + i}",
            )
        targets = targets.astype(np.int64, copy=False)
        return np.ascontiguousarray(logits), targets


def score_logits(
    logits,
    targets,
    *,
    k: Sequence[int] = (1, 5, 10),
    metrics: str | Sequence[str] | None = None,
    ties: str | None = None,
    convention: str = "mobeval",
    percent: bool = False,
    ignore_target: int | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    per_sample: bool = False,
    logits_column: str = "logits",
    targets_column: str = TARGETS_COLUMN,
) -> LogitsScores:
    """Score a logits matrix read in row chunks.

    Args:
        logits: a 2-D float array (or a CPU tensor: see :mod:`mobeval.io.logits`), a ``.npy``
            file (memory-mapped) or a Parquet file whose
            ``logits_column`` is a (fixed-size) list of floats.
        targets: an integer array, a ``.npy`` file, a Parquet file (its ``targets_column``), or
            the name of a column of the logits' Parquet file.
        k: cutoffs of ``acc`` and ``ndcg`` (``acc@k`` uses ``min(k, C)``).
        metrics: names (``acc``, ``acc@3``, ``mrr``, ``ndcg@10``, ``f1_weighted``, ``f1_macro``,
            ``cross_entropy``); default all.
        ties: rank of a target tied with other classes (``metrics.logits.TIES``); overrides the
            convention's.
        convention: ``mobeval`` (optimistic ties) or ``sklearn`` (``metrics.logits.PRESETS``).
        percent: report the rate metrics (not cross-entropy) in percent, as papers do.
        ignore_target: a padding class whose rows are dropped (e.g. 0).
        chunk_rows: rows per chunk; results do not depend on it.
        per_sample: also return ``row``, ``target``, ``rank``, ``top1`` and each row's values.
    """
    acc = LogitsAccumulator(
        parse_logits_metrics(metrics, k),
        ties=ties,
        convention=convention,
        ignore_target=ignore_target,
    )
    parts = iter_logits(
        acc,
        logits,
        targets,
        chunk_rows=chunk_rows,
        per_sample=per_sample,
        logits_column=logits_column,
        targets_column=targets_column,
    )
    frames = [frame for _, frame in parts]
    samples = pl.concat(frames) if per_sample else None
    return LogitsScores(acc.finalize(percent=percent), samples)


def _f1(n_true: np.ndarray, n_pred: np.ndarray, n_tp: np.ndarray, *, weighted: bool) -> float:
    """sklearn's weighted / macro F1 from per-class counts (labels: true or predicted)."""
    labels = (n_true + n_pred) > 0
    f1 = 2.0 * n_tp[labels] / (n_true[labels] + n_pred[labels])
    if weighted:
        w = n_true[labels]
        return float(np.sum(f1 * w) / np.sum(w)) if w.sum() else 0.0
    return float(np.mean(f1)) if len(f1) else 0.0
