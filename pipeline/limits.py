"""The memory a run may use: an address-space limit or a cgroup's, read at start, and the
process fitted to it.

Two kinds of limit stop a process that asks for more memory than it is given:

* the **address-space limit** (``ulimit -v``, ``RLIMIT_AS``; ``prlimit --as``): every mapping
  counts, reserved or used, so a library that reserves address space up front spends it whether
  it touches it or not. Unfitted, a mobeval run maps about 2.5 GiB before it reads a row (measured
  in docs/troubleshooting.md): pyarrow's mimalloc reserves a 1 GiB arena at its first allocation,
  glibc gives every thread that allocates a 64 MiB heap, and Numba's first compilation loads
  SciPy's OpenBLAS, whose initialisation maps a 32 MiB buffer per thread and, when the mapping
  fails, retries forever inside ``dlopen`` (``blas_memory_alloc``): the process spins with the
  GIL held, so neither SIGTERM nor Ctrl-C reaches Python's handlers. :func:`fit_process`
  removes these reservations before any of those libraries loads.
* a **cgroup memory limit** (``memory.max`` in cgroup v2, ``memory.limit_in_bytes`` in v1: a
  container's ``--memory``, systemd's ``MemoryMax``): only the memory used counts; past it the
  kernel kills the process. Reservations cost nothing there.

Under either, :func:`fitted_chunk_rows` bounds the rows of a chunk by the memory left (the limit
less what the process uses when the run starts) divided by what a chunk's row costs at its peak,
and :func:`shortfall` says when even the smallest chunk does not fit, for the caller to stop at
once with a message naming the limit and what to change. Nothing here imports NumPy, Arrow,
Polars or Numba: it runs before they load.
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from pathlib import Path

#: What a run takes before its first chunk, after :func:`fit_process`: the address space its
#: libraries map (NumPy, Arrow, Polars, Numba and LLVM, their threads' stacks and heaps) and the
#: memory it uses. Measured (docs/troubleshooting.md) on the samples of the four families: at most
#: 936 MiB mapped and 300 MiB resident.
START_ADDRESS_SPACE = 1 << 30
START_RESIDENT = 320 << 20
#: The same (address space, resident) for a command that reads no chunks, by what it reads whole:
#: an OUT (``compare``, ``report``: 690-700 MiB mapped and 220 MiB resident on the next-location
#: sample job's OUT, the report with its plots) or a HuMob submission (``validate``: 428 MiB and
#: 96 MiB on the samples). Under less, Polars could abort the process (it cannot report a failed
#: allocation: exit 134).
WHOLE_START = {"out": (768 << 20, 256 << 20), "submission": (448 << 20, 128 << 20)}
#: Peak bytes per row of a chunk (the chunk read, sorted, its kernel arrays, its per-unit part
#: written): measured 160 (recommendation lists) and 440 (next location) bytes of address space
#: per row between chunks of 100,000 and 500,000 rows with ``--out`` (docs/troubleshooting.md).
BYTES_PER_ROW = 512
#: Peak bytes per value of a logits chunk, whose size is counted in values (rows x classes): the
#: values as read (a ``.npy`` file's rows read into memory, or a Parquet batch's list column)
#: and the float64 array the kernel reads (a copy where the input is not float64), 8 bytes each
#: at most; the per-row outputs are a few values a row, not a value of each class.
BYTES_PER_VALUE = 16
#: The fewest rows a chunk is fitted to: below it a run would crawl, and the limit is too tight.
MIN_CHUNK_ROWS = 10_000
#: glibc's ``mallopt`` parameter for the number of malloc arenas (``M_ARENA_MAX``), and the count
#: kept under an address-space limit (each arena reserves 64 MiB of address space).
M_ARENA_MAX, ARENAS = -8, 2
#: Environment set under an address-space limit before the libraries load (a value the user
#: set is kept): OpenBLAS with one thread maps one buffer and starts no thread; mimalloc (pyarrow's
#: allocator) reserves its arenas 64 MiB at a time instead of 1 GiB.
LIMITED_ENVIRONMENT = {"OPENBLAS_NUM_THREADS": "1", "MIMALLOC_ARENA_RESERVE": "64MiB"}

CGROUP_ROOT = Path("/sys/fs/cgroup")
SELF_CGROUP = Path("/proc/self/cgroup")


@dataclass(frozen=True)
class Limit:
    """A memory limit on this process: ``name`` (as a user would set it), its ``size`` in bytes,
    what counts against it (``counts``: ``"address space"`` or ``"memory"``) and the file its usage
    is read from (``usage``: a cgroup's ``memory.current``; None: this process's ``VmSize``)."""

    name: str
    size: int
    counts: str
    usage: Path | None = None

    @property
    def address_space(self) -> bool:
        return self.counts == "address space"

    def used(self) -> int:
        """Bytes counted against the limit now."""
        if self.usage is not None:
            return _read_int(self.usage) or 0
        return _vm_size()

    def describe(self) -> str:
        return f"the {self.name} of {gib(self.size)}"


def gib(size: int) -> str:
    """``size`` bytes as a user reads them: ``2.0 GiB``, ``512 MiB``."""
    return f"{size / 2**30:.1f} GiB" if size >= 2**30 else f"{size >> 20} MiB"


def _read_int(path: Path) -> int | None:
    """The integer in ``path`` (a cgroup file); None for ``max``, a missing or unreadable file."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _vm_size() -> int:
    """This process's address space in bytes (``VmSize`` of ``/proc/self/status``)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) << 10
    except OSError:
        pass
    return 0


def address_space_limit() -> Limit | None:
    """The soft ``RLIMIT_AS`` of this process (``ulimit -v``), None when unlimited."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    return Limit("address-space limit (ulimit -v)", soft, "address space")


