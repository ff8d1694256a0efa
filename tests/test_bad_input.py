"""Bad input, every subcommand: the documented exit code (2; ``validate``: 1 for an invalid
submission), exactly one line ``mobeval: error: ...`` on stderr naming the file, the column and
the first offending key (or the job entry), no traceback, no warning, nothing on stdout, nothing
written outside OUT and nothing new inside it. Then a fuzz loop over mutated inputs of each
subcommand (MOBEVAL_FUZZ_CASES=N per subcommand for a longer run), and a few cases in a real
subprocess for the real exit code.

Exit codes (README "Bad input"): 0 done / valid, 1 invalid submission (validate), 2 bad input or
usage, 3 a bug in mobeval (never expected: the fuzz loops assert it never happens).
"""

from __future__ import annotations

import gzip
import os
import random
import stat
import subprocess
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mobeval import cli
from mobeval.cli import main
from mobeval.job_values import VALUE_KINDS
from mobeval.jobs import OPTION_KINDS, TASK_TYPES

REPO_ROOT = Path(__file__).resolve().parents[1]
FUZZ_CASES = int(os.environ.get("MOBEVAL_FUZZ_CASES", "25"))

# --------------------------------------------------------------------------- small valid inputs

TRUTH = pl.DataFrame({"sample_id": [1, 2, 3], "location": [10, 20, 30]})
PRED = pl.DataFrame(
    {
        "sample_id": [1, 1, 2, 2, 3, 3],
        "location": [10, 11, 20, 21, 31, 30],
        "score": [0.9, 0.1, 0.8, 0.2, 0.7, 0.3],
    }
)
STEPS = [(60, 0), (60, 1), (61, 5), (61, 6)]
REFERENCE = pl.DataFrame(
    [(u, d, t, 10 + t, 20 + u) for u in (1, 2) for d, t in STEPS],
    schema=["uid", "d", "t", "x", "y"],
    orient="row",
)
GENERATED = REFERENCE.with_columns(pl.col("x") + 1)
RATINGS = pl.DataFrame(
    {
        "user_id": [1, 1, 1, 2, 2, 3, 3],
        "item_id": [10, 11, 12, 10, 13, 11, 14],
        "rating": [5.0, 3.0, 4.0, 2.0, 5.0, 4.0, 1.0],
    }
)
RECS = pl.DataFrame(
    {
        "user_id": [1, 1, 2, 2, 3, 3],
        "item_id": [10, 12, 13, 11, 14, 11],
        "score": [0.9, 0.5, 0.8, 0.4, 0.7, 0.3],
        "rank": [1, 2, 1, 2, 1, 2],
    }
)
LOGITS = np.array(
    [[2.0, 1.0, 0.0, -1.0], [0.0, 3.0, 1.0, 0.5], [1.0, 1.0, 2.0, 0.0], [0.1, 0.2, 0.3, 0.4]],
    dtype=np.float32,
)
TARGETS = np.array([0, 2, 2, 3], dtype=np.int64)
VALIDATE_UIDS = range(50, 61)  # task "test": uids 50..60, days 60..74
VALIDATE_STEPS = [(59, 5), (60, 3), (61, 0)]


def dataset_text() -> str:
    rows = [f"{u},{d},{t},999,999" for u in VALIDATE_UIDS for d, t in VALIDATE_STEPS]
    return "\n".join(["uid,d,t,x,y", *rows]) + "\n"


def submission_text(extra: str = "") -> str:
    rows = [f"{u},{d},{t},10,20" for u in VALIDATE_UIDS for d, t in VALIDATE_STEPS if d >= 60]
    return "\n".join(["uid,d,t,x,y", *rows]) + "\n" + extra


def job_text(d: Path, **values: str) -> str:
    """A nextloc job over d/truth.parquet and d/pred.parquet; ``values`` are TOML lines of the
    task (name = raw TOML value)."""
    options = "\n".join(f"{name} = {value}" for name, value in values.items())
    return f"""out = "{d / "jobout"}"

[[tasks]]
type = "nextloc"
city = "c"
truth = "truth.parquet"
k = [1, 2]
{options}
[tasks.models]
m = "pred.parquet"
"""


# --------------------------------------------------------------------------- writing inputs


def write(path: Path, data) -> str:
    """``data`` (a frame, an array, bytes or text) at ``path`` in the format its name says."""
    if isinstance(data, pl.DataFrame):
        if path.name.endswith(".parquet"):
            data.write_parquet(path)
        elif path.name.endswith(".gz"):
            path.write_bytes(gzip.compress(data.write_csv().encode()))
        else:
            data.write_csv(path)
    elif isinstance(data, np.ndarray):
        with open(path, "wb") as stream:
            np.save(stream, data, allow_pickle=True)
    elif isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data)
    return str(path)


def parquet_bytes(frame: pl.DataFrame, tmp: Path) -> bytes:
    frame.write_parquet(tmp / "whole.parquet")
    data = (tmp / "whole.parquet").read_bytes()
    (tmp / "whole.parquet").unlink()
    return data


def npy_bytes(array: np.ndarray, tmp: Path) -> bytes:
    write(tmp / "whole.npy", array)
    data = (tmp / "whole.npy").read_bytes()
    (tmp / "whole.npy").unlink()
    return data


def two_targets(path: Path) -> str:
    """LOGITS as a Parquet list column beside two columns named ``target``."""
    columns = [pa.array(LOGITS.tolist()), pa.array(TARGETS), pa.array(TARGETS[::-1])]
    pq.write_table(pa.table(columns, names=["logits", "target", "target"]), path)
    return str(path)


def folder(path: Path) -> Path:
    path.mkdir()
    return path


def parts(folder: Path, frame: pl.DataFrame) -> Path:
    """``frame`` as a folder of two Parquet parts: its first half, then the other half with its
    first column written as strings."""
    folder.mkdir()
    half = frame.height // 2
    frame.head(half).write_parquet(folder / "part0.parquet")
    rest = frame.tail(frame.height - half)
    rest.with_columns(pl.col(frame.columns[0]).cast(pl.String)).write_parquet(
        folder / "part1.parquet"
    )
    return folder


def twice_in_a_later_part(folder: Path, frame: pl.DataFrame, suffix: str) -> str:
    """``frame`` as a folder of two parts (``.parquet`` or ``.csv``): its first half, then the
    other half with a second column named as its second (the first part's header is fine)."""
    import pyarrow.csv as pacsv

    folder.mkdir()
    half = frame.height // 2
    write(folder / f"part0{suffix}", frame.head(half))
    rest = frame.tail(frame.height - half).to_arrow()
    rest = rest.append_column(frame.columns[1], rest.column(1))
    (pq.write_table if suffix == ".parquet" else pacsv.write_csv)(rest, folder / f"part1{suffix}")
    return str(folder)


