"""Where the Spark engine runs (issue 33, cluster): --master and --spark-conf, a job file's [spark]
table, checked before any JVM starts (no PySpark needed here)."""

import pytest

from mobeval.api import engine_for, evaluate_nextloc
from mobeval.engines.cluster import SparkSettings, conf_pair
from mobeval.errors import ConfigError
from mobeval.jobs import load_job, run_job
from tests.conftest import REPO_ROOT

SAMPLE = REPO_ROOT / "data_samples" / "nextloc" / "tky"


def test_a_conf_pair_splits_at_the_first_equals_sign():
    assert conf_pair("spark.executor.memory=4g") == ("spark.executor.memory", "4g")
    java = "spark.driver.extraJavaOptions=-Da=b -Dc=d"
    assert conf_pair(java) == ("spark.driver.extraJavaOptions", "-Da=b -Dc=d")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("spark.executor.memory", "expected KEY=VALUE"),
        ("=4g", "expected KEY=VALUE"),
        ("fs.s3a.endpoint=http://x", "spark.hadoop.fs.s3a.endpoint"),
        ("executor.memory=4g", "is not a Spark setting: Spark's keys start with 'spark.'"),
    ],
)
def test_a_bad_conf_pair_is_refused_by_name(text, said):
    with pytest.raises(ConfigError, match="--spark-conf") as caught:
        conf_pair(text)
    assert said in str(caught.value)


def test_the_command_line_goes_over_the_job_file():
    job = SparkSettings("spark://a:7077", {"spark.task.cpus": "2", "spark.executor.memory": "1g"})
    given = SparkSettings(None, {"spark.executor.memory": "4g"})
    assert job.over(given) == SparkSettings(
        "spark://a:7077", {"spark.task.cpus": "2", "spark.executor.memory": "4g"}
    )
    assert job.over(SparkSettings("local[2]")).master == "local[2]"
    assert not SparkSettings() and SparkSettings("local[1]")


def _job(tmp_path, table: str):
    path = tmp_path / "job.toml"
    path.write_text(
        f'out = "out"\n{table}\n[[tasks]]\ntype = "nextloc"\ncity = "tky"\n'
        f'truth = "{SAMPLE / "truth.parquet"}"\nk = [1]\n'
        f'[tasks.models]\nmarkov = "{SAMPLE / "markov.parquet"}"\n'
    )
    return path


def test_a_job_files_spark_table_is_read_with_spark_values(tmp_path):
    table = (
        '[spark]\nmaster = "spark://head:7077"\n'
        'conf = { "spark.task.cpus" = 2, "spark.sql.adaptive.enabled" = false, '
        '"spark.executor.memory" = "4g" }'
    )
    job = load_job(_job(tmp_path, table))
    assert job.spark == SparkSettings(
        "spark://head:7077",
        {
            "spark.task.cpus": "2",
            "spark.sql.adaptive.enabled": "false",
            "spark.executor.memory": "4g",
        },
    )
    assert load_job(_job(tmp_path, "")).spark == SparkSettings()


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ('[spark]\nmasters = "x"', "unknown key 'masters'"),
        ("[spark]\nmaster = 7077", "spark.master: expected a master URL"),
        ('[spark]\nconf = "spark.task.cpus=2"', "spark.conf: expected a table"),
        ("[spark]\nconf = { \"spark.jars\" = ['a', 'b'] }", "spark.conf.spark.jars: expected"),
        ('[spark]\nconf = { "fs.s3a.endpoint" = "x" }', "spark.hadoop.fs.s3a.endpoint"),
        ('spark = "local[2]"', "spark: expected a table"),
    ],
)
def test_a_bad_spark_table_names_the_file_and_the_key(tmp_path, table, said):
    path = _job(tmp_path, table)
    with pytest.raises(ConfigError, match=str(path)) as caught:
        load_job(path)
    assert said in str(caught.value)


def test_settings_on_the_local_engine_are_refused_not_dropped(tmp_path):
    with pytest.raises(
        ConfigError, match="--master local.2.: Spark settings are for --engine spark only"
    ):
        engine_for("local", settings=SparkSettings("local[2]"))
    with pytest.raises(ConfigError, match="Spark settings are for --engine spark only"):
        run_job(load_job(_job(tmp_path, "")), settings=SparkSettings("local[2]"), log=print)
    assert not (tmp_path / "out").exists()


def test_a_job_files_spark_table_is_left_by_a_local_run(tmp_path):
    job = load_job(_job(tmp_path, '[spark]\nmaster = "spark://nowhere:7077"'))
    [local] = run_job(job, log=lambda _: None, progress=False)
    alone = evaluate_nextloc(SAMPLE / "truth.parquet", SAMPLE / "markov.parquet", k=[1])
    assert local.summary.equals(alone.summary)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--master", "local[2]"], "--master local[2]: Spark settings are for --engine spark only"),
        (["--spark-conf", "spark.task.cpus=2"], "--spark-conf spark.task.cpus=2: Spark settings"),
        (["--engine", "spark", "--spark-conf", "task.cpus=2"], "argument --spark-conf:"),
        (["--engine", "spark", "--spark-conf", "spark.task.cpus"], "expected KEY=VALUE"),
    ],
)
def test_the_command_line_refuses_settings_it_cannot_use(tmp_path, capsys, argv, said):
    from mobeval.cli import main

    job = str(REPO_ROOT / "jobs" / "nextloc_sample.toml")
    for command in (
        ["run", job],
        [
            "nextloc",
            "--truth",
            str(SAMPLE / "truth.parquet"),
            "--pred",
            str(SAMPLE / "markov.parquet"),
        ],
    ):
        try:
            code = main([*command, *argv, "--out", str(tmp_path / "out")])
        except SystemExit as usage:  # argparse's: a value its type refused
            code = usage.code
        assert code == 2
        assert said in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_the_spark_engine_gets_the_job_files_settings_under_the_command_lines(
    tmp_path, monkeypatch
):
    from mobeval import api

    asked = []

    def engine_for(engine, spark, partitions, progress, settings):
        asked.append(settings)
        raise ConfigError("stop here")

    monkeypatch.setattr(api, "engine_for", engine_for)
    table = '[spark]\nmaster = "spark://head:7077"\nconf = { "spark.task.cpus" = 2 }'
    job = load_job(_job(tmp_path, table))
    given = SparkSettings(None, {"spark.task.cpus": "4", "spark.executor.memory": "1g"})
    for engine in ("spark", "local"):
        with pytest.raises(ConfigError, match="stop here"):
            run_job(job, engine=engine, settings=given, log=print)
    assert asked == [
        SparkSettings("spark://head:7077", {"spark.task.cpus": "4", "spark.executor.memory": "1g"}),
        given,  # the local engine: the command line's alone (refused there), the table left
    ]
