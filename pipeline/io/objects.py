"""Python objects as input sources of the evaluation engine (what a notebook holds).

Each source streams DataFrames of the columns asked for, as a file source does
(:class:`mobeval.io.sources.Source`):

* a Polars DataFrame (a pandas DataFrame, an Arrow Table or RecordBatch is converted to one,
  zero-copy where Arrow allows): sliced into batches (:class:`FrameSource`);
* a Polars LazyFrame: run by Polars' streaming engine batch by batch, never collected
  (:class:`LazySource`), e.g. ``pl.scan_parquet("s3://...")``; it is run once per pass the
  engine makes over the input;
* an Arrow Dataset (``pyarrow.dataset``): scanned batch by batch (:class:`DatasetSource`);
* an Arrow RecordBatchReader, or any object with ``__arrow_c_stream__`` (a DuckDB relation...):
  read once, as it streams, into a temporary Parquet file that the engine then reads as any
  Parquet file (memory: one batch), removed with the source (:func:`spooled`);
* a dict of dicts ``{unit: {item: value}}``, the shape of a ranx / pytrec_eval run or qrels
  (:class:`MappingSource`).

Anything else is refused with :class:`InputTypeError`, whose message lists what is accepted.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from numbers import Integral, Number
from pathlib import Path

import polars as pl
import pyarrow as pa

from mobeval.errors import InputError
from mobeval.io.scratch import ScratchFolder
from mobeval.io.sources import Source, SpooledSource, plain_batch, plain_schema
from mobeval.io.whole import library_error

ACCEPTED = (
    "a path or URL (Parquet file, directory or glob; CSV; TREC run or qrels; RecBole .inter), "
    "a Polars DataFrame or LazyFrame, a pandas DataFrame, an Arrow Table, RecordBatchReader or "
    "Dataset, an object with __arrow_c_stream__, or a dict of dicts {unit: {item: value}}"
)
#: The columns a dict of dicts ``{unit: {item: value}}`` answers to, by role: each family finds
#: its own names (recs: user_id, item_id, rating / score; nextloc: sample_id or qid, location,
#: score). ``location`` exists when every item is an integer (or a string of one).
MAPPING_COLUMNS = {
    "unit": ("user_id", "sample_id", "qid"),
    "item": ("item_id", "docno"),
    "location": ("location",),
    "value": ("score", "rating", "rel"),
}
_INTEGER_TEXT = r"^[+-]?\d{1,18}$"


class InputTypeError(InputError, TypeError):
    """An input of a type mobeval does not read (also a TypeError)."""

    def __init__(self, what: str, data: object, accepted: str = ACCEPTED) -> None:
        super().__init__(f"cannot read {what} of type {type(data).__name__}; expected {accepted}")


def _missing(columns, present, label: str) -> None:
    missing = [c for c in columns if c not in present]
    if missing:
        raise InputError(
            f"missing column; columns present: {list(present)}", path=label, column=missing[0]
        )


@dataclass(frozen=True)
class FrameSource:
    """An in-memory Polars DataFrame, sliced into batches."""

    frame: pl.DataFrame
    label: str = "<DataFrame>"

    def schema(self) -> dict[str, pl.DataType]:
        return dict(self.frame.schema)

    def row_count_estimate(self) -> int:
        return self.frame.height

    def has_rows(self) -> bool:
        return self.frame.height > 0

    def iter_batches(self, columns: list[str], batch_rows: int) -> Iterator[pl.DataFrame]:
        _missing(columns, self.frame.columns, self.label)
        selected = self.frame.select(columns)
        for offset in range(0, max(selected.height, 1), batch_rows):
            yield selected.slice(offset, batch_rows)

    def fingerprint(self) -> list[dict]:
        return [{"path": self.label, "rows": self.frame.height}]


@dataclass(frozen=True)
class LazySource:
    """A Polars LazyFrame run by the streaming engine, ``batch_rows`` rows at a time
    (``LazyFrame.collect_batches``): memory holds a batch, not the frame. An error of the query
    (a scanned file missing, a failed cast) is an InputError naming this input."""

    frame: pl.LazyFrame
    label: str = "<LazyFrame>"

    def _run(self, what, query):
        try:
            return query()
        except (pl.exceptions.PolarsError, OSError) as error:
            reason = (str(error).strip().splitlines() or [type(error).__name__])[0][:200]
            message = f"could not {what} the LazyFrame ({reason})"
            raise InputError(message, path=self.label) from None

    def schema(self) -> dict[str, pl.DataType]:
        return dict(self._run("resolve the schema of", self.frame.collect_schema))

    def row_count_estimate(self) -> int:
        count = self.frame.select(pl.len())
        return int(self._run("count the rows of", lambda: count.collect(engine="streaming")).item())

    def has_rows(self) -> bool:
        head = self.frame.head(1)
        return self._run("run", lambda: head.collect(engine="streaming")).height > 0

    def iter_batches(self, columns: list[str], batch_rows: int) -> Iterator[pl.DataFrame]:
        _missing(columns, self.schema(), self.label)
        query = self.frame.select(columns)
        batches = self._run("run", lambda: iter(query.collect_batches(chunk_size=batch_rows)))
        while (batch := self._run("run", lambda: next(batches, None))) is not None:
            yield batch

    def fingerprint(self) -> list[dict]:
        return [{"path": self.label, "plan": self.frame.explain(optimized=False)}]


@dataclass(frozen=True)
class DatasetSource:
    """An Arrow Dataset (``pyarrow.dataset``), scanned ``batch_rows`` rows at a time in its
    fragments' order."""

    dataset: object
    label: str = "<Arrow Dataset>"

    def schema(self) -> dict[str, pl.DataType]:
        empty = plain_schema(self.dataset.schema).empty_table()
        return dict(pl.from_arrow(empty).schema)

    def row_count_estimate(self) -> int:
        return self.dataset.count_rows()

    def has_rows(self) -> bool:
        return self.dataset.head(1).num_rows > 0

    def iter_batches(self, columns: list[str], batch_rows: int) -> Iterator[pl.DataFrame]:
        _missing(columns, self.dataset.schema.names, self.label)
        try:
            for batch in self.dataset.to_batches(columns=list(columns), batch_size=batch_rows):
                yield pl.from_arrow(plain_batch(batch))
        except (pa.ArrowException, OSError) as error:
            message = f"could not scan the Arrow Dataset ({error})"
            raise InputError(message, path=self.label) from None

    def fingerprint(self) -> list[dict]:
        files = getattr(self.dataset, "files", None)
        return [{"path": self.label, "files": list(files) if files else None}]


