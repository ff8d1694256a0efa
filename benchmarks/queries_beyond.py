"""Microsoft Recommenders' ``diversity@10`` and ``serendipity@10`` (co-occurrence similarity) as
the DuckDB and Polars queries a user would write, for ``bench_vs_query.py --workload beyond``.

Each list's first 10 items in trec_eval's order (the recs workload's ``listed``), against the
training rows (``user_id``, ``item_id``; a repeated row counts again): ``sim(i, j) = n_ij /
(sqrt(c_i) sqrt(c_j))``, ``n_ij`` the pairs of a self-join of the training rows on the user,
``c_i`` the item's training rows, 0 for items never seen together (docs/novelty.md).
``diversity@10``: the mean over users of ``1 -`` the mean ``sim`` over the pairs of distinct
items of the list; ``serendipity@10``: the mean over users with training rows of the mean over
their listed items ``i`` of ``1 -`` the mean of ``sim(i, j)`` over the user's training rows
``j``. Two ways to count ``n_ij``: every pair of the self-join grouped (``join``), or only the
pairs the metrics look up, the self-join filtered by a semi join on them (``semi``).
"""

from __future__ import annotations

BEYOND_METRICS = ("diversity@10", "serendipity@10")

# Follows the recs workload's ``listed (user_id, item_id, rank)`` and ``users``; ``{truth}``: the
# training rows.
_PAIRS = """
train AS (SELECT user_id, item_id FROM read_parquet('{truth}')),
pairs AS (SELECT a.user_id, a.item_id AS i, b.item_id AS j
          FROM listed a JOIN listed b ON a.user_id = b.user_id AND a.item_id <> b.item_id),
served AS (SELECT l.user_id, l.item_id AS i, t.item_id AS j
           FROM listed l JOIN train t USING (user_id)),
"""
_COUNTS = {
    "semi": """
needed AS (SELECT DISTINCT i, j FROM (SELECT i, j FROM pairs UNION ALL SELECT i, j FROM served)),
co AS (SELECT a.item_id AS i, b.item_id AS j, count(*) AS n
       FROM train a JOIN train b USING (user_id)
       SEMI JOIN needed ON a.item_id = needed.i AND b.item_id = needed.j GROUP BY i, j),
""",
    "join": """
co AS (SELECT a.item_id AS i, b.item_id AS j, count(*) AS n
       FROM train a JOIN train b USING (user_id) GROUP BY i, j),
""",
}
_SCORES = """
items AS (SELECT item_id, count(*) AS c FROM train GROUP BY item_id),
sim AS (SELECT i, j, n / (sqrt(ci.c) * sqrt(cj.c)) AS s
        FROM co JOIN items ci ON ci.item_id = i JOIN items cj ON cj.item_id = j),
ils AS (SELECT user_id, avg(coalesce(s, 0)) AS ils FROM pairs LEFT JOIN sim USING (i, j)
        GROUP BY user_id),
per_item AS (SELECT user_id, avg(coalesce(s, 0)) AS m FROM served LEFT JOIN sim USING (i, j)
             GROUP BY user_id, i),
per_user AS (SELECT user_id, avg(1 - m) AS v FROM per_item GROUP BY user_id)
SELECT (SELECT avg(1 - ils) FROM ils) AS "diversity@10",
       (SELECT avg(v) FROM per_user) AS "serendipity@10"
"""
#: The queries' text after ``listed`` and ``users``, by the way ``n_ij`` is counted.
BEYOND_SCORES = {name: _PAIRS + counts + _SCORES for name, counts in _COUNTS.items()}


def polars_beyond(listed, truth: str, variant: str) -> dict[str, float]:
    """:data:`BEYOND_SCORES`' values in Polars: ``listed`` (user_id, item_id) lazily, each
    list's first 10 items; ``truth``: the training rows; ``variant``: ``join`` or ``semi``."""
    import polars as pl

    train = pl.scan_parquet(truth).select("user_id", "item_id")
    pairs = (
        listed.join(listed, on="user_id", suffix="_j")
        .filter(pl.col("item_id") != pl.col("item_id_j"))
        .select("user_id", i="item_id", j="item_id_j")
    )
    served = listed.join(train, on="user_id", suffix="_j").select(
        "user_id", i="item_id", j="item_id_j"
    )
    every = train.join(train, on="user_id", suffix="_j").select(i="item_id", j="item_id_j")
    if variant == "semi":
        needed = pl.concat([pairs.select("i", "j"), served.select("i", "j")]).unique()
        every = every.join(needed, on=["i", "j"], how="semi")
    items = train.group_by("item_id").agg(c=pl.len())
    sim = (
        every.group_by("i", "j")
        .agg(n=pl.len())
        .join(items.rename({"item_id": "i", "c": "c_i"}), on="i")
        .join(items.rename({"item_id": "j", "c": "c_j"}), on="j")
        .select("i", "j", s=pl.col("n") / (pl.col("c_i").sqrt() * pl.col("c_j").sqrt()))
    )
    similarity = pl.col("s").fill_null(0).mean()
    looked_up = {"other": sim, "on": ["i", "j"], "how": "left"}
    ils = pairs.join(**looked_up).group_by("user_id").agg(ils=similarity)
    per_item = served.join(**looked_up).group_by("user_id", "i").agg(m=similarity)
    per_user = per_item.group_by("user_id").agg(v=(1 - pl.col("m")).mean())
    diversity, serendipity = pl.collect_all(
        [ils.select((1 - pl.col("ils")).mean()), per_user.select(pl.col("v").mean())]
    )
    return {"diversity@10": diversity.item(), "serendipity@10": serendipity.item()}
