"""Hash buckets (kernels.buckets, io.chunking): every unit in one bucket, rows grouped stably, and
unsorted input scored in memory or over buckets gives the sorted input's numbers."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from mobeval.api import evaluate_nextloc
from mobeval.errors import InputError
from mobeval.io.chunking import bucket_ids
from mobeval.io.sources import Source
from mobeval.kernels.buckets import bucket_order, claim_runs, key_buckets, radix_order
from tests.conftest import REPO_ROOT


def _readonly(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


@pytest.mark.parametrize("seed", range(20))
def test_bucket_order_is_a_stable_grouping_by_bucket(seed):
    rng = np.random.default_rng(seed)
    n_buckets = int(rng.integers(1, 9))
    buckets = _readonly(rng.integers(0, n_buckets, size=int(rng.integers(0, 200))))
    order, bounds = bucket_order(buckets, n_buckets)
    expected = sorted(range(len(buckets)), key=lambda row: buckets[row])  # Python's sort: stable
    assert order.tolist() == expected
    for bucket in range(n_buckets):
        assert bounds[bucket + 1] - bounds[bucket] == int((buckets == bucket).sum())
    assert bounds[0] == 0 and bounds[-1] == len(buckets)


@pytest.mark.parametrize("columns", [1, 3])
def test_equal_keys_share_a_bucket_and_buckets_are_used(columns):
    rng = np.random.default_rng(columns)
    extremes = [np.iinfo(np.int64).min, -1, 0, 1, np.iinfo(np.int64).max]
    values = rng.choice(np.array(extremes + list(range(-50, 50)), dtype=np.int64), (400, columns))
    keys = _readonly(np.concatenate([values, values[::-1]]))
    buckets = key_buckets(keys, 7)
    assert buckets.min() >= 0 and buckets.max() < 7
    assert len(set(buckets.tolist())) == 7
    first = {}
    for row, bucket in zip(map(tuple, keys.tolist()), buckets.tolist(), strict=True):
        assert first.setdefault(row, bucket) == bucket


def test_string_keys_share_a_bucket():
    frame = pl.DataFrame({"user": ["a", "b", "c", "a", "b", "c"] * 10, "x": range(60)})
    buckets = bucket_ids(frame, ["user"], 5)
    by_user = {}
    for user, bucket in zip(frame["user"], buckets.tolist(), strict=True):
        assert by_user.setdefault(user, bucket) == bucket


def _inputs(seed: int = 5, n_samples: int = 60, candidates: int = 6):
    rng = np.random.default_rng(seed)
    truth = pl.DataFrame(
        {"sample_id": np.arange(n_samples) - 30, "location": rng.integers(0, 8, n_samples)}
    )
    predictions = pl.DataFrame(
        {
            "sample_id": np.repeat(np.arange(n_samples) - 30, candidates),
            "location": np.tile(np.arange(candidates), n_samples),
            "score": rng.integers(0, 3, n_samples * candidates).astype(float),
        }
    )
    return truth, predictions


def _units_shuffled(predictions: pl.DataFrame, seed: int) -> pl.DataFrame:
    """The samples in a random order, each sample's rows together and in input order."""
    samples = np.random.default_rng(seed).permutation(predictions["sample_id"].unique().to_numpy())
    return pl.concat([predictions.filter(pl.col("sample_id") == s) for s in samples.tolist()])


OPTIONS = {"k": [1, 3], "metrics": ["acc@k", "ndcg@k", "mrr"], "ties": "input"}


def _paths_taken(monkeypatch) -> list[str]:
    """Which unsorted path each evaluation takes: grouped streaming, in memory, or buckets."""
    import mobeval.engines.local as local

    taken: list[str] = []
    paths = {"_grouped_pairs": "grouped", "_in_memory": "in memory", "_spilled": "buckets"}
    for name, path in paths.items():
        original = getattr(local, name)

        def spy(*args, _original=original, _path=path, **kwargs):
            taken.append(_path)
            return _original(*args, **kwargs)

        monkeypatch.setattr(local, name, spy)
    return taken


