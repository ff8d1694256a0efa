"""The tables ``mobeval compare`` prints (and the table settings of every table mobeval
prints)."""

from __future__ import annotations

import json
import math
import shutil
import sys

import polars as pl

#: The width a table is fitted to when the terminal's is not known (output to a file or a pipe).
DEFAULT_WIDTH = 80


def whole_tables(**settings) -> pl.Config:
    """Polars' printing set to show a table whole (every row and column, without its shape and
    column types), with ``settings`` (:class:`polars.Config`'s) beside: the tables mobeval prints
    (``compare``, the summaries of the scoring commands)."""
    return pl.Config(
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
        tbl_width_chars=60_000,  # never squeezed by Polars: :func:`fitted` splits instead
        **settings,
    )


def fitted(frame: pl.DataFrame, keys: list[str], width: int | None = None) -> list[pl.DataFrame]:
    """``frame`` as tables that print at most ``width`` characters wide (the terminal's width,
    ``COLUMNS``, else :data:`DEFAULT_WIDTH`): each holds the ``keys`` columns, then as many of
    the other columns, in order, as fit (at least one). Measured on the table as Polars prints
    it under the settings in force (call it inside :func:`whole_tables`)."""
    width = width or shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    groups: list[list[str]] = [[]]
    for column in (c for c in frame.columns if c not in keys):
        trial = [*groups[-1], column]
        if groups[-1] and _printed_width(frame.select(*keys, *trial)) > width:
            groups.append([column])
        else:
            groups[-1] = trial
    return [frame.select(*keys, *group) for group in groups]


def _printed_width(frame: pl.DataFrame) -> int:
    return max(len(line) for line in str(frame).splitlines())


#: Unicode superscripts of an exponent's characters (:func:`p_text`'s power of ten).
SUPERSCRIPT_DIGITS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def p_text(value: float | None) -> str:
    """A p-value as mobeval prints it everywhere (compare's tables, the report in every format):
    three significant digits, in decimals from 0.001 up (``0.0242``, ``0.00170``, ``1.00``),
    below as a power of ten (``1.70×10⁻⁴``, which the report typesets as
    ``$1.70\\times10^{-4}$`` in LaTeX, ``1.70×10<sup>−4</sup>`` in HTML); ``0`` for a
    p-value that underflowed, ``-`` for none. The exact value stays in compare's files."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if value == 0:
        return "0"
    mantissa, exponent = f"{value:.2e}".split("e")
    if int(exponent) >= -3:  # rounded, 0.001 or more
        return f"{float(mantissa + 'e' + exponent):#.3g}"
    return f"{mantissa}×10{str(int(exponent)).translate(SUPERSCRIPT_DIGITS)}"


def print_comparison(frame: pl.DataFrame, file=None) -> None:
    """One heading per city and model pair (the units paired; how a model's runs were taken
    together), then its metrics: means (and, with runs, their sd over runs),
    difference, relative change, bootstrap interval, effect sizes (Cohen's d_z; the
    rank-biserial correlation r_rb beside Wilcoxon) and the corrected p-values of the tests run,
    in as many tables as the terminal's width needs (:func:`fitted`)."""
    file = file or sys.stdout
    if frame.height == 0:
        return
    correction = frame["correction"][0]
    corrected = "" if correction == "none" else f"; p-values {correction}-corrected"
    labels = {
        "p_t": "p t-test",
        "p_wilcoxon": "p wilcoxon",
        "p_randomization": "p random.",
        "p_tukey": "p Tukey",
        "p_ttest_ind": "p t-ind",
        "p_ranksums": "p rank-sum",
    }
    tests = [c for c in labels if frame[c].is_not_null().any()]
    within = ["cohort"] if "cohort" in frame.columns else []  # compare(cohorts=True)
    pairs = frame.partition_by(
        "city", *within, "model", "baseline", as_dict=True, maintain_order=True
    )
    with whole_tables(float_precision=4, fmt_str_lengths=40):
        for (city, *cohort, model, baseline), part in pairs.items():
            city = "/cohort=".join([city, *(c for c in cohort if c is not None)])
            confidence, unit = part["confidence"][0], part["unit"][0]
            counts = part["n"].unique()
            paired = f", {counts[0]:,} {unit}s paired" if counts.len() == 1 else f", {unit}s paired"
            runs = part["runs"][0]
            if runs is not None:  # a model's runs together (mobeval.compare.runs)
                of = [part[f"runs_{side}"][0] or 1 for side in ("model", "baseline")]
                paired += f" ({runs}: {of[0]} and {of[1]} runs; sd over runs)"
            spread = [
                pl.col(f"sd_runs_{side}").alias(f"sd {side}")
                for side in ("baseline", "model")
                if runs is not None
            ]
            table = part.select(
                "metric",
                *([] if counts.len() == 1 else ["n"]),
                pl.col("mean_baseline").alias("baseline"),
                pl.col("mean_model").alias("model"),
                *spread,
                "diff",
                pl.col("rel_change_pct").alias("rel %"),
                pl.format(
                    "[{}, {}]",
                    pl.col("ci_low").round_sig_figs(4),
                    pl.col("ci_high").round_sig_figs(4),
                ).alias(f"{confidence:.0%} CI"),
                pl.col("cohen_dz").alias("d_z"),
                *([pl.col("rank_biserial").alias("r_rb")] if "p_wilcoxon" in tests else []),
                *[
                    pl.col(f"{c}_corrected")
                    .map_elements(p_text, return_dtype=pl.String)
                    .alias(labels[c])
                    for c in tests
                ],
            )
            print(f"city={city}: {model} vs {baseline}{paired}{corrected}", file=file)
            for piece in fitted(table, ["metric"]):
                print(piece, file=file)
    file.flush()


