"""mobeval report --std: every mean shown as ``mean ± sd`` in Markdown, HTML and LaTeX, the sd
recomputed here from the per-unit Parquet values (statistics.pstdev: ddof 0, as ranx's
return_std), nothing after a value that is not a mean over units, the same option from the
command line, a job's [report] and ``Report``, and an OUT written without the ``std`` column."""

from __future__ import annotations

import math
import re
import shutil
import statistics
import subprocess
from pathlib import Path

import polars as pl
import pytest

from mobeval.cli import main
from mobeval.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "data_samples/nextloc/tky"
JOB = f"""out = "out"
[[tasks]]
type = "nextloc"
city = "tky"
truth = "{SAMPLES}/truth.parquet"
k = [1, 5]
metrics = ["acc@k", "mrr", "f1@k"]
convention = "libcity"
[tasks.models]
markov = "{SAMPLES}/markov.parquet"
popularity = "{SAMPLES}/popularity.parquet"
"""


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    from mobeval.jobs import load_job, run_job

    base = tmp_path_factory.mktemp("std")
    (base / "job.toml").write_text(JOB)
    run_job(load_job(base / "job.toml", out=str(base / "out")), progress=False, log=print)
    return base / "out"


def _number(value: float) -> str:
    return f"{value:.4f}"


def _expected(out: Path) -> dict[tuple[str, str], tuple[str, str | None]]:
    """(model, metric) -> (the mean's text, the sd's text or None), from the Parquet files: a
    metric whose summary value is the mean of its per-unit values gets their population sd
    (ddof 0); LibCity's F1 (the F1 of the mean precision and recall, not a mean over samples)
    gets none."""
    expected = {}
    for model in ("markov", "popularity"):
        summary = pl.read_parquet(out / f"summary/city=tky/model={model}/*.parquet")
        per_unit = pl.read_parquet(out / f"per_unit/city=tky/model={model}/*.parquet")
        for metric, value in summary.select("metric", "value").iter_rows():
            if metric not in per_unit.columns:
                continue  # a count
            if metric.startswith("f1@"):
                expected[(model, metric)] = (_number(value), None)
                continue
            values = per_unit[metric].to_list()
            assert math.isclose(statistics.fmean(values), value, rel_tol=1e-12)
            expected[(model, metric)] = (_number(value), _number(statistics.pstdev(values)))
    return expected


def _markdown_cells(text: str) -> dict[tuple[str, str], str]:
    """(model, metric) -> the cell's text, bold and markers removed."""
    cells, models = {}, []
    for line in text.splitlines():
        row = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| metric |"):
            models = row[1:3]
        elif line.startswith("| ") and models and not line.startswith("|---"):
            for model, cell in zip(models, row[1:3], strict=True):
                cells[(model, row[0])] = re.sub(r"[*†‡°]", "", cell)
    return cells


def _latex_rows(tex: str, metrics: set[str]) -> dict[str, list[str]]:
    """metric -> the cells of its LaTeX row, bold and markers removed."""
    plain = re.sub(r"\\textbf\{([^}]*)\}|\$\^\{\\\w+\}\$", r"\1", tex)
    rows = [line.removesuffix(r" \\").split(" & ") for line in plain.splitlines()]
    return {row[0]: row for row in rows if row[0] in metrics}


def test_mean_and_sd_in_every_format(out):
    from mobeval.report import Report

    expected = _expected(out)
    assert any(sd is None for _, sd in expected.values())  # f1: not a mean over samples
    report = Report(out, std=True, plots=False, compute_compare=False)
    cells = _markdown_cells(report.to_markdown())
    html, tex = report.to_html(), report.to_latex()
    rows = _latex_rows(tex, {metric for _, metric in expected})
    for (model, metric), (mean, sd) in expected.items():
        assert cells[(model, metric)] == (f"{mean} ± {sd}" if sd else mean), (model, metric)
        whole, decimals = mean.split(".")
        column = 1 + 2 * ["markov", "popularity"].index(model)
        latex = rows[metric][column : column + 2]
        assert latex == [f"{whole}.", f"{decimals} $\\pm$ {sd}" if sd else decimals], latex
        if sd:
            assert f"{mean} ± {sd}" in re.sub("<[^>]+>", "", html)
    for text in (report.to_markdown(), html, tex):
        assert "ddof 0, as ranx" in text and "return" in text  # the legend says what sd is
    methods = report.to_markdown().split("## Methods", 1)[1]
    assert "± sd = the population standard deviation of the per-unit values over the samples" in (
        methods
    )


