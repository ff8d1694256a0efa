"""The Python API (what a notebook uses); the CLI is a thin shell over it.

>>> from mobeval.api import evaluate_nextloc
>>> result = evaluate_nextloc("truth.parquet", "deepmove.parquet", k=[1, 5], convention="libcity")
>>> result.summary                      # Polars DataFrame: metric, value, n, std
>>> result.per_unit                     # one row per sample (when not written to ``out``)
>>> evaluate_nextloc("truth.parquet", "deepmove.parquet", per_unit=False).summary  # the summary
...                                     # alone: memory bounded by the chunk, whatever the input

Every ``evaluate_*`` returns the summary with ``std`` beside each mean over units: the
population standard deviation of the per-unit values, ``sqrt(sum_u (v_u - value)^2 / n)``
(ddof 0), what ranx's ``evaluate(..., return_std=True)`` returns beside its mean; null for
counts and values that are not such a mean (:mod:`mobeval.tasks.summary`).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from pathlib import Path

import polars as pl

from mobeval.engines.base import (
    Engine,
    Evaluation,
    LocalEngine,
    Plan,
    default_model_name,
)
from mobeval.engines.cluster import SparkSettings
from mobeval.errors import ConfigError, InputError, OptionError
from mobeval.families import FAMILIES, with_options
from mobeval.io.columns import check_used, missing_column, their_names
from mobeval.io.partitions import checked_partition
from mobeval.io.remote import url_timeout
from mobeval.io.writers import check_inputs_apart, check_name
from mobeval.manifest import Manifest
from mobeval.options import DEFAULT_CHUNK_ROWS, checked_chunk_rows, option_values

ENGINES = ("local", "spark")


def engine_for(
    engine: str | Engine | None = None,
    spark=None,
    partitions: int | None = None,
    progress: bool | None = None,
    settings: SparkSettings | None = None,
):
    """The engine an ``evaluate_*`` call asked for: ``"local"`` (the default), ``"spark"`` (the
    active SparkSession, or a new one: :func:`mobeval.engines.spark.spark_session`, quiet unless
    ``progress`` or a terminal asks otherwise, on ``settings``' master with its Spark settings),
    or Spark when a SparkSession is given as ``spark``; an engine object is used as it is.
    ``partitions``: Spark's hash partitions (Spark only)."""
    if engine is not None and not isinstance(engine, str):
        if spark is not None or partitions is not None or settings:
            raise ConfigError("spark= and partitions= belong to the engine; give one or the other")
        return engine
    if engine not in (None, *ENGINES):
        raise ConfigError(f"engine must be one of {list(ENGINES)}, got {engine!r}")
    if engine == "spark" or (engine is None and spark is not None):
        from mobeval.engines.spark import SparkEngine

        return SparkEngine(spark, partitions=partitions, progress=progress, settings=settings)
    if spark is not None or partitions is not None:
        given = "spark" if spark is not None else "partitions"
        raise ConfigError(f"{given}= is for the Spark engine; pass engine='spark' (or leave it)")
    if settings:
        raise ConfigError(f"{settings.shown()}: Spark settings are for --engine spark only")
    return LocalEngine()


def _sources(runner: Engine, family: str, truth, predictions, values: dict, names=None):
    """The two inputs opened by the engine, each with its columns read under our names as the
    ``columns`` option maps them (:mod:`mobeval.io.columns`): the one place every input of a
    keyed family passes through. ``names``: column names of header-less CSV files."""
    columns = FAMILIES[family].column_map(values)
    truth_source = runner.source(truth, names=names, columns=columns, role="truth")
    pred_source = runner.source(predictions, names=names, columns=columns, role="pred")
    check_used(columns, truth_source, pred_source)
    return truth_source, pred_source


def _reading(runner: Engine, truth, predictions, columns, key, where, order_first=True):
    """The two sources as the engine reads them: the local engine's with their first batches
    decoding on a thread from now on, while the run loads its kernels
    (:meth:`mobeval.engines.base.LocalEngine.reading`); another engine's as they are."""
    if isinstance(runner, LocalEngine):
        return runner.reading(truth, predictions, columns, key, where, order_first)
    return nullcontext((truth, predictions))


def _require_columns(source, columns, role: str, other=(), key_in=None) -> dict[str, pl.DataType]:
    """The source's schema, after checking that it has every one of ``columns`` (else what to do
    next: :func:`mobeval.io.columns.missing_column`; ``other``: the other input's own columns, to
    tell two inputs given in each other's place; ``key_in``: the other input's columns, to name
    a key, the first of ``columns``, that both hold under another name)."""
    schema = source.schema()
    missing = [c for c in columns if c not in schema]
    if missing:
        key_in = key_in if missing[0] == columns[0] else None
        raise missing_column(
            schema, missing, source.label, role, columns, other=other, key_in=key_in
        )
    return schema


def _require_rows(*sources: tuple[object, str]) -> None:
    """Each (source, what it is) holds a row, checked before any schema check: an empty truth, or
    a header-only CSV (whose columns have no type), is named as such."""
    for source, role in sources:
        if not source.has_rows():
            raise InputError(
                f"{role} empty: the file has no rows, nothing to evaluate", path=source.label
            )


def _key_type(left: pl.DataType, right: pl.DataType | None = None) -> pl.DataType:
    """A unit key column's type in the per-unit tables: integers of any width (on both sides) as
    Int64, as the engines hash them, else the common type (a String where the sides differ)."""
    right = left if right is None else right
    if left.is_integer() and right.is_integer():
        return pl.Int64
    return left if left == right else pl.String


def _arguments(
    *,
    out: str | Path | None = None,
    city: str | None = None,
    model: str | None = None,
    run: str | None = None,
    partition: dict[str, str] | str | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    progress: bool | None = None,
    engine: str | Engine | None = None,
    spark=None,
    partitions: int | None = None,
    per_unit: bool = True,
    url_timeout: float | None = None,
    **options,
) -> None:
    """The keyword arguments every ``evaluate_<family>`` takes besides its two inputs.

    ``out``: where the sections are written (staged, then committed: :mod:`mobeval.io.writers`);
    without it they come back in memory (``Evaluation.tables``). ``city``, ``model``: the
    result's names (default: the name of the folder the truth lies in, ``default`` for a Python
    object, and the predictions' file name). ``run``: which run of the model this is (a seed, a
    fold; a plain name): the result is ``city=<c>/model=<m>/run=<r>``, and compare and the report
    take a model's runs together (mean and sd over runs; docs/compare-and-report.md).
    ``partition``: the partition the result lies under in every section, results over time
    (``{"date": "2026-11-27"}``: ``date=2026-11-27/city=<c>/model=<m>``;
    :mod:`mobeval.io.partitions`), so that Spark, DuckDB and Polars read every day as one table.
    ``chunk_rows``: rows
    scored at once (the memory budget). ``progress``: the progress line (default: when stderr is
    a terminal). ``engine``: ``"local"`` (default) or ``"spark"``; a SparkSession as ``spark``
    means Spark (paths every executor can read, ``out`` any path Spark can write, the same
    numbers: docs/spark.md); ``partitions``: Spark's partitions (default: the default
    parallelism, or one per 64 MiB of input if more). ``per_unit=False``: the summary alone, each
    chunk's per-unit values let go as soon as they are folded into it (neither written nor kept:
    memory is bounded by ``chunk_rows`` however large the input; without ``out``).
    ``url_timeout``: the seconds an input at a URL may keep the run waiting, to connect and for
    each next piece of data, before it fails naming the URL (default: 30, or an enclosing
    :func:`mobeval.io.remote.url_timeout` block's; the local engine's fsspec reads).
    ``**options``: the family's options (:mod:`mobeval.families`)."""


_WHERE = ("out", "city", "model", "run", "chunk_rows", "progress", "per_unit")


def _checked_per_unit(per_unit: object, out) -> bool:
    """``per_unit`` if it is a bool that this call can honour, else a ConfigError: without
    per-unit values nothing goes to ``out`` (a summary there without its per-unit sections would
    sit beside an earlier result's)."""
    if not isinstance(per_unit, bool):
        raise ConfigError(f"per_unit must be True or False, got {per_unit!r}")
    if not per_unit and out is not None:
        raise ConfigError(
            "per_unit=False is for runs without out= (an OUT holds every section of a result)"
        )
    return per_unit


def _evaluation(family: str, build: Callable) -> Callable[..., Evaluation]:
    """The public ``evaluate_<family>``: its two inputs (named as ``build``'s second and third
    parameters), then :func:`_arguments`'s keywords; the options checked and filled
    (:func:`mobeval.options.option_values`) and the engine chosen (:func:`engine_for`) before
    ``build(engine, input_1, input_2, values, where)`` reads anything. Its signature (what
    ``help()`` shows, with every option spelled out) comes from the family's definition."""
    kinds = inspect.Parameter
    inputs_named = [
        kinds(name, kinds.POSITIONAL_OR_KEYWORD)
        for name in list(inspect.signature(build).parameters)[1:3]
    ]
    accepted = inspect.Signature(
        [*inputs_named, *inspect.signature(_arguments).parameters.values()],
        return_annotation=Evaluation,
    )

    def evaluate(*args, **kwargs) -> Evaluation:
        bound = accepted.bind(*args, **kwargs)
        bound.apply_defaults()
        given = bound.arguments
        values = option_values(family, given["options"])
        runner = engine_for(given["engine"], given["spark"], given["partitions"], given["progress"])
        _checked_per_unit(given["per_unit"], given["out"])
        definition = FAMILIES[family]
        files = [values.get(name) for name in definition.file_options]
        check_inputs_apart(given["out"], [given[i.name] for i in inputs_named] + files)
        for name in ("city", "model", "run"):  # taken as given: '' is refused, never the default
            if given[name] is not None:
                check_name(given[name], name)
        where = {name: given[name] for name in _WHERE}
        where["partition"] = checked_partition(given["partition"])
        where |= {"counts": definition.counts, "units": definition.units}
        with url_timeout(given["url_timeout"]):
            score = functools.partial(build, runner, *(given[i.name] for i in inputs_named))
            if given["out"] is None or _CALLER_RECORDS.get():
                evaluation = score(values, where)
                if evaluation is not None:  # None: a plan (a Spark job's), its result comes later
                    evaluation.config = result_config(family, given["options"], evaluation)
                return evaluation
            out = where["out"] = runner.location(given["out"])  # Spark: a URI
            return recorded(runner, out, family, given["options"], lambda: score(values, where))

    evaluate.__name__ = evaluate.__qualname__ = f"evaluate_{family}"
    evaluate.__doc__ = f"{build.__doc__}\n\n    Other arguments: :func:`mobeval.api._arguments`."
    evaluate.__signature__ = accepted
    return with_options(family)(evaluate)


def _nextloc(runner: Engine, truth, predictions, values: dict, where: dict) -> Evaluation:
    """Score next-location predictions against the true next locations.

    ``truth`` and ``predictions`` are paths (Parquet file, directory or glob; CSV) or Polars
    DataFrames. With ``out`` the per-sample table and the summary are written under ``out`` (see
    :mod:`mobeval.io.writers`); without it both come back in memory.
    Options (``mobeval.families.NEXTLOC``: ``key``, ``k``, ``metrics``, ``convention``...) are
    documented in :class:`mobeval.tasks.nextloc_inputs.NextlocSpec` and
    :class:`mobeval.metrics.nextloc.NextlocConvention`; ``ties`` and ``duplicates`` (``"error"``
    or ``"drop"``: one entry per location, as a dict-based run holds it) override the preset's."""
    from mobeval.metrics.nextloc import INPUT_ORDER_TIES
    from mobeval.tasks.nextloc_inputs import nextloc_spec, plan_inputs

    spec = nextloc_spec(**values)
    truth_source, pred_source = _sources(runner, "nextloc", truth, predictions, values)
    _require_rows((truth_source, "the truth is"), (pred_source, "the predictions are"))
    truth_schema, pred_schema = truth_source.schema(), pred_source.schema()
    inputs = plan_inputs(truth_schema, truth_source.label, pred_schema, pred_source.label, spec)
    labels = (truth_source.label, pred_source.label)
    chunk_rows = checked_chunk_rows(where["chunk_rows"])
    key = list(spec.key)
    columns = (inputs.truth_columns, inputs.pred_columns)
    with _reading(runner, truth_source, pred_source, columns, key, where) as read:
        from mobeval.engines.partition_nextloc import NextlocPartitionJob  # Numba: after the checks

        job = NextlocPartitionJob(spec, truth_schema, pred_schema, *labels, None, chunk_rows, 1)
        scorer = job.scorer()
        convention = scorer.convention
        per_unit = scorer.per_unit_schema({c: _key_type(truth_schema[c]) for c in key})
        plan = Plan(
            key=key,
            inputs=inputs,
            job=job,
            sections={"per_unit": per_unit},
            unique_truth=True,
            # the input-order ties read it, and so does duplicates="drop" (a location's last row)
            input_order=(convention.ties in INPUT_ORDER_TIES or convention.duplicates == "drop")
            and not inputs.list_form,
        )
        with their_names(truth_source, pred_source):
            return runner.run(_by_cohort(plan, values), *read, where)


def _trajectory(runner: Engine, reference, generated, values: dict, where: dict) -> Evaluation:
    """GEO-BLEU and DTW per uid and day of generated trajectories (uid, d, t, x, y), city = mean
    over uids, exactly as yahoojapan/geobleu computes them (see :mod:`mobeval.tasks.trajectory`).

    ``reference`` and ``generated`` are paths (Parquet, CSV or the challenge's CSV.gz with or
    without header) or Polars DataFrames; rows are paired by (uid, d, t) in any order. Sections:
    ``per_unit`` (uid, geobleu, dtw, n_days, n_steps), ``per_day`` (uid, d, n_steps, geobleu, dtw),
    ``summary``.
    ``matching="optimal"`` swaps the reference's greedy n-gram matching for an optimal one.
    ``exp="numpy"`` takes GEO-BLEU's exp and log from NumPy on this machine, as the reference
    does (default ``"libm"``, the C library's: see :class:`mobeval.metrics.trajectory.
    TrajectoryConvention`).

    ``pairing="none"`` scores a generated population against a real one of any sizes, no uid in
    common, by their distributions (MoveSim's six, DiffTraj's, TrajGDM's and MobilityGPT's, the
    memorisation ratios), in the location space ``locations`` (``"grid"``, ``"ids"`` or
    ``"links"`` with a ``location_table``, ``"gps"`` with a ``gps_grid``), each paper's binning by
    ``convention`` (``"movesim"``, ``"trajgdm"``, ``"mobilitygpt"``): MoveSim's own GeoLife
    files, ``evaluate_trajectory("real.data", "test.data", pairing="none", locations="ids",
    location_table="gps", convention="movesim", max_distance=247.3, metrics=[...])``, give its
    values bit for bit (docs: "Scoring a generated population")."""
    from mobeval.metrics.trajectory import COLUMNS as TRAJECTORY_COLUMNS
    from mobeval.tasks import trajectory_inputs as inputs

    chosen = inputs.checked_convention(**values)
    pairing, locations = values["pairing"], values["locations"]
    inputs.check_links(values["metrics"], locations, values["region_table"], values["link_graph"])
    required = inputs.required_columns(pairing, locations)
    reference_source, generated_source = _sources(
        runner, "trajectory", reference, generated, values, TRAJECTORY_COLUMNS
    )
    _require_rows(
        (reference_source, "the reference is"), (generated_source, "the generated trajectories are")
    )
    reference_schema = _require_columns(reference_source, required, "truth")
    generated_schema = _require_columns(generated_source, required, "pred")
    inputs.check_schemas(
        reference_schema, reference_source.label, generated_schema, generated_source.label, required
    )
    scorer_options = {
        "convention": chosen,
        "metrics": tuple(values["metrics"]),
        "on_mismatch": values["on_mismatch"],
        "out_of_grid": values["out_of_grid"],
        "divergence": values["divergence"],
        "uid_shares": tuple(values["uid_shares"]),
        "per_day_divergences": values["per_day_divergences"],
        "resamples": values["population_resamples"],
        "seed": values["population_seed"],
        "confidence": values["population_confidence"],
        "path_generated": generated_source.label,
        "path_reference": reference_source.label,
        "pairing": pairing,
    }
    if locations != "grid":
        from mobeval.tasks.population_space import population_space

        scorer_options["space"] = population_space(values)
    chunk_rows = checked_chunk_rows(where["chunk_rows"])
    read = inputs.TrajectoryPlan()
    if pairing != "uid":
        read = inputs.population_plan(reference_schema, generated_schema, locations)
    columns = (read.truth_columns, read.pred_columns)
    with _reading(runner, reference_source, generated_source, columns, ["uid"], where) as sources:
        # Numba: after the checks
        from mobeval.engines.partition_trajectory import TrajectoryPartitionJob
        from mobeval.tasks.trajectory import TrajectoryScorer

        plan = Plan(
            key=["uid"],
            inputs=read,
            job=TrajectoryPartitionJob(scorer_options, None, chunk_rows, 1, read),
            sections=TrajectoryScorer(**scorer_options).output_schemas(
                _key_type(reference_schema["uid"])
            ),
            unique_truth=False,
            input_order=False,
        )
        with their_names(reference_source, generated_source):
            return runner.run(plan, *sources, where)


def _recs(runner: Engine, ratings, recs, values: dict, where: dict) -> Evaluation:
    """Score ranked recommendation lists against rated ground truth, user by user, as the
    ``convention``'s reference system does (see :mod:`mobeval.metrics.recs`).

    ``ratings``: ``user_id`` (the ``key`` column), ``item_id``, ``rating``, several rows per user.
    ``recs``: ``user_id``, ``item_id`` and, as the convention needs them, ``rank`` / ``score``.
    Paths (Parquet file, directory or glob; CSV) or Polars DataFrames. Under ``"clayrs"`` and
    ``"relison"`` a user's list is its rows in file order, which streaming keeps (and Spark
    restores after its shuffle). ``metrics`` without ``@k`` expand over the cutoffs ``k``
    (alias ``cutoffs``).
    ``**options``: fields of :class:`mobeval.metrics.recs.RecsConvention` overriding the preset
    (``relevant_threshold=4``, ``averaging="micro"``...). Sections: ``per_unit`` (the key, one
    column per metric), ``summary`` (the system values, then ``users``)."""
    from mobeval.io.sources import require_ids
    from mobeval.metrics.recs import parse_recs_metrics
    from mobeval.metrics.recs_population import (
        check_engine,
        parse_population_metrics,
        population_of,
        split_metrics,
    )
    from mobeval.tasks.recs_inputs import population_inputs, rec_columns

    metrics, cutoffs, key = values["metrics"], values["k"], values["key"]
    conv = FAMILIES["recs"].convention(values)
    metrics, population = split_metrics(metrics)
    specs = parse_recs_metrics(metrics, cutoffs, beta=conv.beta) if metrics else ()
    population = parse_population_metrics(population, cutoffs) if population else ()
    check_engine(population, runner.name)
    population = (
        population_inputs(
            population,
            population_of(values),
            catalogue=values["catalogue"],
            train=values["train"],
            item_features=values["item_features"],
            original_ratings=values["original_ratings"],
            user_groups=values["user_groups"] or (),
            pop_percentage=values["pop_percentage"],
            resamples=values["population_resamples"],
            seed=values["population_seed"],
            confidence=values["population_confidence"],
            relevance_threshold=conv.relevant_threshold,
            propensities=values["propensities"],
            propensity_preset=values["propensity_preset"],
            propensity_a=values["propensity_a"],
            propensity_b=values["propensity_b"],
        )
        if population
        else None
    )
    columns = rec_columns(conv, specs, population)
    ratings_source, recs_source = _sources(runner, "recs", ratings, recs, values)
    _require_rows((ratings_source, "the ratings are"), (recs_source, "the lists are"))
    truth_columns = [key, "item_id", "rating"]
    shared = (key, "item_id")  # the other input's own columns tell two inputs swapped
    lists = recs_source.schema()
    own = [c for c in lists if c not in shared]
    ratings_schema = _require_columns(ratings_source, truth_columns, "truth", own, lists)
    own = [c for c in ratings_schema if c not in shared]
    recs_schema = _require_columns(recs_source, [key, *columns[1:]], "pred", own, ratings_schema)
    for source, schema in ((ratings_source, ratings_schema), (recs_source, recs_schema)):
        require_ids(schema, (key, "item_id"), source.label)
    scorer_options = {
        "metrics": metrics,
        "cutoffs": cutoffs,
        "convention": conv,
        "key": key,
        "path_recs": recs_source.label,
        "path_ratings": ratings_source.label,
        "population": population,
    }
    chunk_rows = checked_chunk_rows(where["chunk_rows"])
    # the plan's columns (RecsPlan.build), guessed before its module loads: a wrong guess is
    # read again
    read_columns = (truth_columns, [key, *(c for c in columns if c != "user_id")])
    sources = (ratings_source, recs_source, read_columns, [key], where)
    with _reading(runner, *sources, order_first=False) as read:
        from mobeval.engines.partition_recs import RecsPartitionJob  # Numba: after the checks

        job = RecsPartitionJob(
            scorer_options, tuple(columns), recs_schema, ratings_schema, None, chunk_rows, 1
        )
        user_type = _key_type(recs_schema[key], ratings_schema[key])
        plan = Plan(
            key=[key],
            inputs=job.plan(),
            job=job,
            sections={
                "per_unit": {
                    key: user_type,
                    **{spec.name: pl.Float64 for spec in specs},
                    **{m.name: pl.Float64 for m in (population.per_unit if population else ())},
                }
            },
            unique_truth=False,
            input_order=True,
            truth_order_first=False,  # a scorer's error waits for the ratings' order: no first pass
        )
        with their_names(ratings_source, recs_source):
            return runner.run(_by_cohort(plan, values), *read, where)


def logits_columns(values: dict) -> dict[str, str]:
    """The Parquet columns of the logits and the targets: the ``columns`` option's ``logits`` and
    ``target`` (in both inputs or in their own), else ``logits_column`` / ``targets_column``
    (their first spelling); both given is an OptionError."""
    mapped = FAMILIES["logits"].column_map(values)
    chosen = {}
    for ours, role, option in (
        ("logits", "pred", "logits_column"),
        ("target", "truth", "targets_column"),
    ):
        given = mapped.of(role).get(ours)
        default = FAMILIES["logits"].option(option).default
        if given is not None and values[option] != default:
            raise OptionError(
                "columns",
                values["columns"],
                f"{ours!r} and {option} both name one column: give one",
            )
        chosen[option] = given or values[option]
    return chosen


def logits_fold_options(values: dict) -> dict:
    """The logits fold's options (:class:`mobeval.tasks.logits.LogitsAccumulator`) from the
    family's checked ``values``: what every logits run folds with, the accumulator's too."""
    from mobeval.metrics.logits import parse_logits_metrics

    return {
        "metrics": parse_logits_metrics(values["metrics"], values["k"]),
        "ties": values["ties"],
        "convention": values["convention"],
        "ignore_target": values["ignore_target"],
    }


def _logits(runner: Engine, logits, targets, values: dict, where: dict) -> Evaluation:
    """Paper-style scores of a logits matrix ``[N, C]`` against integer targets ``[N]``
    (:mod:`mobeval.tasks.logits`): ``acc@k``, ``mrr``, ``ndcg@k``, ``f1_weighted``, ``f1_macro``,
    ``cross_entropy``.

    ``logits``: a 2-D float array, a ``.npy`` file (memory-mapped) or a Parquet file whose
    ``logits_column`` is a list of floats. ``targets``: an integer array, a ``.npy`` file, a Parquet
    file (its ``targets_column``) or the name of a column of the logits' Parquet file. Rows are
    paired by position. ``chunk_rows`` is the memory budget in values, as the other tasks' rows:
    a chunk holds ``chunk_rows // C`` logits rows. ``convention``: ``mobeval`` or ``sklearn`` (each
    metric family's tie policy); ``ties`` overrides it. Sections: ``per_unit`` (row, target, rank,
    top1, each row's values), ``summary``. On Spark each task scores a range of rows that it
    reads from the files, so the paths must be readable by every executor (a shared or local file
    system)."""
    from mobeval.io.logits import rows_per_chunk

    accumulator_options = logits_fold_options(values)
    columns = logits_columns(values)
    rows = rows_per_chunk(logits, targets, checked_chunk_rows(where["chunk_rows"]), **columns)
    from mobeval.engines.partition_logits import LogitsPartitionJob  # Numba: after the checks

    job = LogitsPartitionJob(
        logits, targets, accumulator_options, columns, rows, percent=values["percent"]
    )
    return runner.run_rows(job, where)


evaluate_nextloc = _evaluation("nextloc", _nextloc)
evaluate_trajectory = _evaluation("trajectory", _trajectory)


def _by_cohort(plan: Plan, values: dict) -> Plan:
    """``plan`` sliced by the ``cohorts`` table if one is given (read and checked now, before
    any row is scored: :mod:`mobeval.tasks.cohorts`; each unit's cohort in its per-unit row),
    else ``plan`` itself."""
    if values.get("cohorts") is None:
        return plan
    from mobeval.engines.partition_cohorts import CohortPartitionJob
    from mobeval.tasks.cohorts import COHORT, read_cohorts

    table = read_cohorts(values["cohorts"], plan.key, values["cohort_missing"])
    sections = {"per_unit": {**plan.sections["per_unit"], COHORT: pl.String}}
    return dataclasses.replace(plan, job=CohortPartitionJob(plan.job, table), sections=sections)


evaluate_recs = _evaluation("recs", _recs)
evaluate_logits = _evaluation("logits", _logits)


def file_fingerprints(runner: Engine, family: str, options: dict) -> dict[str, list]:
    """The fingerprints of the family's file options that are set (a recs task's
    ``catalogue``, ``train``, ``original_ratings``): inputs of the result like its truth and
    predictions, recorded in the manifest (by the command or the job that records the result:
    a Spark job's evaluations come back from the engine, not from ``evaluate``) and compared
    by ``--resume``."""
    return {
        name: runner.fingerprint(options[name])
        for name in FAMILIES[family].file_options
        if options.get(name) is not None
    }


#: Set while a caller records each result in OUT's manifest itself (:func:`caller_records`).
_CALLER_RECORDS: ContextVar[bool] = ContextVar("mobeval_caller_records", default=False)


@contextmanager
def caller_records() -> Iterator[None]:
    """Inside this block ``evaluate_*(out=...)`` writes its sections and leaves their manifest
    entry to the caller, which records every result itself (a job, whose entry names its
    task, or Spark's planner, which scores later)."""
    token = _CALLER_RECORDS.set(True)
    try:
        yield
    finally:
        _CALLER_RECORDS.reset(token)


def _is_path(value: object) -> bool:
    return value is None or isinstance(value, str | os.PathLike)


def recorded(runner: Engine, out, family: str, given: dict, score) -> Evaluation:
    """``score()``'s result written under ``out`` and recorded in ``OUT/manifest.json`` (``--out``,
    ``evaluate_*(out=...)``): OUT's lock held throughout, the manifest read before any work (an
    unreadable one stops the run), then the result recorded with its file options' fingerprints
    (:func:`file_fingerprints`) and config (:func:`result_config`) for compare, report, --resume."""
    with runner.lock(out):
        job = {"command": family, **result_config(family, given)}
        manifest = Manifest(out, job, files=runner.files, engine=runner.name)
        evaluation = score()
        evaluation.inputs |= file_fingerprints(runner, family, given)
        evaluation.config = result_config(family, given, evaluation)
        manifest.record(evaluation, evaluation.config, family)
    return evaluation


def result_config(family: str, given: dict, evaluation: Evaluation | None = None) -> dict:
    """The manifest's ``config`` of ``evaluation`` (:attr:`Evaluation.config`; without it, the
    options alone): ``type``, ``city``, ``model``, ``run``, then the options as ``given``, a
    file option given as a data object by its type's name (``<DataFrame>``)."""
    e, files = evaluation, FAMILIES[family].file_options
    names = {} if e is None else {"type": family, "city": e.city, "model": e.model, "run": e.run}
    options = {
        k: f"<{type(v).__name__}>" if k in files and not _is_path(v) else v
        for k, v in given.items()
    }
    return {k: v for k, v in names.items() if v is not None} | options


__all__ = [
    "Evaluation",
    "Manifest",
    "default_model_name",
    "evaluate_logits",
    "evaluate_nextloc",
    "evaluate_recs",
    "evaluate_trajectory",
    "engine_for",
]
