"""mobeval: exact, fast, out-of-core evaluation of mobility and recommendation models.

The entry points are importable from the package itself (loaded on first use, so that
``import mobeval`` and the command line stay quick; ``dir(mobeval)`` and tab completion list
them)::

    import mobeval
    result = mobeval.evaluate_nextloc("truth.parquet", "pred.parquet", k=[1, 5, 10])

Under an address-space limit (``ulimit -v``) importing the package fits the process to it
(:func:`mobeval.limits.fit_process`) before NumPy, Arrow and Numba load, for the API as for the
command line: import mobeval before those libraries.
"""

import importlib

from mobeval.limits import fit_process

fit_process()

__version__ = "0.1.0"

#: Public name -> the module that defines it. (``compare`` is not here: ``mobeval.compare`` is the
#: module, whose ``compare`` function compares models.) :mod:`mobeval.lazy` does the same for the
#: subpackages (this package's floor cannot import it).
_ENTRY_POINTS = {
    "evaluate_nextloc": "mobeval.api",
    "evaluate_trajectory": "mobeval.api",
    "evaluate_recs": "mobeval.api",
    "evaluate_logits": "mobeval.api",
    "Evaluation": "mobeval.api",
    "LogitsAccumulator": "mobeval.accumulate",
    "NextlocAccumulator": "mobeval.accumulate",
    "RecsAccumulator": "mobeval.accumulate",
    "TrajectoryAccumulator": "mobeval.accumulate",
    "load_job": "mobeval.jobs",
    "run_job": "mobeval.jobs",
    "Report": "mobeval.report",
    "to_mlflow": "mobeval.track",
    "to_wandb": "mobeval.track",
    "validate_submission": "mobeval.validate.humob",
}

__all__ = ["__version__", *_ENTRY_POINTS]


def __getattr__(name: str):
    if name not in _ENTRY_POINTS:
        raise AttributeError(f"module 'mobeval' has no attribute {name!r}")
    return getattr(importlib.import_module(_ENTRY_POINTS[name]), name)


def __dir__() -> list[str]:
    """The package's attributes and its entry points, none imported (``dir(mobeval)``, an
    interpreter's tab completion)."""
    return sorted({*globals(), *__all__})
