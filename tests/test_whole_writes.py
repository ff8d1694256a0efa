"""Writes checked whole, reads checked against what was written (issue 36, class 4).

A nearly full disk is simulated by a patched ``os.write``: a write to a file of the chosen name
under the test's folder takes what room is left (a short write), then fails with ENOSPC, as the
kernel's does. Every writer of a file mobeval makes (OUT's parts, the manifest, a commit
journal, the stored comparison, a report and its figures, auc's spilled runs) must then fail
with exit 2 naming the file and the free space, and leave OUT as it was; a scratch file cut
short after it was written (a spilled run, a hash bucket) must be an error when read back, never
fewer rows and a wrong value."""

from __future__ import annotations

import errno
import fnmatch
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from mobeval.api import evaluate_nextloc
from mobeval.cli import main
from mobeval.engines import local
from mobeval.metrics import tallies
from mobeval.tasks import recs_population
from mobeval.tasks.recs_population import ScoreCounts
from tests.conftest import REPO_ROOT
from tests.test_output_safety import snapshot

SAMPLES = REPO_ROOT / "data_samples"
RECS = [
    "--ratings",
    str(SAMPLES / "recs/ratings.parquet"),
    "--recs",
    str(SAMPLES / "recs/mf.parquet"),
]
TKY = SAMPLES / "nextloc" / "tky"


def nearly_full_disk(monkeypatch, folder: Path, name: str = "*", room: int = 10) -> list[str]:
    """``os.write`` to a file named like ``name`` under ``folder`` finds ``room`` bytes left in
    all: it takes what fits (a short write), then fails with ENOSPC. Returns the files hit."""
    real_write, left, hit = os.write, [room], []
    folder = os.path.realpath(folder)

    def write(fd, data):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = ""
        if not target.startswith(folder + os.sep) or not fnmatch.fnmatch(
            os.path.basename(target), name
        ):
            return real_write(fd, data)
        hit.append(target)
        if left[0] == 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        taken = real_write(fd, bytes(memoryview(data)[: left[0]]))
        left[0] -= taken
        return taken

    monkeypatch.setattr(os, "write", write)
    return hit


def disk_full_line(capsys, name: str) -> str:
    """The one error line of a full disk, naming a file called like ``name`` and the free space."""
    error = capsys.readouterr().err
    assert error.startswith("mobeval: error: ") and error.count("\n") == 1, error
    path = error.removeprefix("mobeval: error: ").split(": ")[0]
    assert fnmatch.fnmatch(os.path.basename(path), name), error
    assert "No space left on device" in error and "bytes written" in error, error
    assert "free on its file system" in error, error
    return error


