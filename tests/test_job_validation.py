"""Every option of every family, given a wrong value, is refused before any work, naming the option
as its user spelled it: ``tasks[0].k`` in a job file, ``--k`` on the command line, ``k=`` (the
ConfigError's ``option``) in Python. Exit 2 with one ``mobeval: error:`` line, never exit 3, and
nothing written. A job is checked whole when it is loaded: every option through its preset and
convention, every truth and model path in place, so that a job whose second model is missing
writes nothing.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest

from mobeval import api
from mobeval.cli import main
from mobeval.errors import ConfigError, OptionError
from mobeval.jobs import OPTION_KINDS, load_job, run_job
from mobeval.metrics.recs import OPTION_CHOICES as RECS_CHOICES
from tests.helpers import GENERATED, LOGITS, PRED, RATINGS, RECS, REFERENCE, TARGETS, TRUTH

# --------------------------------------------------------------------------- small valid inputs

#: family -> (truth file, model file, the CLI's truth and model flags)
FILES = {
    "nextloc": ("truth.parquet", "pred.parquet", "--truth", "--pred"),
    "trajectory": ("reference.parquet", "generated.parquet", "--reference", "--generated"),
    "recs": ("ratings.parquet", "recs.parquet", "--ratings", "--recs"),
    "logits": ("targets.npy", "logits.npy", "--targets", "--logits"),
}
API = {
    "nextloc": (api.evaluate_nextloc, "truth", "predictions"),
    "trajectory": (api.evaluate_trajectory, "reference", "generated"),
    "recs": (api.evaluate_recs, "ratings", "recs"),
    "logits": (api.evaluate_logits, "targets", "logits"),
}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("inputs")
    TRUTH.write_parquet(root / "truth.parquet")
    PRED.write_parquet(root / "pred.parquet")
    REFERENCE.write_parquet(root / "reference.parquet")
    GENERATED.write_parquet(root / "generated.parquet")
    RATINGS.write_parquet(root / "ratings.parquet")
    RECS.write_parquet(root / "recs.parquet")
    np.save(root / "targets.npy", TARGETS)
    np.save(root / "logits.npy", LOGITS)
    return root


# --------------------------------------------------------------------------- the table

#: (family, option, the value as TOML text, the same value on the command line or None where the
#: command line has no such flag or cannot spell it). Python gets the TOML value as parsed.
BAD: list[tuple[str, str, str, str | None]] = [
    # next location
    ("nextloc", "k", "[0]", "0"),
    ("nextloc", "cutoffs", "[-1]", "-1"),
    ("nextloc", "k", "[]", ""),
    ("nextloc", "k", "[2147483648]", "2147483648"),
    ("nextloc", "k", '"5"', None),
    ("nextloc", "k", "[1.5]", "1.5"),
    ("nextloc", "k", "true", None),
    ("nextloc", "metrics", '["bogus"]', "bogus"),
    ("nextloc", "metrics", '["acc@0"]', "acc@0"),
    ("nextloc", "metrics", '["acc"]', "acc"),
    ("nextloc", "metrics", "[]", ""),
    ("nextloc", "metrics", '"mrr"', None),
    ("nextloc", "metrics", "[1]", None),
    ("nextloc", "convention", '"nope"', "nope"),
    ("nextloc", "convention", '""', ""),
    ("nextloc", "convention", "1", None),
    ("nextloc", "ties", '"nope"', "nope"),
    ("nextloc", "ties", '""', ""),
    ("nextloc", "ties", "3", None),
    ("nextloc", "f1", '"harmonic"', "harmonic"),
    ("nextloc", "f1", "1", None),
    ("nextloc", "missing", '"drop"', "drop"),
    ("nextloc", "missing", '""', ""),
    ("nextloc", "k_beyond_list", '"clip"', "clip"),
    ("nextloc", "k_beyond_list", "true", None),
    ("nextloc", "duplicates", '"keep"', "keep"),
    ("nextloc", "duplicates", '""', ""),
    ("nextloc", "key", '""', ""),
    ("nextloc", "key", "[]", None),
    ("nextloc", "key", '[""]', None),
    ("nextloc", "key", "1", None),
    ("nextloc", "columns", '{foo = "x"}', "foo=x"),
    ("nextloc", "columns", '{location = ""}', None),
    ("nextloc", "columns", '"location=poi"', None),
    ("nextloc", "order_by", '"nope"', "nope"),
    ("nextloc", "order_by", '""', ""),
    ("nextloc", "unmatched", '"keep"', None),
    ("nextloc", "unmatched", "false", None),
    ("nextloc", "cohorts", "3", None),
    ("nextloc", "cohort_missing", '"drop"', "drop"),
    # trajectories
    ("trajectory", "matching", '"hungarian"', "hungarian"),
    ("trajectory", "matching", '""', ""),
    ("trajectory", "matching", "1", None),
    ("trajectory", "exp", '"fast"', "fast"),
    ("trajectory", "exp", '""', ""),
    ("trajectory", "metrics", '["bleu"]', "bleu"),
    ("trajectory", "metrics", "[]", ""),
    ("trajectory", "metrics", '"geobleu"', None),
    ("trajectory", "convention", '"humob2030"', "humob2030"),
    ("trajectory", "convention", '""', ""),
    ("trajectory", "on_mismatch", '"ignore"', None),
    ("trajectory", "on_mismatch", '""', None),
    ("trajectory", "out_of_grid", '"clip"', None),
    ("trajectory", "out_of_grid", "[]", None),
    ("trajectory", "columns", '{foo = "x"}', "foo=x"),
    ("trajectory", "columns", '{generated = {uid = ""}}', None),
    ("trajectory", "divergence", '"js"', "js"),
    ("trajectory", "divergence", "1", None),
    ("trajectory", "max_distance", "-1", "-1"),
    ("trajectory", "max_distance", '"far"', None),
    ("trajectory", "uid_shares", "[0]", "0"),
    ("trajectory", "uid_shares", "[50, 50]", "50,50"),
    ("trajectory", "per_day_divergences", '"yes"', None),
    ("trajectory", "population_resamples", "-1", "-1"),
    ("trajectory", "population_resamples", "2.5", "2.5"),
    ("trajectory", "population_seed", "1.5", "1.5"),
    ("trajectory", "population_confidence", "1.5", "1.5"),
    ("trajectory", "population_confidence", "0", "0"),
    ("trajectory", "unit", '"miles"', "miles"),
    ("trajectory", "unit", "1", None),
    ("trajectory", "pairing", '"by_uid"', "by_uid"),
    ("trajectory", "pairing", "1", None),
    ("trajectory", "locations", '"cells"', "cells"),
    ("trajectory", "location_table", "1", None),
    ("trajectory", "unknown_links", '"skip"', "skip"),
    ("trajectory", "region_table", "1", None),
    ("trajectory", "link_graph", "[]", None),
    ("trajectory", "gps_grid", "1", None),
    ("trajectory", "distance", '"geodesic"', "geodesic"),
    ("trajectory", "jump_max", "-1", "-1"),
    ("trajectory", "jump_bins", "0", "0"),
    ("trajectory", "near_tolerance", "-1", "-1"),
    ("trajectory", "generation_bins", "0", "0"),
    ("trajectory", "generation_binning", '"log"', "log"),
    ("trajectory", "id_range", "0", "0"),
    # recommendations (the convention's choices are added below)
    ("recs", "columns", '{foo = "x"}', "foo=x"),
    ("recs", "columns", '{ratings = {user_id = ""}}', None),
    ("recs", "columns", '"user_id=userId"', None),
    ("recs", "k", "[0]", "0"),
    ("recs", "cutoffs", "[-3]", "-3"),
    ("recs", "k", '"5"', None),
    ("recs", "cutoffs", "[2147483648]", "2147483648"),
    ("recs", "metrics", '["bogus"]', "bogus"),
    ("recs", "metrics", '["rmse@3"]', "rmse@3"),
    ("recs", "metrics", '["precision@0"]', "precision@0"),
    ("recs", "metrics", "[]", ""),
    ("recs", "convention", '"nope"', "nope"),
    ("recs", "population_convention", '"lenskit"', "lenskit"),
    ("recs", "tail_ratio", "-1", "-1"),
    ("recs", "tail_ratio", '"x"', "x"),
    ("recs", "catalogue", "3", None),
    ("recs", "train", "[1]", None),
    ("recs", "item_features", "[1]", None),
    ("recs", "item_similarity", '"jaccard"', "jaccard"),
    ("recs", "serendipity_relevance", '"graded"', "graded"),
    ("recs", "original_ratings", "1", None),
    ("recs", "propensities", "[1]", None),
    ("recs", "propensity_preset", '"lshtc"', "lshtc"),
    ("recs", "propensity_a", '"x"', "x"),
    ("recs", "propensity_b", "[1]", None),
    ("recs", "cohorts", "[1]", None),
    ("recs", "cohort_missing", '"skip"', "skip"),
    ("recs", "user_groups", '["popular"]', "popular"),
    ("recs", "user_groups", '["a=0.5", "b=0.4"]', "0.9"),
    ("recs", "pop_percentage", "0", "0"),
    ("recs", "pop_percentage", "1.5", "1.5"),
    ("recs", "population_resamples", "-1", "-1"),
    ("recs", "population_resamples", "2.5", "2.5"),
    ("recs", "population_seed", "1.5", "1.5"),
    ("recs", "population_confidence", "1.5", "1.5"),
    ("recs", "population_confidence", "0", "0"),
    ("recs", "convention", '""', ""),
    ("recs", "key", '""', ""),
    ("recs", "key", "[]", None),
    ("recs", "relevant_threshold", "nan", "nan"),
    ("recs", "relevant_threshold", "inf", "inf"),
    ("recs", "relevant_threshold", '"median"', "median"),
    ("recs", "relevant_threshold", "true", None),
    ("recs", "beta", "-1", None),
    ("recs", "beta", "nan", None),
    ("recs", "beta", '"x"', None),
    ("recs", "gain_threshold", "nan", "nan"),
    ("recs", "gain_threshold", "-inf", "-inf"),
    ("recs", "gain_threshold", '"x"', "x"),
    ("recs", "log_base", "1", "1"),
    ("recs", "log_base", "0", "0"),
    ("recs", "log_base", "-2", "-2"),
    ("recs", "log_base", "nan", "nan"),
    ("recs", "log_base", '"e"', "e"),
    ("recs", "gain", '"relison"', None),  # needs a gain_threshold, which clayrs has not
    ("recs", "all_nan_error_metrics", '["bogus"]', None),
    ("recs", "all_nan_error_metrics", '"precision"', None),
    ("recs", "require_same_users", '"yes"', None),
    ("recs", "unweighted", "1", None),
    # logits
    ("logits", "columns", '{foo = "x"}', "foo=x"),
    ("logits", "columns", '{logits = {score = ""}}', None),
    ("logits", "k", "[0]", "0"),
    ("logits", "cutoffs", "[-1]", "-1"),
    ("logits", "k", "[2147483648]", "2147483648"),
    ("logits", "k", "[1.0]", "1.0"),
    ("logits", "metrics", '["bogus"]', "bogus"),
    ("logits", "metrics", '["acc@0"]', "acc@0"),
    ("logits", "metrics", '["mrr@5"]', "mrr@5"),
    ("logits", "metrics", "[]", None),
    ("logits", "convention", '"nope"', "nope"),
    ("logits", "convention", '""', ""),
    ("logits", "ties", '"nope"', "nope"),
    ("logits", "ties", "0", None),
    ("logits", "percent", '"yes"', None),
    ("logits", "ignore_target", "1.5", "1.5"),
    ("logits", "ignore_target", '"0"', None),
    ("logits", "logits_column", '""', ""),
    ("logits", "logits_column", "1", None),
    ("logits", "targets_column", '""', ""),
]
for _option in RECS_CHOICES:
    BAD.append(("recs", _option, '"nope"', "nope"))
    BAD.append(("recs", _option, "1", None))

IDS = [f"{family}/{option}={toml}" for family, option, toml, _ in BAD]


def _python_value(toml: str):
    return tomllib.loads(f"v = {toml}")["v"]


def _job(tmp_path: Path, inputs: Path, family: str, extra: str, models: dict | None = None) -> Path:
    truth, model = FILES[family][:2]
    models = models or {"m": inputs / model}
    lines = [f'out = "{tmp_path / "out"}"', "[[tasks]]", f'type = "{family}"', 'city = "c"']
    lines += [f'truth = "{inputs / truth}"', extra, "[tasks.models]"]
    lines += [f'{name} = "{path}"' for name, path in models.items()]
    path = tmp_path / "job.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _one_error_line(capsys, code: int) -> str:
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, (code, err)
    assert len(lines) == 1, err
    assert lines[0].startswith("mobeval: error: "), err
    assert "internal error" not in err and "Traceback" not in err, err
    assert out == "", out
    return lines[0]


def _call(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as stop:  # argparse's usage errors
        return stop.code


# --------------------------------------------------------------------------- the three faces


@pytest.mark.parametrize(("family", "option", "toml", "cli"), BAD, ids=IDS)
def test_job_names_the_key_and_writes_nothing(tmp_path, inputs, capsys, family, option, toml, cli):
    job = _job(tmp_path, inputs, family, f"{option} = {toml}")
    with pytest.raises(ConfigError) as info:
        load_job(job)  # at load time, before any model runs
    assert f"job.toml: tasks[0].{option}: " in str(info.value), info.value
    line = _one_error_line(capsys, _call(["run", str(job), "--quiet"]))
    assert f"job.toml: tasks[0].{option}: " in line, line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("family", "option", "toml", "cli"), BAD, ids=IDS)
def test_python_names_the_keyword(tmp_path, inputs, family, option, toml, cli):
    evaluate, truth_argument, model_argument = API[family]
    truth, model = FILES[family][:2]
    value = _python_value(toml)
    arguments = {truth_argument: inputs / truth, model_argument: inputs / model}
    with pytest.raises(OptionError) as info:
        evaluate(**arguments, out=tmp_path / "out", progress=False, **{option: value})
    assert info.value.option == option
    assert isinstance(info.value, ConfigError) and isinstance(info.value, ValueError)
    assert str(info.value).startswith((f"{option}=", f"{option} ", f"{option}:")), info.value
    assert not (tmp_path / "out").exists()


CLI_CASES = [case for case in BAD if case[3] is not None]


@pytest.mark.parametrize(
    ("family", "option", "toml", "cli"),
    CLI_CASES,
    ids=[f"{f}/--{o.replace('_', '-')} {c!r}" for f, o, _, c in CLI_CASES],
)
def test_cli_names_the_flag(tmp_path, inputs, capsys, family, option, toml, cli):
    truth, model, truth_flag, model_flag = FILES[family]
    flag = "--" + option.replace("_", "-")
    argv = [family, truth_flag, str(inputs / truth), model_flag, str(inputs / model)]
    argv += [f"{flag}={cli}", "--out", str(tmp_path / "out"), "--quiet"]
    line = _one_error_line(capsys, _call(argv))
    assert flag in line, line
    assert not (tmp_path / "out").exists()


def test_the_table_tries_every_option_of_every_family():
    """A new option must join the table: its wrong values are tried on every face."""
    tried = {(family, option) for family, option, _, _ in BAD}
    for family, kinds in OPTION_KINDS.items():
        missing = {(family, option) for option in kinds} - tried
        assert not missing, missing


def test_the_table_counts():
    assert len(BAD) >= 100 and len(CLI_CASES) >= 50


def test_good_values_pass_on_every_face(tmp_path, inputs, capsys):
    """The inputs and the options below are valid: each case above fails for its value."""
    good = {
        "nextloc": 'k = [1, 2]\nties = "pessimistic"\norder_by = "score"',
        "trajectory": 'matching = "optimal"\nexp = "libm"\nmetrics = ["geobleu"]',
        "recs": 'cutoffs = [1, 2]\nrelevant_threshold = 3.0\nlog_base = 10.0\nmetrics = ["ndcg"]',
        "logits": 'k = [1, 2]\nties = "average"\nignore_target = -100\npercent = true',
    }
    for family, extra in good.items():
        (tmp_path / family).mkdir()
        job = _job(tmp_path / family, inputs, family, extra)
        assert _call(["run", str(job), "--quiet"]) == 0, capsys.readouterr().err
        assert (tmp_path / family / "out" / "manifest.json").is_file()


# --------------------------------------------------------------------------- paths, at load time


def test_a_missing_second_model_stops_the_job_before_anything_is_written(tmp_path, inputs, capsys):
    job = _job(
        tmp_path,
        inputs,
        "nextloc",
        "k = [1]",
        models={"first": inputs / "pred.parquet", "second": inputs / "gone.parquet"},
    )
    with pytest.raises(ConfigError, match=r"tasks\[0\]\.models\.second: .*gone\.parquet"):
        load_job(job)
    line = _one_error_line(capsys, _call(["run", str(job), "--quiet"]))
    assert "job.toml" in line and "tasks[0].models.second" in line, line
    assert not (tmp_path / "out").exists()  # the first model was not run either


def _two_tasks(tmp_path: Path, inputs: Path, second: str) -> Path:
    """A valid nextloc task, then ``second`` (a [[tasks]] body)."""
    job = _job(tmp_path, inputs, "nextloc", "k = [1]")
    job.write_text(job.read_text() + "\n[[tasks]]\n" + second)
    return job


@pytest.mark.parametrize(
    ("second", "where"),
    [
        (  # the second task's truth is missing
            'type = "trajectory"\ncity = "d"\ntruth = "{i}/nope.csv"\n'
            '[tasks.models]\ng = "{i}/generated.parquet"\n',
            r"tasks\[1\]\.truth: .*nope\.csv: no such file",
        ),
        (  # a glob that matches nothing
            'type = "nextloc"\ncity = "d"\ntruth = "{i}/truth.parquet"\n'
            '[tasks.models]\ng = "{i}/none-*.parquet"\n',
            r"tasks\[1\]\.models\.g: .*none-\*\.parquet: no file matches",
        ),
        (  # an empty directory
            'type = "nextloc"\ncity = "d"\ntruth = "{i}/truth.parquet"\n'
            '[tasks.models]\ng = "{empty}"\n',
            r"tasks\[1\]\.models\.g: .*directory holds no",
        ),
        (  # a missing logits file
            'type = "logits"\ncity = "d"\ntruth = "{i}/targets.npy"\n'
            '[tasks.models]\ng = "{i}/nope.npy"\n',
            r"tasks\[1\]\.models\.g: .*nope\.npy: no such file",
        ),
        (  # a bad preset in the second task
            'type = "recs"\ncity = "d"\ntruth = "{i}/ratings.parquet"\nconvention = "nope"\n'
            '[tasks.models]\ng = "{i}/recs.parquet"\n',
            r"tasks\[1\]\.convention: unknown recommendation convention 'nope'",
        ),
        (  # a value that only the preset makes wrong: relison's gain without its threshold
            'type = "recs"\ncity = "d"\ntruth = "{i}/ratings.parquet"\ngain = "relison"\n'
            '[tasks.models]\ng = "{i}/recs.parquet"\n',
            r"tasks\[1\]\.gain: .*needs gain_threshold",
        ),
    ],
    ids=["truth", "glob", "empty-dir", "logits", "preset", "cross-option"],
)
def test_the_second_task_is_checked_before_the_first_runs(tmp_path, inputs, capsys, second, where):
    empty = tmp_path / "empty"
    empty.mkdir()
    job = _two_tasks(tmp_path, inputs, second.format(i=inputs, empty=empty))
    with pytest.raises(ConfigError, match=where):
        load_job(job)
    line = _one_error_line(capsys, _call(["run", str(job), "--quiet"]))
    assert str(job) in line, line
    assert not (tmp_path / "out").exists()


def test_a_valid_job_still_runs_every_model(tmp_path, inputs):
    job = _job(
        tmp_path,
        inputs,
        "nextloc",
        "k = [1]",
        models={"a": inputs / "pred.parquet", "b": inputs / "pred*.parquet"},
    )
    evaluations = run_job(load_job(job), log=lambda _: None)
    assert [e.model for e in evaluations] == ["a", "b"]


@pytest.mark.parametrize(
    ("name", "option", "value"),
    [
        ("evaluate_nextloc", "k", [0]),
        ("evaluate_nextloc", "ties", "nope"),
        ("evaluate_trajectory", "matching", "hungarian"),
        ("evaluate_recs", "log_base", 1.0),
        ("evaluate_recs", "averaging", "nope"),
    ],
)
def test_spark_engine_checks_options_before_touching_spark(name, option, value):
    """The same checks, before any session is asked for (none is running here)."""
    with pytest.raises(OptionError) as info:
        getattr(api, name)("truth", "predictions", engine="spark", **{option: value})
    assert info.value.option == option


def test_conventions_built_directly_refuse_wrong_values_naming_them():
    from mobeval.metrics.recs import RecsConvention
    from mobeval.metrics.trajectory import TrajectoryConvention

    for field, value in (("max_n", 0), ("max_n", "3"), ("beta", float("nan")), ("dtw_scale", 0)):
        with pytest.raises(OptionError) as info:
            TrajectoryConvention(**{field: value})
        assert info.value.option == field and isinstance(info.value, ValueError)
    for field in ("matching", "exp"):
        with pytest.raises(OptionError, match=f"{field}='x': must be"):
            TrajectoryConvention(**{field: "x"})
    with pytest.raises(ConfigError, match="gain_threshold must be finite"):
        RecsConvention(gain_threshold=float("nan"))


# --------------------------------------------------------------------------- URIs (Spark's)


def _uri_job(tmp_path: Path, inputs: Path) -> Path:
    job = _job(tmp_path, inputs, "nextloc", "k = [1]")
    job.write_text(job.read_text() + 'lake = "s3a://lake/tky/deepmove/"\n')
    return job


def test_a_uri_is_left_to_the_spark_engine_and_refused_by_the_local_one(tmp_path, inputs):
    job = load_job(_uri_job(tmp_path, inputs))  # not looked for on the local disk
    assert job.tasks[0].models["lake"] == "s3a://lake/tky/deepmove/"  # as given
    with pytest.raises(ConfigError, match=r"tasks\[0\]\.models\.lake: .*--engine spark"):
        run_job(job, log=lambda _: None)
    assert not (tmp_path / "out").exists()  # the first model did not run


def test_spark_looks_for_every_uri_before_any_model_runs(tmp_path, inputs, monkeypatch):
    pytest.importorskip("pyspark", reason="PySpark is not installed: pip install 'mobeval[spark]'")
    spark_engine = pytest.importorskip("mobeval.engines.spark.engine")
    asked = []

    class NoFiles:  # a file system where nothing exists; the session is never used
        def __init__(self, spark):
            pass

        def data_files(self, uri):
            asked.append(uri)
            return []

    monkeypatch.setattr(spark_engine, "Files", NoFiles)
    job = load_job(_uri_job(tmp_path, inputs))
    with pytest.raises(ConfigError, match=r"tasks\[0\]\.models\.lake: s3a://lake/tky/deepmove"):
        run_job(job, engine="spark", log=lambda _: None)
    assert asked == ["s3a://lake/tky/deepmove/"]  # the local paths were load_job's to check
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- the [report] table

#: (the [report] table's body, the key the message names, words of the message): each refused
#: by load_job, naming the file and report.<key>, before any model runs.
BAD_REPORT = [
    ('unit = "day"', "unit", "tasks[0] (city 'c') is a nextloc task; only trajectory results"),
    ('unit = "uid"', "unit", "is a nextloc task; its units are paired by default"),
    ('unit = "week"', "unit", "'week': choose among default, uid, day"),
    ('formats = ["pdf"]', "formats", "pdf"),
    ('test = "t-test"', "test", "'t-test': choose among"),
    ('tests = ["wilcoxon"]\ntest = "paired-t"', "test", "not among report.tests"),
    ("resamples = -1", "resamples", "-1"),
    ("confidence = 1.5", "confidence", "1.5"),
    ('family = "pairs"', "family", "'pairs': choose among all, metric"),
    ('correction = "fdr"', "correction", "choose among holm, bonferroni, bh, by, none"),
    ('letters = "yes"', "letters", "expected"),
    ('baseline = "nobody"', "baseline", "no model 'nobody'"),
    ('plots = "yes"', "plots", "expected"),
    ('colour = "red"', "colour", "unknown key 'colour'"),
]


def _report_job(tmp_path: Path, inputs: Path, family: str, report: str) -> Path:
    """A job of one city with two models of ``family``, then ``[report]`` with ``report``."""
    model = inputs / FILES[family][1]
    job = _job(tmp_path, inputs, family, "", models={"first": model, "second": model})
    plots = "" if "plots" in report else "plots = false\n"  # no matplotlib needed
    job.write_text(job.read_text() + f"[report]\n{plots}{report}\n")
    return job


@pytest.mark.parametrize(("report", "key", "words"), BAD_REPORT, ids=[r for r, *_ in BAD_REPORT])
def test_the_report_table_is_checked_when_the_job_is_loaded(
    tmp_path, inputs, capsys, report, key, words
):
    job = _report_job(tmp_path, inputs, "nextloc", report)
    where = "report" if key == "colour" else f"report.{key}"
    with pytest.raises(ConfigError, match=rf"job\.toml: {where}: ") as info:
        load_job(job)
    assert words in str(info.value), info.value
    line = _one_error_line(capsys, _call(["run", str(job), "--quiet"]))
    assert f"job.toml: {where}: " in line and words in line, line
    assert not (tmp_path / "out").exists()


def test_report_units_of_trajectories_are_accepted(tmp_path, inputs):
    """uid and day are units of trajectory results; a city with one model is not compared."""
    for unit in ("uid", "day"):
        assert load_job(_report_job(tmp_path, inputs, "trajectory", f'unit = "{unit}"')).report
    job = _job(tmp_path, inputs, "nextloc", "")
    job.write_text(job.read_text() + '[report]\nplots = false\nunit = "day"\n')
    assert load_job(job).report.compare == {"unit": "day"}
