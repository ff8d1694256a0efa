"""Unpaired populations in every location space on the Spark engine, from files as a user writes
them (no ``d`` column): GPS points (a CSV's timestamps, ``--gps-grid``, haversine metres), road
links (a link table, ``--unknown-links zero``) and location ids with a location table. Through
the API, the command line and a job file, over several partitions and row orders, the summary,
the histograms (``distributions``) and the density maps are the local engine's bits, and a bad
input is refused with the local engine's message.

One local[2] SparkSession serves the module (``tests/test_spark.py``'s, skipped likewise).
"""

from __future__ import annotations

import gzip
import json

import polars as pl
import pytest

from mobeval.api import evaluate_trajectory
from mobeval.cli import main
from mobeval.errors import InputError
from tests.conftest import GOLDEN, REPO_ROOT
from tests.test_spark import spark  # noqa: F401 - the module's session

pytestmark = pytest.mark.spark

SAMPLES = REPO_ROOT / "data_samples"
SECTIONS = ("summary", "distributions", "density_map")
GPS = {
    "columns": {"uid": "traj_id", "t": "timestamp"},
    "locations": "gps",
    "gps_grid": "30.65,104.04,30.73,104.13,500m",
    "distance": "haversine",
    "max_distance": 3000,
    "out_of_grid": "score",
    "metrics": ["distance", "radius", "dailyloc", "density", "trip", "jump", "memorised_near"],
    "jump_max": 3000,
    "near_tolerance": 0.02,
}
LINKS = {
    "locations": "links",
    "location_table": str(SAMPLES / "links" / "links.csv"),
    "unknown_links": "zero",
    "distance": "haversine",
    "max_distance": 2000,
    "convention": "mobilitygpt",
    "divergence": "jsdist",
    "metrics": ["od", "location", "trip_length", "length", "distance", "radius", "duplicate_ratio"],
}
IDS = {
    "locations": "ids",
    "location_table": str(SAMPLES / "movesim" / "gps.gz"),
    "convention": "movesim",
    "max_distance": 247.3,
    "metrics": ["distance", "radius", "duration", "dailyloc", "grank", "irank", "memorised"],
}


def _movesim_csv(name: str, lines: int, path) -> str:
    """The first ``lines`` trajectories of MoveSim's ``name`` file as a CSV of uid (the line's
    number), t (the id's place) and location: no d column."""
    with gzip.open(SAMPLES / "movesim" / name, "rt") as file:
        rows = [
            (uid, t, int(location))
            for uid, line in zip(range(lines), file, strict=False)
            for t, location in enumerate(line.split())
        ]
    pl.DataFrame(rows, schema=["uid", "t", "location"], orient="row").write_csv(path)
    return str(path)


def _links_with_an_unknown_link(path) -> str:
    """The links sample's generated trajectories and one more of links 999 and 998, which the
    link table does not hold."""
    frame = pl.read_csv(SAMPLES / "links" / "generated.csv")
    extra = pl.DataFrame({"uid": [99, 99, 99], "t": [0, 1, 2], "location": [999, 101, 998]})
    pl.concat([frame, extra.cast(frame.schema)]).write_csv(path)
    return str(path)


@pytest.fixture(scope="module")
def spaces(tmp_path_factory) -> dict:
    """Each space's reference, generated and options."""
    folder = tmp_path_factory.mktemp("spaces")
    return {
        "gps": (str(SAMPLES / "gps" / "real.csv"), str(SAMPLES / "gps" / "generated.csv"), GPS),
        "links": (
            str(SAMPLES / "links" / "real.csv"),
            _links_with_an_unknown_link(folder / "links-generated.csv"),
            LINKS,
        ),
        "ids": (
            _movesim_csv("real.data.gz", 400, folder / "real.csv"),
            _movesim_csv("test.data.gz", 300, folder / "test.csv"),
            IDS,
        ),
    }


def _shuffled(path: str, seed: int, out) -> str:
    """The rows of the CSV at ``path`` in another order, as Parquet (timestamps as datetimes)."""
    frame = pl.read_csv(path, try_parse_dates=True)
    frame.sample(fraction=1.0, shuffle=True, seed=seed).write_parquet(out)
    return str(out)


def _orders(reference, generated, tmp_path):
    """The inputs in file order on 2 partitions, then shuffled (seeds 7 and 8) on 3 and 7:
    ``(files, partitions)`` each."""
    orders = [((reference, generated), 2)]
    for seed, partitions in ((7, 3), (8, 7)):
        files = [
            _shuffled(path, seed, tmp_path / f"{seed}-{side}.parquet")
            for side, path in enumerate((reference, generated))
        ]
        orders.append((files, partitions))
    return orders


def _tables(result) -> dict[str, pl.DataFrame]:
    return {"summary": result.summary, **result.tables}


