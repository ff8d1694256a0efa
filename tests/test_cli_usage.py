"""The command line behaves as people expect: an option is read as it is spelled or refused
(no abbreviations), a misspelt option is named with the option it resembles and the
subcommand's ``--help``, ``mobeval`` alone prints the help, and the cutoffs have one name
(``k``) in every family with ``cutoffs`` accepted as the same option on every face (flag, job
key, Python keyword)."""

from __future__ import annotations

import argparse

import pytest
import test_job_validation as job_validation

from mobeval.cli import build_parser, main
from mobeval.errors import ConfigError, OptionError
from mobeval.families import FAMILIES
from mobeval.jobs import load_job, run_job

FILES, API = job_validation.FILES, job_validation.API
inputs = job_validation.inputs  # the fixture: one small valid input of every family


def _call(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as stop:  # argparse's usage errors
        return stop.code


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _required_argv(command: str, parser: argparse.ArgumentParser) -> list[str]:
    """``command`` with a placeholder for every required argument (nothing is read: a usage
    error stops the command first)."""
    argv = [command]
    for action in parser._actions:
        if not action.option_strings and action.nargs != 0:
            argv.append("x")  # a positional: a job, an OUT, trec_eval's two files
        elif action.required:
            argv += [action.option_strings[0], action.choices[0] if action.choices else "x"]
    return argv


def _prefixes() -> list[tuple[str, str, str]]:
    """(command, a long option, a prefix of it that is no option of the command): what
    argparse would read as the option with abbreviations on."""
    cases = []
    for command, parser in _subcommands().items():
        options = {o for o in parser._option_string_actions if o.startswith("--")}
        for option in sorted(options):
            prefix = next(
                (option[:n] for n in range(len(option) - 1, 3, -1) if option[:n] not in options),
                None,
            )
            if prefix is not None:
                cases.append((command, option, prefix))
    return cases


PREFIXES = _prefixes()


def test_every_command_has_options_to_abbreviate():
    commands = {command for command, _, _ in PREFIXES}
    assert commands == set(_subcommands()), commands
    assert len(PREFIXES) > 50


@pytest.mark.parametrize(("command", "option", "prefix"), PREFIXES, ids=[p[2] for p in PREFIXES])
def test_no_option_is_read_from_a_prefix(capsys, command, option, prefix):
    parser = _subcommands()[command]
    argv = [*_required_argv(command, parser), prefix]
    if parser._option_string_actions[option].nargs != 0:
        argv.append("1")
    assert _call(argv) == 2
    err = capsys.readouterr().err
    assert f"unrecognized arguments: {prefix}" in err, err
    assert f"(see 'mobeval {command} --help')" in err, err


def test_k_is_not_read_as_key(inputs, capsys):
    """The issue's case: ``--k 5,10`` in recs was read as ``--key 5,10``."""
    argv = ["recs", "--ratings", str(inputs / "ratings.parquet"), "--recs"]
    argv += [str(inputs / "recs.parquet"), "--k", "5,10", "--quiet", "--format", "csv"]
    assert _call(argv) == 0, capsys.readouterr().err
    assert "ndcg@10" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("command", "typo", "meant"),
    [
        ("recs", "--cutof", "--cutoffs"),
        ("nextloc", "--conventoin", "--convention"),
        ("trajectory", "--skip-mismatch", "--skip-mismatched"),
        ("logits", "--precent", "--percent"),
        ("run", "--resum", "--resume"),
        ("compare", "--baselin", "--baseline"),
    ],
)
def test_a_misspelt_option_names_what_it_resembles_and_the_commands_help(
    capsys, command, typo, meant
):
    argv = [*_required_argv(command, _subcommands()[command]), typo]
    assert _call(argv) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert f"(did you mean {meant}?)" in line, line
    assert line.endswith(f"(see 'mobeval {command} --help')"), line