#: Above this a cgroup v1 limit is "no limit" (the kernel's unlimited value rounded to a page).
UNLIMITED_V1 = 1 << 62
V1_FILES = ("memory.limit_in_bytes", "memory.usage_in_bytes")


def cgroup_folders(controller: str, root: Path = CGROUP_ROOT, self_cgroup: Path = SELF_CGROUP):
    """(folder, cgroup version) of this process's cgroup under ``controller`` (``"memory"``,
    ``"cpu"``) and of each of its ancestors, the process's own first: the unified hierarchy's
    (v2) and the controller's own (v1), as ``/proc/self/cgroup`` lists them. ``root`` is where the
    cgroup file systems are mounted and ``self_cgroup`` the ``/proc/self/cgroup`` file (tests pass
    fakes). Inside a container the process's path may not exist under ``root`` (the container's
    cgroup is the mount's root): the mount's root is read then. Nothing where ``self_cgroup``
    cannot be read."""
    try:
        lines = self_cgroup.read_text().splitlines()
    except OSError:
        return
    for line in lines:
        number, controllers, path = line.split(":", 2)
        if number == "0" and controllers == "":  # cgroup v2 (unified)
            mount = root if (root / "cgroup.controllers").exists() else root / "unified"
            version = 2
        elif controller in controllers.split(","):
            mount, version = root / controller, 1
        else:
            continue
        folder = mount / path.lstrip("/")
        if not folder.is_dir():
            folder = mount
        while True:
            yield folder, version
            if folder == mount:
                break
            folder = folder.parent


def cgroup_limit(root: Path = CGROUP_ROOT, self_cgroup: Path = SELF_CGROUP) -> Limit | None:
    """The smallest memory limit of this process's cgroup and its ancestors (v2 ``memory.max``,
    v1 ``memory.limit_in_bytes``; :func:`cgroup_folders`), None when there is none."""
    found = []
    for folder, version in cgroup_folders("memory", root, self_cgroup):
        files = ("memory.max", "memory.current") if version == 2 else V1_FILES
        size = _read_int(folder / files[0])
        if size is not None and size < UNLIMITED_V1:
            name = f"cgroup memory limit ({files[0]}, cgroup v{version})"
            found.append(Limit(name, size, "memory", folder / files[1]))
    return min(found, key=lambda limit: limit.size - limit.used(), default=None)


def memory_limits() -> list[Limit]:
    """Every memory limit on this process: its address-space limit and its cgroup's."""
    return [limit for limit in (address_space_limit(), cgroup_limit()) if limit is not None]


