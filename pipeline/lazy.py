"""A package's public names imported on first use (PEP 562, a module's ``__getattr__``), so that
importing the package, and the command line's ``--help``, load none of the modules behind them;
its ``__dir__`` lists them beside what is loaded already (``dir(mobeval)``, tab completion)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_exports(
    package: str, modules: Mapping[str, tuple[str, ...]]
) -> tuple[list[str], Callable[[str], object], Callable[[], list[str]]]:
    """``(names, __getattr__, __dir__)`` for ``package``: each name of ``modules[module]`` is
    taken from ``module`` (a full module name, e.g. ``mobeval.api``) when first asked for;
    ``names`` sorted, the package's ``__all__``; ``__dir__`` the package's attributes and these
    names (what ``dir()`` and an interpreter's tab completion list), importing nothing."""
    where = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> object:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(where[name]), name)

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return sorted(where), __getattr__, __dir__
