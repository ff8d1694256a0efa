"""The import name is mobeval (the source folder is pipeline/): the package, its entry points,
``python -m mobeval``, and a light ``import mobeval``."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT


def _python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/"
    )
    return done.stdout.strip()


def test_import_mobeval_is_light_and_entry_points_load_on_use():
    # Run from "/" so that the repository folder is not on sys.path: the installed mapping is used.
    out = _python(
        "import sys, mobeval\n"
        "print('polars' in sys.modules, 'numba' in sys.modules)\n"
        "print(mobeval.evaluate_nextloc.__module__, mobeval.run_job.__module__)\n"
        "print(mobeval.Report.__module__, mobeval.validate_submission.__module__)\n"
    )
    assert out.splitlines() == [
        "False False",
        "mobeval.api mobeval.jobs",
        "mobeval.report.document mobeval.validate.humob",
    ]


def test_no_module_is_loaded_under_the_folder_name():
    out = _python(
        "import sys, mobeval.api, mobeval.cli\n"
        "print(sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in"
        " ('pipeline', 'mobeval')}))"
    )
    assert out == "['mobeval']"


def test_unknown_attribute_is_an_attribute_error():
    import mobeval

    with pytest.raises(AttributeError, match="no attribute 'evaluate_everything'"):
        mobeval.evaluate_everything  # noqa: B018


def test_python_dash_m_mobeval_is_the_command_line():
    done = subprocess.run(
        [sys.executable, "-m", "mobeval", "--version"], capture_output=True, text=True, cwd="/"
    )
    assert done.returncode == 0
    assert done.stdout.startswith("mobeval ")


# ------------------------------------------------------------ the install the docs give

STRICT = "--config-settings editable_mode=strict"


def _editable_installs() -> list[tuple[str, str]]:
    """(page, line) of every editable install in the ```bash blocks of the README and the docs
    pages (the commands a reader copies)."""
    pages = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").rglob("*.md"))]
    blocks = re.compile(r"```bash\n(.*?)```", re.S)
    return [
        (page.name, line)
        for page in pages
        for block in blocks.findall(page.read_text())
        for line in block.splitlines()
        if re.search(r"pip install (-e|--editable)\b", line)
    ]


def test_every_editable_install_the_docs_give_is_strict():
    """The namespace trap (issue 19): setuptools' default ("lenient") editable install is an
    import hook on ``sys.meta_path``, asked only after every ``sys.path`` folder; from the folder
    holding a clone named ``mobeval/`` that clone wins as an empty namespace package. The strict
    mode puts a folder of links on ``sys.path``, where a regular package beats a namespace."""
    installs = _editable_installs()
    assert len(installs) >= 3 and {page for page, _ in installs} >= {"README.md"}
    assert all(STRICT in line for _, line in installs), installs


def _venv_install(clone: Path, venv: Path, *settings: str) -> subprocess.CompletedProcess:
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "-e", "."]
    return subprocess.run([*pip, *settings], cwd=clone, capture_output=True, text=True, timeout=300)


def test_a_clone_named_mobeval_imports_from_its_parent_folder(tmp_path):
    """The README's install in a clone named ``mobeval/``; ``import mobeval`` from the folder
    that holds it gets the package (and, for contrast, setuptools' default mode does not).
    Skipped where pip cannot fetch its build backend (offline)."""
    clone = tmp_path / "mobeval"
    shutil.copytree(REPO_ROOT / "pipeline", clone / "pipeline", ignore=_generated)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO_ROOT / name, clone / name)
    probe = "from mobeval import __version__; import mobeval; print(__version__)"
    outcomes = {}
    for mode, settings in (("lenient", ()), ("strict", tuple(STRICT.split()))):
        venv = tmp_path / f"venv-{mode}"
        installed = _venv_install(clone, venv, *settings)
        if installed.returncode != 0:
            pytest.skip(f"pip install -e could not build here: {installed.stderr[-300:]}")
        outcomes[mode] = subprocess.run(
            [str(venv / "bin" / "python"), "-c", probe],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},  # the venv's alone
        )
    assert outcomes["strict"].returncode == 0, outcomes["strict"].stderr
    assert outcomes["strict"].stdout.strip() == __import__("mobeval").__version__
    assert "cannot import name '__version__'" in outcomes["lenient"].stderr  # the trap


def _generated(folder, names):
    return [name for name in names if name in ("__pycache__",) or name.endswith((".nbi", ".nbc"))]
