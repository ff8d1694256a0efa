"""mobeval beside the query a user would write instead: DuckDB and Polars on the same Parquet files.

    python benchmarks/bench_vs_query.py [--workload recs nextloc population beyond]
                                        [--users 1000000] [--train-users 1000000]
                                        [--samples 100000] [--repeat 3] [--baseline REV]
                                        [--queries best|all]
                                        [--layout sorted|grouped|scattered]

Workloads (seeded Parquet from ``datagen``, cached in bench_data/):

* ``recs``: ``--users`` x 100 recommended items (scores quantised to 1/20: every list has ties),
  10 rated items a user; trec_eval's conventions (``--convention trec_eval``: ties by item id as
  text, descending), precision, recall and nDCG at 10.
* ``population``: the same lists, what they cover of the 50,000-item catalogue (RecBole's
  ``--population-convention recbole``): ``coverage@10`` and ``gini@10`` of each list's first 10
  items in trec_eval's order; mobeval also reads the ratings (``recs`` requires them), which the
  queries do not.
* ``beyond``: the same lists' first 10 items in trec_eval's order against ``--train-users`` x 10
  training rows (``datagen.recs_train_file``): Microsoft Recommenders' ``diversity@10`` and
  ``serendipity@10`` with its co-occurrence similarity (``--population-convention
  msrecommenders``; the queries: :mod:`queries_beyond`). mobeval also reads the ratings.
* ``nextloc``: ``--samples`` x 100 candidates, one true location a sample; LibCity's conventions
  (``--convention libcity``: ties by location id), acc@1/5/10, mrr and ndcg@10.

``--layout``: the predictions as written (``sorted`` by unit), or a copy out of key order
(``rss_nextloc.unsorted_copy``, cached beside them): row groups in reverse order and within each
the units permuted, each unit's rows together (``grouped``: a data loader's shuffled batches, a
group-by's output), or the rows permuted, a unit's rows apart (``scattered``). The queries do not
depend on the order; mobeval streams grouped next-location samples as it streams sorted ones, and
takes hash buckets on disk for the rest.

Each tool runs as a whole process (the interpreter's start, imports, reading and scoring), the
tools alternated within each repeat: mobeval's CLI; the best DuckDB query and the best Polars query
we could write for the same numbers (at their defaults: every core; ``--queries all`` runs every
formulation tried, :data:`QUERIES`, and prints which won); the read floor, a process that only
reads the same columns (pyarrow ``read_table``, and DuckDB summing each column); and ``imports``,
a process that imports mobeval's libraries as its command line does and runs nothing
(``bench_startup.LIBRARIES_CODE``: the part of mobeval's start no change to mobeval removes).
Before any timing every tool's values are checked equal to mobeval's (1e-12). Printed: medians
of wall seconds, CPU seconds (user + system) and peak RSS, mobeval's ratios to its floor (the
faster reader) and to the best peer, and the libraries' import to the best peer's wall. The
machine's load is printed beside them. ``--baseline REV``
runs that git revision's mobeval beside (``before``; its values compared bit for bit). Both
mobeval codes run from copies taken at the start, so edits during the run change nothing.
"""

from __future__ import annotations

import argparse
import compileall
import json
import statistics
import sys
import tempfile
from pathlib import Path

# The harness's own modules (datagen: NumPy and pyarrow) are imported where they are used, not
# here: a worker (a peer's query, a floor's read) runs this file and imports its tool alone, as
# the process a user would run does (with them, a floor's read took 0.2 s and 0.4 s of CPU more).
sys.path.insert(0, str(Path(__file__).resolve().parent))
from queries_beyond import BEYOND_METRICS, BEYOND_SCORES, polars_beyond  # noqa: E402

