"""The repository stands alone: a clone with nothing beside it has every file its tests, docs
and scripts read (the golden data under ``tests/golden``, the specs under ``docs/``)."""

import subprocess

from tests.conftest import GOLDEN, REPO_ROOT

# Spelled in two pieces so that this file does not name them itself.
OUTSIDE_NAMES = ("../" + "shared", "MOBEVAL_" + "SHARED")


def _tracked_files() -> list[str]:
    done = subprocess.run(
        ["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    return done.stdout.splitlines()


def test_no_tracked_file_reads_a_folder_beside_the_repository():
    offenders = []
    for name in _tracked_files():
        path = REPO_ROOT / name
        if not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")
        offenders += [f"{name}: {word}" for word in OUTSIDE_NAMES if word in text]
    assert offenders == []


def test_golden_data_is_tracked_with_its_provenance():
    tracked = set(_tracked_files())
    golden = [p for p in GOLDEN.rglob("*") if p.is_file()]
    assert golden, f"no golden data under {GOLDEN}"
    untracked = [str(p.relative_to(REPO_ROOT)) for p in golden]
    assert [name for name in untracked if name not in tracked] == []
    readme = (GOLDEN / "README.md").read_text()
    for folder in sorted(p.name for p in GOLDEN.iterdir() if p.is_dir()):
        assert f"`{folder}/" in readme, f"tests/golden/README.md does not name {folder}/"
