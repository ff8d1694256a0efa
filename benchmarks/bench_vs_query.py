"""mobeval beside the query a user would write instead: DuckDB and Polars on the same Parquet files.

    python benchmarks/bench_vs_query.py [--workload recs nextloc] [--users 1000000]
                                        [--samples 100000] [--repeat 3] [--baseline REV]

Workloads (seeded Parquet from ``datagen``, cached in bench_data/):

* ``recs``: ``--users`` x 100 recommended items (scores quantised to 1/20: every list has ties),
  10 rated items a user; trec_eval's conventions (``--convention trec_eval``: ties by item id as
  text, descending), precision, recall and nDCG at 10.
* ``nextloc``: ``--samples`` x 100 candidates, one true location a sample; LibCity's conventions
  (``--convention libcity``: ties by location id), acc@1/5/10, mrr and ndcg@10.

Each tool runs as a whole process (the interpreter's start, imports, reading and scoring), the
tools alternated within each repeat: mobeval's CLI; the best DuckDB query and the best Polars query
we could write for the same numbers (at their defaults: every core); and the read floor, a process
that only reads the same columns (pyarrow ``read_table``, and DuckDB summing each column). Before
any timing every tool's values are checked equal to mobeval's (1e-12). Printed: medians of wall
seconds, CPU seconds (user + system) and peak RSS, and mobeval's ratios to its floor (the faster
reader) and to the best peer. The machine's load is printed beside them. ``--baseline REV``
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_buckets import baseline_code  # noqa: E402
from datagen import nextloc_files, recs_tied_files, snapshot_pipeline  # noqa: E402
from measure import load, machine_line, run_measured  # noqa: E402

TOLERANCE = 1e-12
RECS_METRICS = ("precision@10", "recall@10", "ndcg@10")
NEXTLOC_METRICS = ("acc@1", "acc@5", "acc@10", "mrr", "ndcg@10")
COLUMNS = {  # (truth columns, prediction columns) each tool reads
    "recs": (("user_id", "item_id", "rating"), ("user_id", "item_id", "score")),
    "nextloc": (("sample_id", "location"), ("sample_id", "location", "score")),
}

# trec_eval: a list ranked by score, ties by the item id as text, descending; relevant: rating
# >= 1; nDCG's gain the rating, its ideal over every rated item; users with a list and ratings.
RECS_DUCKDB = """
WITH top AS (
    SELECT user_id, max_by(item_id, (score, item_id::VARCHAR), 10) AS items
    FROM read_parquet('{pred}') GROUP BY user_id),
listed AS (
    SELECT user_id, unnest(items) AS item_id, unnest(range(1, len(items) + 1)) AS rank FROM top),
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
FROM top JOIN ideal USING (user_id) LEFT JOIN hits USING (user_id)
"""

# LibCity: the true location's rank among the sample's candidates, ties by location id
# (ascending); a sample whose truth is not listed scores 0 and counts.
NEXTLOC_DUCKDB = """
WITH pred AS (SELECT sample_id, location, score FROM read_parquet('{pred}')),
truth AS (SELECT sample_id, location FROM read_parquet('{truth}')),
hit AS (SELECT sample_id, location, score FROM pred JOIN truth USING (sample_id, location)),
ranks AS (
    SELECT sample_id, 1 + count(*) FILTER (WHERE pred.score > hit.score
           OR (pred.score = hit.score AND pred.location < hit.location)) AS rank
    FROM pred JOIN hit USING (sample_id) GROUP BY sample_id)
SELECT sum((rank <= 1)::INT) / n AS "acc@1", sum((rank <= 5)::INT) / n AS "acc@5",
       sum((rank <= 10)::INT) / n AS "acc@10", sum(1 / rank) / n AS "mrr",
       sum(CASE WHEN rank <= 10 THEN 1 / log2(rank + 1) ELSE 0 END) / n AS "ndcg@10"
