"""Python objects as inputs of every evaluate_* function: each kind read from a real object of
that kind gives the numbers of the same data read from its file (the file path is checked
against the golden values elsewhere), and a LazyFrame is streamed, never collected."""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from mobeval.api import evaluate_logits, evaluate_nextloc, evaluate_recs, evaluate_trajectory
from mobeval.errors import InputError
from mobeval.io.objects import ACCEPTED, InputTypeError
from tests.conftest import REPO_ROOT

SAMPLES = REPO_ROOT / "data_samples"
TRUTH = SAMPLES / "nextloc" / "tky" / "truth.parquet"
MARKOV = SAMPLES / "nextloc" / "tky" / "markov.parquet"
RATINGS = SAMPLES / "recs" / "ratings.parquet"
MF = SAMPLES / "recs" / "mf.parquet"
REFERENCE = SAMPLES / "humob" / "reference_test.csv.gz"
GENERATED = SAMPLES / "humob" / "weekly_repeat.csv.gz"
NEXTLOC = {"k": [1, 5, 10], "convention": "libcity"}


class ArrowStream:
    """An object offering only the Arrow PyCapsule stream protocol (as a DuckDB relation does)."""

    def __init__(self, table: pa.Table) -> None:
        self._table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self._table.__arrow_c_stream__(requested_schema)


def _kinds(path):
    """The file's rows as each kind of object, by name (each built fresh: a stream reads once)."""
    frame = pl.read_parquet(path)
    return {
        "polars": lambda: frame,
        "lazy": lambda: pl.scan_parquet(path),
        "pandas": lambda: pytest.importorskip("pandas") and frame.to_pandas(),
        "arrow_table": lambda: pq.read_table(path),
        "record_batch_reader": lambda: pq.read_table(path).to_reader(max_chunksize=700),
        "arrow_dataset": lambda: ds.dataset(path),
        "arrow_c_stream": lambda: ArrowStream(pq.read_table(path)),
    }


KINDS = list(_kinds(MARKOV))


@pytest.fixture(scope="module")
def nextloc_expected():
    return evaluate_nextloc(TRUTH, MARKOV, **NEXTLOC)


@pytest.mark.parametrize("kind", KINDS)
def test_nextloc_objects(kind, nextloc_expected):
    """Truth and predictions as objects of one kind, streamed in chunks of 5000 rows."""
    truth, predictions = _kinds(TRUTH)[kind](), _kinds(MARKOV)[kind]()
    got = evaluate_nextloc(truth, predictions, chunk_rows=5000, **NEXTLOC)
    assert got.summary.equals(nextloc_expected.summary)
    assert got.per_unit.equals(nextloc_expected.per_unit)


@pytest.mark.parametrize("kind", KINDS)
def test_recs_objects(kind):
    """Ratings and lists as objects; the list order is the object's row order (clayrs)."""
    expected = evaluate_recs(RATINGS, MF).summary
    got = evaluate_recs(_kinds(RATINGS)[kind](), _kinds(MF)[kind](), chunk_rows=500)
    assert got.summary.equals(expected)


def test_trajectory_lazy_and_arrow():
    """The challenge's CSV.gz files scanned lazily by Polars (300-row chunks), and as Arrow
    tables."""
    expected = evaluate_trajectory(REFERENCE, GENERATED).summary
    columns = ["uid", "d", "t", "x", "y"]  # the generated file has no header line
    lazy = [pl.scan_csv(REFERENCE), pl.scan_csv(GENERATED, has_header=False, new_columns=columns)]
    assert evaluate_trajectory(*lazy, chunk_rows=300).summary.equals(expected)
    tables = [frame.collect().to_arrow() for frame in lazy]
    assert evaluate_trajectory(*tables).summary.equals(expected)