TOLERANCE = 1e-12
RECS_METRICS = ("precision@10", "recall@10", "ndcg@10")
NEXTLOC_METRICS = ("acc@1", "acc@5", "acc@10", "mrr", "ndcg@10")
POPULATION_METRICS = ("coverage@10", "gini@10")
METRICS = {
    "recs": RECS_METRICS,
    "nextloc": NEXTLOC_METRICS,
    "population": POPULATION_METRICS,
    "beyond": BEYOND_METRICS,
}
COLUMNS = {  # (truth columns, prediction columns) each tool reads; population: the catalogue's
    "recs": (("user_id", "item_id", "rating"), ("user_id", "item_id", "score")),
    "population": (("item_id",), ("user_id", "item_id", "score")),
    "beyond": (("user_id", "item_id"), ("user_id", "item_id", "score")),  # truth: training rows
    "nextloc": (("sample_id", "location"), ("sample_id", "location", "score")),
}

# trec_eval: a list ranked by score, ties by the item id as text, descending; relevant: rating
# >= 1; nDCG's gain the rating, its ideal over every rated item; users with a list and ratings.
RECS_TOP = {  # each list's top 10 as rows (user_id, item_id, rank), and its users
    # max_by's top-10 list per user, unnested with its positions
    "max_by": """
WITH top AS (
    SELECT user_id, max_by(item_id, (score, item_id::VARCHAR), 10) AS items
    FROM read_parquet('{pred}') GROUP BY user_id),
listed AS (
    SELECT user_id, unnest(items) AS item_id, unnest(range(1, len(items) + 1)) AS rank FROM top),
users AS (SELECT user_id FROM top),
""",
    # a window row_number() per user, QUALIFY keeping the first 10
    "window": """
WITH listed AS (
    SELECT user_id, item_id, row_number() OVER (
        PARTITION BY user_id ORDER BY score DESC, item_id::VARCHAR DESC) AS rank
    FROM read_parquet('{pred}') QUALIFY rank <= 10),
users AS (SELECT user_id FROM listed WHERE rank = 1),
""",
}
RECS_SCORES = """
rated AS (SELECT user_id, item_id, rating FROM read_parquet('{truth}')),
hits AS (
    SELECT user_id, count(*) FILTER (WHERE rating >= 1) AS tp,
           sum(greatest(rating, 0) / log2(rank + 1)) AS dcg
    FROM listed JOIN rated USING (user_id, item_id) GROUP BY user_id),
ideal AS (
    SELECT user_id, count(*) FILTER (WHERE rating >= 1) AS n_rel,
           sum(greatest(rating, 0) / log2(pos + 1)) FILTER (WHERE pos <= 10) AS idcg
    FROM (SELECT user_id, rating,
                 row_number() OVER (PARTITION BY user_id ORDER BY rating DESC) AS pos FROM rated)
    GROUP BY user_id)
SELECT avg(coalesce(tp, 0) / 10) AS "precision@10",
       avg(CASE WHEN n_rel > 0 THEN coalesce(tp, 0) / n_rel ELSE 0 END) AS "recall@10",
       avg(CASE WHEN idcg > 0 THEN coalesce(dcg, 0) / idcg ELSE 0 END) AS "ndcg@10"
FROM users JOIN ideal USING (user_id) LEFT JOIN hits USING (user_id)
"""
RECS_DUCKDB = {name: top + RECS_SCORES for name, top in RECS_TOP.items()}

# RecBole's ItemCoverage and GiniIndex over the catalogue and its padding item (N = items + 1):
# the distinct items of the first 10 over N; sum_j (2j - N - 1) x_j / (N T), the counts x_j
# ascending, the N - n never listed (x = 0) first. ``truth``: the catalogue.
POPULATION_SCORES = """
counts AS (SELECT item_id, count(*) AS c FROM listed GROUP BY item_id),
sizes AS (
    SELECT count(*) + 1 AS n, (SELECT count(*) FROM counts) AS listed_items
    FROM read_parquet('{truth}')),
ranked AS (SELECT c, row_number() OVER (ORDER BY c) AS j FROM counts)
SELECT any_value(listed_items) / any_value(n) AS "coverage@10",
       sum((2 * (j + n - listed_items) - n - 1) * c) / (any_value(n) * sum(c)) AS "gini@10"
FROM ranked, sizes
"""
POPULATION_DUCKDB = {name: top + POPULATION_SCORES for name, top in RECS_TOP.items()}
BEYOND_DUCKDB = {name: RECS_TOP["max_by"] + scores for name, scores in BEYOND_SCORES.items()}

