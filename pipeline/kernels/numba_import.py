"""Numba's import in the command line's process without the two modules it loads for checks a
run does not need: SciPy and PyYAML, 10-15 ms and 12-20 ms of CPU before the first kernel loads
(issue 37).

* ``numba/__init__.py`` imports SciPy, when it is installed, only to read its version and refuse a
  SciPy older than 1.0 (``_ensure_critical_deps``). mobeval requires SciPy 1.15 or newer
  (``pyproject.toml``), so the check passes whatever it reads: while Numba imports, ``scipy`` is
  marked absent in ``sys.modules`` (Numba's ``import scipy`` raises ``ImportError``, which it
  catches and skips the check), and the mark is taken away afterwards (a later ``import scipy``
  loads it; a run of compare's tests does).
* ``numba.core.config`` imports PyYAML, when it is installed, to read a ``.numba_config.yaml``
  in the working folder, at its import and at each compilation (``reload_config``), through
  ``yaml.safe_load`` alone. While Numba imports, ``yaml`` is a stand-in whose ``safe_load``
  imports PyYAML and calls its own: a configuration file is read exactly as before, by the same
  function, and without one PyYAML is never loaded. Without PyYAML installed nothing is stood in
  (Numba warns of a configuration file it cannot read, as before).

Only the command line calls :func:`lighten_numba_import` (from :mod:`mobeval.__main__`, before any
module imports Numba): a program that imports mobeval imports Numba its own way.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types


def _yaml_stand_in() -> types.ModuleType:
    """A module named ``yaml`` whose ``safe_load`` is PyYAML's, imported at its first call."""
    module = types.ModuleType("yaml", "PyYAML, imported when a configuration file is read.")

    def safe_load(stream):
        if sys.modules.get("yaml") is module:  # read during Numba's import: the stand-in goes
            del sys.modules["yaml"]
        return importlib.import_module("yaml").safe_load(stream)

    module.safe_load = safe_load
    return module


class _LighterNumba:
    """A finder on ``sys.meta_path`` that hands back Numba's own spec, its ``exec_module`` run
    with the stand-ins of the module docstring in ``sys.modules``; it removes itself at Numba's
    import."""

    def find_spec(self, name, path=None, target=None):
        if name != "numba":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or not hasattr(spec.loader, "exec_module"):
            return spec
        stand_ins = {"scipy": None}
        if "yaml" not in sys.modules and importlib.util.find_spec("yaml") is not None:
            stand_ins["yaml"] = _yaml_stand_in()
        stand_ins = {k: v for k, v in stand_ins.items() if k not in sys.modules}
        loader, execute = spec.loader, spec.loader.exec_module

        def exec_module(module):
            sys.modules.update(stand_ins)
            try:
                execute(module)
            finally:
                for name, stand_in in stand_ins.items():
                    if sys.modules.get(name, stand_in) is stand_in:
                        sys.modules.pop(name, None)
                del loader.exec_module

        loader.exec_module = exec_module
        return spec


def lighten_numba_import() -> None:
    """Numba's coming import without SciPy and PyYAML (see the module docstring); nothing when
    Numba is loaded already."""
    if "numba" not in sys.modules:
        sys.meta_path.insert(0, _LighterNumba())
