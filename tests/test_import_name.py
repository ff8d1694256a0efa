"""The import name is mobeval (the source folder is pipeline/): the package, its entry points,
``python -m mobeval``, and a light ``import mobeval``."""

import subprocess
import sys

import pytest


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