def test_duckdb_relation(tmp_path):
    """A DuckDB relation (a real object with only the Arrow C stream in common with Arrow):
    spooled to a temporary Parquet file as it streams, removed with the source."""
    duckdb = pytest.importorskip("duckdb")
    from mobeval.io.inputs import as_source

    query = f"select * from '{MF}' order by user_id, rank"  # the file's order, made explicit
    got = evaluate_recs(RATINGS, duckdb.sql(query), chunk_rows=500)
    assert got.summary.equals(evaluate_recs(RATINGS, MF).summary)
    source = as_source(duckdb.sql(query))
    folder = source.files[0].parent
    rows = pq.ParquetFile(MF).metadata.num_rows
    assert folder.is_dir() and source.fingerprint() == [{"path": source.label, "rows": rows}]
    del source
    assert not folder.exists()


def test_arrow_dataset_of_several_files_keeps_row_order(tmp_path):
    """A dataset of three files is read in its files' order: the lists keep their order."""
    lists = pl.read_parquet(MF)
    third = lists.height // 3
    for i, start in enumerate((0, third, 2 * third)):
        end = lists.height if i == 2 else start + third
        lists.slice(start, end - start).write_parquet(tmp_path / f"part-{i}.parquet")
    got = evaluate_recs(RATINGS, ds.dataset(sorted(tmp_path.glob("*.parquet"))), chunk_rows=100)
    assert got.summary.equals(evaluate_recs(RATINGS, MF).summary)


def test_lazyframe_is_streamed_not_collected(tmp_path, monkeypatch):
    """LazyFrames over files 40 times the chunk size: nothing collects more than one row (the
    row count and the has-rows probe), every batch holds at most the rows the engine asked for,
    and the predictions come in batches of the chunk size (3000 rows of 120,000)."""
    n = 40_000
    rng = np.random.default_rng(7)
    truth = pl.DataFrame({"sample_id": np.arange(n), "location": rng.integers(0, 50, n)})
    candidates = pl.DataFrame(
        {
            "sample_id": np.repeat(np.arange(n), 3),
            "location": (np.repeat(rng.integers(0, 50, n), 3) + np.tile([0, 17, 34], n)) % 50,
            "score": rng.random(3 * n),
        }
    )
    truth.write_parquet(tmp_path / "truth.parquet", row_group_size=4096)
    candidates.write_parquet(tmp_path / "pred.parquet", row_group_size=4096)
    expected = evaluate_nextloc(truth, candidates, k=[1, 5])

    collected, batches = [], []
    collect, collect_batches = pl.LazyFrame.collect, pl.LazyFrame.collect_batches

    def counting_collect(self, *args, **kwargs):
        frame = collect(self, *args, **kwargs)
        collected.append(frame.height)
        return frame

    def counting_batches(self, *args, chunk_size=None, **kwargs):
        for batch in collect_batches(self, *args, chunk_size=chunk_size, **kwargs):
            batches.append((batch.height, chunk_size, "score" in batch.columns))
            yield batch

    monkeypatch.setattr(pl.LazyFrame, "collect", counting_collect)
    monkeypatch.setattr(pl.LazyFrame, "collect_batches", counting_batches)
    got = evaluate_nextloc(
        pl.scan_parquet(tmp_path / "truth.parquet"),
        pl.scan_parquet(tmp_path / "pred.parquet"),
        k=[1, 5],
        chunk_rows=3000,
    )
    assert got.summary.equals(expected.summary)
    assert max(collected) <= 1
    assert sum(height for height, _, _ in batches) >= 4 * n  # both inputs read through batches
    assert all(height <= size for height, size, _ in batches)
    assert max(height for height, _, predictions in batches if predictions) <= 3000


def test_lazyframe_error_names_it(tmp_path):
    lazy = pl.scan_parquet(tmp_path / "missing.parquet")
    with pytest.raises(InputError, match="LazyFrame"):
        evaluate_nextloc(TRUTH, lazy)


def _as_dicts(frame: pl.DataFrame, unit: str, item: str, value: str) -> dict:
    """``{unit: {item: value}}`` in row order, as ranx's ``Run.from_df`` or a pytrec_eval user
    builds it, ids as strings (ranx and pytrec_eval want string ids)."""
    out: dict = {}
    for u, i, v in frame.select(unit, item, value).iter_rows():
        out.setdefault(str(u), {})[str(i)] = v
    return out