# LibCity: the true location's rank among the sample's candidates, ties by location id
# (ascending); a sample whose truth is not listed scores 0 and counts. Every formulation ends with
# the same means over the truth's samples.
NEXTLOC_MEANS = """
SELECT sum((rank <= 1)::INT) / n AS "acc@1", sum((rank <= 5)::INT) / n AS "acc@5",
       sum((rank <= 10)::INT) / n AS "acc@10", sum(1 / rank) / n AS "mrr",
       sum(CASE WHEN rank <= 10 THEN 1 / log2(rank + 1) ELSE 0 END) / n AS "ndcg@10"
FROM ranks, (SELECT count(*) AS n FROM read_parquet('{truth}')) GROUP BY n
"""
NEXTLOC_DUCKDB = {
    # the hit rows by a semi join (the truth is the build side), then each sample's candidates
    # counted against its hit by a join on sample_id alone (the hits the build side)
    "semi": """
WITH hit AS (
    SELECT sample_id, p.location AS target, p.score AS hs FROM read_parquet('{pred}') p
    SEMI JOIN read_parquet('{truth}') t USING (sample_id, location)),
ranks AS (
    SELECT 1 + count(*) FILTER (WHERE p.score > hs OR (p.score = hs AND p.location < target))
           AS rank
    FROM read_parquet('{pred}') p JOIN hit USING (sample_id) GROUP BY sample_id)
""",
    # the same with inner joins (the planner builds the first on the predictions)
    "join": """
WITH pred AS (SELECT sample_id, location, score FROM read_parquet('{pred}')),
truth AS (SELECT sample_id, location FROM read_parquet('{truth}')),
hit AS (SELECT sample_id, location, score FROM pred JOIN truth USING (sample_id, location)),
ranks AS (
    SELECT sample_id, 1 + count(*) FILTER (WHERE pred.score > hit.score
           OR (pred.score = hit.score AND pred.location < hit.location)) AS rank
    FROM pred JOIN hit USING (sample_id) GROUP BY sample_id)
""",
    # one join on sample_id; the hit's score by a window max with a FILTER
    "filter": """
WITH j AS (
    SELECT p.sample_id, p.location, p.score, t.location AS target
    FROM read_parquet('{pred}') p JOIN read_parquet('{truth}') t USING (sample_id)),
ranks AS (
    SELECT 1 + count(*) FILTER (WHERE score > hs OR (score = hs AND location < target)) AS rank
    FROM (SELECT *, max(score) FILTER (WHERE location = target)
                    OVER (PARTITION BY sample_id) AS hs FROM j)
    WHERE hs IS NOT NULL GROUP BY sample_id)
""",
    # every candidate ranked by a window row_number(), the truth's row picked by a join
    "window": """
WITH ranked AS (
    SELECT sample_id, location,
           row_number() OVER (PARTITION BY sample_id ORDER BY score DESC, location) AS rank
    FROM read_parquet('{pred}')),
ranks AS (SELECT rank FROM ranked JOIN read_parquet('{truth}') USING (sample_id, location))
""",
    # an ordered list aggregate of "is the truth" per sample, the rank its first true position
    "list": """
WITH j AS (
    SELECT p.sample_id, p.location = t.location AS hit, p.score, p.location
    FROM read_parquet('{pred}') p JOIN read_parquet('{truth}') t USING (sample_id)),
per AS (SELECT list(hit ORDER BY score DESC, location) AS hits FROM j GROUP BY sample_id),
ranks AS (SELECT list_position(hits, true) AS rank FROM per WHERE list_contains(hits, true))
""",
    # the lists of scores and locations per sample, the hit's score by max() FILTER
    "lists": """
WITH j AS (
    SELECT p.sample_id, p.location, p.score, t.location AS target
    FROM read_parquet('{pred}') p JOIN read_parquet('{truth}') t USING (sample_id)),
per AS (
    SELECT max(score) FILTER (WHERE location = target) AS hs, any_value(target) AS target,
           list(score) AS scores, list(location) AS locations FROM j GROUP BY sample_id),
ranks AS (
    SELECT 1 + len(list_filter(list_zip(scores, locations),
                               lambda x: x[1] > hs OR (x[1] = hs AND x[2] < target))) AS rank
    FROM per WHERE hs IS NOT NULL)
""",
}
NEXTLOC_DUCKDB = {name: query + NEXTLOC_MEANS for name, query in NEXTLOC_DUCKDB.items()}
#: SET threads=1 before the query (DuckDB's default: every core)
ONE_THREAD = "_1thread"


