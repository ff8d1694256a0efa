"""The package's imports, read from its source: no import circle, in the package or inside a
folder, and no module takes a private (underscore) name from another module."""

import ast
from pathlib import Path

from tests.conftest import REPO_ROOT

PACKAGE = REPO_ROOT / "pipeline"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["mobeval", *parts])


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str) -> list[tuple[str, str]]:
    """(module imported, name taken from it or "") for every import of a mobeval module in
    ``name``'s source, those inside functions included."""
    found = []
    for node in ast.walk(ast.parse(MODULES[name].read_text())):
        if isinstance(node, ast.Import):
            found += [(alias.name, "") for alias in node.names if alias.name in MODULES]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in MODULES:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.append((submodule, "") if submodule in MODULES else (node.module, alias.name))
    return found


GRAPH = {name: {module for module, _ in _imports(name)} - {name} for name in MODULES}


def _circle_from(start: str) -> list[str] | None:
    """A path of imports from ``start`` back to itself, if there is one (depth-first)."""
    stack, seen = [(start, [start])], set()
    while stack:
        name, path = stack.pop()
        for imported in sorted(GRAPH[name]):
            if imported == start:
                return [*path, start]
            if imported not in seen:
                seen.add(imported)
                stack.append((imported, [*path, imported]))
    return None


def test_no_import_circle():
    circles = {" -> ".join(c) for name in MODULES if (c := _circle_from(name)) is not None}
    assert sorted(circles) == []


def test_no_module_takes_a_private_name_from_another():
    taken = [
        f"{name} imports {taken} from {module}"
        for name in MODULES
        for module, taken in _imports(name)
        if taken.startswith("_") and not taken.startswith("__") and module != name
    ]
    assert taken == []
