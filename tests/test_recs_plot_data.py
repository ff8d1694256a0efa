"""ClayRS's plot metrics as data (``long_tail``, ``popularity_correlation`` sections): the series
ClayRS 0.5.1's LongTailDistr and PopRecsCorrelation hand to matplotlib (golden values, on its own
test case and on data_samples/recs), plain-Python oracles for the cutoffs, the same tables for any
chunking and user order, and the sections replaced when a model is scored again."""

from __future__ import annotations

import json
from collections import Counter

import polars as pl
import pytest

from mobeval.api import evaluate_recs
from mobeval.errors import ConfigError
from tests.conftest import GOLDEN, REPO_ROOT
from tests.test_recs_engine import shuffle_users
from tests.test_recs_population import DG_LISTS, PR_ORIGINAL

SAMPLES = REPO_ROOT / "data_samples" / "recs"
CASES = json.loads((GOLDEN / "beyond" / "plots.json").read_text())["cases"]
METRICS = ["long_tail", "popularity_correlation"]

# ClayRS test/evaluation/metrics/test_plot_metrics.py: its truth (u6 has no list)
CLAYRS_TRUTH = pl.DataFrame(
    {
        "user_id": ["u1", "u1", "u2", "u3", "u3", "u4", "u4", "u4", "u5", "u6"],
        "item_id": ["i7", "i8", "i55", "i10", "i14", "i9", "i17", "i99", "i21", "inew_2"],
        "rating": [3.0, 1.0, 1.0, 1.0, 4.0, 3.0, 3.0, 3.0, 1.0, 3.0],
    }
)
CLAYRS_LISTS = pl.DataFrame(
    {
        "user_id": [u for u, items in DG_LISTS.items() for _ in items],
        "item_id": [i for items in DG_LISTS.values() for i in items],
    }
)


def _inputs(case: str, tmp_path):
    """(ratings, lists, original ratings) of a golden case."""
    if case == "clayrs_test":
        original = tmp_path / "original.parquet"
        PR_ORIGINAL.write_parquet(original)
        return CLAYRS_TRUTH, CLAYRS_LISTS, str(original)
    model = case.removeprefix("data_samples_")
    return SAMPLES / "ratings.parquet", SAMPLES / f"{model}.parquet", str(SAMPLES / "train.parquet")


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_series_clayrs_plots(case, tmp_path):
    """The long tails' curves (counts by position) are ClayRS's y; each item has ClayRS's count
    (ClayRS breaks ties by first appearance, mobeval by item id: the curve is the same); each
    item of the original ratings has ClayRS's popularity and number of recommendations, and the
    'no_zeros' scatter is the items recommended at least once."""
    want = CASES[case]
    ratings, lists, original = _inputs(case, tmp_path)
    result = evaluate_recs(
        ratings,
        lists,
        metrics=METRICS,
        k=None,
        train=original,
        chunk_rows=7,
        require_same_users=False,  # u6 has ratings, no list: ClayRS's plot metrics take it
    )
    assert result.summary["metric"].to_list() == ["users"]  # no summary row of their own
    long_tail = result.tables["long_tail"]
    for side, name in (("truth", "long_tail_truth"), ("recs", "long_tail_pred")):
        curve = long_tail.filter(pl.col("side") == side)
        assert curve["position"].to_list() == want[name]["x"]
        assert curve["count"].to_list() == want[name]["y"]
        mine = Counter(zip(curve["item_id"].cast(pl.String), curve["count"], strict=True))
        assert mine == Counter(zip(want[name]["items"], want[name]["y"], strict=True))
    table = result.tables["popularity_correlation"]
    got = {
        str(item): (popularity, recommended)
        for item, popularity, recommended in table.select(
            "item_id", "popularity", "recommended"
        ).iter_rows()
    }
    scatter = want["pop_recs_correlation"]
    pairs = zip(scatter["popularity"], scatter["recommendations"], strict=True)
    assert got == dict(zip(scatter["items"], pairs, strict=True))
    no_zeros = table.filter(pl.col("recommended") > 0)
    assert Counter(no_zeros.select("popularity", "recommended").iter_rows()) == Counter(
        zip(scatter["no_zeros_popularity"], scatter["no_zeros_recommendations"], strict=True)
    )


def test_a_cutoff_counts_the_first_k_items_of_each_list():
    """long_tail@2 and popularity_correlation@2 against plain Python over the first 2 items."""
    original = SAMPLES / "train.parquet"
    lists = pl.read_parquet(SAMPLES / "popular.parquet")
    result = evaluate_recs(
        SAMPLES / "ratings.parquet",
        lists,
        metrics=["long_tail@2", "popularity_correlation@2"],
        k=None,
        train=str(original),
    )
    heads: dict = {}
    for user, item in lists.select("user_id", "item_id").iter_rows():
        heads.setdefault(user, []).append(item)
    counts = Counter(item for items in heads.values() for item in items[:2])
    recs = result.tables["long_tail"].filter(pl.col("side") == "recs")
    assert recs["metric"].unique().to_list() == ["long_tail@2"]
    assert dict(zip(recs["item_id"], recs["count"], strict=True)) == counts
    assert recs["count"].to_list() == sorted(counts.values(), reverse=True)
    train = pl.read_parquet(original)
    rows = Counter(train["item_id"].to_list())
    users = train["user_id"].n_unique()
    table = result.tables["popularity_correlation"]
    assert {
        item: (ratings, popularity, recommended)
        for _, item, ratings, popularity, recommended in table.iter_rows()
    } == {item: (n, n / users, counts.get(item, 0)) for item, n in rows.items()}


