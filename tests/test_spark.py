"""The Spark engine against the local engine: the same numbers and the same messages.

One local[2] SparkSession serves the module. Skipped, with the reason, when PySpark or Java is
missing (``pip install 'mobeval[spark]'``; Java 17 or 21).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from mobeval import progress
from mobeval.api import evaluate_logits, evaluate_nextloc, evaluate_recs, evaluate_trajectory
from mobeval.errors import ConfigError, InputError
from mobeval.jobs import load_job, run_job
from tests.conftest import GOLDEN, REPO_ROOT

pytestmark = pytest.mark.spark
pytest.importorskip("pyspark", reason="PySpark is not installed: pip install 'mobeval[spark]'")

SUMMARY_RTOL = 1e-12


def _java_problem() -> str | None:
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not Path(java).exists():
        return "no Java runtime (set JAVA_HOME or put java on PATH; Spark 4 needs Java 17+)"
    try:
        subprocess.run([java, "-version"], capture_output=True, check=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as error:
        return f"Java does not run ({error})"
    return None


@pytest.fixture(scope="module")
def spark():
    problem = _java_problem()
    if problem:
        pytest.skip(problem)
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("mobeval-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.memory", "1g")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def assert_same_summary(spark_summary: pl.DataFrame, local_summary: pl.DataFrame) -> None:
    assert spark_summary["metric"].to_list() == local_summary["metric"].to_list()
    assert spark_summary["n"].to_list() == local_summary["n"].to_list()
    np.testing.assert_allclose(
        spark_summary["value"].to_numpy(), local_summary["value"].to_numpy(), rtol=SUMMARY_RTOL
    )


def assert_same_rows(spark_rows: pl.DataFrame, local_rows: pl.DataFrame, key: list[str]) -> None:
    assert spark_rows.columns == local_rows.columns
    assert spark_rows.schema == local_rows.schema
    assert spark_rows.sort(key).equals(local_rows.sort(key))


SECTION_KEYS = {"per_unit": None, "per_day": ["uid", "d"]}


def assert_same_outputs(spark_out: Path, local_out: Path, key: list[str]) -> None:
    local_dirs = sorted(p.relative_to(local_out) for p in local_out.glob("*/city=*/model=*"))
    spark_dirs = sorted(p.relative_to(spark_out) for p in spark_out.glob("*/city=*/model=*"))
    assert spark_dirs == local_dirs and local_dirs
    for relative in local_dirs:
        section = relative.parts[0]
        # Spark's part files only: no _SUCCESS marker nor .crc checksums beside them.
        assert all(p.suffix == ".parquet" for p in (spark_out / relative).iterdir())
        spark_rows = pl.read_parquet(spark_out / relative)
        local_rows = pl.read_parquet(local_out / relative)
        if section == "summary":
            assert_same_summary(spark_rows, local_rows)
        else:
            assert_same_rows(spark_rows, local_rows, SECTION_KEYS[section] or key)


@pytest.mark.parametrize(
    ("job_file", "key"),
    [
        ("nextloc_sample.toml", ["sample_id"]),
        ("trajectory_sample.toml", ["uid"]),
        ("recs_sample.toml", ["user_id"]),
        ("logits_sample.toml", ["row"]),
    ],
)
def test_sample_jobs_give_the_local_outputs(spark, tmp_path, job_file, key):
    job_path = REPO_ROOT / "jobs" / job_file
    local = run_job(load_job(job_path, out=tmp_path / "local"), progress=False, log=lambda _: None)
    log = []
    on_spark = run_job(load_job(job_path, out=tmp_path / "spark"), log=log.append, spark=spark)
    assert [(e.city, e.model) for e in on_spark] == [(e.city, e.model) for e in local]
    for spark_result, local_result in zip(on_spark, local, strict=True):
        assert_same_summary(spark_result.summary, local_result.summary)
    assert_same_outputs(tmp_path / "spark", tmp_path / "local", key)
    summaries = pl.read_parquet(tmp_path / "spark" / "summary" / "**" / "*.parquet")
    assert summaries.height == sum(e.summary.height for e in local)
    assert (tmp_path / "spark" / "manifest.json").is_file()
    # --resume: everything is complete for the same options and inputs.
    log.clear()
    again = run_job(
        load_job(job_path, out=tmp_path / "spark"), resume=True, log=log.append, spark=spark
    )
    assert all("resumed from OUT (--resume)" in line for line in log)
    assert [e.resumed for e in again] == [True] * len(local)
    for resumed, local_result in zip(again, local, strict=True):
        assert_same_summary(resumed.summary, local_result.summary)


def _tied_predictions(seed: int = 7) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Long-form predictions with many tied scores, not sorted by sample; some samples have no
    truth (dropped), some truth rows have no predictions."""
    rng = np.random.default_rng(seed)
    rows = []
    for sample in rng.permutation(400):
        n = int(rng.integers(1, 15))
        locations = rng.choice(60, size=n, replace=False)
        scores = rng.integers(0, 4, size=n).astype(float)
        rows.extend(
            (int(sample), int(loc), float(s)) for loc, s in zip(locations, scores, strict=True)
        )
    predictions = pl.DataFrame(
        rows,
        schema={"sample_id": pl.Int64, "location": pl.Int64, "score": pl.Float64},
        orient="row",
    )
    truth = pl.DataFrame(
        {"sample_id": np.arange(20, 430), "location": rng.integers(0, 60, size=410)}
    )
    return truth, predictions


