"""mobeval on a Spark standalone cluster (issue 33, cluster): a master and a worker started from
PySpark's own classes on 127.0.0.1, a job run on it from the command line (``--master``,
``--spark-conf``) and through spark-submit with a packed environment, the results the local
engine's to the bit; the Spark jobs a run starts described by city, model and phase; no ``.crc``
file in OUT; a stopped session and a driver whose JVM was killed named as such.

The worker runs with a PATH that holds no Python with mobeval (the system's ``python3`` at
most), as a cluster's nodes do: the executors find mobeval only through the settings under test
(``spark.pyspark.python``, or the packed environment). Every process the tests start is ended
by its process group whatever happens. Skipped without PySpark or Java.
"""

import io
import os
import re
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import polars as pl
import pytest

from mobeval.jobs import load_job, run_job
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.spark
pyspark = pytest.importorskip(
    "pyspark", reason="PySpark is not installed: pip install 'mobeval[spark]'"
)
from tests.test_spark import _java_problem, spark  # noqa: E402, F401 (spark: the fixture)

SPARK_HOME = Path(pyspark.__file__).parent
JOB = REPO_ROOT / "jobs" / "nextloc_sample.toml"
#: A PATH without this virtual environment: what a cluster node's daemons run with.
NODE_PATH = os.pathsep.join(
    part for part in os.environ["PATH"].split(os.pathsep) if not Path(part, "mobeval").exists()
)

#: The processes the tests started (each the leader of its process group), ended by the fixture.
STARTED: list[subprocess.Popen] = []


def _node_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "VIRTUAL_ENV")}
    return env | {
        "PATH": NODE_PATH,
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_DAEMON_MEMORY": "384m",
        **extra,
    }