@dataclass(frozen=True)
class MappingSource:
    """A dict of dicts ``{unit: {item: value}}`` (a ranx ``Run`` / ``Qrels`` dict, a
    pytrec_eval run or qrels) as rows (unit, item, value) in the dicts' order: a unit's items in
    the order they were inserted, which is the list order of a convention that reads the file
    order. Its columns are the names of :data:`MAPPING_COLUMNS`. Units, and items, are all
    integers or all strings; values numbers (read as float64)."""

    rows: pl.DataFrame  # unit, item, value (and location)
    label: str = "<dict>"

    @classmethod
    def build(cls, data: Mapping, label: str) -> MappingSource:
        bad = next((u for u, row in data.items() if not isinstance(row, Mapping)), None)
        if bad is not None:
            raise InputError(
                f"{type(data[bad]).__name__} for a unit; expected a dict of dicts "
                "{unit: {item: value}}",
                path=label,
                key=bad,
            )
        units = [unit for unit, row in data.items() for _ in row]
        items = [item for row in data.values() for item in row]
        values = [value for row in data.values() for value in row.values()]
        rows = pl.DataFrame(
            {
                "unit": _ids(units, label, "unit"),
                "item": _ids(items, label, "item"),
                "value": _numbers(values, units, items, label),
            }
        )
        item = pl.col("item")
        if rows["item"].dtype == pl.String and rows.height:
            if rows.select(item.str.contains(_INTEGER_TEXT).all()).item():
                rows = rows.with_columns(item.cast(pl.Int64).alias("location"))
        elif rows["item"].dtype.is_integer():
            rows = rows.with_columns(item.alias("location"))
        return cls(rows, label)

    def _names(self) -> dict[str, str]:
        return {
            name: role
            for role, names in MAPPING_COLUMNS.items()
            if role in self.rows.columns or role == "unit"
            for name in names
        }

    def schema(self) -> dict[str, pl.DataType]:
        return {name: self.rows.schema[role] for name, role in self._names().items()}

    def row_count_estimate(self) -> int:
        return self.rows.height

    def has_rows(self) -> bool:
        return self.rows.height > 0

    def iter_batches(self, columns: list[str], batch_rows: int) -> Iterator[pl.DataFrame]:
        names = self._names()
        _missing(columns, names, self.label)
        selected = self.rows.select(pl.col(names[c]).alias(c) for c in columns)
        for offset in range(0, max(selected.height, 1), batch_rows):
            yield selected.slice(offset, batch_rows)

    def fingerprint(self) -> list[dict]:
        return [{"path": self.label, "rows": self.rows.height}]


#: The integers an id may be (Polars' Int64).
INT64 = range(-(2**63), 2**63)


def _id_kind(value: object) -> str | None:
    """``"integer"`` (a Python or NumPy integer, not a bool), ``"string"``, or None."""
    if isinstance(value, str):
        return "string"
    return "integer" if isinstance(value, Integral) and not isinstance(value, bool) else None


