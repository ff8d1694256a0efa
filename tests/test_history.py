"""Results over time: a week of nightly runs appended to one OUT under ``date=`` partitions
(``--partition``, a job's ``partition`` table and ``{date}`` in its paths), each night scoring
only the days not yet scored, and the whole history read back as one table by every query
example of docs/outputs.md: DuckDB and Polars, and Spark where Java is present."""

from __future__ import annotations

import json
import re

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from mobeval.api import evaluate_nextloc
from mobeval.cli import main
from tests.conftest import REPO_ROOT

SAMPLES = REPO_ROOT / "data_samples" / "nextloc" / "tky"
DAYS = [f"2026-11-{day}" for day in range(21, 28)]
JOB = """\
out = "out/history"
partition = { date = "*" }

[[tasks]]
type = "nextloc"
city = "tky"
truth = "lake/date={date}/truth.parquet"
k = [1, 5]
[tasks.models]
markov = "lake/date={date}/markov.parquet"
gru = { s1 = "lake/date={date}/markov.parquet", s2 = "lake/date={date}/popularity.parquet" }
"""
#: (model, run, the day's predictions) of every result of a day
RESULTS = [("markov", None, "markov"), ("gru", "s1", "markov"), ("gru", "s2", "popularity")]


def land(lake, index: int) -> None:
    """Day ``index``'s files arrive in the lake: the samples whose id is ``index`` modulo 7."""
    folder = lake / f"date={DAYS[index]}"
    folder.mkdir(parents=True)
    for name in ("truth", "markov", "popularity"):
        frame = pl.read_parquet(SAMPLES / f"{name}.parquet")
        frame.filter(pl.col("sample_id") % 7 == index).write_parquet(folder / f"{name}.parquet")


def finished(out) -> dict[str, str]:
    """When each result of OUT's manifest was written."""
    results = json.loads((out / "manifest.json").read_text())["results"]
    return {name: entry["finished"] for name, entry in results.items()}


@pytest.fixture(scope="module")
def week(tmp_path_factory):
    """A week of nightly runs into one OUT: days 1-3 land and one run scores them all (``date =
    "*"``), days 4-6 each land and are scored by ``--partition date=<day>``, day 7 lands and a
    plain run scores it alone. Returns the folder and each run's manifest times."""
    root = tmp_path_factory.mktemp("nightly")
    job = root / "nightly.toml"
    job.write_text(JOB)
    runs = []
    for index in range(3):
        land(root / "lake", index)
    assert main(["run", str(job), "--quiet", "--format", "csv"]) == 0
    runs.append(finished(root / "out" / "history"))
    for index in range(3, 6):
        land(root / "lake", index)
        argv = ["run", str(job), "--partition", f"date={DAYS[index]}", "--quiet"]
        assert main([*argv, "--format", "csv"]) == 0
        runs.append(finished(root / "out" / "history"))
    land(root / "lake", 6)
    assert main(["run", str(job), "--quiet", "--format", "csv"]) == 0
    runs.append(finished(root / "out" / "history"))
    return root, runs


def name(day: str, model: str, run: str | None) -> str:
    return f"date={day}/city=tky/model={model}" + ("" if run is None else f"/run={run}")


def test_each_night_scores_only_the_new_days(week):
    _, runs = week
    expected = {name(day, model, run) for day in DAYS for model, run, _ in RESULTS}
    assert set(runs[-1]) == expected
    for night, times in enumerate(runs):
        scored = DAYS[: 3 + night]
        assert {n.split("/")[0] for n in times} == {f"date={day}" for day in scored}
        for earlier in runs[:night]:  # what an earlier night wrote is left as it was
            assert {n: times[n] for n in earlier} == earlier


def test_each_day_lies_under_its_partition_in_every_section(week):
    root, _ = week
    out = root / "out" / "history"
    assert sorted(p.name for p in (out / "summary").iterdir()) == [f"date={d}" for d in DAYS]
    for section in ("summary", "per_unit"):
        for day in DAYS:
            for model, run, _ in RESULTS:
                assert list((out / section / name(day, model, run)).glob("*.parquet"))


@pytest.fixture(scope="module")
def expected(week):
    """Each day's results computed in memory from the day's files alone: the summary's rows
    with date, city, model and run."""
    root, _ = week
    rows = []
    for day in DAYS:
        folder = root / "lake" / f"date={day}"
        for model, run, predictions in RESULTS:
            result = evaluate_nextloc(
                folder / "truth.parquet", folder / f"{predictions}.parquet", k=[1, 5]
            )
            where = {"date": day, "city": "tky", "model": model, "run": run}
            names = (pl.lit(v, dtype=pl.String).alias(k) for k, v in where.items())
            rows.append(result.summary.with_columns(names))
    return pl.concat(rows)


def _query_examples() -> list:
    """Every Python block of docs/outputs.md that sets ``out = "..."`` and reads the results
    into ``table`` (one per engine), a Spark one marked spark."""
    text = (REPO_ROOT / "docs" / "outputs.md").read_text()
    blocks = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "\nout = " in f"\n{b}"]
    return [
        pytest.param(block, id=f"example{i}", marks=[pytest.mark.spark] * ("pyspark" in block))
        for i, block in enumerate(blocks)
    ]