@pytest.mark.parametrize(
    ("chunk_rows", "rows_apart", "path"),
    [
        (100, False, "grouped"),  # the truth (60 rows) fits: streamed, each chunk sorted
        (7, False, "buckets"),  # the truth does not fit
        (10**6, True, "in memory"),  # a sample's rows apart: not grouped; everything fits
        (50, True, "buckets"),
    ],
)
def test_unsorted_input_gives_the_sorted_numbers(monkeypatch, chunk_rows, rows_apart, path):
    truth, predictions = _inputs()
    whole = evaluate_nextloc(truth, predictions, chunk_rows=10**6, **OPTIONS)
    shuffled = _units_shuffled(predictions, seed=3)
    if rows_apart:  # the first sample's last row moved to the end
        first = shuffled.head(1)["sample_id"].item()
        rows = shuffled.with_row_index().filter(pl.col("sample_id") == first)["index"].to_list()
        shuffled = pl.concat(
            [shuffled.filter(pl.int_range(pl.len()) != rows[-1]), shuffled[rows[-1]]]
        )
    taken = _paths_taken(monkeypatch)
    again = evaluate_nextloc(truth.reverse(), shuffled, chunk_rows=chunk_rows, **OPTIONS)
    assert taken == [path]
    assert again.summary.equals(whole.summary)
    assert again.per_unit.sort("sample_id").equals(whole.per_unit)


@pytest.mark.parametrize("in_truth", [True, False])
def test_rows_scattered_in_the_first_batch_go_to_the_buckets_at_once(monkeypatch, in_truth):
    """Where the sorted stream meets a falling key, the batch it read holds a sample in two runs
    (whether or not the truth has it): the grouped pass is not tried."""
    truth, predictions = _inputs()
    whole = evaluate_nextloc(truth, predictions, chunk_rows=10**6, **OPTIONS)
    first = [(0, 0), (1, 0), (0, 1)]  # rows: (sample, candidate); sample 0 apart
    head = pl.concat([predictions[s * 6 + c] for s, c in first])
    rest = predictions.join(head, on=["sample_id", "location"], how="anti")
    # the rest's rows in a random order, each sample's in its input order (ties: "input")
    place = pl.Series(np.random.default_rng(2).permutation(rest.height))
    rest = rest.with_columns(place=place).with_columns(pl.col("place").sort().over("sample_id"))
    scattered = pl.concat([head, rest.sort("place").drop("place")])
    taken = _paths_taken(monkeypatch)
    options = {**OPTIONS, "chunk_rows": 100}
    if not in_truth:  # sample 0's truth row gone: its predictions are dropped
        kept = truth.filter(pl.col("sample_id") != -30)
        options["unmatched"] = "drop"
        assert evaluate_nextloc(kept, scattered, **options).value("samples") == 59
        assert taken == ["buckets"]
        return
    again = evaluate_nextloc(truth, scattered, **options)  # sorted: the predictions' key falls
    assert taken == ["buckets"]
    assert again.summary.equals(whole.summary)
    assert again.per_unit.sort("sample_id").equals(whole.per_unit)


@pytest.mark.parametrize(("layout", "path"), [("grouped", "grouped"), ("scattered", "buckets")])
def test_the_batch_where_a_key_fell_is_decoded_once(monkeypatch, tmp_path, layout, path):
    """The sorted stream stops at its first batch (a key falls there); the grouped pass, or the
    buckets, take that batch again from memory and read on: each row of the file decoded once."""
    truth, predictions = _inputs()
    shuffled = _units_shuffled(predictions, seed=3)
    if layout == "scattered":
        shuffled = shuffled.sample(fraction=1.0, shuffle=True, seed=1)
    files = {"truth": truth, "pred": shuffled}
    for name, frame in files.items():
        frame.write_parquet(tmp_path / f"{name}.parquet", row_group_size=50)
    decoded = []
    read = Source.iter_batches

    def counted(self, columns, batch_rows):
        for batch in read(self, columns, batch_rows):
            decoded.append(batch.height if "score" in columns else 0)
            yield batch

    monkeypatch.setattr(Source, "iter_batches", counted)
    taken = _paths_taken(monkeypatch)
    options = {**OPTIONS, "chunk_rows": 100}
    evaluate_nextloc(str(tmp_path / "truth.parquet"), str(tmp_path / "pred.parquet"), **options)
    assert taken == [path]
    assert sum(decoded) == shuffled.height


