"""HuMob submission validator: every kind of break in small hand-made files."""

import gzip
import io
import os
import random
import zlib

import pytest
from conftest import REPO_ROOT

from mobeval.cli import main
from mobeval.errors import ConfigError, InputError
from mobeval.validate import humob
from mobeval.validate.humob import MAX_KEPT, SUCCESS, TASKS, validate_submission

UIDS = range(50, 61)  # task "test" (2025): uids 50..60 inclusive, days 60..74
STEPS = [(59, 5), (60, 3), (60, 7), (61, 0)]  # day 59 is before the test period


def dataset_text(uids=UIDS):
    lines = ["uid,d,t,x,y"]
    lines += [f"{u},{d},{t},999,999" for u in [40, *uids, 70] for d, t in STEPS]
    return "\n".join(lines) + "\n"


def submission_lines(header=True):
    lines = ["uid,d,t,x,y"] if header else []
    return lines + [f"{u},{d},{t},10,20" for u in UIDS for d, t in STEPS if d >= 60]


@pytest.fixture
def files(tmp_path):
    def write(lines, dataset=None, trailing="\n"):
        (tmp_path / "ds.csv").write_text(dataset or dataset_text())
        sub = tmp_path / "sub.csv"
        sub.write_text("\n".join(lines) + trailing)
        return validate_submission("test", tmp_path / "ds.csv", sub)

    return write


@pytest.mark.parametrize("header", [True, False])
def test_valid_file_passes(files, header):
    report = files(submission_lines(header))
    assert report.ok and report.n_errors == 0
    assert report.summary() == SUCCESS


def test_gzip_and_task_aliases(tmp_path):
    (tmp_path / "ds.csv.gz").write_bytes(gzip.compress(dataset_text().encode()))
    (tmp_path / "sub.csv.gz").write_bytes(gzip.compress("\n".join(submission_lines()).encode()))
    report = validate_submission("2025:TEST", tmp_path / "ds.csv.gz", tmp_path / "sub.csv.gz")
    assert report.ok
    with pytest.raises(ConfigError):
        validate_submission("2025:e", tmp_path / "ds.csv.gz", tmp_path / "sub.csv.gz")


def test_2024_ranges_are_upper_exclusive(files, tmp_path):
    files(submission_lines())
    report = validate_submission("2024:test", tmp_path / "ds.csv", tmp_path / "sub.csv")
    assert not report.ok
    assert [(u, "not a target uid" in m) for _, u, m in report.errors] == [(60, True)]


def test_header_only_on_line_zero(files):
    lines = submission_lines()
    lines.insert(5, "uid,d,t,x,y")
    report = files(lines)
    assert report.n_errors == 1
    assert report.errors[0][0] == 5
    assert "Each column must be numeric" in report.errors[0][2]


def test_every_line_error_is_reported(files):
    lines = submission_lines()
    lines[1] = "50,60,3,10"  # 4 fields
    lines[2] = "50,60,7,10,20,1"  # 6 fields
    lines[3] = "50,61,0,1O,20"  # letter O
    lines[4] = "51,60,3,-5,20"  # negative
    lines[5] = "51,60,7,10.5,20"  # decimal
    lines[6] = "51,61,0, 10,20"  # space
    lines[7] = "52,59,3,10,20"  # d out of range
    lines[8] = "52,60,48,10,20"  # t out of range
    lines[9] = "52,61,0,201,0"  # x and y out of range
    report = files(lines)
    by_line = {}
    for line, uid, message in report.errors:
        by_line.setdefault(line, []).append((uid, message))
    assert "The number of columns must be 5" in by_line[1][0][1]
    assert "The number of columns must be 5" in by_line[2][0][1]
    for line in (3, 4, 5, 6):
        assert "Each column must be numeric" in by_line[line][0][1]
    assert by_line[4][0][0] == 51  # the uid is still named
    assert "d=59 is out of range" in by_line[7][0][1]
    assert "t=48 is out of range" in by_line[8][0][1]
    assert sorted(m.split(": ")[1] for _, m in by_line[9]) == [
        "x=201 is out of range",
        "y=0 is out of range",
    ]
    # every row of uids 50 and 51 is unparseable; uid 52 has a wrong (d, t) at step 0
    uid_errors = {uid: m for _, uid, m in report.errors if "uid" in m}
    assert "missing from the submission" in uid_errors[50]
    assert "missing from the submission" in uid_errors[51]
    assert "(d, t) = (59, 3) for generated" in uid_errors[52]
    assert report.n_errors == len(report.errors) == 10 + 3


