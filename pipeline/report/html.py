"""The report as one self-contained HTML page: plots embedded as base64 PNG, formulas as MathML
(:mod:`mobeval.report.mathml`: typeset by the browser, no script, no network), table cells
that never wrap, and no table wider than the page's 1100 px: a wide one is transposed (models as
rows) or split into parts, as the LaTeX report's (:func:`mobeval.report.tables.table_parts`)."""

from __future__ import annotations

import base64
import html

from mobeval.report.city import Table
from mobeval.report.mathml import tex_to_mathml
from mobeval.report.tables import (
    SIGN,
    Listing,
    Part,
    cell,
    cells_text,
    header,
    legend,
    listing_sections,
    table_parts,
    typeset,
)

_CSS = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1100px; color: #222; line-height: 1.45; padding: 0 1em; }
h1 { border-bottom: 2px solid #ccc; padding-bottom: .2em; }
h2 { margin-top: 2em; border-bottom: 1px solid #ddd; }
.scroll { overflow-x: auto; max-width: 100%; }
tr.rule td, tr.rule th { border-top: 2px solid #888; }
table { border-collapse: collapse; margin: .6em 0 1.2em; font-size: 14px; }
th, td { border: 1px solid #ccc; padding: 4px 8px; white-space: nowrap; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num.pair { border-right: none; padding-right: 0; }
td.mark { border-left: none; padding-left: 1px; text-align: left; }
caption { caption-side: top; text-align: left; font-weight: bold; padding: 4px 0; }
caption .cells { font-weight: normal; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 13px; color: #555; }
div.formula { overflow-x: auto; background: #f7f7f7; padding: 6px 10px; margin: .4em 0; }
math { font-size: 1.1em; }
sub, sup { line-height: 0; }  /* a subscript (d_z) does not make its row taller */
.legend, .note { font-size: 13px; color: #444; }
dl.params { display: grid; grid-template-columns: max-content auto; gap: 2px 12px;
            font-size: 14px; }
dl.params dt { font-weight: 600; } dl.params dd { margin: 0; }
div.listings { display: flex; flex-wrap: wrap; gap: 0 1.5em; align-items: flex-start; }
"""

#: The page of :func:`~mobeval.report.tables.table_parts` in pixels: the body's width
#: (``max-width`` above), a character of the 14 px table font as wide as its digits (7.8 px
#: in Helvetica / Arial; points, spaces and superscript letters are narrower) and a cell's
#: padding and borders.
PAGE = (1100.0, 7.8, 18.0)


def _text(text: str) -> str:
    """``text`` escaped for HTML, its notations typeset (:func:`~mobeval.report.tables.typeset`:
    ``<i>d</i><sub>z</sub>``, ``1.70×10<sup>−4</sup>``)."""
    return typeset(str(text), html.escape, "html")


def _number(cell: str) -> str:
    """A numeric cell's HTML with the minus sign U+2212 before a negative number
    (:data:`~mobeval.report.tables.SIGN`): ``−2.57 pp (−4.9%)``; ids and words keep their
    hyphens."""
    return SIGN.sub(lambda m: "\u2212" if m.group(1) == "-" else "+", cell)


def _cells(report, city, kind: str, model: str, metric: str, pair: bool) -> str:
    """A cell in HTML; a value as two cells, as the LaTeX ``r@{}l`` pair: the number
    right-aligned, then its marker left-aligned, so that the numbers of a column line up on
    their last digit (and so on the point) whichever carry a ``‡`` or letters; an improvement
    in a column of values (models as rows) spans both."""
    if kind == "value":
        number = cell(report, city, model, metric, lambda t: f"<b>{t}</b>", lambda _: "")
        mark = _text(report.marker(city, model, metric))
        return f'<td class="num pair">{_number(number)}</td><td class="mark">{mark}</td>'
    text = _number(_text(report.improvement(city, model, metric)))
    return f'<td class="num" colspan="2">{text}</td>' if pair else f'<td class="num">{text}</td>'


def _table(report, city, table: Table, part: Part) -> str:
    """One table (or part of one) as HTML: a row per stub cell, a rule above the improvements
    of a table with models as rows."""
    e = _text
    title = table.title
    if part.count > 1:
        title += f", part {part.number} of {part.count}"
    what = cells_text(city, table.metrics, "below", e)
    pairs = [any(kind == "value" for kind, _, _ in column) for column in part.columns]
    rows = []
    for row, stub in enumerate(part.stub):
        cells = [
            _cells(report, city, *column[row], pair)
            for column, pair in zip(part.columns, pairs, strict=True)
        ]
        rule = ' class="rule"' if row == part.rule else ""
        rows.append(f"<tr{rule}><td>{e(stub)}</td>{''.join(cells)}</tr>")
    heads = [f"<th>{e(part.stub_head)}</th>"] + [
        f'<th colspan="2">{e(h)}</th>' if pair else f"<th>{e(h)}</th>"
        for h, pair in zip(part.heads, pairs, strict=True)
    ]
    head = "".join(heads)
    return (  # cells never wrap; at a narrow window, a table scrolls rather than the page
        f'<div class="scroll"><table><caption>{e(title)}. <span class="cells">{what}</span>'
        f"</caption><tr>{head}</tr>" + "".join(rows) + "</table></div>"
    )


def _listing(listing: Listing) -> str:
    """A :class:`~mobeval.report.tables.Listing` as an HTML table."""
    e = _text
    head = "".join(f"<th>{e(h)}</th>" for h in listing.heads)
    rows = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{_number(e(c))}</td>' if numeric else f"<td>{e(c)}</td>"
            for c, numeric in zip(row, listing.numeric, strict=True)
        )
        + "</tr>"
        for row in listing.rows
    )
    return f"<table><caption>{e(listing.title)}</caption><tr>{head}</tr>{rows}</table>"


def render_html(report, standalone: bool = True) -> str:
    """:meth:`mobeval.report.Report.to_html`'s page (``standalone=False``: a ``<div>`` for a
    notebook)."""
    if report.plots:
        report.figures()
    e = _text
    parts = [f"<h1>{e(report.title)}</h1>", f"<p>Results of <code>{e(str(report.out))}</code>.</p>"]
    for city in report.cities:
        parts.append(f"<h2>city={e(city.name)}</h2><p><em>{e(header(city))}</em></p>")
        for table in city.tables:
            for part in table_parts(report, city, table.metrics, report.transpose, page=PAGE):
                parts.append(_table(report, city, table, part))
        parts.append(f'<p class="legend">{e(legend(city))}</p>')
        if city.note:
            parts.append(f'<p class="note">Note: {e(city.note)}</p>')
        for _, heading, listings, text in listing_sections(report, city):
            parts.append(f'<h3>{e(heading)}</h3><div class="listings">')  # side by side
            parts += [_listing(listing) for listing in listings]
            parts.append(f'</div><p class="legend">{e(text)}</p>')
        for figure in city.figures:
            data = base64.b64encode(figure.png).decode("ascii")
            alt = html.escape(figure.caption)
            parts.append(
                f'<figure><img alt="{alt}" src="data:image/png;base64,{data}">'
                f"<figcaption>{e(figure.caption)}</figcaption></figure>"
            )
    parts.append("<h2>Methods</h2>")
    for cities, task, shared, entries in report.method_groups():
        parts.append(f"<h3>{e(task)}: {e(', '.join('city=' + c for c in cities))}</h3>")
        if shared:
            params = "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in shared)
            parts.append(f'<p>Every metric below:</p><dl class="params">{params}</dl>')
        for entry in entries:
            params = "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in entry.parameters)
            parts.append(
                f"<h4>{e(entry.info.title)} <small>({e(', '.join(entry.metrics))})</small></h4>"
                f"<p>{e(entry.info.definition)}</p>"
                f'<div class="formula">{tex_to_mathml(entry.info.tex, entry.info.text)}</div>'
                f"<p>System value: {e(entry.info.aggregate)}.</p>"
                + (f'<p>In this run:</p><dl class="params">{params}</dl>' if params else "")
            )
    comparison = report.comparison_text()
    if comparison:
        parts.append("<h3>Comparison</h3><ul>")
        parts += [f"<li>{e(line)}</li>" for line in comparison]
        parts.append("</ul>")
    body = "\n".join(parts)
    if not standalone:
        return f"<div><style>{_CSS}</style>{body}</div>"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(report.title)}</title><style>{_CSS}</style></head><body>\n{body}\n"
        "</body></html>\n"
    )
