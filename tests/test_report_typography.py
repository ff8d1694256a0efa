"""The report's typography, cell by cell against compare's own files: every p-value by one rule
(three significant digits, a power of ten below 0.001, typeset in LaTeX and HTML), the effect
sizes' names as math (LaTeX) and with subscripts (HTML), counts with a thousands separator."""

from __future__ import annotations

import math
import re
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from mobeval.cli import main
from mobeval.compare.printing import p_text

SUPERSCRIPTS = dict(zip("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789", strict=True))


@pytest.fixture(scope="module")
def reported(nextloc_sample_out, tmp_path_factory) -> tuple[Path, dict[str, str], str]:
    """(OUT, the report's text per format, what ``mobeval compare`` printed) of the sample job's
    tky, compared by ``mobeval compare`` (its default tests) and reported with --comparisons."""
    out = tmp_path_factory.mktemp("typography") / "out"
    shutil.copytree(nextloc_sample_out, out)
    printed = tmp_path_factory.mktemp("printed") / "compare.txt"
    with printed.open("w") as file:
        import contextlib

        with contextlib.redirect_stdout(file):
            assert main(["compare", str(out), "--city", "tky", "--baseline", "markov"]) == 0
    argv = ["report", str(out), "--format", "latex,markdown,html", "--no-plots", "--city", "tky"]
    assert main([*argv, "--baseline", "markov", "--comparisons"]) == 0
    texts = {ext: (out / "report" / f"report.{ext}").read_text() for ext in ("tex", "md", "html")}
    return out, texts, printed.read_text()


def _power(text: str) -> tuple[str, int]:
    """``1.70×10⁻⁴`` -> ("1.70", -4)."""
    mantissa, exponent = text.split("×10")
    return mantissa, int("".join(SUPERSCRIPTS[c] for c in exponent))


def test_p_text_three_significant_digits_a_power_of_ten_below_0_001():
    values = [1.0, 0.99996, 0.5, 0.05, 0.0496, 0.0242, 0.0017, 0.001, 0.0009999, 0.000999]
    values += list(10 ** np.random.default_rng(0).uniform(-12, 0, 200))
    for value in values:
        text = p_text(value)
        if float(f"{value:.3g}") >= 0.001:  # rounded to 3 significant digits
            assert re.fullmatch(r"[01]\.\d+", text), text
            assert len(text.replace(".", "").lstrip("0")) == 3, text  # 3 significant digits
            assert float(text) == float(f"{value:.3g}")
        else:
            mantissa, exponent = _power(text)
            assert re.fullmatch(r"[1-9]\.\d\d", mantissa), text
            assert float(mantissa) * 10.0**exponent == pytest.approx(value, rel=5e-3)
            assert 1 <= float(mantissa) < 10 and exponent <= -3
    assert p_text(None) == p_text(math.nan) == "-"
    assert p_text(0.0) == "0"


def _listing_rows(text: str, metric: str, fmt: str) -> list[list[str]]:
    """The rows of ``metric``'s comparison table in the report's ``fmt`` text."""
    title = f"city=tky: {metric}: each model vs markov" if fmt == "tex" else None
    if fmt == "md":
        block = text.split(f"**{metric}: each model vs markov**", 1)[1].split("\n\n", 2)[1]
        return [[c.strip() for c in ln.strip("|").split("|")] for ln in block.splitlines()[2:]]
    if fmt == "html":
        block = text.split(f"<caption>{metric}: each model vs markov</caption>", 1)[1]
        block = block.split("</table>", 1)[0]
        rows = re.findall(r"<tr>(.*?)</tr>", block)[1:]
        return [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows]
    block = text.split(title, 1)[1].split(r"\bottomrule", 1)[0].split(r"\midrule", 1)[1]
    return [line[: -len(r" \\")].split(" & ") for line in block.strip().splitlines()]


