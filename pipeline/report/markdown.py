"""The report as GitHub-flavoured Markdown."""

from __future__ import annotations

import time

from mobeval.report.tables import cell, header, legend


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(report, figures_dir: str | None) -> str:
    """:meth:`mobeval.report.Report.to_markdown`'s text."""
    if report.plots and figures_dir is not None:  # no folder: nothing to link
        report.figures()
    lines = [f"# {report.title}", ""]
    lines.append(
        f"Results of `{report.out}` ({time.strftime('%Y-%m-%d')}): one table per city and cutoff "
        "grid, then plots and the methods of this run."
    )
    lines.append("")
    for city in report.cities:
        lines += [f"## city={city.name}", "", f"*{header(city)}*", ""]
        others = [m for m in city.models if m != city.baseline] if city.baseline else []
        for table in city.tables:
            head = ["metric", *city.models, *[f"{m} vs {city.baseline}" for m in others]]
            lines.append(f"**{table.title}**")
            lines.append("")
            lines.append("| " + " | ".join(_md_escape(h) for h in head) + " |")
            lines.append("|---|" + "---:|" * (len(head) - 1))
            for metric in table.metrics:
                cells = [
                    cell(report, city, m, metric, lambda t: f"**{t}**", lambda t: t)
                    for m in city.models
                ]
                cells += [report.improvement(city, m, metric) for m in others]
                lines.append("| " + " | ".join([_md_escape(metric), *cells]) + " |")
            lines.append("")
        lines += [legend(city), ""]
        if city.note:
            lines += [f"Note: {city.note}", ""]
        if figures_dir is not None:
            for figure in city.figures:
                lines += [f"![{figure.caption}]({figures_dir}/{figure.name})", ""]
    lines += _methods_markdown(report)
    return "\n".join(lines).rstrip() + "\n"


def _methods_markdown(report) -> list[str]:
    """The methods section of a :class:`~mobeval.report.Report`, as Markdown lines."""
    lines = ["## Methods", ""]
    for cities, task, shared, entries in report.method_groups():
        lines += [f"### {task}: {', '.join('city=' + c for c in cities)}", ""]
        if shared:
            lines += ["Every metric below: " + "; ".join(f"{k} = {v}" for k, v in shared) + ".", ""]
        for entry in entries:
            lines += [
                f"**{entry.info.title}** ({', '.join(entry.metrics)}). {entry.info.definition}",
                "",
            ]
            lines += ["$$", entry.info.tex, "$$", ""]
            lines += [f"System value: {entry.info.aggregate}.", ""]
            if entry.parameters:
                lines += [
                    "In this run: " + "; ".join(f"{k} = {v}" for k, v in entry.parameters) + ".",
                    "",
                ]
    comparison = report.comparison_text()
    if comparison:
        lines += ["### Comparison", ""] + [f"* {line}" for line in comparison] + [""]
    return lines