def polars_recs_top(pred: str, variant: str):
    """Each list's top 10 as rows (user_id, item_id, rank), lazily."""
    import polars as pl

    lists = pl.scan_parquet(pred).select("user_id", "item_id", "score")
    order = [pl.col("score"), pl.col("item_id").cast(pl.String)]
    if variant == "over":  # each row's place in its list by a rank over the user, the first 10
        place = pl.struct(order).rank("ordinal", descending=True).over("user_id")
        return lists.with_columns(rank=place).filter(pl.col("rank") <= 10).drop("score")
    return (  # "sort_by": each user's items sorted within a group_by, the first 10
        lists.group_by("user_id")
        .agg(pl.col("item_id").sort_by(order, descending=True).head(10))
        .with_columns(rank=pl.int_ranges(1, pl.col("item_id").list.len() + 1))
        .explode("item_id", "rank")
    )


def polars_recs(truth: str, pred: str, variant: str) -> dict[str, float]:
    import polars as pl

    top = polars_recs_top(pred, variant)
    rated = pl.scan_parquet(truth).select("user_id", "item_id", "rating")
    gain = pl.col("rating").clip(lower_bound=0)
    hits = (
        top.join(rated, on=["user_id", "item_id"])
        .group_by("user_id")
        .agg(tp=(pl.col("rating") >= 1).sum(), dcg=(gain / (pl.col("rank") + 1).log(2)).sum())
    )
    position = pl.col("rating").rank("ordinal", descending=True).over("user_id")
    ideal = (
        rated.with_columns(pos=position)
        .group_by("user_id")
        .agg(
            n_rel=(pl.col("rating") >= 1).sum(),
            idcg=(gain / (pl.col("pos") + 1).log(2)).filter(pl.col("pos") <= 10).sum(),
        )
    )
    tp = pl.col("tp").fill_null(0)
    users = top.filter(pl.col("rank") == 1).select("user_id")
    scored = users.join(ideal, on="user_id").join(hits, "user_id", "left")
    out = scored.select(
        (tp / 10).mean().alias("precision@10"),
        pl.when(pl.col("n_rel") > 0)
        .then(tp / pl.col("n_rel"))
        .otherwise(0)
        .mean()
        .alias("recall@10"),
        pl.when(pl.col("idcg") > 0)
        .then(pl.col("dcg").fill_null(0) / pl.col("idcg"))
        .otherwise(0)
        .mean()
        .alias("ndcg@10"),
    )
    return out.collect().row(0, named=True)


