"""Paper-style scores of a logits matrix ``[N, C]`` against integer targets ``[N]``, in row chunks.

Metrics (``r_i`` the 1-based rank of target ``y_i`` under the tie policy, ``N`` scored rows):

* ``acc@k = (1/N) sum_i [r_i <= min(k, C)]`` (``sklearn.metrics.top_k_accuracy_score``).
* ``mrr = (1/N) sum_i 1 / r_i`` over the full ranking (no cutoff).
* ``ndcg@k = (1/N) sum_i [r_i <= k] / log2(r_i + 1)`` (one relevant class, IDCG = 1;
  Jarvelin & Kekalainen 2002).
* ``f1_weighted`` / ``f1_macro``: F1 of the top-1 prediction per class, ``F1_c = 2 tp_c /
  (n_true_c + n_pred_c)``, over the labels present in the targets or the predictions, averaged with
  weights ``n_true_c`` or equally (``sklearn.metrics.f1_score(average="weighted" | "macro")``).
* ``cross_entropy = (1/N) sum_i -log softmax(x_i)[y_i]``, natural log, stable log-sum-exp in float64
  (``torch.nn.functional.cross_entropy``, reduction "mean"). A ``-inf`` target logit (or logits
  so far apart that the loss overflows) gives that row ``+inf``, and the mean is ``+inf``; a row
  with a NaN or ``+inf`` logit, or (with cross_entropy) only ``-inf`` logits, is an InputError.

Sums are exact (:class:`~mobeval.kernels.exact_sum.ExactColumnSums`) and the F1 confusion counts
are integers, so any chunking gives the same bits. Rows whose target equals ``ignore_target``
(padding) are left out of every metric. Reference: the seed next_location_metrics_guide.md.

Ties: the target's rank among the classes with its score is set by a tie policy (``TIES``):
``optimistic`` (first), ``pessimistic`` (last), ``index`` (lower class index first, a stable
descending sort), ``index_desc`` (higher class index first: scikit-learn's ``top_k_accuracy_score``,
``np.argsort(y_score, kind="mergesort")[:, ::-1]``) or ``average``: every order of the tied classes
equally likely, so each metric is its expectation over the target's equally likely positions in
its tie group (``acc@k`` = the fraction of those positions ``<= k``, ``mrr`` the mean of ``1/r``,
``ndcg@k`` the mean of its gain), scored by the kernel the next-location task uses
(:func:`mobeval.kernels.topk.single_target_metrics`). A convention (``PRESETS``) sets the policy of
each metric family.
"""

from __future__ import annotations

import dataclasses
import os
import re
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from mobeval.errors import ConfigError, InputError
from mobeval.kernels import topk
from mobeval.kernels.exact_sum import ExactColumnSums
from mobeval.kernels.logits import logits_rows

TIES = ("optimistic", "pessimistic", "average", "index", "index_desc")
#: How a metric's value is made over the rows, per metric (every other: ``"mean"`` of the
#: per-row values, exact sums): ``"confusion"``: from the per-class confusion counts.
AGGREGATION = {"f1_weighted": "confusion", "f1_macro": "confusion"}
PERCENT_METRICS = ("acc", "mrr", "ndcg", "f1_weighted", "f1_macro")
_ALIASES = {
    "acc": "acc",
    "accuracy": "acc",
    "mrr": "mrr",
    "ndcg": "ndcg",
    "f1": "f1_weighted",
    "f1_weighted": "f1_weighted",
    "f1_macro": "f1_macro",
    "ce": "cross_entropy",
    "loss": "cross_entropy",
    "cross_entropy": "cross_entropy",
}
_NAME = re.compile(r"^\s*([a-z_0-9]+?)\s*(?:@\s*(\d{1,18}|k))?\s*$")
_TOPK_CODES = {"acc": topk.ACC, "mrr": topk.MRR, "ndcg": topk.NDCG}
DEFAULT_CHUNK_ROWS = 16384
TARGETS_COLUMN = "target"

Source = np.ndarray | str | os.PathLike


@dataclass
class LogitsScores:
    """``summary``: ``metric``, ``value``, ``n`` (rows scored); ``per_sample`` when asked for."""

    summary: pl.DataFrame
    per_sample: pl.DataFrame | None = None


