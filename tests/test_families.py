"""Every face reads each family's one definition (mobeval.families): the command line's flags,
the job file's keys and kinds, the Python keyword arguments and their checks, the Spark entry
points and the manifest's resolved options hold exactly the options it lists."""

from __future__ import annotations

import dataclasses
import inspect

import polars as pl
import pytest

from mobeval import api
from mobeval.cli import build_parser
from mobeval.errors import OptionError
from mobeval.families import FAMILIES, FROM_PRESET, resolved_options
from mobeval.jobs import OPTION_KINDS, TASK_TYPES, VALUE_KINDS
from mobeval.metrics.nextloc import NextlocConvention
from mobeval.metrics.recs import RecsConvention


def _flags(command: str) -> set[str]:
    parser = build_parser()._subparsers._group_actions[0].choices[command]
    return {s for action in parser._actions for s in action.option_strings}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_cli_flags_come_from_the_definition(name):
    family = FAMILIES[name]
    expected = set()
    for option in family.options:
        if option.flag is not None:
            expected.add(option.flag.switch or f"--{option.name.replace('_', '-')}")
    assert expected <= _flags(name)
    others = _flags(name) - expected
    assert not {f.removeprefix("--").replace("-", "_") for f in others} & family.names


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_job_keys_and_kinds_come_from_the_definition(name):
    family = FAMILIES[name]
    assert TASK_TYPES[name].options == family.names
    assert OPTION_KINDS[name] == {o.name: o.kind for o in family.options}
    assert set(OPTION_KINDS[name].values()) <= set(VALUE_KINDS)
    assert (TASK_TYPES[name].truth_argument, TASK_TYPES[name].model_argument) == (
        family.truth,
        family.model,
    )


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_python_signature_comes_from_the_definition(name):
    family = FAMILIES[name]
    parameters = inspect.signature(getattr(api, f"evaluate_{name}")).parameters
    for option in family.options:
        if option.default is FROM_PRESET:
            assert option.name not in parameters
        else:
            assert parameters[option.name].default == option.default
    assert {family.truth, family.model} <= set(parameters)


def test_spark_signatures_come_from_the_definition():
    spark = pytest.importorskip("mobeval.engines.spark", exc_type=ImportError)
    for name, (function, truth, model) in spark.SPARK_EVALUATE.items():
        parameters = inspect.signature(function).parameters
        assert (truth, model) == (FAMILIES[name].truth, FAMILIES[name].model)
        assert set(FAMILIES[name].defaults()) <= set(parameters)


def test_preset_options_are_convention_fields():
    assert {o.name for o in FAMILIES["recs"].options if o.preset} == {
        f.name for f in dataclasses.fields(RecsConvention)
    }
    nextloc = {f.name for f in dataclasses.fields(NextlocConvention)}
    assert {o.name for o in FAMILIES["nextloc"].options if o.preset} <= nextloc


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_an_unknown_keyword_is_an_option_error(name):
    family = FAMILIES[name]
    with pytest.raises(OptionError, match=f"not an option of {family.title}") as info:
        getattr(api, f"evaluate_{name}")(**{family.truth: None, family.model: None}, bogus=1)
    assert info.value.option == "bogus"


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_resolved_options_name_every_option(name):
    resolved = resolved_options(name, {})
    assert FAMILIES[name].names <= set(resolved)
    assert FROM_PRESET not in resolved.values()


def test_resolved_options_spell_out_the_preset():
    assert resolved_options("nextloc", {"convention": "trec_eval"})["ties"] == "id_desc_str"
    recs = resolved_options("recs", {"convention": "trec_eval", "relevant_threshold": None})
    assert recs["relevant_threshold"] is None and recs["order"] == "score_id_str_desc"
    assert resolved_options("trajectory", {"convention": "humob2024"})["max_n"] == 3
    assert resolved_options("logits", {"convention": "sklearn"})["mrr_ties"] == "pessimistic"


def test_the_manifest_records_resolved_next_to_typed(tmp_path):
    truth = pl.DataFrame({"sample_id": [1, 2], "location": [10, 20]})
    pred = pl.DataFrame({"sample_id": [1, 2], "location": [10, 21], "score": [1.0, 1.0]})
    typed = {"k": [1], "convention": "ranx"}
    result = api.evaluate_nextloc(truth, pred, out=tmp_path, city="c", model="m", **typed)
    api.Manifest(tmp_path, {}).record(result, typed, "nextloc")
    import json

    entry = json.loads((tmp_path / "manifest.json").read_text())["results"]["city=c/model=m"]
    assert entry["config"] == typed
    assert entry["resolved"]["ties"] == "ranx" and entry["resolved"]["duplicates"] == "drop"
    assert entry["resolved"]["order_by"] == "auto" and entry["resolved"]["k"] == [1]


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_compare_pairs_on_the_options_that_define_values(name):
    from mobeval.compare import _effective_options

    family = FAMILIES[name]
    defining = {o.name for o in family.options if o.defines}
    given = {o.name: o.default for o in family.options if o.default is not FROM_PRESET}
    effective = _effective_options(name, {**given, "city": "c", "model": "m", "type": name})
    assert set(effective) <= defining
    assert {n for n in defining if given.get(n) is not None} <= set(effective)


def test_adding_an_option_is_one_edit_of_the_definition():
    """The recipe of docs/architecture.md: an Option added to the definition (before the faces
    are imported), and the code that uses it, give a flag, a job key of its kind, a checked
    Python keyword with its default in the signature, with no face edited."""
    import subprocess
    import sys

    script = """
import dataclasses
from mobeval import families
from mobeval.families import Flag, Option
extra = Option("smoothing", "number", 0.0, "a new option", flag=Flag("finite"))
new = dataclasses.replace(families.NEXTLOC, options=(*families.NEXTLOC.options, extra))
families.FAMILIES["nextloc"] = new
import mobeval.tasks.nextloc as task  # the code that uses it: here, takes it and drops it
original = task.nextloc_spec
task.nextloc_spec = lambda *, smoothing, **rest: original(**rest)
import inspect
from mobeval import api, cli, jobs
from mobeval.errors import OptionError
from mobeval.options import check_options
args = cli.build_parser().parse_args(
    ["nextloc", "--truth", "t", "--pred", "p", "--out", "o", "--smoothing", "0.5"])
assert cli.family_options(args, "nextloc")["smoothing"] == 0.5
assert "smoothing" in jobs.TASK_TYPES["nextloc"].options
assert jobs.OPTION_KINDS["nextloc"]["smoothing"] == "number"
assert inspect.signature(api.evaluate_nextloc).parameters["smoothing"].default == 0.0
check_options("nextloc", {"smoothing": 0.5})
try:
    check_options("nextloc", {"smoothing": "x"})
except OptionError as error:
    assert error.option == "smoothing"
else:
    raise AssertionError("not checked")
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