@pytest.mark.parametrize("convention", ["trec_eval", "clayrs", "relison"])
def test_recs_dict_of_dicts(convention):
    """A pytrec_eval-shaped qrels and run (string ids) give the numbers of the files."""
    qrels = _as_dicts(pl.read_parquet(RATINGS), "user_id", "item_id", "rating")
    run = _as_dicts(pl.read_parquet(MF), "user_id", "item_id", "score")
    got = evaluate_recs(qrels, run, convention=convention, chunk_rows=400)
    assert got.summary.equals(evaluate_recs(RATINGS, MF, convention=convention).summary)


def test_nextloc_dict_of_dicts():
    """Known-item qrels ``{sample: {location: 1}}`` and a run ``{sample: {location: score}}``,
    with integer ids or ranx's string ids (``location`` is then read as an integer)."""
    truth, pred = pl.read_parquet(TRUTH), pl.read_parquet(MARKOV)
    expected = evaluate_nextloc(TRUTH, MARKOV, **NEXTLOC)
    qrels = {int(s): {int(loc): 1} for s, loc in truth.select("sample_id", "location").iter_rows()}
    run: dict = {}
    for s, loc, score in pred.select("sample_id", "location", "score").iter_rows():
        run.setdefault(int(s), {})[int(loc)] = score
    got = evaluate_nextloc(qrels, run, **NEXTLOC)
    assert got.summary.equals(expected.summary)
    string_ids = evaluate_nextloc(
        {str(s): {str(k): v for k, v in row.items()} for s, row in qrels.items()},
        {str(s): {str(k): v for k, v in row.items()} for s, row in run.items()},
        **NEXTLOC,
    )
    assert string_ids.summary.equals(expected.summary)


def test_bad_dicts():
    with pytest.raises(InputError, match="dict of dicts") as caught:
        evaluate_recs({"u1": [("i1", 1.0)]}, MF)
    assert "u1" in str(caught.value)
    with pytest.raises(InputError, match="not a number") as caught:
        evaluate_recs({"u1": {"i1": "high"}}, MF)
    assert "'u1': 'i1'" in str(caught.value)
    with pytest.raises(InputError, match="every item must be an integer, or every one a string"):
        evaluate_recs({"u1": {"i1": 1.0, 2: 3.0}}, MF)


@pytest.mark.parametrize("value", [42, 3.5, [1, 2], b"bytes", object()])
def test_refused_types_list_what_is_accepted(value):
    with pytest.raises(InputTypeError) as caught:
        evaluate_recs(value, MF)
    assert ACCEPTED in str(caught.value)
    assert type(value).__name__ in str(caught.value)
    assert isinstance(caught.value, TypeError)


class DLPackOnly:
    """A tensor-like object offering only ``__dlpack__`` (as a CPU torch tensor does, besides
    its other methods)."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)


class ArrayOnly:
    """An object offering only ``__array__``."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    def __array__(self, dtype=None, copy=None):
        return self._array if dtype is None else self._array.astype(dtype)


class OnGPU:
    """A tensor DLPack cannot hand to NumPy (as a CUDA tensor)."""

    def __dlpack__(self, **kwargs):
        raise BufferError("DLPack device 2 (CUDA) is not supported by NumPy")


@pytest.mark.parametrize("wrap", [DLPackOnly, ArrayOnly])
def test_logits_through_array_protocols(wrap):
    logits = np.load(SAMPLES / "logits" / "gru.npy")
    targets = np.load(SAMPLES / "logits" / "targets.npy")
    expected = evaluate_logits(SAMPLES / "logits" / "gru.npy", SAMPLES / "logits" / "targets.npy")
    got = evaluate_logits(wrap(logits), wrap(targets), chunk_rows=5000)
    assert got.summary.equals(expected.summary)
    assert got.inputs["predictions"][0]["type"] == wrap.__name__


def test_logits_refused_and_gpu_tensors():
    targets = np.load(SAMPLES / "logits" / "targets.npy")
    with pytest.raises(InputTypeError, match="__dlpack__ or __array__"):
        evaluate_logits({"a": 1}, targets)
    with pytest.raises(InputError, match=r"tensor\.cpu\(\)"):
        evaluate_logits(OnGPU(), targets)


# --- objects the readers cannot hold: an InputError naming the argument, never a traceback ----


