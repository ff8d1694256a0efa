"""The ``mobeval`` command's exit (:func:`mobeval.__main__.command`): its exit functions run and
its output whole, then the process ends without the interpreter's teardown of its modules and
objects; where a thread still runs, the interpreter ends it as it would."""

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

SAMPLES = REPO_ROOT / "data_samples"
NEXTLOC = ["nextloc", "--truth", f"{SAMPLES}/nextloc/tky/truth.parquet"]
NEXTLOC += ["--pred", f"{SAMPLES}/nextloc/tky/markov.parquet", "--format", "csv", "--quiet"]
#: The command's entry in a process that says when its exit functions run and when the
#: interpreter tears its objects down; ``THREAD`` starts a thread that outlives the command.
PROBE = """
import atexit, sys, threading, time
class Torn:
    def __del__(self, write=sys.stderr.write):
        write("TORN DOWN\\n")
kept = Torn()
atexit.register(lambda: sys.stderr.write("EXIT FUNCTIONS RAN\\n"))
if sys.argv[1] == "THREAD":
    threading.Thread(target=time.sleep, args=(3,)).start()
if sys.argv[1] == "C":  # C's stdout (buffered: a pipe) written last of all, at exit
    import ctypes
    atexit.register(ctypes.CDLL(None).printf, b"printed by C\\n")
from mobeval.__main__ import command, run
entry = run if sys.argv[1] == "RUN" else command
sys.argv = ["mobeval", *sys.argv[2:]]
raise SystemExit(entry())
"""


def probe(how: str, arguments: list[str]) -> subprocess.CompletedProcess:
    """PROBE's run; C's stdio buffered as Python leaves it by default (not ``-u``)."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return subprocess.run(
        [sys.executable, "-c", PROBE, how, *arguments],
        capture_output=True,
        text=True,
        env=environment,
    )


def test_the_command_ends_without_teardown_its_output_whole():
    done, before = probe("COMMAND", NEXTLOC), probe("RUN", NEXTLOC)
    assert (done.returncode, before.returncode) == (0, 0)
    assert done.stdout == before.stdout and "mrr" in done.stdout
    assert done.stderr == "EXIT FUNCTIONS RAN\n"
    assert before.stderr == "EXIT FUNCTIONS RAN\nTORN DOWN\n"  # the interpreter's own exit


def test_an_error_keeps_its_exit_code_and_message(tmp_path):
    done = probe("COMMAND", ["nextloc", "--truth", str(tmp_path / "none.parquet"), "--pred", "x"])
    assert done.returncode == 2 and done.stdout == ""
    assert "none.parquet" in done.stderr and "TORN DOWN" not in done.stderr


def test_a_thread_still_running_is_left_to_the_interpreters_exit():
    done = probe("THREAD", NEXTLOC)
    assert done.returncode == 0 and "mrr" in done.stdout
    assert done.stderr.endswith("EXIT FUNCTIONS RAN\nTORN DOWN\n")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="C's printf through ctypes")
def test_what_a_library_printed_through_c_is_written():
    done = probe("C", NEXTLOC)
    assert done.returncode == 0 and "mrr" in done.stdout
    assert "printed by C\n" in done.stdout and "TORN DOWN" not in done.stderr