def _typeset(p: float, fmt: str) -> str:
    """The p-value as the format shows it: p_text's, its power of ten typeset."""
    text = p_text(p)
    if "×10" not in text:
        return text
    mantissa, exponent = _power(text)
    if fmt == "tex":
        return rf"${mantissa}\times10^{{{exponent}}}$"
    if fmt == "html":
        return f"{mantissa}×10<sup>{str(exponent).replace('-', '−')}</sup>"
    return text


def test_p_values_of_every_format_are_compares_by_one_rule(reported):
    out, texts, printed = reported
    rows = pl.read_parquet(out / "compare/city=tky/part-0.parquet").filter(
        pl.col("model") == "popularity"
    )
    forms = set()
    for row in rows.iter_rows(named=True):
        for fmt, text in texts.items():
            cells = _listing_rows(text, row["metric"], fmt)
            assert len(cells) == 1 and cells[0][0] == "popularity"
            expected = [_typeset(row["p_t"], fmt), _typeset(row["p_t_corrected"], fmt)]
            assert cells[0][-2:] == expected, (fmt, row["metric"])
        forms |= {"×10" in p_text(row["p_t"]), "×10" in p_text(row["p_t_corrected"])}
        # compare's own table: the same rule (its corrected p-values)
        lines = [ln for ln in printed.splitlines() if ln.startswith(f"│ {row['metric']} ")]
        assert any(f"┆ {p_text(row['p_t_corrected'])} " in line for line in lines)
    assert forms == {True, False}  # both decimals and powers of ten were checked
    assert "e-0" not in texts["md"] + texts["html"] + texts["tex"] + printed


def test_effect_sizes_typeset_as_math_and_with_subscripts(reported):
    _, texts, _ = reported
    tex, html, markdown = texts["tex"], texts["html"], texts["md"]
    assert r"$d_z$" in tex and r"$r_{\mathrm{rb}}$" in tex
    assert r"d\_z" not in tex and r"r\_rb" not in tex
    assert "<i>d</i><sub>z</sub>" in html and "<i>r</i><sub>rb</sub>" in html
    body = html.split("<body>", 1)[1]
    assert "d_z" not in body and "r_rb" not in body
    assert "| d_z | r_rb |" in markdown  # readable as it is


def test_counts_with_a_thousands_separator(reported):
    out, texts, printed = reported
    n = pl.read_parquet(out / "compare/city=tky/part-0.parquet")["n"][0]
    assert n >= 1000
    for text in (*texts.values(), printed):
        assert f"{n:,} samples" in text
        assert not re.search(rf"\b{n} samples\b", text)
    for text in texts.values():
        assert "1,000 resamples" in text and "1000 resamples" not in text


def test_html_numbers_with_real_minus_signs_ids_and_words_with_hyphens(reported):
    out, texts, _ = reported
    html = texts["html"]
    cells = re.findall(r'<td class="num">(.*?)</td>', html)
    assert cells and not any(re.search(r"(?<![\w.])-\d", c) for c in cells)  # no hyphen-minus
    # every negative difference of compare's files shown with U+2212, in pp and in percent
    rows = pl.read_parquet(out / "compare/city=tky/part-0.parquet").filter(pl.col("diff") < 0)
    assert rows.height > 0
    for row in rows.iter_rows(named=True):
        shown = f"\u2212{abs(row['diff']) * 100:.2f} pp (\u2212{abs(row['rel_change_pct']):.1f}%)"
        assert any(c.startswith(shown) for c in cells), (row["metric"], shown)
    # the numbers right-aligned on tabular (equal-width) digits, so points line up
    assert re.search(r"td\.num \{[^}]*text-align: right;[^}]*tabular-nums", html)
    # ids and text keep their hyphens
    assert "\u2212" not in "".join(re.findall(r'(?:id|class)="([^"]*)"', html))
    assert "two-sided" in html and "holm-corrected" in html


def test_letters_legend_counts_with_a_thousands_separator(reported):
    from mobeval.report import Report

    out, _, _ = reported
    text = Report(out, baseline="markov", letters=True, plots=False).to_markdown()
    n = pl.read_parquet(out / "compare/city=tky/part-0.parquet")["n"][0]
    assert f"models on {n:,} samples" in text and f" {n} samples" not in text