@pytest.mark.parametrize("chunk_rows", [50, 10**6])  # hash buckets; in memory
def test_a_scorers_error_on_unsorted_input_stops_the_reading_threads(chunk_rows):
    """A bucket's scorer fails (a location twice in a sample): the threads reading the next
    bucket and the predictions stop, though ``pytest.raises`` keeps the error's traceback (and
    with it the engine's frames), as a notebook's ``sys.last_traceback`` does."""
    import threading

    tky = REPO_ROOT / "data_samples" / "nextloc" / "tky"
    truth = pl.read_parquet(tky / "truth.parquet")
    predictions = pl.read_parquet(tky / "markov.parquet")
    repeated = pl.concat([predictions, predictions.tail(1)])
    scattered = repeated.sample(fraction=1.0, shuffle=True, seed=3)
    before = set(threading.enumerate())
    with pytest.raises(InputError, match="twice") as raised:
        evaluate_nextloc(truth, scattered, chunk_rows=chunk_rows, duplicates="error", k=[1])
    assert raised.tb is not None  # the frames held
    assert not [t for t in set(threading.enumerate()) - before if t.name == "mobeval-read-ahead"]


@pytest.mark.parametrize("layout", ["sorted", "grouped", "scattered"])
def test_an_error_writing_a_chunks_results_stops_the_reading_threads(monkeypatch, layout):
    """The run's second chunk cannot be written (an OSError): every thread reading ahead, in
    whichever pass, stops with the run, though the error's traceback holds its frames."""
    import threading

    from mobeval.engines import base

    truth, predictions = _inputs()
    if layout != "sorted":
        predictions = _units_shuffled(predictions, seed=2)
    if layout == "scattered":
        predictions = predictions.sample(fraction=1.0, shuffle=True, seed=2)
    added, add = [], base._Run.add

    def failing(self, parts):
        added.append(parts)
        if len(added) == 2:
            raise OSError("the disk is gone")
        add(self, parts)

    monkeypatch.setattr(base._Run, "add", failing)
    before = set(threading.enumerate())
    with pytest.raises(OSError, match="the disk is gone") as raised:
        evaluate_nextloc(truth, predictions, chunk_rows=50, **OPTIONS)
    assert raised.tb is not None  # the frames held
    assert not [t for t in set(threading.enumerate()) - before if t.name == "mobeval-read-ahead"]


@pytest.mark.parametrize("apart", [False, True])
def test_a_sample_not_in_the_truth_counts_once_in_grouped_input(monkeypatch, apart):
    truth, predictions = _inputs()
    shuffled = _units_shuffled(predictions, seed=4)
    dropped = shuffled.head(1)["sample_id"].item()
    if apart:  # its rows apart: met twice, which only its key can tell
        shuffled = _apart(shuffled, rows=2)
    taken = _paths_taken(monkeypatch)
    options = {**OPTIONS, "unmatched": "drop", "chunk_rows": 100}
    result = evaluate_nextloc(truth.filter(pl.col("sample_id") != dropped), shuffled, **options)
    assert taken == (["grouped", "buckets"] if apart else ["grouped"])
    assert result.value("predictions_without_truth_dropped") == 1
    assert result.value("samples") == 59


def _apart(shuffled: pl.DataFrame, rows: int) -> pl.DataFrame:
    """The first sample's last ``rows`` rows moved to the end of the file."""
    first = shuffled.head(1)["sample_id"].item()
    place = pl.int_range(pl.len()).over("sample_id")
    moved = (pl.col("sample_id") == first) & (place >= pl.len().over("sample_id") - rows)
    return pl.concat([shuffled.filter(~moved), shuffled.filter(moved)])


def test_an_error_of_a_units_first_rows_is_not_raised_when_its_rows_are_apart(monkeypatch):
    truth, predictions = _inputs()
    options = {**OPTIONS, "k": [6], "k_beyond_list": "error"}  # 6: every sample's candidates
    whole = evaluate_nextloc(truth, predictions, chunk_rows=10**6, **options)
    shuffled = _apart(_units_shuffled(predictions, seed=6), rows=2)  # its first run: 4 < k
    taken = _paths_taken(monkeypatch)
    again = evaluate_nextloc(truth, shuffled, chunk_rows=100, **options)
    assert taken == ["grouped", "buckets"]
    assert again.summary.equals(whole.summary)
    assert again.per_unit.sort("sample_id").equals(whole.per_unit)


