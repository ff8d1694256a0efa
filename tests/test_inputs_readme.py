"""The README's "Inputs" section: each ```python block runs as written from the repository root
and prints every line of the plain ``` block that follows it (its bash blocks are run by
tests/test_readme_examples.py)."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from tests.conftest import REPO_ROOT

README = REPO_ROOT / "README.md"


def _section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def _examples() -> list[tuple[str, list[str]]]:
    """(code, lines shown after it) of each python block of the section."""
    section = _section(README.read_text(), "Inputs")
    pattern = re.compile(r"```python\n(.*?)```\n(?:[^`]*?)```\n(.*?)```", re.S)
    return [(code, shown.splitlines()) for code, shown in pattern.findall(section)]


EXAMPLES = _examples()


def test_the_section_has_python_examples():
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize("code, shown", EXAMPLES, ids=[f"example{i}" for i in range(len(EXAMPLES))])
def test_python_example_prints_what_the_readme_shows(code, shown, monkeypatch):
    for module in ("duckdb", "pandas", "fsspec"):
        if f"import {module}" in code:
            pytest.importorskip(module)
    monkeypatch.chdir(REPO_ROOT)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(README), "exec"), {"__name__": "readme_example"})
    lines = {line.rstrip() for line in printed.getvalue().splitlines()}
    missing = [line for line in shown if line.strip() and line.rstrip() not in lines]
    assert not missing, f"shown in the README but not printed: {missing}"
