"""The tables ``mobeval compare`` prints (and the table settings of every table mobeval
prints)."""

from __future__ import annotations

import math
import sys

import polars as pl


def whole_tables(**settings) -> pl.Config:
    """Polars' printing set to show a table whole (every row and column, without its shape and
    column types), with ``settings`` (:class:`polars.Config`'s) beside: the tables mobeval prints
    (``compare``, the summaries of the scoring commands)."""
    return pl.Config(
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
        **settings,
    )


def print_comparison(frame: pl.DataFrame, file=None) -> None:
    """One table per city: metric, model vs baseline, n, means, difference, relative change,
    bootstrap interval and the corrected p-values of the tests run."""
    file = file or sys.stdout
    if frame.height == 0:
        return
    correction = frame["correction"][0]
    suffix = "" if correction == "none" else f" ({correction})"
    labels = {"p_t": "p t-test", "p_wilcoxon": "p wilcoxon", "p_randomization": "p random."}
    tests = [c for c in labels if frame[c].is_not_null().any()]

    def fmt(value):
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "-"
        return f"{value:.1e}" if value < 0.001 else f"{value:.4f}"

    with whole_tables(float_precision=4, fmt_str_lengths=40, tbl_width_chars=250):
        for (city,), part in frame.partition_by("city", as_dict=True, maintain_order=True).items():
            confidence = part["confidence"][0]
            table = part.select(
                "metric",
                pl.format("{} vs {}", "model", "baseline").alias("model vs baseline"),
                "n",
                pl.col("mean_baseline").alias("baseline"),
                pl.col("mean_model").alias("model"),
                "diff",
                pl.col("rel_change_pct").alias("rel %"),
                pl.format(
                    "[{}, {}]",
                    pl.col("ci_low").round_sig_figs(4),
                    pl.col("ci_high").round_sig_figs(4),
                ).alias(f"{confidence:.0%} CI"),
                *[
                    pl.col(f"{c}_corrected")
                    .map_elements(fmt, return_dtype=pl.String)
                    .alias(labels[c] + suffix)
                    for c in tests
                ],
            )
            print(f"city={city} ({part['unit'][0]}s paired)", file=file)
            print(table, file=file)
    file.flush()
