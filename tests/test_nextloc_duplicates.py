"""A location twice in one sample's list (issue 9, item 4): ``duplicates="error"`` or ``"drop"``.

ranx, pytrec_eval and ir_measures hold a run as a dict filled row by row (``d[doc] = score``;
ranx 0.3.21 ``Run.from_df`` / ``from_file``): one entry per document, with the score of its LAST
row at the place (insertion order) of its FIRST row; the later copies vanish and the entries after
them move up. ``duplicates="drop"`` must be exactly that. The oracle below builds those dicts in
plain Python and ranks them; the values in ``RANX_RANKS`` were printed by ranx 0.3.21 (numba
0.68.1) for ``RANX_ROWS``, and the last test runs ranx itself when it is installed.
"""

import json
import math
import random

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobeval.api import evaluate_nextloc
from mobeval.cli import main
from mobeval.errors import ConfigError, InputError
from mobeval.jobs import load_job, run_job

KS = [1, 2, 3]
METRICS = ["acc@k", "precision@k", "recall@k", "f1@k", "mrr@k", "map@k", "ndcg@k", "mrr", "ndcg"]
PRESET_TIES = {"mobeval": "id_asc", "trec_eval": "id_desc_str", "ranx": "ranx"}


# --- the oracle: plain Python dicts, as the dict-based tools hold a run -------------------------


def dict_run(pairs):
    """``{location: value}`` filled pair by pair: a repeated location keeps its first place in the
    dict's (insertion) order and takes the last value."""
    run = {}
    for location, value in pairs:
        run[location] = value
    return run


def place_run(locations):
    """A list without scores, ranked by place: each location once, at its first place."""
    run = {}
    for location in locations:
        if location not in run:
            run[location] = -len(run)
    return run


def oracle_rank(run, target, ties):
    """1-based rank of ``target`` in the dict ``run`` (higher value first), inf if absent."""
    if target not in run:
        return math.inf
    value = run[target]
    if ties == "optimistic":
        return 1 + sum(v > value for v in run.values())
    if ties == "pessimistic":
        return sum(v >= value for v in run.values())
    entries = list(run.items())  # the dict's insertion order
    if ties == "id_asc":
        entries.sort(key=lambda e: e[0])
    elif ties == "id_desc_str":
        entries.sort(key=lambda e: str(e[0]), reverse=True)
    else:
        assert ties in ("input", "ranx")  # ranx keeps insertion order on lists of <= 15 entries
        assert ties == "input" or len(entries) <= 15
    entries.sort(key=lambda e: -e[1])  # stable: ties keep the order chosen above
    return 1 + [location for location, _ in entries].index(target)


def oracle_value(name, rank):
    base, _, cut = name.partition("@")
    k = int(cut) if cut else None
    if rank == math.inf or (k is not None and rank > k):
        return 0.0
    if base in ("acc", "recall"):
        return 1.0
    if base == "precision":
        return 1.0 / k
    if base == "f1":
        return 2.0 / (k + 1)
    if base in ("mrr", "map"):
        return 1.0 / rank
    assert base == "ndcg"
    return 1.0 / math.log2(rank + 1)


def metric_names():
    names = []
    for metric in METRICS:
        base, at, cut = metric.partition("@")
        names += [f"{base}@{k}" for k in KS] if at else [base]
    return names


def check_against_oracle(result, runs, truth, ties, skip_missing, aggregate_f1):
    """Per-sample values, rank and n_candidates, and the summary, against the dicts ``runs``."""
    per_unit = {row["sample_id"]: row for row in result.per_unit.iter_rows(named=True)}
    assert sorted(per_unit) == sorted(truth)
    counted = {}
    for sample, target in truth.items():
        run = runs.get(sample, {})
        row = per_unit[sample]
        rank = oracle_rank(run, target, ties)
        assert row["n_candidates"] == len(run), sample
        assert row["rank"] == (None if rank == math.inf else rank), sample
        if skip_missing and not run:
            assert all(math.isnan(row[name]) for name in metric_names())
            continue
        counted[sample] = rank
        for name in metric_names():
            assert row[name] == pytest.approx(oracle_value(name, rank), abs=1e-15), (name, sample)
    for name in metric_names():
        values = [oracle_value(name, rank) for rank in counted.values()]
        if not values:
            continue
        want = sum(values) / len(values)
        if aggregate_f1 and name.startswith("f1@"):
            k = int(name.partition("@")[2])
            hits = sum(oracle_value(f"acc@{k}", rank) for rank in counted.values())
            p, r = hits / (len(values) * k), hits / len(values)
            want = 2 * p * r / (p + r) if hits else 0.0
        assert result.value(name) == pytest.approx(want, abs=1e-12), name