def test_no_sd_unless_asked(out):
    from mobeval.report import Report

    report = Report(out, plots=False, compute_compare=False)
    assert "±" not in report.to_markdown() + report.to_html()
    assert r"\pm" not in report.to_latex()


def test_the_command_line_and_a_job_file_ask_for_it(out, tmp_path):
    from mobeval.jobs import load_job

    assert main(["report", str(out), "--std", "--no-plots", "--format", "markdown"]) == 0
    mean, sd = _expected(out)[("markov", "acc@1")]
    assert f"| acc@1 | {mean} ± {sd} |" in (out / "report/report.md").read_text()
    job = tmp_path / "job.toml"
    job.write_text(JOB + "\n[report]\nstd = true\n")
    assert load_job(job, out=str(tmp_path / "o")).report.choices == {"std": True}
    job.write_text(JOB + '\n[report]\nstd = "yes"\n')
    with pytest.raises(ConfigError, match="report.std: expected true or false"):
        load_job(job, out=str(tmp_path / "o"))


def test_an_out_written_without_the_std_column_still_renders(out, tmp_path, capsys):
    from mobeval.report import Report

    old = tmp_path / "old"
    shutil.copytree(out, old)
    for path in old.glob("summary/**/*.parquet"):
        pl.read_parquet(path).drop("std").write_parquet(path)
    report = Report(old, std=True, plots=False, compute_compare=False)
    texts = [report.to_markdown(), report.to_html()]
    assert not any("±" in text for text in texts) and r"\pm" not in report.to_latex()
    note = "no sd for markov, popularity: a summary without a std column"
    assert all(note in text for text in texts)
    code = main(["report", str(old), "--std", "--no-plots", "--no-compare", "--format", "html"])
    assert code == 0 and note in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_latex_with_sd_compiles_without_overfull_lines(out, tmp_path):
    from mobeval.report import Report

    (tmp_path / "report.tex").write_text(Report(out, std=True, plots=False).to_latex())
    run = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "report.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-3000:]
    log = (tmp_path / "report.log").read_text()
    assert "Missing character" not in log and "Overfull \\hbox" not in log


def test_captions_say_what_a_cell_is(out):
    """Every table's caption, in every format, says what its cells hold (the city value over
    the units scored, counted here from the truth file; ± sd over them when asked) and points
    at the legend for the bold and the markers, rather than repeating it."""
    from mobeval.report import Report

    samples = f"{pl.read_parquet(SAMPLES / 'truth.parquet').height:,} samples"
    for std, spread in ((True, " ± sd over the samples"), (False, "")):
        report = Report(out, std=std, plots=False, compute_compare=False)
        cells = f"Cells: city value over {samples}{spread}; bold, markers: legend"
        markdown = [ln for ln in report.to_markdown().splitlines() if ln.startswith("**Metrics")]
        html = re.findall(r"<caption>(Metrics[^<]*)<span[^>]*>([^<]*)</span>", report.to_html())
        tex = re.findall(r"\\caption\{(city=.*)\}\\label\{(.*)\}", report.to_latex())
        assert len(markdown) == len(html) == len(tex) == 2  # two cutoff grids
        for line in markdown:
            assert line.endswith(f".** {cells} below."), line
        for _, text in html:
            assert text == f"{cells} below.", text
        first, latex = tex[0][1], cells.replace("±", r"$\pm$")
        for caption, label in tex:
            at = "below" if label == first else rf"under Table~\ref{{{first}}}"
            assert caption.endswith(f". {latex} {at}."), caption