def test_mobeval_alone_prints_the_help(capsys):
    """As pip does: the help on standard output, exit 0 (a question, not a mistake)."""
    assert main([]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out == build_parser().format_help()
    assert all(command in out for command in _subcommands())


def test_mobeval_alone_reads_sys_argv(capsys, monkeypatch):
    monkeypatch.setattr("sys.argv", ["mobeval"])
    assert main() == 0
    assert capsys.readouterr().out.startswith("usage: mobeval")


# --------------------------------------------------------------------------- one name: k

CUTOFF_FAMILIES = sorted(f for f in FAMILIES if "k" in FAMILIES[f].names)


def test_every_ranking_family_calls_its_cutoffs_k():
    assert CUTOFF_FAMILIES == ["logits", "nextloc", "recs"]
    for family in CUTOFF_FAMILIES:
        assert FAMILIES[family].option("cutoffs") is FAMILIES[family].option("k")


def _cli_csv(capsys, family: str, inputs, *more: str) -> str:
    truth, model, truth_flag, model_flag = FILES[family]
    argv = [family, truth_flag, str(inputs / truth), model_flag, str(inputs / model)]
    assert _call([*argv, *more, "--quiet", "--format", "csv"]) == 0, capsys.readouterr().err
    return capsys.readouterr().out


@pytest.mark.parametrize("family", CUTOFF_FAMILIES)
def test_cutoffs_is_k_on_the_command_line(inputs, capsys, family):
    by_k = _cli_csv(capsys, family, inputs, "--k", "2,3")
    assert "@3" in by_k and "@10" not in by_k
    assert _cli_csv(capsys, family, inputs, "--cutoffs", "2,3") == by_k


@pytest.mark.parametrize("family", CUTOFF_FAMILIES)
def test_cutoffs_is_k_in_python(inputs, family):
    evaluate, truth, model = API[family]
    arguments = {truth: inputs / FILES[family][0], model: inputs / FILES[family][1]}
    by_k = evaluate(**arguments, progress=False, k=[2, 3]).summary
    assert by_k.equals(evaluate(**arguments, progress=False, cutoffs=[2, 3]).summary)
    assert "@3" in "".join(by_k["metric"])


@pytest.mark.parametrize("family", CUTOFF_FAMILIES)
def test_cutoffs_is_k_in_a_job_file(tmp_path, inputs, family):
    summaries = []
    for key in ("k", "cutoffs"):
        (tmp_path / key).mkdir()
        job = load_job(job_validation._job(tmp_path / key, inputs, family, f"{key} = [2, 3]"))
        assert job.tasks[0].options == {"k": [2, 3]}  # the manifest's config: one name
        (evaluation,) = run_job(job, progress=False, log=lambda _: None)
        summaries.append(evaluation.summary)
    assert summaries[0].equals(summaries[1])


@pytest.mark.parametrize("family", CUTOFF_FAMILIES)
def test_k_given_twice_is_refused_on_every_face(tmp_path, inputs, capsys, family):
    evaluate, truth, model = API[family]
    arguments = {truth: inputs / FILES[family][0], model: inputs / FILES[family][1]}
    with pytest.raises(OptionError, match="given twice, as cutoffs and as k"):
        evaluate(**arguments, progress=False, k=[2], cutoffs=[3])
    job = job_validation._job(tmp_path, inputs, family, "k = [2]\ncutoffs = [3]")
    with pytest.raises(ConfigError, match=r"tasks\[0\]\.k: given twice"):
        load_job(job)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("family", CUTOFF_FAMILIES)
def test_a_wrong_cutoff_is_named_as_typed(tmp_path, inputs, capsys, family):
    evaluate, truth, model = API[family]
    arguments = {truth: inputs / FILES[family][0], model: inputs / FILES[family][1]}
    with pytest.raises(OptionError) as info:
        evaluate(**arguments, progress=False, cutoffs=[0])
    assert info.value.option == "cutoffs" and str(info.value).startswith("cutoffs=")
    truth_file, model_file, truth_flag, model_flag = FILES[family]
    argv = [family, truth_flag, str(inputs / truth_file), model_flag, str(inputs / model_file)]
    for flag in ("--k", "--cutoffs"):
        assert _call([*argv, flag, "0", "--quiet"]) == 2
        assert f"mobeval: error: {flag}: " in capsys.readouterr().err