def polars_population(truth: str, pred: str, variant: str) -> dict[str, float]:
    """:data:`POPULATION_SCORES`' values of the first 10 items of each list (``truth``: the
    catalogue)."""
    import polars as pl

    counts = polars_recs_top(pred, variant).group_by("item_id").len().collect()["len"]
    n = pl.scan_parquet(truth).select(pl.len()).collect().item() + 1
    ascending = counts.sort().cast(pl.Int64).to_list()
    skipped = n - len(ascending)  # the items never listed, counted 0, first
    weighted = sum((2 * (skipped + j) - n - 1) * c for j, c in enumerate(ascending, 1))
    return {"coverage@10": len(ascending) / n, "gini@10": weighted / (n * sum(ascending))}


def polars_beyond_lists(truth: str, pred: str, variant: str) -> dict[str, float]:
    """:func:`queries_beyond.polars_beyond` of each list's first 10 items (``truth``: the
    training rows)."""
    return polars_beyond(polars_recs_top(pred, "sort_by").drop("rank"), truth, variant)


def polars_nextloc_ranks(truth: str, pred: str, variant: str):
    """The rank of each listed truth (a column ``rank``), lazily (eagerly read for ``eager``)."""
    import polars as pl

    candidates = pl.scan_parquet(pred).select("sample_id", "location", "score")
    truths = pl.scan_parquet(truth).select("sample_id", "location")
    if variant == "eager":
        candidates, truths = candidates.collect().lazy(), truths.collect().lazy()
    if variant in ("over", "sort_by"):
        order = [pl.col("score"), -pl.col("location")]
        if variant == "over":  # every candidate's place by a rank over the sample
            place = pl.struct(order).rank("ordinal", descending=True).over("sample_id")
            ranked = candidates.with_columns(rank=place)
            return ranked.join(truths, on=["sample_id", "location"]).select("rank")
        is_truth = pl.col("location") == pl.col("target")  # "sort_by": within a group_by
        return (
            candidates.join(truths.rename({"location": "target"}), on="sample_id")
            .group_by("sample_id")
            .agg(hits=is_truth.sort_by(order, descending=True))
            .filter(pl.col("hits").list.any())
            .select(rank=pl.col("hits").list.arg_max() + 1)
        )
    # "semi", "eager": the hit rows by a semi join; "join": by an inner join
    how = "inner" if variant == "join" else "semi"
    hit = candidates.join(truths, on=["sample_id", "location"], how=how).select(
        "sample_id", hit_location="location", hit_score="score"
    )
    above = (pl.col("score") > pl.col("hit_score")) | (
        (pl.col("score") == pl.col("hit_score")) & (pl.col("location") < pl.col("hit_location"))
    )
    return candidates.join(hit, on="sample_id").group_by("sample_id").agg(rank=above.sum() + 1)


def polars_nextloc(truth: str, pred: str, variant: str) -> dict[str, float]:
    import polars as pl

    ranks = polars_nextloc_ranks(truth, pred, variant)
    n = pl.scan_parquet(truth).select(pl.len()).collect().item()
    rank = pl.col("rank")
    out = ranks.select(
        ((rank <= 1).sum() / n).alias("acc@1"),
        ((rank <= 5).sum() / n).alias("acc@5"),
        ((rank <= 10).sum() / n).alias("acc@10"),
        ((1 / rank).sum() / n).alias("mrr"),
        (pl.when(rank <= 10).then(1 / (rank + 1).log(2)).otherwise(0).sum() / n).alias("ndcg@10"),
    )
    return out.collect().row(0, named=True)


def duckdb_query(workload: str, truth: str, pred: str, variant: str) -> dict[str, float]:
    import duckdb

    if variant.endswith(ONE_THREAD):
        duckdb.sql("SET threads = 1")
        variant = variant.removesuffix(ONE_THREAD)
    queries = {
        "recs": RECS_DUCKDB,
        "nextloc": NEXTLOC_DUCKDB,
        "population": POPULATION_DUCKDB,
        "beyond": BEYOND_DUCKDB,
    }
    query = queries[workload][variant]
    result = duckdb.sql(query.format(truth=truth, pred=pred))
    return dict(zip(result.columns, result.fetchall()[0], strict=True))


