"""Cohorts (``cohorts``: a unit -> cohort table): every metric of a result also per cohort, in the
``cohorts`` section, each cohort's values the plain means of its units' per-unit values (oracles
in plain Python below), the result's own summary bit for bit the one without cohorts."""

import json
import math
import subprocess
import sys

import polars as pl
import pytest

from mobeval.api import evaluate_nextloc, evaluate_recs
from mobeval.errors import InputError
from mobeval.jobs import load_job, run_job
from tests.conftest import REPO_ROOT

RECS = REPO_ROOT / "data_samples" / "recs"
TKY = REPO_ROOT / "data_samples" / "nextloc" / "tky"
RATINGS, LISTS, USER_COHORTS = (
    RECS / "ratings.parquet",
    RECS / "mf.parquet",
    RECS / "user_cohorts.csv",
)
TRUTH, MARKOV, SAMPLE_COHORTS = TKY / "truth.parquet", TKY / "markov.parquet", TKY / "cohorts.csv"


def _plain_means(per_unit: pl.DataFrame, table: pl.DataFrame, key: str, metrics: list[str]):
    """cohort -> metric -> (mean, n, sd) of the cohort's per-unit values (NaN left out), with
    math.fsum (the correctly rounded sum) and the population sd."""
    cohort_of = dict(zip(table[key].to_list(), table["cohort"].to_list(), strict=True))
    values: dict[str, dict[str, list[float]]] = {}
    for row in per_unit.iter_rows(named=True):
        by_metric = values.setdefault(cohort_of[row[key]], {})
        for metric in metrics:
            if not math.isnan(row[metric]):
                by_metric.setdefault(metric, []).append(row[metric])
    out = {}
    for cohort, by_metric in values.items():
        out[cohort] = {}
        for metric, vs in by_metric.items():
            mean = math.fsum(vs) / len(vs)
            sd = math.sqrt(math.fsum((v - mean) ** 2 for v in vs) / len(vs))
            out[cohort][metric] = (mean, len(vs), sd)
    return out


def _rows(cohorts: pl.DataFrame) -> dict:
    return {(c, m): (v, n, sd) for c, m, v, n, sd in cohorts.iter_rows()}


@pytest.mark.parametrize("chunk_rows", [100_000, 97])
def test_recs_cohorts_are_the_plain_means_of_their_users(chunk_rows):
    metrics = ["ndcg@10", "map@10", "precision@5", "recall@10", "mrr@10"]
    plain = evaluate_recs(RATINGS, LISTS, metrics=metrics)
    sliced = evaluate_recs(
        RATINGS, LISTS, metrics=metrics, cohorts=USER_COHORTS, chunk_rows=chunk_rows
    )
    assert sliced.summary.equals(plain.summary)  # the whole result's rows, bit for bit
    table = pl.read_csv(USER_COHORTS)
    expected = _plain_means(plain.per_unit, table, "user_id", metrics)
    got = _rows(sliced.tables["cohorts"])
    assert sliced.tables["cohorts"]["cohort"].unique(maintain_order=True).to_list() == [
        "critical",
        "generous",
    ]
    for cohort, by_metric in expected.items():
        for metric, (mean, n, sd) in by_metric.items():
            value, count, std = got[(cohort, metric)]
            assert value == mean and count == n, (cohort, metric)
            assert std == pytest.approx(sd, rel=1e-12, abs=1e-15)
        users = table.filter(pl.col("cohort") == cohort).height
        assert got[(cohort, "users")][:2] == (users, users)


def test_recs_population_metric_per_cohort_is_the_cohorts_lists_alone():
    """gini@10 of a cohort: ClayRS's Gini of the items' counts in the cohort's top-10 lists."""
    sliced = evaluate_recs(RATINGS, LISTS, metrics=["gini@10"], cohorts=USER_COHORTS)
    table = pl.read_csv(USER_COHORTS)
    lists = pl.read_parquet(LISTS).join(table, on="user_id")
    for cohort in ("critical", "generous"):
        counts = {}
        for _, items in (
            lists.filter(pl.col("cohort") == cohort)
            .sort("score", descending=True, maintain_order=True)
            .group_by("user_id", maintain_order=True)
            .agg(pl.col("item_id").head(10))
            .iter_rows()
        ):
            for item in items:
                counts[item] = counts.get(item, 0) + 1
        x = sorted(counts.values())
        n = len(x)
        gini = sum((2 * (i + 1) - n - 1) * v for i, v in enumerate(x)) / (n * sum(x))
        value = _rows(sliced.tables["cohorts"])[(cohort, "gini@10")][0]
        assert value == pytest.approx(gini, rel=1e-12)