def test_tiny_input_splits_and_several_files_give_the_same_numbers(spark, tmp_path):
    truth, predictions = _tied_predictions()
    directory = tmp_path / "pred"
    directory.mkdir()
    # Every sample's rows dealt over three files of many small row groups: with 2 KB splits they
    # come from several input partitions (which Spark orders by size, not by name), and their
    # input order (file name, then position) must survive the shuffle for the "input" ties.
    dealt = predictions.with_row_index("row").with_columns(pl.col("row") % 3)
    for (index,), frame in dealt.partition_by("row", as_dict=True).items():
        frame.drop("row").write_parquet(directory / f"part-{index}.parquet", row_group_size=64)
    truth.write_parquet(tmp_path / "truth.parquet")
    options = {"k": [1, 3, 5], "convention": "ranx", "unmatched": "drop"}
    local = evaluate_nextloc(tmp_path / "truth.parquet", directory, chunk_rows=100, **options)
    previous = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "2048")
    try:
        pred_frame = spark.read.parquet(str(directory))
        assert pred_frame.rdd.getNumPartitions() >= 6
        on_spark = evaluate_nextloc(
            tmp_path / "truth.parquet",
            directory,
            chunk_rows=50,
            partitions=3,
            **options,
            spark=spark,
        )
        libcity = {"k": [1, 5], "convention": "mobeval", "ties": "average", "unmatched": "drop"}
        libcity_local = evaluate_nextloc(tmp_path / "truth.parquet", directory, **libcity)
        libcity_spark = evaluate_nextloc(
            tmp_path / "truth.parquet", directory, partitions=5, **libcity, spark=spark
        )
    finally:
        spark.conf.set("spark.sql.files.maxPartitionBytes", previous)
    assert local.value("predictions_without_truth_dropped") == 20
    assert local.value("samples_without_predictions") == 30
    assert_same_summary(on_spark.summary, local.summary)
    assert_same_rows(on_spark.per_unit, local.per_unit, ["sample_id"])
    assert_same_summary(libcity_spark.summary, libcity_local.summary)
    assert_same_rows(libcity_spark.per_unit, libcity_local.per_unit, ["sample_id"])


def test_trajectory_tiny_splits(spark, tmp_path):
    name = GOLDEN / "geobleu" / "random_realistic"
    generated = pl.read_parquet(name / "generated.parquet").sample(fraction=1.0, seed=3)
    directory = tmp_path / "generated"
    directory.mkdir()
    for index, part in enumerate(np.array_split(np.arange(generated.height), 4)):
        generated[part.tolist()].write_parquet(directory / f"g{index}.parquet", row_group_size=500)
    local = evaluate_trajectory(name / "reference.parquet", directory, chunk_rows=5000)
    previous = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "2048")
    try:
        on_spark = evaluate_trajectory(
            name / "reference.parquet", directory, chunk_rows=3000, partitions=3, spark=spark
        )
    finally:
        spark.conf.set("spark.sql.files.maxPartitionBytes", previous)
    assert_same_summary(on_spark.summary, local.summary)
    assert_same_rows(on_spark.tables["per_unit"], local.tables["per_unit"], ["uid"])
    assert_same_rows(on_spark.tables["per_day"], local.tables["per_day"], ["uid", "d"])


def test_trajectory_exp_option_reaches_the_workers(spark):
    """exp="numpy" (NumPy's exp / log, as the reference: they differ from libm's on AVX-512 CPUs,
    see tests/test_geobleu_exp.py) gives the local engine's values on Spark too."""
    samples = REPO_ROOT / "data_samples" / "humob"
    reference, generated = samples / "reference_test.csv.gz", samples / "weekly_repeat.csv.gz"
    local = evaluate_trajectory(reference, generated, exp="numpy")
    on_spark = evaluate_trajectory(reference, generated, exp="numpy", partitions=2, spark=spark)
    assert_same_summary(on_spark.summary, local.summary)
    assert_same_rows(on_spark.tables["per_day"], local.tables["per_day"], ["uid", "d"])
    with pytest.raises(ConfigError, match="exp="):
        evaluate_trajectory(reference, generated, exp="fast", spark=spark)


def test_trajectory_population_rows_on_spark_are_the_local_bits(spark, tmp_path):
    """The population divergences (histograms folded per partition, merged on the driver), their
    bootstrap intervals, uid-share and per-day rows, and the histograms themselves
    (``distributions``, collected and written under OUT, removed when the model is scored again
    without them): the local engine's bits on Spark, over 3 partitions."""
    samples = REPO_ROOT / "data_samples" / "humob"
    reference, generated = samples / "reference_test.csv.gz", samples / "weekly_repeat.csv.gz"
    options = {"metrics": ["radius", "grank", "irank"], "uid_shares": [40], "chunk_rows": 200}
    options |= {"per_day_divergences": True, "population_resamples": 20}
    local = evaluate_trajectory(reference, generated, **options)
    on_spark = evaluate_trajectory(reference, generated, partitions=3, spark=spark, **options)
    assert local.summary["metric"].to_list()[:12] == [
        "jsd_radius", "jsd_radius:low", "jsd_radius:high", "jsd_grank", "jsd_grank:low",
        "jsd_grank:high", "jsd_irank", "jsd_irank:low", "jsd_irank:high",
        "jsd_radius@40%", "jsd_grank@40%", "jsd_irank@40%",
    ]  # fmt: skip
    assert "jsd_irank@d=60" in local.summary["metric"].to_list()
    assert on_spark.summary.equals(local.summary)
    histograms = local.tables["distributions"]
    assert histograms["distribution"].unique(maintain_order=True).to_list() == options["metrics"]
    assert on_spark.tables["distributions"].equals(histograms)
    written = evaluate_trajectory(
        reference, generated, partitions=3, spark=spark, out=tmp_path, model="m", **options
    )
    assert pl.read_parquet(written.outputs["distributions"]).equals(histograms)
    options = {"metrics": ["geobleu"], "chunk_rows": 200}  # again without them: the old go too
    again = evaluate_trajectory(
        reference, generated, partitions=3, spark=spark, out=tmp_path, model="m", **options
    )
    assert "distributions" not in again.outputs
    assert not Path(written.outputs["distributions"].removeprefix("file:")).exists()
    assert Path(again.outputs["summary"].removeprefix("file:")).is_dir()


RECS = REPO_ROOT / "data_samples" / "recs"
RECS_OPTIONS = {"metrics": ["precision", "recall", "ndcg", "map", "mrr"], "cutoffs": [3, 10]}