def read_pyarrow(workload: str, truth: str, pred: str) -> dict[str, float]:
    import pyarrow.parquet as pq

    rows = 0
    for path, columns in zip((truth, pred), COLUMNS[workload], strict=True):
        rows += pq.read_table(path, columns=list(columns)).num_rows
    return {"rows": rows}


def read_duckdb(workload: str, truth: str, pred: str) -> dict[str, float]:
    import duckdb

    rows = 0
    for path, columns in zip((truth, pred), COLUMNS[workload], strict=True):
        sums = ", ".join(f"sum({c})" for c in columns)  # every value read (no footer statistic)
        rows += duckdb.sql(f"SELECT count(*), {sums} FROM read_parquet('{path}')").fetchall()[0][0]
    return {"rows": rows}


WORKERS = {
    "duckdb": duckdb_query,
    "polars": lambda workload, truth, pred, variant: {
        "recs": polars_recs,
        "nextloc": polars_nextloc,
        "population": polars_population,
        "beyond": polars_beyond_lists,
    }[workload](truth, pred, variant),
    "read_pyarrow": lambda workload, truth, pred, variant: read_pyarrow(workload, truth, pred),
    "read_duckdb": lambda workload, truth, pred, variant: read_duckdb(workload, truth, pred),
}
PEERS = ("duckdb", "polars")
#: Every formulation of each peer (``--queries all``), the best first (``--queries best`` runs
#: the first: the fastest in CPU and wall on this machine, BENCHMARKS.md "Issue 37, sixth pass
#: (nextloc3)").
QUERIES = {
    "recs": {"duckdb": ["max_by", "window"], "polars": ["sort_by", "over"]},
    "population": {"duckdb": ["max_by", "window"], "polars": ["sort_by", "over"]},
    "beyond": {"duckdb": ["semi", "join"], "polars": ["semi", "join"]},
    "nextloc": {
        "duckdb": ["semi", f"semi{ONE_THREAD}", "join", "filter", "window", "list", "lists"],
        "polars": ["semi", "eager", "join", "over", "sort_by"],
    },
}


def mobeval_command(workload: str, truth: Path, pred: Path) -> list[str]:
    if workload == "recs":
        family = ["recs", "--ratings", str(truth), "--recs", str(pred)]
        options = ["--convention", "trec_eval", "--metrics", ",".join(RECS_METRICS)]
    elif workload == "population":  # truth: the catalogue; the ratings beside the lists
        family = ["recs", "--ratings", str(pred.with_name("ratings.parquet")), "--recs", str(pred)]
        options = ["--convention", "trec_eval", "--metrics", ",".join(POPULATION_METRICS)]
        options += ["--population-convention", "recbole", "--catalogue", str(truth)]
    elif workload == "beyond":  # truth: the training rows; the ratings beside the lists
        family = ["recs", "--ratings", str(pred.with_name("ratings.parquet")), "--recs", str(pred)]
        options = ["--convention", "trec_eval", "--metrics", ",".join(BEYOND_METRICS)]
        options += ["--population-convention", "msrecommenders", "--train", str(truth)]
    else:
        family = ["nextloc", "--truth", str(truth), "--pred", str(pred)]
        options = ["--convention", "libcity", "--metrics", "acc@k,mrr,ndcg@10", "--k", "1,5,10"]
    return [sys.executable, "-m", "mobeval", *family, *options, "--quiet", "--format", "csv"]