@pytest.mark.parametrize("space", ["gps", "links", "ids"])
def test_every_location_space_on_spark_is_the_local_bits(spark, spaces, space, tmp_path):  # noqa: F811
    """The API on 2, 3 and 7 partitions, the rows in file order and shuffled (as Parquet), in
    chunks of 50 rows: the local engine's summary, histograms and density map."""
    reference, generated, options = spaces[space]
    options = {"pairing": "none", "chunk_rows": 50} | options
    local = _tables(evaluate_trajectory(reference, generated, **options))
    assert set(local) == set(SECTIONS)
    for files, partitions in _orders(reference, generated, tmp_path):
        result = evaluate_trajectory(*files, partitions=partitions, spark=spark, **options)
        for section, table in _tables(result).items():
            assert table.equals(local[section]), (section, partitions)


def _face_outputs(face: str, reference, generated, options: dict, out) -> dict[str, pl.DataFrame]:
    """The sections under ``out`` of a Spark run of one face: the command line (``--name
    value``) or a job file (TOML values)."""
    if face == "cli":
        argv = ["trajectory", "--reference", reference, "--generated", generated]
        for name, value in options.items():
            if name == "out_of_grid":
                argv += ["--score-out-of-grid"]
                continue
            if isinstance(value, dict):
                text = ",".join(f"{ours}={theirs}" for ours, theirs in value.items())
            else:
                text = ",".join(map(str, value)) if isinstance(value, list) else str(value)
            argv += [f"--{name.replace('_', '-')}", text]
        assert main([*argv, "--city", "c", "--model", "m", "--out", str(out), *SPARK]) == 0
    else:
        values = "".join(
            f"{name} = {json.dumps(value)}\n"
            for name, value in options.items()
            if not isinstance(value, dict)
        )
        columns = options.get("columns")
        tables = "" if columns is None else f"[tasks.columns]\n{_toml(columns)}"
        job = out.parent / "job.toml"
        job.write_text(
            f'out = "{out}"\n\n[[tasks]]\ntype = "trajectory"\ncity = "c"\n'
            f'truth = "{reference}"\n{values}[tasks.models]\nm = "{generated}"\n{tables}'
        )
        assert main(["run", str(job), *SPARK]) == 0
    return {section: pl.read_parquet(out / section / "city=c" / "model=m") for section in SECTIONS}


def _toml(table: dict) -> str:
    return "".join(f"{key} = {json.dumps(value)}\n" for key, value in table.items())


SPARK = ["--engine", "spark", "--quiet"]


@pytest.mark.parametrize("face", ["cli", "job"])
def test_every_location_space_through_the_faces_on_spark(spark, spaces, face, tmp_path):  # noqa: F811
    """``--engine spark`` on the command line and on a job file: each space's OUT sections are
    the local engine's (the local run's tables, as written)."""
    for space, (reference, generated, options) in spaces.items():
        options = {"pairing": "none"} | options
        local = _tables(evaluate_trajectory(reference, generated, **options))
        out = tmp_path / space / "out"
        out.parent.mkdir()
        written = _face_outputs(face, reference, generated, options, out)
        for section in SECTIONS:
            assert written[section].equals(local[section]), (space, section)


def test_mobilitygpt_golden_on_spark(spark, tmp_path):  # noqa: F811
    """MobilityGPT's ``js_od``, ``js_link`` and ``js_length`` from its own ``evaluate.py``
    (tests/golden/mobilitygpt), bit for bit on Spark over 3 partitions, from CSV files without
    a d column (links 400..404, absent from the table, as MobilityGPT's ``isin``:
    ``unknown_links="zero"``)."""
    from tests.test_population_links import NAMES, _golden_files

    expected = json.loads((GOLDEN / "mobilitygpt" / "expected.json").read_text())
    real, generated, table = _golden_files(tmp_path)
    options = {"pairing": "none", "locations": "links", "location_table": table}
    options |= {"unknown_links": "zero", "convention": "mobilitygpt", "divergence": "jsdist"}
    result = evaluate_trajectory(
        real, generated, metrics=list(NAMES), partitions=3, spark=spark, **options
    )
    got = dict(result.summary.select("metric", "value").iter_rows())
    for name in NAMES:
        assert got[f"jsdist_{name}"] == expected[name], name


@pytest.mark.parametrize(
    ("space", "change", "message"),
    [
        ("gps", {"out_of_grid": "error"}, r"outside the grid's box .* \(13, 0, datetime"),
        ("links", {"unknown_links": "error"}, "not in the link table .* location 999"),
    ],
)
def test_a_bad_population_is_refused_on_spark_as_locally(spark, spaces, space, change, message):  # noqa: F811
    """A GPS point outside the box, a link the table does not hold: the local engine's
    InputError (the file, the column, the first offending key), over 3 partitions."""
    reference, generated, options = spaces[space]
    options = {"pairing": "none"} | options | change
    messages = []
    for engine in ({}, {"spark": spark, "partitions": 3}):
        with pytest.raises(InputError, match=message) as caught:
            evaluate_trajectory(reference, generated, **options, **engine)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]


class _Fold:
    """A partition's accumulator that counts how many of its kind are unpickled at once."""

    alive = most = merged = 0

    def __init__(self) -> None:
        self.hashes = [1, 2, 3]

    def __setstate__(self, state) -> None:
        self.__dict__.update(state)
        _Fold.alive += 1
        _Fold.most = max(_Fold.most, _Fold.alive)

    def __del__(self) -> None:
        _Fold.alive -= 1

    def merge(self, other) -> None:
        _Fold.merged += 1