@dataclass(frozen=True)
class LogitsConvention:
    """Options on which classifier evaluators differ (conventions are data).

    Attributes:
        ties: tie policy (``TIES``) of ``acc@k`` and of the per-sample ``rank``.
        mrr_ties / ndcg_ties: the policy of ``mrr`` / ``ndcg@k``; None: ``ties``.
        binary: ``"rank"`` scores fewer than three classes like any other matrix; ``"error"``
            refuses ``acc@k`` there, as ``top_k_accuracy_score`` refuses a two-column score
            matrix (its binary case thresholds one score column at 0.5 or 0 instead of ranking).
    """

    ties: str = "optimistic"
    mrr_ties: str | None = None
    ndcg_ties: str | None = None
    binary: str = "rank"

    def __post_init__(self) -> None:
        for option in ("ties", "mrr_ties", "ndcg_ties"):
            value = getattr(self, option)
            if value is not None and value not in TIES:
                raise ConfigError(f"{option} must be one of {sorted(TIES)}, not {value!r}")
        if self.binary not in ("rank", "error"):
            raise ConfigError(f"binary must be 'rank' or 'error', not {self.binary!r}")

    def ties_of(self, family: str) -> str:
        """The tie policy of a metric family (``acc``, ``mrr``, ``ndcg``)."""
        own = {"mrr": self.mrr_ties, "ndcg": self.ndcg_ties}.get(family)
        return own or self.ties


#: ``sklearn``: ``top_k_accuracy_score`` (higher class index first among ties, two-column matrices
#: refused), ``label_ranking_average_precision_score`` on one-hot targets for ``mrr`` (its rank is
#: the number of scores >= the target's: pessimistic), ``ndcg_score`` on one-hot targets for
#: ``ndcg@k`` (``ignore_ties=False`` averages the gain over each tie group: the expectation).
PRESETS = {
    "mobeval": LogitsConvention(),
    "sklearn": LogitsConvention(
        ties="index_desc", mrr_ties="pessimistic", ndcg_ties="average", binary="error"
    ),
}


def resolve_logits_convention(
    convention: str | LogitsConvention = "mobeval", ties: str | None = None
) -> LogitsConvention:
    """The preset (or a :class:`LogitsConvention`); ``ties`` overrides every family's policy."""
    if isinstance(convention, LogitsConvention):
        base = convention
    elif convention in PRESETS:
        base = PRESETS[convention]
    else:
        raise ConfigError(
            f"unknown logits convention {convention!r}; choose one of {sorted(PRESETS)}"
        )
    if ties is None:
        return base
    if ties not in TIES:
        raise ConfigError(f"ties must be one of {sorted(TIES)}, not {ties!r}")
    return dataclasses.replace(base, ties=ties, mrr_ties=None, ndcg_ties=None)


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


def parse_logits_metrics(metrics: str | Sequence[str] | None, k: Sequence[int]) -> list[str]:
    """Output names in order: ``acc`` and ``ndcg`` (or ``acc@k``, ``ndcg@k``) expand over ``k``;
    ``acc@3`` is one cutoff."""
    ks = [_check_k(v) for v in k]
    if metrics is None:
        names = ["acc", "mrr", "ndcg", "f1_weighted", "f1_macro", "cross_entropy"]
    else:
        names = metrics.split(",") if isinstance(metrics, str) else list(metrics)
    out: dict[str, None] = {}
    for raw in names:
        m = _NAME.match(str(raw).lower())
        family = _ALIASES.get(m.group(1)) if m else None
        if family is None:
            raise ConfigError(f"unknown logits metric {raw!r}; known: {sorted(_ALIASES)}")
        if family in ("acc", "ndcg"):
            cut = m.group(2)
            for kk in [_check_k(int(cut))] if cut and cut != "k" else ks:
                out[f"{family}@{kk}"] = None
        elif m.group(2):
            raise ConfigError(f"{family} takes no cutoff: {raw!r}")
        else:
            out[family] = None
    if not out:
        raise ConfigError("no metric requested")
    return list(out)


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
        """``metric``, ``value`` (fractions, or percent for the rate metrics), ``n``."""
        totals = dict(zip(self._sum_names, self.sums.sums(), strict=True))
        n = int(self.n_true.sum())
        rows = []
        for name in self.metrics:
            if AGGREGATION.get(name) == "confusion":
                value = _f1(self.n_true, self.n_pred, self.n_tp, weighted=name == "f1_weighted")
            else:
                value = totals[name] / n if n else np.nan
            if percent and name.split("@")[0] in PERCENT_METRICS:
                value *= 100.0
            rows.append((name, float(value), n))
        return pl.DataFrame(
            rows, schema={"metric": pl.String, "value": pl.Float64, "n": pl.Int64}, orient="row"
        )

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
        if logits.ndim != 2:
            raise InputError(f"logits must be a 2-D matrix, got shape {logits.shape}", path=path)
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
            raise InputError(
                f"target {targets[i]} outside [0, {width}) (the logits have {width} classes)",
                path=targets_at[0],
                column=targets_at[1],
                key=f"row {first_row + i}",
            )
        targets = targets.astype(np.int64, copy=False)
        return np.ascontiguousarray(logits), targets


