"""HuMob / GIS Cup submission validator that reports every error instead of the first one.

Rules of the reference ``validator.py`` (yahoojapan/geobleu d9efb0f for 2025, its 2024 version
for 2024), written from ``docs/geobleu.md``:

* line 0 may be a header starting with ``uid,`` (any other line must be data);
* every line has exactly 5 comma-separated fields, each all digits after stripping trailing
  whitespace from the line (no sign, no decimals, no spaces; a trailing empty line fails);
* d, t, x, y in range (d in the task's test days, t 0..47, x and y 1..200);
* the set of submitted uids equals the task's uid range;
* per uid, the submitted rows (file order) match the dataset rows with d >= the first test day
  (file order): the same count and the same (d, t) at each position.

Differences, on purpose: all errors are reported (the first 50 kept, plus a total count), a
target uid missing from the dataset is an error (the reference crashes with KeyError), and
gzip files are read transparently. Line numbers are 0-based, as in the reference. "Digits" and
"whitespace" are ASCII (0-9; space, tab, CR, LF, VT, FF), where the reference's
``str.isnumeric`` / ``str.rstrip`` also take other Unicode digits and spaces. A number too large
for the reference's ``int()`` (over 4,300 digits) or for int64 is an error of its line, never a
crash: every line is either valid or reported.

Bad input, not an invalid submission (:class:`InputError`, exit 2 in the CLI): a file that cannot
be read (missing, permission denied, a truncated or corrupt gzip stream), a submission that is
not UTF-8 text (the reference would crash decoding it), a dataset that is not uid,d,t,x,y: a line
with another number of fields (a blank line included) or a field that is not an integer, where
the reference crashes unpacking or ``int()``-ing it (blanks around a field are read, as ``int()``
reads them), named by its line, column and value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from mobeval.errors import ConfigError, no_file
from mobeval.io.text import integer_csv_blocks, readable, utf8_line_blocks
from mobeval.validate.tasks import TASKS, TaskSpec

SUCCESS = "Validation finished without errors!"
MAX_KEPT = 50
T_RANGE = (0, 47)
COORD_RANGE = (1, 200)


@dataclass
class ValidationReport:
    """ok, the total number of errors and the first ``MAX_KEPT`` as (line, uid, message).

    ``line`` is the 0-based submission line (None for errors about a uid as a whole), ``uid``
    None when the line could not be parsed.
    """

    task: str
    ok: bool
    n_errors: int
    errors: list[tuple[int | None, int | None, str]] = field(default_factory=list)
    n_lines: int = 0

    def summary(self) -> str:
        if self.ok:
            return SUCCESS
        head = f"{self.n_errors} error(s) in the submission for task {self.task}"
        if self.n_errors > len(self.errors):
            head += f" (the first {len(self.errors)} shown)"
        return "\n".join([head + ":", *(msg for _, _, msg in self.errors)])


class _Errors:
    """Counts every error, keeps the first MAX_KEPT."""

    def __init__(self) -> None:
        self.total = 0
        self.kept: list[tuple[int | None, int | None, str]] = []

    def add(self, total: int, first: list[tuple[int | None, int | None, str]]) -> None:
        self.total += total
        self.kept.extend(first[: MAX_KEPT - len(self.kept)])


# --------------------------------------------------------------------------- submission lines


def _line_bounds(buf: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start, end, stripped end) of every line, as Python's text-mode iteration splits them."""
    n = buf.size
    newlines = np.flatnonzero(buf == 10)
    starts = np.r_[0, newlines + 1]
    ends = np.r_[newlines, n]
    if starts[-1] == n:  # the text ends with a newline: no empty last line
        starts, ends = starts[:-1], ends[:-1]
    blank = (buf == 32) | ((buf >= 9) & (buf <= 13))
    last_kept = np.maximum.accumulate(np.where(blank, -1, np.arange(n)))
    stripped = np.where(ends > starts, last_kept[np.maximum(ends - 1, 0)] + 1, starts)
    return starts, ends, np.maximum(stripped, starts)


