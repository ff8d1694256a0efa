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
"""

from __future__ import annotations

import numba
from numba.core.caching import FunctionCache
from numba.core.runtime import nrt


class KernelCache(FunctionCache):
    """Numba's per-function disk cache (the same files), loading a saved function with the
    runtime started and the target's registries left unloaded."""

    def load_overload(self, sig, target_context):
        nrt.rtsys.initialize(target_context)  # what the loaded code calls; idempotent
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
    return dispatcher