def test_trailing_empty_line(files):
    report = files(submission_lines(), trailing="\n\n")
    assert report.n_errors == 1
    line, uid, message = report.errors[0]
    assert line == len(submission_lines()) and uid is None
    assert "The number of columns must be 5" in message


def test_trailing_whitespace_and_crlf_are_accepted(files, tmp_path):
    lines = [line + "  " for line in submission_lines()]
    assert files(lines).ok
    (tmp_path / "sub.csv").write_bytes(("\r\n".join(submission_lines()) + "\r\n").encode())
    assert validate_submission("test", tmp_path / "ds.csv", tmp_path / "sub.csv").ok


def test_missing_and_extra_uids(files):
    lines = [line for line in submission_lines() if not line.startswith("55,")]
    lines += ["61,60,3,10,20", "70,60,3,10,20"]
    report = files(lines)
    found = {(uid, "missing" in m, "not a target" in m) for _, uid, m in report.errors}
    assert found == {(55, True, False), (61, False, True), (70, False, True)}


def test_wrong_order_and_wrong_count(files):
    lines = submission_lines()
    lines[1], lines[2] = lines[2], lines[1]  # uid 50: (60,7) before (60,3)
    lines = [line for line in lines if line != "53,61,0,10,20"]  # uid 53: one step short
    lines.append("54,62,0,10,20")  # uid 54: one step too many
    report = files(lines)
    assert report.n_errors == 3
    by_uid = {uid: m for _, uid, m in report.errors}
    assert (
        "(d, t) = (60, 7) for generated while (d, t) = (60, 3) for reference at step 0"
        in (by_uid[50])
    )
    assert "(2 submitted vs 3 steps)" in by_uid[53]
    assert "(4 submitted vs 3 steps)" in by_uid[54]


def test_uid_missing_from_dataset_does_not_crash(files):
    report = files(submission_lines(), dataset=dataset_text(uids=[u for u in UIDS if u != 57]))
    assert report.n_errors == 1
    assert report.errors[0][1] == 57 and "no rows in the dataset" in report.errors[0][2]