def commands(workload: str, truth: Path, pred: Path, baseline: str | None, queries: str):
    """Each tool's command; ``baseline``: a folder holding an older ``mobeval``, run as
    ``before``; the peers' queries ``tool:variant``, the best of each tool or all of them."""
    worker = [sys.executable, __file__, "--workload", workload, "--truth", str(truth)]
    worker += ["--pred", str(pred), "--worker"]
    out = {"mobeval": mobeval_command(workload, truth, pred)}
    if baseline:
        out["before"] = ["env", f"PYTHONPATH={baseline}", *out["mobeval"]]
    for tool in PEERS:
        variants = QUERIES[workload][tool]
        for variant in variants if queries == "all" else variants[:1]:
            out[f"{tool}:{variant}"] = [*worker, tool, "--variant", variant]
    for name in WORKERS:
        if name not in PEERS:
            out[name] = [*worker, name]
    from bench_startup import LIBRARIES_CODE

    out["imports"] = [sys.executable, "-c", LIBRARIES_CODE]  # mobeval's libraries, nothing run
    return out


def values(name: str, text: str) -> dict[str, float]:
    if name != "mobeval":
        return json.loads(text)
    lines = [line.split(",") for line in text.strip().splitlines()]
    header = lines[0]
    rows = [dict(zip(header, line, strict=True)) for line in lines[1:]]
    return {row["metric"]: float(row["value"]) for row in rows}


def check_equal(workload: str, cmds: dict[str, list[str]], out: str) -> None:
    """Every tool's values equal to mobeval's (TOLERANCE), before any timing; exits if not."""
    from measure import run_measured

    metrics = METRICS[workload]
    ours = values("mobeval", run_measured(cmds["mobeval"], out)[1])
    if "before" in cmds:
        before = values("mobeval", run_measured(cmds["before"], out)[1])
        same = all(before[m] == ours[m] for m in metrics)  # the same bits
        print(f"  before: {'the same values, bit for bit' if same else before}")
    for name in (name for name in cmds if name.split(":")[0] in PEERS):
        theirs = values(name, run_measured(cmds[name], out)[1])
        worst = max(abs(ours[m] - theirs[m]) for m in metrics)
        print(f"  {name}: largest |difference| from mobeval {worst:.1e} over {', '.join(metrics)}")
        if not worst <= TOLERANCE:
            sys.exit(f"{workload}: {name} disagrees with mobeval: {theirs} vs {ours}")


def measure(workload, truth, pred, repeat: int, baseline: str | None, queries: str):
    """Medians of each command's wall, CPU and peak RSS over ``repeat`` alternated runs."""
    from measure import run_measured  # the module, not this function

    cmds = commands(workload, truth, pred, baseline, queries)
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "stdout.txt")
        check_equal(workload, cmds, out)  # also fills the Numba cache and the page cache
        runs = {name: [] for name in cmds}
        for _ in range(repeat):
            for name, cmd in cmds.items():  # alternated
                runs[name].append(run_measured(cmd, out)[0])
    keys = ("wall", "cpu", "rss_kib")
    return {
        name: {key: statistics.median(r[key] for r in reports) for key in keys}
        for name, reports in runs.items()
    }


