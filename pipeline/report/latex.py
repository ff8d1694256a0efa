"""The report as a LaTeX document (pdflatex) a paper takes as it is.

Every table is a float with ``\\caption`` and ``\\label``, booktabs rules, its notes (the legend
and the city's note) inside the float (threeparttable), real minus signs, and each value column
aligned on the decimal point (a ``r@{}l`` pair: the integer part with its point right-aligned,
the decimals and the marker left-aligned; no package needed), each improvement column in
sub-columns (:data:`IMPROVEMENTS`) that align its differences, relative changes and effect sizes
each on its point. Nothing is shrunk: a table wider
than the text (an estimate: :data:`TEXT_WIDTH_PT`, :data:`CHAR_PT`) is transposed (models as
rows) when that fits, else split into parts that fit, in the layout that needs fewer parts.
Only packages of a standard TeX Live (texlive-latex-recommended / -extra): :data:`PACKAGES`.
"""

from __future__ import annotations

import re
import time

from mobeval.report.tables import (
    SIGN,
    cells_text,
    header,
    legend,
    listing_sections,
    table_parts,
    typeset,
)

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
    r"\usepackage{rotating}",
    r"\usepackage{placeins}",
)
#: Where floats go: a page of floats alone only when they fill most of it (``floatpagefraction``:
#: a small table or a figure left over goes to the top of the next page of text, above the
#: text, rather than alone on a page), floats up to 85% of a page above text, and a page of
#: floats filled from the top, one float under the other (LaTeX spreads them over the page).
FLOATS = (
    r"\renewcommand{\topfraction}{0.85}\renewcommand{\textfraction}{0.1}",
    r"\renewcommand{\floatpagefraction}{0.8}",
    r"\makeatletter\setlength{\@fptop}{0pt}\setlength{\@fpsep}{\floatsep}",
    r"\setlength{\@fpbot}{0pt plus 1fil}\makeatother",
)
#: The text width of the page above (A4, 2 cm margins), in points.
TEXT_WIDTH_PT = 483.0
#: A generous width of one character of a ``\small`` table (digits are 4.5 pt), and the space
#: LaTeX puts on both sides of a column (2 ``\tabcolsep``).
CHAR_PT = 5.0
COLUMN_SEP_PT = 12.0


def _escaped(text: str) -> str:
    return "".join(_TEX_ESCAPES.get(ch, ch) for ch in text)


def _signed(text: str) -> str:
    text = SIGN.sub(lambda m: "$-$" if m.group(1) == "-" else "$+$", _escaped(text))
    return text.replace("inf", r"$\infty$")