@pytest.mark.parametrize(
    ("ratings", "words"),
    [
        ({1: {2**64: 1.0}}, "the item 18446744073709551616 is outside the 64-bit integers"),
        ({2**63: {10: 1.0}}, "the unit 9223372036854775808 is outside the 64-bit integers"),
        ({1: {-(2**63) - 1: 1.0}}, "the item -9223372036854775809 is outside"),
        ({1: {np.uint64(2**64 - 1): 1.0}}, "the item 18446744073709551615 is outside"),
        ({1: {1.5: 1.0}}, "the item 1.5 is a float; every item must be an integer"),
        ({1: {None: 1.0}}, "the item None is a NoneType"),
        ({1: {True: 1.0}}, "the item True is a bool"),
        ({(1, 2): {10: 1.0}}, "the unit (1, 2) is a tuple"),
        ({1: {10: 1j}}, "the value 1j is not a number"),
        ({1: {10: 10**400}}, "is too large for a float64"),
    ],
)
def test_dict_ids_and_values_the_readers_cannot_hold(ratings, words):
    with pytest.raises(InputError, match="<dict>") as caught:
        evaluate_recs(ratings, MF)
    assert words in str(caught.value)


def test_numpy_integer_ids_are_integers():
    """A unit or item given as a NumPy integer is the same id as the Python integer."""
    run = {1: {10: 1.0, 11: 0.5}, 2: {13: 0.2}}
    ratings = {1: {10: 5.0}, 2: {13: 4.0}}
    as_numpy = {np.int64(u): {np.int32(i): v for i, v in row.items()} for u, row in run.items()}
    expected = evaluate_recs(ratings, run, convention="trec_eval").summary
    assert evaluate_recs(ratings, as_numpy, convention="trec_eval").summary.equals(expected)


class BadCapsule:
    """``__arrow_c_stream__`` returning what is not a stream capsule."""

    def __init__(self, returned) -> None:
        self.returned = returned

    def __arrow_c_stream__(self, requested_schema=None):
        return self.returned


class FailingProducer:
    """``__arrow_c_stream__`` whose producer raises (before the stream, or after one batch)."""

    def __init__(self, after_one_batch: bool) -> None:
        self.after_one_batch = after_one_batch

    def __arrow_c_stream__(self, requested_schema=None):
        if not self.after_one_batch:
            raise RuntimeError("the producer failed")
        table = pq.read_table(MF)

        def batches():
            yield from table.to_batches(max_chunksize=10)[:1]
            raise RuntimeError("the producer failed mid-stream")

        reader = pa.RecordBatchReader.from_batches(table.schema, batches())
        return reader.__arrow_c_stream__(requested_schema)


@pytest.mark.parametrize(
    "stream",
    [BadCapsule("not a capsule"), BadCapsule(None), FailingProducer(False), FailingProducer(True)],
    ids=["string", "none", "raises", "raises mid-stream"],
)
def test_a_bad_arrow_stream_is_named_and_leaves_nothing(stream, tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    with pytest.raises(InputError, match="could not read the Arrow stream") as caught:
        evaluate_recs(RATINGS, stream)
    assert str(caught.value).startswith(f"<{type(stream).__name__}>: ")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("logits", "targets", "words"),
    [
        (np.float64(3.0), np.arange(4), "the logits must be a 2-D array, got a single value"),
        (np.array(3.0), np.arange(4), "the logits must be a 2-D array, got a single value"),
        (np.zeros(4), np.arange(4), "the logits must be a 2-D array, got shape (4,)"),
        (np.zeros((4, 2, 2)), np.arange(4), "the logits must be a 2-D array, got shape (4, 2, 2)"),
        (np.zeros((4, 4)), np.array(1), "the targets must be a 1-D array, got a single value"),
        (np.zeros((4, 4)), np.zeros((2, 2), int), "the targets must be a 1-D array, got shape"),
        (ArrayOnly(np.array(2.0)), np.arange(4), "the logits must be a 2-D array"),
    ],
)
def test_logits_arrays_of_other_shapes(logits, targets, words):
    with pytest.raises(InputError) as caught:
        evaluate_logits(logits, targets)
    assert words in str(caught.value)