# --- property tests -----------------------------------------------------------------------------


@st.composite
def lists_with_copies(draw):
    """Up to five samples, each with up to 14 rows drawn from 6 locations (copies are likely) and
    three scores (ties are likely); some samples but the first have no rows; the target may be
    absent."""
    scale = draw(st.sampled_from([1, 1, 10**12 + 7]))  # ids spanning > 2^22: the sorting path
    shift = draw(st.sampled_from([0, -3]))
    samples = {}
    truth = {}
    for sample in range(draw(st.integers(1, 5))):
        rows = draw(
            st.lists(
                st.tuples(st.integers(0, 5), st.sampled_from([0.0, 0.5, 1.0])),
                min_size=1 if sample == 0 else 0,  # an input without rows is refused
                max_size=14,
            )
        )
        samples[sample] = [(loc * scale + shift, score) for loc, score in rows]
        truth[sample] = draw(st.integers(0, 6)) * scale + shift
    return samples, truth


def truth_frame(truth):
    return pl.DataFrame(
        list(truth.items()), schema={"sample_id": pl.Int64, "location": pl.Int64}, orient="row"
    )


def long_frame(samples, value="score"):
    rows = [(s, loc, v) for s, pairs in samples.items() for loc, v in pairs]
    dtype = pl.Float64 if value == "score" else pl.Int64
    return pl.DataFrame(
        rows, schema={"sample_id": pl.Int64, "location": pl.Int64, value: dtype}, orient="row"
    )


def interleaved(frame, seed):
    """The rows of different samples shuffled together, each sample's rows in their order."""
    rng = random.Random(seed)
    order = list(range(frame.height))
    rng.shuffle(order)
    ids = frame["sample_id"].to_list()
    rows_of = {}
    for i in range(frame.height):
        rows_of.setdefault(ids[i], []).append(i)
    slots = {s: iter(rows) for s, rows in rows_of.items()}
    return frame[[next(slots[ids[i]]) for i in order]]


CONVENTIONS = [
    ("ranx", None, None),  # the preset drops copies
    ("mobeval", "drop", None),
    ("mobeval", "drop", "input"),
    ("trec_eval", "drop", None),
    ("mobeval", "drop", "optimistic"),
    ("mobeval", "drop", "pessimistic"),
    ("ranx", "drop", "input"),
]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=lists_with_copies(),
    convention=st.sampled_from(CONVENTIONS),
    chunk_rows=st.sampled_from([1, 3, 10**6]),
    seed=st.integers(0, 10**6),
)
def test_long_form_scores_as_dicts_filled_row_by_row(data, convention, chunk_rows, seed):
    samples, truth = data
    preset, duplicates, ties = convention
    options = {"k": KS, "metrics": METRICS, "convention": preset, "duplicates": duplicates}
    if ties:
        options["ties"] = ties
    predictions = long_frame(samples)
    result = evaluate_nextloc(
        truth_frame(truth), predictions, chunk_rows=chunk_rows, progress=False, **options
    )
    runs = {s: dict_run(pairs) for s, pairs in samples.items() if pairs}
    skip = preset == "trec_eval"
    aggregate = preset == "mobeval"
    check_against_oracle(result, runs, truth, ties or PRESET_TIES[preset], skip, aggregate)
    # the rows of other samples in between change nothing (the local engine's buckets keep each
    # sample's rows in input order)
    mixed = evaluate_nextloc(
        truth_frame(truth), interleaved(predictions, seed), chunk_rows=chunk_rows, **options
    )
    assert mixed.per_unit.sort("sample_id").equals(result.per_unit.sort("sample_id"))
    assert mixed.summary.equals(result.summary)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=lists_with_copies(),
    ties=st.sampled_from(["ranx", "id_asc", "id_desc_str", "pessimistic"]),
    form=st.sampled_from(["lists_with_scores", "lists_by_place", "long_rank"]),
)
def test_list_form_and_rank_column_as_dicts(data, ties, form):
    samples, truth = data
    if form == "long_rank":
        # rank column: the dict holds each location's LAST rank (values: minus the rank)
        ranked = {s: [(loc, int(2 * v) + 1) for loc, v in pairs] for s, pairs in samples.items()}
        predictions = long_frame(ranked, value="rank")
        runs = {s: dict_run((loc, -r) for loc, r in pairs) for s, pairs in ranked.items() if pairs}
    else:
        predictions = pl.DataFrame(
            {
                "sample_id": list(samples),
                "locations": [[loc for loc, _ in pairs] for pairs in samples.values()],
                "scores": [[v for _, v in pairs] for pairs in samples.values()],
            },
            schema={
                "sample_id": pl.Int64,
                "locations": pl.List(pl.Int64),
                "scores": pl.List(pl.Float64),
            },
        )
        if form == "lists_with_scores":
            runs = {s: dict_run(pairs) for s, pairs in samples.items()}
        else:  # no scores: the list's order is the ranking, each location at its first place
            predictions = predictions.drop("scores")
            runs = {s: place_run([loc for loc, _ in pairs]) for s, pairs in samples.items()}
    result = evaluate_nextloc(
        truth_frame(truth),
        predictions,
        k=KS,
        metrics=METRICS,
        convention="ranx",
        ties=ties,
        progress=False,
    )
    check_against_oracle(result, runs, truth, ties, False, False)