@pytest.mark.parametrize("chunk_rows", [1_000_000, 331])
def test_nextloc_cohorts_are_the_plain_means_and_libcity_f1_of_their_samples(chunk_rows):
    options = {"k": [1, 5], "metrics": ["acc@k", "mrr", "ndcg@k", "f1@k"], "convention": "libcity"}
    plain = evaluate_nextloc(TRUTH, MARKOV, **options)
    sliced = evaluate_nextloc(
        TRUTH, MARKOV, cohorts=SAMPLE_COHORTS, chunk_rows=chunk_rows, **options
    )
    assert sliced.summary.equals(plain.summary)
    table = pl.read_csv(SAMPLE_COHORTS)
    means = ["acc@1", "acc@5", "mrr", "ndcg@1", "ndcg@5"]
    expected = _plain_means(plain.per_unit, table, "sample_id", means)
    got = _rows(sliced.tables["cohorts"])
    for cohort, by_metric in expected.items():
        for metric, (mean, n, _) in by_metric.items():
            assert got[(cohort, metric)][:2] == (mean, n)
        for k in (1, 5):  # LibCity: F1 of the summed hits, P = hits / (N k), R = hits / N
            n = by_metric[f"acc@{k}"][1]
            hits = by_metric[f"acc@{k}"][0] * n
            p, r = hits / (n * k), hits / n
            assert got[(cohort, f"f1@{k}")][0] == pytest.approx(2 * p * r / (p + r), rel=1e-12)
        assert got[(cohort, "samples")][0] == table.filter(pl.col("cohort") == cohort).height


def test_a_cohort_table_of_part_of_the_key_joins_on_that_part():
    """Key uid,d (a sample per uid and day), cohorts per uid: the table's key columns are those
    of the unit key it holds."""
    truth = pl.DataFrame(
        {"uid": [1, 1, 2, 2, 3], "d": [0, 1, 0, 1, 0], "location": [5, 6, 5, 7, 8]}
    )
    pred = pl.DataFrame(
        {
            "uid": [1, 1, 1, 2, 2, 3],
            "d": [0, 0, 1, 0, 1, 0],
            "location": [5, 9, 7, 5, 6, 8],
            "score": [0.9, 0.5, 0.8, 0.4, 0.7, 0.6],
        }
    )
    table = pl.DataFrame({"uid": ["1", "2", "3"], "cohort": ["a", "b", "a"]})  # ids as text
    result = evaluate_nextloc(
        truth, pred, key=["uid", "d"], k=[1], metrics=["acc@1"], cohorts=table
    )
    got = _rows(result.tables["cohorts"])
    # uid 1: day 0 hit (5 first), day 1 miss; uid 3: hit -> a: 2 / 3; uid 2: day 0 hit, day 1 miss
    assert got[("a", "acc@1")][:2] == (2 / 3, 3)
    assert got[("b", "acc@1")][:2] == (0.5, 2)


def test_a_unit_without_a_cohort_is_named_or_unassigned():
    table = pl.read_csv(USER_COHORTS).filter(~pl.col("user_id").is_in([7, 11]))
    with pytest.raises(InputError) as error:
        evaluate_recs(RATINGS, LISTS, metrics=["ndcg@10"], cohorts=table)
    assert "column 'user_id'" in str(error.value) and "first offending key: 7)" in str(error.value)
    assert "cohort_missing='unassigned'" in str(error.value)
    result = evaluate_recs(
        RATINGS, LISTS, metrics=["ndcg@10"], cohorts=table, cohort_missing="unassigned"
    )
    per_user = result.per_unit.filter(pl.col("user_id").is_in([7, 11]))
    value, n, _ = _rows(result.tables["cohorts"])[("unassigned", "ndcg@10")]
    assert n == 2 and value == math.fsum(per_user["ndcg@10"].to_list()) / 2