def test_errors_are_capped_but_counted(files):
    lines = [line.replace(",10,20", ",0,0") for line in submission_lines()]
    report = files(lines)
    assert report.n_errors == 2 * (len(lines) - 1)  # x and y on every data line
    assert len(report.errors) == MAX_KEPT
    assert f"{report.n_errors} error(s)" in report.summary()
    assert [line for line, _, _ in report.errors] == [i // 2 + 1 for i in range(MAX_KEPT)]


@pytest.mark.parametrize(
    "uid",
    [str(2**63), str(2**64 + 50), "9" * 4300, "1" * 5000],
    ids=["int64+1", "2^64+50", "4300 digits", "5000 digits"],
)
def test_an_extra_line_whose_uid_overflows_is_reported(files, uid):
    """A valid file plus one line whose uid does not fit in int64 (or in Python's int() limit):
    invalid, that line named (it used to become a null uid that no check saw)."""
    lines = submission_lines() + [f"{uid},60,3,10,20"]
    report = files(lines)
    assert not report.ok and report.n_errors == 1, report.summary()
    line, _, message = report.errors[0]
    assert line == len(lines) - 1
    assert "too large to be a target uid" in message
    assert len(message) < 200  # the number is quoted shortened


@pytest.mark.parametrize("column", [1, 2, 3, 4])
def test_an_overflowing_step_field_is_reported(files, column):
    lines = submission_lines()
    cols = lines[3].split(",")
    cols[column] = "9" * 4300
    lines[3] = ",".join(cols)
    report = files(lines)
    assert not report.ok
    assert any(line == 3 and "too large" in m for line, _, m in report.errors), report.summary()


def test_a_bad_line_with_a_huge_first_field_names_no_uid(files):
    lines = submission_lines() + ["9" * 4300 + ",60,3"]
    report = files(lines)
    assert report.n_errors == 1
    assert report.errors[0][1] is None
    assert "The number of columns must be 5" in report.errors[0][2]


def test_unicode_space_at_the_end_is_not_stripped(files):
    lines = submission_lines()
    lines[2] += "\u00a0"
    report = files(lines)
    assert report.errors[0][0] == 2  # (and uid 50 is then one step short)
    assert "Each column must be numeric (found '20\\xa0')" in report.errors[0][2]


def test_unreadable_submissions_are_input_errors(tmp_path):
    (tmp_path / "ds.csv").write_text(dataset_text())
    whole = gzip.compress("\n".join(submission_lines()).encode())
    cases = {
        "truncated.csv.gz": (whole[: len(whole) // 2], "truncated"),
        "garbage-after.csv.gz": (whole + b"garbage!", "cannot read the submission"),
        "latin1.csv": ("\n".join(submission_lines()).encode() + b"\n50,60,3,10,\xe9\n", "UTF-8"),
    }
    for name, (data, fragment) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(InputError) as info:
            validate_submission("test", tmp_path / "ds.csv", tmp_path / name)
        assert fragment in str(info.value) and name in str(info.value)


def test_the_report_is_the_same_for_any_block_size(files, monkeypatch):
    """The submission is read in blocks of whole lines: the same errors, in the same order, and
    the same line indices, whatever the block size (a blank last line without its LF kept)."""
    lines = submission_lines()
    lines[3] = "50,60,x,10,20"
    lines[9] = "9" * 30 + ",60,3,10,20"
    lines[12] += ",1"
    lines[20] = "51,99,3,10,20"
    whole = files(lines, trailing="\n  ")
    assert whole.n_errors > 5 and whole.n_lines == len(lines) + 1
    for block_bytes in (1, 7, 64):
        monkeypatch.setattr(humob, "SUBMISSION_BLOCK_BYTES", block_bytes)
        assert files(lines, trailing="\n  ") == whole


@pytest.mark.parametrize(
    "dataset, fragment",
    [
        ("", "no rows"),
        ("uid,d,t,x,y\n", "no rows"),
        ("uid,d,t,x,y\n50,60\n", "line 2 has 2 field(s), expected 5 (uid,d,t,x,y)"),
        ("uid,d,t,x,y\n50,60,3,1,1,7\n", "line 2 has 6 field(s), expected 5"),
        ("uid,d,t,x,y\n50,60,3,1,1\n\n50,60,7,1,1\n", "line 3 has 1 field(s)"),
        ("uid,d,t,x,y\n50,60,x,1,1\n", "line 2, column 't': 'x' is not an integer"),
        ("uid,d,t,x,y\n50,60,3,1,y\n", "line 2, column 'y': 'y' is not an integer"),
        ("uid,d,t,x,y\n50,60,,1,1\n", "line 2, column 't' is empty or missing"),
        ("uid,d,t,x,y\n50,60,3,1,1\n" + "9" * 20 + ",60,3,1,1\n", "'" + "9" * 20 + "' does not"),
    ],
)
def test_unreadable_datasets_are_input_errors(tmp_path, dataset, fragment):
    (tmp_path / "ds.csv").write_text(dataset)
    (tmp_path / "sub.csv").write_text("\n".join(submission_lines()) + "\n")
    with pytest.raises(InputError) as info:
        validate_submission("test", tmp_path / "ds.csv", tmp_path / "sub.csv")
    assert fragment in str(info.value)


def test_dataset_fields_are_read_as_the_reference_reads_them(files):
    """The reference int()s every field of a line stripped of trailing blanks: blanks around a
    field and at the end of a line are read, the first line's ``uid`` header skipped."""
    lines = dataset_text().splitlines()
    spaced = [lines[0]] + [" " + line.replace(",", " ,\t") + " \t" for line in lines[1:]]
    assert files(submission_lines(), dataset="\n".join(spaced) + "\n").ok


# --------------------------------------------------------------------------- fuzz vs an oracle

FUZZ_CASES = int(os.environ.get("MOBEVAL_FUZZ_CASES", "400"))
SAMPLES = REPO_ROOT / "data_samples" / "humob"
TASK = TASKS["test"]
BLANKS = " \t\n\r\x0b\x0c"


def _number(text: str) -> int:
    """An all-digit field as an int; longer than 40 digits stands for 'huge' (Python refuses
    int() of more than 4,300 digits; any such number is out of every range here)."""
    digits = text.lstrip("0") or "0"
    return int(digits) if len(digits) <= 40 else 10**41


def oracle(submission: bytes, dataset_text: str) -> int:
    """The rules in plain Python, line by line as the reference reads a text file: 0 valid,
    1 invalid, 2 unreadable (a corrupt gzip stream, not UTF-8)."""
    data = submission
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            return 2
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return 2
    steps: dict[int, list] = {}
    for index, line in enumerate(io.StringIO(text, newline=None)):
        if index == 0 and line.startswith("uid,"):
            continue
        cols = line.rstrip(BLANKS).split(",")
        if len(cols) != 5 or not all(c and all("0" <= ch <= "9" for ch in c) for c in cols):
            return 1
        uid, d, t, x, y = (_number(c) for c in cols)
        if not (TASK.d_min <= d <= TASK.d_max and 0 <= t <= 47 and 1 <= x <= 200 >= y >= 1):
            return 1
        steps.setdefault(uid, []).append((d, t))
    if set(steps) != set(range(TASK.uid_min, TASK.uid_max + 1)):
        return 1
    reference: dict[int, list] = {}
    for line in dataset_text.splitlines()[1:]:
        uid, d, t, _, _ = (int(c) for c in line.split(","))
        if TASK.uid_min <= uid <= TASK.uid_max:
            reference.setdefault(uid, [])
            if d >= TASK.d_min:
                reference[uid].append((d, t))
    for uid, submitted in steps.items():
        if uid not in reference or reference[uid] != submitted:
            return 1
    return 0


JUNK = ["a", "-", ".", " ", "", "+", "1e3", "٣", "½", "\x00", "\t", ",", '"', "０"]
HUGE = [str(2**63), str(2**64), "9" * 4300, "1" * 5000, "0" * 60 + "55", str(2**63 - 1)]


def _mutate_line(rng: random.Random, line: str) -> str:
    cols = line.split(",")
    i = rng.randrange(len(cols))
    kind = rng.randrange(7)
    if kind == 0 and cols[i]:  # one digit changed
        j = rng.randrange(len(cols[i]))
        cols[i] = cols[i][:j] + rng.choice("0123456789") + cols[i][j + 1 :]
    elif kind == 1:  # junk in a field
        j = rng.randrange(len(cols[i]) + 1)
        cols[i] = cols[i][:j] + rng.choice(JUNK) + cols[i][j:]
    elif kind == 2:
        cols[i] = rng.choice(HUGE)
    elif kind == 3:
        cols[i] = ""
    elif kind == 4:
        cols.insert(i, rng.choice(["1", ""]))
    elif kind == 5:
        del cols[i]
    else:
        return line + rng.choice([" ", "\t", "  \t", "\x0c", "\xa0"])
    return ",".join(cols)


def mutate(rng: random.Random, lines: list[str]) -> bytes:
    """1-3 mutations of the line list, then how it is written (newlines, header, gzip)."""
    lines = list(lines)
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(9)
        i = rng.randrange(len(lines)) if lines else 0
        if kind <= 2 and lines:
            lines[i] = _mutate_line(rng, lines[i])
        elif kind == 3 and lines:
            del lines[i]
        elif kind == 4 and lines:
            lines.insert(i, lines[i])
        elif kind == 5 and lines:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == 6:
            junk = "".join(rng.choice("0123456789,uid \t-x") for _ in range(rng.randrange(12)))
            lines.insert(i, junk)
        elif kind == 7:
            lines.insert(i, "uid,d,t,x,y")
        elif kind == 8 and lines:
            lines[i] = str(rng.choice([TASK.uid_min - 1, TASK.uid_max + 1])) + lines[i][2:]
    newline = rng.choice(["\n", "\n", "\r\n", "\r"])
    text = newline.join(lines) + rng.choice(["", newline, newline + newline])
    data = text.encode()
    form = rng.randrange(12)
    if form == 0:
        data = gzip.compress(data)
    elif form == 1:  # truncated gzip
        data = gzip.compress(data)
        data = data[: rng.randrange(2, len(data) - 1)]
    elif form == 2:  # gzip followed by garbage
        data = gzip.compress(data) + b"garbage"
    elif form == 3:  # a byte that is not UTF-8
        j = rng.randrange(len(data) + 1)
        data = data[:j] + rng.choice([b"\xff", b"\xc3", b"\x80"]) + data[j:]
    elif form == 4:  # cut anywhere
        data = data[: rng.randrange(len(data) + 1)]
    elif form == 5:
        data = b"\xef\xbb\xbf" + data  # a BOM
    return data


@pytest.fixture(scope="module")
def fuzz_dataset(tmp_path_factory):
    """The sample city cut down to uids 45..60 from day 58 (the target rows are all there)."""
    text = gzip.decompress((SAMPLES / "city_test_challengedata.csv.gz").read_bytes()).decode()
    lines = text.splitlines()
    kept = [lines[0]]
    for line in lines[1:]:
        uid, d = (int(c) for c in line.split(",")[:2])
        if uid >= 45 and d >= 58:
            kept.append(line)
    path = tmp_path_factory.mktemp("fuzz") / "dataset.csv"
    path.write_text("\n".join(kept) + "\n")
    return path


def test_fuzzed_submissions_match_the_oracle(fuzz_dataset, tmp_path, capsys):
    """Mutated sample submissions: the exit code is the oracle's (0 valid, 1 invalid, 2
    unreadable), exit 2 comes with one 'mobeval: error:' line, and nothing escapes as an
    exception (MOBEVAL_FUZZ_CASES=N for a longer run)."""
    dataset_text = fuzz_dataset.read_text()
    bases = []
    for name in ("home_only.csv.gz", "weekly_repeat.csv.gz"):
        bases.append(gzip.decompress((SAMPLES / name).read_bytes()).decode().splitlines())
    assert oracle("\n".join(bases[0]).encode(), dataset_text) == 0
    rng = random.Random(20251122)
    seen = {0: 0, 1: 0, 2: 0}
    submission = tmp_path / "submission.csv"
    for case in range(FUZZ_CASES):
        lines = rng.choice(bases)
        if rng.random() < 0.5:
            lines = ["uid,d,t,x,y", *lines]
        data = mutate(rng, lines)
        submission.write_bytes(data)
        expected = oracle(data, dataset_text)
        code = main(
            ["validate", "--task", "test"]
            + ["--dataset", str(fuzz_dataset), "--submission", str(submission)]
        )
        out, err = capsys.readouterr()
        assert code == expected, (case, data[:300], out[:2000], err)
        if code == 2:
            assert err.count("\n") == 1 and err.startswith("mobeval: error: "), err
        else:
            assert err == "", err
            assert (out.strip() == SUCCESS) == (code == 0), out[:500]
        seen[code] += 1
    print(f"validator fuzz: {FUZZ_CASES} cases, exit codes {seen}")
    assert min(seen.values()) > 0, seen  # the mutations reach every outcome


def test_the_step_check_streams_across_blocks(files, monkeypatch):
    """The steps are compared block by block, a uid's position carried from block to block: rows
    of several uids interleaved, a (d, t) differing only at a late step, a uid one row short, the
    same report for any block size (one line per block included) and for any dataset block."""
    by_uid = {u: [f"{u},{d},{t},10,20" for d, t in STEPS if d >= 60] for u in UIDS}
    by_uid[52][2] = "52,61,1,10,20"  # step 2 of uid 52: (61, 1) where the dataset has (61, 0)
    by_uid[53].pop()  # uid 53: 2 rows for 3 steps
    lines = [row for step in range(3) for u in UIDS for row in by_uid[u][step : step + 1]]
    expected = [
        (None, 53, "Error occurring regarding uid 53: The length doesn't match between the "
         "generated and reference trajectories (2 submitted vs 3 steps)."),
        (24, 52, "Error occurring regarding uid 52: Day and time are not the same; (d, t) = "
         "(61, 1) for generated while (d, t) = (61, 0) for reference at step 2 of the "
         "trajectory (line index 24)."),
    ]  # fmt: skip
    assert files(lines, trailing="\n").errors == expected
    for block_bytes in (1, 7, 64):
        monkeypatch.setattr(humob, "SUBMISSION_BLOCK_BYTES", block_bytes)
        monkeypatch.setattr(humob, "DATASET_BLOCK_BYTES", block_bytes)
        assert files(lines, trailing="\n").errors == expected
