"""A whole OUT reads back as one table per section, with ``city`` and ``model``, in Polars and in
DuckDB, for every task family, when its models were scored with different metric sets and
options: the per-unit columns of a family differ only by whole metric columns (Float64), every
column two results share has one type, and each model's rows are the values it was scored with
(a metric it was not scored on is null)."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from mobeval import api
from mobeval.families import FAMILIES
from mobeval.io.outputs import scan_outputs
from tests.helpers import GENERATED, LOGITS, PRED, RATINGS, RECS, REFERENCE, TARGETS, TRUTH

duckdb = pytest.importorskip("duckdb", reason="pip install 'mobeval[test]' (DuckDB)")

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
        GENERATED,
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
            rows = table.filter(pl.col("model") == name).select("metric", "value", "n", "std")
            assert_frame_equal(rows, result.summary, check_dtypes=False, check_exact=True)


def test_an_empty_folder_is_named(tmp_path):
    from mobeval.errors import InputError

    with pytest.raises(InputError, match="no results"):
        scan_outputs(tmp_path, "per_unit")
