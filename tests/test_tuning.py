"""The command line's process keeps the memory its allocators free (:mod:`mobeval.tuning`): set
before NumPy, pyarrow and Polars load, and not where the user or a memory limit decides.

Each case runs the command line's entry (:func:`mobeval.__main__.run`) in a fresh process and
reports the allocators' environment as it was when the first of NumPy, pyarrow and Polars was
imported (Polars prepends its own jemalloc options, which a later one overrides), and whether
glibc's ``malloc`` still maps a 64 MiB block of its own (``mallinfo2``'s ``hblks``: at glibc's
default mmap threshold, at most 32 MiB, it does)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

SAMPLES = REPO_ROOT / "data_samples"
RECS = ["recs", "--ratings", f"{SAMPLES}/recs/ratings.parquet"]
RECS += ["--recs", f"{SAMPLES}/recs/mf.parquet", "--quiet", "--format", "csv"]
NAMES = ("MIMALLOC_PURGE_DELAY", "_RJEM_MALLOC_CONF", "OPENBLAS_THREAD_TIMEOUT")
PROBE = """
import ctypes, gc, json, os, resource, sys
names = ("MIMALLOC_PURGE_DELAY", "_RJEM_MALLOC_CONF", "OPENBLAS_THREAD_TIMEOUT")
limit = int(sys.argv[1])
if limit:
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.RLIM_INFINITY))
import mobeval.tuning
if not limit:  # whatever limits the machine running the tests has
    mobeval.tuning.memory_limits = lambda: []
seen = {}

class Loads:  # the allocators' environment when the first of the libraries is imported
    def find_spec(self, name, path=None, target=None):
        if name in ("numpy", "pyarrow", "polars") and not seen:
            seen[name] = {k: os.environ.get(k) for k in names}

sys.meta_path.insert(0, Loads())
from mobeval.__main__ import run
passes = []
gc.callbacks.append(lambda phase, info: phase == "stop" and passes.append(info["generation"]))
sys.argv = ["mobeval", *sys.argv[2:]]
code = run()
fields = ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks")
class Info(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (*fields, "fordblks", "keepcost")]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
libc.malloc.restype = ctypes.c_void_p
before = libc.mallinfo2().hblks
block = libc.malloc(64 << 20)
mapped = libc.mallinfo2().hblks - before
libc.free(ctypes.c_void_p(block))
env = {k: os.environ.get(k) for k in names}
report = {"code": code, "seen": seen, "env": env, "mapped": mapped}
report |= {"frozen": gc.get_freeze_count(), "passes": passes}
print("PROBE " + json.dumps(report))
"""

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux")
    or "glibc" not in (os.confstr("CS_GNU_LIBC_VERSION") or ""),
    reason="glibc's mallopt and mallinfo2",
)


def probe(argv, limit: int = 0, **environment) -> dict:
    """What :data:`PROBE` reports of ``mobeval argv`` run with ``environment`` (no allocator
    options but these) under an address-space limit of ``limit`` bytes (0: none)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MALLOC_", "MIMALLOC_", "_RJEM_", "GLIBC_TUNABLES", "OPENBLAS_"))
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(limit), *argv],
        capture_output=True,
        text=True,
        env=env | environment,
        timeout=120,
    )
    line = [x for x in done.stdout.splitlines() if x.startswith("PROBE ")]
    assert line, done.stderr[-2000:]
    return json.loads(line[-1][len("PROBE ") :])


def test_the_command_line_keeps_freed_memory_set_before_its_libraries_load():
    """Before: every chunk's arrays faulted in again (1.0-1.5 s of system CPU on 100 M rows)."""
    report = probe(RECS)
    assert report["code"] == 0
    tuned = {
        "MIMALLOC_PURGE_DELAY": "-1",
        "_RJEM_MALLOC_CONF": "dirty_decay_ms:-1,muzzy_decay_ms:-1",
        "OPENBLAS_THREAD_TIMEOUT": "4",
    }
    assert list(report["seen"].values()) == [tuned]
    assert report["env"]["_RJEM_MALLOC_CONF"].endswith(",dirty_decay_ms:-1,muzzy_decay_ms:-1")
    assert report["mapped"] == 0  # glibc keeps a 64 MiB block in its heap