def report(label: str, medians: dict[str, dict]) -> None:
    print(f"\n{label}")
    print("| tool | wall s | CPU s | peak RSS MiB |\n|---|---|---|---|")
    for name, m in medians.items():
        print(f"| {name} | {m['wall']:.2f} | {m['cpu']:.2f} | {m['rss_kib'] / 1024:.0f} |")
    ours = medians["mobeval"]
    peers = [name for name in medians if name.split(":")[0] in PEERS]
    fastest = min(peers, key=lambda name: medians[name]["wall"])
    start = medians["imports"]
    print(
        f"mobeval's libraries alone (imported as its command line does, nothing run): "
        f"{start['wall']:.2f} s / {start['cpu']:.2f} s, "
        f"{start['wall'] / medians[fastest]['wall']:.2f}x the best peer query's wall ({fastest})"
    )
    for what in ("wall", "cpu"):
        floor = min(medians["read_pyarrow"][what], medians["read_duckdb"][what])
        best = min(peers, key=lambda name: medians[name][what])
        print(
            f"mobeval {what}: {ours[what] / floor:.2f}x its floor (the faster read), "
            f"{ours[what] / medians[best][what]:.2f}x the best peer query ({best})"
        )
        for tool in PEERS:
            mine = [name for name in peers if name.startswith(f"{tool}:")]
            if len(mine) > 1:
                print(f"  {tool}'s fastest in {what}: {min(mine, key=lambda n: medians[n][what])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--workload",
        nargs="+",
        choices=tuple(METRICS),
        default=["recs"],
        metavar="WORKLOAD",
        help=f"one or more of {', '.join(METRICS)} (default: recs)",
    )
    parser.add_argument(
        "--users", type=int, default=100_000, help="recs, population: users x 100 rows"
    )
    parser.add_argument(
        "--train-users", type=int, default=1_000_000, help="beyond: users x 10 training rows"
    )
    parser.add_argument("--samples", type=int, default=100_000, help="nextloc: samples x 100")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", help="git revision whose mobeval runs beside (as before)")
    parser.add_argument(
        "--queries",
        choices=("best", "all"),
        default="best",
        help="the peers' best query each (default) or every formulation (QUERIES)",
    )
    parser.add_argument(
        "--layout",
        choices=("sorted", "grouped", "scattered"),
        default="sorted",
        help="the predictions sorted by unit (as written), or a copy out of key order",
    )
    parser.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    parser.add_argument("--variant", help=argparse.SUPPRESS)
    parser.add_argument("--truth", help=argparse.SUPPRESS)
    parser.add_argument("--pred", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        work = WORKERS[args.worker]
        print(json.dumps(work(args.workload[0], args.truth, args.pred, args.variant)))
        return
    from bench_buckets import baseline_code
    from datagen import snapshot_pipeline
    from measure import load, machine_line

    print(f"machine: {machine_line()}; load before: {load()}")
    with tempfile.TemporaryDirectory() as code:
        snapshot_pipeline(str(Path(code) / "now"))  # edits during the run change nothing
        baseline = None
        if args.baseline:
            (Path(code) / "before").mkdir()
            baseline = baseline_code(args.baseline, Path(code) / "before")
        # to bytecode first, as ``pip install`` does: with PYTHONDONTWRITEBYTECODE set (as here)
        # every run would otherwise compile mobeval's modules from source (0.05-0.1 s of CPU)
        compileall.compile_dir(code, quiet=1)
        for workload in args.workload:
            run_workload(workload, args, baseline)


def run_workload(workload: str, args, baseline: str | None) -> None:
    from datagen import nextloc_files, recs_catalogue_file, recs_tied_files, recs_train_file
    from measure import load

    if workload == "recs":
        truth, pred = recs_tied_files(args.users)
        label = f"recs, {args.users:,} users x 100, trec_eval, precision/recall/ndcg@10"
    elif workload == "population":
        truth, pred = recs_catalogue_file(), recs_tied_files(args.users)[1]
        label = f"population, {args.users:,} users x 100, recbole, coverage/gini@10"
    elif workload == "beyond":
        truth, pred = recs_train_file(args.train_users), recs_tied_files(args.users)[1]
        label = (
            f"beyond, {args.users:,} users x 100 against {args.train_users:,} x 10 training "
            "rows, msrecommenders, diversity/serendipity@10"
        )
    else:
        truth, pred = nextloc_files(args.samples, 100)
        label = f"nextloc, {args.samples:,} samples x 100, libcity, acc@1/5/10, mrr, ndcg@10"
    if args.layout != "sorted":
        from rss_nextloc import unsorted_copy

        pred = unsorted_copy(pred, 100, args.layout)
        label += f", {args.layout} rows ({pred.name})"
    print(f"{label}: values checked")
    medians = measure(workload, truth, pred, args.repeat, baseline, args.queries)
    report(f"{label} (medians of {args.repeat}, alternated; load after: {load()})", medians)


if __name__ == "__main__":
    main()
