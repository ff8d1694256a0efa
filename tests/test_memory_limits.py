"""Under a memory limit a run finishes within it or stops at once with exit 2 naming the limit.

Real address-space limits (``RLIMIT_AS``, as ``ulimit -v`` sets) in subprocesses, every family;
cgroup limits (which a test cannot create here) through fake cgroup files."""

from __future__ import annotations

import csv
import io
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mobeval import limits

REPO_ROOT = Path(__file__).resolve().parents[1]
SAMPLES = REPO_ROOT / "data_samples"
GIB = 1 << 30

#: One small run of every family on the samples (and a job file).
RUNS = {
    "nextloc": [
        "nextloc",
        "--truth",
        f"{SAMPLES}/nextloc/tky/truth.parquet",
        "--pred",
        f"{SAMPLES}/nextloc/tky/markov.parquet",
    ],
    "recs": [
        "recs",
        "--ratings",
        f"{SAMPLES}/recs/ratings.parquet",
        "--recs",
        f"{SAMPLES}/recs/mf.parquet",
    ],
    "trajectory": [
        "trajectory",
        "--reference",
        f"{SAMPLES}/humob/reference_test.csv.gz",
        "--generated",
        f"{SAMPLES}/humob/weekly_repeat.csv.gz",
    ],
    "logits": [
        "logits",
        "--logits",
        f"{SAMPLES}/logits/gru.npy",
        "--targets",
        f"{SAMPLES}/logits/targets.npy",
    ],
    "run": ["run", str(REPO_ROOT / "jobs" / "recs_sample.toml")],
}


def limited(address_space: int | None, args: list[str], timeout: float = 180):
    """``mobeval args`` in a subprocess under an address-space limit (None: none); killed after
    ``timeout`` seconds (a run that spins fails the test instead of hanging it)."""

    def limit() -> None:
        if address_space is not None:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    return subprocess.run(
        [sys.executable, "-m", "mobeval", *args],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        preexec_fn=limit,
        timeout=timeout,
    )


def summary_rows(stdout: str) -> list[list[str]]:
    return sorted(csv.reader(io.StringIO(stdout)))


@pytest.mark.parametrize("family", sorted(RUNS))
def test_every_family_finishes_under_1050_mib_of_address_space(family, tmp_path):
    """Unfitted, a run mapped 1.5 to 2.8 GiB, and under 2 GiB spun forever on failed mmaps
    inside OpenBLAS's initialisation (issue 37)."""
    args = [*RUNS[family], "--format", "csv", "--out", str(tmp_path / "out")]
    free = limited(None, args)
    assert free.returncode == 0, free.stderr
    shutil.rmtree(tmp_path / "out")
    run = limited(1050 << 20, args)
    assert run.returncode == 0, run.stderr
    assert summary_rows(run.stdout) == summary_rows(free.stdout)


@pytest.mark.parametrize("family", ["nextloc", "logits"])
def test_a_limit_too_small_stops_at_once_naming_it(family):
    run = limited(600 << 20, RUNS[family], timeout=60)
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith("mobeval: error: the address-space limit (ulimit -v) of 600 MiB")
    assert "raise it to" in run.stderr
    assert "Traceback" not in run.stderr


#: The API on the next-location sample, its summary printed as CSV.
API_RUN = f"""
import mobeval
result = mobeval.evaluate_nextloc(
    "{SAMPLES}/nextloc/tky/truth.parquet", "{SAMPLES}/nextloc/tky/markov.parquet", progress=False
)
print(result.summary.write_csv(), end="")
"""


def test_the_api_is_fitted_to_the_limit_when_the_package_is_imported():
    """Only the command line fitted the process (OpenBLAS, mimalloc and malloc's reservations):
    the API under 1050 MiB aborted (Polars could not allocate, exit 134) and under 2 GiB raised
    MemoryError; with an empty Numba cache it spun in OpenBLAS's initialisation until killed."""

    def api(address_space: int | None):
        def limit() -> None:
            if address_space is not None:
                resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

        return subprocess.run(
            [sys.executable, "-c", API_RUN],
            capture_output=True,
            text=True,
            preexec_fn=limit,
            timeout=180,
        )

    free = api(None)
    assert free.returncode == 0, free.stderr
    run = api(1050 << 20)
    assert run.returncode == 0, run.stderr
    assert summary_rows(run.stdout) == summary_rows(free.stdout)


def test_validate_stops_at_once_under_a_limit_too_small():
    """Under 400 MiB Polars aborted ``validate`` (exit 134); under 600 MiB it finishes."""
    humob = SAMPLES / "humob"
    args = ["validate", "--task", "test", "--submission", str(humob / "home_only.csv.gz")]
    args += ["--dataset", str(humob / "city_test_challengedata.csv.gz")]
    run = limited(400 << 20, args, timeout=60)
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith(
        "mobeval: error: the address-space limit (ulimit -v) of 400 MiB is too small for a run: "
        "mobeval's libraries take about 448 MiB of address space"
    )
    assert limited(600 << 20, args).returncode == 0