def test_trajectory_generation_rows_on_spark_are_the_local_bits(spark):
    """The generation metrics (tallies and trajectory hashes folded per partition, merged on the
    driver; TrajGDM's preset, its JS distance by scipy), their intervals and uid-share rows: the
    local engine's bits on Spark, over 3 partitions."""
    samples = REPO_ROOT / "data_samples" / "humob"
    reference, generated = samples / "reference_test.csv.gz", samples / "weekly_repeat.csv.gz"
    options = {"metrics": ["jump", "location", "od", "duplicate_ratio", "memorised_near"]}
    options |= {"convention": "trajgdm", "divergence": "jsdist", "uid_shares": [40]}
    options |= {"population_resamples": 10, "chunk_rows": 200}
    local = evaluate_trajectory(reference, generated, **options)
    on_spark = evaluate_trajectory(reference, generated, partitions=3, spark=spark, **options)
    assert "memorised_near@40%" in local.summary["metric"].to_list()
    assert on_spark.summary.equals(local.summary)
    assert on_spark.tables["distributions"].equals(local.tables["distributions"])


def test_mobilitygpt_network_rows_on_spark_are_the_local_bits(spark, tmp_path):
    """MobilityGPT's road-network measures (link radius and trip length tallies, the region
    tallies of gravity, the connected trajectories counted per partition; its golden inputs,
    links 400..404 of length 0), their intervals and uid-share rows: the local engine's bits on
    Spark, over 3 partitions."""
    from tests.test_population_network import _files, _options

    files = _files(tmp_path)
    for side in ("test", "synthetic"):  # the Spark engine reads a day column (d) yet
        pl.read_csv(files[side]).with_columns(d=0).write_csv(files[side])
    options = _options(files) | {"pairing": "none", "uid_shares": [40]}
    options |= {"population_resamples": 10, "chunk_rows": 200}
    local = evaluate_trajectory(files["test"], files["synthetic"], **options)
    on_spark = evaluate_trajectory(
        files["test"], files["synthetic"], partitions=3, spark=spark, **options
    )
    assert "connectivity@40%" in local.summary["metric"].to_list()
    assert on_spark.summary.equals(local.summary)
    assert on_spark.tables["distributions"].equals(local.tables["distributions"])


def test_recs_tiny_splits_keep_each_users_list_order(spark, tmp_path):
    # ClayRS reads a user's list in file order: the rows of every user are dealt, in order, over
    # three files (file name, then position, is the list order locally) of many small row
    # groups; with 2 KB splits they come from several input partitions, and the shuffle must
    # not reorder a user's list.
    recs = pl.read_parquet(RECS / "mf.parquet").sample(fraction=1.0, seed=5)
    recs = recs.sort("user_id", maintain_order=True).with_columns(
        part=(pl.int_range(pl.len()).over("user_id") * 3 // pl.len().over("user_id"))
    )
    recs = recs.sample(fraction=1.0, seed=6).sort("part", maintain_order=True)
    directory = tmp_path / "recs"
    directory.mkdir()
    for (index,), frame in recs.partition_by("part", as_dict=True).items():
        frame.drop("part").write_parquet(directory / f"part-{index}.parquet", row_group_size=32)
    ratings = RECS / "ratings.parquet"
    previous = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "2048")
    try:
        assert spark.read.parquet(str(directory)).rdd.getNumPartitions() >= 6
        for convention in ("clayrs", "relison"):
            local = evaluate_recs(
                ratings, directory, convention=convention, chunk_rows=500, **RECS_OPTIONS
            )
            on_spark = evaluate_recs(
                ratings,
                directory,
                convention=convention,
                chunk_rows=300,
                partitions=3,
                **RECS_OPTIONS,
                spark=spark,
            )
            assert_same_summary(on_spark.summary, local.summary)
            assert_same_rows(on_spark.tables["per_unit"], local.tables["per_unit"], ["user_id"])
    finally:
        spark.conf.set("spark.sql.files.maxPartitionBytes", previous)
    # The order matters: the same rows in another order within users score differently.
    shuffled = tmp_path / "shuffled.parquet"
    recs.drop("part").sample(fraction=1.0, seed=8).write_parquet(shuffled)
    other = evaluate_recs(ratings, shuffled, convention="clayrs", **RECS_OPTIONS)
    assert (
        not other.tables["per_unit"]
        .sort("user_id")
        .equals(local.tables["per_unit"].sort("user_id"))
    )


def test_recs_users_on_one_side_fail_with_the_local_message(spark, tmp_path):
    recs = pl.read_parquet(RECS / "mf.parquet")
    users = recs["user_id"].unique().sort()
    recs.filter(~pl.col("user_id").is_in(users[::7].implode())).write_parquet(
        tmp_path / "recs.parquet"
    )
    ratings = RECS / "ratings.parquet"
    with pytest.raises(InputError) as local:
        evaluate_recs(ratings, tmp_path / "recs.parquet", out=tmp_path / "local", **RECS_OPTIONS)
    out = tmp_path / "spark"
    with pytest.raises(InputError) as on_spark:
        evaluate_recs(
            ratings, tmp_path / "recs.parquet", out=out, partitions=4, **RECS_OPTIONS, spark=spark
        )
    assert "user(s) of the ratings have no rows here" in str(local.value)
    assert str(on_spark.value) == str(local.value)
    assert not (out / "summary").exists() and not (out / "per_unit").exists()


def _nan_score(tmp_path: Path) -> tuple[Path, Path, dict]:
    truth, predictions = _tied_predictions(seed=11)
    bad = predictions.with_columns(
        pl.when(pl.col("sample_id") == 123).then(float("nan")).otherwise("score").alias("score")
    )
    bad.write_parquet(tmp_path / "pred.parquet")
    truth.write_parquet(tmp_path / "truth.parquet")
    return tmp_path / "truth.parquet", tmp_path / "pred.parquet", {"unmatched": "drop"}


def _missing_column(tmp_path: Path) -> tuple[Path, Path, dict]:
    truth, predictions = _tied_predictions(seed=12)
    predictions.drop("score").write_parquet(tmp_path / "pred.parquet")
    truth.write_parquet(tmp_path / "truth.parquet")
    return tmp_path / "truth.parquet", tmp_path / "pred.parquet", {}


def _unmatched(tmp_path: Path) -> tuple[Path, Path, dict]:
    truth, predictions = _tied_predictions(seed=13)
    predictions.write_parquet(tmp_path / "pred.parquet")
    truth.write_parquet(tmp_path / "truth.parquet")
    return tmp_path / "truth.parquet", tmp_path / "pred.parquet", {}


