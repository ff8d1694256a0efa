"""The command line's process tuned for one batch run: its allocators keep the memory they free,
OpenBLAS's idle threads sleep at once, and its garbage collector walks its libraries' objects
neither during the run nor at exit.

A run reads its inputs in chunks of the same size, one after another: each chunk's arrays are
freed and the next chunk's, of the same sizes, allocated again. At their defaults the three
allocators of a run's libraries hand freed memory back to the system at once or soon after, and
the next chunk faults it in again, page by page, each page zeroed by the kernel: on 100 M
recommendation rows 0.5-1.2 s of system CPU, a fifth of the run (``perf``: ``clear_page_erms``
under glibc's and mimalloc's frees and jemalloc's purges; BENCHMARKS.md, issue 37). Kept, the
next chunk reuses the same pages:

* glibc's ``malloc`` (NumPy's arrays, Numba's, Python's): arrays above the mmap threshold are
  mapped and unmapped each time, and a heap's free top past the trim threshold is returned.
  Both thresholds are raised to :data:`KEEP_BYTES` (``mallopt``, glibc on Linux only).
* pyarrow's mimalloc: freed pages are purged after 10 ms (``MIMALLOC_PURGE_DELAY=-1``: never).
* Polars' jemalloc: dirty pages decay back to the system over 0.5 s (Polars' setting, which
  options in ``_RJEM_MALLOC_CONF`` follow and override: ``dirty_decay_ms`` and ``muzzy_decay_ms``
  -1, never).

What a tuned run still faults in is its working set, once: on 100 M recommendation rows 23,100
faults, 99.5 % of them on distinct pages, mimalloc purging nothing; the largest part, mimalloc's
arena (about 210 MiB), in transparent huge pages, 2 MiB zeroed a fault. Huge pages stay on: in 4
KiB pages (``MIMALLOC_ALLOW_THP=0``) the peak resident memory is 42-56 MiB lower, but the faults
are 65,000 instead of 23,000 and the CPU is no lower (73 alternated pairs; BENCHMARKS.md, issue
37, eighth pass).

The peak resident memory grows little (what is kept is what the next chunk takes again; each
allocator keeps its own peak beside the others': 679 -> 695 MiB on 100 M recommendation rows),
and a smaller ``--chunk-rows`` still takes less. Only the command line tunes its process
(:func:`tune_process`, from :mod:`mobeval.__main__`, before any of those libraries loads): a
library leaves the allocators of the program that imports it (a notebook's) as they are. Neither
does a process under a memory limit (:mod:`mobeval.limits`, whose chunk sizes were measured with
the allocators' defaults), nor one whose user set an allocator's options (``MALLOC_*`` or
``GLIBC_TUNABLES`` for glibc, the variable itself for the others): theirs are kept.

Polars' thread pool leaves one core to the scoring: at its default, a thread a core, its threads
decode a stream's next batches on every core while the main thread scores the last ones, and its
idle threads spin (``sched_yield``) between decodes against the scoring kernels. On 2 cores a
100 M-row ``mobeval recs`` run made 10,900 ``sched_yield`` calls and 11,900 involuntary context
switches, and 5,400 and 4,000 with the pool at one thread a core less, which also took 70-80 MiB
less memory (the allocator's arenas of the threads not started) and, with the kernels scoring
alone while the reading is behind (:func:`mobeval.kernels.blocks.score_on`), 0.16-0.42 s less
CPU under ``trec_eval``, ``ranx`` and ``clayrs`` (BENCHMARKS.md, issue 37, eleventh pass).
``POLARS_MAX_THREADS`` is set to :func:`available_cores` less one (at least one), unless the user
set it.

Three costs of every run, whatever its size, go the same way (0.03 s, 0.1 s and 0.2 s of CPU of a
0.9 s run on the samples):

* A run makes few reference cycles, but its libraries' imports allocate about 150,000 objects
  that Python's cyclic garbage collector walks at each threshold: 0.08-0.1 s of CPU at the
  default thresholds (700, 10, 10), one pass of 0.03-0.045 s at (100,000, 50, 100) (Numba's
  imports crossed it). At :data:`GC_THRESHOLDS`, set before the imports, a scoring run makes none.
* NumPy's OpenBLAS starts its threads when NumPy loads, and each spins (``sched_yield``) for
  2**28 cycles before it sleeps, though a scoring run calls no BLAS routine:
  ``OPENBLAS_THREAD_TIMEOUT=4`` has them sleep after 2**4 (the fewest OpenBLAS allows; a BLAS
  call wakes them as before).
* At exit the interpreter's garbage collector walks every object of the process (NumPy's,
  Polars', Numba's and LLVM's modules), though the process is ending: :func:`before_exit`
  freezes them (:func:`gc.freeze`) after the command has done its work and closed its files.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

from mobeval.limits import CGROUP_ROOT, SELF_CGROUP, cgroup_folders, memory_limits

#: glibc ``mallopt`` parameters (``malloc.h``).
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
#: The mmap and trim thresholds of a tuned process: a freed array of up to 1 GiB stays in the heap.
KEEP_BYTES = 1 << 30
#: Options of the libraries' own allocators, read from the environment when they load.
ALLOCATOR_ENVIRONMENT = {
    "MIMALLOC_PURGE_DELAY": "-1",
    "_RJEM_MALLOC_CONF": "dirty_decay_ms:-1,muzzy_decay_ms:-1",
}
#: The cyclic garbage collector's thresholds in the command line's process (a run of any size on
#: the samples, on 10 M next-location rows or 100 M recommendation rows: 140,000-151,000 objects).
GC_THRESHOLDS = (250_000, 50, 100)
#: OpenBLAS's threads sleep once idle for 2**4 cycles (read when NumPy loads it).
THREAD_ENVIRONMENT = {"OPENBLAS_THREAD_TIMEOUT": "4"}


def tune_process(environ=os.environ) -> None:
    """Tune this process for a batch run (see the module docstring): its garbage collector, its
    threads, and its allocators but under a memory limit. Call it before NumPy, pyarrow and
    Polars are imported."""
    gc.set_threshold(*GC_THRESHOLDS)
    for name, value in THREAD_ENVIRONMENT.items():
        environ.setdefault(name, value)
    environ.setdefault("POLARS_MAX_THREADS", str(max(1, available_cores() - 1)))
    if memory_limits():
        return
    for name, value in ALLOCATOR_ENVIRONMENT.items():
        environ.setdefault(name, value)
    if not _glibc_options_given(environ):
        mallopt = _glibc_mallopt()
        if mallopt is not None:
            mallopt(M_MMAP_THRESHOLD, KEEP_BYTES)
            mallopt(M_TRIM_THRESHOLD, KEEP_BYTES)


def available_cores(root: Path = CGROUP_ROOT, self_cgroup: Path = SELF_CGROUP) -> int:
    """The cores this process may run on, as Rust's ``std::thread::available_parallelism`` (which
    sizes Polars' pool) counts them: its CPU affinity, capped by the smallest CPU quota of its
    cgroup and their ancestors (v2 ``cpu.max``, v1 ``cpu.cfs_quota_us`` over
    ``cpu.cfs_period_us``; :func:`mobeval.limits.cgroup_folders`), rounded down, at least one."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    for folder, version in cgroup_folders("cpu", root, self_cgroup):
        if version == 2:
            quota, _, period = _read_text(folder / "cpu.max").partition(" ")
        else:
            quota = _read_text(folder / "cpu.cfs_quota_us")
            period = _read_text(folder / "cpu.cfs_period_us")
        if quota.isdigit() and period.isdigit() and int(period) > 0:
            cores = min(cores, max(1, int(quota) // int(period)))
    return max(1, cores or 1)


def _read_text(path: Path) -> str:
    """``path``'s text, stripped; empty where it cannot be read."""
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _glibc_options_given(environ) -> bool:
    """Whether the user set glibc malloc's options: ``MALLOC_*`` or ``GLIBC_TUNABLES``'s."""
    given = any(name.startswith("MALLOC_") for name in environ)
    return given or "glibc.malloc." in environ.get("GLIBC_TUNABLES", "")


def _glibc_mallopt():
    """glibc's ``mallopt`` (None on another C library or system)."""
    try:
        if not (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"):
            return None
    except (ValueError, OSError):  # no such name: not glibc
        return None
    import ctypes

    return getattr(ctypes.CDLL(None), "mallopt", None)


def before_exit() -> None:
    """The process's objects frozen: the interpreter's last collection, at exit, does not walk
    them. Call it when the command is done (its files closed), just before the process exits."""
    gc.freeze()
