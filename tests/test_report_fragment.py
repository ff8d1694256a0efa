"""mobeval report --format latex --fragment: the tables alone, for ``\\input`` in a paper: no
preamble, no document, no figure; the same table floats the whole document holds; a document
that inputs it compiles (where pdflatex is installed)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from mobeval.cli import main

ROOT = Path(__file__).resolve().parents[1]
FLOAT = re.compile(r"\\begin\{(sideways|)table\}.*?\\end\{\1table\}", flags=re.S)


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    from mobeval.jobs import load_job, run_job

    out = tmp_path_factory.mktemp("fragment") / "out"
    run_job(load_job(ROOT / "jobs/nextloc_sample.toml", out=str(out)), progress=False, log=print)
    return out


@pytest.fixture(scope="module")
def fragment(out, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("paper") / "tables.tex"
    code = main(["report", str(out), "--format", "latex", "--fragment", "--output", str(path)])
    assert code == 0
    return path


def test_fragment_is_the_tables_alone(fragment):
    lines = [line for line in fragment.read_text().splitlines() if not line.startswith("%")]
    text = "\n".join(lines)  # the comments above say what the preamble loads
    for whole_document in (r"\documentclass", r"\usepackage", r"\begin{document}", r"\section"):
        assert whole_document not in text
    assert r"\includegraphics" not in text and r"\listing" not in text
    assert sorted(p.name for p in fragment.parent.iterdir()) == ["tables.tex"]  # no figures
    assert lines[0].startswith(r"\begin{table}") and lines[-1] == r"\end{table}"
    assert text.count(r"\begin{table}") == text.count(r"\end{table}") >= 2  # tky and nyc


def test_fragment_holds_the_documents_tables(out, fragment, tmp_path):
    document = tmp_path / "report.tex"
    assert main(["report", str(out), "--format", "latex", "--output", str(document)]) == 0
    whole = [m.group(0) for m in FLOAT.finditer(document.read_text())]
    assert whole  # the labels, captions and cells as the document has them
    assert [m.group(0) for m in FLOAT.finditer(fragment.read_text())] == whole


def test_fragment_is_latex_only(out, capsys):
    assert main(["report", str(out), "--format", "latex,html", "--fragment"]) == 2
    assert "--fragment: the LaTeX tables alone" in capsys.readouterr().err
    assert not (out / "report").exists()


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_a_paper_inputs_the_fragment(fragment):
    paper = fragment.parent / "paper.tex"
    paper.write_text(
        "\\documentclass{article}\n"
        "\\usepackage{booktabs,threeparttable,rotating}\n"
        "\\begin{document}\nAs Table~\\ref{tab:tky-1} shows.\n\\input{tables}\n\\end{document}\n"
    )
    for _ in range(2):  # the second run resolves the references
        run = subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
            cwd=paper.parent,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stdout[-3000:]
    log = (paper.parent / "paper.log").read_text()
    assert "undefined" not in log.lower()  # every \ref found its \label
    assert (paper.parent / "paper.pdf").stat().st_size > 5_000
