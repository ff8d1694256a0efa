"""Novelty, diversity, serendipity and coverage as Microsoft Recommenders' ``python_evaluation``
computes them, and Elliot's EPC, EFD, ARP, APLT, ACLT: against the golden values of their own
code (``tests/golden/novelty/``), per user and for the system, for any chunking."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from mobeval.api import evaluate_recs
from mobeval.errors import ConfigError
from mobeval.metrics.recs_population import parse_population_metrics, resolve_population
from mobeval.tasks import recs_inputs
from mobeval.tasks.recs_beyond import user_values
from mobeval.tasks.recs_inputs import population_inputs
from tests.conftest import GOLDEN, REPO_ROOT

SAMPLES = REPO_ROOT / "data_samples" / "recs"
TRAIN = SAMPLES / "train.parquet"
MSR = json.loads((GOLDEN / "novelty" / "msrecommenders.json").read_text())["cases"]
ELLIOT = json.loads((GOLDEN / "novelty" / "elliot.json").read_text())["cases"]
MSR_NAMES = {
    "novelty": "novelty",
    "diversity": "diversity",
    "serendipity": "serendipity",
    "distributional_coverage": "distributional_coverage",
    "coverage": "catalog_coverage",
}
MSR_CONV = "msrecommenders"
ELLIOT_NAMES = {"EPC": "epc", "EFD": "efd", "ARP": "arp", "APLT": "aplt", "ACLT": "aclt"}


def _frame(rows, names) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=names, orient="row")


def _msr_inputs(case: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(lists, training rows) of a golden case: the stored rows, or data_samples' lists less
    their training pairs (Microsoft Recommenders refuses a list that holds one)."""
    if case in ("mf", "popular"):
        train = pl.read_parquet(TRAIN)
        lists = pl.read_parquet(SAMPLES / f"{case}.parquet").select("user_id", "item_id")
        lists = lists.join(train, on=["user_id", "item_id"], how="anti", maintain_order="left")
        return lists, train
    inputs = MSR[case]["inputs"]
    lists = _frame([row[:2] for row in inputs["recs"]], ["user_id", "item_id"])
    return lists, _frame(inputs["train"], ["user_id", "item_id"])


def _features(case: str, name: str) -> object:
    """The item features of a golden case: a frame (item_id, features) of the stored vectors,
    (item_id, category) of the stored categories, or data_samples' files."""
    if case in ("mf", "popular"):
        return str(SAMPLES / f"item_{name}.parquet")
    stored = MSR[case]["inputs"][name]
    if name == "categories":
        return _frame(stored, ["item_id", "category"])
    return pl.DataFrame(
        {"item_id": [int(i) for i in stored], "features": list(stored.values())},
        schema={"item_id": pl.Int64, "features": pl.List(pl.Float64)},
    )


def _similarities(case: str) -> list[str]:
    """The similarities of a golden case: co-occurrence, then its features'."""
    keys = MSR[case]["values"]["all" if case != "mf" and case != "popular" else "10"]
    return [key.split(":")[1] for key in keys if key.startswith("diversity:")]


def _cutoffs(case: str) -> list:
    return [None if k == "all" else int(k) for k in MSR[case]["values"]]


def _score(lists, train, metrics, k, convention, chunk_rows=None, **options):
    ratings = lists.select("user_id", "item_id", pl.lit(1.0).alias("rating"))
    extra = {} if chunk_rows is None else {"chunk_rows": chunk_rows}
    return evaluate_recs(
        ratings,
        lists,
        metrics=metrics,
        k=k,
        train=train,
        population_convention=convention,
        **extra,
        **options,
    )


def _similarity_options(case: str, similarity: str) -> dict:
    if similarity == "cooccurrence":
        return {}
    return {"item_similarity": "features", "item_features": _features(case, similarity)}


CASES = [(case, s) for case in ("ms_tests", "small", "mf", "popular") for s in _similarities(case)]


