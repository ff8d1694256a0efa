"""Hash buckets and the limit on open files: every bucket's file is open while the rows are spread,
so a run needing more than the process's soft limit raises it (up to the hard limit), and one
needing more than the hard limit stops at once, naming the limit and what to raise."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import polars as pl
import pytest

from mobeval.io.chunking import BUCKET_ROWS, OTHER_FILES, bucket_count

resource = pytest.importorskip("resource")  # no such limit on Windows

SAMPLES, CANDIDATES, CHUNK_ROWS = 6_000, 100, 10_000  # 600,000 rows: 60 buckets of a chunk


@pytest.mark.parametrize(
    ("rows", "chunk_rows"),
    [(10_000_000, 2_000_000), (10_000_000, 100_000), (1, 10_000), (2_000_001, 600_000)],
)
def test_buckets_of_at_most_bucket_rows(rows, chunk_rows):
    assert bucket_count(rows, chunk_rows) == math.ceil(rows / min(chunk_rows, BUCKET_ROWS))


@pytest.fixture(scope="module")
def scattered(tmp_path_factory):
    """A next-location truth and its predictions with every sample's rows apart."""
    folder = tmp_path_factory.mktemp("scattered")
    rng = np.random.default_rng(3)
    samples = np.repeat(np.arange(SAMPLES), CANDIDATES)
    predictions = pl.DataFrame(
        {
            "sample_id": samples,
            "location": np.tile(np.arange(CANDIDATES), SAMPLES),
            "score": rng.random(SAMPLES * CANDIDATES),
        }
    )
    truth = pl.DataFrame(
        {"sample_id": np.arange(SAMPLES), "location": rng.integers(0, 120, SAMPLES)}
    )
    truth.write_parquet(folder / "truth.parquet")
    predictions.write_parquet(folder / "sorted.parquet")
    predictions.sample(fraction=1.0, shuffle=True, seed=4).write_parquet(folder / "apart.parquet")
    return folder


def _run(folder, pred: str, files: tuple[int, int] | None, chunk_rows: int = CHUNK_ROWS):
    """``mobeval nextloc`` on ``pred`` in chunks of ``chunk_rows``, under a (soft, hard) limit on
    open files."""

    def limited():
        if files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, files)

    command = [sys.executable, "-m", "mobeval", "nextloc", "--truth", str(folder / "truth.parquet")]
    command += ["--pred", str(folder / pred), "--metrics", "acc@k,mrr", "--k", "1,5"]
    command += ["--chunk-rows", str(chunk_rows), "--quiet", "--format", "csv"]
    return subprocess.run(command, capture_output=True, text=True, preexec_fn=limited, check=False)


def test_a_soft_limit_below_the_buckets_is_raised(scattered):
    buckets = SAMPLES * CANDIDATES // CHUNK_ROWS
    soft = buckets // 2  # the buckets' files alone need more
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < buckets + OTHER_FILES:
        pytest.skip(f"the hard limit on open files ({hard}) is below what the test needs")
    apart = _run(scattered, "apart.parquet", (soft, hard))
    assert apart.returncode == 0, apart.stderr
    assert apart.stdout == _run(scattered, "sorted.parquet", None).stdout.replace("sorted", "apart")


def test_a_hard_limit_below_the_buckets_stops_the_run_naming_it(scattered):
    buckets = SAMPLES * CANDIDATES // CHUNK_ROWS
    limit = buckets + OTHER_FILES - 20
    out = _run(scattered, "apart.parquet", (limit, limit))
    assert out.returncode == 2
    assert out.stdout == ""
    message = out.stderr.strip()
    assert message.startswith("mobeval: error:"), message
    assert f"may open {limit:,} files" in message
    assert f"ulimit -n {buckets + OTHER_FILES}" in message
    fits = math.ceil(SAMPLES * CANDIDATES / (limit - OTHER_FILES))
    assert f"--chunk-rows {fits}" in message
    again = _run(scattered, "apart.parquet", (limit, limit), fits)  # the chunk size it names
    assert again.returncode == 0, again.stderr