def _ids(values: list, label: str, role: str) -> pl.Series:
    """Ids of one role as a Series: all integers within int64 (Int64) or all strings (String);
    the first id of another type, or past int64, is an InputError naming it."""
    kind = _id_kind(values[0]) if values else "integer"
    for value in values:
        if _id_kind(value) is None:
            raise InputError(
                f"the {role} {value!r} is a {type(value).__name__}; every {role} must be an "
                "integer, or every one a string",
                path=label,
                key=repr(value),
            )
        if _id_kind(value) != kind:
            raise InputError(
                f"every {role} must be an integer, or every one a string; "
                f"found {type(values[0]).__name__} and {type(value).__name__}",
                path=label,
                key=repr(value),
            )
        if kind == "integer" and int(value) not in INT64:
            raise InputError(
                f"the {role} {value} is outside the 64-bit integers [-2**63, 2**63)",
                path=label,
                key=value,
            )
    if kind == "integer":
        return pl.Series([int(v) for v in values], dtype=pl.Int64)
    return pl.Series(values, dtype=pl.String)


def _numbers(values: list, units: list, items: list, label: str) -> pl.Series:
    """The values as float64; the first one that is not a real number, or too large for a
    float64, is an InputError."""
    numbers = []
    for unit, item, value in zip(units, items, values, strict=True):
        try:
            if isinstance(value, bool) or not isinstance(value, Number):
                raise TypeError
            numbers.append(float(value))  # a complex number: TypeError
        except (TypeError, OverflowError) as error:
            why = "too large for a float64" if isinstance(error, OverflowError) else "not a number"
            raise InputError(
                f"the value {value!r} is {why}", path=label, key=f"{unit!r}: {item!r}"
            ) from None
    return pl.Series(numbers, dtype=pl.Float64)


def spooled(stream, label: str):
    """A one-pass Arrow stream (a RecordBatchReader, or any ``__arrow_c_stream__``) written batch
    by batch to a temporary Parquet file, as a :class:`mobeval.io.sources.Source` of that file
    (the engine reads an input more than once). The folder (:class:`ScratchFolder`) goes when the
    source is collected, at once if the stream fails, or with the next spool after a kill.
    Whatever the producer raises (a capsule that is not one, a failing batch) is an InputError
    naming the input."""
    import pyarrow.parquet as pq

    folder = ScratchFolder(tempfile.gettempdir(), "mobeval-stream-")
    path = folder.path / "stream.parquet"
    rows, spool = 0, _Spool(path)
    try:
        reader = stream if isinstance(stream, pa.RecordBatchReader) else None
        reader = reader or pa.RecordBatchReader.from_stream(stream)
        schema = plain_schema(reader.schema)
        with spool.writing():
            writer = pq.ParquetWriter(path, schema)
        try:
            for batch in reader:
                with spool.writing():
                    writer.write_batch(pa.RecordBatch.from_arrays(batch.columns, schema=schema))
                rows += batch.num_rows
        finally:
            with spool.writing():
                writer.close()  # the footer: a file cut short here is no Parquet file
    except BaseException as error:
        folder.close()
        if not isinstance(error, Exception):
            raise  # Ctrl-C, SIGTERM: the folder is gone, the interruption goes on
        if spool.failed is not None:  # the spool file's own write (a full disk), not the stream
            raise spool.failed from None
        reason = (str(error).strip().splitlines() or [""])[0][:200]
        message = f"could not read the Arrow stream ({type(error).__name__}: {reason})"
        raise InputError(message, path=label) from None
    base = Source.resolve(path)
    source = SpooledSource(label, base.files, base.format, rows=rows)
    weakref.finalize(source, folder.close)
    return source


class _Spool:
    """Tells the spool file's failed writes (an OSError naming it and the free space:
    :func:`~mobeval.io.whole.library_error`) from the stream's own failures."""

    def __init__(self, path: Path) -> None:
        self.path, self.failed = path, None

    @contextlib.contextmanager
    def writing(self):
        try:
            yield
        except OSError as error:
            self.failed = self.failed or library_error(error, self.path) or error
            raise


def object_source(data, label: str | None = None):
    """The source of an in-memory object (see the module's list); InputTypeError otherwise."""
    if isinstance(data, pl.DataFrame):
        return FrameSource(data, label or "<DataFrame>")
    if isinstance(data, pl.LazyFrame):
        return LazySource(data, label or "<LazyFrame>")
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(data, pandas.DataFrame):
        try:
            return FrameSource(pl.from_pandas(data), label or "<pandas DataFrame>")
        except (pa.ArrowException, pl.exceptions.PolarsError, TypeError, ValueError) as error:
            message = f"could not convert the pandas DataFrame ({error})"
            raise InputError(message, path=label or "<pandas DataFrame>") from None
    if isinstance(data, pa.Table | pa.RecordBatch):
        return FrameSource(pl.from_arrow(data), label or f"<Arrow {type(data).__name__}>")
    dataset = sys.modules.get("pyarrow.dataset")
    if dataset is not None and isinstance(data, dataset.Dataset):
        return DatasetSource(data, label or "<Arrow Dataset>")
    if isinstance(data, pa.RecordBatchReader) or hasattr(data, "__arrow_c_stream__"):
        return spooled(data, label or f"<{type(data).__name__}>")
    if isinstance(data, Mapping):
        return MappingSource.build(data, label or "<dict>")
    raise InputTypeError("an input", data)