@pytest.mark.parametrize(("case", "similarity"), CASES)
def test_msrecommenders_values(case, similarity):
    lists, train = _msr_inputs(case)
    options = _similarity_options(case, similarity)
    for k in _cutoffs(case):
        cut = None if k is None else [k]
        result = _score(lists, train, list(MSR_NAMES), cut, "msrecommenders", **options)
        want = MSR[case]["values"]["all" if k is None else str(k)]
        for name, reference in MSR_NAMES.items():
            key = reference if reference in want else f"{reference}:{similarity}"
            got = result.value(name if k is None else f"{name}@{k}")
            if np.isnan(want[key]):
                assert np.isnan(got), (name, k)
            else:
                assert got == pytest.approx(want[key], rel=1e-12, abs=0), (name, k)


@pytest.mark.parametrize(("case", "similarity"), CASES)
def test_msrecommenders_per_user_values_bit_for_bit(case, similarity):
    """Each user's diversity and serendipity is the reference's to the last bit (its pairs and
    rows summed in its order, Kahan-compensated as pandas' groupby mean), except with float
    vectors, whose dot products the reference takes from its BLAS (an order and fused
    multiply-adds of its CPU's kernel): there within 1e-14."""
    lists, train = _msr_inputs(case)
    options = _similarity_options(case, similarity)
    for k in _cutoffs(case):
        want = MSR[case]["values"]["all" if k is None else str(k)]
        if f"user_diversity:{similarity}" not in want:
            continue
        metrics = parse_population_metrics(["diversity", "serendipity"], [k] if k else None)
        inputs = population_inputs(
            metrics,
            resolve_population("msrecommenders", item_similarity=options.get("item_similarity")),
            catalogue=None,
            train=train,
            item_features=options.get("item_features"),
        )
        head = lists.with_columns(pl.int_range(pl.len()).over("user_id").alias("_position"))
        values = user_values(head, head.clear(), inputs)
        users = [str(u) for u in head["user_id"].unique().sort()]
        for family in ("diversity", "serendipity"):
            got = dict(
                zip(users, values[metrics[0].name.replace("diversity", family)], strict=True)
            )
            got = {u: v for u, v in got.items() if not np.isnan(v)}
            expected = want[f"user_{family}:{similarity}"]
            if similarity == "embeddings":  # the reference's dot product is its BLAS's
                assert got == pytest.approx(expected, rel=1e-14, abs=0), (family, k)
            else:
                assert got == expected, (family, k)


@pytest.mark.parametrize("case", ["ms_tests", "small", "mf", "popular"])
def test_novelty_and_coverage_from_the_training_items_alone(monkeypatch, case):
    """novelty and coverage over the training items read the items alone (streamed, counted in
    folds: one every 3 ids here): the reference's values from training rows without their
    ``user_id`` column; with a metric that reads the tables by user, the same bits."""
    monkeypatch.setattr(recs_inputs, "FOLD_IDS", 3)
    lists, train = _msr_inputs(case)
    inputs = population_inputs(
        parse_population_metrics(["novelty", "coverage"], [5]),
        resolve_population("msrecommenders"),
        catalogue=None,
        train=train.select("item_id"),
    )
    assert isinstance(inputs.train_tables, recs_inputs.TrainItems)
    for k in _cutoffs(case):
        cut = None if k is None else [k]
        result = _score(lists, train.select("item_id"), ["novelty", "coverage"], cut, MSR_CONV)
        want = MSR[case]["values"]["all" if k is None else str(k)]
        for name in ("novelty", "coverage"):
            got = result.value(name if k is None else f"{name}@{k}")
            reference = want[MSR_NAMES[name]]
            if np.isnan(reference):
                assert np.isnan(got), name
            else:
                assert got == pytest.approx(reference, rel=1e-12, abs=0), name
        by_user = _score(lists, train, ["novelty", "coverage", "serendipity"], cut, MSR_CONV)
        for name in ("novelty", "coverage"):
            metric = name if k is None else f"{name}@{k}"
            assert by_user.value(metric) == result.value(metric), metric


@pytest.mark.parametrize("chunk_rows", [7, 50, 1000])
def test_same_bits_for_any_chunking(chunk_rows):
    lists, train = _msr_inputs("mf")
    metrics = [*MSR_NAMES, "epc", "efd", "aplt", "aclt", "arp"]
    whole = _score(lists, train, metrics, [5, 10], "msrecommenders").summary
    chunked = _score(lists, train, metrics, [5, 10], "msrecommenders", chunk_rows).summary
    assert chunked.equals(whole)