@pytest.fixture
def scratch(tmp_path, monkeypatch) -> Path:
    """The system's temporary folder for the test (where ScratchFolder makes its folders)."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_auc_spilling_on_a_full_disk_is_exit_2_naming_the_run_not_a_wrong_value(
    scratch, monkeypatch, capsys
):
    monkeypatch.setattr(recs_population, "AUC_TABLE_ROWS", 7)  # spills at once
    hit = nearly_full_disk(monkeypatch, scratch, "run-*.bin", room=100)
    assert main(["recs", *RECS, "--metrics", "auc", "--format", "json", "--quiet"]) == 2
    assert hit
    disk_full_line(capsys, "run-*.bin")
    assert list(scratch.iterdir()) == []  # the scratch folder removed on the way out


def _cut_short(path: Path, keep: int) -> None:
    with open(path, "r+b") as file:
        file.truncate(keep)


def _runs_written_short(monkeypatch, lost: int) -> None:
    """Every spilled run (a file ``run-*.bin``) loses its last ``lost`` bytes once written."""
    write = tallies.write_whole

    def written_then_cut(path, *args, **kwargs):
        write(path, *args, **kwargs)
        if fnmatch.fnmatch(Path(path).name, "run-*.bin"):
            _cut_short(path, os.path.getsize(path) - lost)

    monkeypatch.setattr(tallies, "write_whole", written_then_cut)


def test_a_spilled_run_cut_short_on_disk_is_an_error_not_fewer_pairs(scratch, monkeypatch):
    monkeypatch.setattr(recs_population, "AUC_TABLE_ROWS", 4)
    _runs_written_short(monkeypatch, 24)  # one row lost
    rng = np.random.default_rng(3)
    counts = ScoreCounts()
    counts.add(rng.normal(size=40), pl.Series(rng.random(40) < 0.5))
    assert list(scratch.glob("*/run-*.bin"))
    with pytest.raises(OSError, match="read back .* where .* were written: the file was cut"):
        counts.auc()


def test_auc_whose_run_is_cut_short_is_exit_2_on_the_command_line(scratch, monkeypatch, capsys):
    monkeypatch.setattr(recs_population, "AUC_TABLE_ROWS", 7)
    _runs_written_short(monkeypatch, 24)
    assert main(["recs", *RECS, "--metrics", "auc", "--format", "json", "--quiet"]) == 2
    error = capsys.readouterr().err
    assert "run-0.bin: " in error and "the file was cut short" in error, error


def test_a_hash_bucket_cut_short_on_disk_is_an_error_not_fewer_units(monkeypatch):
    """A bucket file that lost its last record batches (a valid, shorter Arrow stream)."""
    write_buckets = local.write_buckets

    def written_then_cut(batches, key, n_buckets, directory, **options):
        buckets = write_buckets(batches, key, n_buckets, directory, **options)
        path = next(path for path, rows in filter(None, buckets) if rows > 1)
        table = pa.ipc.open_stream(pa.memory_map(str(path))).read_all()
        with pa.ipc.new_stream(str(path), table.schema) as writer:
            writer.write_table(table.slice(0, 1))
        return buckets

    monkeypatch.setattr(local, "write_buckets", written_then_cut)
    truth = pl.read_parquet(TKY / "truth.parquet")
    predictions = pl.read_parquet(TKY / "markov.parquet").reverse()
    with pytest.raises(OSError, match=r"read back 1 rows where \d+ were written") as raised:
        evaluate_nextloc(truth.reverse(), predictions, chunk_rows=7, k=[1])
    assert fnmatch.fnmatch(os.path.basename(raised.value.filename), "bucket-*.arrows")


def test_a_full_disk_under_the_buckets_stops_the_grouping_thread(monkeypatch):
    """A bucket's write failing (ENOSPC) ends the run with the bucket's file named, and the
    threads reading and grouping the next batches ahead of the writing stop with it, though the
    error's traceback (kept here by ``pytest.raises``, in a notebook by ``sys.last_traceback``)
    holds the engine's frames."""
    import threading

    from mobeval.io import chunking

    opened = chunking.pa.ipc.new_stream
    writes = [0]

    class Full:
        def __init__(self, path, schema):
            self.writer = opened(path, schema)

        def write_table(self, table):
            writes[0] += 1
            if writes[0] == 3:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            self.writer.write_table(table)

        def close(self):
            self.writer.close()

    monkeypatch.setattr(chunking.pa.ipc, "new_stream", Full)
    truth = pl.read_parquet(TKY / "truth.parquet")
    predictions = pl.read_parquet(TKY / "markov.parquet").sample(fraction=1.0, shuffle=True, seed=3)
    before = set(threading.enumerate())
    with pytest.raises(OSError, match="No space left on device") as raised:
        evaluate_nextloc(truth, predictions, chunk_rows=50, k=[1])
    assert fnmatch.fnmatch(os.path.basename(raised.value.filename), "bucket-*.arrows")
    ahead = [t for t in set(threading.enumerate()) - before if t.name == "mobeval-read-ahead"]
    assert not ahead


#: (command, the name of the file it writes that finds the disk full)
WRITERS = {
    "a scored part": ("score", "part-*.parquet"),
    "the manifest": ("score", "manifest.json.*.tmp"),
    "a commit journal": ("score", "commit-*.json.tmp"),
    "the stored comparison": ("compare", "part-0.parquet"),
    "a report": ("report", "r.md"),
    "a report's figure": ("report", "*.png"),
}


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_every_writer_on_a_full_disk_is_exit_2_naming_the_file_and_out_unchanged(
    writer, tmp_path, nextloc_sample_out, monkeypatch, capsys
):
    command, name = WRITERS[writer]
    out = tmp_path / "out"
    shutil.copytree(nextloc_sample_out, out)
    argv = {
        "score": [
            "nextloc",
            "--truth",
            str(TKY / "truth.parquet"),
            "--pred",
            str(TKY / "markov.parquet"),
            "--city",
            "tky",
            "--model",
            "markov",
            "--out",
            str(out),
            "--quiet",
        ],
        "compare": ["compare", str(out)],
        "report": ["report", str(out), "--format", "markdown", "--output", str(out / "r.md")],
    }[command]
    before = snapshot(out)
    hit = nearly_full_disk(monkeypatch, tmp_path, name)
    assert main(argv) == 2
    assert hit, f"{writer}: no write to a file named {name}"
    disk_full_line(capsys, name)
    assert snapshot(out) == before


