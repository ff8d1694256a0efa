"""The sample data and job files every documented example runs on (``mobeval samples DIR``).

The wheel ships the repository's ``data_samples/`` and ``jobs/`` as package data, under
``mobeval/_samples/`` (pyproject.toml maps the package ``mobeval._samples`` to the repository's
root and names the two folders as its data). :func:`copy_samples` puts them in a folder side by
side, as in the repository: the job files' paths (``../data_samples/...``, ``out =
"../out/..."``) and the commands of the README and ``--help`` then run from that folder.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from importlib import resources
from pathlib import Path

from mobeval.errors import ConfigError

#: The folders copied, as the documentation names them.
SAMPLE_FOLDERS = ("data_samples", "jobs")


def samples_root() -> Path:
    """The installed package's folder holding :data:`SAMPLE_FOLDERS`."""
    root = Path(str(resources.files("mobeval") / "_samples"))
    missing = [name for name in SAMPLE_FOLDERS if not (root / name).is_dir()]
    if missing:
        raise ConfigError(
            f"{root}: this installation of mobeval has no {', '.join(missing)} "
            "(reinstall it from its wheel or its repository)"
        )
    return root


def copy_samples(directory: str | os.PathLike) -> list[Path]:
    """Copy :data:`SAMPLE_FOLDERS` into ``directory`` (made if missing), each whole or not at
    all (copied into a temporary folder inside it, then renamed into place); a folder of that
    name already there is a ConfigError, nothing copied. The folders written."""
    directory = Path(directory)
    targets = [directory / name for name in SAMPLE_FOLDERS]
    there = [str(path) for path in targets if path.exists() or path.is_symlink()]
    if there:
        raise ConfigError(f"{', '.join(there)}: already there; name another folder")
    root = samples_root()
    moved: list[Path] = []
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".mobeval-samples-", dir=directory) as staging:
            for name in SAMPLE_FOLDERS:
                shutil.copytree(
                    root / name,
                    Path(staging, name),
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
                )
            for name, target in zip(SAMPLE_FOLDERS, targets, strict=True):
                os.rename(Path(staging, name), target)
                moved.append(target)
    except OSError as error:
        for target in moved:
            shutil.rmtree(target, ignore_errors=True)
        raise ConfigError(f"{directory}: cannot be written ({error.strerror or error})") from None
    return targets