def _stop(process: subprocess.Popen) -> None:
    """End ``process`` and every process in its group (a worker's executors), SIGKILL after 20 s."""
    for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _started(command: list[str], log: Path, pattern: str, timeout: float = 180) -> str:
    """Start ``command`` in a process group of its own, its output to ``log``; the first match
    of ``pattern`` in the log (its group 1), waited for at most ``timeout`` seconds."""
    with log.open("wb") as output:
        process = subprocess.Popen(
            command,
            stdout=output,
            stderr=subprocess.STDOUT,
            env=_node_env(),
            start_new_session=True,
        )
    STARTED.append(process)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(pattern, log.read_text(errors="replace"))
        if found:
            return found.group(1)
        if process.poll() is not None:
            break
        time.sleep(0.5)
    raise AssertionError(f"{command[1]} did not start: {log.read_text(errors='replace')[-2000:]}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """(master URL, the worker's work folder): a standalone master and one worker (2 cores) on
    127.0.0.1, from PySpark's ``bin/spark-class``; both ended after the module's tests."""
    problem = _java_problem()
    if problem:
        pytest.skip(problem)
    root = tmp_path_factory.mktemp("cluster")
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    try:
        url = _started(
            [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1"]
            + ["--port", "0", "--webui-port", "0"],
            root / "master.log",
            r"Starting Spark master at (spark://127\.0\.0\.1:\d+)",
        )
        work = root / "work"
        _started(
            [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1"]
            + ["--port", "0", "--webui-port", "0", "--cores", "2", "--memory", "2g"]
            + ["--work-dir", str(work), url],
            root / "worker.log",
            r"(Successfully registered with master)",
        )
        yield url, work
    finally:
        while STARTED:
            _stop(STARTED.pop())


def _local_out(tmp_path: Path) -> Path:
    out = tmp_path / "local"
    run_job(load_job(JOB, out=out), progress=False, log=lambda _: None)
    return out


def assert_same_bits(out: Path, local: Path) -> None:
    """Every section folder of the local OUT in ``out``, with the same rows to the bit; no
    ``.crc`` file (nor any other Hadoop leftover) anywhere under ``out``."""
    sections = sorted(p.relative_to(local) for p in local.glob("*/city=*/model=*"))
    assert sections and sorted(p.relative_to(out) for p in out.glob("*/city=*/model=*")) == sections
    for relative in sections:
        mine, theirs = pl.read_parquet(out / relative), pl.read_parquet(local / relative)
        assert mine.sort(mine.columns).equals(theirs.sort(theirs.columns)), relative
    leftovers = [p for p in out.rglob("*") if p.name.endswith(".crc") or p.name == "_SUCCESS"]
    assert leftovers == []


def _applications(work: Path) -> set[str]:
    return {p.name for p in work.glob("app-*")} if work.is_dir() else set()


def test_a_job_on_a_standalone_cluster_from_the_command_line(cluster, tmp_path):
    url, work = cluster
    before = _applications(work)
    out = tmp_path / "spark"
    done = subprocess.run(
        [sys.executable, "-m", "mobeval", "run", str(JOB), "--engine", "spark", "--quiet"]
        + ["--master", url, "--out", str(out)]
        + ["--spark-conf", f"spark.pyspark.python={sys.executable}"]
        + [
            "--spark-conf",
            "spark.executor.memory=512m",
            "--spark-conf",
            "spark.driver.memory=512m",
        ],
        capture_output=True,
        text=True,
        env=_node_env(PATH=os.environ["PATH"]),
        timeout=540,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert_same_bits(out, _local_out(tmp_path))
    [application] = _applications(work) - before  # it ran on the cluster, not in local mode
    executor = (work / application / "0" / "stderr").read_text(errors="replace")
    assert "-Xmx512M" in executor.split("\n========================================\n")[0]


def test_spark_submit_with_a_packed_environment(cluster, tmp_path):
    """docs/spark.md's recipe: the executors' Python is ``./env/bin/python`` of an archive
    shipped with ``--archives env.tar.gz#env`` (venv-pack). The environment holds mobeval
    itself, installed from its wheel; its heavy dependencies (numba, polars, pyarrow...) are
    reached through a .pth file naming this environment's site-packages, added to the archive
    after venv-pack (which refuses a path outside the environment), to keep the archive small
    here (the recipe packs them too)."""
    venv_pack = pytest.importorskip("venv_pack", reason="venv-pack is not installed")
    url, work = cluster
    env = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    wheels = tmp_path / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(wheels),
            str(REPO_ROOT),
        ],
        check=True,
        timeout=300,
    )
    [wheel] = wheels.glob("mobeval-*.whl")
    [site] = env.glob("lib/python*/site-packages")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
        timeout=300,
    )
    packed = tmp_path / "packed.tar.gz"
    venv_pack.pack(prefix=str(env), output=str(packed))
    ours = next(p for p in sys.path if p.endswith("site-packages") and Path(p, "polars").is_dir())
    pth = tarfile.TarInfo(f"{site.relative_to(env).as_posix()}/dependencies.pth")
    pth.size = len(f"{ours}\n".encode())
    with tarfile.open(packed) as source, tarfile.open(tmp_path / "env.tar.gz", "w:gz") as archive:
        for member in source:
            archive.addfile(member, source.extractfile(member) if member.isfile() else None)
        archive.addfile(pth, io.BytesIO(f"{ours}\n".encode()))
    driver = tmp_path / "run_eval.py"
    driver.write_text(
        "import sys\nfrom mobeval.cli import main\n\n"
        'sys.exit(main(["run", *sys.argv[1:], "--engine", "spark"]))\n'
    )
    before = _applications(work)
    out = tmp_path / "spark"
    done = subprocess.run(
        [str(SPARK_HOME / "bin" / "spark-submit"), "--master", url]
        + ["--archives", f"{tmp_path / 'env.tar.gz'}#env"]
        + ["--conf", "spark.pyspark.python=./env/bin/python"]
        + ["--conf", f"spark.pyspark.driver.python={sys.executable}"]
        + ["--conf", "spark.executor.memory=512m", "--driver-memory", "512m"]
        + [str(driver), str(JOB), "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
        env=_node_env(),
        timeout=540,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert_same_bits(out, _local_out(tmp_path))
    [application] = _applications(work) - before
    assert (work / application / "0" / "env" / "bin" / "python").exists()  # the archive, unpacked


def _children(pid: int) -> list[tuple[int, str]]:
    """(pid, command line) of the processes whose parent is ``pid``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            command = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError, IndexError):
            continue
        if parent == pid:
            found.append((int(stat.parent.name), command))
    return found


def test_a_driver_whose_jvm_is_killed_is_named_as_such(tmp_path):
    """The driver's JVM killed while the partitions score: one line saying the driver stopped,
    exit 2, no traceback and no result in OUT."""
    problem = _java_problem()
    if problem:
        pytest.skip(problem)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "mobeval", "run", str(JOB), "--engine", "spark", "--quiet"]
    command += ["--master", "local[1]", "--out", str(out)]
    run = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline, killed = time.monotonic() + 300, False
        while not killed and time.monotonic() < deadline and run.poll() is None:
            for java, _ in [c for c in _children(run.pid) if " org.apache.spark" in c[1]]:
                if any("pyspark.daemon" in line for _, line in _children(java)):  # scoring
                    os.kill(java, signal.SIGKILL)
                    killed = True
            time.sleep(0.2)
        assert killed, "the run ended before its partitions scored"
        stderr = run.communicate(timeout=120)[1]
    finally:
        _stop(run)
    assert run.returncode == 2, stderr[-3000:]
    errors = [line for line in stderr.splitlines() if line.startswith("mobeval: error:")]
    assert errors and errors[0].startswith(
        "mobeval: error: the Spark driver stopped during the run"
    ), stderr[-3000:]
    assert "--resume" in errors[0] and "Traceback" not in stderr
    assert not (out / "summary").exists()