def at(row: int, column: str, value, dtype=None) -> pl.Expr:
    """``column`` with ``value`` on ``row``."""
    new = pl.lit(value, dtype=dtype) if dtype is not None else pl.lit(value)
    return pl.when(pl.int_range(pl.len()) == row).then(new).otherwise(pl.col(column)).alias(column)


def nextloc(d: Path, truth=TRUTH, pred=PRED, truth_name="truth.parquet", pred_name="pred.parquet"):
    return [
        "nextloc",
        "--truth",
        write(d / truth_name, truth),
        "--pred",
        write(d / pred_name, pred),
        "--k",
        "1,2",
    ]


def trajectory(
    d: Path, ref=REFERENCE, gen=GENERATED, ref_name="ref.parquet", gen_name="gen.parquet"
):
    return [
        "trajectory",
        "--reference",
        write(d / ref_name, ref),
        "--generated",
        write(d / gen_name, gen),
    ]


def recs(
    d: Path, ratings=RATINGS, lists=RECS, ratings_name="ratings.parquet", recs_name="recs.parquet"
):
    return [
        "recs",
        "--ratings",
        write(d / ratings_name, ratings),
        "--recs",
        write(d / recs_name, lists),
        "--metrics",
        "precision,ndcg",
        "--cutoffs",
        "2",
    ]


def logits(d: Path, x=LOGITS, y=TARGETS, x_name="logits.npy", y_name="targets.npy"):
    return ["logits", "--logits", write(d / x_name, x), "--targets", write(d / y_name, y)]


def validate(d: Path, dataset=None, submission=None, ds_name="ds.csv", sub_name="sub.csv"):
    return [
        "validate",
        "--task",
        "test",
        "--dataset",
        write(d / ds_name, dataset_text() if dataset is None else dataset),
        "--submission",
        write(d / sub_name, submission_text() if submission is None else submission),
    ]


def run_job(d: Path, text: str | bytes | None = None, name="job.toml", **values: str):
    write(d / "truth.parquet", TRUTH)
    write(d / "pred.parquet", PRED)
    return ["run", write(d / name, job_text(d, **values) if text is None else text)]


# --------------------------------------------------------------------------- running the CLI


@dataclass
class Outcome:
    code: int | None
    out: str
    err: str
    warnings: list = field(default_factory=list)

    @property
    def lines(self) -> list[str]:
        return self.err.splitlines()


def snapshot(root: Path) -> dict[str, tuple | None]:
    """Every file under ``root`` with its size and modification time, and every folder (a
    folder's own time changes when the run takes and drops its lock file: not compared)."""
    tree = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        key = str(path.relative_to(root))
        tree[key] = None if stat.S_ISDIR(info.st_mode) else (info.st_size, info.st_mtime_ns)
    return tree


def call(argv: list[str], capsys) -> Outcome:
    """main(argv) in this process; SystemExit (argparse) is an exit code like any other."""
    capsys.readouterr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            code = main(argv)
        except SystemExit as stop:
            code = stop.code
    out, err = capsys.readouterr()
    return Outcome(code, out, err, [str(w.message) for w in caught])


EVALUATE = ("nextloc", "trajectory", "recs", "logits")


def with_out(argv: list[str], out: Path) -> list[str]:
    if argv and argv[0] in EVALUATE and "--out" not in argv:
        return [*argv, "--out", str(out), "--quiet"]
    if argv and argv[0] == "run" and "--out" not in argv:
        return [*argv, "--quiet"]
    return argv


def assert_one_error_line(outcome: Outcome, fragments, code: int = 2) -> None:
    assert outcome.code == code, outcome
    assert "Traceback" not in outcome.err, outcome.err
    assert len(outcome.lines) == 1, outcome.err
    assert outcome.lines[0].startswith("mobeval: error: "), outcome.err
    for fragment in fragments:
        assert fragment in outcome.lines[0], (fragment, outcome.lines[0])
    assert outcome.out == "", outcome.out
    assert outcome.warnings == [], outcome.warnings


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Case:
    id: str
    setup: Callable[[Path], list[str]]
    fragments: tuple[str, ...]
    code: int = 2