@pytest.mark.parametrize(
    ("table", "column", "text"),
    [
        (pl.DataFrame({"user_id": [1, 1], "cohort": ["a", "b"]}), "user_id", "given twice"),
        (pl.DataFrame({"user_id": [1, 2], "group": ["a", "b"]}), "cohort", "missing column"),
        (pl.DataFrame({"user": [1, 2], "cohort": ["a", "b"]}), "user_id", "no column of the unit"),
        (pl.DataFrame({"user_id": [1, 2], "cohort": ["a", None]}), "cohort", "null value"),
    ],
)
def test_a_bad_cohort_table_is_refused_before_any_row(table, column, text):
    with pytest.raises(InputError) as error:
        evaluate_recs(RATINGS, LISTS, metrics=["ndcg@10"], cohorts=table)
    assert f"column '{column}'" in str(error.value) and text in str(error.value)


def _mobeval(*args: str, cwd=REPO_ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mobeval", *args], capture_output=True, text=True, cwd=cwd
    )


def test_command_line_prints_and_writes_the_cohorts(tmp_path):
    args = ["recs", "--ratings", str(RATINGS), "--recs", str(LISTS), "--metrics", "ndcg@10"]
    done = _mobeval(*args, "--cohorts", str(USER_COHORTS), "--format", "csv")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "city,cohort,model,metric,value,n,std"
    assert lines[1].startswith("recs,,mf,ndcg@10,") and lines[4].startswith("recs,critical,mf,")
    out = tmp_path / "out"
    done = _mobeval(*args, "--cohorts", str(USER_COHORTS), "--out", str(out), "--format", "json")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    written = pl.read_parquet(out / "cohorts" / "city=recs" / "model=mf" / "*.parquet")
    assert sorted(printed["cohorts"]) == ["critical", "generous"]
    assert printed["cohorts"]["generous"]["ndcg@10"] == _rows(written)[("generous", "ndcg@10")][0]
    missing = tmp_path / "some.csv"
    missing.write_text("user_id,cohort\n0,a\n")
    done = _mobeval(*args, "--cohorts", str(missing))
    assert done.returncode == 2 and "first offending key: 1" in done.stderr
    assert "--cohort-missing unassigned" in done.stderr and "Traceback" not in done.stderr


def test_job_file_key(tmp_path):
    job = tmp_path / "job.toml"
    job.write_text(
        f'[[tasks]]\ntype = "recs"\ncity = "ml"\ntruth = "{RATINGS}"\nmodels = {{mf = "{LISTS}"}}\n'
        f'metrics = ["ndcg@10"]\ncohorts = "{USER_COHORTS}"\n'
    )
    [result] = run_job(load_job(job, out=tmp_path / "out"), log=lambda _: None)
    assert (tmp_path / "out" / "cohorts" / "city=ml" / "model=mf").is_dir()
    direct = evaluate_recs(RATINGS, LISTS, metrics=["ndcg@10"], cohorts=USER_COHORTS)
    written = pl.read_parquet(tmp_path / "out" / "cohorts" / "city=ml" / "model=mf" / "*.parquet")
    assert written.equals(direct.tables["cohorts"])


def test_compare_pairs_the_units_of_each_cohort(tmp_path):
    """Within a cohort: the paired t-test of scipy over the cohort's users alone; the whole
    comparison as without cohorts, and alone written to OUT/compare."""
    from scipy import stats

    from mobeval.compare import compare

    out = tmp_path / "out"
    for name in ("mf", "popular"):
        evaluate_recs(
            RATINGS, RECS / f"{name}.parquet", metrics=["map@10"], cohorts=USER_COHORTS, out=out
        )
    options = {"tests": "paired-t", "resamples": 0, "correction": "none", "log": None}
    table = compare(out, cohorts=True, write=True, **options)
    whole = compare(out, **options)
    assert table.filter(pl.col("cohort").is_null()).drop("cohort").equals(whole)
    per_user = {
        name: pl.read_parquet(out / "per_unit" / "city=recs" / f"model={name}" / "*.parquet")
        for name in ("mf", "popular")
    }
    for cohort in ("critical", "generous"):
        row = table.filter(pl.col("cohort") == cohort).row(0, named=True)
        a, b = (
            per_user[m].filter(pl.col("cohort") == cohort).sort("user_id")["map@10"].to_list()
            for m in ("mf", "popular")
        )
        assert (row["baseline"], row["model"], row["n"]) == ("mf", "popular", len(a))
        assert row["mean_baseline"] == pytest.approx(math.fsum(a) / len(a), rel=1e-12)
        assert row["p_t"] == pytest.approx(stats.ttest_rel(b, a).pvalue, rel=1e-9)
    stored = pl.read_parquet(out / "compare" / "city=recs" / "part-0.parquet")
    assert "cohort" not in stored.columns and stored.height == whole.height