@pytest.mark.parametrize("command", ["compare", "report"])
def test_a_command_reading_a_whole_out_stops_at_once_under_a_limit_too_small(command, tmp_path):
    """Under 600 MiB ``report`` could not map SciPy's ``_ufuncs`` (an ImportError: exit 3, 'a bug
    in mobeval') or Polars aborted it (exit 134), and ``compare`` ran out of memory after 12 s
    suggesting a --chunk-rows it does not take; under 800 MiB both finish."""
    out = tmp_path / "out"
    job = str(REPO_ROOT / "jobs" / "nextloc_sample.toml")  # two models a city
    assert limited(None, ["run", job, "--quiet", "--out", str(out)]).returncode == 0
    args = {"compare": [str(out)], "report": [str(out), "--output", str(tmp_path / "r.html")]}
    run = limited(600 << 20, [command, *args[command]], timeout=60)
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith(
        "mobeval: error: the address-space limit (ulimit -v) of 600 MiB is too small for a run: "
        "mobeval's libraries take about 768 MiB of address space"
    )
    assert limited(800 << 20, [command, *args[command]]).returncode == 0


def test_out_of_memory_in_a_command_without_chunks_names_the_limit_alone(monkeypatch, capsys):
    """A library that cannot be mapped (an ImportError) is out of memory too, not 'a bug in
    mobeval'; a command that reads no chunks is not told of --chunk-rows."""
    from mobeval import cli

    def unmapped(args):
        raise ImportError("_ufuncs.so: failed to map segment from shared object")

    limit = limits.Limit("address-space limit (ulimit -v)", 900 << 20, "address space")
    monkeypatch.setattr(limits, "memory_limits", lambda: [limit])
    monkeypatch.setattr(cli, "_run", unmapped)
    assert cli.main(["compare", "out"]) == 2
    assert capsys.readouterr().err == (
        "mobeval: error: out of memory under the address-space limit (ulimit -v) of 900 MiB: "
        "raise the limit\n"
    )


def test_ten_million_rows_in_chunks_fitted_to_the_limit(tmp_path):
    """One chunk of 10,000,000 rows does not fit in 1.3 GB beside the libraries (Polars aborts):
    the chunks are fitted to what the limit leaves, and the values are those of the run without
    a limit (benchmarks/datagen.py's next-location inputs, 100,000 samples x 100)."""
    samples, candidates = 100_000, 100
    rng = np.random.default_rng(7)
    sample = np.repeat(np.arange(samples), candidates)
    base, step = rng.integers(0, 50_021, size=samples), rng.integers(1, 997, size=samples)
    location = ((base[:, None] + step[:, None] * np.arange(candidates)) % 50_021).ravel()
    score = rng.random(samples * candidates)
    pq.write_table(
        pa.table({"sample_id": sample, "location": location, "score": score}),
        tmp_path / "pred.parquet",
    )
    truth = {"sample_id": np.arange(samples), "location": base}
    pq.write_table(pa.table(truth), tmp_path / "truth.parquet")
    args = ["nextloc", "--truth", str(tmp_path / "truth.parquet")]
    args += ["--pred", str(tmp_path / "pred.parquet"), "--format", "csv"]
    args += ["--chunk-rows", "10000000"]
    free = limited(None, [*args, "--out", str(tmp_path / "free")])
    assert free.returncode == 0, free.stderr
    run = limited(1_300_000 << 10, [*args, "--out", str(tmp_path / "limited")])
    assert run.returncode == 0, run.stderr
    assert summary_rows(run.stdout)[1:] == summary_rows(free.stdout)[1:]


def test_logits_larger_than_the_limit_read_in_fitted_chunks(tmp_path):
    """A 1.6 GB ``.npy`` of logits (100,000 x 4,000 float32, sparse: zeros, every row tied) under
    1050 MiB of address space: mapped whole, it could not be opened (exit 2, 'Cannot allocate
    memory'); read by byte ranges in chunks fitted to the limit, it finishes with the values of
    the run without a limit."""
    rows, classes = 100_000, 4_000
    logits = tmp_path / "logits.npy"
    with logits.open("wb") as stream:
        header = {"descr": "<f4", "fortran_order": False, "shape": (rows, classes)}
        np.lib.format.write_array_header_1_0(stream, header)
        stream.truncate(stream.tell() + rows * classes * 4)
    np.save(tmp_path / "targets.npy", np.arange(rows) % classes)
    args = ["logits", "--logits", str(logits), "--targets", str(tmp_path / "targets.npy")]
    args += ["--format", "csv"]
    free = limited(None, args)
    assert free.returncode == 0, free.stderr
    run = limited(1050 << 20, args)
    assert run.returncode == 0, run.stderr
    assert summary_rows(run.stdout) == summary_rows(free.stdout)


# ------------------------------------------------------------------ limits read from cgroup files


def cgroup_files(tmp_path: Path, files: dict[str, str], membership: str) -> tuple[Path, Path]:
    """A fake ``/sys/fs/cgroup`` holding ``files`` (path -> text) and ``/proc/self/cgroup``."""
    root = tmp_path / "cgroup"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    self_cgroup = tmp_path / "self_cgroup"
    self_cgroup.write_text(membership)
    return root, self_cgroup


