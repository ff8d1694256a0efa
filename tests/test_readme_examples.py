"""The commands of the README and of the documentation site (docs/) run as written, against the
shipped data_samples/, and print what they show.

Every ```bash block of README.md and docs/**/*.md is read; its ``mobeval`` commands (backslash
continuations joined, ``&&`` chains split; pip / venv / pytest / ruff lines are not mobeval
commands and are left out) run in-process
through :func:`mobeval.cli.main` from the repository root, with ``--out`` sent to a temporary
folder. Where the next fenced block of the section is a plain ``` block (what they print), every
line it shows must be in what the commands print, except ``...`` (a cut), timings (``done in``)
and the ``outputs:`` path. Every command must exit 0, except a block's last command written with
a trailing ``# exit N`` (a mistake shown with its message): it must exit N, and its
``mobeval: ...`` lines are looked for in what it printed on stderr. A block that runs
``--engine spark`` is skipped, with the reason, where PySpark or Java is missing.
"""

from __future__ import annotations

import gzip
import importlib.util
import re
import shlex

import pytest
from conftest import REPO_ROOT

from mobeval.cli import main

README = REPO_ROOT / "README.md"
PAGES = [README, *sorted((REPO_ROOT / "docs").rglob("*.md"))]
EXPECTED_EXIT = re.compile(r"#\s*exit (\d+)\s*$")


def _blocks(text: str) -> list[tuple[int, list[str], list[str]]]:
    """(line number, mobeval commands, lines of the output block after it) per ```bash block."""
    lines = text.splitlines()
    found = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```bash":
            i += 1
            continue
        start = i + 1
        i += 1
        body = []
        while lines[i].strip() != "```":
            body.append(lines[i])
            i += 1
        i += 1
        while i < len(lines) and not lines[i].startswith(("```", "#")):
            i += 1  # prose between a command and what it prints
        output = []
        if i < len(lines) and lines[i].strip() == "```":
            i += 1
            while lines[i].strip() != "```":
                output.append(lines[i])
                i += 1
            i += 1
        commands = []
        joined = "\n".join(body).replace("\\\n", " ")
        for line in joined.splitlines():
            for part in line.split("&&"):
                part = part.strip()
                if part.startswith("mobeval "):
                    commands.append(part)
        found.append((start, commands, output))
    return found


BLOCKS = [
    (page.relative_to(REPO_ROOT).as_posix(), *block)
    for page in PAGES
    for block in _blocks(page.read_text())
    if block[1]
]


def _argv(command: str, out, last_out) -> list[str]:
    """The command's arguments, its output folder sent to ``out``; ``compare OUT`` and ``report
    OUT`` read the folder of the block's previous command (``last_out``)."""
    argv = shlex.split(command, comments=True)[1:]
    if argv[0] in ("compare", "report"):
        argv[1] = str(last_out)
    elif argv[0] in ("challenge", "samples"):  # the folder they write
        argv[-1] = str(out)
    elif "--out" in argv:
        argv[argv.index("--out") + 1] = str(out)
    elif argv[0] == "run":
        argv += ["--out", str(out)]
    return argv


def test_readme_has_runnable_blocks():
    readme = [c for page, _, block, _ in BLOCKS if page == "README.md" for c in block]
    assert any(c.startswith("mobeval nextloc") for c in readme)
    assert any(c.startswith("mobeval trajectory") for c in readme)
    commands = [c for _, _, block, _ in BLOCKS for c in block]
    assert {page for page, *_ in BLOCKS} > {"README.md"}, "the docs pages have commands too"
    assert all(
        "data_samples/" in c
        or c.startswith(("mobeval run jobs/", "mobeval compare ", "mobeval report "))
        or c.startswith(("mobeval challenge ", "mobeval samples "))
        for c in commands
    )


def _exit_code(argv: list[str]) -> int:
    """What ``mobeval ARGV`` exits with (a usage error is argparse's SystemExit)."""
    try:
        return main(argv)
    except SystemExit as stop:
        return stop.code


@pytest.mark.parametrize(
    "page, line, commands, output", BLOCKS, ids=[f"{b[0]}:line{b[1]}" for b in BLOCKS]
)
def test_readme_block_runs_as_written(page, line, commands, output, tmp_path, monkeypatch, capsys):
    if any("--engine spark" in command for command in commands):
        from tests.test_spark import _java_problem  # skips the test where PySpark is missing

        if _java_problem():
            pytest.skip(_java_problem())
    monkeypatch.chdir(REPO_ROOT)
    for k, command in enumerate(commands):
        expected = EXPECTED_EXIT.search(command) if k == len(commands) - 1 else None
        code = _exit_code(_argv(command, tmp_path / f"out{k}", tmp_path / f"out{k - 1}"))
        assert code == (int(expected.group(1)) if expected else 0), command
    captured = capsys.readouterr()
    printed = {row.rstrip() for row in captured.out.splitlines()}
    messages = {row.rstrip() for row in captured.err.splitlines()}
    shown = [
        row.rstrip()
        for row in output
        if row.strip()
        and "..." not in row
        and "done in" not in row
        and not row.startswith("outputs:")
    ]
    missing = [
        row for row in shown if row not in (messages if row.startswith("mobeval: ") else printed)
    ]
    assert not missing, f"{page} line {line}: shown but not printed: {missing}"


def test_humob_samples_regenerate_identically(tmp_path):
    """make_humob_samples.py is deterministic: it writes the shipped files again (so the README's
    GEO-BLEU stays the sample's)."""
    path = REPO_ROOT / "data_samples" / "make_humob_samples.py"
    spec = importlib.util.spec_from_file_location("make_humob_samples", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.HERE = tmp_path
    module.main()
    shipped = REPO_ROOT / "data_samples" / "humob"
    names = sorted(p.name for p in shipped.glob("*.csv.gz"))
    assert names == sorted(p.name for p in tmp_path.glob("*.csv.gz"))
    for name in names:
        assert gzip.decompress((tmp_path / name).read_bytes()) == gzip.decompress(
            (shipped / name).read_bytes()
        ), name