def _elliot_case(case: str):
    """(lists, training rows, test ratings) of an Elliot golden case; data_samples' mf lists
    less item 465, which the training rows lack (Elliot recommends training items only)."""
    if case == "small":
        inputs = ELLIOT[case]["inputs"]
        names = ["user_id", "item_id", "rating"]
        lists = _frame(inputs["recs"], ["user_id", "item_id", "score"])
        return lists, _frame(inputs["train"], names), _frame(inputs["test"], names)
    lists = pl.read_parquet(SAMPLES / f"{case}.parquet").filter(pl.col("item_id") != 465)
    return lists, pl.read_parquet(TRAIN), pl.read_parquet(SAMPLES / "ratings.parquet")


@pytest.mark.parametrize("case", ["small", "mf", "popular"])
def test_elliot_values(case):
    lists, train, test = _elliot_case(case)
    golden = ELLIOT[case]
    for threshold in golden["thresholds"]:
        result = evaluate_recs(
            test,
            lists.select("user_id", "item_id"),
            metrics=list(ELLIOT_NAMES.values()),
            k=golden["cutoffs"],
            train=train.select("user_id", "item_id"),
            population_convention="elliot",
            convention="clayrs",
            relevant_threshold=threshold,
            require_same_users=False,
        )
        for key, want in golden["results"].items():
            name, _, rest = key.partition("@")
            k, _, at = rest.partition("|")
            if float(at) != threshold:
                continue
            metric = ELLIOT_NAMES[name].replace("arp", "avg_popularity") + f"@{k}"
            got = result.value(metric)
            assert got == pytest.approx(want["value"], rel=1e-12, abs=0), key
            if "users" in want:  # the users the reference counts
                n = result.summary.filter(pl.col("metric") == metric)["n"][0]
                assert n == len(want["users"]), key


@pytest.mark.parametrize("case", ["small", "mf"])
def test_elliot_per_user_values_bit_for_bit(case):
    lists, train, test = _elliot_case(case)
    golden = ELLIOT[case]
    for key, want in golden["results"].items():
        if "users" not in want:
            continue
        name, _, rest = key.partition("@")
        k, _, at = rest.partition("|")
        family = ELLIOT_NAMES[name]
        if family == "arp":
            continue  # the existing avg_popularity: its per-user shares are Polars'
        metrics = parse_population_metrics([family], [int(k)])
        inputs = population_inputs(
            metrics,
            resolve_population("elliot"),
            catalogue=None,
            train=train.select("user_id", "item_id"),
            relevance_threshold=float(at),
        )
        head = lists.with_columns(pl.int_range(pl.len()).over("user_id").alias("_position"))
        values = user_values(head.select("user_id", "item_id", "_position"), test, inputs)
        users = [str(u) for u in head["user_id"].unique().sort()]
        got = {u: v for u, v in zip(users, values[metrics[0].name], strict=True) if not np.isnan(v)}
        assert got == want["users"], key


def test_elliot_long_tail():
    from mobeval.tasks.item_tables import train_tables

    for case in ("small", "mf", "popular"):
        train = _elliot_case(case)[1].select("user_id", "item_id")
        items = train_tables(train).items
        assert sorted(items.filter("long_tail")["item_id"].to_list()) == ELLIOT[case]["long_tail"]


def test_a_metric_without_its_input_is_refused_before_any_work():
    lists, _ = _msr_inputs("small")
    with pytest.raises(ConfigError, match="serendipity@2 needs the training interactions"):
        _score(lists, None, ["serendipity"], [2], "msrecommenders")