STOPPED = """
import sys
from pyspark.sql import SparkSession
from mobeval.api import evaluate_nextloc
from mobeval.errors import ConfigError
spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
spark.stop()
try:
    evaluate_nextloc(sys.argv[1], sys.argv[2], k=[1], spark=spark, progress=False)
except ConfigError as error:
    print(error)
"""


def test_a_stopped_session_is_named_as_such():
    problem = _java_problem()
    if problem:
        pytest.skip(problem)
    sample = REPO_ROOT / "data_samples" / "nextloc" / "tky"
    said = subprocess.run(
        [
            sys.executable,
            "-c",
            STOPPED,
            str(sample / "truth.parquet"),
            str(sample / "markov.parquet"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={k: v for k, v in os.environ.items() if k != "PYSPARK_PYTHON"}
        | {"PYSPARK_PYTHON": sys.executable},
    )
    assert said.stdout.startswith("the Spark session given to mobeval is stopped"), said.stderr[
        -2000:
    ]


def _listed(sequence) -> list:
    """A Scala Seq (the status store's answer) as a Python list."""
    return [sequence.apply(index) for index in range(sequence.size())]


def test_each_spark_job_is_described_by_city_model_and_phase(spark, tmp_path):  # noqa: F811
    """Every Spark job of a run is described ``mobeval: ...`` in the Spark UI (the status store
    it reads), its stages named likewise: a read names its input, a scoring job its city, models
    and phase; no ``.crc`` in OUT."""
    store = spark.sparkContext._jsc.sc().statusStore()
    before = {job.jobId() for job in _listed(store.jobsList(None))}
    out = tmp_path / "spark"
    run_job(load_job(JOB, out=out), spark=spark, log=lambda _: None, progress=False)
    jobs = [job for job in _listed(store.jobsList(None)) if job.jobId() not in before]
    named = [
        (job.description().get() if job.description().isDefined() else None, job.name())
        for job in jobs
    ]
    tracker = spark.sparkContext.statusTracker()
    stages = [
        tracker.getStageInfo(stage)
        for job in jobs
        for stage in tracker.getJobInfo(job.jobId()).stageIds
    ]
    stages = [stage.name for stage in stages if stage is not None]  # None: skipped
    assert named and all(description is not None for description, _ in named), named
    assert all(description == name for description, name in named), named
    descriptions = {description for description, _ in named}
    reads = {d for d in descriptions if d.startswith("mobeval: read ")}
    assert reads and all(d.endswith(".parquet") for d in reads)
    scored = {}  # city -> the models named by its scoring jobs (those of one job joined by +)
    for description in descriptions - reads:
        found = re.fullmatch(r"mobeval: (\w+)/([\w+]+): score, write per_unit", description)
        assert found, description
        scored.setdefault(found.group(1), set()).update(found.group(2).split("+"))
    assert scored == {"tky": {"markov", "popularity"}, "nyc": {"markov", "popularity"}}
    assert stages and all(name.startswith("mobeval: ") for name in stages), stages
    assert_same_bits(out, _local_out(tmp_path))