QUERIES = _query_examples()


def test_the_page_reads_with_each_engine():
    engines = {e: sum(e in block.values[0] for block in QUERIES) for e in ("duckdb", "pyspark")}
    assert len(QUERIES) >= 5 and engines["duckdb"] >= 2 and engines["pyspark"] >= 1
    assert sum("scan_outputs" in block.values[0] for block in QUERIES) >= 2


def _run_example(block: str, out) -> pl.DataFrame:
    """The example run on ``out``, its ``table`` as a Polars DataFrame."""
    if "pyspark" in block:
        from tests.test_spark import _java_problem

        pytest.importorskip("pyspark")
        if _java_problem():
            pytest.skip(_java_problem())
    pytest.importorskip("duckdb")
    code = re.sub(r'^out = ".*"$', f"out = {str(out)!r}", block, count=1, flags=re.M)
    scope = {"__name__": "docs_example"}
    exec(compile(code, "docs/outputs.md", "exec"), scope)
    table = scope["table"]
    return pl.from_pandas(table.toPandas()) if hasattr(table, "toPandas") else table


@pytest.mark.parametrize("block", QUERIES)
def test_each_query_example_reads_the_whole_week(block, week, expected):
    root, _ = week
    table = _run_example(block, root / "out" / "history")
    where = ["date", "city", "model", "run"]
    assert set(where) <= set(table.columns)
    if "metric" in table.columns:  # a summary
        got = table.select(*where, "metric", "value", "n")
        want = expected.select(*where, "metric", "value", "n")
    else:  # the per-unit rows: one per sample and result
        got = table.group_by(where).len()
        want = expected.filter(pl.col("metric") == "samples").select(
            *where, pl.col("value").cast(pl.UInt32).alias("len")
        )
    order = where + (["metric"] if "metric" in got.columns else [])
    got = got.with_columns(pl.col(c).cast(pl.String) for c in where).sort(order)
    assert_frame_equal(got, want.sort(order), check_dtypes=False, check_exact=True)


@pytest.mark.parametrize("block", QUERIES)
def test_each_query_example_reads_an_out_without_partitions(block, tmp_path):
    """The same query on an OUT of the sample job with a model of several runs beside models of
    one result: no date column to fill (null), every result read."""
    out = tmp_path / "out"
    truth = SAMPLES / "truth.parquet"
    for model, run, predictions in RESULTS:
        evaluate_nextloc(truth, SAMPLES / f"{predictions}.parquet", out=out, model=model, run=run)
    table = _run_example(block, out)
    seen = table.select("city", "model", "run").unique()
    assert sorted(seen.rows(), key=str) == sorted([("tky", m, r) for m, r, _ in RESULTS], key=str)
    if "date" in table.columns:
        assert table["date"].null_count() == table.height


