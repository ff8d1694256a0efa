"""The leaderboard of a comparison: per city and metric, the models ranked by their mean, with a
compact letter display (Piepho 2004): models that share a letter are not significantly different
at ``alpha`` (by the corrected p-values of one test); two models without a common letter are.

The letters come from Piepho's insert-and-absorb algorithm: start from one group holding every
model; for each significant pair, split every group holding both into the group without the one
and the group without the other; drop a group contained in another. The groups that remain are
the letters, ``a`` for the group whose best model ranks first, then in rank order.
"""

from __future__ import annotations

import string

import polars as pl

from mobeval.compare.names import P_COLUMNS, TESTS
from mobeval.errors import ConfigError
from mobeval.metrics import lower_is_better

#: The significance level of the letters when none is given.
DEFAULT_ALPHA = 0.05
LEADERBOARD_SCHEMA = {
    "city": pl.String,
    "metric": pl.String,
    "rank": pl.Int64,
    "model": pl.String,
    "mean": pl.Float64,
    "letters": pl.String,
    "test": pl.String,
    "alpha": pl.Float64,
    "correction": pl.String,
}


def letter_groups(models: list[str], significant: set[frozenset[str]]) -> list[list[str]]:
    """Piepho's insert-and-absorb groups of ``models`` (in rank order) given the significant
    pairs: every two models of a group are not significantly different, and every two models
    not significantly different share a group. Groups in the order of their first model."""
    groups = [frozenset(models)]
    for pair in sorted(significant, key=lambda p: sorted(models.index(m) for m in p)):
        a, b = sorted(pair, key=models.index)
        split = []
        for group in groups:
            split.extend([group - {a}, group - {b}] if a in group and b in group else [group])
        unique = list(dict.fromkeys(split))
        groups = [g for g in unique if g and not any(g < other for other in unique)]
    ranked = [sorted(g, key=models.index) for g in groups]
    return sorted(ranked, key=lambda g: [models.index(m) for m in g])


def compact_letters(models: list[str], significant: set[frozenset[str]]) -> dict[str, str]:
    """Each model's letters (``"ab"``) by :func:`letter_groups`."""
    groups = letter_groups(models, significant)
    alphabet = string.ascii_lowercase + string.ascii_uppercase
    if len(groups) > len(alphabet):
        raise ConfigError(f"{len(groups)} letter groups: more than the {len(alphabet)} letters")
    return {
        model: "".join(alphabet[i] for i, g in enumerate(groups) if model in g) for model in models
    }


def leaderboard(
    comparison: pl.DataFrame, *, test: str | None = None, alpha: float = DEFAULT_ALPHA
) -> pl.DataFrame:
    """The leaderboard of a comparison (:func:`mobeval.compare.compare`'s table, every pair of
    the models compared): per (city, metric), the models ranked by their mean (the lowest first
    for ``dtw``, ``mse``...: :func:`mobeval.metrics.lower_is_better`) and their letters by the
    corrected p-values of ``test`` (default: ``tukey`` when it ran, else the first test run)
    below ``alpha``. Schema: :data:`LEADERBOARD_SCHEMA`."""
    ran = [t for t in TESTS if comparison[P_COLUMNS[t]].is_not_null().any()]
    test = test or ("tukey" if "tukey" in ran else ran[0] if ran else None)
    if test not in ran:
        raise ConfigError(f"--test: {test!r} did not run (tests run: {', '.join(ran)})")
    if not 0 < alpha < 1:
        raise ConfigError(f"--alpha: {alpha!r} is not between 0 and 1")
    column = f"{P_COLUMNS[test]}_corrected"
    rows = []
    for (city, metric), part in comparison.partition_by(
        "city", "metric", as_dict=True, maintain_order=True
    ).items():
        means = {}
        for a, b, mean_a, mean_b in part.select(
            "baseline", "model", "mean_baseline", "mean_model"
        ).iter_rows():
            means.setdefault(a, mean_a)
            means.setdefault(b, mean_b)
        compared = {frozenset(pair) for pair in part.select("baseline", "model").iter_rows()}
        missing = [
            (a, b) for i, a in enumerate(means) for b in list(means)[i + 1 :]
            if frozenset((a, b)) not in compared
        ]  # fmt: skip
        if missing:
            raise ConfigError(
                f"city={city}: {metric}: the leaderboard's letters need every pair of models "
                f"compared ({missing[0][0]} vs {missing[0][1]} was not): compare with --pairs all"
            )
        sign = 1.0 if lower_is_better(metric) else -1.0
        ranked = sorted(means, key=lambda m: (sign * means[m], list(means).index(m)))
        significant = {
            frozenset((a, b))
            for a, b, p in part.select("baseline", "model", column).iter_rows()
            if p is not None and p < alpha
        }
        letters = compact_letters(ranked, significant)
        correction = "none" if test == "tukey" else part["correction"][0]
        for rank, model in enumerate(ranked, 1):
            rows.append(
                (city, metric, rank, model, means[model], letters[model], test, alpha, correction)
            )
    return pl.DataFrame(rows, schema=LEADERBOARD_SCHEMA, orient="row")
