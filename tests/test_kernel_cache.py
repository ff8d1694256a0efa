"""A run whose kernels are in Numba's disk cache loads them without Numba's compiler
(``kernels/jit.py``): neither Numba's typing and lowering registries (``numba.np.arraymath``) nor
SciPy's ``linalg``, which ``arraymath`` imports, are loaded, nor is the runtime's own LLVM module
(``NRT_incref``...) compiled, and the values are those of the run
that compiled them. A function compiled afterwards in the same process (a user's own) finds
Numba's compiler whole and keeps Numba's own cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT
from tests.test_startup_imports import COMMANDS as STARTUP_COMMANDS

SAMPLES = REPO_ROOT / "data_samples"
#: A mobeval command, the compiler's modules it loaded, then a user's cached function compiled.
SCRIPT = """
import json, sys
import numpy as np
from numba import njit
from mobeval.cli import main
sys.argv = ['mobeval', *sys.argv[1:]]
assert main() == 0
loaded = sorted({'numba.np.arraymath', 'scipy.linalg'} & set(sys.modules))
from numba.core.runtime import nrt
compiled_runtime = nrt.rtsys._init
@njit(cache=True)
def smooth(a, w):
    return np.convolve(a, w)
values = smooth(np.arange(4.0), np.ones(2)).tolist()
found = [loaded, compiled_runtime, values, type(smooth._cache).__name__]
sys.stderr.write('\\nFOUND ' + json.dumps(found))
"""
COMMANDS = {
    "recs": [
        "recs",
        "--ratings",
        str(SAMPLES / "recs/ratings.parquet"),
        "--recs",
        str(SAMPLES / "recs/mf.parquet"),
        "--convention",
        "trec_eval",
        "--metrics",
        "ndcg@10,precision@5",
    ],
    "nextloc": STARTUP_COMMANDS["nextloc"][0],  # the start-up test's next-location run
}


def _run(arguments: list[str], tmp_path) -> tuple[str, list]:
    """(stdout, [compiler modules loaded by the command, whether it compiled Numba's runtime
    module, the user function's values, its cache's class]) of :data:`SCRIPT` in a fresh process
    on ``tmp_path``'s Numba cache."""
    script = tmp_path / "user.py"  # Numba caches the functions of a file only
    script.write_text(SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script), *arguments, "--format", "csv", "--quiet"],
        capture_output=True,
        text=True,
        env=dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache")),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, json.loads(done.stderr.rsplit("\nFOUND ", 1)[1])


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_run_on_a_warm_cache_loads_no_compiler_registry_and_no_scipy(command, tmp_path):
    compiled, (loaded_cold, runtime_cold, *_) = _run(COMMANDS[command], tmp_path)
    assert loaded_cold == ["numba.np.arraymath", "scipy.linalg"]  # the kernels compiled
    assert runtime_cold
    cached, (loaded_warm, runtime_warm, values, cache) = _run(COMMANDS[command], tmp_path)
    assert loaded_warm == []
    assert not runtime_warm  # the runtime's own module not compiled: the kernels hold it
    assert cached == compiled
    assert values == [0.0, 1.0, 3.0, 5.0, 3.0]  # np.convolve, compiled after the kernels loaded
    assert cache == "FunctionCache"  # a user's function keeps Numba's own cache