INT64_EDGES = [-(2**63), -(2**63) + 1, -1, 0, 1, 2**31, 2**32, 2**62, 2**63 - 2, 2**63 - 1, 7]


@pytest.mark.parametrize(
    "ids",
    [list(range(11)), [i * (10**12 + 7) for i in range(11)], INT64_EDGES],
    ids=["narrow", "wide", "int64-edges"],
)
def test_many_samples_share_locations(ids):
    """Hundreds of samples per chunk over the same few locations: many samples per block of the
    kernel's marker array (ids spanning few values) or sorted lists (a wide span, up to the whole
    int64 range, whose width overflows int64)."""
    rng = random.Random(ids[1])
    samples, truth = {}, {}
    for sample in range(600):
        n = rng.randint(0, 30)
        samples[sample] = [(rng.choice(ids[:10]), float(rng.randint(0, 3))) for _ in range(n)]
        truth[sample] = rng.choice(ids)
    runs = {s: dict_run(pairs) for s, pairs in samples.items() if pairs}
    for preset, ties, aggregate in (("ranx", "input", False), ("mobeval", "id_asc", True)):
        result = evaluate_nextloc(
            truth_frame(truth),
            long_frame(samples),
            k=KS,
            metrics=METRICS,
            convention=preset,
            ties=ties,
            duplicates="drop",
            progress=False,
        )
        check_against_oracle(result, runs, truth, ties, False, aggregate)


def test_a_worked_example():
    # sample 1: 10 at 0.5, then 11 at 0.9, then 10 again at 0.95: one entry 10 -> 0.95 at the
    # first place: [10 (0.95), 11 (0.9), 12 (0.8)]; the target 12 is third, not fourth
    truth = pl.DataFrame({"sample_id": [1, 2], "location": [12, 22]})
    predictions = pl.DataFrame(
        {
            "sample_id": [1, 1, 1, 1, 2, 2, 2, 2],
            "location": [10, 11, 10, 12, 20, 21, 20, 22],
            "score": [0.5, 0.9, 0.95, 0.8, 1.0, 1.0, 1.0, 1.0],
        }
    )
    result = evaluate_nextloc(
        truth, predictions, k=[3], metrics=["acc@k", "mrr"], duplicates="drop"
    )
    # sample 2, all tied, id_asc: [20, 21, 22] -> third; under "input" too (20 keeps its place)
    assert result.per_unit["rank"].to_list() == [3.0, 3.0]
    assert result.per_unit["n_candidates"].to_list() == [3, 3]
    assert result.value("mrr") == pytest.approx(1 / 3)
    ranx_preset = evaluate_nextloc(truth, predictions, k=[3], metrics=["mrr"], convention="ranx")
    assert ranx_preset.per_unit["rank"].to_list() == [3.0, 3.0]


