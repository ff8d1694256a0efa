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
from mobeval.job_values import VALUE_KINDS
from mobeval.jobs import OPTION_KINDS, TASK_TYPES
from mobeval.metrics.nextloc import NextlocConvention
from mobeval.metrics.recs import RecsConvention
from mobeval.metrics.trajectory import REAL_COUNTS


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


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_one_evaluate_per_family_for_both_engines(name):
    parameters = inspect.signature(getattr(api, f"evaluate_{name}")).parameters
    assert {"engine", "spark", "partitions"} <= set(parameters)


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
    from mobeval.compare.results import effective_options

    family = FAMILIES[name]
    defining = {o.name for o in family.options if o.defines}
    given = {o.name: o.default for o in family.options if o.default is not FROM_PRESET}
    config = {**given, "city": "c", "model": "m", "type": name}
    effective = effective_options(name, config, "manifest.json")
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
import mobeval.tasks.nextloc_inputs as task  # the code that uses it: here, takes it and drops it
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


# --------------------------------------------------------------------------- convention fields

#: Sample 3 of the truth has no predictions; sample 1's list has two candidates.
_TRUTH = pl.DataFrame({"sample_id": [1, 2, 3], "location": [10, 20, 30]})
_PRED = pl.DataFrame(
    {
        "sample_id": [1, 1, 2, 2, 2],
        "location": [11, 10, 20, 21, 22],
        "score": [0.9, 0.1, 0.8, 0.5, 0.2],
    }
)


def test_missing_reaches_the_api():
    """missing="skip" leaves sample 3 out of the mean: acc@1 is 1/2 (sample 2 of 1, 2), not 1/3."""
    miss = api.evaluate_nextloc(_TRUTH, _PRED, k=[1], metrics=["acc@1"], progress=False)
    skip = api.evaluate_nextloc(
        _TRUTH, _PRED, k=[1], metrics=["acc@1"], missing="skip", progress=False
    )
    assert miss.value("acc@1") == pytest.approx(1 / 3, abs=1e-15)
    assert skip.value("acc@1") == pytest.approx(1 / 2, abs=1e-15)


def test_f1_reaches_the_api():
    """f1@2 per sample: sample 1 (hit at 2 of 2) P=1/2 R=1 F=2/3, sample 2 the same, sample 3
    none (0). mean: (2/3 + 2/3 + 0) / 3; aggregate: 2PR/(P+R) of P = 1/3, R = 2/3."""
    runs = {
        f1: api.evaluate_nextloc(
            _TRUTH, _PRED, k=[2], metrics=["f1@2"], f1=f1, progress=False
        ).value("f1@2")
        for f1 in ("mean", "aggregate")
    }
    p, r = (1 / 2 + 1 / 2 + 0) / 3, (1 + 1 + 0) / 3
    assert runs["mean"] == pytest.approx((2 / 3 + 2 / 3) / 3, abs=1e-15)
    assert runs["aggregate"] == pytest.approx(2 * p * r / (p + r), abs=1e-15)


def test_k_beyond_list_reaches_every_face(tmp_path, capsys):
    """k = 3 is longer than sample 1's list: allowed by default, an error when asked, from
    Python, the command line and a job file alike."""
    from mobeval.cli import main
    from mobeval.errors import MobevalError

    api.evaluate_nextloc(_TRUTH, _PRED, k=[3], progress=False)
    with pytest.raises(MobevalError):
        api.evaluate_nextloc(_TRUTH, _PRED, k=[3], k_beyond_list="error", progress=False)
    _TRUTH.write_parquet(tmp_path / "truth.parquet")
    _PRED.write_parquet(tmp_path / "pred.parquet")
    argv = ["nextloc", "--truth", str(tmp_path / "truth.parquet"), "--pred"]
    argv += [str(tmp_path / "pred.parquet"), "--k", "3", "--quiet"]
    assert main(argv) == 0
    assert main([*argv, "--k-beyond-list", "error"]) == 2
    job = tmp_path / "job.toml"
    job.write_text(
        'out = "out"\n[[tasks]]\ntype = "nextloc"\ntruth = "truth.parquet"\nk = [3]\n'
        'k_beyond_list = "error"\nmodels = { m = "pred.parquet" }\n'
    )
    assert main(["run", str(job), "--quiet"]) == 2
    assert "k" in capsys.readouterr().err


#: family -> (its two sample inputs, options naming the metrics computed)
_SAMPLES = {
    "nextloc": (
        ("data_samples/nextloc/tky/truth.parquet", "data_samples/nextloc/tky/markov.parquet"),
        {"k": [1], "metrics": ["acc@1", "mrr"]},
    ),
    "trajectory": (
        ("data_samples/humob/reference_test.csv.gz", "data_samples/humob/weekly_repeat.csv.gz"),
        {"metrics": ["dtw"]},
    ),
    "recs": (
        ("data_samples/recs/ratings.parquet", "data_samples/recs/mf.parquet"),
        {"metrics": ["ndcg@5"]},
    ),
    "logits": (
        ("data_samples/logits/targets.npy", "data_samples/logits/gru.npy"),
        {"metrics": ["acc@1"]},
    ),
}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_counts_are_the_summary_rows_besides_the_metrics(name):
    """``Family.counts`` (printed as integers) names exactly the summary rows that are not the
    metrics asked for, and each of them counts itself (value = n, an integer)."""
    from conftest import REPO_ROOT

    (truth, model), options = _SAMPLES[name]
    family = FAMILIES[name]
    evaluate = getattr(api, f"evaluate_{name}")
    inputs = {family.truth: REPO_ROOT / truth, family.model: REPO_ROOT / model}
    summary = evaluate(**inputs, progress=False, **options).summary
    named = set(options["metrics"])
    paired = [c for c in family.counts if c not in REAL_COUNTS]  # real_*: unpaired inputs only
    assert [m for m in summary["metric"] if m not in named] == paired
    for metric, value, n, std in summary.iter_rows():
        if metric in family.counts:
            assert value == n and float(value).is_integer() and std is None, metric
