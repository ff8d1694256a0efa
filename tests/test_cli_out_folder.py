"""``--out`` (a job's ``out``, Python's ``out=``) into a folder that holds the user's own files and
no ``manifest.json`` is refused, naming the folder and the first file, exit 2, nothing written
(the folder is left as it was); a new folder, an empty one and an OUT written before are fine."""

from __future__ import annotations

from pathlib import Path

import pytest
import test_job_validation as job_validation

from mobeval.cli import main
from mobeval.errors import ConfigError
from mobeval.jobs import load_job, run_job

FILES, API = job_validation.FILES, job_validation.API
inputs = job_validation.inputs  # the fixture: one small valid input of every family


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _argv(family: str, inputs: Path, out: Path) -> list[str]:
    truth, model, truth_flag, model_flag = FILES[family]
    argv = [family, truth_flag, str(inputs / truth), model_flag, str(inputs / model)]
    return [*argv, "--out", str(out), "--quiet"]


def _users_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "thesis"
    (folder / "figures").mkdir(parents=True)
    (folder / "notes.txt").write_text("my notes\n")
    (folder / "figures" / "plot.png").write_bytes(b"\x89PNG")
    return folder


@pytest.mark.parametrize("family", sorted(FILES))
def test_the_command_line_refuses_a_folder_that_is_not_an_out(tmp_path, inputs, capsys, family):
    folder = _users_folder(tmp_path)
    before = _tree(folder)
    assert main(_argv(family, inputs, folder)) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"mobeval: error: {folder}: not a mobeval output folder: it holds 'figures' and no "
        "manifest.json; give a new or empty folder (mobeval writes its own files there), or an "
        "output folder written before\n"
    )
    assert _tree(folder) == before and sorted(p.name for p in folder.iterdir()) == [
        "figures",
        "notes.txt",
    ]


def test_an_out_that_cannot_be_a_folder_is_named_for_what_is_in_the_way(tmp_path, inputs, capsys):
    """OUT (or a folder above it) a file, or a link to nothing: one line naming the piece of the
    path in the way, never the bare system reason ("File exists", "Not a directory")."""
    (tmp_path / "a_file").write_text("mine\n")
    (tmp_path / "dangling").symlink_to(tmp_path / "nothing")
    cases = [
        ("a_file", "a_file", "is a file, not a folder"),
        ("a_file/sub", "a_file", "is a file, not a folder"),
        ("dangling", "dangling", "is a symbolic link to nothing"),
    ]
    for given, culprit, what in cases:
        out = tmp_path / given
        assert main(_argv("nextloc", inputs, out)) == 2
        assert capsys.readouterr() == (
            "",
            f"mobeval: error: {out}: cannot use this output folder ({tmp_path / culprit} {what})\n",
        )
    assert (tmp_path / "a_file").read_text() == "mine\n" and not (tmp_path / "nothing").exists()


@pytest.mark.parametrize("family", sorted(FILES))
def test_python_refuses_a_folder_that_is_not_an_out(tmp_path, inputs, family):
    folder = _users_folder(tmp_path)
    before = _tree(folder)
    evaluate, truth, model = API[family]
    arguments = {truth: inputs / FILES[family][0], model: inputs / FILES[family][1]}
    with pytest.raises(ConfigError, match="not a mobeval output folder: it holds 'figures'"):
        evaluate(**arguments, out=folder, progress=False)
    assert _tree(folder) == before and len(list(folder.iterdir())) == 2


def test_a_job_refuses_a_folder_that_is_not_an_out(tmp_path, inputs):
    folder = _users_folder(tmp_path)
    before = _tree(folder)
    job = load_job(job_validation._job(tmp_path, inputs, "nextloc", ""), out=folder)
    with pytest.raises(ConfigError, match="not a mobeval output folder: it holds 'figures'"):
        run_job(job, progress=False, log=lambda _: None)
    assert _tree(folder) == before and len(list(folder.iterdir())) == 2


@pytest.mark.parametrize("family", sorted(FILES))
def test_a_new_an_empty_folder_and_an_out_are_fine(tmp_path, inputs, capsys, family):
    empty = tmp_path / "empty"
    empty.mkdir()
    for out in (tmp_path / "new" / "out", empty):
        assert main(_argv(family, inputs, out)) == 0, capsys.readouterr().err
        assert (out / "manifest.json").is_file()
    (empty / "my_notes.txt").write_text("beside an OUT: the user's business\n")
    assert main(_argv(family, inputs, empty)) == 0, capsys.readouterr().err  # an OUT again


def test_a_python_out_without_a_manifest_takes_more_results(tmp_path, inputs):
    """``evaluate_*(out=...)`` writes no manifest: what it wrote (OUT's own sections) does not
    make the folder foreign to the next result."""
    evaluate, truth, model = API["nextloc"]
    arguments = {truth: inputs / FILES["nextloc"][0], model: inputs / FILES["nextloc"][1]}
    for name in ("first", "second"):
        evaluate(**arguments, out=tmp_path / "out", model=name, progress=False)
    city = tmp_path / "out" / "summary" / f"city={inputs.name}"
    assert sorted(p.name for p in city.iterdir()) == [
        "model=first",
        "model=second",
    ]
