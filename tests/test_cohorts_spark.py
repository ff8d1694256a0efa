"""Cohorts on the Spark engine: the same bits as the local engine, the same refusal."""

import pytest

from mobeval.api import evaluate_nextloc, evaluate_recs
from mobeval.errors import InputError
from tests.test_cohorts import LISTS, MARKOV, RATINGS, SAMPLE_COHORTS, TRUTH, USER_COHORTS
from tests.test_spark import spark  # noqa: F401 - the module's local[2] session

pytestmark = pytest.mark.spark


def test_spark_gives_the_local_engines_cohorts_bit_for_bit(spark, tmp_path):  # noqa: F811
    options = {"metrics": ["ndcg@10", "map@10", "gini@10"], "cohorts": USER_COHORTS}
    local = evaluate_recs(RATINGS, LISTS, **options)
    far = evaluate_recs(RATINGS, LISTS, spark=spark, partitions=3, **options)
    assert far.summary.equals(local.summary)
    assert far.tables["cohorts"].equals(local.tables["cohorts"])
    options = {"k": [1, 5], "metrics": ["acc@k", "mrr", "f1@k"], "convention": "libcity"}
    local = evaluate_nextloc(TRUTH, MARKOV, cohorts=SAMPLE_COHORTS, **options)
    out = tmp_path / "out"
    far = evaluate_nextloc(
        TRUTH, MARKOV, spark=spark, partitions=4, cohorts=SAMPLE_COHORTS, out=out, **options
    )
    assert far.summary.equals(local.summary)
    import polars as pl

    written = pl.read_parquet(out / "cohorts" / "city=tky" / "model=markov" / "*.parquet")
    assert written.equals(local.tables["cohorts"])


def test_spark_names_a_unit_without_a_cohort_as_the_local_engine(spark):  # noqa: F811
    import polars as pl

    table = pl.read_csv(USER_COHORTS).filter(pl.col("user_id") != 7)
    with pytest.raises(InputError) as local:
        evaluate_recs(RATINGS, LISTS, metrics=["ndcg@10"], cohorts=table)
    with pytest.raises(InputError) as far:
        evaluate_recs(RATINGS, LISTS, metrics=["ndcg@10"], cohorts=table, spark=spark, partitions=3)
    assert str(far.value) == str(local.value) and "first offending key: 7)" in str(far.value)
