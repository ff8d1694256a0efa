"""What a scoring command or a job prints of its results (``--format``): a table per city, the
same in Markdown, CSV rows, or one JSON object with the options as the run used them."""

from __future__ import annotations

import csv
import json
import math
import re
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl


def _is_count(task: str, metric: str) -> bool:
    from mobeval.families import FAMILIES

    return metric in FAMILIES[task].counts


def _number(value: float, count: bool) -> int | float:
    """A summary value as printed: a count as an integer, anything else as the float it is."""
    return int(value) if count and math.isfinite(value) else value


def _json_number(value: float, count: bool) -> int | float | str | None:
    """JSON has no NaN or infinity: NaN is null, an infinity the string "inf" / "-inf"."""
    if math.isnan(value):
        return None
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return _number(value, count)


def _stds(summary: pl.DataFrame) -> list[float | None]:
    """The summary's ``std`` per row (None where it has none: a count, a summary written before
    mobeval kept it)."""
    if "std" not in summary.columns:
        return [None] * summary.height
    return summary["std"].to_list()


def _json_text(document: dict) -> str:
    """``document`` indented, each list of plain values on one line (``"k": [1, 5, 10]``)."""
    text = json.dumps(document, indent=2)
    flat = re.compile(r"\[\n\s*([^\[\]{}]*?)\n\s*\]")
    return flat.sub(lambda m: "[" + re.sub(r",\n\s*", ", ", m.group(1)) + "]", text)


def _result_object(task: str, options: dict, evaluation) -> dict:
    """One result as JSON: where it is, the options as the run used them, the summary."""
    from mobeval.families import resolved_options

    summary = evaluation.summary
    return {
        "task": task,
        "city": evaluation.city,
        "model": evaluation.model,
        **({} if evaluation.run is None else {"run": evaluation.run}),
        **({} if evaluation.partition is None else {"partition": evaluation.partition}),
        "options": resolved_options(task, options),
        "summary": {
            m: _json_number(v, _is_count(task, m))
            for m, v in zip(summary["metric"], summary["value"], strict=True)
        },
        "n": dict(zip(summary["metric"], summary["n"], strict=True)),
        "std": {
            m: _json_number(sd, False)
            for m, sd in zip(summary["metric"], _stds(summary), strict=True)
            if sd is not None
        },
        **_cohort_objects(task, evaluation),
        "outputs": evaluation.outputs or None,
        "seconds": round(evaluation.seconds, 3),
        "resumed": evaluation.resumed,  # read back from OUT by run --resume, not computed
    }


def _cohorts(evaluation) -> pl.DataFrame | None:
    """The result's ``cohorts`` section (:mod:`mobeval.tasks.cohorts`): in memory, or read back
    from the folder it was written to; None without cohorts."""
    if "cohorts" in evaluation.tables:
        return evaluation.tables["cohorts"]
    if "cohorts" in evaluation.outputs:
        import polars as pl

        return pl.read_parquet(f"{evaluation.outputs['cohorts']}/*.parquet")
    return None


def _summaries(evaluation) -> list[tuple[str, pl.DataFrame]]:
    """``(cohort, summary)``: the result's own summary (cohort ``""``), then each cohort's."""
    cohorts = _cohorts(evaluation)
    parts = [] if cohorts is None else cohorts.partition_by("cohort", maintain_order=True)
    return [("", evaluation.summary)] + [(p["cohort"][0], p.drop("cohort")) for p in parts]


def _place(names: dict) -> str:
    """A table's title: ``[<partition>/]city=<c>[/cohort=<k>]`` (no cohort: the whole result)."""
    cohort = names.pop("cohort", "")
    partition = names.pop("partition", None)
    parts = [partition, f"city={names['city']}", f"cohort={cohort}" if cohort else None]
    return "/".join(p for p in parts if p is not None)


def _cohort_objects(task: str, evaluation) -> dict:
    """``{"cohorts": {cohort: {metric: value}}}`` where the result has cohorts, else nothing."""
    parts = _summaries(evaluation)[1:]
    if not parts:
        return {}
    return {
        "cohorts": {
            cohort: {
                m: _json_number(v, _is_count(task, m))
                for m, v in zip(summary["metric"], summary["value"], strict=True)
            }
            for cohort, summary in parts
        }
    }


def _shown(value) -> str:
    return str(value) if isinstance(value, int) else f"{value:.6f}"


def print_summaries(
    results: list[tuple[str, dict, object]], fmt: str = "table", *, job: bool = True
) -> None:
    """Print (task, options as typed, evaluation) results as ``fmt`` (:data:`FORMATS`): table
    and markdown give one table per city (metrics as rows, models as columns; counts as
    integers, the rest with 6 decimals; a table wider than the terminal is split into tables of
    the models that fit, each with the metric column, markdown's is kept whole to paste), csv one
    row per city, model and metric, json one object: ``{"results": [...]}`` for a ``job``, the
    one result's object for a single command."""
    if fmt == "json":
        objects = [_result_object(*result) for result in results]
        print(_json_text({"results": objects} if job else objects[0]))
        return
    partitioned = any(e.partition is not None for _, _, e in results)
    cohorted = any(_cohorts(e) is not None for _, _, e in results)
    rows = [  # a partition's results (results over time) apart, in a column of their own
        ([e.partition] if partitioned else [])
        + [e.city, *([cohort] if cohorted else []), e.label, metric]
        + [_number(value, _is_count(task, metric)), n, sd]
        for task, _, e in results
        for cohort, summary in _summaries(e)
        for metric, value, n, sd in zip(
            *(summary[c] for c in ("metric", "value", "n")), _stds(summary), strict=True
        )
    ]
    if fmt == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        header = ["city", *["cohort"] * cohorted, "model", "metric", "value", "n", "std"]
        writer.writerow(["partition"] * partitioned + header)
        writer.writerows(rows)
        return
    if not rows:
        return
    import polars as pl

    from mobeval.compare.printing import fitted, whole_tables

    names = ["partition"] * partitioned + ["city"] + ["cohort"] * cohorted
    shown = [  # each city (of each partition, each cohort) a table
        (_place(dict(zip(names, place, strict=True))), model, metric, _shown(v))
        for *place, model, metric, v, _, _ in rows
    ]
    long = pl.DataFrame(shown, schema=["city", "model", "metric", "value"], orient="row")
    style = "MARKDOWN" if fmt == "markdown" else "UTF8_FULL_CONDENSED"
    with whole_tables(fmt_str_lengths=200, tbl_formatting=style):
        cities = long.partition_by("city", as_dict=True, maintain_order=True).items()
        for i, ((city,), part) in enumerate(cities):
            table = part.pivot(on="model", index="metric", values="value", maintain_order=True)
            if fmt == "markdown":  # a paragraph, then the table whole, to paste
                print(("\n" if i else "") + f"**{city}**\n")
                print(table.fill_null(""))
                continue
            print(city)
            for piece in fitted(table.fill_null(""), ["metric"]):  # the terminal's width
                print(piece)