@pytest.mark.parametrize("make", [_nan_score, _missing_column, _unmatched])
def test_bad_nextloc_input_fails_with_the_local_message(spark, tmp_path, make):
    truth, pred, options = make(tmp_path)
    with pytest.raises(InputError) as local:
        evaluate_nextloc(truth, pred, out=tmp_path / "local", **options)
    out = tmp_path / "spark"
    with pytest.raises(InputError) as on_spark:
        evaluate_nextloc(truth, pred, out=out, **options, spark=spark)
    assert str(on_spark.value) == str(local.value)
    assert not (out / "summary").exists() and not (out / "per_unit").exists()


def _models_job(tmp_path: Path, models: dict[str, pl.DataFrame], truth: pl.DataFrame) -> Path:
    """A job of one city: ``truth`` and each model's predictions (a ``.csv`` name: CSV)."""
    truth.write_parquet(tmp_path / "truth.parquet")
    lines = []
    for name, frame in models.items():
        file = tmp_path / name
        frame.write_csv(file) if name.endswith(".csv") else frame.write_parquet(file)
        lines.append(f'"{name.split(".")[0]}" = "{name}"')
    job = tmp_path / "job.toml"
    job.write_text(
        '[[tasks]]\ntype = "nextloc"\ncity = "c"\ntruth = "truth.parquet"\nk = [1, 3]\n'
        'ties = "input"\nunmatched = "drop"\n[tasks.models]\n' + "\n".join(lines) + "\n"
    )
    return job


def test_a_jobs_models_of_one_truth_scored_together_give_the_local_outputs(spark, tmp_path):
    """Four models of one truth: three Parquet (their rows share the Spark job: one shuffle), one
    CSV (other types: a job of its own), under the input-order ties (each model's rows put back
    in its own file order)."""
    truth, predictions = _tied_predictions(seed=21)
    rng = np.random.default_rng(21)
    models = {
        f"m{i}.parquet": predictions.sample(fraction=1.0, shuffle=True, seed=i).with_columns(
            score=pl.Series(rng.integers(0, 3, predictions.height).astype(float))
        )
        for i in range(3)
    }
    models["m3.csv"] = predictions.with_columns(pl.col("location").cast(pl.Int32))
    job = _models_job(tmp_path, models, truth)
    local = run_job(load_job(job, out=tmp_path / "local"), progress=False, log=lambda _: None)
    on_spark = run_job(load_job(job, out=tmp_path / "spark"), log=lambda _: None, spark=spark)
    assert [e.model for e in on_spark] == [e.model for e in local] == ["m0", "m1", "m2", "m3"]
    for spark_result, local_result in zip(on_spark, local, strict=True):
        assert_same_summary(spark_result.summary, local_result.summary)
    assert_same_outputs(tmp_path / "spark", tmp_path / "local", ["sample_id"])


def test_a_bad_model_among_several_stops_the_job_where_the_local_engine_does(spark, tmp_path):
    """The second of three models of one truth has a NaN score: the first is committed (and in
    the manifest), the error is the local engine's, the third is not written."""
    truth, predictions = _tied_predictions(seed=22)
    bad = predictions.with_columns(
        pl.when(pl.col("sample_id") == 123).then(float("nan")).otherwise("score").alias("score")
    )
    models = {"a.parquet": predictions, "b.parquet": bad, "c.parquet": predictions}
    job = _models_job(tmp_path, models, truth)
    errors = {}
    for engine, options in (("local", {"progress": False}), ("spark", {"spark": spark})):
        with pytest.raises(InputError) as raised:
            run_job(load_job(job, out=tmp_path / engine), log=lambda _: None, **options)
        errors[engine] = str(raised.value)
        out = tmp_path / engine
        written = sorted(p.name for p in (out / "summary" / "city=c").iterdir())
        assert written == ["model=a"]
        assert '"a"' in (out / "manifest.json").read_text()
        assert not (out / "per_unit" / "city=c" / "model=c").exists()
    assert errors["spark"] == errors["local"] and "b.parquet" in errors["spark"]
    assert_same_outputs(tmp_path / "spark", tmp_path / "local", ["sample_id"])


@pytest.mark.parametrize(
    ("ratings", "recs", "kind", "named"),
    [
        ("recbole/ratings.inter", "recbole/bpr.tsv", "RecBole atomic", 0),  # .inter: its name
        ("nextloc/tky/truth.parquet", "recbole/bpr.tsv", "RecBole atomic", 1),  # typed header
        ("trec/qrels.txt", "trec/run.txt.gz", "TREC run or qrels", 0),  # its first line
    ],
)
def test_formats_only_the_local_engine_reads_are_refused_by_name(spark, ratings, recs, kind, named):
    samples = REPO_ROOT / "data_samples"
    with pytest.raises(InputError) as raised:
        evaluate_recs(samples / ratings, samples / recs, spark=spark)
    message = str(raised.value)
    assert f"a {kind} file, which the Spark engine does not read" in message
    assert message.startswith(str(samples / (ratings, recs)[named]))


def test_trajectory_mismatch_fails_with_the_local_message(spark, tmp_path):
    case = GOLDEN / "geobleu" / "mismatched_steps"
    with pytest.raises(InputError) as local:
        evaluate_trajectory(case / "reference.parquet", case / "generated.parquet")
    with pytest.raises(InputError) as on_spark:
        evaluate_trajectory(
            case / "reference.parquet",
            case / "generated.parquet",
            out=tmp_path / "out",
            spark=spark,
        )
    assert str(on_spark.value) == str(local.value)
    assert not (tmp_path / "out" / "summary").exists()


def test_missing_file(spark, tmp_path):
    with pytest.raises(InputError) as local:
        evaluate_nextloc(tmp_path / "nope.parquet", tmp_path / "pred.parquet")
    with pytest.raises(InputError) as on_spark:
        evaluate_nextloc(tmp_path / "nope.parquet", tmp_path / "pred.parquet", spark=spark)
    assert str(on_spark.value) == str(local.value)


def test_uri_of_job_paths():
    from mobeval.engines.spark import as_uri

    assert as_uri(Path("/jobs") / "s3a://bucket/key/x.parquet") == "s3a://bucket/key/x.parquet"
    assert as_uri(Path("/jobs") / "dbfs:/Volumes/a/b") == "dbfs:/Volumes/a/b"
    assert (
        as_uri("abfss://c@acct.dfs.core.windows.net/p") == "abfss://c@acct.dfs.core.windows.net/p"
    )
    assert as_uri(Path("/data/x.parquet")) == "/data/x.parquet"


