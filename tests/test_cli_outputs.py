"""What the single commands print and write: without ``--out`` nothing is written and the summary
is printed; ``--format`` table, markdown, csv or json prints the values written under ``--out``
(counts as integers); ``--help`` shows every option's choices and default, each preset in one
line and an example, within 80 columns; a message suggesting an option value names the flag."""

from __future__ import annotations

import csv
import io
import json
import math
import re

import numpy as np
import polars as pl
import pytest
import test_job_validation as job_validation

from mobeval.cli import main
from mobeval.cli.commands import build_parser
from mobeval.cli.parser import EXAMPLES
from mobeval.families import FAMILIES, FROM_PRESET
from mobeval.messages import cli_spelling

TRUTH = pl.DataFrame({"sample_id": [1, 2, 3, 4], "location": [10, 20, 30, 40]})
PRED = pl.DataFrame(
    {
        "sample_id": [1, 1, 2, 2, 3, 3],
        "location": [10, 11, 21, 20, 31, 32],
        "score": [0.9, 0.1, 0.8, 0.2, 0.7, 0.3],
    }
)


@pytest.fixture()
def files(tmp_path):
    TRUTH.write_parquet(tmp_path / "truth.parquet")
    PRED.write_parquet(tmp_path / "pred.parquet")
    return tmp_path


def _argv(files, *more):
    argv = ["nextloc", "--truth", str(files / "truth.parquet"), "--pred"]
    return [*argv, str(files / "pred.parquet"), "--k", "1,2", "--convention", "libcity", *more]