def test_cgroup_v2_memory_max_and_usage(tmp_path):
    root, me = cgroup_files(
        tmp_path,
        {
            "cgroup.controllers": "cpu memory\n",
            "user.slice/memory.max": "max\n",
            "user.slice/job/memory.max": "1073741824\n",
            "user.slice/job/memory.current": "104857600\n",
        },
        "0::/user.slice/job\n",
    )
    limit = limits.cgroup_limit(root, me)
    assert limit.size == GIB
    assert limit.used() == 100 << 20
    assert limit.describe() == "the cgroup memory limit (memory.max, cgroup v2) of 1.0 GiB"
    assert not limit.address_space


def test_cgroup_v2_the_smallest_of_the_ancestors(tmp_path):
    root, me = cgroup_files(
        tmp_path,
        {
            "cgroup.controllers": "memory\n",
            "a/memory.max": "536870912\n",
            "a/memory.current": "0\n",
            "a/b/memory.max": "max\n",
        },
        "0::/a/b\n",
    )
    assert limits.cgroup_limit(root, me).size == 512 << 20


def test_cgroup_v1_limit_in_bytes_and_no_limit(tmp_path):
    root, me = cgroup_files(
        tmp_path,
        {
            "memory/docker/abc/memory.limit_in_bytes": "2147483648\n",
            "memory/docker/abc/memory.usage_in_bytes": "1048576\n",
            "memory/memory.limit_in_bytes": "9223372036854771712\n",
        },
        "5:cpuset:/\n4:memory:/docker/abc\n0::/\n",
    )
    limit = limits.cgroup_limit(root, me)
    assert limit.name == "cgroup memory limit (memory.limit_in_bytes, cgroup v1)"
    assert (limit.size, limit.used()) == (2 * GIB, 1 << 20)
    (root / "memory/docker/abc/memory.limit_in_bytes").write_text("9223372036854771712\n")
    assert limits.cgroup_limit(root, me) is None


def test_cgroup_in_a_container_is_the_mount_root(tmp_path):
    """Inside a container /proc/self/cgroup names a path of the host: the mount's root is the
    container's own cgroup."""
    root, me = cgroup_files(
        tmp_path,
        {"memory/memory.limit_in_bytes": "805306368\n", "memory/memory.usage_in_bytes": "0\n"},
        "4:memory:/kubepods/pod1/c1\n",
    )
    assert limits.cgroup_limit(root, me).size == 768 << 20


def test_chunks_fitted_to_a_cgroup_limit_and_a_limit_too_small(tmp_path):
    usage = tmp_path / "memory.current"
    usage.write_text(str(200 << 20))
    limit = limits.Limit("cgroup memory limit (memory.max, cgroup v2)", GIB, "memory", usage)
    left = GIB - limits.START_RESIDENT
    assert limits.fitted_chunk_rows(2_000_000, [limit]) == left // limits.BYTES_PER_ROW
    assert limits.fitted_chunk_rows(1_000, [limit]) == 1_000
    assert limits.shortfall([limit]) is None
    usage.write_text(str(GIB - (1 << 20)))
    assert limits.fitted_chunk_rows(2_000_000, [limit]) == limits.MIN_CHUNK_ROWS
    why = limits.shortfall([limit])
    assert why.startswith("the cgroup memory limit (memory.max, cgroup v2) of 1.0 GiB is too small")
    assert limits.fitted_chunk_rows(123, []) == 123


def test_logits_chunks_fitted_in_values_to_a_limit(tmp_path):
    """A logits chunk is counted in values (rows x classes): under a limit its rows are the values
    left (BYTES_PER_VALUE each) divided by the classes; without a limit the job is unchanged."""
    from mobeval.engines.base import fitted_logits_job
    from mobeval.engines.partition_logits import LogitsPartitionJob

    logits, targets = np.zeros((50, 1_000)), np.zeros(50, dtype=np.int64)
    job = LogitsPartitionJob(logits, targets, {}, {}, chunk_rows=20_000)
    usage = tmp_path / "memory.current"
    usage.write_text(str(200 << 20))
    limit = limits.Limit("cgroup memory limit (memory.max, cgroup v2)", 400 << 20, "memory", usage)
    left = (400 << 20) - limits.START_RESIDENT
    fitted = fitted_logits_job(job, [limit])
    assert fitted.chunk_rows == left // limits.BYTES_PER_VALUE // 1_000 < job.chunk_rows
    assert fitted_logits_job(job, []) is job


def test_out_of_memory_names_the_limit_and_what_to_change(monkeypatch, capsys):
    from mobeval import cli

    def exhausted(args):
        raise MemoryError

    limit = limits.Limit("address-space limit (ulimit -v)", 1200 << 20, "address space")
    monkeypatch.setattr(limits, "memory_limits", lambda: [limit])
    monkeypatch.setattr(cli, "_run", exhausted)
    assert cli.main(RUNS["nextloc"]) == 2
    assert capsys.readouterr().err == (
        "mobeval: error: out of memory under the address-space limit (ulimit -v) of 1.2 GiB: a "
        "smaller --chunk-rows (a job's chunk_rows) needs less, or raise the limit\n"
    )
