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

import dataclasses

from mobeval import api
from mobeval.api import logits_columns, logits_fold_options
from mobeval.engines.base import DEFAULT_CITY, Evaluation, LocalEngine, result_sections
from mobeval.errors import ConfigError, InputError
from mobeval.families import FAMILIES
from mobeval.io.inputs import fingerprint
from mobeval.io.writers import check_name
from mobeval.manifest import config_hash
from mobeval.options import option_values


class _Accumulator:
    """What every family's accumulator shares: the options checked as ``evaluate_<family>``
    checks them, the result's names, ``merge`` of another made with the same options, and
    ``compute``, which refuses a result that scored nothing as ``evaluate_<family>`` does.

    Pickled (a gather), it carries its fold, its names and its options' identity (a hash of
    the options and of the file options' fingerprints), not the options themselves: a frame
    given as a catalogue would travel with every state. Its ``config`` (the options as the
    manifest records them, a frame by its type's name) travels: the result's
    :attr:`~mobeval.engines.base.Evaluation.config`, which the trackers log."""

    family = ""

    def __init__(
        self,
        *,
        city: str | None = None,
        model: str | None = None,
        run: str | None = None,
        **options,
    ) -> None:
        self.options = options
        self.config = api.result_config(self.family, options)
        self.values = option_values(self.family, options)
        files = FAMILIES[self.family].file_options
        self.identity = config_hash(
            {name: value for name, value in self.values.items() if name not in files},
            {
                name: fingerprint(self.values[name])
                for name in files
                if self.values[name] is not None
            },
        )
        self.names = (
            check_name(city or DEFAULT_CITY, "city"),
            check_name(model or "model", "model"),
            None if run is None else check_name(run, "run"),
        )

    def __getstate__(self) -> dict:
        return vars(self) | {"options": None, "values": None}

    def merge(self, other):
        """Fold ``other``'s state into this one (exact: the order of merges does not change a
        bit); ``other`` must be of this family, made with the same options. Returns ``self``."""
        if not isinstance(other, type(self)) or other.identity != self.identity:
            raise ConfigError(
                f"cannot merge {type(other).__name__} into {type(self).__name__}: an accumulator "
                "merges another of its family made with the same options"
            )
        self._merge(other)
        return self

    def compute(self) -> Evaluation:
        """The result of every batch folded so far: the summary ``evaluate_<family>`` gives on
        them all, with the sections of the whole result where the family has any (a
        trajectory's distributions); the state is kept: more batches may follow."""
        from mobeval.tasks.summary import require_scored

        summary, tables = self._summary()
        definition = FAMILIES[self.family]
        require_scored(
            summary,
            counts=definition.counts,
            units=definition.units,
            truth=None,
            predictions=None,
            column=None,
        )
        city, model, run = self.names
        evaluation = Evaluation(city=city, model=model, summary=summary, tables=tables, run=run)
        evaluation.config = api.result_config(self.family, self.config, evaluation)
        return evaluation


class LogitsAccumulator(_Accumulator):
    """``evaluate_logits`` batch by batch: ``update(logits, targets)`` with a ``[n, C]`` float
    array and ``[n]`` integer targets (NumPy, or any object with ``__dlpack__`` or
    ``__array__``: a CPU tensor is read through DLPack without a copy), or ``update(frame)``
    with a table whose ``logits_column`` holds a list of floats per row and ``targets_column``
    the targets (a Polars DataFrame, an Arrow Table or RecordBatch). ``**options``: those of
    :func:`mobeval.api.evaluate_logits` (``k``, ``metrics``, ``convention``, ``ties``,
    ``ignore_target``, ``percent``...); ``city``, ``model``, ``run``: the result's names
    (default ``default`` and ``model``, as ``evaluate_logits`` names arrays)."""

    family = "logits"

    def __init__(self, **names_and_options) -> None:
        super().__init__(**names_and_options)
        from mobeval.engines.partition_logits import LogitsFold  # Numba: after the checks

        self.columns = logits_columns(self.values)
        self.percent = self.values["percent"]
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

    def _merge(self, other: LogitsAccumulator) -> None:
        if None not in (self.fold.n_classes, other.fold.n_classes) and (
            self.fold.n_classes != other.fold.n_classes
        ):
            raise InputError(
                f"cannot merge logits of {other.fold.n_classes} classes into logits of "
                f"{self.fold.n_classes}"
            )
        self.fold.merge(other.fold)
        self.rows += other.rows

    def _summary(self):
        if self.fold.n_classes is None:
            raise InputError("no logits rows: update() was not given a batch")
        return self.fold.finalize(percent=self.percent), {}


