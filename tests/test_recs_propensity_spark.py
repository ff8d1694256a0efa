"""PSP@k and PSR@k on the Spark engine: the local engine's bits (each partition's exact sums
merged exactly) on tests/golden/propensity, lists spread over partitions, and a bad propensity
refused with the local message. One local[2] SparkSession (``tests/test_spark.py``'s)."""

from __future__ import annotations

import polars as pl
import pytest

from mobeval.api import evaluate_recs
from mobeval.errors import InputError
from tests.test_recs_propensity import FOLDER, NAMES, RATINGS, RECS, TRAIN
from tests.test_spark import spark  # noqa: F401 - the module's session

pytestmark = pytest.mark.spark


def _ratings(tmp_path):
    RATINGS.write_parquet(tmp_path / "ratings.parquet")
    return tmp_path / "ratings.parquet"


def test_the_local_bits_on_spark(spark, tmp_path):  # noqa: F811
    shuffled = tmp_path / "recs.parquet"
    RECS.sample(fraction=1.0, seed=4, shuffle=True).write_parquet(shuffled)
    options = {"metrics": NAMES, "convention": "trec_eval", "train": FOLDER / "train.csv"}
    local = evaluate_recs(RATINGS, RECS, chunk_rows=50, **options)
    on_spark = evaluate_recs(_ratings(tmp_path), shuffled, partitions=3, spark=spark, **options)
    assert on_spark.summary.select("metric", "value", "n").equals(
        local.summary.select("metric", "value", "n")
    )


def test_a_bad_propensity_is_refused_on_spark_as_locally(spark, tmp_path):  # noqa: F811
    table = pl.DataFrame({"item_id": TRAIN["item_id"].unique().sort()}).with_columns(
        propensity=pl.lit(0.5)
    )
    table.with_columns(propensity=pl.lit(0.0)).vstack(table).write_csv(tmp_path / "p.csv")
    options = {"metrics": NAMES, "convention": "trec_eval", "propensities": tmp_path / "p.csv"}
    with pytest.raises(InputError) as local:
        evaluate_recs(RATINGS, RECS, **options)
    with pytest.raises(InputError) as on_spark:
        evaluate_recs(_ratings(tmp_path), FOLDER / "recs.csv", partitions=3, spark=spark, **options)
    assert str(on_spark.value) == str(local.value)