def test_the_driver_merges_one_partition_s_fold_at_a_time():
    """The folds (a population's trajectory hashes are most of them) are unpickled one partition
    at a time and merged, not all held at once; each partition counted once (the first of a
    partition computed twice)."""
    import pickle

    from mobeval.engines.spark.results import _merged

    state = {"accumulator": _Fold(), "rows": {"truth": 2, "predictions": 3}, "error": None}
    blob = pickle.dumps([state])
    folds = [(partition, blob) for partition in (0, 1, 2, 3, 4, 2)]
    _Fold.alive = 0
    merged = _merged(folds, 0, {"truth": "t", "predictions": "p"})
    assert isinstance(merged, _Fold)
    assert (_Fold.merged, _Fold.most) == (4, 2)


def _copying_population(path) -> str:
    """HuMob's weekly-repeat sample and, under new uids, the reference's first 4 uids' days
    (``memorised``) twice each (``duplicate_ratio``), as one CSV."""
    humob = SAMPLES / "humob"
    reference = pl.read_csv(humob / "reference_test.csv.gz")
    generated = pl.read_csv(humob / "weekly_repeat.csv.gz", has_header=False)
    generated.columns = reference.columns
    copied = reference.filter(pl.col("uid") < reference["uid"].unique().sort()[4])
    copies = [copied.with_columns(pl.col("uid") + shift) for shift in (10_000, 20_000)]
    pl.concat([generated, *copies]).write_csv(path)
    return str(path)


def test_the_ratios_hashes_never_reach_the_driver(spark, tmp_path, monkeypatch):  # noqa: F811
    """The three ratios (with uid shares, per-day divergences and the bootstrap) over 2, 3 and
    7 partitions, the rows in file order and shuffled: the local engine's bits, and the driver
    unpickles no tally of trajectory hashes (key width 2: a row per distinct trajectory), only
    the totals Spark counts."""
    from mobeval.metrics.tallies import Tally

    reference = str(SAMPLES / "humob" / "reference_test.csv.gz")
    generated = _copying_population(tmp_path / "generated.csv")
    options = {"pairing": "none", "chunk_rows": 150, "uid_shares": [40, 70]}
    options |= {"per_day_divergences": True, "population_resamples": 4, "near_tolerance": 2.0}
    options |= {"metrics": ["location", "duplicate_ratio", "memorised", "memorised_near"]}
    local = evaluate_trajectory(reference, generated, **options).summary
    values = dict(local.select("metric", "value").iter_rows())
    assert all(values[name] > 0 for name in ("duplicate_ratio", "memorised", "memorised_near"))
    received = []
    unpickled = Tally.__setstate__

    def seen(self, state) -> None:
        received.append((state["width"], len(state["table"])))
        unpickled(self, state)

    monkeypatch.setattr(Tally, "__setstate__", seen)
    for files, partitions in _orders(reference, generated, tmp_path):
        result = evaluate_trajectory(*files, partitions=partitions, spark=spark, **options)
        assert result.summary.equals(local), partitions
    assert any(width == 1 for width, _ in received)  # the location tallies, whole
    assert [(width, rows) for width, rows in received if width == 2] == []


def test_a_worker_never_pickles_the_ratios_hashes(spark, tmp_path, monkeypatch):  # noqa: F811
    """The hash tallies leave a partition's folds as rows before the folds are pickled: no
    Spark worker pickles a tally of trajectory hashes (key width 2), so none holds them twice
    (as tallies and as a pickle); the location tallies (width 1) are still pickled whole, and
    the summary is the local engine's."""
    import mobeval.engines.spark.engine as engine

    reference = str(SAMPLES / "humob" / "reference_test.csv.gz")
    generated = _copying_population(tmp_path / "generated.csv")
    options = {"pairing": "none", "chunk_rows": 150, "population_resamples": 2}
    options |= {"metrics": ["location", "duplicate_ratio", "memorised", "memorised_near"]}
    local = evaluate_trajectory(reference, generated, **options).summary
    log = str(tmp_path / "pickled.txt")
    shuffle_and_score = engine.shuffle_and_score

    def spied(combined, score, *args, **kwargs):
        def logged(batches):  # runs on a worker (pickled by value): notes each Tally pickled
            from mobeval.metrics.tallies import Tally

            state = Tally.__getstate__

            def noted(self):
                with open(log, "a") as out:
                    out.write(f"{self.width}\n")
                return state(self)

            Tally.__getstate__ = noted
            try:
                yield from score(batches)
            finally:
                Tally.__getstate__ = state

        return shuffle_and_score(combined, logged, *args, **kwargs)

    monkeypatch.setattr(engine, "shuffle_and_score", spied)
    result = evaluate_trajectory(reference, generated, partitions=3, spark=spark, **options)
    assert result.summary.equals(local)
    widths = (tmp_path / "pickled.txt").read_text().split()
    assert "1" in widths  # the location tallies, pickled in the folds
    assert "2" not in widths