def test_report_shows_each_cohorts_values(tmp_path):
    from mobeval.report import Report

    out = tmp_path / "out"
    for name in ("mf", "popular"):
        evaluate_recs(
            RATINGS, RECS / f"{name}.parquet", metrics=["ndcg@10"], cohorts=USER_COHORTS, out=out
        )
    text = Report(out, plots=False, compute_compare=False).to_markdown()
    section = text.split("### Per cohort, city=recs")[1].split("## Methods")[0]
    cohorts = {
        name: pl.read_parquet(out / "cohorts" / "city=recs" / f"model={name}" / "*.parquet")
        for name in ("mf", "popular")
    }
    for cohort in ("critical", "generous"):
        values = [_rows(cohorts[m])[(cohort, "ndcg@10")][0] for m in ("mf", "popular")]
        assert f"| {cohort} | ndcg@10 | {values[0]:.4f} | {values[1]:.4f} |" in section
        users = _rows(cohorts["mf"])[(cohort, "users")][0]
        assert f"| {cohort} | users | {int(users):,} | {int(users):,} |" in section


def test_report_shows_each_runs_cohort_values(tmp_path):
    """A model with runs (seeds): a column per run (model/run) beside the model without."""
    from mobeval.report import Report

    out = tmp_path / "out"
    lists = pl.read_parquet(RECS / "popular.parquet")  # the models in the order scored
    for run, rows in (("seed1", lists), ("seed2", lists.sample(fraction=0.8, seed=3))):
        evaluate_recs(
            RATINGS,
            rows,
            metrics=["ndcg@10"],
            cohorts=USER_COHORTS,
            out=out,
            model="popular",
            run=run,
        )
    evaluate_recs(RATINGS, LISTS, metrics=["ndcg@10"], cohorts=USER_COHORTS, out=out, model="mf")
    text = Report(out, plots=False, compute_compare=False).to_markdown()
    section = text.split("### Per cohort, city=")[1].split("## Methods")[0]
    assert "| cohort | metric | popular/seed1 | popular/seed2 | mf |" in section
    folders = [*((r, f"model=popular/run={r}") for r in ("seed1", "seed2")), ("mf", "model=mf")]
    cohorts = {
        name: _rows(pl.read_parquet(next(out.glob(f"cohorts/city=*/{folder}/*.parquet"))))
        for name, folder in folders
    }
    assert cohorts["seed1"] != cohorts["seed2"]
    for cohort in ("critical", "generous"):
        values = [cohorts[name][(cohort, "ndcg@10")][0] for name, _ in folders]
        assert f"| {cohort} | ndcg@10 | " + " | ".join(f"{v:.4f}" for v in values) in section


def test_an_accumulator_merges_the_cohorts_folds():
    """Two processes' batches of users, merged: the cohorts of evaluate_recs on them all."""
    from mobeval.accumulate import RecsAccumulator

    ratings, lists = pl.read_parquet(RATINGS), pl.read_parquet(LISTS)
    options = {"metrics": ["ndcg@10", "map@10"], "cohorts": USER_COHORTS}
    parts = [RecsAccumulator(**options), RecsAccumulator(**options)]
    halves = (pl.col("user_id") < 100, pl.col("user_id") >= 100)
    for accumulator, users in zip(parts, halves, strict=True):
        accumulator.update(ratings.filter(users), lists.filter(users))
    parts[0].merge(parts[1])
    merged = parts[0].compute()
    whole = evaluate_recs(ratings, lists, **options)
    assert merged.summary.equals(whole.summary)
    assert merged.tables["cohorts"].equals(whole.tables["cohorts"])