# --- the error and its message ------------------------------------------------------------------

DUPLICATED = pl.DataFrame(
    {
        "sample_id": [1, 1, 2, 2, 2],
        "location": [10, 11, 20, 21, 20],
        "score": [0.9, 0.1, 0.8, 0.2, 0.3],
    }
)
TRUTH = pl.DataFrame({"sample_id": [1, 2], "location": [10, 20]})


@pytest.mark.parametrize("preset", ["mobeval", "libcity", "trec_eval"])
def test_error_names_the_option(tmp_path, capsys, preset):
    truth, pred = tmp_path / "truth.parquet", tmp_path / "pred.parquet"
    TRUTH.write_parquet(truth)
    DUPLICATED.write_parquet(pred)
    out = tmp_path / "out"
    argv = ["nextloc", "--truth", str(truth), "--pred", str(pred), "--k", "1,2"]
    code = main([*argv, "--convention", preset, "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    for part in (str(pred), "column 'location'", "twice", "sample_id=2", "--duplicates drop"):
        assert part in err
    assert not (out / "per_unit").exists()
    with pytest.raises(InputError, match="duplicates='drop' keeps one entry"):
        evaluate_nextloc(TRUTH, DUPLICATED, convention=preset, k=[1])


def test_ranx_preset_can_still_refuse_copies():
    with pytest.raises(InputError, match="twice"):
        evaluate_nextloc(TRUTH, DUPLICATED, convention="ranx", duplicates="error", k=[1])
    lists = DUPLICATED.group_by("sample_id", maintain_order=True).agg(
        pl.col("location").alias("locations")
    )
    with pytest.raises(InputError, match="column 'locations'.*duplicates='drop'"):
        evaluate_nextloc(TRUTH, lists, k=[1])


def test_unknown_choice_is_a_config_error():
    with pytest.raises(ConfigError, match="duplicates='keep' is not one of"):
        evaluate_nextloc(TRUTH, DUPLICATED, duplicates="keep", k=[1])


# --- the option through the CLI, a job file and the manifest ------------------------------------


def test_cli_job_and_manifest(tmp_path):
    truth, pred = tmp_path / "truth.parquet", tmp_path / "pred.parquet"
    TRUTH.write_parquet(truth)
    DUPLICATED.write_parquet(pred)
    by_api = evaluate_nextloc(truth, pred, k=[1, 2], duplicates="drop")
    # sample 2: {20: 0.3, 21: 0.2} -> 20 first
    assert by_api.per_unit["rank"].to_list() == [1.0, 1.0]

    out = tmp_path / "cli"
    argv = ["nextloc", "--truth", str(truth), "--pred", str(pred), "--k", "1,2"]
    assert main([*argv, "--duplicates", "drop", "--out", str(out), "--quiet"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    (entry,) = manifest["results"].values()
    assert entry["config"]["duplicates"] == "drop"
    written = pl.read_parquet(out / "per_unit", hive_partitioning=False).sort("sample_id")
    assert written.equals(by_api.per_unit.sort("sample_id"))

    job = tmp_path / "job.toml"
    job.write_text(
        f'out = "{tmp_path / "job_out"}"\n[[tasks]]\ntype = "nextloc"\ncity = "c"\n'
        f'truth = "{truth}"\nk = [1, 2]\nduplicates = "drop"\n[tasks.models]\nm = "{pred}"\n'
    )
    (evaluation,) = run_job(load_job(job), log=lambda _: None)
    assert evaluation.summary.equals(by_api.summary)
    manifest = json.loads((tmp_path / "job_out" / "manifest.json").read_text())
    assert [r["config"]["duplicates"] for r in manifest["results"].values()] == ["drop"]
    job.write_text(job.read_text().replace('duplicates = "drop"', 'duplicates = "dict"'))
    with pytest.raises(ConfigError, match="duplicates"):
        run_job(load_job(job, out=tmp_path / "bad"), log=lambda _: None)


# --- ranx 0.3.21 --------------------------------------------------------------------------------

# (sample, location, score) rows in file order.
RANX_ROWS = [
    *[(1, 10, 0.5), (1, 11, 0.9), (1, 12, 0.8), (1, 10, 0.95), (1, 13, 0.7)],  # 10 moves up
    *[(2, 20, 0.3), (2, 21, 0.9), (2, 20, 0.2), (2, 22, 0.1)],  # 20 moves down
    *[(3, 30, 1.0), (3, 31, 1.0), (3, 30, 1.0), (3, 32, 1.0)],  # all tied: 32 third, not fourth
    *[(4, 40, 1.0), (4, 41, 2.0), (4, 41, 1.0), (4, 42, 1.0)],  # 41 ties, at its first place
    *[(6, 66, 0.0), (6, 66, 1.0), (6, 67, 0.5)],
]
# 20 rows, every score tied, 3 copies: 17 entries, past Numba's insertion sort (15 items)
LONG = [50 + j for j in range(17)] + [52, 60, 55]
for _t in range(17):  # one sample per target position
    RANX_ROWS += [(100 + _t, loc, 1.0) for loc in LONG]
RANX_TARGETS = {1: 10, 2: 20, 3: 32, 4: 41, 6: 66, **{100 + t: 50 + t for t in range(17)}}
# ranx 0.3.21: evaluate(Qrels({q: {target: 1}}), Run(dict filled row by row), "mrr") -> 1 / rank;
# Run.from_df on the same rows gives the same values
RANX_RANKS = {1: 1, 2: 2, 3: 3, 4: 2, 6: 1}
RANX_RANKS |= dict(
    zip(range(100, 117), [16, 15, 14, 13, 12, 11, 10, 17, 9, 7, 6, 5, 4, 3, 2, 1, 8], strict=True)
)


def ranx_case():
    truth = truth_frame(RANX_TARGETS)
    predictions = pl.DataFrame(
        RANX_ROWS,
        schema={"sample_id": pl.Int64, "location": pl.Int64, "score": pl.Float64},
        orient="row",
    )
    return truth, predictions


def test_ranx_preset_equals_ranx_printed_values():
    truth, predictions = ranx_case()
    result = evaluate_nextloc(truth, predictions, k=[1, 3], convention="ranx", chunk_rows=7)
    ranks = dict(zip(result.per_unit["sample_id"], result.per_unit["rank"], strict=True))
    assert ranks == RANX_RANKS
    # the short lists are the oracle's dicts too
    runs = {}
    for sample, location, score in RANX_ROWS:
        runs.setdefault(sample, {})[location] = score
    for sample in (1, 2, 3, 4, 6):
        assert ranks[sample] == oracle_rank(runs[sample], RANX_TARGETS[sample], "ranx")


def test_ranx_preset_equals_ranx_itself():
    ranx = pytest.importorskip("ranx")
    truth, predictions = ranx_case()
    run = {}
    for sample, location, score in RANX_ROWS:  # what Run.from_df and Run.from_file build
        run.setdefault(f"q{sample}", {})[f"l{location}"] = score
    qrels = {f"q{sample}": {f"l{location}": 1} for sample, location in RANX_TARGETS.items()}
    pairs = {"hits@1": "acc@1", "hits@3": "acc@3", "precision@3": "precision@3"}
    pairs |= {"recall@3": "recall@3", "mrr": "mrr", "ndcg@3": "ndcg@3", "map@3": "map@3"}
    pairs |= {"ndcg": "ndcg"}
    want = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), list(pairs), return_mean=False)
    metrics = ["acc@k", "precision@3", "recall@3", "mrr", "ndcg@3", "map@3", "ndcg"]
    ours = evaluate_nextloc(truth, predictions, k=[1, 3], metrics=metrics, convention="ranx")
    per_unit = {f"q{row['sample_id']}": row for row in ours.per_unit.iter_rows(named=True)}
    for theirs, name in pairs.items():
        # ranx returns one value per query, in the order of the sorted query ids
        for query, value in zip(sorted(qrels), want[theirs], strict=True):
            assert per_unit[query][name] == pytest.approx(float(value), abs=1e-12), (name, query)