@pytest.mark.parametrize("absent", [None, "together", "apart"])
def test_an_error_of_grouped_input_is_raised_where_it_is(monkeypatch, absent):
    truth, predictions = _inputs()
    shuffled = _units_shuffled(predictions, seed=7)
    place = pl.int_range(pl.len())
    twice = shuffled.with_columns(  # row 130 repeats row 129's location, in the same sample
        location=pl.when(place == 130).then(pl.col("location").shift(1)).otherwise("location")
    )
    repeated = twice["sample_id"][130]
    assert twice["sample_id"][129] == repeated
    options = dict(OPTIONS)
    if absent:  # the first sample not in the truth; its rows apart: met twice
        options["unmatched"] = "drop"
        truth = truth.filter(pl.col("sample_id") != twice["sample_id"][0])
        twice = _apart(twice, rows=2) if absent == "apart" else twice
    taken = _paths_taken(monkeypatch)
    with pytest.raises(InputError, match="appears twice") as raised:
        evaluate_nextloc(truth, twice, chunk_rows=100, **options)
    assert taken == (["grouped", "buckets"] if absent == "apart" else ["grouped"])
    assert f"sample_id={repeated}" in str(raised.value)


def _claims_oracle(batches, truth):
    """Plain Python: the runs of equal keys across the batches, each claiming its truth row."""
    claimed, previous = set(), None
    for number, batch in enumerate(batches):
        for row, key in enumerate(map(tuple, batch.tolist())):
            if key == previous:
                continue
            previous = key
            if key not in truth or key in claimed:
                return number, row, claimed
            claimed.add(key)
    return None, None, claimed


@pytest.mark.parametrize("seed", range(30))
def test_claim_runs_is_the_plain_check(seed):
    rng = np.random.default_rng(seed)
    columns = int(rng.integers(1, 3))
    truth_keys = np.unique(rng.integers(-4, 5, size=(12, columns)), axis=0)
    units = truth_keys[rng.permutation(len(truth_keys))]
    if seed % 3 == 0:  # a key that is not in the truth
        units = np.concatenate([units, np.full((1, columns), 99)])
    if seed % 3 == 1:  # a unit's rows apart
        units = np.concatenate([units, units[:1]])
    rows = np.repeat(units, rng.integers(1, 4, size=len(units)), axis=0)
    batches = np.array_split(rows, int(rng.integers(1, 5)))
    truth = _readonly(truth_keys.astype(np.int64))
    claimed = np.zeros(len(truth), dtype=np.bool_)
    failed, last = None, None
    for number, batch in enumerate(batches):
        keys = _readonly(np.ascontiguousarray(batch, dtype=np.int64))
        continued = last is not None and len(keys) > 0 and bool((keys[0] == last).all())
        row, rows = claim_runs(keys, truth, claimed, continued)
        for r in range(len(keys) if row < 0 else row):  # each run start: its truth row
            previous = keys[r - 1] if r > 0 else last
            start = previous is None or not (keys[r] == previous).all()
            expected_row = truth_keys.tolist().index(keys[r].tolist()) if start else -1
            assert rows[r] == expected_row
        if row >= 0:
            failed = (number, row)
            break
        if len(keys):
            last = keys[-1]
    number, row, expected = _claims_oracle(batches, set(map(tuple, truth_keys.tolist())))
    assert failed == (None if number is None else (number, row))
    if failed is None:
        assert {tuple(k) for k in truth_keys[claimed].tolist()} == expected


@pytest.mark.parametrize("seed", range(20))
def test_radix_order_is_the_stable_sort(seed):
    rng = np.random.default_rng(seed)
    extremes = np.array([np.iinfo(np.int64).min, -(2**40), -1, 0, 1, 2**33, np.iinfo(np.int64).max])
    columns = int(rng.integers(1, 4))
    values = np.concatenate([extremes, rng.integers(-(2**62), 2**62, size=20), np.arange(-5, 5)])
    keys = rng.choice(values, size=(int(rng.integers(0, 300)), columns))
    expected = sorted(range(len(keys)), key=lambda row: tuple(keys[row].tolist()))
    assert radix_order(keys).tolist() == expected


@pytest.mark.parametrize("seed", range(12))
def test_radix_order_of_narrow_columns_is_the_stable_sort(seed):
    """Columns whose values differ in few bits (their digits and the rows' numbers packed in 64
    bits), next to wide ones, over one or more digits, negative values included."""
    rng = np.random.default_rng(seed)
    n_rows = int(rng.integers(2, 5000))
    columns = []
    for _ in range(int(rng.integers(1, 4))):
        base = int(rng.choice([0, -(2**40), 2**50, -3]))
        width = int(rng.choice([1, 2, 5, 11, 12, 23, 40, 63]))
        columns.append(base + rng.integers(0, 2**width, size=n_rows, dtype=np.int64))
    keys = np.stack(columns, axis=1)
    expected = sorted(range(n_rows), key=lambda row: tuple(keys[row].tolist()))
    assert radix_order(keys).tolist() == expected
