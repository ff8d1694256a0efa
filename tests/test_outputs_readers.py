"""A whole OUT reads back as one table per section, with ``city`` and ``model``, in Polars and in
DuckDB, for every task family, when its models were scored with different metric sets and
options: the per-unit columns of a family differ only by whole metric columns (Float64), every
column two results share has one type, and each model's rows are the values it was scored with
(a metric it was not scored on is null)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from mobeval import api
from mobeval.families import FAMILIES
from mobeval.io.outputs import scan_outputs

duckdb = pytest.importorskip("duckdb", reason="pip install 'mobeval[test]' (DuckDB)")

TRUTH = pl.DataFrame({"sample_id": [1, 2, 3], "location": [10, 20, 30]})
PRED = pl.DataFrame(
    {
        "sample_id": [1, 1, 2, 2, 3, 3],
        "location": [10, 11, 20, 21, 31, 30],
        "score": [0.9, 0.1, 0.8, 0.8, 0.7, 0.3],
    }
)
REFERENCE = pl.DataFrame(
    [(u, d, t, 10 + t, 20 + u) for u in (1, 2) for d, t in [(60, 0), (60, 1), (61, 5)]],
    schema=["uid", "d", "t", "x", "y"],
    orient="row",
)
RATINGS = pl.DataFrame(
    {
        "user_id": [1, 1, 1, 2, 2],
        "item_id": [10, 11, 12, 10, 13],
        "rating": [5.0, 3.0, 4.0, 2.0, 5.0],
    }
)
RECS = pl.DataFrame(
    {"user_id": [1, 1, 2, 2], "item_id": [10, 12, 13, 11], "score": [0.9, 0.5, 0.8, 0.1]}
)
TARGETS = np.array([0, 2, 1, 3], dtype=np.int64)
LOGITS = np.arange(16, dtype=np.float64).reshape(4, 4) % 5

#: family -> (truth, model input, the key of its per-unit rows, two models' options)
CASES = {
    "nextloc": (
        TRUTH,
        PRED,
        ["sample_id"],
        [{"k": [1, 2]}, {"metrics": ["mrr", "acc@3"], "ties": "average", "f1": "mean"}],
    ),
    "trajectory": (
        REFERENCE,
        REFERENCE.with_columns(pl.col("x") + 1),
        ["uid"],
        [{}, {"metrics": ["dtw"]}],
    ),
    "recs": (
        RATINGS,
        RECS,
        ["user_id"],
        [{}, {"metrics": ["rmse", "ndcg@3"], "convention": "trec_eval"}],
    ),
    "logits": (
        TARGETS,
        LOGITS,
        ["row"],
        [{}, {"metrics": ["acc@1", "cross_entropy"], "ties": "average", "percent": True}],
    ),
}
SECTIONS = {"trajectory": ("per_unit", "per_day")}


@pytest.fixture(scope="module", params=sorted(CASES))
def scored(request, tmp_path_factory):
    """An OUT holding two models of one family (city "2024": a name that looks like a number),
    and the same two results computed in memory."""
    family = request.param
    truth, model_input, key, options = CASES[family]
    evaluate = getattr(api, f"evaluate_{family}")
    out = tmp_path_factory.mktemp(family) / "out"
    in_memory = {}
    inputs = {FAMILIES[family].truth: truth, FAMILIES[family].model: model_input}
    for name, chosen in zip(("a", "b"), options, strict=True):
        evaluate(**inputs, out=out, city="2024", model=name, progress=False, **chosen)
        in_memory[name] = evaluate(**inputs, model=name, progress=False, **chosen)
    return family, key, out, in_memory


def _duckdb(out, section: str) -> pl.DataFrame:
    return duckdb.sql(
        f"SELECT * FROM read_parquet('{out}/{section}/*/*/*.parquet', union_by_name = true, "
        "hive_partitioning = true, hive_types_autocast = false)"
    ).pl()


def _readers(out, section):
    return {
        "polars": scan_outputs(out, section).collect(),
        "duckdb": _duckdb(out, section),
    }


def test_each_model_reads_back_as_scored(scored):
    family, key, out, in_memory = scored
    for section in SECTIONS.get(family, ("per_unit",)):
        for reader, table in _readers(out, section).items():
            assert table["city"].dtype == pl.String and table["model"].dtype == pl.String
            assert set(table["city"]) == {"2024"}
            for name, result in in_memory.items():
                expected = result.tables[section]
                rows = table.filter(pl.col("model") == name)
                order = [*key, "d"] if section == "per_day" else key
                assert_frame_equal(
                    rows.select(expected.columns).sort(order),
                    expected.sort(order),
                    check_dtypes=reader == "polars",
                    check_exact=True,
                )
                others = set(table.columns) - set(expected.columns) - {"city", "model"}
                for column in others:
                    assert rows[column].null_count() == rows.height, (reader, section, column)


def test_columns_differ_only_by_whole_metric_columns(scored):
    family, _, _, in_memory = scored
    for section in SECTIONS.get(family, ("per_unit",)):
        a, b = (in_memory[m].tables[section].schema for m in ("a", "b"))
        for name in set(a) & set(b):
            assert a[name] == b[name], (section, name)
        for schema, result in ((a, in_memory["a"]), (b, in_memory["b"])):
            other = b if schema is a else a
            metrics = set(result.summary["metric"])
            for name in set(schema) - set(other):
                helper = name.startswith("acc@")  # f1@k's hits under f1="aggregate"
                assert name in metrics or helper, (section, name)
                assert schema[name] == pl.Float64, (section, name)


def test_summaries_read_with_a_plain_glob(scored):
    """The summary's columns are the same for every result: no union needed."""
    family, _, out, in_memory = scored
    polars = pl.read_parquet(f"{out}/summary/**/*.parquet", hive_partitioning=True)
    duck = duckdb.sql(f"SELECT * FROM read_parquet('{out}/summary/*/*/*.parquet')").pl()
    for table in (polars, duck):
        for name, result in in_memory.items():
            rows = table.filter(pl.col("model") == name).select("metric", "value", "n")
            assert_frame_equal(rows, result.summary, check_dtypes=False, check_exact=True)


def test_an_empty_folder_is_named(tmp_path):
    from mobeval.errors import InputError

    with pytest.raises(InputError, match="no results"):
        scan_outputs(tmp_path, "per_unit")