class _Folding(LocalEngine):
    """The local engine, keeping the scorer of the batch it scored: the fold to merge."""

    scorer = None

    def run(self, plan, truth, predictions, where) -> Evaluation:
        kept = dataclasses.replace(plan, job=_KeptJob(plan.job, self))
        return super().run(kept, truth, predictions, where)


@dataclasses.dataclass(frozen=True)
class _KeptJob:
    """A plan's job whose every new scorer is kept by ``engine`` (a restart over hash buckets
    asks for another: the last one is the batch's)."""

    job: object
    engine: _Folding

    def scorer(self):
        self.engine.scorer = self.job.scorer()
        return self.engine.scorer


class _KeyedAccumulator(_Accumulator):
    """A keyed family's ``evaluate_<family>`` batch by batch: ``update(truth, predictions)``
    scores one batch through ``evaluate_<family>`` itself (every input it takes: frames, Arrow
    tables, paths; every check and option), its fold merged into the state (the scorer of the
    first batch). A unit (a sample, a user, a uid) must lie whole in one batch, its truth
    beside its predictions: a unit met in two batches counts twice."""

    scorer = None

    def update(self, truth, predictions) -> None:
        """Fold one batch of whole units."""
        if self.options is None:
            raise ConfigError(
                f"this {type(self).__name__} was read back from a pickle, without its options: "
                "merge it into one made in this process, or compute it"
            )
        engine = _Folding()
        evaluate = getattr(api, f"evaluate_{self.family}")
        evaluate(truth, predictions, engine=engine, per_unit=False, **self.options)
        self._fold(engine.scorer)

    def _merge(self, other: _KeyedAccumulator) -> None:
        self._fold(other.scorer)

    def _fold(self, scorer) -> None:
        """Merge ``scorer``'s fold into the state (the first scorer is the state's)."""
        if self.scorer is None:
            self.scorer = scorer
        elif scorer is not None:
            fold = self.scorer.accumulator  # a recs scorer's is made when read: set it back
            fold.merge(scorer.accumulator)
            self.scorer.accumulator = fold

    def _summary(self):
        if self.scorer is None:
            raise InputError("no rows: update() was not given a batch")
        return self.scorer.summary(), result_sections(self.scorer)


class NextlocAccumulator(_KeyedAccumulator):
    """``evaluate_nextloc`` batch by batch: ``update(truth, predictions)`` with the samples of
    a batch (Polars or pandas DataFrames, Arrow tables, paths), each sample whole in one
    batch; options as :func:`mobeval.api.evaluate_nextloc`'s."""

    family = "nextloc"


class RecsAccumulator(_KeyedAccumulator):
    """``evaluate_recs`` batch by batch: ``update(ratings, recs)`` with the users of a batch,
    each user's ratings and list whole in one batch; options as
    :func:`mobeval.api.evaluate_recs`'s (a catalogue or training frame is read again for each
    batch)."""

    family = "recs"


class TrajectoryAccumulator(_KeyedAccumulator):
    """``evaluate_trajectory`` batch by batch: ``update(reference, generated)`` with the uids
    of a batch, each uid's days whole in one batch; options as
    :func:`mobeval.api.evaluate_trajectory`'s."""

    family = "trajectory"


__all__ = ["LogitsAccumulator", "NextlocAccumulator", "RecsAccumulator", "TrajectoryAccumulator"]
