"""HuMob submission validator: every kind of break in small hand-made files."""

import gzip

import pytest

from pipeline.errors import ConfigError
from pipeline.validate.humob import MAX_KEPT, SUCCESS, validate_submission

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
