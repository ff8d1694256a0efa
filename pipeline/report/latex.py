"""The report as a LaTeX document (pdflatex) a paper takes as it is.

Every table is a float with ``\\caption`` and ``\\label``, booktabs rules, its notes (the legend
and the city's note) inside the float (threeparttable), real minus signs, and each value column
aligned on the decimal point (a ``r@{}l`` pair: the integer part with its point right-aligned,
the decimals and the marker left-aligned; no package needed). Nothing is shrunk: a table wider
than the text (an estimate: :data:`TEXT_WIDTH_PT`, :data:`CHAR_PT`) is transposed (models as
rows) when that fits, else split into parts that fit, in the layout that needs fewer parts.
Only packages of a standard TeX Live (texlive-latex-recommended / -extra): :data:`PACKAGES`.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from mobeval.report.tables import header, legend

_TEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "†": r"$^{\dagger}$",
    "‡": r"$^{\ddagger}$",
    "±": r"$\pm$",
    "<": r"$<$",
    ">": r"$>$",
    "/": r"/\allowbreak{}",  # a long path may break after a slash
}

#: The preamble's packages, all in texlive-latex-base / -recommended / -extra.
PACKAGES = (
    r"\usepackage[utf8]{inputenc}",
    r"\usepackage[a4paper,margin=2cm]{geometry}",
    r"\usepackage{amsmath,amssymb}",
    r"\usepackage{graphicx}",
    r"\usepackage{booktabs}",
    r"\usepackage{threeparttable}",
)
#: The text width of the page above (A4, 2 cm margins), in points.
TEXT_WIDTH_PT = 483.0
#: A generous width of one character of a ``\small`` table (digits are 4.5 pt), and the space
#: LaTeX puts on both sides of a column (2 ``\tabcolsep``).
CHAR_PT = 5.0
COLUMN_SEP_PT = 12.0

#: A sign before a number (not inside a word): the math minus or plus.
_SIGN = re.compile(r"(?<![\w.])([-+])(?=\d|inf)")


def tex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped (a model name, a caption)."""
    return "".join(_TEX_ESCAPES.get(ch, ch) for ch in str(text))


def tex_number(text: str) -> str:
    """A number's or an improvement's text as LaTeX: ``-2.57 pp (-4.9%)`` with real minus
    signs, ``inf`` as the infinity sign, a lone ``-`` (no value) as an en dash."""
    if text.strip() == "-":
        return "--"
    text = _SIGN.sub(lambda m: "$-$" if m.group(1) == "-" else "$+$", tex_escape(text))
    return text.replace("inf", r"$\infty$")


@dataclass
class _Column:
    """One column of a table: its heading and its cells (LaTeX), its tabular spec, its
    estimated width in points."""

    head: str
    cells: list[str]
    spec: str
    width: float


def _width(texts: list[str]) -> float:
    return max(len(t) for t in texts) * CHAR_PT + COLUMN_SEP_PT


def _value(report, city, model: str, metric: str) -> tuple[str, str]:
    """A value's two cells (integer part with its point, decimals, `` ± sd`` over runs or, with
    ``report --std``, over units, and the marker) and its plain text (for the width)."""
    text = report.number(city.values[model].get(metric))
    marker = report.marker(city, model, metric, latex=True)
    if "." not in text:  # no value, or infinite: across both halves
        return rf"\multicolumn{{2}}{{c}}{{{tex_number(text)}{marker}}}", text
    whole, decimals = text.split(".")
    spread = report.spread(city, model, metric)
    sd = rf" $\pm$ {spread}" if spread else ""
    text += f" ± {spread}" if spread else ""
    if model in report.best(city, metric):
        return rf"\textbf{{{tex_number(whole)}.}} & \textbf{{{decimals}}}{sd}{marker}", text + "*"
    return rf"{tex_number(whole)}. & {decimals}{sd}{marker}", text + ("*" if marker else "")


def _pair(head: str, cells: list[tuple[str, str]]) -> _Column:
    return _Column(
        rf"\multicolumn{{2}}{{c}}{{{tex_escape(head)}}}",
        [c for c, _ in cells],
        "r@{}l",
        _width([head, *(t for _, t in cells)]),
    )


def _columns(report, city, metrics: list[str], transpose: bool):
    """(stub heading, stub cells, columns, rule after row) of one table: one row per metric
    and a column per model and improvement, or (``transpose``) a row per model and
    improvement and a column per metric."""
    others = [m for m in city.models if m != city.baseline] if city.baseline else []
    against = [f"{m} vs {city.baseline}" for m in others]
    if not transpose:
        columns = [
            _pair(model, [_value(report, city, model, metric) for metric in metrics])
            for model in city.models
        ]
        for model, name in zip(others, against, strict=True):
            texts = [report.improvement(city, model, metric) for metric in metrics]
            cells = [tex_number(t) for t in texts]
            columns.append(_Column(tex_escape(name), cells, "r", _width([name, *texts])))
        return "metric", [tex_escape(m) for m in metrics], columns, None
    columns = []
    for metric in metrics:
        column = _pair(metric, [_value(report, city, model, metric) for model in city.models])
        texts = [report.improvement(city, model, metric) for model in others]
        column.cells += [rf"\multicolumn{{2}}{{r}}{{{tex_number(t)}}}" for t in texts]
        column.width = max(column.width, _width([metric, *texts]))
        columns.append(column)
    stub = [tex_escape(m) for m in [*city.models, *against]]
    return "model", stub, columns, len(city.models) if others else None


def _parts(stub_width: float, columns: list[_Column]) -> list[list[_Column]]:
    """``columns`` in consecutive groups that each fit the text width beside the stub."""
    parts: list[list[_Column]] = [[]]
    used = stub_width
    for column in columns:
        if parts[-1] and used + column.width > TEXT_WIDTH_PT:
            parts.append([])
            used = stub_width
        parts[-1].append(column)
        used += column.width
    return parts