def tex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped (a model name, a caption) and the
    report's notations typeset (:func:`~mobeval.report.tables.typeset`: ``$d_z$``,
    ``$1.70\\times10^{-4}$``)."""
    return typeset(str(text), _escaped, "latex")


def tex_number(text: str) -> str:
    """A number's or an improvement's text as LaTeX: ``-2.57 pp (-4.9%)`` with real minus
    signs, ``inf`` as the infinity sign, a lone ``-`` (no value) as an en dash."""
    if text.strip() == "-":
        return "--"
    return typeset(text, _signed, "latex")


#: The page of :func:`~mobeval.report.tables.table_parts`: the text width, a character, the
#: space around a column, in points; and the page turned (``landscape``: A4's 297 mm less the
#: margins), for a table that needs fewer parts there.
PAGE = (TEXT_WIDTH_PT, CHAR_PT, COLUMN_SEP_PT)
LANDSCAPE = (728.0, CHAR_PT, COLUMN_SEP_PT)


def _value(report, city, model: str, metric: str, span: int) -> str:
    """A value's cells over ``span`` sub-columns: the integer part with its point, then (over
    the others) the decimals, `` ± sd`` over runs or, with ``report --std``, over units, and the
    marker."""
    text = report.number(city.values[model].get(metric))
    marker = report.marker(city, model, metric, latex=True)
    if "." not in text:  # no value, or infinite: across every sub-column
        return rf"\multicolumn{{{span}}}{{c}}{{{tex_number(text)}{marker}}}"
    whole, decimals = text.split(".")
    spread = report.spread(city, model, metric)
    sd = rf" $\pm$ {spread}" if spread else ""
    if model in report.best(city, metric):
        whole, decimals = rf"\textbf{{{tex_number(whole)}.}}", rf"\textbf{{{decimals}}}"
    else:
        whole = f"{tex_number(whole)}."
    rest = f"{decimals}{sd}{marker}"
    if span > 2:  # beside improvements: across their last two sub-columns, no space before
        rest = rf"\multicolumn{{{span - 1}}}{{@{{}}l}}{{{rest}}}"
    return f"{whole} & {rest}"


#: A column's sub-columns: a column of values an ``r@{}l`` pair (the integer part and its point,
#: then the decimals); a column with improvements three, the difference, the relative change
#: and the effect size, each aligned on its point whatever the others' widths (a value beside
#: them, models as rows: its integer part in the first, the rest across the other two).
VALUES, IMPROVEMENTS = "r@{}l", "r@{}r@{}l"


def _cell(report, city, kind: str, model: str, metric: str, spec: str) -> str:
    """A cell in LaTeX, as the sub-columns of its column's ``spec``: an improvement's three
    (the relative change after a tie: LaTeX drops a space at the start of a cell)."""
    if kind == "value":
        return _value(report, city, model, metric, spec.count("@") + 1)
    difference, relative, effect = report.improvement_parts(city, model, metric)
    relative = "~" * bool(relative) + tex_number(relative.lstrip())
    return " & ".join([tex_number(difference), relative, tex_number(effect)])


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "x"


def latex_tables(
    report, city, *, caption: str | None = None, label: str = "tab", transpose=None
) -> list[str]:
    """The LaTeX lines of ``city``'s tables: one float per table (or per part of a table split
    to fit), each with ``\\caption`` (``caption``, then the city and the table's title),
    ``\\label`` (``<label>:<city>-<n>``, ``-<part>`` for a part), booktabs rules and the legend
    inside the city's first float (its last part), the others pointing to it."""
    legends = [tex_escape(legend(city))]
    if city.note:
        legends.append("Note: " + tex_escape(city.note))
    out = []
    laid = []
    for table in city.tables:
        parts = table_parts(report, city, table.metrics, transpose, page=PAGE)
        turned = table_parts(report, city, table.metrics, transpose, page=LANDSCAPE)
        laid.append(
            (table, turned if len(turned) < len(parts) else parts, len(turned) < len(parts))
        )
    # the legend once, under the first table (its last part): the others point to it
    first = f"{label}:{_slug(city.name)}-1"
    anchor = f"{first}-{len(laid[0][1])}" if laid and len(laid[0][1]) > 1 else first
    for number, (table, parts, landscape) in enumerate(laid, 1):
        # landscape: fewer parts on pages of their own, turned sideways
        float_ = "sidewaystable" if landscape else "table"
        for part in parts:
            title = f"city={city.name}: {table.title[:1].lower()}{table.title[1:]}"
            text = f"{caption} ({title})" if caption else title
            name = f"{label}:{_slug(city.name)}-{number}"
            if part.count > 1:
                text += f", part {part.number} of {part.count}"
                name += f"-{part.number}"
            where = rf"Table~\ref{{{anchor}}}"
            if number == 1:  # a part of the same table
                where = f"part {len(parts)} ({where})"
            notes = legends if name == anchor else [f"Legend and notes under {where}."]
            at = "below" if name == anchor else f"under {where}"
            cells = cells_text(city, table.metrics, at, tex_escape)
            specs = [
                IMPROVEMENTS if any(kind == "improvement" for kind, _, _ in column) else VALUES
                for column in part.columns
            ]
            heads = [
                rf"\multicolumn{{{spec.count('@') + 1}}}{{c}}{{{tex_escape(head)}}}"
                for head, spec in zip(part.heads, specs, strict=True)
            ]
            out += [
                rf"\begin{{{float_}}}[htbp]\centering\small",
                r"\begin{threeparttable}",
                rf"\caption{{{tex_escape(text)}. {cells}}}\label{{{name}}}",
                rf"\begin{{tabular}}{{@{{}}l{''.join(specs)}@{{}}}}",
                r"\toprule",
                " & ".join([part.stub_head, *heads]) + r" \\",
                r"\midrule",
            ]
            for row, stub in enumerate(part.stub):
                if row == part.rule:
                    out.append(r"\midrule")
                cells = [
                    _cell(report, city, *column[row], spec)
                    for column, spec in zip(part.columns, specs, strict=True)
                ]
                out.append(" & ".join([tex_escape(stub), *cells]) + r" \\")
            out += [
                r"\bottomrule",
                r"\end{tabular}",
                r"\begin{tablenotes}[flushleft]\footnotesize\raggedright",
                *[rf"\item {note}" for note in notes],
                r"\end{tablenotes}",
                r"\end{threeparttable}",
                rf"\end{{{float_}}}",
            ]
    return out


#: The preamble's ``\\listing{caption}{label}{tabular}``: a small table with its caption, as
#: wide as the wider of its tabular and its caption on one line (measured by TeX, a caption
#: being ``\\normalsize``; at most the text width), set like a word of a paragraph: the tables
#: of a section flow side by side, as many on a line as fit the text width, and lines on pages
#: as text does (no float to place, none left over: a float page held two or three, and LaTeX
#: stops at 18 floats waiting). The caption is a table's (``\\@captype``, as capt-of does),
#: numbered with the tables.
LISTING = (
    r"\makeatletter\newsavebox{\listingbox}\newlength{\listingwidth}",
    r"\newcommand{\listing}[3]{\sbox{\listingbox}{#3}%",
    r"\settowidth{\listingwidth}{\normalsize\tablename~\the\numexpr\value{table}+1\relax: #1}%",
    r"\addtolength{\listingwidth}{1pt}%",
    r"\ifdim\wd\listingbox>\listingwidth\setlength{\listingwidth}{\wd\listingbox}\fi",
    r"\ifdim\listingwidth>\linewidth\setlength{\listingwidth}{\linewidth}\fi",
    r"\begin{minipage}[t]{\listingwidth}\centering\def\@captype{table}%",
    r"\caption{#1}\label{#2}\usebox{\listingbox}\end{minipage}}\makeatother",
)


def latex_listings(report, city, *, label: str = "tab") -> list[str]:
    """The LaTeX lines of ``city``'s small tables
    (:func:`~mobeval.report.tables.listing_sections`) after its tables and figures (placeins'
    ``\\FloatBarrier``: on the next page, under the floats still waiting, rather than after a
    ``\\clearpage`` that put each of those alone on a page): per section its heading, the
    tables side by side (:data:`LISTING`), labelled ``<label>:<city>-<section>-<n>``, and the
    sentence saying what they show."""
    sections = listing_sections(report, city)
    out = [r"\FloatBarrier"] if sections else []  # the city's tables and figures first
    for section, heading, listings, text in sections:
        name = f"{label}:{_slug(city.name)}-{section}"
        out += [
            rf"\subsection*{{{tex_escape(heading)}}}",
            r"{\centering\small\setlength{\lineskip}{2ex}",
        ]
        for number, listing in enumerate(listings, 1):
            spec = "".join("r" if numeric else "l" for numeric in listing.numeric)
            out += [
                rf"\listing{{{tex_escape(f'city={city.name}: {listing.title}')}}}"
                rf"{{{name}-{number}}}{{%",
                rf"\begin{{tabular}}{{@{{}}{spec}@{{}}}}",
                r"\toprule",
                " & ".join(tex_escape(head) for head in listing.heads) + r" \\",
                r"\midrule",
                *[
                    " & ".join(
                        (tex_number if numeric else tex_escape)(text)
                        for text, numeric in zip(row, listing.numeric, strict=True)
                    )
                    + r" \\"
                    for row in listing.rows
                ],
                r"\bottomrule",
                r"\end{tabular}}\hspace{2em plus 1fil}",  # a break between two tables
            ]
        out += [r"\par}", rf"{{\footnotesize {tex_escape(text)}\par}}"]
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
        *FLOATS,
        r"\setlength{\parindent}{0pt}\setlength{\parskip}{4pt}",
        r"\sloppy",  # a long path (a note's command) breaks rather than overflows
        r"\renewcommand{\labelitemi}{$\bullet$}",  # the text bullet is a bitmap font in OT1
        *LISTING,
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
        out += latex_listings(report, city, label=label)
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
