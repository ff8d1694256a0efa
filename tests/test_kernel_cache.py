"""A run whose kernels are in Numba's disk cache loads them without Numba's compiler
(``kernels/jit.py``): neither Numba's typing and lowering registries (``numba.np.arraymath``) nor
SciPy's ``linalg``, which ``arraymath`` imports, are loaded, nor is the runtime's own LLVM module
(``NRT_incref``...) compiled, and the values are those of the run
that compiled them. A function compiled afterwards in the same process (a user's own) finds
Numba's compiler whole and keeps Numba's own cache. Numba's extensions (``numba_extensions``
entry points) load when a kernel compiles and when a user's function does, not when a run loads
its cached kernels."""

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
import fake_numba_extension
extension_by_command = fake_numba_extension.loaded
@njit(cache=True)
def smooth(a, w):
    return np.convolve(a, w)
values = smooth(np.arange(4.0), np.ones(2)).tolist()
found = [loaded, compiled_runtime, values, type(smooth._cache).__name__]
found += [extension_by_command, fake_numba_extension.loaded]
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


#: An installed distribution with a Numba extension (a ``numba_extensions`` entry point named
#: ``init``), whose module notes that Numba loaded it.
EXTENSION = {
    "fake_numba_extension.py": (
        "loaded = False\ndef init():\n    global loaded\n    loaded = True\n"
    ),
    "fake_numba_extension-1.0.dist-info/METADATA": (
        "Metadata-Version: 2.1\nName: fake-numba-extension\nVersion: 1.0\n"
    ),
    "fake_numba_extension-1.0.dist-info/entry_points.txt": (
        "[numba_extensions]\ninit = fake_numba_extension:init\n"
    ),
}


def _run(arguments: list[str], tmp_path) -> tuple[str, list]:
    """(stdout, [compiler modules loaded by the command, whether it compiled Numba's runtime
    module, the user function's values, its cache's class, whether Numba's extension was loaded
    by the command, and after the user's function]) of :data:`SCRIPT` in a fresh process on
    ``tmp_path``'s Numba cache, :data:`EXTENSION` installed."""
    script = tmp_path / "user.py"  # Numba caches the functions of a file only
    script.write_text(SCRIPT)
    site = tmp_path / "site"
    for name, text in EXTENSION.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(text)
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, str(script), *arguments, "--format", "csv", "--quiet"],
        capture_output=True,
        text=True,
        env=dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=path),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, json.loads(done.stderr.rsplit("\nFOUND ", 1)[1])


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_run_on_a_warm_cache_loads_no_compiler_registry_and_no_scipy(command, tmp_path):
    compiled, (loaded_cold, runtime_cold, *_, extension_cold, _) = _run(COMMANDS[command], tmp_path)
    assert loaded_cold == ["numba.np.arraymath", "scipy.linalg"]  # the kernels compiled
    assert runtime_cold
    assert extension_cold  # a compilation loads Numba's extensions
    cached, found = _run(COMMANDS[command], tmp_path)
    loaded_warm, runtime_warm, values, cache, extension_by_command, extension_after = found
    assert not extension_by_command  # the cached kernels loaded without them
    assert extension_after  # the user's function, loaded from Numba's own cache, with them
    assert loaded_warm == []
    assert not runtime_warm  # the runtime's own module not compiled: the kernels hold it
    assert cached == compiled
    assert values == [0.0, 1.0, 3.0, 5.0, 3.0]  # np.convolve, compiled after the kernels loaded
    assert cache == "FunctionCache"  # a user's function keeps Numba's own cache


#: Kernels imported, then one called: where Numba's cache was found before and after the call.
LOCATE_SCRIPT = """
import json, os, sys
import numpy as np
import mobeval.kernels.recs, mobeval.kernels.ranx_lists, mobeval.kernels.exact_sum
cache = os.environ['NUMBA_CACHE_DIR']
before = sorted(os.listdir(cache)) if os.path.exists(cache) else None
mobeval.kernels.recs.first_repeat(np.array([3, 1, 3]))
after = [name for _, _, names in os.walk(cache) for name in names]
print(json.dumps([before, sorted(name.split('-')[0] for name in after if name.endswith('.nbi'))]))
"""


def test_a_kernels_cache_is_located_at_its_first_call_not_at_its_import(tmp_path):
    """Importing kernel modules locates no cache (Numba's ``Cache`` makes its folder and writes a
    test file there, for every function defined); calling kernels locates and fills theirs."""
    cache = tmp_path / "cache"
    done = subprocess.run(
        [sys.executable, "-c", LOCATE_SCRIPT],
        capture_output=True,
        text=True,
        env=dict(os.environ, NUMBA_CACHE_DIR=str(cache)),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    before, indexes = json.loads(done.stdout)
    assert before is None  # no folder made, no file written
    assert indexes == ["recs._log2", "recs.hashed_first_repeat"]  # the two that first_repeat calls
