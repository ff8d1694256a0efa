"""A Parquet source's batches: cut from the row groups Polars' reader decodes, or pyarrow's (small
files, row groups beyond the batches, other types), the same frames either way
(mobeval.io.parquet_batches)."""

from __future__ import annotations

import itertools

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mobeval.errors import InputError
from mobeval.io import parquet_batches
from mobeval.io.sources import Source

COLUMNS = ["user_id", "name", "score", "flag", "count"]


def table(rows: int) -> pa.Table:
    return pa.table(
        {
            "user_id": pa.array([i // 3 for i in range(rows)], pa.int64()),
            "name": pa.array([f"n{i % 7}" if i % 5 else None for i in range(rows)], pa.string()),
            "score": pa.array([i / 7 for i in range(rows)], pa.float64()),
            "flag": pa.array([i % 2 == 0 for i in range(rows)], pa.bool_()),
            "count": pa.array([i % 250 for i in range(rows)], pa.uint8()),
        }
    )


def write(path, rows: int, group_rows: int, **options) -> str:
    pq.write_table(table(rows), path, row_group_size=group_rows, **options)
    return str(path)


@pytest.fixture(autouse=True)
def small_batches(monkeypatch):
    """Polars reads batches of 100 rows (the files here are small)."""
    monkeypatch.setattr(parquet_batches, "POLARS_ROWS", 100)


def pyarrow_frames(path: str, columns, batch_rows: int) -> list[pl.DataFrame]:
    """The oracle: pyarrow's batches of the file, as Polars frames."""
    batches = pq.ParquetFile(path).iter_batches(batch_size=batch_rows, columns=columns)
    return [pl.from_arrow(batch) for batch in batches]


def assert_same(frames, expected) -> None:
    assert [f.height for f in frames] == [e.height for e in expected]
    for frame, want in zip(frames, expected, strict=True):
        assert frame.schema == want.schema
        assert frame.equals(want)
        assert frame.n_chunks("all") == [1] * frame.width


def refuse_pyarrow(monkeypatch) -> None:
    """pyarrow's batch reader refused: a read that needs it fails."""

    def refused(*args, **kwargs):
        raise AssertionError("pyarrow's iter_batches was called")

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", refused)


@pytest.mark.parametrize(("group_rows", "batch_rows"), [(100, 100), (50, 100), (25, 200)])
def test_batches_on_row_groups_are_read_by_polars(tmp_path, monkeypatch, group_rows, batch_rows):
    """Every batch starts on a row group (one group a batch, or several): the frames are
    pyarrow's, one chunk per column, and pyarrow's batch reader is not used (fails before)."""
    path = write(tmp_path / "a.parquet", 1030, group_rows)
    columns = ["score", "user_id", "name", "flag", "count"]
    expected = pyarrow_frames(path, columns, batch_rows)
    refuse_pyarrow(monkeypatch)
    assert_same(list(Source.resolve(path).iter_batches(columns, batch_rows)), expected)


@pytest.mark.parametrize(
    ("group_rows", "batch_rows"), [(100, 30), (300, 250), (1000, 333), (70, 200), (1000, 250)]
)
def test_batches_inside_row_groups_are_cut_from_polars_spans(
    tmp_path, monkeypatch, group_rows, batch_rows
):
    """A batch starting inside a row group (or running across groups that do not start
    batches): Polars decodes whole groups and the batches are cut from them, pyarrow's frames
    all the same, one chunk per column, pyarrow's batch reader not used (fails before)."""
    path = write(tmp_path / "a.parquet", 1000, group_rows)
    expected = pyarrow_frames(path, COLUMNS, batch_rows)
    refuse_pyarrow(monkeypatch)
    assert_same(list(Source.resolve(path).iter_batches(COLUMNS, batch_rows)), expected)


@pytest.mark.parametrize(("group_rows", "batch_rows"), [(100, 30), (70, 200), (25, 40)])
def test_each_read_decodes_a_batch_and_a_row_group_at_most(
    tmp_path, monkeypatch, group_rows, batch_rows
):
    """Memory: each span Polars decodes starts on a row group and holds at most the rows of a
    batch (or POLARS_ROWS) and one row group more; together they cover the file once."""
    path = write(tmp_path / "a.parquet", 1000, group_rows)
    starts = set(range(0, 1000, group_rows))
    slice_ = pl.LazyFrame.slice
    spans = []

    def recorded(self, offset, length=None):
        spans.append((offset, length))
        return slice_(self, offset, length)

    monkeypatch.setattr(pl.LazyFrame, "slice", recorded)
    frames = list(Source.resolve(path).iter_batches(COLUMNS, batch_rows))
    assert sum(f.height for f in frames) == 1000
    assert [offset for offset, _ in spans] == list(
        itertools.accumulate([0] + [length for _, length in spans[:-1]])
    )
    assert sum(length for _, length in spans) == 1000
    for offset, length in spans:
        assert offset in starts
        assert length < max(batch_rows, parquet_batches.POLARS_ROWS) + group_rows


@pytest.mark.parametrize("batch_rows", [100, 999])
def test_row_groups_beyond_the_batches_and_group_rows_are_read_by_pyarrow(
    tmp_path, monkeypatch, batch_rows
):
    """A row group larger than a batch and than GROUP_ROWS (memory would grow with the group,
    not the batch): pyarrow reads the file, a batch at a time."""
    path = write(tmp_path / "a.parquet", 1000, 1000)
    monkeypatch.setattr(parquet_batches, "GROUP_ROWS", 500)
    refuse_pyarrow(monkeypatch)
    with pytest.raises(AssertionError, match="iter_batches was called"):
        list(Source.resolve(path).iter_batches(COLUMNS, batch_rows))


def test_other_types_are_read_by_pyarrow(tmp_path):
    """A dictionary column (a Categorical in Polars) is pyarrow's to read, as before."""
    data = table(200).append_column("city", pa.array(["a", "b"] * 100).dictionary_encode())
    path = str(tmp_path / "a.parquet")
    pq.write_table(data, path, row_group_size=100)
    frames = list(Source.resolve(path).iter_batches(["user_id", "city"], 100))
    assert_same(frames, pyarrow_frames(path, ["user_id", "city"], 100))


def test_metadata_not_utf8_is_read_by_pyarrow(tmp_path, monkeypatch):
    """Metadata bytes that are not UTF-8 (Polars panics on them): pyarrow reads the file (here
    refused, so the read fails where Polars would have taken it)."""
    data = table(200).replace_schema_metadata({b"note": b"\xff\xfe"})
    path = str(tmp_path / "a.parquet")
    pq.write_table(data, path, row_group_size=100)
    refuse_pyarrow(monkeypatch)
    with pytest.raises(AssertionError, match="iter_batches was called"):
        list(Source.resolve(path).iter_batches(COLUMNS, 100))


@pytest.mark.parametrize(
    ("batch_rows", "failed"),
    [(200, 3), (30, 2)],
    ids=["on a row group", "inside a row group"],
)
def test_a_span_polars_cannot_read_is_read_by_pyarrow_from_there(
    tmp_path, monkeypatch, batch_rows, failed
):
    """Polars fails on a read (the third span, whose batch starts on a row group; the second,
    the next batch starting inside a group, row 90): pyarrow reads the file from the first row
    not yet yielded on, the frames the same as pyarrow's own, in the same batches."""
    path = write(tmp_path / "a.parquet", 1000, 100)
    collect = pl.LazyFrame.collect
    calls = []

    def failing(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == failed:
            raise pl.exceptions.ComputeError("cannot read")
        return collect(self, *args, **kwargs)

    monkeypatch.setattr(pl.LazyFrame, "collect", failing)
    frames = list(Source.resolve(path).iter_batches(COLUMNS, batch_rows))
    assert len(calls) == failed
    assert_same(frames, pyarrow_frames(path, COLUMNS, batch_rows))


def test_damaged_row_group_raises_pyarrows_error(tmp_path):
    """A damaged page in the second row group: the error pyarrow raised before, naming the file,
    after the first batch."""
    path = tmp_path / "a.parquet"
    write(path, 1000, 500, compression="snappy")
    data = bytearray(path.read_bytes())
    second = pq.ParquetFile(path).metadata.row_group(1).column(2)
    start = second.data_page_offset + 10
    data[start : start + 40] = b"\xff" * 40
    path.write_bytes(bytes(data))
    with pytest.raises(Exception) as before:  # pyarrow's own error, what mobeval reported
        pyarrow_frames(str(path), COLUMNS, 500)
    source = Source.resolve(str(path))
    batches = source.iter_batches(COLUMNS, 500)
    assert next(batches).height == 500
    with pytest.raises(InputError) as error:
        next(batches)
    assert str(path) in str(error.value)
    assert str(before.value).strip().splitlines()[0] in str(error.value)


def test_small_files_are_read_by_pyarrow(tmp_path, monkeypatch):
    """A file of fewer than POLARS_ROWS rows (Polars' fixed cost a read outweighs its faster
    decoding): pyarrow reads it, as before."""
    path = write(tmp_path / "a.parquet", 1000, 100)
    monkeypatch.setattr(parquet_batches, "POLARS_ROWS", 1001)
    refuse_pyarrow(monkeypatch)
    with pytest.raises(AssertionError, match="iter_batches was called"):
        list(Source.resolve(path).iter_batches(COLUMNS, 100))


def test_empty_file_yields_what_pyarrow_yields(tmp_path):
    path = str(tmp_path / "a.parquet")
    pq.write_table(table(0), path)
    frames = list(Source.resolve(path).iter_batches(COLUMNS, 100))
    assert_same(frames, pyarrow_frames(path, COLUMNS, 100))
