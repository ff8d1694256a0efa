"""What a command imports (issue 25, start-up): each command below runs in a fresh process and
reports the modules it loaded; the heavy ones that only some commands need must be absent
(scipy's statistics only for compare's distributions, matplotlib only for plots, pyspark only for
the Spark engine, trec_eval without Parquet or the Arrow CSV reader)."""

import json
import subprocess
import sys

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
    "trec_eval": (
        ["trec_eval", str(SAMPLES / "trec/qrels.txt"), str(SAMPLES / "trec/run.txt.gz")],
        ("pyarrow.parquet", "pyarrow.csv"),
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