def test_serendipity_relevance_from_the_ratings():
    """Microsoft Recommenders' own test case with its ``Relevance`` column: the pairs with
    relevance 1 given as ratings, ``serendipity_relevance="ratings"``."""
    stored = MSR["ms_tests"]["inputs"]["recs"]
    lists = _frame([row[:2] for row in stored], ["user_id", "item_id"])
    ratings = _frame(
        [[u, i, 1.0] for u, i, relevance in stored if relevance], ["user_id", "item_id", "rating"]
    )
    train, _ = _msr_inputs("ms_tests")[1], None
    want = MSR["ms_tests"]["relevance"]["all"]
    for similarity, options in [
        ("cooccurrence", {}),
        ("embeddings", _similarity_options("ms_tests", "embeddings")),
    ]:
        result = evaluate_recs(
            ratings,
            lists,
            metrics=["serendipity"],
            k=None,
            train=train,
            population_convention="msrecommenders",
            serendipity_relevance="ratings",
            convention="trec_eval",
            require_same_users=False,
            order="input",
            **options,
        )
        assert result.value("serendipity") == pytest.approx(
            want[f"serendipity:{similarity}"], rel=1e-12
        )


def test_features_as_numeric_columns_of_a_csv(tmp_path):
    """A CSV holds a vector as numeric columns (one a dimension): the same values as the list
    column of the same vectors."""
    vectors = _features("small", "embeddings")
    wide = vectors.select(
        "item_id", *(pl.col("features").list.get(d).alias(f"f{d}") for d in range(4))
    )
    wide.write_csv(tmp_path / "features.csv")
    values = _feature_summaries(vectors, str(tmp_path / "features.csv"))
    assert values[0].equals(values[1])


def test_features_as_fixed_size_lists(tmp_path):
    """Vectors of a fixed-size list column (Arrow's ``FixedSizeList``, as NumPy writers and
    embedding stores write them; Polars' ``Array``): the values of the same vectors as a list
    column."""
    vectors = _features("small", "embeddings")
    fixed = vectors.with_columns(pl.col("features").cast(pl.Array(pl.Float64, 4)))
    fixed.write_parquet(tmp_path / "features.parquet")
    values = _feature_summaries(vectors, fixed, str(tmp_path / "features.parquet"))
    assert values[0].equals(values[1])
    assert values[0].equals(values[2])


def _feature_summaries(*sources) -> list[pl.DataFrame]:
    """The summaries of MS Recommenders' feature diversity and serendipity@3 on the small lists,
    one per source of the item features."""
    lists, train = _msr_inputs("small")
    return [
        _score(
            lists,
            train,
            ["diversity", "serendipity"],
            [3],
            "msrecommenders",
            item_similarity="features",
            item_features=source,
        ).summary
        for source in sources
    ]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("item_id,f0,label\n10,1,x\n", "column 'label': item features are a category column"),
        (
            "item_id,f0,f1\n10,1,2\n10,3,4\n",
            "an item has two feature vectors (first offending key: 10)",
        ),
        (
            "item_id,f0,f1\n10,1,2\n11,0,0\n",
            "all zeros or not finite (its cosine is undefined) (first offending key: 11)",
        ),
        (pl.DataFrame({"item_id": [10, 11], "category": ["a", None]}), "null value"),
        (
            pl.DataFrame({"item_id": [10, 11], "features": [[1.0, 2.0], [1.0]]}),
            "feature vectors of different lengths (2 and another) (first offending key: 11)",
        ),
        ("item,category\n10,a\n", "column 'item_id': missing column"),
    ],
)
def test_bad_item_features_exit_2_naming_the_file(tmp_path, rows, message, capsys):
    from mobeval.cli import main

    path = tmp_path / ("features.csv" if isinstance(rows, str) else "features.parquet")
    if isinstance(rows, str):
        path.write_text(rows)
    else:
        rows.write_parquet(path)
    lists, train = _msr_inputs("small")
    lists.write_parquet(tmp_path / "lists.parquet")
    lists.select("user_id", "item_id", pl.lit(1.0).alias("rating")).write_parquet(
        tmp_path / "ratings.parquet"
    )
    train.write_parquet(tmp_path / "train.parquet")
    code = main(
        [
            "recs",
            "--ratings",
            str(tmp_path / "ratings.parquet"),
            "--recs",
            str(tmp_path / "lists.parquet"),
            "--metrics",
            "diversity",
            "--train",
            str(tmp_path / "train.parquet"),
            "--item-features",
            str(path),
            "--item-similarity",
            "features",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2, err
    assert path.name in err and message in err, err
    assert not (tmp_path / "out").exists()