FROM ranks, (SELECT count(*) AS n FROM truth) GROUP BY n
"""


def polars_recs(truth: str, pred: str) -> dict[str, float]:
    import polars as pl

    order = [pl.col("score"), pl.col("item_id").cast(pl.String)]
    top = (
        pl.scan_parquet(pred)
        .select("user_id", "item_id", "score")
        .group_by("user_id")
        .agg(pl.col("item_id").sort_by(order, descending=True).head(10))
        .with_columns(rank=pl.int_ranges(1, pl.col("item_id").list.len() + 1))
        .explode("item_id", "rank")
    )
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
    scored = top.select("user_id").unique().join(ideal, on="user_id").join(hits, "user_id", "left")
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


def polars_nextloc(truth: str, pred: str) -> dict[str, float]:
    import polars as pl

    candidates = pl.scan_parquet(pred).select("sample_id", "location", "score")
    truths = pl.scan_parquet(truth).select("sample_id", "location")
    hit = candidates.join(truths, on=["sample_id", "location"]).select(
        "sample_id", hit_location="location", hit_score="score"
    )
    above = (pl.col("score") > pl.col("hit_score")) | (
        (pl.col("score") == pl.col("hit_score")) & (pl.col("location") < pl.col("hit_location"))
    )
    ranks = candidates.join(hit, on="sample_id").group_by("sample_id").agg(rank=above.sum() + 1)
    n = truths.select(pl.len()).collect().item()
    rank = pl.col("rank")
    out = ranks.select(
        ((rank <= 1).sum() / n).alias("acc@1"),
        ((rank <= 5).sum() / n).alias("acc@5"),
        ((rank <= 10).sum() / n).alias("acc@10"),
        ((1 / rank).sum() / n).alias("mrr"),
        (pl.when(rank <= 10).then(1 / (rank + 1).log(2)).otherwise(0).sum() / n).alias("ndcg@10"),
    )
    return out.collect().row(0, named=True)


def duckdb_query(workload: str, truth: str, pred: str) -> dict[str, float]:
    import duckdb

    query = RECS_DUCKDB if workload == "recs" else NEXTLOC_DUCKDB
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
    "polars": lambda workload, truth, pred: (polars_recs if workload == "recs" else polars_nextloc)(
        truth, pred
    ),
    "read_pyarrow": read_pyarrow,
    "read_duckdb": read_duckdb,
}


def mobeval_command(workload: str, truth: Path, pred: Path) -> list[str]:
    if workload == "recs":
        family = ["recs", "--ratings", str(truth), "--recs", str(pred)]
        options = ["--convention", "trec_eval", "--metrics", ",".join(RECS_METRICS)]
    else:
        family = ["nextloc", "--truth", str(truth), "--pred", str(pred)]
        options = ["--convention", "libcity", "--metrics", "acc@k,mrr,ndcg@10", "--k", "1,5,10"]
    return [sys.executable, "-m", "mobeval", *family, *options, "--quiet", "--format", "csv"]


def commands(workload: str, truth: Path, pred: Path, baseline: str | None):
    """Each tool's command; ``baseline``: a folder holding an older ``mobeval``, run as
    ``before``."""
    worker = [sys.executable, __file__, "--worker"]
    files = ["--workload", workload, "--truth", str(truth), "--pred", str(pred)]
    out = {"mobeval": mobeval_command(workload, truth, pred)}
    if baseline:
        out["before"] = ["env", f"PYTHONPATH={baseline}", *out["mobeval"]]
    for name in WORKERS:
        out[name] = [*worker, name, *files]
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
    metrics = RECS_METRICS if workload == "recs" else NEXTLOC_METRICS
    ours = values("mobeval", run_measured(cmds["mobeval"], out)[1])
    if "before" in cmds:
        before = values("mobeval", run_measured(cmds["before"], out)[1])
        same = all(before[m] == ours[m] for m in metrics)  # the same bits
        print(f"  before: {'the same values, bit for bit' if same else before}")
    for name in ("duckdb", "polars"):
        theirs = values(name, run_measured(cmds[name], out)[1])
        worst = max(abs(ours[m] - theirs[m]) for m in metrics)
        print(f"  {name}: largest |difference| from mobeval {worst:.1e} over {', '.join(metrics)}")
        if not worst <= TOLERANCE:
            sys.exit(f"{workload}: {name} disagrees with mobeval: {theirs} vs {ours}")


def measure(workload, truth, pred, repeat: int, baseline: str | None) -> dict[str, dict]:
    cmds = commands(workload, truth, pred, baseline)
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
    for what in ("wall", "cpu"):
        floor = min(medians["read_pyarrow"][what], medians["read_duckdb"][what])
        peer = min(medians["duckdb"][what], medians["polars"][what])
        print(
            f"mobeval {what}: {ours[what] / floor:.2f}x its floor (the faster read), "
            f"{ours[what] / peer:.2f}x the best peer query"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", nargs="+", choices=("recs", "nextloc"), default=["recs"])
    parser.add_argument("--users", type=int, default=100_000, help="recs: users x 100 rows")
    parser.add_argument("--samples", type=int, default=100_000, help="nextloc: samples x 100")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", help="git revision whose mobeval runs beside (as before)")
    parser.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    parser.add_argument("--truth", help=argparse.SUPPRESS)
    parser.add_argument("--pred", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(WORKERS[args.worker](args.workload[0], args.truth, args.pred)))
        return
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
    if workload == "recs":
        truth, pred = recs_tied_files(args.users)
        label = f"recs, {args.users:,} users x 100, trec_eval, precision/recall/ndcg@10"
    else:
        truth, pred = nextloc_files(args.samples, 100)
        label = f"nextloc, {args.samples:,} samples x 100, libcity, acc@1/5/10, mrr, ndcg@10"
    print(f"{label}: values checked")
    medians = measure(workload, truth, pred, args.repeat, baseline)
    report(f"{label} (medians of {args.repeat}, alternated; load after: {load()})", medians)


if __name__ == "__main__":
    main()