def test_a_partition_is_named_by_the_command_line(tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["nextloc", "--truth", str(SAMPLES / "truth.parquet")]
    argv += ["--pred", str(SAMPLES / "markov.parquet"), "--out", str(out), "--quiet"]
    assert main([*argv, "--partition", "date=2026-11-27", "--partition", "hour=03"]) == 0
    assert list((out / "summary/date=2026-11-27/hour=03/city=tky/model=markov").glob("*.parquet"))
    results = json.loads((out / "manifest.json").read_text())["results"]
    assert list(results) == ["date=2026-11-27/hour=03/city=tky/model=markov"]
    capsys.readouterr()
    for bad, why in [
        ("date", "is not KEY=VALUE"),
        ("Date=1", "lower-case identifier"),
        ("model=x", "lower-case identifier"),
        ("date=a=b", "plain name"),
        ("date=../x", "plain name"),
    ]:
        assert main([*argv, "--partition", bad]) == 2
        assert why in capsys.readouterr().err, bad


def test_one_out_keeps_one_layout(tmp_path, capsys):
    """Results under other partition keys than those OUT holds are refused before any work:
    Spark would refuse the tree."""
    out = tmp_path / "out"
    argv = ["nextloc", "--truth", str(SAMPLES / "truth.parquet")]
    argv += ["--pred", str(SAMPLES / "markov.parquet"), "--out", str(out), "--quiet"]
    assert main([*argv, "--partition", "date=2026-11-27"]) == 0
    before = finished(out)
    capsys.readouterr()
    for other in ([], ["--partition", "day=2026-11-27"], ["--partition", "hour=03"]):
        assert main([*argv, "--model", "other", *other]) == 2
        assert "partitioned otherwise" in capsys.readouterr().err
    assert finished(out) == before
    assert main([*argv, "--partition", "date=2026-11-28"]) == 0  # the same key: appended
    assert len(finished(out)) == 2


def test_a_day_still_coming_is_left_for_a_later_run(tmp_path, capsys):
    for index in range(2):
        land(tmp_path / "lake", index)
    (tmp_path / "lake" / f"date={DAYS[1]}" / "popularity.parquet").unlink()
    (tmp_path / "job.toml").write_text(JOB)
    assert main(["run", str(tmp_path / "job.toml"), "--quiet", "--format", "csv"]) == 0
    err = capsys.readouterr().err
    assert f"date={DAYS[1]}/tky/gru: " in err and "not there yet" in err
    assert set(finished(tmp_path / "out" / "history")) == {
        name(DAYS[0], m, r) for m, r, _ in RESULTS
    } | {name(DAYS[1], "markov", None)}


def test_a_placeholder_names_a_partition(tmp_path, capsys):
    (tmp_path / "job.toml").write_text(JOB.replace('partition = { date = "*" }\n', ""))
    assert main(["run", str(tmp_path / "job.toml"), "--quiet"]) == 2
    assert "tasks[0].truth: {date} names no partition key" in capsys.readouterr().err


def test_a_day_named_must_be_there(tmp_path, capsys):
    """A day given by --partition is required as any job's input is, and an input of a day
    found that cannot be read is named by the file's entry (the job's task, however many days
    it is scored over), nothing written."""
    for index in range(2):
        land(tmp_path / "lake", index)
    (tmp_path / "job.toml").write_text(JOB)
    argv = ["run", str(tmp_path / "job.toml"), "--quiet"]
    assert main([*argv, "--partition", "date=2026-12-01"]) == 2
    err = capsys.readouterr().err
    assert "job.toml: tasks[0].truth:" in err and "date=2026-12-01/truth.parquet" in err
    damaged = tmp_path / "lake" / f"date={DAYS[1]}" / "markov.parquet"
    damaged.unlink()
    damaged.mkdir()  # an empty folder: no data file
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "job.toml: tasks[0].models.markov:" in err and f"date={DAYS[1]}" in err, err
    assert not (tmp_path / "out").exists()


def test_compare_refuses_an_out_of_partitions(week, capsys):
    root, _ = week
    assert main(["compare", str(root / "out" / "history")]) == 2
    assert "compare and report read an OUT without partitions" in capsys.readouterr().err


def test_a_day_scored_again_and_killed_mid_commit_comes_back_whole(tmp_path):
    """A day's result scored again, the run killed after its new summary moved in (the journal
    not yet removed): the next run on OUT puts that day's old result back byte for byte (its
    journal names partitioned folders, and is read as mobeval's own), the other day untouched."""
    import signal
    import subprocess
    import sys

    from mobeval.io.writers import STAGING, output_lock
    from tests.test_output_safety import COMMIT_DRIVER, nextloc_args, snapshot

    out = tmp_path / "out"
    for day in DAYS[:2]:
        assert main([*nextloc_args(out, "--k", "1"), "--partition", f"date={day}"]) == 0
    before = snapshot(out)
    driver = tmp_path / "driver.py"
    driver.write_text(COMMIT_DRIVER)
    argv = [*nextloc_args(out, "--k", "1,5"), "--partition", f"date={DAYS[1]}"]
    killed = subprocess.run(
        [sys.executable, str(driver), "4", *argv], capture_output=True, text=True, cwd=REPO_ROOT
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert list((out / STAGING).glob("commit-*.json"))
    with output_lock(out):
        pass
    assert snapshot(out) == before


def test_the_api_takes_a_partition(tmp_path):
    out = tmp_path / "out"
    truth, pred = SAMPLES / "truth.parquet", SAMPLES / "markov.parquet"
    result = evaluate_nextloc(truth, pred, out=out, partition={"date": DAYS[0]}, progress=False)
    assert result.partition == f"date={DAYS[0]}"
    assert result.outputs["summary"].endswith(f"summary/date={DAYS[0]}/city=tky/model=markov")
    assert list(finished(out)) == [name(DAYS[0], "markov", None)]


@pytest.mark.spark
def test_the_spark_engine_writes_a_day_as_the_local_one_does(week, tmp_path, monkeypatch):
    """One night of the job on the Spark engine: the same folders, the same files' rows."""
    import os
    import sys

    from tests.test_spark import _java_problem

    pytest.importorskip("pyspark")
    if _java_problem():
        pytest.skip(_java_problem())
    monkeypatch.setenv("PYSPARK_PYTHON", os.environ.get("PYSPARK_PYTHON", sys.executable))
    root, _ = week
    spark_out, local_out = tmp_path / "spark", root / "out" / "history"
    argv = ["run", str(root / "nightly.toml"), "--engine", "spark", "--out", str(spark_out)]
    assert main([*argv, "--partition", f"date={DAYS[0]}", "--quiet", "--format", "csv"]) == 0
    assert set(finished(spark_out)) == {name(DAYS[0], m, r) for m, r, _ in RESULTS}
    for section, key in (("summary", "metric"), ("per_unit", "sample_id")):
        for model, run, _ in RESULTS:
            folder = f"{section}/{name(DAYS[0], model, run)}"
            spark, local = (
                pl.read_parquet(o / folder / "*.parquet") for o in (spark_out, local_out)
            )
            assert_frame_equal(spark.sort(key), local.sort(key), check_exact=True)
