"""A damaged OUT folder read by ``mobeval compare``, ``mobeval report``, ``run --resume`` and the
readers of :mod:`mobeval.io.outputs`: a truncated or rewritten Parquet file, a summary without its
columns, a per-unit file without a metric, unit keys of another type in one model, a stored
comparison that is not Parquet, a manifest whose entries have the wrong JSON types or lack keys.
Each is one ``mobeval: error:`` line naming the file (and the entry or column; exit 2), never an
internal error, and nothing is written; except that a report whose comparison cannot be
computed is still written, its note naming the file (as for a result scored without per-unit
values)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from mobeval.api import Manifest
from mobeval.cli import main
from mobeval.compare import compare
from mobeval.errors import InputError
from mobeval.io.outputs import read_manifest, scan_outputs
from mobeval.report import Report
from tests.conftest import REPO_ROOT

RESULT = "city=tky/model=popularity"


@pytest.fixture(scope="module")
def scored(nextloc_sample_out, tmp_path_factory):
    """The next-location sample job's OUT, with the stored comparison of city tky."""
    out = tmp_path_factory.mktemp("damaged") / "out"
    shutil.copytree(nextloc_sample_out, out)
    assert main(["compare", str(out), "--city", "tky", "--resamples", "50"]) == 0
    return out


def only_part(out: Path, section: str) -> Path:
    (part,) = sorted((out / section / RESULT).glob("*.parquet"))
    return part


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])


def rewrite(path: Path, change) -> None:
    change(pl.read_parquet(path)).write_parquet(path)


DAMAGES = {
    "truncated per-unit file": (
        lambda out: truncate(only_part(out, "per_unit")),
        lambda out: only_part(out, "per_unit"),
        "not a readable mobeval output file",
    ),
    "truncated summary": (
        lambda out: truncate(only_part(out, "summary")),
        lambda out: only_part(out, "summary"),
        "not a readable mobeval output file",
    ),
    "summary without n": (
        lambda out: rewrite(only_part(out, "summary"), lambda f: f.drop("n")),
        lambda out: out / "summary" / RESULT,
        "column 'n'",
    ),
    "summary values as text": (
        lambda out: rewrite(
            only_part(out, "summary"), lambda f: f.with_columns(pl.col("value").cast(pl.String))
        ),
        lambda out: out / "summary" / RESULT,
        "column 'value'",
    ),
    "per-unit file without its key": (
        lambda out: rewrite(only_part(out, "per_unit"), lambda f: f.drop("sample_id")),
        lambda out: out / "per_unit" / RESULT,
        "column 'sample_id'",
    ),
}


@pytest.mark.parametrize("command", ["compare", "report"])
@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_damaged_result_is_one_line_naming_the_file(scored, damage, command, tmp_path, capsys):
    out = tmp_path / "out"
    shutil.copytree(scored, out)
    shutil.rmtree(out / "compare")  # report compares again, reading every per-unit file
    change, named, words = DAMAGES[damage]
    change(out)
    report = tmp_path / "report.html"
    argv = {
        "compare": ["compare", str(out), "--city", "tky", "--resamples", "50"],
        "report": ["report", str(out), "--no-plots", "--output", str(report)],
    }[command]
    capsys.readouterr()
    if command == "report" and "per-unit" in damage:
        # the report is written without significance markers, and says why, naming the file
        assert main(argv) == 0
        assert f"no significance markers: {named(out)}" in report.read_text()
        return
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mobeval: error: {named(out)}") and words in err, err
    assert len(err.splitlines()) == 1 and "internal error" not in err
    assert not report.exists() and not (out / "compare").exists()