#: Runs the CLI (argv[3:]) under a file size limit of argv[1] bytes (a write past it ends short,
#: then fails with EFBIG: a real short write), with AUC_TABLE_ROWS set to argv[2].
LIMITED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), int(sys.argv[1])))
from mobeval.tasks import recs_population
recs_population.AUC_TABLE_ROWS = int(sys.argv[2])
from mobeval.cli import main
sys.exit(main(sys.argv[3:]))
"""


@pytest.mark.parametrize("scratch_file", ["run-*.bin", "bucket-*.arrows"])
def test_a_scratch_file_past_a_real_file_size_limit_is_exit_2_naming_it(scratch_file, tmp_path):
    """A real short write (RLIMIT_FSIZE): auc's spilled run (numpy wrote it short without a word
    when the closing flush failed) and a hash bucket (Arrow's error named no file). The command
    prints only (no OUT): its only files are the scratch ones."""
    import subprocess
    import sys

    (tmp_path / "tmp").mkdir()
    if scratch_file == "run-*.bin":
        argv = ["recs", *RECS, "--metrics", "auc", "--quiet"]
    else:
        pred = tmp_path / "pred.parquet"
        pl.read_parquet(TKY / "markov.parquet").reverse().write_parquet(pred)
        argv = ["nextloc", "--truth", str(TKY / "truth.parquet"), "--pred", str(pred)]
        argv += ["--k", "1", "--chunk-rows", "1000", "--quiet"]
    done = subprocess.run(
        [sys.executable, "-c", LIMITED, "3000", "7", *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp_path / "tmp")},
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    error = done.stderr
    assert error.startswith("mobeval: error: ") and error.count("\n") == 1, error
    path = error.removeprefix("mobeval: error: ").split(": ")[0]
    assert fnmatch.fnmatch(os.path.basename(path), scratch_file), error
    assert "File too large" in error and "free on its file system" in error, error
    assert list((tmp_path / "tmp").iterdir()) == []


def test_compare_runs_scratch_table_on_a_full_disk_is_exit_2_naming_it(
    tmp_path, scratch, monkeypatch, capsys
):
    """``compare --runs mean`` writes each model's per-unit means to a scratch folder."""
    from mobeval.jobs import load_job, run_job
    from tests.test_runs import write_job

    run_job(load_job(write_job(tmp_path)), log=lambda _: None)
    hit = nearly_full_disk(monkeypatch, scratch, "*.parquet")
    assert main(["compare", str(tmp_path / "out"), "--baseline", "gru"]) == 2
    assert hit
    disk_full_line(capsys, "gru.parquet")
    assert not (tmp_path / "out" / "compare").exists()


SPOOL = """
import resource, sys
import polars as pl
import pyarrow as pa
from mobeval.api import evaluate_nextloc
truth = pl.read_parquet(sys.argv[1])
pred = pl.read_parquet(sys.argv[2]).to_arrow()
reader = pa.RecordBatchReader.from_batches(pred.schema, pred.to_batches(max_chunksize=1000))
resource.setrlimit(resource.RLIMIT_FSIZE, (3000, 3000))
try:
    evaluate_nextloc(truth, reader, k=[1])
except OSError as error:
    print(type(error).__name__, error.filename, error.strerror)
"""


def test_an_arrow_stream_spooled_past_a_file_size_limit_is_an_os_error_naming_the_spool(tmp_path):
    """A one-pass stream is spooled to a scratch Parquet file: its failed write is the disk's
    (an OSError naming the file and the free space), not 'could not read the Arrow stream'."""
    import subprocess
    import sys

    (tmp_path / "tmp").mkdir()
    done = subprocess.run(
        [sys.executable, "-c", SPOOL, str(TKY / "truth.parquet"), str(TKY / "markov.parquet")],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp_path / "tmp")},
    )
    assert done.returncode == 0, done.stderr
    kind, path, reason = done.stdout.split(" ", 2)
    assert kind == "OSError" and fnmatch.fnmatch(path, f"{tmp_path}/tmp/mobeval-stream-*/*")
    assert reason.startswith("File too large") and "free on its file system" in reason
    assert list((tmp_path / "tmp").iterdir()) == []