def _truncated_gz(frame: pl.DataFrame) -> bytes:
    data = gzip.compress(frame.write_csv().encode())
    return data[: len(data) // 2]


NON_UTF8_TRUTH = b"sample_id,location\n1,10\n2,\xff\xfe\n3,30\n"
NULL_KEY_PRED = PRED.with_columns(at(2, "sample_id", None, pl.Int64))
HUGE = 2**63 + 5

CASES = [
    # ------------------------------------------------------------------ nextloc
    Case(
        "nextloc/missing file",
        lambda d: [
            "nextloc",
            "--truth",
            str(d / "nope.parquet"),
            "--pred",
            write(d / "pred.parquet", PRED),
        ],
        ("nope.parquet", "no such file"),
    ),
    Case(
        "nextloc/empty file",
        lambda d: nextloc(d, truth=b"", truth_name="truth.csv"),
        ("truth.csv", "not a readable CSV"),
    ),
    Case("nextloc/empty parquet file", lambda d: nextloc(d, pred=b""), ("pred.parquet", "Parquet")),
    Case(
        "nextloc/header-only truth",
        lambda d: nextloc(d, truth=TRUTH.clear(), truth_name="truth.csv"),
        ("truth.csv", "the truth is empty", "no rows"),
    ),
    Case(
        "nextloc/header-only predictions",
        lambda d: nextloc(d, pred=PRED.clear(), pred_name="pred.csv"),
        ("pred.csv", "the predictions are empty", "no rows"),
    ),
    Case(
        "nextloc/empty truth",
        lambda d: nextloc(d, truth=TRUTH.clear()),
        ("truth.parquet", "the truth is empty"),
    ),
    Case(
        "nextloc/string location",
        lambda d: nextloc(d, pred=PRED.with_columns(pl.col("location").cast(pl.String))),
        ("pred.parquet", "column 'location'", "expected integer"),
    ),
    Case(
        "nextloc/string key on one side",
        lambda d: nextloc(d, pred=PRED.with_columns(pl.col("sample_id").cast(pl.String))),
        ("pred.parquet", "column 'sample_id'", "differs"),
    ),
    Case(
        "nextloc/null key in the truth",
        lambda d: nextloc(d, truth=TRUTH.with_columns(at(1, "sample_id", None, pl.Int64))),
        ("truth.parquet", "column 'sample_id'", "null key", "row 1"),
    ),
    Case(
        "nextloc/null key in the predictions",
        lambda d: nextloc(d, pred=NULL_KEY_PRED),
        ("pred.parquet", "column 'sample_id'", "null key", "row 2"),
    ),
    Case(
        "nextloc/NaN score",
        lambda d: nextloc(d, pred=PRED.with_columns(at(3, "score", float("nan")))),
        ("pred.parquet", "column 'score'", "sample_id=2"),
    ),
    Case(
        "nextloc/null truth location",
        lambda d: nextloc(d, truth=TRUTH.with_columns(at(1, "location", None, pl.Int64))),
        ("truth.parquet", "column 'location'", "sample_id=2"),
    ),
    Case(
        "nextloc/non-UTF-8 CSV",
        lambda d: nextloc(d, truth=NON_UTF8_TRUTH, truth_name="truth.csv"),
        ("truth.csv", "column 'location'", "not UTF-8"),
    ),
    Case(
        "nextloc/semicolon-separated CSV",
        lambda d: nextloc(d, truth=b"sample_id;location\n1;10\n", truth_name="truth.csv"),
        ("truth.csv", "column 'sample_id'", "separated by semicolons; CSV files need commas"),
    ),
    Case(
        "recs/tab-separated CSV",
        lambda d: recs(d, ratings=b"user_id\titem_id\trating\n1\t10\t5\n", ratings_name="r.csv"),
        ("r.csv", "column 'user_id'", "separated by tabs; CSV files need commas"),
    ),
    Case(
        "nextloc/non-UTF-8 column name",
        lambda d: nextloc(d, truth=b"sample_id,loc\xb9tion\n1,10\n", truth_name="truth.csv"),
        ("truth.csv", "unreadable column names"),
    ),
    Case(
        "nextloc/truncated gzip",
        lambda d: nextloc(d, truth=_truncated_gz(TRUTH), truth_name="truth.csv.gz"),
        ("truth.csv.gz", "not a readable CSV"),
    ),
    Case(
        "nextloc/truncated parquet",
        lambda d: nextloc(d, pred=parquet_bytes(PRED, d)[:200]),
        ("pred.parquet", "Parquet"),
    ),
    Case(
        "nextloc/key beyond int64",
        lambda d: nextloc(
            d,
            truth=TRUTH.with_columns(pl.col("sample_id").cast(pl.UInt64) + 2**63),
            pred=PRED.with_columns(pl.col("sample_id").cast(pl.UInt64) + 2**63),
        ),
        ("column 'sample_id'", "cannot convert"),
    ),
    Case(
        "nextloc/--metrics ''",
        lambda d: [*nextloc(d), "--metrics", ""],
        ("give at least one metric",),
    ),
    Case("nextloc/--k 0", lambda d: [*nextloc(d), "--k", "0"], ("--k: must be",)),
    Case("nextloc/--k 2^70", lambda d: [*nextloc(d), "--k", str(2**70)], ("at most",)),
    Case("nextloc/--k x", lambda d: [*nextloc(d), "--k", "x"], ("argument --k",)),
    Case("nextloc/--chunk-rows 0", lambda d: [*nextloc(d), "--chunk-rows", "0"], ("--chunk-rows",)),
    Case(
        "nextloc/--chunk-rows -5", lambda d: [*nextloc(d), "--chunk-rows", "-5"], ("--chunk-rows",)
    ),
    Case(
        "nextloc/unknown metric",
        lambda d: [*nextloc(d), "--metrics", "ndcg@k,bleu"],
        ("unknown metric 'bleu'",),
    ),
    Case(
        "nextloc/--out names a file",
        lambda d: [*nextloc(d), "--out", write(d / "afile", "x"), "--quiet"],
        ("afile", "cannot use this output folder"),
    ),
    Case(
        "nextloc/--out under a file",
        lambda d: [*nextloc(d), "--out", write(d / "afile", "x") + "/sub", "--quiet"],
        ("afile/sub", "cannot use this output folder"),
    ),
    Case(
        "nextloc/--model with a slash",
        lambda d: [*nextloc(d), "--model", "x/../../victim"],
        ("--model", "not a plain name"),
    ),
    # ------------------------------------------------------------------ trajectory
    Case(
        "trajectory/coordinates beyond the grid tables",
        lambda d: [
            *trajectory(d, gen=GENERATED.with_columns(at(2, "x", 2**62))),
            "--score-out-of-grid",
        ],
        ("gen.parquet", "column 'x'", "beyond", "(1, 61, 5)"),
    ),
    Case(
        "trajectory/coordinate 1e300",
        lambda d: trajectory(
            d,
            gen=GENERATED.with_columns(pl.col("x").cast(pl.Float64)).with_columns(
                at(1, "x", 1e300)
            ),
        ),
        ("gen.parquet", "column 'x'", "(1, 60, 1)"),
    ),
    Case(
        "trajectory/string x",
        lambda d: trajectory(d, gen=GENERATED.with_columns(pl.col("x").cast(pl.String))),
        ("gen.parquet", "column 'x'", "must hold integers"),
    ),
    Case(
        "trajectory/string uid on one side",
        lambda d: trajectory(d, gen=GENERATED.with_columns(pl.col("uid").cast(pl.String))),
        ("gen.parquet", "column 'uid'", "uid types differ"),
    ),
    Case(
        "trajectory/null uid",
        lambda d: trajectory(d, gen=GENERATED.with_columns(at(5, "uid", None, pl.Int64))),
        ("gen.parquet", "column 'uid'", "null key", "row 5"),
    ),
    Case(
        "trajectory/null x",
        lambda d: trajectory(d, ref=REFERENCE.with_columns(at(6, "x", None, pl.Int64))),
        ("ref.parquet", "column 'x'", "null", "(2, 61, 5)"),
    ),
    Case(
        "trajectory/NaN y",
        lambda d: trajectory(
            d,
            gen=GENERATED.with_columns(pl.col("y").cast(pl.Float64)).with_columns(
                at(0, "y", float("nan"))
            ),
        ),
        ("gen.parquet", "column 'y'", "(1, 60, 0)"),
    ),
    Case(
        "trajectory/header-only CSV",
        lambda d: trajectory(d, gen=GENERATED.clear(), gen_name="gen.csv"),
        ("gen.csv", "the generated trajectories are empty"),
    ),
    Case(
        "trajectory/empty reference",
        lambda d: trajectory(d, ref=REFERENCE.clear()),
        ("ref.parquet", "the reference is empty"),
    ),
    Case(
        "trajectory/truncated gzip",
        lambda d: trajectory(d, gen=_truncated_gz(GENERATED), gen_name="gen.csv.gz"),
        ("gen.csv.gz", "not a readable CSV"),
    ),
    Case(
        "trajectory/non-UTF-8 CSV",
        lambda d: trajectory(d, gen=b"uid,d,t,x,y\n1,60,0,\xff,3\n", gen_name="gen.csv"),
        ("gen.csv", "column 'x'", "not UTF-8"),
    ),
    Case(
        "trajectory/masked 999",
        lambda d: trajectory(d, ref=REFERENCE.with_columns(at(3, "x", 999))),
        ("ref.parquet", "999", "(1, 61, 6)"),
    ),
    Case(
        "trajectory/duplicate step",
        lambda d: trajectory(d, gen=pl.concat([GENERATED, GENERATED.head(1)])),
        ("gen.parquet", "duplicate", "(1, 60, 0)"),
    ),
    Case(
        "trajectory/--metrics ''",
        lambda d: [*trajectory(d), "--metrics", ""],
        ("trajectory metric",),
    ),
    # ------------------------------------------------------------------ recs
    Case(
        "recs/header-only ratings",
        lambda d: recs(d, ratings=RATINGS.clear(), ratings_name="ratings.csv"),
        ("ratings.csv", "the ratings are empty"),
    ),
    Case(
        "recs/null user",
        lambda d: recs(d, lists=RECS.with_columns(at(3, "user_id", None, pl.Int64))),
        ("recs.parquet", "column 'user_id'", "null key", "row 3"),
    ),
    Case(
        "recs/NaN rating",
        lambda d: recs(d, ratings=RATINGS.with_columns(at(4, "rating", float("nan")))),
        ("ratings.parquet", "column 'rating'", "NaN", "(2, 13)"),
    ),
    Case(
        "recs/string rating",
        lambda d: recs(d, ratings=RATINGS.with_columns(pl.col("rating").cast(pl.String))),
        ("ratings.parquet", "column 'rating'", "numeric"),
    ),
    Case(
        "recs/non-UTF-8 CSV",
        lambda d: recs(
            d, ratings=b"user_id,item_id,rating\n1,\xff,3\n", ratings_name="ratings.csv"
        ),
        ("ratings.csv", "column 'item_id'", "not UTF-8"),
    ),
    Case(
        "recs/truncated parquet",
        lambda d: recs(d, lists=parquet_bytes(RECS, d)[:300]),
        ("recs.parquet", "Parquet"),
    ),
    Case(
        "recs/missing key column",
        lambda d: [*recs(d), "--key", "nope"],
        ("ratings.parquet", "column 'nope'"),
    ),
    Case("recs/--cutoffs 2^70", lambda d: [*recs(d), "--cutoffs", str(2**70)], ("at most",)),
    Case(
        "recs/--gain-threshold nan",
        lambda d: [*recs(d), "--gain-threshold", "nan"],
        ("--gain-threshold", "finite"),
    ),
    Case("recs/--log-base 1", lambda d: [*recs(d), "--log-base", "1"], ("--log-base: must be",)),
    Case("recs/--metrics ''", lambda d: [*recs(d), "--metrics", ""], ("no metric",)),
    # ------------------------------------------------------------------ logits
    Case(
        "logits/truncated npy",
        lambda d: logits(d, x=npy_bytes(LOGITS, d)[:100]),
        ("logits.npy", "not a readable .npy"),
    ),
    Case(
        "logits/text npy",
        lambda d: logits(d, x=b"not an array\n"),
        ("logits.npy", "not a readable .npy"),
    ),
    Case(
        "logits/object npy",
        lambda d: logits(d, y=np.array([{"a": 1}, None, 1, 2], dtype=object)),
        ("targets.npy", "not a readable .npy"),
    ),
    Case("logits/empty npy", lambda d: logits(d, x=b""), ("logits.npy", "not a readable .npy")),
    Case(
        "logits/integer logits",
        lambda d: logits(d, x=LOGITS.astype(np.int64)),
        ("logits.npy", "float32 or float64"),
    ),
    Case("logits/1-D logits", lambda d: logits(d, x=LOGITS[:, 0].copy()), ("logits.npy", "2-D")),
    Case(
        "logits/NaN logit",
        lambda d: logits(
            d, x=np.where(np.arange(16).reshape(4, 4) == 6, np.nan, LOGITS).astype(np.float32)
        ),
        ("logits.npy", "row 1"),
    ),
    Case(
        "logits/target out of range",
        lambda d: logits(d, y=np.array([0, 1, 4, 3])),
        ("targets.npy", "outside", "row 2"),
    ),
    Case(
        "logits/negative padding target",
        lambda d: logits(d, y=np.array([0, 1, -100, 3])),
        ("targets.npy", "target -100 outside", "left out by --ignore-target", "row 2"),
    ),
    Case(
        "logits/target beyond int64",
        lambda d: logits(d, y=np.array([0, 1, HUGE, 3], dtype=np.uint64)),
        ("targets.npy", f"target {HUGE} outside", "row 2"),
    ),
    Case(
        "logits/length mismatch",
        lambda d: logits(d, y=TARGETS[:3].copy()),
        ("targets.npy", "4 logits rows but 3 targets"),
    ),
    Case(
        "logits/corrupt parquet",
        lambda d: logits(d, x=b"PAR1 not parquet", x_name="logits.parquet"),
        ("logits.parquet", "Parquet"),
    ),
    Case(
        "logits/no rows",
        lambda d: logits(d, x=LOGITS[:0].copy(), y=TARGETS[:0].copy()),
        ("logits.npy", "no logits rows"),
    ),
    Case("logits/--k 2^70", lambda d: [*logits(d), "--k", str(2**70)], ("at most",)),
    Case(
        "logits/--metrics acc@<5000 digits>",
        lambda d: [*logits(d), "--metrics", "acc@" + "9" * 5000],
        ("unknown logits metric",),
    ),
    # ------------------------------------------------------------------ validate
    Case(
        "validate/truncated gzip submission",
        lambda d: validate(
            d, submission=gzip.compress(submission_text().encode())[:60], sub_name="sub.csv.gz"
        ),
        ("sub.csv.gz", "cannot read the submission", "truncated"),
    ),
    Case(
        "validate/non-UTF-8 submission",
        lambda d: validate(d, submission=submission_text().encode() + b"50,60,3,10,\xe9\n"),
        ("sub.csv", "UTF-8", "line index 23"),
    ),
    Case(
        "validate/truncated gzip dataset",
        lambda d: validate(
            d, dataset=gzip.compress(dataset_text().encode())[:50], ds_name="ds.csv.gz"
        ),
        ("ds.csv.gz", "cannot read the dataset"),
    ),
    Case(
        "validate/header-only dataset",
        lambda d: validate(d, dataset="uid,d,t,x,y\n"),
        ("ds.csv", "no rows"),
    ),
    Case(
        "validate/dataset with letters",
        lambda d: validate(d, dataset="uid,d,t,x,y\n50,60,a,1,1\n"),
        ("ds.csv", "cannot read the dataset"),
    ),
    Case(
        "validate/missing submission",
        lambda d: [*validate(d)[:-1], str(d / "nope.csv")],
        ("nope.csv", "no such file"),
    ),
    Case(
        "validate/submission is a folder",
        lambda d: [*validate(d)[:-1], str(d)],
        ("a folder, not a file",),
    ),
    Case(
        "validate/unknown task",
        lambda d: ["validate", "--task", "2025:e", "--dataset", "x", "--submission", "y"],
        ("--task",),
    ),
    # an invalid submission: exit 1, the report on stdout (checked in its own test below)
    # ------------------------------------------------------------------ run (job files)
    Case(
        "run/missing job",
        lambda d: ["run", str(d / "nope.toml")],
        ("nope.toml", "no such job file"),
    ),
    Case("run/job is a folder", lambda d: ["run", str(d)], ("is a folder",)),
    Case(
        "run/job not UTF-8",
        lambda d: run_job(d, text=b'out = "o"\n# \xff\xfe\n'),
        ("job.toml", "not UTF-8"),
    ),
    Case("run/not TOML", lambda d: run_job(d, text="[[[\n"), ("job.toml", "not valid TOML")),
    Case(
        "run/model = 1",
        lambda d: run_job(d, text=job_text(d).replace('m = "pred.parquet"', "m = 1")),
        ("job.toml", "tasks[0].models.m", "expected a path"),
    ),
    Case(
        "run/tasks not an array",
        lambda d: run_job(d, text='out = "o"\ntasks = 5\n'),
        ("job.toml", "tasks: expected an array of tables"),
    ),
    Case(
        "run/tasks an array of numbers",
        lambda d: run_job(d, text='out = "o"\ntasks = [1, 2]\n'),
        ("job.toml", "tasks: expected an array of tables"),
    ),
    Case(
        'run/k = "5"',
        lambda d: run_job(d, text=job_text(d).replace("k = [1, 2]", 'k = "5"')),
        ("job.toml", "tasks[0].k", "got string '5'"),
    ),
    Case(
        "run/k = [0]",
        lambda d: run_job(d, text=job_text(d).replace("k = [1, 2]", "k = [0]")),
        ("job.toml", "tasks[0].k: must be"),
    ),
    Case(
        "run/k = true",
        lambda d: run_job(d, text=job_text(d).replace("k = [1, 2]", "k = true")),
        ("job.toml", "tasks[0].k", "boolean"),
    ),
    Case(
        "run/k = {a = 1}",
        lambda d: run_job(d, text=job_text(d).replace("k = [1, 2]", "k = {a = 1}")),
        ("job.toml", "tasks[0].k", "table"),
    ),
    Case(
        'run/metrics = "acc@k" (a string, not an array)',
        lambda d: run_job(d, metrics='"acc@k"'),
        ("job.toml", "tasks[0].metrics", "array of strings"),
    ),
    Case(
        "run/metrics = []",
        lambda d: run_job(d, metrics="[]"),
        ("job.toml", "tasks[0]", "give at least one metric"),
    ),
    Case(
        "run/unmatched = true",
        lambda d: run_job(d, unmatched="true"),
        ("job.toml", "tasks[0].unmatched", "expected a string"),
    ),
    Case(
        'run/columns = "x"',
        lambda d: run_job(d, columns='"location=poi"'),
        ("job.toml", "tasks[0].columns", "table"),
    ),
    Case(
        'run/convention = ["libcity"]',
        lambda d: run_job(d, convention='["libcity"]'),
        ("job.toml", "tasks[0].convention", "expected a string"),
    ),
    Case(
        "run/out = 5",
        lambda d: run_job(d, text=job_text(d).replace(f'out = "{d / "jobout"}"', "out = 5")),
        ("job.toml", "out: expected a string"),
    ),
    Case(
        "run/chunk_rows = 0",
        lambda d: run_job(d, text="chunk_rows = 0\n" + job_text(d)),
        ("job.toml", "chunk_rows"),
    ),
    Case(
        "run/truth = 1",
        lambda d: run_job(d, text=job_text(d).replace('truth = "truth.parquet"', "truth = 1")),
        ("job.toml", "tasks[0].truth", "expected a path"),
    ),
    Case(
        "run/unknown key",
        lambda d: run_job(d, text=job_text(d).replace("k = [1, 2]", "k = [1, 2]\nbogus = 1")),
        ("job.toml", "unknown key 'bogus'"),
    ),
    Case(
        "run/missing truth file",
        lambda d: run_job(d, text=job_text(d).replace("truth.parquet", "absent.parquet")),
        ("absent.parquet", "no such file"),
    ),
    # ------------------------------------------------------------------ headers and parts
    Case(
        "nextloc/a column named twice in the header",
        lambda d: nextloc(d, truth="sample_id,sample_id\n1,10\n2,20\n", truth_name="truth.csv"),
        ("truth.csv", "column 'sample_id'", "two columns of the file have this name"),
    ),
    Case(
        "trajectory/a column named twice in the header",
        lambda d: trajectory(
            d, gen=GENERATED.write_csv().replace("uid,d,t,x,y", "uid,d,t,x,x"), gen_name="g.csv"
        ),
        ("g.csv", "column 'x'", "two columns of the file have this name"),
    ),
    *(
        Case(
            f"{family}/a column named twice in a later {suffix} part's header",
            setup,
            (f"part1{suffix}", f"column '{column}'", "two columns of the file have this name"),
        )
        for suffix in (".parquet", ".csv")
        for family, column, setup in (
            (
                "nextloc",
                "location",
                lambda d, s=suffix: [
                    *nextloc(d)[:4],
                    twice_in_a_later_part(d / "pred", PRED, s),
                    *nextloc(d)[5:],
                ],
            ),
            (
                "trajectory",
                "d",
                lambda d, s=suffix: [
                    *trajectory(d)[:2],
                    twice_in_a_later_part(d / "ref", REFERENCE, s),
                    *trajectory(d)[3:],
                ],
            ),
            (
                "recs",
                "item_id",
                lambda d, s=suffix: [
                    *recs(d)[:4],
                    twice_in_a_later_part(d / "lists", RECS, s),
                    *recs(d)[5:],
                ],
            ),
        )
    ),
    Case(
        "recs/the parts of a folder hold strings and integers",
        lambda d: [
            *recs(d)[:4],
            str(parts(d / "lists", RECS)),
            *recs(d)[5:],
        ],
        ("part1.parquet", "column 'user_id'", "type String differs from Int64", "part0.parquet"),
    ),
    Case(
        "trajectory/the parts of a folder hold strings and integers",
        lambda d: [
            *trajectory(d)[:4],
            str(parts(d / "gen", GENERATED)),
        ],
        ("part1.parquet", "column 'uid'", "type String differs from Int64", "part0.parquet"),
    ),
    Case(
        "logits/a folder given as the logits",
        lambda d: [*logits(d)[:2], str(folder(d / "folder.npy")), *logits(d)[3:]],
        ("folder.npy", "a folder, not a file"),
    ),
    Case(
        "logits/a CSV named .npy",
        lambda d: logits(d, x="a,b\n0.1,0.9\n"),
        ("logits.npy", "not a readable .npy array of logits", "does not begin with the bytes"),
    ),
    Case(
        "nextloc/null rank",
        lambda d: nextloc(
            d, pred=PRED.drop("score").with_columns(rank=pl.Series([1, None, 1, 2, 1, 2]))
        ),
        ("pred.parquet", "column 'rank'", "null rank", "sample_id=1"),
    ),
    Case(
        "logits/a Parquet file with two target columns",
        lambda d: [
            "logits",
            "--logits",
            two_targets(d / "rows.parquet"),
            "--targets",
            str(d / "rows.parquet"),
        ],
        ("rows.parquet", "column 'target'", "two columns of the file have this name"),
    ),
    # ------------------------------------------------------------------ float ids
    # a float id's text (10.0) never matches the other side's integer (10): refused, not 0 hits
    Case(
        "recs/float item ids in the ratings",
        lambda d: [
            *recs(d, ratings=RATINGS.with_columns(pl.col("item_id").cast(pl.Float64))),
            "--convention",
            "ranx",
        ],
        ("ratings.parquet", "column 'item_id'", "integers or strings, found Float64"),
    ),
    Case(
        "recs/float user ids in the lists",
        lambda d: [
            *recs(
                d,
                lists=RECS.with_columns(pl.col("user_id").cast(pl.Float64)),
                recs_name="recs.csv",
            ),
            "--convention",
            "trec_eval",
        ],
        ("recs.csv", "column 'user_id'", "integers or strings, found Float64"),
    ),
    # ------------------------------------------------------------------ no unit scored
    # every unit on one side only and left out (or ignored): every metric would be NaN
    Case(
        "nextloc/no sample on both sides, misses skipped",
        lambda d: [
            *nextloc(d, pred=PRED.with_columns(pl.col("sample_id") + 100)),
            "--drop-unmatched",
            "--missing",
            "skip",
        ],
        ("pred.parquet", "column 'sample_id'", "no unit was scored against", "truth.parquet"),
    ),
    Case(
        "trajectory/no uid on both sides, mismatches skipped",
        lambda d: [
            *trajectory(d, gen=GENERATED.with_columns(pl.col("uid") + 100)),
            "--skip-mismatched",
        ],
        ("gen.parquet", "column 'uid'", "no unit was scored", "uids_skipped = 4"),
    ),
    Case(
        "recs/no user on both sides under trec_eval",
        lambda d: [
            *recs(d, lists=RECS.with_columns(pl.col("user_id") + 100)),
            "--convention",
            "trec_eval",
        ],
        ("recs.parquet", "column 'user_id'", "no unit was scored against", "ratings.parquet"),
    ),
    Case(
        "logits/every target ignored",
        lambda d: [*logits(d, y=np.full(4, 3)), "--ignore-target", "3"],
        ("logits.npy", "column 'target'", "no unit was scored against", "targets.npy"),
    ),
    Case(
        "run/no sample on both sides, misses skipped",
        lambda d: [
            *run_job(d, missing='"skip"', unmatched='"drop"')[:1],
            write(
                d / "job.toml",
                job_text(d, missing='"skip"', unmatched='"drop"').replace("pred.", "far."),
            ),
            write(d / "far.parquet", PRED.with_columns(pl.col("sample_id") + 100)),
        ][:2],
        ("far.parquet", "column 'sample_id'", "no unit was scored"),
    ),
    Case(
        "run/--out names a file",
        lambda d: [*run_job(d), "--out", write(d / "afile", "x")],
        ("afile", "cannot use this output folder"),
    ),
]


@pytest.fixture
def place(tmp_path):
    """(inputs folder, an OUT holding an earlier file) under one root to snapshot."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "manifest.json").write_text('{"results": {}}\n')  # an OUT: its files may be beside
    (out / "earlier.txt").write_text("an earlier result\n")
    return tmp_path, inputs, out


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_bad_input(case, place, capsys):
    root, inputs, out = place
    argv = with_out(case.setup(inputs), out)
    before = snapshot(root)
    outcome = call(argv, capsys)
    assert_one_error_line(outcome, case.fragments, case.code)
    assert snapshot(root) == before  # nothing written anywhere: inputs, OUT, job outputs


def test_every_subcommand_is_covered():
    covered = {case.id.split("/")[0] for case in CASES}
    assert covered == {"nextloc", "trajectory", "recs", "logits", "validate", "run"}


@pytest.mark.parametrize(
    "extra, kind",
    [
        (str(2**63 + 50), "int64"),
        ("9" * 4300, "4,300 digits"),
    ],
    ids=lambda v: v if len(str(v)) < 20 else "huge",
)
def test_validate_reports_an_overflowing_uid_as_invalid(place, capsys, extra, kind):
    """Exit 1 (invalid), the report on stdout, nothing on stderr."""
    root, inputs, _ = place
    argv = validate(inputs, submission=submission_text(f"{extra},60,3,10,20\n"))
    before = snapshot(root)
    outcome = call(argv, capsys)
    assert outcome.code == 1 and outcome.err == "" and outcome.warnings == [], outcome
    assert "1 error(s)" in outcome.out and "too large to be a target uid" in outcome.out
    assert "Error at line index 23" in outcome.out
    assert snapshot(root) == before


def test_good_inputs_pass(place, capsys):
    """The small inputs above are valid: every case fails for its own reason."""
    root, inputs, out = place
    for argv in (
        nextloc(inputs),
        trajectory(inputs),
        recs(inputs),
        logits(inputs),
        run_job(inputs),
    ):
        outcome = call(with_out(argv, out), capsys)
        assert outcome.code == 0 and "error" not in outcome.err, (argv, outcome)
    outcome = call(validate(inputs), capsys)
    assert outcome.code == 0 and outcome.out.strip() == "Validation finished without errors!"


def test_parquet_metadata_that_is_not_utf8_is_ignored(place, capsys):
    """A damaged metadata key (found by the fuzz loop) made Polars panic; mobeval reads no
    metadata."""
    _, inputs, out = place
    argv = nextloc(inputs)
    path = inputs / "pred.parquet"
    data = path.read_bytes()
    assert data.count(b"ARROW:schema") == 1
    path.write_bytes(data.replace(b"ARROW:schema", b"AR\xe4OW:schema"))
    outcome = call(with_out(argv, out), capsys)
    assert outcome.code == 0 and outcome.err == "" and outcome.warnings == [], outcome


def test_job_option_kinds_cover_every_option():
    for kind, task_type in TASK_TYPES.items():
        assert set(task_type.options) <= set(OPTION_KINDS[kind]), kind
        assert set(OPTION_KINDS[kind].values()) <= set(VALUE_KINDS)


# --------------------------------------------------------------------------- output problems


def test_read_only_output_folder(place, capsys):
    root, inputs, out = place
    out.chmod(0o500)
    try:
        if os.access(out, os.W_OK):  # root ignores permissions
            pytest.skip("permissions do not bind this user (root)")
        argv = with_out(nextloc(inputs), out)
        before = snapshot(root)
        outcome = call(argv, capsys)
        assert_one_error_line(outcome, (str(out), "ermission denied"))
        assert snapshot(root) == before
    finally:
        out.chmod(0o700)


def test_output_under_proc_is_refused(place, capsys):
    """A path that can never be a folder (works for root too)."""
    root, inputs, _ = place
    argv = [*nextloc(inputs), "--out", "/proc/mobeval-test-out", "--quiet"]
    before = snapshot(root)
    outcome = call(argv, capsys)
    assert_one_error_line(outcome, ("/proc/mobeval-test-out", "cannot use this output folder"))
    assert snapshot(root) == before


def test_full_disk_is_one_line_and_leaves_nothing(place, capsys, monkeypatch):
    """Polars reports a full disk as a ComputeError; it must reach the user as the OS error."""

    def full(self, path, *args, **kwargs):
        raise pl.exceptions.ComputeError(
            "parquet: File out of specification: underlying IO error: No space left on device "
            "(os error 28)"
        )

    root, inputs, out = place
    argv = with_out(nextloc(inputs), out)  # the inputs are written before the disk is "full"
    monkeypatch.setattr(pl.DataFrame, "write_parquet", full)
    before = snapshot(root)
    outcome = call(argv, capsys)
    assert_one_error_line(outcome, (str(out / ".staging"), "No space left on device"))
    assert snapshot(root) == before


def test_a_bug_is_exit_3_in_one_line(place, capsys, monkeypatch):
    """An unexpected exception (simulated) is neither bad input (2) nor invalid (1)."""

    def broken(*args, **kwargs):
        raise RuntimeError("simulated bug\nsecond line")

    monkeypatch.setattr("mobeval.api.evaluate_nextloc", broken)
    _, inputs, out = place
    outcome = call(with_out(nextloc(inputs), out), capsys)
    assert outcome.code == cli.EXIT_INTERNAL == 3
    assert len(outcome.lines) == 1 and "Traceback" not in outcome.err
    assert outcome.lines[0].startswith("mobeval: internal error: RuntimeError: simulated bug")
    monkeypatch.setenv("MOBEVAL_DEBUG", "1")
    with pytest.raises(RuntimeError):
        main(with_out(nextloc(inputs), out))


def test_an_os_error_names_the_path(place, capsys, monkeypatch):
    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied", "/somewhere/file")

    monkeypatch.setattr("mobeval.api.evaluate_nextloc", denied)
    _, inputs, out = place
    outcome = call(with_out(nextloc(inputs), out), capsys)
    assert_one_error_line(outcome, ("mobeval: error: /somewhere/file: Permission denied",))


# --------------------------------------------------------------------------- real processes


SUBPROCESS_CASES = [
    "nextloc/null key in the predictions",  # the NumPy RuntimeWarning is gone at the source
    "logits/truncated npy",
    "run/job not UTF-8",
    "nextloc/--k x",
]


@pytest.mark.parametrize("case_id", SUBPROCESS_CASES)
def test_in_a_real_process(case_id, place):
    case = next(c for c in CASES if c.id == case_id)
    root, inputs, out = place
    argv = with_out(case.setup(inputs), out)
    before = snapshot(root)
    done = subprocess.run(
        [sys.executable, "-m", "mobeval.cli", *argv],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=300,
    )
    lines = done.stderr.splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and lines[0].startswith("mobeval: error: "), done.stderr
    assert "Traceback" not in done.stderr and "Warning" not in done.stderr
    assert done.stdout == ""
    assert snapshot(root) == before


def test_validate_exit_codes_in_a_real_process(place):
    _, inputs, _ = place
    invalid = validate(inputs, submission=submission_text(f"{2**64},60,3,10,20\n"))
    done = subprocess.run(
        [sys.executable, "-m", "mobeval.cli", *invalid],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )
    assert done.returncode == 1 and done.stderr == "", done
    assert "too large to be a target uid" in done.stdout


# --------------------------------------------------------------------------- fuzz


def mutate_frame(rng: random.Random, frame: pl.DataFrame) -> pl.DataFrame:
    """One random damage: a null, NaN, inf or huge value, a type change, a dropped or renamed
    column, duplicated or shuffled rows, no rows."""
    column = rng.choice(frame.columns)
    row = rng.randrange(max(frame.height, 1))
    kind = rng.randrange(12)
    try:
        if kind == 0:
            return frame.with_columns(at(row, column, None, frame.schema[column]))
        if kind == 1:
            return frame.with_columns(pl.col(column).cast(pl.String))
        if kind == 2:
            value = rng.choice([float("nan"), float("inf"), float("-inf"), 1e300, -1e308, 0.5])
            return frame.with_columns(pl.col(column).cast(pl.Float64)).with_columns(
                at(row, column, value)
            )
        if kind == 3:
            value = rng.choice([2**62, -(2**63), 2**63 - 1, -1, 0, 999])
            return frame.with_columns(pl.col(column).cast(pl.Int64)).with_columns(
                at(row, column, value, pl.Int64)
            )
        if kind == 4:
            return frame.drop(column)
        if kind == 5:
            return pl.concat([frame, frame.slice(row, 1)])
        if kind == 6:
            return frame.sample(fraction=1.0, shuffle=True, seed=rng.randrange(1000))
        if kind == 7:
            return frame.clear()
        if kind == 8:
            return frame.with_columns(pl.col(column).cast(pl.UInt64, strict=False) + 2**63)
        if kind == 9:
            return frame.rename({column: column + "_x"})
        if kind == 10:
            return frame.with_columns(pl.col(column).cast(pl.Boolean, strict=False))
        return frame.slice(row, 1)
    except pl.exceptions.PolarsError:
        return frame


def damage_bytes(rng: random.Random, data: bytes) -> bytes:
    kind = rng.randrange(4)
    if kind == 0:
        return data[: rng.randrange(len(data) + 1)]
    if kind == 1:
        data = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            if data:
                data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data)
    if kind == 2:
        j = rng.randrange(len(data) + 1)
        return data[:j] + rng.choice([b"\xff", b"\x00", b",,,\n", b'"', b"\n\n"]) + data[j:]
    return rng.choice([b"", b"junk", b"\x1f\x8b", b"PAR1"]) + data


def frame_file(rng: random.Random, d: Path, stem: str, frame: pl.DataFrame) -> Path:
    """The (maybe mutated) frame as Parquet, CSV or CSV.gz, sometimes with damaged bytes."""
    if rng.random() < 0.7:
        frame = mutate_frame(rng, frame)
    suffix = rng.choice([".parquet", ".parquet", ".csv", ".csv.gz"])
    path = d / f"{stem}{suffix}"
    try:
        write(path, frame)
    except (pl.exceptions.PolarsError, OSError, ValueError):
        write(path, b"")
    if rng.random() < 0.2:
        path.write_bytes(damage_bytes(rng, path.read_bytes()))
    return path


def mutate_array(rng: random.Random, array: np.ndarray) -> np.ndarray:
    kind = rng.randrange(10)
    array = array.copy()
    if kind == 0 and array.dtype.kind == "f":
        array.flat[rng.randrange(array.size)] = rng.choice([np.nan, np.inf, -np.inf, 3e38])
    elif kind == 1:
        array = array.astype(rng.choice([np.int64, np.float16, np.float64, np.uint64, np.int8]))
    elif kind == 2:
        array = array.astype(object)
    elif kind == 3:
        array = array.reshape(-1) if array.ndim == 2 else array.reshape(-1, 1)
    elif kind == 4:
        array = array[: rng.randrange(array.shape[0] + 1)]
    elif kind == 5 and array.dtype.kind in "iu":
        array.flat[rng.randrange(array.size)] = rng.choice([-1, 4, 2**62, 0])
    elif kind == 6:
        array = array.T.copy()
    elif kind == 7:
        array = array.astype(str)
    elif kind == 8:
        array = np.concatenate([array, array[:1]])
    return array


def array_file(rng: random.Random, d: Path, stem: str, array: np.ndarray) -> Path:
    if rng.random() < 0.7:
        array = mutate_array(rng, array)
    path = d / f"{stem}.npy"
    write(path, array)
    if rng.random() < 0.2:
        path.write_bytes(damage_bytes(rng, path.read_bytes()))
    return path


TOML_VALUES = ["1", '"x"', "true", "[1]", '["a"]', "{a = 1}", "1.5", "[]", "-1", "0", '"../x"']
TOML_VALUES += ["9223372036854775807", "[[1]]", '"mrr"', '"libcity"', "[0]", '"1,5"']


def fuzz_job(rng: random.Random, d: Path) -> list[str]:
    write(d / "truth.parquet", TRUTH)
    write(d / "pred.parquet", PRED)
    lines = job_text(d, metrics='["acc@k", "mrr"]', convention='"mobeval"').splitlines()
    for _ in range(rng.randint(1, 2)):
        i = rng.randrange(len(lines))
        kind = rng.randrange(4)
        if kind <= 1 and "=" in lines[i]:
            lines[i] = lines[i].split("=")[0] + "= " + rng.choice(TOML_VALUES)
        elif kind == 2:
            del lines[i]
        else:
            lines.insert(i, lines[i])
    data = ("\n".join(lines) + "\n").encode()
    if rng.random() < 0.1:
        data = damage_bytes(rng, data)
    return ["run", write(d / "job.toml", data)]


def fuzz_argv(command: str, rng: random.Random, d: Path) -> list[str]:
    if command == "nextloc":
        return [
            "nextloc",
            "--truth",
            str(frame_file(rng, d, "truth", TRUTH)),
            "--pred",
            str(frame_file(rng, d, "pred", PRED)),
            "--k",
            "1,2",
        ]
    if command == "trajectory":
        return [
            "trajectory",
            "--reference",
            str(frame_file(rng, d, "ref", REFERENCE)),
            "--generated",
            str(frame_file(rng, d, "gen", GENERATED)),
            *rng.choice([[], ["--score-out-of-grid"], ["--skip-mismatched"]]),
        ]
    if command == "recs":
        return [
            "recs",
            "--ratings",
            str(frame_file(rng, d, "ratings", RATINGS)),
            "--recs",
            str(frame_file(rng, d, "recs", RECS)),
            "--convention",
            rng.choice(["clayrs", "trec_eval", "relison"]),
            "--metrics",
            "precision,ndcg,rmse",
            "--cutoffs",
            "2",
        ]
    if command == "logits":
        return [
            "logits",
            "--logits",
            str(array_file(rng, d, "logits", LOGITS)),
            "--targets",
            str(array_file(rng, d, "targets", TARGETS)),
        ]
    return fuzz_job(rng, d)


@pytest.mark.parametrize("command", ["nextloc", "trajectory", "recs", "logits", "run"])
def test_fuzzed_inputs_never_crash(command, tmp_path, capsys):
    """Mutated inputs: done (0) or one 'mobeval: error:' line (2); never a traceback, a warning
    or an internal error. Prints how many cases ended each way."""
    rng = random.Random(f"mobeval-bad-input-{command}")
    seen = {0: 0, 2: 0}
    for case in range(FUZZ_CASES):
        d = tmp_path / f"case{case}"
        d.mkdir()
        argv = with_out(fuzz_argv(command, rng, d), d / "out")
        outcome = call(argv, capsys)
        assert outcome.code in (0, 2), (case, argv, outcome)
        assert "Traceback" not in outcome.err and outcome.warnings == [], (case, argv, outcome)
        if outcome.code == 2:
            assert len(outcome.lines) == 1 and outcome.lines[0].startswith("mobeval: error: "), (
                case,
                argv,
                outcome,
            )
        else:
            assert "mobeval: error" not in outcome.err, (case, argv, outcome)
        seen[outcome.code] += 1
    print(f"{command} fuzz: {FUZZ_CASES} cases, exit codes {seen}")
    assert seen[2] > 0