def print_rows(frame: pl.DataFrame, fmt: str, file=None) -> None:
    """The rows of ``frame`` as ``csv`` (a header, then one line per row) or ``json`` (one
    object: ``{"rows": [...]}``, NaN as null, an infinity as "inf" / "-inf")."""
    file = file or sys.stdout
    if fmt == "csv":
        file.write(frame.write_csv())
    else:

        def plain(value):
            if isinstance(value, float) and not math.isfinite(value):
                return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
            return value

        rows = [{k: plain(v) for k, v in row.items()} for row in frame.iter_rows(named=True)]
        print(json.dumps({"rows": rows}, indent=1), file=file)
    file.flush()


def print_leaderboard(frame: pl.DataFrame, file=None) -> None:
    """Per city and metric, a heading (the test, its correction and alpha), then the models
    ranked with their mean and letters (:func:`mobeval.compare.leaderboard.leaderboard`)."""
    file = file or sys.stdout
    with whole_tables(float_precision=4, fmt_str_lengths=40):
        for (city, metric), part in frame.partition_by(
            "city", "metric", as_dict=True, maintain_order=True
        ).items():
            test, alpha, correction = part["test"][0], part["alpha"][0], part["correction"][0]
            how = "" if correction == "none" else f", {correction}-corrected"
            print(
                f"city={city}: {metric}; models sharing a letter are not different at "
                f"p < {alpha:g} ({test}{how})",
                file=file,
            )
            for piece in fitted(part.select("rank", "model", "mean", "letters"), ["rank"]):
                print(piece, file=file)
    file.flush()


def print_folds(frame: pl.DataFrame, file=None) -> None:
    """Per city and model, a heading, then its runs' rows and their mean row
    (:func:`mobeval.compare.runs.fold_rows`), the metrics as columns."""
    file = file or sys.stdout
    with whole_tables(float_precision=6, fmt_str_lengths=40):
        for (city, model), part in frame.partition_by(
            "city", "model", as_dict=True, maintain_order=True
        ).items():
            print(f"city={city}: {model}, each run and the mean over runs (NaN runs left out)",
                  file=file)  # fmt: skip
            part = part.drop("city", "model").select(
                pl.exclude([c for c in part.columns if part[c].null_count() == part.height])
            )
            for piece in fitted(part, ["run"]):
                print(piece, file=file)
    file.flush()