def test_output_folder_safety_on_a_local_out(spark, tmp_path):
    """A local OUT: names checked, the local engine's lock honoured, a replaced result moved
    aside then deleted, nothing left in OUT but the results and the manifest."""
    import fcntl

    from mobeval.errors import OutputInUse

    tky = REPO_ROOT / "data_samples" / "nextloc" / "tky"
    with pytest.raises(ConfigError, match="model: '../victim' is not a plain name"):
        evaluate_nextloc(
            tky / "truth.parquet",
            tky / "markov.parquet",
            out=tmp_path,
            model="../victim",
            spark=spark,
        )
    job = tmp_path / "job.toml"
    job.write_text(
        f'out = "out"\n[[tasks]]\ntype = "nextloc"\ncity = "tky"\ntruth = "{tky}/truth.parquet"\n'
        f'[tasks.models]\nmarkov = "{tky}/markov.parquet"\n'
    )
    out = tmp_path / "out"
    out.mkdir()
    handle = os.open(out / ".lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    try:
        with pytest.raises(OutputInUse, match="in use by another mobeval run"):
            run_job(load_job(job), log=lambda _: None, spark=spark)
        assert sorted(p.name for p in out.iterdir()) == [".lock"]
    finally:
        os.close(handle)
    for _ in range(2):  # the second run replaces the first run's result
        run_job(load_job(job), log=lambda _: None, spark=spark)
    local = run_job(load_job(job, out=tmp_path / "local"), progress=False, log=lambda _: None)
    assert_same_outputs(out, tmp_path / "local", ["sample_id"])
    assert local and sorted(p.name for p in out.iterdir() if not p.name.endswith(".crc")) == [
        "manifest.json",
        "per_unit",
        "summary",
    ]


def test_nextloc_duplicates_drop_keeps_the_local_rows_order(spark, tmp_path):
    """duplicates="drop" keeps a location's LAST row (at its first row's place): the rows of each
    sample, dealt over three files of unequal sizes read in 2 KB splits or whole, must come back
    in the local engine's order (file, then position) even under a tie policy that reads no
    order."""
    rng = np.random.default_rng(9)
    rows = [
        (int(sample), int(rng.integers(0, 8)), float(rng.integers(0, 5)))
        for sample in range(300)
        for _ in range(int(rng.integers(1, 14)))
    ]
    predictions = pl.DataFrame(
        rows,
        schema={"sample_id": pl.Int64, "location": pl.Int64, "score": pl.Float64},
        orient="row",
    )
    truth = pl.DataFrame({"sample_id": np.arange(300), "location": rng.integers(0, 9, size=300)})
    directory = tmp_path / "pred"
    directory.mkdir()
    # the last file holds most rows: Spark orders the splits by size, so it reads them first
    dealt = predictions.with_row_index("row").with_columns(pl.min_horizontal(pl.col("row") % 6, 2))
    for (index,), frame in dealt.partition_by("row", as_dict=True).items():
        frame.drop("row").write_parquet(directory / f"part-{index}.parquet", row_group_size=64)
    truth.write_parquet(tmp_path / "truth.parquet")
    for split in ("2048", None):  # small splits, and whole files packed in one partition
        previous = spark.conf.get("spark.sql.files.maxPartitionBytes")
        if split:
            spark.conf.set("spark.sql.files.maxPartitionBytes", split)
        try:
            _same_local_and_spark_with_copies(spark, tmp_path, directory)
        finally:
            spark.conf.set("spark.sql.files.maxPartitionBytes", previous)


def _same_local_and_spark_with_copies(spark, tmp_path, directory):
    for options in (
        {"k": [1, 3], "duplicates": "drop"},  # id_asc ties
        {"k": [1, 3], "convention": "ranx"},  # the preset drops copies
    ):
        local = evaluate_nextloc(tmp_path / "truth.parquet", directory, **options)
        on_spark = evaluate_nextloc(
            tmp_path / "truth.parquet", directory, partitions=3, **options, spark=spark
        )
        assert_same_summary(on_spark.summary, local.summary)
        assert_same_rows(on_spark.per_unit, local.per_unit, ["sample_id"])
    with pytest.raises(InputError, match="duplicates='drop'"):
        evaluate_nextloc(tmp_path / "truth.parquet", directory, partitions=3, spark=spark)


# --------------------------------------------------------------------------- logits on Spark

LOGITS_GOLDEN = GOLDEN / "ranking" / "logits_basic"
LOGITS_SYSTEMS = {"numpy rank (pessimistic)": "pessimistic"}


def test_logits_golden_case_on_spark_gives_the_local_rows_and_the_reference_values(spark):
    import json

    logits, targets = LOGITS_GOLDEN / "logits.npy", LOGITS_GOLDEN / "targets.npy"
    classes = np.load(logits, mmap_mode="r").shape[1]
    options = {"k": [1, 3, 5, 10], "percent": True, "chunk_rows": 37 * classes}
    expected = json.loads((LOGITS_GOLDEN / "expected.json").read_text())["expected"]
    for ties in ("optimistic", "pessimistic"):
        local = evaluate_logits(logits, targets, ties=ties, **options)
        on_spark = evaluate_logits(logits, targets, ties=ties, partitions=3, spark=spark, **options)
        assert_same_summary(on_spark.summary, local.summary)
        assert_same_rows(on_spark.per_unit, local.per_unit, ["row"])
        values = dict(zip(on_spark.summary["metric"], on_spark.summary["value"], strict=True))
        checked = 0
        for entry in expected:
            if LOGITS_SYSTEMS.get(entry["system"], "optimistic") != ties:
                continue
            metric, params = entry["metric"], entry["params"]
            name = f"{metric}@{params['k']}" if metric in ("acc", "ndcg") else metric
            if name in values:
                assert abs(values[name] - entry["value"]) <= 1e-6, (entry, values[name])
                checked += 1
        assert checked >= 5


def _random_logits_parquet(path: Path, *, rows: int, classes: int, seed: int) -> pl.DataFrame:
    """Float32 logits with many ties (few distinct values), some -inf, targets in a column; many
    row groups."""
    rng = np.random.default_rng(seed)
    values = rng.integers(-3, 3, size=(rows, classes)).astype(np.float32)
    values[rng.random((rows, classes)) < 0.05] = -np.inf
    values[:, 0] = np.maximum(values[:, 0], -2)  # every row has a finite logit
    frame = pl.DataFrame(
        {
            "logits": values.tolist(),
            "target": rng.integers(0, classes, size=rows),
        },
        schema={"logits": pl.List(pl.Float32), "target": pl.Int64},
    )
    frame.write_parquet(path, row_group_size=97)
    return frame


def test_logits_random_parquet_on_spark_writes_the_local_outputs(spark, tmp_path):
    path = tmp_path / "model.parquet"
    _random_logits_parquet(path, rows=2000, classes=23, seed=4)
    options = {
        "metrics": ["acc@k", "mrr", "ndcg@k", "f1_weighted", "f1_macro", "cross_entropy"],
        "k": [1, 5],
        "ties": "average",
        "ignore_target": 3,
        "chunk_rows": 23 * 61,
        "city": "c",
    }
    local = evaluate_logits(path, "target", out=tmp_path / "local", **options)
    on_spark = evaluate_logits(
        path, "target", out=tmp_path / "spark", partitions=4, spark=spark, **options
    )
    assert_same_summary(on_spark.summary, local.summary)
    assert_same_outputs(tmp_path / "spark", tmp_path / "local", ["row"])


def test_logits_bad_rows_on_spark_fail_with_the_local_message(spark, tmp_path):
    """The first bad row wins, whichever task finds it: a NaN late in the file and a row of
    another width, each alone and then together."""
    frame = _random_logits_parquet(tmp_path / "good.parquet", rows=600, classes=7, seed=5)
    nan_row = frame["logits"].to_list()
    nan_row[450][2] = float("nan")
    wide = frame["logits"].to_list()
    wide[300] = [*wide[300], 0.0]
    cases = {
        "nan": nan_row,
        "wide": wide,
        "both": [*wide[:450], nan_row[450], *wide[451:]],
    }
    for name, rows in cases.items():
        path = tmp_path / f"{name}.parquet"
        pl.DataFrame({"logits": rows, "target": frame["target"]}).write_parquet(
            path, row_group_size=50
        )
        with pytest.raises(InputError) as local:
            evaluate_logits(path, "target", chunk_rows=7 * 40)
        with pytest.raises(InputError) as on_spark:
            evaluate_logits(path, "target", chunk_rows=7 * 40, partitions=5, spark=spark)
        assert str(on_spark.value) == str(local.value), name


@pytest.mark.spark
def test_a_path_spark_cannot_read_and_the_log_level_restored(spark, tmp_path):
    tky = REPO_ROOT / "data_samples" / "nextloc" / "tky"
    context = spark.sparkContext
    root = context._jvm.org.apache.logging.log4j.LogManager.getRootLogger()
    context.setLogLevel("WARN")
    try:
        with pytest.raises(InputError) as failed:
            evaluate_nextloc("s3a://no-bucket/truth.parquet", tky / "markov.parquet", spark=spark)
        assert str(root.getLevel()) == "WARN"  # quiet during the run, the user's level after
        evaluate_nextloc(tky / "truth.parquet", tky / "markov.parquet", spark=spark, progress=False)
        assert str(root.getLevel()) == "WARN"
    finally:
        context.setLogLevel("ERROR")
    message = str(failed.value)
    assert message.startswith("s3a://no-bucket/truth.parquet: ")
    assert "no file system" in message and "hadoop-aws" in message
    assert "S3AFileSystem not found" in message


def test_progress_counts_the_rows_scored_on_the_driver(spark, capsys, monkeypatch):
    """With progress asked for, the driver's progress ends on one line with every prediction
    row."""
    monkeypatch.setattr(progress, "SHOW_AFTER", 0.0)
    tky = REPO_ROOT / "data_samples" / "nextloc" / "tky"
    rows = pl.read_parquet(tky / "markov.parquet").height
    evaluate_nextloc(
        tky / "truth.parquet", tky / "markov.parquet", spark=spark, progress=True, partitions=3
    )
    last = capsys.readouterr().err.strip().split("\r")[-1]
    assert last.startswith(f"tky/markov: {rows:,} rows in ")


SAMPLES = REPO_ROOT / "data_samples"
PRINT_ONLY = {
    "nextloc": (evaluate_nextloc, "nextloc/tky/truth.parquet", "nextloc/tky/markov.parquet", {}),
    "trajectory": (
        evaluate_trajectory,
        "humob/reference_test.csv.gz",
        "humob/weekly_repeat.csv.gz",
        {},
    ),
    "recs": (evaluate_recs, "recs/ratings.parquet", "recs/mf.parquet", {"cutoffs": [5, 10]}),
    "logits": (evaluate_logits, "logits/gru.npy", "logits/targets.npy", {}),
}


@pytest.mark.parametrize("family", sorted(PRINT_ONLY))
def test_print_only_on_spark_gives_the_local_summary_and_keeps_nothing(spark, family):
    evaluate, truth, predictions, options = PRINT_ONLY[family]
    local = evaluate(SAMPLES / truth, SAMPLES / predictions, per_unit=False, **options)
    alone = evaluate(
        SAMPLES / truth, SAMPLES / predictions, per_unit=False, partitions=3, spark=spark, **options
    )
    assert alone.summary.equals(local.summary)  # exact sums: the same bits
    assert alone.tables == {} and alone.per_unit is None and alone.outputs == {}


def test_the_command_line_on_spark_without_out_prints_the_local_summary(spark, capsys, tmp_path):
    from mobeval.cli import main

    tky = SAMPLES / "nextloc" / "tky"
    command = [
        "nextloc",
        "--truth",
        str(tky / "truth.parquet"),
        "--pred",
        str(tky / "markov.parquet"),
    ]
    command += ["--k", "1,5", "--convention", "libcity", "--quiet"]
    assert main(command) == 0
    local = capsys.readouterr().out
    assert main([*command, "--engine", "spark"]) == 0
    assert capsys.readouterr().out == local and "acc@5" in local
    trec = [
        "--truth",
        str(SAMPLES / "trec" / "qrels.txt"),
        "--pred",
        str(SAMPLES / "trec/run.txt.gz"),
    ]
    assert main(["nextloc", *trec, "--input-format", "trec", "--engine", "spark"]) == 2
    assert "qrels.txt: a TREC run or qrels file, which the Spark engine" in capsys.readouterr().err
    out = tmp_path / "out"  # and with --out: the local engine's summary, written by Spark
    assert main([*command, "--engine", "spark", "--out", str(out)]) == 0
    assert capsys.readouterr().out == local
    assert '"engine": "spark"' in (out / "manifest.json").read_text()
    written = pl.read_parquet(out / "summary" / "city=tky" / "model=markov")
    assert_same_summary(
        written,
        evaluate_nextloc(
            tky / "truth.parquet", tky / "markov.parquet", k=[1, 5], convention="libcity"
        ).summary,
    )


@pytest.fixture
def lake(spark, tmp_path):
    """``viewfs://lake/data/``: a folder of tmp_path seen through Hadoop's view file system, a
    scheme that is not the driver's local one (as s3a:// or abfss:// are not), which every
    executor of local[2] reads."""
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    settings = {
        "fs.viewfs.mounttable.lake.link./data": (tmp_path / "lake").as_uri(),
        "fs.viewfs.impl.disable.cache": "true",  # each test's own mount table
    }
    for name, value in settings.items():
        conf.set(name, value)
    (tmp_path / "lake").mkdir()
    yield tmp_path / "lake"
    for name in settings:
        conf.unset(name)


@pytest.mark.parametrize(
    ("ratings", "recs", "kind", "named"),
    [
        ("trec/qrels.txt", "trec/run.txt.gz", "TREC run or qrels", 0),  # its first data line
        ("recs/ratings.parquet", "trec/run.txt.gz", "TREC run or qrels", 1),  # gzipped
        ("recs/ratings.parquet", "trec/qrels.txt", "TREC run or qrels", 1),
        ("recs/ratings.parquet", "recbole/bpr.tsv", "RecBole atomic", 1),  # its typed header
        ("recbole/ratings.inter", "recs/mf.parquet", "RecBole atomic", 0),  # its name
    ],
)
def test_formats_at_a_remote_uri_are_told_as_the_local_engine_tells_them(
    spark, lake, ratings, recs, kind, named
):
    inputs = []
    for index, name in enumerate((ratings, recs)):
        target = lake / f"{index}-{Path(name).name}"
        shutil.copy(SAMPLES / name, target)
        inputs.append(f"viewfs://lake/data/{target.name}")
    with pytest.raises(InputError) as raised:
        evaluate_recs(*inputs, spark=spark)
    message = str(raised.value)
    assert message.startswith(f"{inputs[named]}: a {kind} file, which the Spark engine does not")


def test_a_trec_run_of_any_name_at_a_remote_uri_is_told_by_its_first_line(spark, lake):
    shutil.copy(SAMPLES / "recs" / "ratings.parquet", lake / "ratings.parquet")
    shutil.copy(SAMPLES / "trec" / "run.txt.gz", lake / "bm25.run")  # no format in its name
    with pytest.raises(InputError, match="bm25.run: a TREC run or qrels file, which the Spark"):
        evaluate_recs(
            "viewfs://lake/data/ratings.parquet", "viewfs://lake/data/bm25.run", spark=spark
        )
    shutil.copy(SAMPLES / "recs" / "mf.parquet", lake / "mf.parquet")  # what it does read
    remote = evaluate_recs(
        "viewfs://lake/data/ratings.parquet", "viewfs://lake/data/mf.parquet", spark=spark
    )
    local = evaluate_recs(SAMPLES / "recs" / "ratings.parquet", SAMPLES / "recs" / "mf.parquet")
    assert remote.summary.equals(local.summary)


def test_an_fsspec_memory_url_is_refused_by_spark_in_words(spark):
    fsspec = pytest.importorskip("fsspec")
    memory = fsspec.filesystem("memory")
    memory.pipe("/spark-test/ratings.parquet", (SAMPLES / "recs" / "ratings.parquet").read_bytes())
    try:
        with pytest.raises(InputError) as raised:
            evaluate_recs(
                "memory://spark-test/ratings.parquet", SAMPLES / "recs" / "mf.parquet", spark=spark
            )
    finally:
        memory.rm("/spark-test", recursive=True)
    message = str(raised.value)
    assert message.startswith("memory://spark-test/ratings.parquet: memory:// is a file system")
    assert "local engine" in message
    said = "Spark said: org.apache.hadoop.fs.UnsupportedFileSystemException: No FileSystem for"
    assert f'{said} scheme "memory"' in message


def test_recs_population_metrics_on_spark_have_the_local_bits(spark, tmp_path):
    # item counts and per-user shares are folded per partition and merged on the driver; the
    # plot metrics' tables are made from the merged counts
    options = {
        "metrics": [
            *("ndcg@10", "gini", "coverage", "entropy", "avg_popularity", "tail_percentage"),
            *("pearson", "kendall", "delta_gap", "gauc", "long_tail", "popularity_correlation"),
        ],
        "user_groups": ["popular=0.2", "niche=0.8"],
        "k": [5, 30],
        "catalogue": str(RECS / "catalogue.parquet"),
        "train": str(RECS / "train.parquet"),
    }
    for convention in ("clayrs", "recbole"):
        local = evaluate_recs(
            RECS / "ratings.parquet",
            RECS / "mf.parquet",
            population_convention=convention,
            **options,
        )
        on_spark = evaluate_recs(
            RECS / "ratings.parquet",
            RECS / "mf.parquet",
            population_convention=convention,
            partitions=3,
            chunk_rows=500,
            spark=spark,
            **options,
        )
        population = pl.col("metric").str.contains("gini|coverage|entropy|popularity|tail|gap")
        assert on_spark.summary.filter(population).equals(local.summary.filter(population))
        for section in ("long_tail", "popularity_correlation"):  # ClayRS's plots' data
            assert on_spark.tables[section].equals(local.tables[section])
        assert_same_summary(on_spark.summary, local.summary)
        assert_same_rows(on_spark.tables["per_unit"], local.tables["per_unit"], ["user_id"])


def test_auc_is_refused_on_spark_by_every_face_before_anything_is_read(spark, tmp_path, capsys):
    # its counts per distinct score would reach the driver whole (issue 24): the API, the CLI and
    # a job file say so and name the local engine, exit 2, nothing written; gauc still runs
    from mobeval.cli import main

    inputs = [RECS / "ratings.parquet", RECS / "mf.parquet"]
    out = tmp_path / "api"
    with pytest.raises(ConfigError, match="auc is computed by the local engine only") as raised:
        evaluate_recs(*inputs, metrics=["gauc", "auc"], spark=spark, out=out)
    assert "engine='local'" in str(raised.value) and not out.exists()
    ok = evaluate_recs(*inputs, metrics=["gauc"], spark=spark)
    assert_same_summary(ok.summary, evaluate_recs(*inputs, metrics=["gauc"]).summary)
    command = ["recs", "--ratings", str(inputs[0]), "--recs", str(inputs[1]), "--metrics", "auc"]
    out = tmp_path / "cli"
    assert main([*command, "--engine", "spark", "--quiet", "--out", str(out)]) == 2
    assert "--engine local" in capsys.readouterr().err and not out.exists()
    job = tmp_path / "job.toml"
    job.write_text(
        f'[[tasks]]\ntype = "recs"\ncity = "c"\ntruth = "{inputs[0]}"\nmetrics = ["auc"]\n'
        f'[tasks.models]\nmf = "{inputs[1]}"\n'
    )
    with pytest.raises(ConfigError, match="auc is computed by the local engine only"):
        run_job(load_job(job, out=tmp_path / "job"), log=lambda _: None, spark=spark)
    assert not (tmp_path / "job").exists()


def test_a_job_with_runs_on_spark_gives_the_local_outputs_and_keeps_runs_all_or_none(
    spark, tmp_path
):
    """A job of 3 models x 3 seeds (tests/test_runs.py): each run's outputs on Spark are the
    local engine's, and Spark refuses, as the local engine does, a model's result without a run
    into an OUT where it has runs (nothing written)."""
    from tests.test_runs import write_job

    job = write_job(tmp_path)
    local = run_job(load_job(job, out=tmp_path / "local"), progress=False, log=lambda _: None)
    on_spark = run_job(load_job(job, out=tmp_path / "spark"), log=lambda _: None, spark=spark)
    assert [(e.model, e.run) for e in on_spark] == [(e.model, e.run) for e in local]
    runs = sorted(
        p.relative_to(tmp_path / "local") for p in (tmp_path / "local").glob("*/*/*/run=*")
    )
    assert len(runs) == 18  # per_unit and summary of 9 runs
    for relative in runs:
        spark_rows = pl.read_parquet(tmp_path / "spark" / relative)
        local_rows = pl.read_parquet(tmp_path / "local" / relative)
        if relative.parts[0] == "summary":
            assert_same_summary(spark_rows, local_rows)
        else:
            assert_same_rows(spark_rows, local_rows, ["sample_id"])
    before = sorted((tmp_path / "spark").rglob("*"))
    with pytest.raises(ConfigError, match="already has runs"):
        evaluate_nextloc(
            tmp_path / "truth.parquet", tmp_path / "gru_seed1.parquet", out=tmp_path / "spark",
            city="tky", model="gru", k=[1, 5], spark=spark,
        )  # fmt: skip
    assert sorted((tmp_path / "spark").rglob("*")) == before


def test_unpaired_populations_on_spark_are_the_local_bits(spark, tmp_path):
    """``pairing="none"`` on Spark, over 3 partitions: two HuMob populations on the grid (their
    uid shares too), and MoveSim's GeoLife populations as location ids with its ``gps`` table,
    read from MoveSim's ``.data`` files themselves (a uid per line, numbered as the local engine
    numbers them: the uid shares and the bootstrap draw the same trajectories): the summary, the
    histograms and the density maps are the local engine's bits."""
    samples = REPO_ROOT / "data_samples" / "humob"
    grid = {"metrics": ["distance", "radius", "grank", "irank", "density", "trip"]}
    grid |= {"uid_shares": [40], "chunk_rows": 300}
    movesim = REPO_ROOT / "data_samples" / "movesim"
    ids = {"metrics": ["distance", "radius", "duration", "dailyloc", "grank", "irank"]}
    ids |= {"locations": "ids", "location_table": movesim / "gps.gz", "convention": "movesim"}
    ids |= {"max_distance": 247.3, "uid_shares": [30], "population_resamples": 3}
    humob = (samples / "reference_test.csv.gz", samples / "home_only.csv.gz")
    files = (movesim / "real.data.gz", movesim / "test.data.gz")
    for options, inputs in [(grid, humob), (ids, files)]:
        local = evaluate_trajectory(*inputs, pairing="none", **options)
        on_spark = evaluate_trajectory(
            *inputs, pairing="none", partitions=3, spark=spark, **options
        )
        assert on_spark.summary.equals(local.summary)
        assert set(local.tables) == {"distributions", "density_map"}
        for section, table in local.tables.items():
            assert on_spark.tables[section].equals(table), section


def test_a_sequence_file_s_bad_line_is_named_on_spark_as_locally(spark, tmp_path):
    """A ``.data`` line that holds a non-integer, or nothing: the same InputError (the file, the
    column, the line) on both engines, no result."""
    table = REPO_ROOT / "data_samples" / "movesim" / "gps.gz"
    good = tmp_path / "good.data"
    good.write_text("1 2 3\n4 5 6\n")
    options = {"pairing": "none", "locations": "ids", "location_table": table}
    options |= {"metrics": ["distance"]}
    for text, what in (("1 2 3\n4 5 6\n7 x 9\n", "line 3 holds a non-integer"),
                       ("1 2 3\n\n4 5 6\n", "line 2 holds no location id")):  # fmt: skip
        bad = tmp_path / "bad.data"
        bad.write_text(text)
        messages = []
        for engine in ({}, {"spark": spark}):
            with pytest.raises(InputError, match=what) as caught:
                evaluate_trajectory(good, bad, **options, **engine)
            messages.append(str(caught.value))
        assert messages[0] == messages[1]