def score_logits(
    logits: Source,
    targets: Source,
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
        logits: a 2-D float array, a ``.npy`` file (memory-mapped) or a Parquet file whose
            ``logits_column`` is a (fixed-size) list of floats.
        targets: an integer array, a ``.npy`` file, a Parquet file (its ``targets_column``), or
            the name of a column of the logits' Parquet file.
        k: cutoffs of ``acc`` and ``ndcg`` (``acc@k`` uses ``min(k, C)``).
        metrics: names (``acc``, ``acc@3``, ``mrr``, ``ndcg@10``, ``f1_weighted``, ``f1_macro``,
            ``cross_entropy``); default all.
        ties: rank of a target tied with other classes (``TIES``); overrides the convention's.
        convention: ``mobeval`` (optimistic ties) or ``sklearn`` (``PRESETS``).
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


def iter_logits(
    accumulator: LogitsAccumulator,
    logits: Source,
    targets: Source,
    *,
    chunk_rows: int,
    per_sample: bool,
    logits_column: str = "logits",
    targets_column: str = TARGETS_COLUMN,
) -> Iterator[tuple[int, pl.DataFrame | None]]:
    """Feed every row chunk to ``accumulator``; yield (its rows, its per-sample frame or None).

    Inputs as in :func:`score_logits`; an input without rows is an InputError.
    """
    if chunk_rows < 1:
        raise ConfigError(f"chunk_rows must be >= 1, not {chunk_rows}")
    path = _name(logits)
    if is_targets_column(targets):
        targets_at = (path, targets)
    else:
        targets_at = (_name(targets), targets_column if _is_parquet(targets) else None)
    for first, x, y in _chunks(logits, targets, chunk_rows, logits_column, targets_column):
        frame = accumulator.add(
            x, y, first_row=first, path=path, targets_at=targets_at, per_sample=per_sample
        )
        yield len(x), frame
    if accumulator.n_classes is None:
        raise InputError("no logits rows", path=path)


def rows_per_chunk(
    logits: Source,
    targets: Source,
    budget: int,
    *,
    logits_column: str = "logits",
    targets_column: str = TARGETS_COLUMN,
) -> int:
    """Logits rows in ``budget`` values (rows x classes; at least one row). The classes are the
    first row's; a first chunk that cannot be read raises here, as the scoring would."""
    if budget < 1:
        raise ConfigError(f"chunk_rows must be >= 1, not {budget}")
    first = next(_chunks(logits, targets, 1, logits_column, targets_column), None)
    width = first[1].shape[-1] if first is not None and first[1].ndim == 2 else 1
    return max(1, budget // max(1, width))


def _f1(n_true: np.ndarray, n_pred: np.ndarray, n_tp: np.ndarray, *, weighted: bool) -> float:
    """sklearn's weighted / macro F1 from per-class counts (labels: true or predicted)."""
    labels = (n_true + n_pred) > 0
    f1 = 2.0 * n_tp[labels] / (n_true[labels] + n_pred[labels])
    if weighted:
        w = n_true[labels]
        return float(np.sum(f1 * w) / np.sum(w)) if w.sum() else 0.0
    return float(np.mean(f1)) if len(f1) else 0.0


def _check_k(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ConfigError(f"k must be an integer >= 1, not {k!r}")
    if k > 2**31 - 1:  # beyond every row's classes; the cutoffs go to int64 arrays
        raise ConfigError(f"k must be at most {2**31 - 1}, not {k}")
    return int(k)


def _is_parquet(source: Source) -> bool:
    return not isinstance(source, np.ndarray) and str(source).lower().endswith(".parquet")


def _array(source: Source, what: str, column: str = TARGETS_COLUMN) -> np.ndarray:
    """An array as is, a ``.npy`` file memory-mapped (read lazily by the chunk slices), or the
    ``column`` of a Parquet file (read whole: one integer per row)."""
    if isinstance(source, np.ndarray):
        return source
    path = Path(source)
    if path.suffix.lower() not in (".npy", ".parquet"):
        raise InputError(f"{what} must be a NumPy array, a .npy or a .parquet file", path=path)
    if not path.is_file():
        raise InputError("file not found", path=path)
    if path.suffix.lower() == ".npy":
        return _load_npy(path, what)
    try:
        names = pq.read_schema(path).names
        if column not in names:
            raise InputError(f"missing column; found {names}", path=path, column=column)
        values = pq.read_table(path, columns=[column]).column(0)
    except (pa.ArrowException, OSError, ValueError) as error:
        raise InputError(f"not a readable Parquet file ({error})", path=path) from None
    if values.null_count:
        row = int(np.flatnonzero(values.is_null().to_numpy())[0])
        raise InputError(f"null {what[:-1]}", path=path, column=column, key=f"row {row}")
    return values.to_numpy()


def _load_npy(path: Path, what: str) -> np.ndarray:
    """A ``.npy`` file memory-mapped; a truncated, pickled (object), text or zip file is an
    InputError."""
    try:
        with warnings.catch_warnings():  # e.g. "created on Python 2": read it, say nothing
            warnings.simplefilter("ignore")
            array = np.load(path, mmap_mode="r")
    except Exception as error:  # a damaged header can raise anything its parser raises
        reason = str(error).split(". ")[0] or type(error).__name__
        raise InputError(f"not a readable .npy array of {what} ({reason})", path=path) from None
    if not isinstance(array, np.ndarray):  # an .npz archive named .npy
        raise InputError(f"not a .npy array of {what} (an .npz archive?)", path=path)
    return array


def _parquet_batches(pf: pq.ParquetFile, path: Path, **options) -> Iterator:
    """``pf.iter_batches(**options)``; a file that cannot be decoded is an InputError."""
    batches = pf.iter_batches(**options)
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except (pa.ArrowException, OSError, ValueError) as error:
            raise InputError(f"not a readable Parquet file ({error})", path=path) from None
        yield batch


def _chunks(
    logits: Source, targets: Source, chunk_rows: int, logits_column: str, targets_column: str
) -> Iterator:
    """``(first_row, logits_chunk, targets_chunk)`` over the whole input."""
    if _is_parquet(logits):
        yield from _parquet_chunks(Path(logits), targets, chunk_rows, logits_column, targets_column)
        return
    x = _array(logits, "logits")
    y = _array(targets, "targets", targets_column)
    if x.ndim == 2 and len(y) != len(x):
        raise InputError(f"{len(x)} logits rows but {len(y)} targets", path=_name(targets))
    for first in range(0, len(x), chunk_rows):
        yield first, np.asarray(x[first : first + chunk_rows]), y[first : first + chunk_rows]


def _parquet_chunks(
    path: Path, targets: Source, chunk_rows: int, column: str, targets_column: str
) -> Iterator:
    if not path.is_file():
        raise InputError("file not found", path=path)
    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowException, OSError, ValueError) as error:
        raise InputError(f"not a readable Parquet file ({error})", path=path) from None
    names = pf.schema_arrow.names
    target_column = targets if is_targets_column(targets) else None
    wanted = [column] + ([target_column] if target_column else [])
    for c in wanted:
        if c not in names:
            raise InputError(f"missing column; found {names}", path=path, column=c)
    y_all = None if target_column else _array(targets, "targets", targets_column)
    first = 0
    width = None
    for batch in _parquet_batches(pf, path, batch_size=chunk_rows, columns=wanted):
        x = _list_matrix(batch.column(0), path, column, first, width)
        width = x.shape[1]
        y = (
            batch.column(1).to_numpy(zero_copy_only=False)
            if target_column
            else np.asarray(y_all[first : first + len(x)])
        )
        if target_column and batch.column(1).null_count:
            nulls = batch.column(1).is_null().to_numpy(zero_copy_only=False)
            row = first + int(np.flatnonzero(nulls)[0])
            raise InputError("null target", path=path, column=target_column, key=f"row {row}")
        yield first, x, y
        first += len(x)
    if y_all is not None and len(y_all) != first:
        raise InputError(f"{first} logits rows but {len(y_all)} targets", path=_name(targets))


def _list_matrix(
    arr: pa.Array, path: Path, column: str, first: int, width: int | None
) -> np.ndarray:
    """A (fixed-size) list-of-floats column as a 2-D array; every row must have the same width:
    ``width`` (the earlier chunks'), or this chunk's first row's."""
    if arr.null_count:
        row = first + int(np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))[0])
        raise InputError("null logits row", path=path, column=column, key=f"row {row}")
    if pa.types.is_fixed_size_list(arr.type):
        width = arr.type.list_size  # one file: one width
    elif pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type):
        lengths = np.diff(arr.offsets.to_numpy())
        if width is None:
            width = int(lengths[0]) if len(lengths) else 0
        if (lengths != width).any():
            row = first + int(np.flatnonzero(lengths != width)[0])
            raise InputError(
                f"row width differs from the first row's {width}",
                path=path,
                column=column,
                key=f"row {row}",
            )
    else:
        raise InputError(f"must be a list of floats, not {arr.type}", path=path, column=column)
    values = arr.flatten()
    if not pa.types.is_floating(values.type):
        raise InputError(f"logits must be floats, not {values.type}", path=path, column=column)
    if values.null_count:
        raise InputError("null value inside a logits row", path=path, column=column)
    return values.to_numpy(zero_copy_only=False).reshape(len(arr), width)


def is_targets_column(targets: Source) -> bool:
    """Targets named as a column of the logits' Parquet file (not a path, not an array)."""
    return (
        isinstance(targets, str)
        and not targets.lower().endswith((".npy", ".parquet"))
        and os.sep not in targets
    )


def _name(source: Source) -> str | None:
    return None if isinstance(source, np.ndarray) else str(source)
