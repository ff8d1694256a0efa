"""``njit`` for mobeval's kernels: Numba's, whose disk cache loads a kernel without the compiler.

Numba's ``Cache.load_overload`` refreshes the CPU target before it loads a cached function: it
imports and registers every typing and lowering registry Numba has (``numba.np.arraymath``,
``numba.np.linalg``, the typed containers, jitclass, ...; ``arraymath`` imports SciPy's ``linalg``
to learn whether BLAS is there). Measured on the first kernel a run calls: 0.3-0.4 s of CPU, a
fifth of a 1 M-row run. A cached function needs none of it: its machine code is linked as it was
saved and calls only Numba's runtime (NRT) and C helpers. :class:`KernelCache` starts the runtime
alone. A miss compiles as before: Numba's compiler refreshes the target itself
(``numba.core.compiler.CompilerBase``), so what a compilation sees is unchanged, and the process's
other Numba functions (a user's own) keep Numba's cache.

A saved function also names the environments of the Numba functions it calls (``np.full`` and
``np.empty``: :mod:`numba.np.arrayobj`'s), and Numba's loader imports each one's module to hand
its globals to the environment: :mod:`numba.np.arrayobj` and the string and list modules it
imports, 0.04-0.05 s of CPU at the first kernel of a run. Only object-mode code reads an
environment's globals, and a cached kernel is nopython code throughout, so :class:`KernelCache`
gives an environment of a module not yet loaded its module's name only
(:func:`_environment`); its constants are restored as saved.

Numba's ``rtsys.initialize`` registers the runtime's C functions (``NRT_MemInfo_alloc``, ...) with
LLVM and compiles a small LLVM module of its own (``NRT_incref``, ``NRT_decref``, their atomic
adds): an optimisation and a code generation in every run, 0.02 s of CPU at the first kernel. A
compiled function links that module into its own, so its saved machine code holds those functions
already and needs only the C functions' addresses: :func:`_start_runtime` registers them and
compiles nothing (only a saved call to a function not yet defined, a recursion through a
dispatcher, would need the module's own ``nrt_unresolved_abort``: no kernel of mobeval's makes
one; none of the 84 saved kernels names it). Numba's compiler (a miss, a user's function)
initialises the runtime itself (``CPUContext.load_additional_registries``), as before.

Before a dispatcher compiles or loads, Numba loads its extensions (``numba.core.entrypoints``):
it reads every installed distribution's entry points, 9-15 ms of the start with 136
distributions installed, more in a larger environment, for extensions a cached kernel does not
use (it takes NumPy arrays, numbers and tuples, and calls no extension). A kernel's dispatcher
skips that step (:func:`_no_extensions`); its compilation (a miss) still loads them, from the
compiler's refresh of the target, as every compilation of the process does.

The cache's files are found at a kernel's first call, not when its module defines it
(:meth:`KernelCache.__getattr__`): Numba's ``Cache`` locates its folder when it is made, a folder
made if missing and a temporary file written there to learn that it can write, for each of the 60
to 70 functions a run imports, though a run calls 7 to 10 of them.
"""

from __future__ import annotations

import functools
import pickle
import sys

import numba
from llvmlite import binding as ll
from numba.core.caching import FunctionCache, IndexDataCacheFile, _cache_log
from numba.core.environment import Environment, _rebuild_env, lookup_environment
from numba.core.runtime import _nrt_python


@functools.cache
def _start_runtime() -> None:
    """The symbols of Numba's runtime that a loaded function calls, as ``rtsys.initialize``
    names them (``_`` internal helpers as they are, the others with ``NRT_``); once a process."""
    for name, address in _nrt_python.c_helpers.items():
        ll.add_symbol(name if name.startswith("_") else "NRT_" + name, address)


def _environment(modname, consts, env_name):
    """Numba's ``_rebuild_env`` without importing ``modname`` when it is not loaded: the
    environment's globals are then the module's name alone (what saving it again reads)."""
    if modname in sys.modules or lookup_environment(env_name) is not None:
        return _rebuild_env(modname, consts, env_name)
    env = Environment({"__name__": modname})
    env.consts[:] = consts
    env.env_name = env_name
    Environment._memo[env_name] = env
    return env


class _Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) == (_rebuild_env.__module__, _rebuild_env.__name__):
            return _environment
        return super().find_class(module, name)


class _CacheFile(IndexDataCacheFile):
    """Numba's cache files, a saved function's data loaded through :class:`_Unpickler`."""

    def _load_data(self, name):
        path = self._data_path(name)
        with open(path, "rb") as f:
            data = _Unpickler(f).load()
        _cache_log("[cache] data loaded from %r", path)  # as Numba's (NUMBA_DEBUG_CACHE)
        return data


class KernelCache(FunctionCache):
    """Numba's per-function disk cache (the same files), loading a saved function with the
    runtime's C functions registered (:func:`_start_runtime`) and the target's registries left
    unloaded; its files located at its first use."""

    def __init__(self, py_func):
        self._py_func = py_func  # the rest at the first use of the cache (__getattr__)
        self._name = repr(py_func)

    def __getattr__(self, name):
        """An attribute of Numba's ``Cache`` not yet made (``_impl``, ``_cache_file``,
        ``_enabled``...): the cache located (its folder made and checked, as Numba's does when
        it is made), then the attribute."""
        if name.startswith("__") or "_cache_file" in vars(self):
            raise AttributeError(name)
        super().__init__(self._py_func)
        stamp = self._cache_file._source_stamp
        self._cache_file = _CacheFile(self._cache_path, self._impl.filename_base, stamp)
        return getattr(self, name)

    def load_overload(self, sig, target_context):
        _start_runtime()  # what the loaded code calls
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)


def njit(function=None, **options):
    """``numba.njit(**options)``; with ``cache=True`` the function caches through
    :class:`KernelCache`. Used as ``@njit(cache=True, ...)``."""
    if function is None:
        return lambda f: njit(f, **options)
    cache = options.pop("cache", False)
    dispatcher = numba.njit(function, **options)
    if cache:
        dispatcher._cache = KernelCache(dispatcher.py_func)  # what enable_caching() sets
        dispatcher._compilation_chain_init_hook = _no_extensions
    return dispatcher


def _no_extensions() -> None:
    """A kernel dispatcher's step before it compiles or loads, which in Numba's loads Numba's
    extensions: nothing (see the module docstring)."""
