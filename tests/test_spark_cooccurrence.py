"""Diversity's and serendipity's co-occurrence table built once, on the driver: the training
tables are shipped to the Spark engine's tasks pickled, the table inside them (PySpark
broadcasts a large job), so no task builds it again; the values are the local engine's bits."""

from __future__ import annotations

import pickle

import numpy as np
import polars as pl
import pytest

from mobeval.api import evaluate_recs
from mobeval.kernels import cooccurrence
from mobeval.metrics.recs_population import parse_population_metrics, resolve_population
from mobeval.tasks.recs_inputs import population_inputs
from tests.conftest import REPO_ROOT
from tests.test_spark import spark  # noqa: F401 - the module's session

SAMPLES = REPO_ROOT / "data_samples" / "recs"


def _inputs(metrics: list[str], **options):
    return population_inputs(
        parse_population_metrics(metrics, [10]),
        resolve_population("msrecommenders", item_similarity=options.get("item_similarity")),
        catalogue=None,
        train=SAMPLES / "train.parquet",
        item_features=options.get("item_features"),
    )


def _never_built_again(monkeypatch) -> None:
    def refused(*args):
        raise AssertionError("the co-occurrence table was built again")

    monkeypatch.setattr(cooccurrence, "cooccurrence", refused)


@pytest.mark.parametrize("metric", ["diversity", "serendipity"])
def test_the_table_travels_with_the_tables(metric, monkeypatch):
    inputs = _inputs([metric])
    shipped = pickle.dumps(inputs)
    _never_built_again(monkeypatch)
    arrived = pickle.loads(shipped).train_tables.pairs
    for mine, theirs in zip(inputs.train_tables.pairs, arrived, strict=True):
        assert np.array_equal(mine, theirs) and mine.dtype == theirs.dtype


def test_no_table_where_no_metric_reads_it():
    features = str(SAMPLES / "item_categories.parquet")
    for inputs in (
        _inputs(["novelty"]),
        _inputs(["serendipity"], item_similarity="features", item_features=features),
    ):
        assert "pairs" not in vars(inputs.train_tables)


@pytest.mark.spark
def test_spark_gives_the_local_bits(spark):  # noqa: F811 - the fixture
    options = {
        "metrics": ["diversity", "serendipity", "novelty"],
        "k": [10],
        "train": str(SAMPLES / "train.parquet"),
        "population_convention": "msrecommenders",
    }
    ratings, recs = str(SAMPLES / "ratings.parquet"), str(SAMPLES / "mf.parquet")
    local = evaluate_recs(ratings, recs, chunk_rows=997, **options)
    on_spark = evaluate_recs(ratings, recs, chunk_rows=300, partitions=3, spark=spark, **options)
    mine, theirs = local.summary, on_spark.summary
    assert mine.columns == theirs.columns
    assert mine.select(pl.exclude("value")).equals(theirs.select(pl.exclude("value")))
    assert mine["value"].to_list() == theirs["value"].to_list()