def fit_process() -> None:
    """Under an address-space limit, keep the libraries from reserving what they do not use:
    :data:`LIMITED_ENVIRONMENT` (read when OpenBLAS and mimalloc load: ``import mobeval`` calls
    this, before NumPy and pyarrow are imported) and at most :data:`ARENAS` glibc malloc arenas.
    Without such a limit, nothing changes (and ``ctypes`` is not imported)."""
    if address_space_limit() is None:
        return
    import ctypes
    import ctypes.util

    for name, value in LIMITED_ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    libc = ctypes.util.find_library("c")
    if libc is not None:
        mallopt = getattr(ctypes.CDLL(libc), "mallopt", None)  # glibc only
        if mallopt is not None:
            mallopt(M_ARENA_MAX, ARENAS)


def _left(limit: Limit) -> int:
    """Bytes a run's chunks may take under ``limit``: the limit less what the run takes before its
    first chunk (what the process uses now, or what its libraries will, if more)."""
    start = START_ADDRESS_SPACE if limit.address_space else START_RESIDENT
    return limit.size - max(limit.used(), start)


def fitted_chunk_rows(
    chunk_rows: int, limits: list[Limit], bytes_per_row: int = BYTES_PER_ROW
) -> int:
    """``chunk_rows``, or fewer where a limit leaves less than ``chunk_rows`` rows' worth
    (``bytes_per_row`` each: :data:`BYTES_PER_ROW`, or :data:`BYTES_PER_VALUE` for a logits
    chunk counted in values), never below :data:`MIN_CHUNK_ROWS`. A run's results do not depend
    on its chunks, so fitting them changes only its memory and speed."""
    for limit in limits:
        chunk_rows = min(chunk_rows, max(MIN_CHUNK_ROWS, _left(limit) // bytes_per_row))
    return chunk_rows


def shortfall(limits: list[Limit], whole: str | None = None) -> str | None:
    """Why a run cannot fit in one of ``limits``, for a message that stops it before it starts
    (None: it fits): the limit, what a run takes, and what to raise it to. A run reads chunks (its
    smallest must fit beside the libraries), or, ``whole``, a key of :data:`WHOLE_START`."""
    for limit in limits:
        if whole is None:
            start = START_ADDRESS_SPACE if limit.address_space else START_RESIDENT
        else:
            start = WHOLE_START[whole][0 if limit.address_space else 1]
        rows = MIN_CHUNK_ROWS * BYTES_PER_ROW if whole is None else 0
        need = max(limit.used(), start) + rows
        if limit.size < need:
            return (
                f"{limit.describe()} is too small for a run: mobeval's libraries take about "
                f"{gib(start)} of {limit.counts} before the first row (this process uses "
                f"{gib(limit.used())}); raise it to {gib(need + (64 << 20))} or more"
                + (f" (ulimit -v {(need + (64 << 20)) >> 10})" if limit.address_space else "")
            )
    return None


#: What the dynamic loader says of a library it could not map (glibc's ``dlopen``, ENOMEM): a
#: library imported under an address-space limit that leaves it no room fails so, as an
#: ImportError (SciPy's ``_ufuncs`` under 600 MiB, imported by the report's plots).
UNMAPPED_LIBRARY = "failed to map segment"


def exhausted(error: BaseException) -> bool:
    """Whether ``error`` says the process ran out of memory: a MemoryError (Arrow's included), or
    an ImportError of a library that could not be mapped (:data:`UNMAPPED_LIBRARY`)."""
    return isinstance(error, MemoryError) or (
        isinstance(error, ImportError) and UNMAPPED_LIBRARY in str(error)
    )


def out_of_memory(limits: list[Limit], chunked: bool = True) -> str:
    """The message of a run that ran out of memory: the limit it ran under, what to change (a
    smaller chunk where the command reads in chunks, ``chunked``; the limit)."""
    under = f" under {limits[0].describe()}" if limits else ""
    change = ["a smaller --chunk-rows (a job's chunk_rows) needs less"] if chunked else []
    change += ["raise the limit"] if limits else []
    if not change:
        return f"out of memory{under}"
    return f"out of memory{under}: {', or '.join(change)}"