def _layout(report, city, metrics: list[str], transpose: bool | None):
    """The table's layout chosen by width: models as columns when that fits, else models as
    rows when that fits, else the one that needs the fewer parts (models as columns on a tie);
    ``transpose`` True or False: that layout only, in parts when it does not fit. Returns the
    stub's heading and cells, the parts' columns, the row before which a rule goes."""
    layouts = []
    for flag in [False, True] if transpose is None else [bool(transpose)]:
        stub_head, stub, columns, rule = _columns(report, city, metrics, flag)
        layouts.append((stub_head, stub, _parts(_width([stub_head, *stub]), columns), rule))
    return min(layouts, key=lambda layout: len(layout[2]))


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "x"


def latex_tables(
    report, city, *, caption: str | None = None, label: str = "tab", transpose=None
) -> list[str]:
    """The LaTeX lines of ``city``'s tables: one float per table (or per part of a table split
    to fit), each with ``\\caption`` (``caption``, then the city and the table's title),
    ``\\label`` (``<label>:<city>-<n>``, ``-<part>`` for a part), booktabs rules and the legend
    inside the float."""
    notes = [tex_escape(legend(city))]
    if city.note:
        notes.append("Note: " + tex_escape(city.note))
    out = []
    for number, table in enumerate(city.tables, 1):
        stub_head, stub, parts, rule = _layout(report, city, table.metrics, transpose)
        for index, columns in enumerate(parts, 1):
            title = f"city={city.name}: {table.title[:1].lower()}{table.title[1:]}"
            text = f"{caption} ({title})" if caption else title
            name = f"{label}:{_slug(city.name)}-{number}"
            if len(parts) > 1:
                text += f", part {index} of {len(parts)}"
                name += f"-{index}"
            spec = "l" + "".join(c.spec for c in columns)
            out += [
                r"\begin{table}[htbp]\centering\small",
                r"\begin{threeparttable}",
                rf"\caption{{{tex_escape(text)}}}\label{{{name}}}",
                rf"\begin{{tabular}}{{@{{}}{spec}@{{}}}}",
                r"\toprule",
                " & ".join([stub_head, *(c.head for c in columns)]) + r" \\",
                r"\midrule",
            ]
            for row, name_cell in enumerate(stub):
                if row == rule:
                    out.append(r"\midrule")
                out.append(" & ".join([name_cell, *(c.cells[row] for c in columns)]) + r" \\")
            out += [
                r"\bottomrule",
                r"\end{tabular}",
                r"\begin{tablenotes}[flushleft]\footnotesize\raggedright",
                *[rf"\item {note}" for note in notes],
                r"\end{tablenotes}",
                r"\end{threeparttable}",
                r"\end{table}",
            ]
    return out


def render_latex(
    report,
    figures_dir: str | None,
    *,
    caption: str | None = None,
    label: str = "tab",
    transpose: bool | None = None,
) -> str:
    """:meth:`mobeval.report.Report.to_latex`'s document."""
    if report.plots and figures_dir is not None:  # no folder: nothing to link
        report.figures()
    t = tex_escape
    out = [
        r"\documentclass[10pt]{article}",
        *PACKAGES,
        r"\setlength{\parindent}{0pt}\setlength{\parskip}{4pt}",
        r"\sloppy",  # a long path (a note's command) breaks rather than overflows
        r"\renewcommand{\labelitemi}{$\bullet$}",  # the text bullet is a bitmap font in OT1
        rf"\title{{{t(report.title)}}}",
        r"\date{" + time.strftime("%Y-%m-%d") + "}",
        r"\begin{document}",
        r"\maketitle",
    ]
    for city in report.cities:
        out.append(rf"\section*{{city={t(city.name)}}}")
        out.append(rf"\textit{{{t(header(city))}}}")
        out += latex_tables(report, city, caption=caption, label=label, transpose=transpose)
        if figures_dir is not None:
            for figure in city.figures:
                out += [
                    r"\begin{figure}[htbp]\centering",
                    rf"\includegraphics[width=0.9\linewidth,height=0.4\textheight,keepaspectratio]{{{figures_dir}/{figure.name}}}",
                    rf"\caption{{{t(figure.caption)}}}\label{{fig:{_slug(figure.name)}}}",
                    r"\end{figure}",
                ]
        out.append(r"\clearpage")  # the city's floats before the next city
    out.append(r"\section*{Methods}")
    for cities, task, shared, entries in report.method_groups():
        out.append(rf"\subsection*{{{t(task)}: {t(', '.join('city=' + c for c in cities))}}}")
        if shared:
            out.append("Every metric below: " + t("; ".join(f"{k} = {v}" for k, v in shared)) + ".")
        for entry in entries:
            out += [
                rf"\paragraph{{{t(entry.info.title)}}} ({t(', '.join(entry.metrics))}) "
                + t(entry.info.definition),
                r"\[ " + entry.info.tex + r" \]",
                "System value: " + t(entry.info.aggregate) + ".",
                "",
            ]
            if entry.parameters:
                out += [
                    r"During this experiment it has been computed with:",
                    r"\begin{itemize}\setlength{\itemsep}{0pt}",
                    *[rf"\item \textbf{{{t(k)}}}: {t(v)}" for k, v in entry.parameters],
                    r"\end{itemize}",
                ]
    comparison = report.comparison_text()
    if comparison:
        out.append(r"\subsection*{Comparison}")
        out.append(r"\begin{itemize}")
        out += [r"\item " + t(line) for line in comparison]
        out.append(r"\end{itemize}")
    out.append(r"\end{document}")
    return "\n".join(out) + "\n"