def test_stored_comparison_that_is_not_parquet(scored, tmp_path, capsys):
    out = tmp_path / "out"
    shutil.copytree(scored, out)
    stored = out / "compare" / "city=tky" / "part-0.parquet"
    stored.write_bytes(b"PAR1 not really")
    report = tmp_path / "report.html"
    capsys.readouterr()
    assert main(["report", str(out), "--no-plots", "--output", str(report)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mobeval: error: {stored}: not a readable mobeval output file"), err
    assert not report.exists()


# --------------------------------------------------------------------------------------------
# Damaged manifests: every reader of OUT names the file, the result and the key


def _entry(change):
    """A damage of the manifest: ``change`` applied to the popularity model's tky result."""

    def damage(document: dict) -> dict:
        change(document["results"][RESULT])
        return document

    return damage


ENTRY = f'results["{RESULT}"]'
#: name: (the manifest document -> the damaged document, what the message says)
MANIFEST_DAMAGES = {
    "config a string": (
        _entry(lambda e: e.update(config="k=5")),
        f"{ENTRY}.config is a string, not an object",
    ),
    "outputs a number": (
        _entry(lambda e: e.update(outputs=3)),
        f"{ENTRY}.outputs is an integer, not an object",
    ),
    "inputs a list": (
        _entry(lambda e: e.update(inputs=[e["inputs"]])),
        f"{ENTRY}.inputs is an array, not an object",
    ),
    "no task": (_entry(lambda e: e.pop("task")), f'{ENTRY} has no "task"'),
    "no config_hash": (_entry(lambda e: e.pop("config_hash")), f'{ENTRY} has no "config_hash"'),
    "an output folder that is null": (
        _entry(lambda e: e["outputs"].update(summary=None)),
        f'{ENTRY}.outputs["summary"] is null, not a string',
    ),
    "a file size as text": (
        _entry(lambda e: e["files"]["summary"].update({"part-00000.parquet": "1597"})),
        f'{ENTRY}.files["summary"]["part-00000.parquet"] is a string, not an integer',
    ),
    "a truth fingerprint that is a string": (
        _entry(lambda e: e["inputs"].update(truth=["truth.parquet"])),
        f'{ENTRY}.inputs["truth"][0] is a string, not an object',
    ),
    "seconds true": (
        _entry(lambda e: e.update(seconds=True)),
        f"{ENTRY}.seconds is true or false, not a number",
    ),
    "a result that is a list": (
        lambda d: d | {"results": {**d["results"], RESULT: [1]}},
        f"{ENTRY} is an array, not an object",
    ),
    "results a list": (lambda d: d | {"results": []}, "results is an array, not an object"),
    "a result named outside OUT": (
        lambda d: d | {"results": {"city=../x/model=m": d["results"][RESULT]}},
        'results["city=../x/model=m"] is not named city=<c>/model=<m>',
    ),
    "the document a list": (lambda d: [d], "the document is an array, not an object"),
}


def damage_manifest(out: Path, change) -> None:
    path = out / "manifest.json"
    path.write_text(json.dumps(change(json.loads(path.read_text()))))


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (None for a folder)."""
    return {str(p): None if p.is_dir() else p.read_bytes() for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize("command", ["compare", "report", "resume"])
@pytest.mark.parametrize("damage", sorted(MANIFEST_DAMAGES))
def test_damaged_manifest_is_one_line_naming_it(scored, damage, command, tmp_path, capsys):
    out = tmp_path / "out"
    shutil.copytree(scored, out)
    change, words = MANIFEST_DAMAGES[damage]
    damage_manifest(out, change)
    before = tree(tmp_path)
    argv = {
        "compare": ["compare", str(out), "--city", "tky", "--resamples", "50"],
        "report": ["report", str(out), "--no-plots", "--output", str(tmp_path / "report")],
        "resume": ["run", str(REPO_ROOT / "jobs/nextloc_sample.toml"), "--out", str(out)],
    }[command]
    argv += ["--resume", "--quiet"] if command == "resume" else []
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    head = f"mobeval: error: {out / 'manifest.json'}: not a readable mobeval manifest ({words})"
    assert err.startswith(head) and len(err.splitlines()) == 1, err
    assert tree(tmp_path) == before


#: name: (a recorded option changed, the words of the message): an option a run would refuse
CONFIG_DAMAGES = {
    "key a number": ({"key": 5}, "key=5: expected a list of names"),
    "k a string": ({"k": "5"}, "k='5': "),
    "unknown convention": ({"convention": "nope"}, "convention="),
    "metrics a number": ({"metrics": 3}, "metrics=3: "),
}


@pytest.mark.parametrize("command", ["compare", "report"])
@pytest.mark.parametrize("damage", sorted(CONFIG_DAMAGES))
def test_recorded_options_a_run_would_refuse(scored, damage, command, tmp_path, capsys):
    """A result's ``config`` holds the options as typed: one a run would refuse is named with
    the manifest and the result, exit 2 (was an internal error for key = 5)."""
    out = tmp_path / "out"
    shutil.copytree(scored, out)
    change, words = CONFIG_DAMAGES[damage]
    damage_manifest(out, _entry(lambda e: e["config"].update(change)))
    before = tree(tmp_path)
    argv = {
        "compare": ["compare", str(out), "--city", "tky", "--resamples", "50"],
        "report": ["report", str(out), "--no-plots", "--output", str(tmp_path / "report")],
    }[command]
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    head = f"mobeval: error: {out / 'manifest.json'}: {ENTRY}.config: {words}"
    assert err.startswith(head) and len(err.splitlines()) == 1, err
    assert tree(tmp_path) == before


@pytest.mark.parametrize("damage", ["config a string", "no task", "a file size as text"])
def test_damaged_manifest_in_python(scored, damage, tmp_path):
    """The same InputError from every Python reader of OUT: compare, Report, the run's
    Manifest, read_manifest."""
    out = tmp_path / "out"
    shutil.copytree(scored, out)
    change, words = MANIFEST_DAMAGES[damage]
    damage_manifest(out, change)
    for read in (
        lambda: compare(out, log=None),
        lambda: Report(out, plots=False),
        lambda: Manifest(out, {}),
        lambda: read_manifest(out / "manifest.json"),
    ):
        with pytest.raises(InputError, match="not a readable mobeval manifest") as raised:
            read()
        assert raised.value.path == str(out / "manifest.json") and words in str(raised.value)


def test_older_manifests_still_read(scored, tmp_path):
    """The keys later versions added (engine, resolved, files) may be absent; resolved may be
    null (a result whose options could not be resolved)."""
    out = tmp_path / "out"
    shutil.copytree(scored, out)
    damage_manifest(out, _entry(lambda e: e.pop("engine") and e.pop("files")))
    damage_manifest(out, _entry(lambda e: e.update(resolved=None)))
    assert RESULT in read_manifest(out / "manifest.json")
    assert compare(out, city="tky", resamples=10, permutations=20, log=None).height > 0


# --------------------------------------------------------------------------------------------
# Per-unit files of two models that cannot be one table


def retype_key(out: Path, section: str = "per_unit") -> Path:
    """The popularity model's sample ids written as strings: keys of another type."""
    part = only_part(out, section)
    rewrite(part, lambda f: f.with_columns(pl.col("sample_id").cast(pl.String)))
    return part


def test_unit_keys_of_another_type_are_named(scored, tmp_path, capsys):
    out = tmp_path / "out"
    shutil.copytree(scored, out)
    shutil.rmtree(out / "compare")
    retype_key(out)
    capsys.readouterr()
    assert main(["compare", str(out), "--city", "tky", "--resamples", "50"]) == 2
    err = capsys.readouterr().err
    named = out / "per_unit" / RESULT
    assert err.startswith(f"mobeval: error: {named}: column 'sample_id': unit keys of type String")
    assert "Int64" in err and len(err.splitlines()) == 1
    assert not (out / "compare").exists()


def test_scan_outputs_names_a_damaged_file(scored, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(scored, out)
    part = retype_key(out)
    with pytest.raises(InputError, match="String here, Int64 in") as raised:
        scan_outputs(out, "per_unit")
    assert raised.value.path == str(part) and raised.value.column == "sample_id"
    part.write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="not a readable mobeval output file") as raised:
        scan_outputs(out, "per_unit")
    assert raised.value.path == str(part)
    truncate(only_part(out, "summary"))
    with pytest.raises(InputError, match="not a readable mobeval output file"):
        scan_outputs(out, "summary")


def test_scan_outputs_widens_numbers(scored, tmp_path):
    """Int32 keys beside Int64 ones are one Int64 column, as documented."""
    out = tmp_path / "out"
    shutil.copytree(scored, out)
    rewrite(
        only_part(out, "per_unit"), lambda f: f.with_columns(pl.col("sample_id").cast(pl.Int32))
    )
    table = scan_outputs(out, "per_unit").collect()
    assert table.schema["sample_id"] == pl.Int64 and table.height == 10000
