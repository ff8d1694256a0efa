"""A package's public names imported on first use (PEP 562, a module's ``__getattr__``), so that
importing the package, and the command line's ``--help``, load none of the modules behind them."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_exports(
    package: str, modules: Mapping[str, tuple[str, ...]]
) -> tuple[list[str], Callable[[str], object]]:
    """``(names, __getattr__)`` for ``package``: each name of ``modules[module]`` is taken from
    ``module`` (a full module name, e.g. ``mobeval.api``) when first asked for; ``names`` sorted,
    the package's ``__all__``."""
    where = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> object:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(where[name]), name)

    return sorted(where), __getattr__