def _run(capsys, argv) -> str:
    code = main([*argv, "--quiet"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def _written(files, capsys) -> pl.DataFrame:
    """The summary as ``--out`` writes it."""
    _run(capsys, _argv(files, "--out", str(files / "out")))
    return pl.read_parquet(files / "out" / "summary" / f"city={files.name}" / "model=pred")


def test_without_out_nothing_is_written(files, capsys, monkeypatch):
    work = files / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    printed = _run(capsys, _argv(files))
    assert "acc@1" in printed and "samples" in printed
    assert list(work.iterdir()) == [] and sorted(p.name for p in files.iterdir()) == [
        "pred.parquet",
        "truth.parquet",
        "work",
    ]


def test_json_is_the_written_summary_and_the_resolved_options(files, capsys):
    written = _written(files, capsys)
    document = json.loads(_run(capsys, _argv(files, "--format", "json")))
    named = (document["task"], document["city"], document["model"])
    assert named == ("nextloc", files.name, "pred")
    assert document["outputs"] is None
    for metric, value, n, std in written.iter_rows():
        assert document["summary"][metric] == value and document["n"][metric] == n
        assert document["std"].get(metric) == std  # none for the counts
    # counts are JSON integers: 4 samples in the truth, 1 of them without predictions
    assert document["summary"]["samples"] == TRUTH.height == 4
    assert type(document["summary"]["samples"]) is int
    assert document["summary"]["samples_without_predictions"] == 1
    assert type(document["summary"]["acc@1"]) is float
    # the options as the run used them: the preset's fields spelled out
    options = document["options"]
    assert options["convention"] == "libcity" and options["k"] == [1, 2]
    assert options["k_beyond_list"] == "error" and options["ties"] == "id_asc"
    assert options["f1"] == "aggregate" and options["missing"] == "miss"


def test_csv_rows_are_the_written_summary(files, capsys):
    written = _written(files, capsys)
    rows = list(csv.DictReader(io.StringIO(_run(capsys, _argv(files, "--format", "csv")))))
    assert [r["metric"] for r in rows] == written["metric"].to_list()
    counts = set(FAMILIES["nextloc"].counts)
    for row, (metric, value, n, std) in zip(rows, written.iter_rows(), strict=True):
        assert (row["city"], row["model"], int(row["n"])) == (files.name, "pred", n)
        assert float(row["value"]) == value  # every digit: the float round-trips
        assert row["std"] == ("" if std is None else repr(std))
        if metric in counts:
            assert row["value"] == str(int(value))


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_tables_print_counts_as_integers(files, capsys, fmt):
    written = _written(files, capsys)
    printed = _run(capsys, _argv(files, "--format", fmt))
    cells = {}
    for line in printed.splitlines():
        parts = [p.strip() for p in line.replace("┆", "|").replace("│", "|").split("|")]
        parts = [p for p in parts if p]
        if len(parts) == 2:
            cells[parts[0]] = parts[1]
    for metric, value, _, _ in written.iter_rows():
        if metric in FAMILIES["nextloc"].counts:
            assert cells[metric] == str(int(value))
        else:
            assert cells[metric] == f"{value:.6f}"
    if fmt == "markdown":
        assert "| metric" in printed and "|---" in printed.replace(" ", "")


def test_a_job_prints_one_json_object_with_every_result(files, capsys):
    job = files / "job.toml"
    job.write_text(
        'out = "out"\n[[tasks]]\ntype = "nextloc"\ncity = "c"\ntruth = "truth.parquet"\n'
        'k = [1]\nconvention = "trec_eval"\n'
        'models = { first = "pred.parquet", second = "pred.parquet" }\n'
    )
    single = job.with_name("single.toml")
    single.write_text(job.read_text().replace(', second = "pred.parquet"', ""))
    one = json.loads(
        _run(capsys, ["run", str(single), "--format", "json", "--out", str(files / "single")])
    )
    assert [r["model"] for r in one["results"]] == ["first"]  # a job's shape, one result or many
    document = json.loads(_run(capsys, ["run", str(job), "--format", "json"]))
    results = document["results"]
    assert [(r["city"], r["model"]) for r in results] == [("c", "first"), ("c", "second")]
    for result in results:
        assert result["options"]["missing"] == "skip" and result["options"]["k"] == [1]
        assert set(result["outputs"]) == {"per_unit", "summary"}
        written = pl.read_parquet(files / "out" / "summary" / "city=c" / f"model={result['model']}")
        assert result["summary"] == {
            m: (int(v) if m in FAMILIES["nextloc"].counts else v)
            for m, v, _, _ in written.iter_rows()
        }


def test_json_has_no_nan_or_infinity(tmp_path, capsys):
    """A -inf target logit makes cross-entropy +inf; JSON spells it "inf" (and NaN null)."""
    logits = np.array([[0.0, 1.0, 2.0], [-np.inf, 1.0, 0.5]])
    np.save(tmp_path / "logits.npy", logits)
    np.save(tmp_path / "targets.npy", np.array([2, 0]))
    argv = ["logits", "--logits", str(tmp_path / "logits.npy"), "--targets"]
    argv += [str(tmp_path / "targets.npy"), "--format", "json"]
    text = _run(capsys, argv)
    assert "Infinity" not in text and "NaN" not in text
    document = json.loads(text)
    assert document["summary"]["cross_entropy"] == "inf"
    assert math.isclose(document["summary"]["acc@1"], 0.5)


# --------------------------------------------------------------------------- help


def _help(command: str, monkeypatch) -> str:
    monkeypatch.setenv("COLUMNS", "80")
    return build_parser()._subparsers._group_actions[0].choices[command].format_help()


@pytest.mark.parametrize("command", sorted(EXAMPLES))
def test_help_fits_80_columns_and_ends_with_an_example(command, monkeypatch):
    text = _help(command, monkeypatch)
    assert max(map(len, text.splitlines())) <= 80, text
    assert "example:" in text
    assert " ".join(text.split("example:")[1].split()) == EXAMPLES[command]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_help_shows_every_choice_default_and_preset(family, monkeypatch):
    text = " ".join(_help(family, monkeypatch).split())  # argparse wraps lines
    definition = FAMILIES[family]
    for option in definition.options:
        if option.flag is None:
            continue
        assert option.flag_name in text and option.help, option.name  # every flag says what
        if option.flag.switch:  # on or off: its help says what on does
            continue
        for choice in option.allowed() or ():
            assert str(choice) in text, (option.name, choice)
        default = option.default
        if default is FROM_PRESET or (option.preset and default is None):
            assert f"{option.flag_name} {option.name.upper()} {option.help}" in text
        elif isinstance(default, str):
            assert f"default: {default}" in text, option.name
    assert set(definition.preset_help) == set(definition.presets())
    for name, line in definition.preset_help.items():
        assert f"{name} {line}" in text


# --------------------------------------------------------------------------- messages


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_python_spellings_become_flags(family):
    for option in FAMILIES[family].options:
        if option.flag is None or option.allowed() is None:
            continue
        for choice in option.allowed():
            for quote in ("'", '"'):
                message = f"x (use {option.name}={quote}{choice}{quote} to go on)"
                shown = cli_spelling(message, family)
                assert f"{option.name}=" not in shown
                assert f"(use {option.cli_spelling(choice)} to go on)" in shown
    assert cli_spelling("sample_id=2: k=3", "nextloc") == "sample_id=2: k=3"


def test_switches_are_named_by_their_flags(tmp_path, capsys):
    """Real messages of the tasks, under the command line: --drop-unmatched,
    --score-out-of-grid, --duplicates drop; never the Python keyword."""
    TRUTH.filter(pl.col("sample_id") != 3).write_parquet(tmp_path / "truth.parquet")
    PRED.write_parquet(tmp_path / "pred.parquet")
    pl.concat([PRED, PRED.head(1)]).write_parquet(tmp_path / "dup.parquet")
    reference = pl.DataFrame({"uid": [1, 1], "d": [60, 60], "t": [0, 1], "x": [1, 2], "y": [1, 2]})
    reference.write_parquet(tmp_path / "reference.parquet")
    reference.with_columns(y=pl.lit(999)).write_parquet(tmp_path / "generated.parquet")
    cases = [
        (["nextloc", "--truth", "truth.parquet", "--pred", "pred.parquet"], "--drop-unmatched"),
        (["nextloc", "--truth", "truth.parquet", "--pred", "dup.parquet"], "--duplicates drop"),
        (
            ["trajectory", "--reference", "reference.parquet", "--generated", "generated.parquet"],
            "--score-out-of-grid",
        ),
    ]
    for argv, flag in cases:
        argv = [a if not a.endswith(".parquet") else str(tmp_path / a) for a in argv]
        assert main([*argv, "--quiet"]) == 2
        err = capsys.readouterr().err
        assert flag in err and "='" not in err, err


CLI_CASES, FILES = job_validation.CLI_CASES, job_validation.FILES
inputs = job_validation.inputs  # the fixture: one small valid input of every family


def _leaks(line: str, family: str) -> list[str]:
    """The Python spellings of options in a message: ``name='value'`` / ``name="value"`` of any
    option, and bare option names with an underscore (``gain_threshold``)."""
    found = []
    for option in FAMILIES[family].options:
        if option.flag is None:
            continue
        if f"{option.name}='" in line or f'{option.name}="' in line:
            found.append(option.name)
        if "_" in option.name and re.search(rf"(?<![\w-]){option.name}\b", line):
            found.append(option.name)
    return found


@pytest.mark.parametrize(
    ("family", "option", "toml", "cli"),
    CLI_CASES,
    ids=[f"{f}/--{o.replace('_', '-')} {c!r}" for f, o, _, c in CLI_CASES],
)
def test_no_wrong_value_is_named_as_in_python(tmp_path, inputs, capsys, family, option, toml, cli):
    """Every wrong value the command line can give (the job-validation table's): its one error
    line spells no option as Python does."""
    truth, model, truth_flag, model_flag = FILES[family]
    argv = [family, truth_flag, str(inputs / truth), model_flag, str(inputs / model)]
    flag = FAMILIES[family].option(option).flag_name
    try:
        code = main([*argv, f"{flag}={cli}", "--quiet"])
    except SystemExit as usage:  # argparse's own errors (a wrong choice, not an integer)
        code = usage.code
    assert code == 2
    line = capsys.readouterr().err.strip()
    assert not _leaks(line, family), line


def test_validate_help_lists_every_task_with_its_uids_and_days(monkeypatch):
    from mobeval.validate.humob import TASKS

    text = _help("validate", monkeypatch)
    for name, spec in TASKS.items():
        line = f"  {name} "
        assert any(
            row.startswith(line)
            and f"uids {spec.uid_min}..{spec.uid_max}" in row
            and f"days {spec.d_min}..{spec.d_max}" in row
            for row in text.splitlines()
        ), name


def test_the_command_list_fits_80_columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    text = build_parser().format_help()
    assert max(map(len, text.splitlines())) <= 80, text
    listed = {line.split()[0] for line in text.splitlines() if line.startswith("    ")}
    assert set(EXAMPLES) <= listed


def test_json_text_is_the_document():
    """Lists of plain values on one line, the document unchanged (strings with commas,
    brackets or quotes included)."""
    from mobeval.cli.printing import _json_text

    document = {"a": [1, 2, "x, y", "[b]"], "b": [], "c": {"d": [1.5, None]}, "e": [[1], [2, 3]]}
    document["f"] = ['a"b', "c,\nd"]
    text = _json_text(document)
    assert json.loads(text) == document
    assert '"d": [1.5, null]' in text and '"e": [\n' in text
