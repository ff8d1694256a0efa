"""The report as a LaTeX document (pdflatex)."""

from __future__ import annotations

import time

from mobeval.report.tables import cell, header, legend

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
    "<": r"$<$",
    ">": r"$>$",
}


def tex_escape(text: str) -> str:
    return "".join(_TEX_ESCAPES.get(ch, ch) for ch in str(text))


def render_latex(report, figures_dir: str | None) -> str:
    """:meth:`mobeval.report.Report.to_latex`'s document."""
    if report.plots and figures_dir is not None:  # no folder: nothing to link
        report.figures()
    t = tex_escape
    out = [
        r"\documentclass[10pt]{article}",
        r"\usepackage[T1]{fontenc}",
        r"\usepackage[utf8]{inputenc}",
        r"\usepackage{lmodern}",
        r"\usepackage[margin=2cm]{geometry}",
        r"\usepackage{amsmath,amssymb}",
        r"\usepackage{graphicx}",
        r"\usepackage{float}",
        r"\usepackage{array}",
        r"\setlength{\parindent}{0pt}\setlength{\parskip}{4pt}",
        rf"\title{{{t(report.title)}}}",
        r"\date{" + time.strftime("%Y-%m-%d") + "}",
        r"\begin{document}",
        r"\maketitle",
    ]
    for city in report.cities:
        out.append(rf"\section*{{city={t(city.name)}}}")
        out.append(rf"\textit{{{t(header(city))}}}")
        others = [m for m in city.models if m != city.baseline] if city.baseline else []
        for table in city.tables:
            head = ["metric", *city.models, *[f"{m} vs {city.baseline}" for m in others]]
            spec = "l" + "r" * (len(head) - 1)
            out += [
                r"\begin{table}[H]\centering\small",
                rf"\textbf{{{t(table.title)}}}\\[2pt]",
                r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%",
                rf"\begin{{tabular}}{{{spec}}}",
                r"\hline",
                " & ".join(t(h) for h in head) + r" \\",
                r"\hline",
            ]
            for metric in table.metrics:
                cells = [
                    cell(
                        report,
                        city,
                        m,
                        metric,
                        lambda s: rf"\textbf{{{s}}}",
                        lambda s: s,
                    )
                    .replace("†", r"$^{\dagger}$")
                    .replace("‡", r"$^{\ddagger}$")
                    for m in city.models
                ]
                cells += [t(report.improvement(city, m, metric)) for m in others]
                out.append(" & ".join([t(metric), *cells]) + r" \\")
            out += [r"\hline", r"\end{tabular}}", r"\end{table}"]
        out.append(r"{\footnotesize " + t(legend(city)) + "}")
        if city.note:
            out.append(r"{\footnotesize Note: " + t(city.note) + "}")
        if figures_dir is not None:
            for figure in city.figures:
                out += [
                    r"\begin{figure}[H]\centering",
                    rf"\includegraphics[width=0.9\linewidth,height=0.4\textheight,keepaspectratio]{{{figures_dir}/{figure.name}}}",
                    rf"\\{{\footnotesize {t(figure.caption)}}}",
                    r"\end{figure}",
                ]
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