def test_the_tables_do_not_depend_on_the_chunking_or_the_user_order():
    lists = pl.read_parquet(SAMPLES / "mf.parquet")
    ratings = pl.read_parquet(SAMPLES / "ratings.parquet")
    options = {"metrics": METRICS, "k": [5, 20], "train": str(SAMPLES / "train.parquet")}
    whole = evaluate_recs(ratings, lists, **options)
    for chunk_rows in (13, 1000):
        again = evaluate_recs(
            shuffle_users(ratings), shuffle_users(lists), chunk_rows=chunk_rows, **options
        )
        for section in ("long_tail", "popularity_correlation"):
            assert again.tables[section].equals(whole.tables[section]), (section, chunk_rows)
    metrics = whole.tables["long_tail"]["metric"].unique(maintain_order=True).to_list()
    assert metrics == ["long_tail@5", "long_tail@20"]


def test_the_sections_are_written_and_go_when_the_model_is_scored_without_them(tmp_path):
    options = {"out": tmp_path, "model": "mf", "k": [10], "train": str(SAMPLES / "train.parquet")}
    ratings, lists = SAMPLES / "ratings.parquet", SAMPLES / "mf.parquet"
    written = evaluate_recs(ratings, lists, metrics=["ndcg", *METRICS], **options)
    del options["out"]
    in_memory = evaluate_recs(ratings, lists, metrics=["ndcg", *METRICS], **options)
    for section in METRICS:
        assert pl.read_parquet(written.outputs[section]).equals(in_memory.tables[section])
    options["out"] = tmp_path
    again = evaluate_recs(ratings, lists, metrics=["ndcg"], **options)
    for section in METRICS:
        assert section not in again.outputs
        assert not (tmp_path / section).exists()


def test_popularity_correlation_needs_the_original_ratings():
    with pytest.raises(ConfigError, match=r"popularity_correlation@1 needs the training"):
        evaluate_recs(SAMPLES / "ratings.parquet", SAMPLES / "mf.parquet", metrics=METRICS)


def test_the_report_draws_the_long_tail_and_the_scatter_of_every_model(tmp_path, monkeypatch):
    """The city's popularity figure: two panels (long tail, popularity vs recommendations), both
    axes labelled, the ratings' curve once and one curve and one scatter per model, drawn from
    the written sections; in the Markdown report with its caption."""
    pytest.importorskip("matplotlib")
    from mobeval.cli import main
    from mobeval.report import plots

    train = str(SAMPLES / "train.parquet")
    for model in ("mf", "popular"):
        argv = ["recs", "--ratings", str(SAMPLES / "ratings.parquet"), "--k", "10"]
        argv += ["--recs", str(SAMPLES / f"{model}.parquet"), "--train", train]
        assert (
            main(
                [
                    *argv,
                    "--metrics",
                    "ndcg,long_tail,popularity_correlation",
                    "--out",
                    str(tmp_path),
                ]
            )
            == 0
        )
    drawn = {}
    draw = plots._figure

    def inspected(plt, figure, name, caption):
        panels = [ax for ax in figure.axes if ax.axison]
        drawn[name] = panels, caption
        assert all(ax.get_xlabel() and ax.get_ylabel() for ax in panels), name
        return draw(plt, figure, name, caption)

    monkeypatch.setattr(plots, "_figure", inspected)
    assert main(["report", str(tmp_path), "--format", "markdown"]) == 0
    panels, caption = drawn["recs-popularity.png"]
    tail, scatter = panels
    assert [line.get_label() for line in tail.get_lines()] == [
        "ratings",
        "mf (long_tail@10)",
        "popular (long_tail@10)",
    ]
    truth = pl.read_parquet(SAMPLES / "ratings.parquet")["item_id"].value_counts()["count"]
    assert list(tail.get_lines()[0].get_ydata()) == sorted(truth.to_list(), reverse=True)
    assert len(scatter.collections) == 2  # one scatter per model
    items = pl.read_parquet(train)["item_id"].n_unique()
    assert [len(c.get_offsets()) for c in scatter.collections] == [items, items]
    assert "recs: long tail and popularity vs recommendations of mf, popular" in caption
    report = (tmp_path / "report" / "report.md").read_text()
    assert "report_files/recs-popularity.png)" in report