def _count_in(indicator: np.ndarray, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """How many True of ``indicator`` lie in each [start, stop)."""
    cum = np.r_[0, np.cumsum(indicator, dtype=np.int64)]
    return cum[stops] - cum[starts]


#: Largest value of an int64 column; a submitted number above it cannot be a uid or a step.
INT64_MAX = (1 << 63) - 1
#: How many characters of an offending field a message quotes.
QUOTE_CHARS = 24


def _quote(text: str) -> str:
    """``text`` for a message, shortened (a field may hold thousands of digits)."""
    if len(text) > QUOTE_CHARS:
        return repr(text[:QUOTE_CHARS]) + f"... ({len(text)} characters)"
    return repr(text)


def _as_int64(text: str) -> int | None:
    """The field as an int64 when it is ASCII digits that fit, else None (never int() of an
    unbounded string: Python refuses more than 4,300 digits)."""
    if not (text.isascii() and text.isdigit()):
        return None
    digits = text.lstrip("0") or "0"
    if len(digits) > 19:
        return None
    value = int(digits)
    return value if value <= INT64_MAX else None


def _bad_line_message(text: str) -> tuple[int | None, str]:
    """(uid if readable, reason) for a line that failed the fast format check; ``text`` is the
    line without its trailing ASCII whitespace (a Unicode space such as U+00A0 stays)."""
    cols = text.split(",")
    uid = _as_int64(cols[0])
    if len(cols) != 5:
        return uid, f"The number of columns must be 5 (found {len(cols)})"
    bad = next((c for c in cols if not (c.isascii() and c.isdigit())), text)
    return uid, f"Each column must be numeric (found {_quote(bad)})"


#: The rows of a submission's well-formed lines: the 0-based line index and the five fields.
ROW_SCHEMA = {c: pl.Int64 for c in ("line", "uid", "d", "t", "x", "y")}
#: The submission is read in blocks of whole lines of about this many bytes: the line checks take
#: about 40 bytes of memory per byte of a block; every check runs on the block, which is then
#: dropped (what is kept is per target uid, see :class:`_Checks`).
SUBMISSION_BLOCK_BYTES = 4 << 20


def _read_submission(path: Path, errors: _Errors, checks: _Checks) -> int:
    """Read the submission at ``path`` a block at a time (:data:`SUBMISSION_BLOCK_BYTES`): format
    errors go to ``errors`` in line order, then the uids too large for 64 bits; the rows of the
    well-formed lines to ``checks``. Returns the number of lines."""
    huge = _Errors()
    n_lines = 0
    for block, first in utf8_line_blocks(path, "the submission", SUBMISSION_BLOCK_BYTES):
        rows, n_block = _parse_block(block, first, errors, huge)
        checks.add(rows)
        n_lines += n_block
    errors.add(huge.total, huge.kept)
    return n_lines


def _parse_block(
    data: bytes, first: int, errors: _Errors, huge_uids: _Errors
) -> tuple[pl.DataFrame, int]:
    """Rows (line, uid, d, t, x, y) of the well-formed lines of ``data`` (whole lines ended by
    LF, the first one line index ``first`` of the file) and its number of lines; format errors
    go to ``errors``, uids above int64's range to ``huge_uids``."""
    buf = np.frombuffer(data, dtype=np.uint8)
    starts, _, stripped = _line_bounds(buf)
    n_lines = starts.size
    header = first == 0 and n_lines > 0 and data.startswith(b"uid,")
    is_digit = (buf >= 48) & (buf <= 57)
    is_comma = buf == 44
    n_other = _count_in(~(is_digit | is_comma), starts, stripped)
    n_comma = _count_in(is_comma, starts, stripped)
    double = np.r_[is_comma[:-1] & is_comma[1:], False] if buf.size else is_comma
    n_double = _count_in(double, starts, np.maximum(stripped - 1, starts))
    nonempty = stripped > starts
    first_comma = nonempty & is_comma[np.minimum(starts, max(buf.size - 1, 0))]
    last_comma = nonempty & is_comma[np.maximum(stripped - 1, 0)]
    good = (n_other == 0) & (n_comma == 4) & (n_double == 0) & nonempty
    good &= ~first_comma & ~last_comma
    if header:
        good[0] = False
    bad_lines = np.flatnonzero(~good)
    if header:
        bad_lines = bad_lines[1:]
    found = []
    for i in bad_lines[:MAX_KEPT]:
        text = data[starts[i] : stripped[i]].decode("utf-8", errors="replace")
        uid, why = _bad_line_message(text)
        found.append((first + int(i), uid, f"Error at line index {first + i}: {why}"))
    errors.add(int(bad_lines.size), found)

    good_lines = np.flatnonzero(good)
    if good_lines.size == 0:
        return pl.DataFrame(schema=ROW_SCHEMA), n_lines
    keep = np.zeros(buf.size + 1, dtype=np.int64)
    np.add.at(keep, starts[good_lines], 1)
    np.add.at(keep, stripped[good_lines], -1)
    mask = np.cumsum(keep[:-1]) > 0
    ends = stripped[good_lines]
    sep = np.zeros(buf.size, dtype=bool)
    sep[ends[ends < buf.size]] = True
    clean = buf.copy()
    clean[sep] = 10
    text = clean[mask | sep].tobytes()
    if ends[-1] == buf.size:
        text += b"\n"
    names = ("uid", "d", "t", "x", "y")
    raw = pl.read_csv(
        text, has_header=False, new_columns=list(names), schema={c: pl.String for c in names}
    )
    if raw.height != good_lines.size or raw.null_count().sum_horizontal().item():
        raise RuntimeError(  # every well-formed line is one row of five non-empty fields
            f"validator: {raw.height} rows parsed from {good_lines.size} well-formed lines"
        )
    # Every field is ASCII digits, so a null after the cast is a number above int64's range;
    # such a uid is reported here (it cannot be a target uid), d/t/x/y by the range checks.
    rows = raw.select(
        pl.Series("line", first + good_lines),
        *(pl.col(c).cast(pl.Int64, strict=False) for c in names),
    )
    huge = rows["uid"].is_null()
    if huge.any():
        where = huge.arg_true()
        huge_uids.add(
            len(where),
            [
                (
                    first + int(good_lines[i]),
                    None,
                    f"Error at line index {first + good_lines[i]}: uid {_quote(raw['uid'][i])} "
                    "is too large to be a target uid (it does not fit in 64 bits)",
                )
                for i in where.head(MAX_KEPT)
            ],
        )
        rows = rows.filter(~huge)
    return rows, n_lines


def _range_message(col: str, value: int | None, lo: int, hi: int) -> str:
    if value is None:
        return f"{col} is too large to be a number of this task"
    if col == "d":
        return (
            f"d={value} is out of range (It must be within the prediction target period, "
            f"which is from {lo} to {hi}.)"
        )
    return f"{col}={value} is out of range"


# --------------------------------------------------------------------------- dataset


#: The dataset is read in blocks of whole lines of about this many bytes (its parsed frame takes
#: about 10 bytes of memory per byte of a block).
DATASET_BLOCK_BYTES = 4 << 20


def _narrowest(values: np.ndarray) -> np.ndarray:
    """The integers ``values`` in the narrowest signed dtype that holds every one exactly."""
    for dtype in (np.int8, np.int16, np.int32):
        limits = np.iinfo(dtype)
        if values.size == 0 or limits.min <= values.min() and values.max() <= limits.max:
            return values.astype(dtype)
    return values


@dataclass
class _Reference:
    """The dataset's steps of the target uids, uid ``uid_min + i`` at index i: ``present[i]``
    whether it has rows at all, its steps (rows with d >= the first test day, file order) at
    ``d[offsets[i]:offsets[i + 1]]``, ``t[...]`` (each in its narrowest exact dtype)."""

    present: np.ndarray
    offsets: np.ndarray
    d: np.ndarray
    t: np.ndarray


def _read_dataset(path: Path, spec: TaskSpec) -> _Reference:
    """The dataset's :class:`_Reference`, read in blocks; only the target uids' steps are kept."""
    n_uids = spec.uid_max - spec.uid_min + 1
    present = np.zeros(n_uids, dtype=bool)
    index, d, t = [], [], []
    names = ["uid", "d", "t", "x", "y"]
    for frame in integer_csv_blocks(path, names, 3, "the dataset", DATASET_BLOCK_BYTES):
        frame = frame.filter(pl.col("uid").is_between(spec.uid_min, spec.uid_max))
        present[frame["uid"].to_numpy() - spec.uid_min] = True
        steps = frame.filter(pl.col("d") >= spec.d_min)
        index.append(_narrowest(steps["uid"].to_numpy() - spec.uid_min))
        d.append(_narrowest(steps["d"].to_numpy()))
        t.append(_narrowest(steps["t"].to_numpy()))
    index = np.concatenate(index)
    order = np.argsort(index, kind="stable")  # uid after uid, each in file order
    offsets = np.r_[0, np.cumsum(np.bincount(index, minlength=n_uids))]
    return _Reference(present, offsets, np.concatenate(d)[order], np.concatenate(t)[order])


# --------------------------------------------------------------------------- checks


class _Checks:
    """The range, uid and step checks, fed the submission's rows a block at a time (file order).

    Kept between blocks: each column's range-error count and first ``MAX_KEPT``, the uids outside
    the target range with their first line, and per target uid (uid - uid_min) the rows submitted
    so far and its first step whose (d, t) differs from the dataset's. So memory is bounded by a
    block, the dataset's target steps and the number of uids, not by the submission's size.
    """

    RANGED = ("d", "t", "x", "y")

    def __init__(self, spec: TaskSpec, task: str, reference: _Reference) -> None:
        self.spec, self.task, self.ref = spec, task, reference
        self.limits = {
            "d": (spec.d_min, spec.d_max),
            "t": T_RANGE,
            "x": COORD_RANGE,
            "y": COORD_RANGE,
        }
        self.out_of_range = {col: _Errors() for col in self.RANGED}
        self.n_steps = np.diff(reference.offsets)
        self.n_submitted = np.zeros(self.n_steps.size, dtype=np.int64)
        self.first_differ: dict[int, tuple[int, int | None, int | None, int]] = {}
        self.extra = pl.DataFrame(schema={"uid": pl.Int64, "line": pl.Int64})

    def add(self, rows: pl.DataFrame) -> None:
        """Check one block's rows (line, uid, d, t, x, y; uid never null)."""
        for col, (lo, hi) in self.limits.items():
            value = pl.col(col)
            bad = rows.filter(value.is_null() | (value < lo) | (value > hi))
            found = bad.select("line", "uid", col).head(MAX_KEPT).iter_rows()
            self.out_of_range[col].add(
                bad.height,
                [
                    (ln, u, f"Error at line index {ln}: {_range_message(col, v, lo, hi)}")
                    for ln, u, v in found
                ],
            )
        target = pl.col("uid").is_between(self.spec.uid_min, self.spec.uid_max)
        extra = rows.filter(~target).group_by("uid").agg(pl.col("line").min())
        if extra.height:
            self.extra = pl.concat([self.extra, extra]).group_by("uid").agg(pl.col("line").min())
        self._add_steps(rows.filter(target))

    def _add_steps(self, rows: pl.DataFrame) -> None:
        """Compare each target row with the dataset's step of its uid at its position (the rows
        of its uid submitted before it); the first differing step of each uid is kept. A value
        too large for 64 bits (null) differs from nothing, as in SQL: (d, t) differs when a known
        d or a known t differs."""
        index = rows["uid"].to_numpy() - self.spec.uid_min
        within = rows.select(pl.int_range(pl.len()).over("uid")).to_series().to_numpy()
        step = self.n_submitted[index] + within
        self.n_submitted += np.bincount(index, minlength=self.n_submitted.size)
        compared = np.flatnonzero(step < self.n_steps[index])
        at = self.ref.offsets[index[compared]] + step[compared]
        differ = np.zeros(index.size, dtype=bool)
        for col, ref in (("d", self.ref.d), ("t", self.ref.t)):
            value = rows[col].gather(compared)
            known = value.is_not_null().to_numpy()
            differ[compared] |= known & (value.fill_null(0).to_numpy() != ref[at])
        found = np.flatnonzero(differ)
        uids, first = np.unique(index[found], return_index=True)
        for i, row in zip(uids.tolist(), found[first].tolist(), strict=True):
            if i not in self.first_differ:
                line, d, t = (rows[col][row] for col in ("line", "d", "t"))
                self.first_differ[i] = (line, d, t, int(step[row]))

    def report(self, errors: _Errors) -> None:
        """Add the range, uid and step errors to ``errors``, in that order."""
        found = sorted(
            (e for col in self.RANGED for e in self.out_of_range[col].kept), key=lambda e: e[0]
        )
        errors.add(sum(self.out_of_range[col].total for col in self.RANGED), found)
        spec, task = self.spec, self.task
        uids = np.arange(spec.uid_min, spec.uid_max + 1)
        submitted = self.n_submitted > 0
        missing = uids[~submitted]
        errors.add(
            missing.size,
            [
                (None, u, f"uid {u} of task {task} is missing from the submission")
                for u in missing[:MAX_KEPT].tolist()
            ],
        )
        extra = self.extra.sort("uid")
        errors.add(
            extra.height,
            [
                (
                    line,
                    u,
                    f"Error at line index {line}: uid {u} is not a target uid of task {task} "
                    f"({spec.uid_min}-{spec.uid_max})",
                )
                for u, line in extra.head(MAX_KEPT).iter_rows()
            ],
        )
        absent = np.flatnonzero(submitted & ~self.ref.present)
        errors.add(
            absent.size,
            [
                (None, u, f"Error occurring regarding uid {u}: the uid has no rows in the dataset")
                for u in (uids[absent[:MAX_KEPT]]).tolist()
            ],
        )
        wrong = np.flatnonzero(submitted & self.ref.present & (self.n_submitted != self.n_steps))
        errors.add(
            wrong.size,
            [
                (
                    None,
                    int(uids[i]),
                    f"Error occurring regarding uid {uids[i]}: The length doesn't match between "
                    f"the generated and reference trajectories ({self.n_submitted[i]} submitted "
                    f"vs {self.n_steps[i]} steps).",
                )
                for i in wrong[:MAX_KEPT].tolist()
            ],
        )
        differ = sorted(i for i in self.first_differ if self.n_submitted[i] == self.n_steps[i])
        kept = []
        for i in differ[:MAX_KEPT]:
            line, d, t, step = self.first_differ[i]
            at = self.ref.offsets[i] + step
            u = int(uids[i])
            kept.append(
                (
                    line,
                    u,
                    f"Error occurring regarding uid {u}: Day and time are not the same; (d, t) "
                    f"= ({d}, {t}) for generated while (d, t) = ({self.ref.d[at]}, "
                    f"{self.ref.t[at]}) for reference at step {step} of the trajectory (line "
                    f"index {line}).",
                )
            )
        errors.add(len(differ), kept)


def validate_submission(task: str, dataset: str | Path, submission: str | Path) -> ValidationReport:
    """Validate a HuMob submission against the challenge dataset; never stops at the first error.

    ``task``: "2025:a".."2025:d", "2025:test", "2024:b".."2024:d", "2024:test" (bare "a".."d",
    "test" = 2025). ``dataset``: the city's challenge data (csv or csv.gz, uid,d,t,x,y; read in
    chunks, every field an integer). ``submission``: csv or csv.gz.
    """
    key = task.lower()
    if key not in TASKS:
        raise ConfigError(f"unknown task {task!r}; known: {', '.join(sorted(TASKS))}")
    spec = TASKS[key]
    dataset = Path(dataset)
    submission = Path(submission)
    for path in (dataset, submission):
        if not readable(path):  # a file, or a pipe read once as it comes
            raise no_file(path)
    checks = _Checks(spec, key, _read_dataset(dataset, spec))
    errors = _Errors()
    n_lines = _read_submission(submission, errors, checks)
    checks.report(errors)
    return ValidationReport(
        task=key, ok=errors.total == 0, n_errors=errors.total, errors=errors.kept, n_lines=n_lines
    )
