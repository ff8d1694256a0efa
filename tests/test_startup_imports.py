"""What a command imports (issue 25, start-up): each command below runs in a fresh process and
reports the modules it loaded; the heavy ones that only some commands need must be absent
(scipy's statistics only for compare's distributions, matplotlib only for plots, pyspark only for
the Spark engine, trec_eval without Polars, pyarrow or the recommendation family, which only its
recs metrics, -R qrels_jg and a score its byte reader leaves need), a scoring command loads none
of compare's tests, the report or the Spark engine, and ``--help`` loads no Polars, Arrow, Numba,
SciPy or NumPy: the parser adds only the arguments of the command it runs. Before its first read
of an input a run has imported no kernel, scorer, engine stream or reader of another kind of
input (``sys.modules`` at that read, :data:`FIRST_READ`)."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

REPORT = (
    "import atexit, json, sys\n"
    "atexit.register(lambda: sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules))))\n"
    "from mobeval.cli import main\n"
    "sys.argv = ['mobeval', *sys.argv[1:]]\n"
    "raise SystemExit(main())\n"
)
NEVER = ("matplotlib", "pyspark", "scipy.stats", "scipy.special", "scipy.optimize", "sklearn")
#: What a scoring command never loads: the faces that read a whole OUT (but compare's table
#: printer, :mod:`mobeval.compare.printing`, which prints its summary), the Spark engine.
NOT_SCORING = ("mobeval.report", "mobeval.engines.spark", "mobeval.compare")
#: What ``--help`` never loads.
HEAVY = ("polars", "pyarrow", "numba", "scipy", "numpy")
SAMPLES = REPO_ROOT / "data_samples"
COMMANDS = {
    "help": (["--help"], ()),
    "nextloc": (
        [
            "nextloc",
            "--truth",
            str(SAMPLES / "nextloc/tky/truth.parquet"),
            "--pred",
            str(SAMPLES / "nextloc/tky/markov.parquet"),
            "--k",
            "1,5",
        ],
        (),
    ),
    "recs": (
        [
            "recs",
            "--ratings",
            str(SAMPLES / "recs/ratings.parquet"),
            "--recs",
            str(SAMPLES / "recs/mf.parquet"),
            "--metrics",
            "ndcg@10",
        ],
        (),
    ),
    "logits": (
        [
            "logits",
            "--logits",
            str(SAMPLES / "logits/gru.npy"),
            "--targets",
            str(SAMPLES / "logits/targets.npy"),
        ],
        (),
    ),
    "trajectory": (
        [
            "trajectory",
            "--reference",
            str(SAMPLES / "humob/reference_test.csv.gz"),
            "--generated",
            str(SAMPLES / "humob/weekly_repeat.csv.gz"),
            "--city",
            "test",
        ],
        (),
    ),
    "trec_eval": (
        ["trec_eval", str(SAMPLES / "trec/qrels.txt"), str(SAMPLES / "trec/run.txt.gz")],
        ("polars", "pyarrow", "mobeval.tasks.recs", "mobeval.metrics.recs"),
    ),
}


def loaded_modules(arguments: list[str], cwd) -> set[str]:
    """The modules a ``mobeval`` command line loaded, in a fresh process (it must succeed)."""
    done = subprocess.run(
        [sys.executable, "-c", REPORT, *arguments], capture_output=True, text=True, cwd=cwd
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return set(json.loads(done.stderr.rsplit("\nMODULES ", 1)[1]))


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_command_imports_only_what_it_uses(command, tmp_path):
    arguments, also_absent = COMMANDS[command]
    modules = loaded_modules(arguments, tmp_path)
    assert "mobeval.cli" in modules  # the report is that of a real run
    present = [name for name in (*NEVER, *also_absent) if name in modules]
    assert not present, f"mobeval {command} imports {present}"


def _loaded(modules: set[str], packages: tuple[str, ...], allowed=()) -> list[str]:
    """The ``modules`` that are one of ``packages`` or inside one, except those ``allowed``."""
    return sorted(
        name
        for name in modules - set(allowed)
        if any(name == package or name.startswith(package + ".") for package in packages)
    )


@pytest.mark.parametrize("command", ["nextloc", "trajectory", "recs", "logits", "trec_eval"])
def test_a_scoring_command_loads_no_face_of_a_whole_out(command, tmp_path):
    modules = loaded_modules(COMMANDS[command][0], tmp_path)
    assert (
        _loaded(modules, NOT_SCORING, allowed={"mobeval.compare", "mobeval.compare.printing"}) == []
    )


#: Each family's own task, kernels and partition job: a scoring command loads no other family's.
OWN = {
    "nextloc": ("mobeval.tasks.nextloc", "mobeval.engines.partition_nextloc"),
    "trajectory": (
        "mobeval.tasks.trajectory",
        "mobeval.kernels.geobleu",
        "mobeval.engines.partition_trajectory",
    ),
    "recs": ("mobeval.tasks.recs", "mobeval.kernels.recs", "mobeval.engines.partition_recs"),
    "logits": (
        "mobeval.tasks.logits",
        "mobeval.kernels.logits",
        "mobeval.engines.partition_logits",
    ),
}


@pytest.mark.parametrize("command", sorted(OWN))
def test_a_scoring_command_loads_no_other_familys_task_or_kernels(command, tmp_path):
    modules = loaded_modules(COMMANDS[command][0], tmp_path)
    assert set(OWN[command]) <= modules  # the report is that of a run of this family
    others = {name for family, names in OWN.items() if family != command for name in names}
    assert sorted(others & modules) == []


#: Each family's definition and metric modules (its options, presets and metric parsers).
DEFINITIONS = {
    family: (f"mobeval.families.{family}", f"mobeval.metrics.{family}")
    for family in ("nextloc", "trajectory", "recs", "logits")
} | {"recs": ("mobeval.families.recs", "mobeval.metrics.recs", "mobeval.metrics.recs_population")}


@pytest.mark.parametrize("command", sorted(DEFINITIONS))
def test_a_scoring_command_loads_no_other_familys_definition_or_metrics(command, tmp_path):
    """``mobeval.families.FAMILIES`` imports a family's module when it is asked for, and
    :mod:`mobeval.api` asks for none at import (its functions' signatures are built when read)."""
    modules = loaded_modules(COMMANDS[command][0], tmp_path)
    assert set(DEFINITIONS[command]) <= modules  # the report is that of a run of this family
    others = {name for family, names in DEFINITIONS.items() if family != command for name in names}
    assert sorted(others & modules) == []


def test_cached_kernels_load_without_the_modules_of_the_numba_functions_they_call(tmp_path):
    """A cached kernel that calls ``np.full`` names :mod:`numba.np.arrayobj`'s environments; its
    load does not import that module (and the string and list modules behind it): the second run
    loads every kernel from the cache (the first may compile them, which imports it)."""
    loaded_modules(COMMANDS["nextloc"][0], tmp_path)
    modules = loaded_modules(COMMANDS["nextloc"][0], tmp_path)
    assert "mobeval.kernels.ranks" in modules
    assert _loaded(modules, ("numba.np.arrayobj", "numba.cpython.charseq")) == []


#: Numba's threading layers: the pool library ``numba.get_num_threads`` launches on its first call.
THREADING_LAYERS = ("numba.np.ufunc.omppool", "numba.np.ufunc.tbbpool", "numba.np.ufunc.workqueue")


@pytest.mark.parametrize("command", ["nextloc", "trajectory", "recs", "logits", "trec_eval"])
def test_a_scoring_command_launches_no_numba_threading_layer(command, tmp_path):
    """Its parallel kernels run on mobeval's own threads (:func:`mobeval.kernels.blocks.run_blocks`,
    counted by :func:`mobeval.kernels.blocks.thread_count`): Numba's pool, its library, threads
    and ``multiprocessing`` (for the launch's lock), is never launched."""
    modules = loaded_modules(COMMANDS[command][0], tmp_path)
    assert "mobeval.kernels.blocks" in modules  # the report is that of a run with its kernels
    assert _loaded(modules, (*THREADING_LAYERS, "multiprocessing")) == []


@pytest.mark.parametrize(
    "command",
    ["", "nextloc", "trajectory", "recs", "logits", "validate", "run", "compare", "report"]
    + ["trec_eval", "warmup"],
)
def test_help_loads_no_polars_arrow_numba_scipy_or_numpy(command, tmp_path):
    modules = loaded_modules([command, "--help"] if command else ["--help"], tmp_path)
    assert _loaded(modules, HEAVY) == []


#: Each family's command given a bad input that its checks of the inputs' columns refuse
#: (the truth given as the predictions, the lists as the ratings...).
BAD_INPUT = {
    "nextloc": [
        "nextloc",
        "--truth",
        "nextloc/tky/truth.parquet",
        "--pred",
        "nextloc/tky/truth.parquet",
    ],
    "recs": ["recs", "--ratings", "recs/mf.parquet", "--recs", "recs/mf.parquet"],
    "logits": ["logits", "--logits", "logits/targets.npy", "--targets", "logits/targets.npy"],
    "trajectory": [
        "trajectory",
        "--reference",
        "recs/ratings.parquet",
        "--generated",
        "humob/weekly_repeat.csv.gz",
    ],
}
#: At the first read of an input's schema, and at exit: whether Numba (and pandas, which
#: pyarrow imports when it builds arrays) had been imported.
ORDER = (
    "import atexit, json, sys\n"
    "from mobeval.io import sources\n"
    "seen = []\n"
    "def schema(self, read=sources.Source.schema):\n"
    "    seen.append(sorted({'numba', 'pandas'} & set(sys.modules)))\n"
    "    return read(self)\n"
    "sources.Source.schema = schema\n"
    "report = lambda: sys.stderr.write('\\nSEEN ' + json.dumps([seen, 'numba' in sys.modules]))\n"
    "atexit.register(report)\n"
    "from mobeval.cli import main\n"
    "sys.argv = ['mobeval', *sys.argv[1:]]\n"
    "raise SystemExit(main())\n"
)


def _first_read(arguments: list[str]) -> tuple[int, str, list, bool]:
    """(exit code, stderr, what was imported at each schema read, numba imported at exit)."""
    done = subprocess.run(
        [sys.executable, "-c", ORDER, *arguments], capture_output=True, text=True, cwd=SAMPLES
    )
    seen, numba = json.loads(done.stderr.rsplit("\nSEEN ", 1)[1])
    return done.returncode, done.stderr, seen, numba


@pytest.mark.parametrize("family", sorted(BAD_INPUT))
def test_a_bad_input_is_refused_before_numba_is_imported(family):
    """The inputs are opened and their columns checked before the kernels load, so a bad input
    is named without Numba's import (nor pandas', which pyarrow's ``Schema.empty_table`` made)."""
    code, stderr, seen, numba = _first_read(BAD_INPUT[family])
    assert code == 2, stderr
    assert "mobeval: error:" in stderr
    assert all(imported == [] for imported in seen)
    assert not numba


#: A run of each family whose inputs are sources (logits reads its arrays' shapes instead): the
#: recs population's catalogue is read before the kernels too.
RUNS = {
    "nextloc": COMMANDS["nextloc"][0],
    "trajectory": COMMANDS["trajectory"][0],
    "recs": COMMANDS["recs"][0],
    "recs population": [
        *COMMANDS["recs"][0][:-1],
        "ndcg@10,gini@5",
        "--catalogue",
        str(SAMPLES / "recs/catalogue.parquet"),
    ],
}


@pytest.mark.parametrize("run", sorted(RUNS))
def test_a_run_reads_its_inputs_schemas_before_numba_is_imported(run):
    """Every schema read (the first read of each input) before Numba is imported, and the run
    then loads it (the sys.modules of a real run)."""
    code, stderr, seen, numba = _first_read(RUNS[run])
    assert code == 0, stderr
    assert len(seen) >= 2 and all("numba" not in imported for imported in seen)
    assert numba


#: ``sys.modules`` at a command's first read of one of its input files (the files named on its
#: command line): Python's own opens raise the audit event ``open`` (a ``.npy`` file, a text
#: file's first line); Arrow's C++ opens raise none, so the two functions through which mobeval
#: has Arrow open a file are wrapped once their modules are loaded. A read this misses could only
#: come earlier than the one it records, so the modules it reports are never fewer than those
#: loaded at the true first read.
FIRST_READ = (
    "import atexit, importlib.abc, importlib.util, json, os, sys\n"
    "inputs = {os.path.realpath(a) for a in sys.argv[1:] if os.path.isfile(a)}\n"
    "first = []\n"
    "def read(path):\n"
    "    if not first and isinstance(path, str | bytes | os.PathLike):\n"
    "        if os.path.realpath(os.fsdecode(path)) in inputs:\n"
    "            first.append(sorted(sys.modules))\n"
    "sys.addaudithook(lambda event, args: event == 'open' and read(args[0]))\n"
    "def opening(function, position):\n"
    "    def wrapper(*args, **kwargs):\n"
    "        read(args[position])\n"
    "        return function(*args, **kwargs)\n"
    "    return wrapper\n"
    "def parquet(module):\n"
    "    module.ParquetFile.__init__ = opening(module.ParquetFile.__init__, 1)\n"
    "def csv(module):\n"
    "    module.open_csv = opening(module.open_csv, 0)\n"
    "wrap = {'pyarrow.parquet.core': parquet, 'pyarrow.csv': csv}\n"
    "class Wrapping(importlib.abc.MetaPathFinder):\n"
    "    def find_spec(self, name, path, target=None):\n"
    "        if name not in wrap:\n"
    "            return None\n"
    "        sys.meta_path.remove(self)\n"
    "        try:\n"
    "            spec = importlib.util.find_spec(name)\n"
    "        finally:\n"
    "            sys.meta_path.insert(0, self)\n"
    "        run = spec.loader.exec_module\n"
    "        def exec_module(module):\n"
    "            run(module)\n"
    "            wrap[name](module)\n"
    "        spec.loader.exec_module = exec_module\n"
    "        return spec\n"
    "sys.meta_path.insert(0, Wrapping())\n"
    "atexit.register(lambda: sys.stderr.write('\\nFIRST ' + json.dumps(first[:1])))\n"
    "from mobeval.cli import main\n"
    "sys.argv = ['mobeval', *sys.argv[1:]]\n"
    "raise SystemExit(main())\n"
)
#: What no command imports before its first read: Numba and what it brings, pandas, the kernels
#: (but ``kernels/codes.py``, plain data), the engine's streaming and its partition jobs, the
#: scorers (``tasks/<family>.py``), the faces of a whole OUT, the job files and the validator.
NOT_BEFORE_FIRST_READ = (
    "numba",
    "llvmlite",
    "scipy",
    "pandas",
    "mobeval.engines.local",
    "mobeval.engines.partition",
    *(
        f"mobeval.engines.partition_{family}"
        for family in ("nextloc", "trajectory", "recs", "logits")
    ),
    "mobeval.io.chunking",
    "mobeval.tasks.nextloc",
    "mobeval.tasks.trajectory",
    "mobeval.tasks.recs",
    "mobeval.tasks.recs_population",
    "mobeval.tasks.logits",
    "mobeval.tasks.summary",
    "mobeval.compare",
    "mobeval.report",
    "mobeval.trec_eval",
    "mobeval.jobs",
    "mobeval.validate",
    "mobeval.warmup",
)
#: The kernels' codes and limits, plain data that the options' checks read (no Numba).
KERNEL_CODES = "mobeval.kernels.codes"
#: The readers of other kinds of input (TREC files, Python objects, logits arrays): imported
#: before the first read only by the family whose inputs they read.
READERS = {
    "mobeval.io.trec": "trajectory",  # a text file that is not Parquet: sniffed for TREC lines
    "mobeval.io.objects": "logits",
    "mobeval.io.logits": "logits",
}


def _reported(script: str, arguments: list[str], cwd, marker: str):
    """What ``script`` (a command line's run, watched) wrote to stderr after ``marker``, read as
    JSON; the run must succeed."""
    done = subprocess.run(
        [sys.executable, "-c", script, *arguments], capture_output=True, text=True, cwd=cwd
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stderr.rsplit(f"\n{marker} ", 1)[1])


@pytest.mark.parametrize("family", ["nextloc", "trajectory", "recs", "logits"])
def test_before_its_first_read_a_run_imports_only_what_that_read_needs(family, tmp_path):
    """The modules loaded when a run first opens an input: no kernel, no Numba, no scorer, no
    reader of another kind of input (the libraries that read: Polars, pyarrow, NumPy)."""
    first = _reported(FIRST_READ, COMMANDS[family][0], tmp_path, "FIRST")
    assert first, "no read of an input seen"
    modules = set(first[0])
    assert "mobeval.families" in modules  # the report is that of a real run
    kernels = _loaded(modules, ("mobeval.kernels",), allowed={"mobeval.kernels", KERNEL_CODES})
    assert kernels == []
    assert _loaded(modules, NOT_BEFORE_FIRST_READ) == []
    readers = {name for name, reader_of in READERS.items() if reader_of != family}
    assert sorted(readers & modules) == []


#: The threads started before Numba's import begins, and each read of a Parquet file: its file,
#: columns and the thread that asked for it.
AHEAD = (
    "import atexit, importlib.abc, json, os, sys, threading\n"
    "from mobeval.io import sources\n"
    "started, before_numba, reads = [], [], []\n"
    "start = threading.Thread.start\n"
    "def tracked(self):\n"
    "    started.append(self.name)\n"
    "    return start(self)\n"
    "threading.Thread.start = tracked\n"
    "class Numba(importlib.abc.MetaPathFinder):\n"
    "    def find_spec(self, name, path, target=None):\n"
    "        if name == 'numba' and not before_numba:\n"
    "            before_numba.append(list(started))\n"
    "sys.meta_path.insert(0, Numba())\n"
    "def parquet(self, source, path, columns, rows, read=sources.Source._parquet_batches):\n"
    "    reads.append([os.path.basename(path), columns, threading.current_thread().name])\n"
    "    return read(self, source, path, columns, rows)\n"
    "sources.Source._parquet_batches = parquet\n"
    "report = lambda: sys.stderr.write('\\nAHEAD ' + json.dumps([before_numba, reads]))\n"
    "atexit.register(report)\n"
    "from mobeval.cli import main\n"
    "sys.argv = ['mobeval', *sys.argv[1:]]\n"
    "raise SystemExit(main())\n"
)


@pytest.mark.parametrize(
    ("family", "scored"),
    [("nextloc", ["sample_id", "location", "score"]), ("recs", ["user_id", "item_id"])],
)
def test_a_run_decodes_its_first_batches_while_numba_loads(family, scored):
    """The first batches a sorted stream reads (the predictions' scored columns, the truth's) are
    asked for by a thread started before Numba's import begins: reading starts at once."""
    before_numba, reads = _reported(AHEAD, COMMANDS[family][0], SAMPLES, "AHEAD")
    assert before_numba and "mobeval-prefetch" in before_numba[0]
    predictions = Path(COMMANDS[family][0][4]).name
    assert [predictions, scored, "mobeval-prefetch"] in reads
    assert all(thread == "mobeval-prefetch" for name, _, thread in reads if name == predictions)


def test_a_trajectory_run_decodes_its_first_batches_while_numba_loads(tmp_path):
    """A trajectory run starts its sorted stream's reads (the reference's uid column, the
    generated rows, the reference's rows) on the thread started before Numba's import, and the
    engine takes each of them: no read of its own."""
    import polars as pl

    rows = ["uid", "d", "t", "x", "y"]
    for name, header in (("reference_test", True), ("weekly_repeat", False)):
        read = {"has_header": header, "new_columns": None if header else rows}
        pl.read_csv(SAMPLES / f"humob/{name}.csv.gz", **read).write_parquet(
            tmp_path / f"{name}.parquet"
        )
    arguments = ["trajectory", "--reference", "reference_test.parquet"]
    arguments += ["--generated", "weekly_repeat.parquet", "--city", "test"]
    before_numba, reads = _reported(AHEAD, arguments, tmp_path, "AHEAD")
    assert before_numba and "mobeval-prefetch" in before_numba[0]
    assert reads == [
        ["reference_test.parquet", ["uid"], "mobeval-prefetch"],
        ["weekly_repeat.parquet", rows, "mobeval-prefetch"],
        ["reference_test.parquet", rows, "mobeval-prefetch"],
    ]


#: What a recs run of ranking metrics (no population metric, no trec_eval measure name) never
#: loads: the population metrics' counts and kernels, the training tables and propensities, and
#: trec_eval's measures with the TREC readers behind them.
NOT_FOR_RANKING = (
    "mobeval.tasks.recs_population",
    "mobeval.tasks.recs_beyond",
    "mobeval.tasks.recs_propensity",
    "mobeval.tasks.item_tables",
    "mobeval.tasks.propensity",
    "mobeval.tasks.trec",
    "mobeval.io.trec",
    "mobeval.io.trec_codes",
    *(
        f"mobeval.kernels.{name}"
        for name in ("trec", "diversity", "similarity", "cooccurrence", "resampling")
    ),
    *(f"mobeval.kernels.{name}" for name in ("auc", "catalogue", "correlation")),
)


@pytest.mark.parametrize("convention", ["trec_eval", "ranx", "clayrs", "relison"])
def test_a_recs_run_of_ranking_metrics_loads_no_population_or_trec_eval_measure(
    convention, tmp_path
):
    modules = loaded_modules([*COMMANDS["recs"][0], "--convention", convention], tmp_path)
    assert "mobeval.kernels.recs" in modules  # the report is that of a recs run
    assert sorted(set(NOT_FOR_RANKING) & modules) == []


#: The command line's entry (:func:`mobeval.__main__.run`, its process tuned), its modules and
#: Numba's configuration reported at exit.
ENTRY = (
    "import atexit, json, sys\n"
    "def report():\n"
    "    threads = sys.modules['numba'].config.NUMBA_NUM_THREADS\n"
    "    sys.stderr.write('\\nENTRY ' + json.dumps([sorted(sys.modules), threads]))\n"
    "atexit.register(report)\n"
    "from mobeval.__main__ import run\n"
    "sys.argv = ['mobeval', *sys.argv[1:]]\n"
    "raise SystemExit(run())\n"
)


@pytest.mark.parametrize("family", ["nextloc", "recs", "trajectory"])
def test_a_run_imports_numba_without_scipy_or_yaml_and_numba_reads_its_config_file(
    family, tmp_path
):
    """Numba imports SciPy only to check its version and PyYAML only to read a
    ``.numba_config.yaml``: a configuration file is read as before (this first run also fills
    the kernels' cache: a compilation imports SciPy), and without one a run loads neither."""
    if importlib.util.find_spec("yaml") is not None:
        (tmp_path / ".numba_config.yaml").write_text("num_threads: 1\n")
        modules, threads = _reported(ENTRY, COMMANDS[family][0], tmp_path, "ENTRY")
        assert threads == 1 and "yaml" in modules
        (tmp_path / ".numba_config.yaml").unlink()
    else:
        _reported(ENTRY, COMMANDS[family][0], tmp_path, "ENTRY")
    modules, threads = _reported(ENTRY, COMMANDS[family][0], tmp_path, "ENTRY")
    assert "mobeval.cli" in modules and "numba" in modules  # a real run, its kernels called
    assert threads != 1 or os.cpu_count() == 1
    assert _loaded(set(modules), ("scipy", "yaml")) == []


def test_a_run_whose_lists_polars_reads_imports_no_pandas(tmp_path):
    """A file read in batches that start on row groups is decoded by Polars
    (:mod:`mobeval.io.parquet_batches`); the frames' expected types are those of an empty batch,
    which pyarrow builds with ``pa.array`` only after importing pandas (0.5 s on the reader
    thread, under the GIL the main thread's imports need)."""
    pytest.importorskip("pandas")
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    users, length = 2_500, 100
    recs = pa.table(
        {
            "user_id": np.repeat(np.arange(users), length),
            "item_id": np.tile(np.arange(length), users),
            "score": np.tile(np.linspace(1.0, 0.0, length), users),
        }
    )
    pq.write_table(recs, tmp_path / "recs.parquet", row_group_size=users * length // 2)
    ratings = pa.table(
        {
            "user_id": np.arange(users),
            "item_id": np.zeros(users, np.int64),
            "rating": np.ones(users),
        }
    )
    pq.write_table(ratings, tmp_path / "ratings.parquet")
    arguments = ["recs", "--ratings", "ratings.parquet", "--recs", "recs.parquet"]
    modules = loaded_modules([*arguments, "--metrics", "ndcg@10"], tmp_path)
    assert "mobeval.io.parquet_batches" in modules and "pandas" not in modules
