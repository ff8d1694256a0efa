"""A report's LaTeX tables alone, for ``\\input`` in a paper (``mobeval report --format latex
--fragment``, ``Report(fragment=True)``): no preamble, no ``\\begin{document}``, no title, plots,
small tables or methods; each table the float the whole document holds
(:func:`mobeval.report.latex.latex_tables`: ``\\caption``, ``\\label``
``<label>:<city>-<n>``, booktabs rules, the legend in threeparttable's notes).

The document that inputs it loads :data:`NEEDS` (a wide table may be set sideways).
"""

from __future__ import annotations

from mobeval.report.latex import latex_tables

#: The packages the fragment's tables use, all in texlive-latex-recommended / -extra.
NEEDS = r"\usepackage{booktabs,threeparttable,rotating}"


def latex_fragment(
    report, *, caption: str | None = None, label: str = "tab", transpose: bool | None = None
) -> str:
    """Every city's tables, one float each (a part each, for a table split to fit), after two
    comment lines saying what it is and what the preamble must load."""
    title = " ".join(report.title.split())
    out = [
        f"% {title}: the tables of mobeval report --fragment, to \\input in a document",
        f"% whose preamble has {NEEDS}",
    ]
    for city in report.cities:
        out += latex_tables(report, city, caption=caption, label=label, transpose=transpose)
    return "\n".join(out) + "\n"
