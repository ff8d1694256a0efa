"""The package's imports, read from its source: no import circle, in the package or inside a
folder, no module takes a private (underscore) name from another module, and every import goes
down the floors that docs/architecture.md draws (or stays in its own room)."""

import ast
import re
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


def _floors() -> dict[str, int]:
    """Room (``cli.py``, ``io/``...) -> floor, from the table of docs/architecture.md."""
    text = (REPO_ROOT / "docs" / "architecture.md").read_text()
    floors = {}
    for number, rooms in re.findall(r"^\| (\d+) \| ([^|]+) \|", text, flags=re.MULTILINE):
        for room in re.findall(r"`([^`]+)`", rooms):
            floors[room] = int(number)
    return floors


def _room(module: str) -> str:
    parts = module.split(".")[1:]
    if not parts:
        return "__init__.py"
    return f"{parts[0]}/" if (PACKAGE / parts[0]).is_dir() else f"{parts[0]}.py"


def test_every_module_has_a_floor():
    floors = _floors()
    assert floors, "docs/architecture.md has no floor table"
    assert sorted({_room(name) for name in MODULES} - set(floors)) == []
    assert sorted(set(floors) - {_room(name) for name in MODULES}) == []


def test_imports_go_down_the_floors():
    floors = _floors()
    upward = [
        f"{name} (floor {floors[_room(name)]}) imports {imported} (floor {floors[_room(imported)]})"
        for name in MODULES
        for imported in GRAPH[name]
        if _room(imported) != _room(name) and floors[_room(imported)] >= floors[_room(name)]
    ]
    assert upward == []
