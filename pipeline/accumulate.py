"""Accumulators for a training loop: ``update`` with each batch, ``merge`` across processes,
``compute`` the :class:`~mobeval.engines.base.Evaluation` that ``evaluate_*`` gives on the
whole epoch, to the same bits.

>>> from mobeval.accumulate import LogitsAccumulator
>>> metric = LogitsAccumulator(k=[1, 5], metrics=["acc@1", "mrr"])
>>> for logits, targets in batches:             # NumPy arrays, CPU tensors (DLPack), frames
...     metric.update(logits, targets)
>>> metric.merge(other_process_metric)           # pickled and gathered: any order, same bits
>>> metric.compute().summary                     # == evaluate_logits(all_logits, all_targets)

The state is the family's fold, what the engines fold every chunk into and merge across
partitions (:class:`mobeval.engines.partition_logits.LogitsFold`): exact sums of the per-row
values (:class:`mobeval.kernels.exact_sum.ExactColumnSums`, integers in units of 2^-1074) and
integer counts (the per-class confusion counts of F1). A sum of integers is the same whatever
the order and grouping of its terms, so the result does not depend on the batch sizes, the
batch order or how many processes saw which batch; the state's size is the metrics' and the
classes', never the epoch's (it pickles small: ``torch.distributed.all_gather_object`` or any
gather carries it). No per-unit values are kept: ``compute()`` gives the summary alone, as
``evaluate_*(per_unit=False)`` does.

Compared with LibCity's evaluator (``collect(batch)`` keeps every batch, ``evaluate()`` scores
them at the end) and torchmetrics (``update`` / ``compute``, states reduced by ``dist_reduce_fx``
across processes), the merge here is exact: no mean of per-process means.
"""

from __future__ import annotations

from mobeval.api import logits_columns, logits_fold_options
from mobeval.engines.base import DEFAULT_CITY, Evaluation
from mobeval.errors import ConfigError, InputError
from mobeval.families import FAMILIES
from mobeval.io.writers import check_name
from mobeval.options import option_values


class LogitsAccumulator:
    """``evaluate_logits`` batch by batch: ``update(logits, targets)`` with a ``[n, C]`` float
    array and ``[n]`` integer targets (NumPy, or any object with ``__dlpack__`` or
    ``__array__``: a CPU tensor is read through DLPack without a copy), or ``update(frame)``
    with a table whose ``logits_column`` holds a list of floats per row and ``targets_column``
    the targets (a Polars DataFrame, an Arrow Table or RecordBatch). ``**options``: those of
    :func:`mobeval.api.evaluate_logits` (``k``, ``metrics``, ``convention``, ``ties``,
    ``ignore_target``, ``percent``...); ``city``, ``model``, ``run``: the result's names
    (default ``default`` and ``model``, as ``evaluate_logits`` names arrays)."""

    family = "logits"

    def __init__(
        self,
        *,
        city: str | None = None,
        model: str | None = None,
        run: str | None = None,
        **options,
    ) -> None:
        from mobeval.engines.partition_logits import LogitsFold  # Numba: after the checks

        self.values = option_values(self.family, options)
        self.names = (
            check_name(city or DEFAULT_CITY, "city"),
            check_name(model or "model", "model"),
            None if run is None else check_name(run, "run"),
        )
        self.columns = logits_columns(self.values)
        self.fold = LogitsFold(**logits_fold_options(self.values))
        self.rows = 0

    def update(self, logits, targets=None) -> None:
        """Fold one batch (its rows numbered after the rows given so far, in messages)."""
        from mobeval.io.logits import as_array, frame_rows

        if targets is None:
            x, y = frame_rows(logits, self.rows, **self.columns)
        else:
            x, y = as_array(logits, "logits"), as_array(targets, "targets")
        self.fold.add(x, y, first_row=self.rows)
        self.rows += len(x)

    def merge(self, other: LogitsAccumulator) -> LogitsAccumulator:
        """Fold ``other``'s state into this one (exactly: the order of merges does not change a
        bit); ``other`` must have the same options. Returns ``self``."""
        if not isinstance(other, type(self)) or other.values != self.values:
            raise ConfigError(
                f"cannot merge {type(other).__name__} into {type(self).__name__}: an accumulator "
                "merges another of its family made with the same options"
            )
        if None not in (self.fold.n_classes, other.fold.n_classes) and (
            self.fold.n_classes != other.fold.n_classes
        ):
            raise InputError(
                f"cannot merge logits of {other.fold.n_classes} classes into logits of "
                f"{self.fold.n_classes}"
            )
        self.fold.merge(other.fold)
        self.rows += other.rows
        return self

    def compute(self) -> Evaluation:
        """The result of every batch folded so far: the summary ``evaluate_logits`` gives on
        them all (the state is kept: more batches may follow)."""
        from mobeval.tasks.summary import require_scored

        if self.fold.n_classes is None:
            raise InputError("no logits rows: update() was not given a batch")
        summary = self.fold.finalize(percent=self.values["percent"])
        definition = FAMILIES[self.family]
        require_scored(
            summary,
            counts=definition.counts,
            units=definition.units,
            truth=None,
            predictions=None,
            column="target",
        )
        city, model, run = self.names
        return Evaluation(city=city, model=model, summary=summary, run=run)


__all__ = ["LogitsAccumulator"]
