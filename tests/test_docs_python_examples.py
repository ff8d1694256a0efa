"""The Python examples of the README and the documentation site (docs/**/*.md): each ```python
block followed by a plain ``` block (what it prints) runs as written from the repository root and
prints every line of that block (the pages' bash blocks are run by tests/test_readme_examples.py).
"""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from tests.conftest import REPO_ROOT

PAGES = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").rglob("*.md"))]


def _examples() -> list[tuple[str, str, list[str]]]:
    """(page, code, lines shown after it) of each python block with a plain block after it."""
    block = r"((?:(?!```).)*)```"  # a block's text: it never runs past its own fence
    pattern = re.compile(rf"```python\n{block}\n(?:[^`]*?)```\n{block}", re.S)
    return [
        (page.relative_to(REPO_ROOT).as_posix(), code, shown.splitlines())
        for page in PAGES
        for code, shown in pattern.findall(page.read_text())
    ]


EXAMPLES = _examples()


def test_the_inputs_page_has_python_examples():
    assert sum(page == "docs/inputs.md" for page, _, _ in EXAMPLES) >= 4


@pytest.mark.parametrize(
    "page, code, shown", EXAMPLES, ids=[f"{e[0]}:example{i}" for i, e in enumerate(EXAMPLES)]
)
def test_python_example_prints_what_the_page_shows(page, code, shown, monkeypatch):
    for module in ("duckdb", "pandas", "fsspec", "mlflow", "wandb"):
        if f"import {module}" in code:
            pytest.importorskip(module)
    monkeypatch.chdir(REPO_ROOT)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(REPO_ROOT / page), "exec"), {"__name__": "docs_example"})
    lines = {line.rstrip() for line in printed.getvalue().splitlines()}
    missing = [line for line in shown if line.strip() and line.rstrip() not in lines]
    assert not missing, f"shown in {page} but not printed: {missing}"