def test_the_users_options_and_a_memory_limit_are_kept():
    """An option the user set is theirs (glibc's: all of them); under a memory limit nothing
    changes (the limit's chunks were measured with the allocators' defaults)."""
    given = probe([], MIMALLOC_PURGE_DELAY="5", MALLOC_ARENA_MAX="4", OPENBLAS_THREAD_TIMEOUT="9")
    assert given["env"] == {
        "MIMALLOC_PURGE_DELAY": "5",
        "_RJEM_MALLOC_CONF": "dirty_decay_ms:-1,muzzy_decay_ms:-1",
        "OPENBLAS_THREAD_TIMEOUT": "9",
    }
    assert given["mapped"] == 1
    limited = probe([], limit=64 << 30)
    allocators = {k: v for k, v in limited["env"].items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    assert allocators == dict.fromkeys(allocators) and limited["mapped"] == 1


def test_openblas_threads_sleep_at_once_and_the_objects_are_frozen_before_exit():
    """Before: NumPy's OpenBLAS threads spun 2**28 cycles and the interpreter's exit walked every
    object of the run (0.1 s and 0.2 s of CPU of a 0.9 s run on the samples). Under a memory
    limit too: neither is memory."""
    for report in (probe(RECS), probe([], limit=64 << 30)):
        assert report["env"]["OPENBLAS_THREAD_TIMEOUT"] == "4"
        assert report["frozen"] > 10_000


def test_a_run_on_the_samples_makes_no_garbage_collection():
    """Before: the collector walked the objects of the run's libraries during Numba's imports
    (one gen-0 pass of 0.03-0.045 s at thresholds (100,000, 50, 100), many at the default)."""
    assert probe(RECS)["passes"] == []


def polars_pool(before: str, **environment) -> int:
    """Polars' thread pool in a fresh process that runs ``before`` first (no POLARS_MAX_THREADS
    but ``environment``'s)."""
    env = {k: v for k, v in os.environ.items() if k != "POLARS_MAX_THREADS"} | environment
    code = f"{before}\nimport polars\nprint(polars.thread_pool_size())"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return int(done.stdout.split()[-1])


TUNED = "from mobeval.tuning import tune_process\ntune_process()"


def test_polars_leaves_a_core_to_the_scoring_unless_the_user_says():
    """Before: Polars' pool took every core (its own count), its idle threads spinning against the
    scoring kernels of a stream."""
    own = polars_pool("")
    assert polars_pool(TUNED) == max(1, own - 1)
    assert polars_pool(TUNED, POLARS_MAX_THREADS="3") == 3
    assert polars_pool("import mobeval.api") == own  # a library leaves its program's pool


def test_available_cores_are_capped_by_a_cgroup_quota(tmp_path):
    from mobeval.tuning import available_cores
    from tests.test_memory_limits import cgroup_files

    affinity = len(os.sched_getaffinity(0))
    v2 = {"cgroup.controllers": "cpu memory\n", "a/cpu.max": "150000 100000\n"}
    v2 |= {"a/b/cpu.max": "max 100000\n"}
    assert available_cores(*cgroup_files(tmp_path / "v2", v2, "0::/a/b\n")) == 1
    unlimited = {"cgroup.controllers": "cpu\n", "a/cpu.max": "max 100000\n"}
    assert available_cores(*cgroup_files(tmp_path / "max", unlimited, "0::/a\n")) == affinity
    v1 = {"cpu/docker/x/cpu.cfs_quota_us": "200000\n", "cpu/docker/x/cpu.cfs_period_us": "100000\n"}
    v1 |= {"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}
    membership = "3:cpu,cpuacct:/docker/x\n0::/\n"
    assert available_cores(*cgroup_files(tmp_path / "v1", v1, membership)) == min(affinity, 2)
