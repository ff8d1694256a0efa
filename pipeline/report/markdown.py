"""The report as GitHub-flavoured Markdown."""

from __future__ import annotations

import html
import re
import time

from mobeval.report.city import Table
from mobeval.report.html import PAGE
from mobeval.report.tables import (
    Listing,
    Part,
    cell,
    cells_text,
    header,
    legend,
    listing_sections,
    table_parts,
)


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def _md_text(text: str) -> str:
    """The user's ``text`` (``--title``) read as plain text by any Markdown viewer, as the HTML
    and LaTeX reports escape it: ``&``, ``<`` and ``>`` as HTML's entities (raw HTML is passed
    through by Markdown), the characters of Markdown's emphasis, code, links and headings
    (\\ ` * _ [ ] # !) after a backslash (literal in CommonMark and Python-Markdown alike), a
    line break a space."""
    text = re.sub(r"([\\`*_\[\]#!])", r"\\\1", " ".join(text.splitlines()))
    return html.escape(text, quote=False)


def _table(report, city, table: Table, part: Part) -> list[str]:
    """One table (or part of one) as Markdown lines: a row per stub cell."""
    title = table.title
    if part.count > 1:
        title += f", part {part.number} of {part.count}"
    lines = [f"**{title}.** {cells_text(city, table.metrics, 'below')}", ""]
    lines.append("| " + " | ".join(_md_escape(h) for h in [part.stub_head, *part.heads]) + " |")
    lines.append("|---|" + "---:|" * len(part.heads))
    for row, stub in enumerate(part.stub):
        cells = []
        for column in part.columns:
            kind, model, metric = column[row]
            cells.append(
                cell(report, city, model, metric, lambda t: f"**{t}**", lambda t: t)
                if kind == "value"
                else report.improvement(city, model, metric)
            )
        lines.append("| " + " | ".join(_md_escape(c) for c in [stub, *cells]) + " |")
    return [*lines, ""]


def _listing(listing: Listing) -> list[str]:
    """A :class:`~mobeval.report.tables.Listing` as Markdown lines."""
    lines = [f"**{listing.title}**", ""]
    lines.append("| " + " | ".join(_md_escape(h) for h in listing.heads) + " |")
    lines.append("|" + "".join("---:|" if n else "---|" for n in listing.numeric))
    lines += ["| " + " | ".join(_md_escape(c) for c in row) + " |" for row in listing.rows]
    return [*lines, ""]


def render_markdown(report, figures_dir: str | None) -> str:
    """:meth:`mobeval.report.Report.to_markdown`'s text: the tables laid out as the HTML page's
    (:func:`~mobeval.report.tables.table_parts` on its 1100 px), so that a wide one reads the
    same in both (a Markdown viewer scrolls a wide table, or squeezes it)."""
    if report.plots and figures_dir is not None:  # no folder: nothing to link
        report.figures()
    lines = [f"# {_md_text(report.title)}", ""]
    lines.append(
        f"Results of `{report.out}` ({time.strftime('%Y-%m-%d')}): one table per city and cutoff "
        "grid, then plots and the methods of this run."
    )
    lines.append("")
    for city in report.cities:
        lines += [f"## city={city.name}", "", f"*{header(city)}*", ""]
        for table in city.tables:
            for part in table_parts(report, city, table.metrics, report.transpose, page=PAGE):
                lines += _table(report, city, table, part)
        lines += [legend(city), ""]
        if city.note:
            lines += [f"Note: {city.note}", ""]
        for _, heading, listings, text in listing_sections(report, city):
            lines += [f"### {heading}", ""]
            for listing in listings:
                lines += _listing(listing)
            lines += [text, ""]
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
