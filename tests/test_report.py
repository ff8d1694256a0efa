"""mobeval report: every task family's sample outputs in every format, bold = the best value per
metric and markers = the compare table's p-values (both read here from the Parquet outputs, not
from the report code), the methods section's parameters of the run, the LaTeX build (when
pdflatex is installed), the missing-extra message and the job's [report] table."""

from __future__ import annotations

import json
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from mobeval.cli import main
from mobeval.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
LOWER = {"dtw", "mse", "mae", "rmse", "cross_entropy"}
COUNTS = {"samples", "samples_without_predictions", "predictions_without_truth_dropped", "users"}
COUNTS |= {"uids", "uid_days", "steps", "uids_skipped", "rows_out_of_grid"}
FAMILIES = ("nextloc", "recs", "logits", "trajectory")


@pytest.fixture(scope="module")
def outs(tmp_path_factory) -> dict[str, Path]:
    from mobeval.jobs import load_job, run_job

    base = tmp_path_factory.mktemp("report")
    found = {}
    for family in FAMILIES:
        out = base / family
        job = load_job(ROOT / f"jobs/{family}_sample.toml", out=str(out))
        run_job(job, progress=False, log=lambda _: None)
        found[family] = out
    return found


def _copy(out: Path, tmp_path: Path) -> Path:
    target = tmp_path / out.name
    shutil.copytree(out, target)
    return target


def _summary(out: Path) -> pl.DataFrame:
    return pl.read_parquet(out / "summary/**/*.parquet", hive_partitioning=True)


def _tables(markdown: str, city: str) -> list[tuple[list[str], list[list[str]]]]:
    """(header, rows) of every table in the city's section of a Markdown report."""
    section = markdown.split(f"## city={city}\n", 1)[1].split("\n## ", 1)[0]
    tables, current = [], None
    for line in section.splitlines():
        if line.startswith("| metric |"):
            current = ([c.strip() for c in line.strip("|").split("|")], [])
            tables.append(current)
        elif line.startswith("|---"):
            continue
        elif line.startswith("|") and current is not None:
            current[1].append([c.strip() for c in line.strip("|").split("|")])
        else:
            current = None
    return tables


@pytest.mark.parametrize("family", FAMILIES)
def test_every_format_from_every_family(outs, family, tmp_path):
    out = _copy(outs[family], tmp_path)
    assert main(["report", str(out), "--format", "latex,markdown,html"]) == 0
    folder = out / "report"
    assert sorted(p.name for p in folder.iterdir()) == [
        "report.html",
        "report.md",
        "report.tex",
        "report_files",
    ]
    markdown = (folder / "report.md").read_text()
    for link in re.findall(r"\]\((report_files/[^)]+)\)", markdown):
        assert (folder / link).is_file(), link
    assert re.findall(r"\]\((report_files/[^)]+)\)", markdown)  # at least one plot
    page = (folder / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    sources = re.findall(r'src="([^"]*)"', page)
    assert sources and all(s.startswith("data:image/png;base64,") for s in sources)
    assert "<link" not in page and "<script" not in page  # one self-contained file
    tex = (folder / "report.tex").read_text()
    assert tex.startswith(r"\documentclass") and tex.rstrip().endswith(r"\end{document}")
    assert not (out / ".staging").exists() or not any((out / ".staging").iterdir())
    if family == "trajectory":
        assert "test-per-day.png" in markdown and "test-cdf.png" in markdown
    if family == "nextloc":
        assert "tky-curves.png" in markdown and "tky-scatter.png" in markdown


@pytest.mark.parametrize("family", FAMILIES)
def test_values_bold_and_markers_match_the_parquet_outputs(outs, family, tmp_path):
    out = _copy(outs[family], tmp_path)
    summary = _summary(out)
    models_of: dict[str, list[str]] = {}  # manifest order: the first model is the baseline
    for name in json.loads((out / "manifest.json").read_text())["results"]:
        city, model = name.split("/")
        models_of.setdefault(city[5:], []).append(model[6:])
    baseline = {c: m[0] for c, m in models_of.items()}
    from mobeval.compare import compare

    compare(out, write=True, log=None, resamples=200, permutations=2000)
    assert main(["report", str(out), "--format", "markdown", "--no-plots"]) == 0
    markdown = (out / "report" / "report.md").read_text()
    checked = 0
    for city, models in models_of.items():
        stored = pl.read_parquet(out / "compare" / f"city={city}" / "part-0.parquet")
        pvalues = {
            (r["model"], r["metric"]): r["p_t_corrected"]
            for r in stored.filter(pl.col("baseline") == baseline[city]).iter_rows(named=True)
        }
        values = {
            (r["model"], r["metric"]): r["value"]
            for r in summary.filter(pl.col("city") == city).iter_rows(named=True)
        }
        metrics = [m for m in dict.fromkeys(m for _, m in values) if m not in COUNTS]
        per_unit = pl.read_parquet_schema(
            next((out / "per_unit" / f"city={city}").rglob("*.parquet"))
        )
        rows = {row[0]: (header, row) for header, table in _tables(markdown, city) for row in table}
        assert set(rows) == set(metrics)
        for metric in metrics:
            header, row = rows[metric]
            assert header[1 : 1 + len(models)] == models
            scores = {m: values[(m, metric)] for m in models}
            best = (min if metric in LOWER else max)(scores.values())
            for index, model in enumerate(models):
                cell = row[1 + index]
                bold = cell.startswith("**")
                assert bold == (scores[model] == best), (city, metric, model, cell)
                number = float(cell.replace("*", "").rstrip("†‡°"))
                assert number == pytest.approx(
                    scores[model], abs=0.006 if abs(number) >= 100 else 6e-5
                )
                p = pvalues.get((model, metric))
                if model == baseline[city] or metric not in per_unit:  # a population metric
                    expected = ""
                elif p is None:  # not tested: never the blank of "not significant"
                    expected = "°"
                else:
                    expected = "" if p != p else "‡" if p < 0.01 else "†" if p < 0.05 else ""
                assert cell.endswith(expected) and not cell.rstrip("†‡°").endswith(("†", "‡"))
                if expected == "":
                    assert not cell.endswith(("†", "‡", "°")), (city, metric, model, cell, p)
                checked += 1
    assert checked


def test_improvement_columns_in_points_and_percent(outs, tmp_path):
    out = _copy(outs["nextloc"], tmp_path)
    assert main(["report", str(out), "--format", "markdown", "--no-plots", "--city", "tky"]) == 0
    markdown = (out / "report" / "report.md").read_text()
    summary = _summary(out).filter(pl.col("city") == "tky")
    value = {(r["model"], r["metric"]): r["value"] for r in summary.iter_rows(named=True)}
    header, _ = _tables(markdown, "tky")[0]
    assert header == ["metric", "markov", "popularity", "popularity vs markov"]
    rows = {r[0]: r for _, t in _tables(markdown, "tky") for r in t}
    per_unit = {
        m: pl.read_parquet(out / f"per_unit/city=tky/model={m}" / "*.parquet").sort("sample_id")
        for m in ("markov", "popularity")
    }
    for metric in ("acc@1", "acc@10", "mrr", "ndcg@10"):
        a, b = value[("markov", metric)], value[("popularity", metric)]
        pairs = zip(per_unit["markov"][metric], per_unit["popularity"][metric], strict=True)
        d = [y - x for x, y in pairs]
        d_z = statistics.mean(d) / statistics.stdev(d)  # paired Cohen's d, by hand
        expected = f"{(b - a) * 100:+.2f} pp ({(b - a) / a * 100:+.1f}%), d_z {d_z:+.2f}"
        assert rows[metric][3] == expected
    # trajectory DTW is not a rate: a plain difference
    out = _copy(outs["trajectory"], tmp_path)
    assert main(["report", str(out), "--format", "markdown", "--no-plots"]) == 0
    summary = _summary(out)
    value = {(r["model"], r["metric"]): r["value"] for r in summary.iter_rows(named=True)}
    rows = {r[0]: r for _, t in _tables((out / "report/report.md").read_text(), "test") for r in t}
    for metric in ("dtw", "geobleu"):  # not in percent: no "pp"
        a, b = value[("weekly_repeat", metric)], value[("home_only", metric)]
        assert rows[metric][3].startswith(f"{b - a:+.4g} ({(b - a) / a * 100:+.1f}%), d_z ")


def test_tables_grouped_by_cutoff_grid(outs, tmp_path):
    out = _copy(outs["nextloc"], tmp_path)
    assert main(["report", str(out), "--format", "markdown", "--no-plots"]) == 0
    markdown = (out / "report/report.md").read_text()
    tables = _tables(markdown, "tky")
    assert [r[0] for r in tables[0][1]][:3] == ["acc@1", "acc@5", "acc@10"]
    assert [r[0] for r in tables[1][1]] == ["mrr"]
    assert "**Metrics at cutoffs @1, @5, @10.** Cells: city value over 3,000 samples;" in markdown


def test_methods_state_the_resolved_parameters(outs, tmp_path):
    # recs job: the trec_eval city was run with relevant_threshold = 4, clayrs with its preset
    manifest = json.loads((outs["recs"] / "manifest.json").read_text())
    assert manifest["results"]["city=trec_eval/model=mf"]["resolved"]["relevant_threshold"] == 4
    assert manifest["results"]["city=clayrs/model=mf"]["resolved"]["idcg"] == "retrieved_rated"
    from mobeval.report import Report

    markdown = Report(outs["recs"], plots=False, compute_compare=False).to_markdown()
    methods = markdown.split("## Methods", 1)[1]
    trec = methods.split("### recs: city=trec_eval", 1)[1]
    clayrs = methods.split("### recs: city=clayrs", 1)[1].split("### ", 1)[0]
    assert "relevant threshold = rating >= 4;" in trec
    assert "log base b = 2" in trec and "gain f = linear" in trec
    assert "relevant threshold = rating >= the user's mean rating" in clayrs
    assert "ideal list (IDCG) = retrieved_rated" in clayrs
    assert "sys average = macro" in clayrs and "k = 5, 10" in clayrs
    # the trajectory preset resolved: N, beta, scale, matching
    markdown = Report(outs["trajectory"], plots=False, compute_compare=False).to_markdown()
    assert (
        "N (largest n-gram) = 5" in markdown and "beta (proximity decay per cell) = 0.5" in markdown
    )
    assert "matching = greedy" in markdown and "scale (cell distance divisor) = 2" in markdown
    markdown = Report(outs["nextloc"], plots=False, compute_compare=False).to_markdown()
    assert "convention = libcity" in markdown and "ties = id_asc" in markdown
    markdown = Report(outs["logits"], plots=False, compute_compare=False).to_markdown()
    assert "in percent = yes" in markdown and "ties = optimistic" in markdown


def test_methods_from_the_command_line_and_an_older_manifest(tmp_path):
    out = tmp_path / "cli"
    for model in ("mf", "popular"):
        argv = ["recs", "--ratings", str(ROOT / "data_samples/recs/ratings.parquet")]
        argv += ["--recs", str(ROOT / f"data_samples/recs/{model}.parquet"), "--cutoffs", "5"]
        argv += ["--relevant-threshold", "3.5", "--log-base", "10", "--out", str(out), "--quiet"]
        assert main(argv) == 0
    assert main(["report", str(out), "--format", "markdown", "--no-plots"]) == 0
    text = (out / "report/report.md").read_text()
    assert "relevant threshold = rating >= 3.5;" in text and "log base b = 10;" in text
    # a manifest written before "resolved" existed: resolved from its config the same way
    path = out / "manifest.json"
    manifest = json.loads(path.read_text())
    for entry in manifest["results"].values():
        entry.pop("resolved")
    path.write_text(json.dumps(manifest))
    assert main(["report", str(out), "--format", "markdown", "--no-plots"]) == 0
    assert (out / "report/report.md").read_text().split("## Methods")[1] == text.split(
        "## Methods"
    )[1]


def test_humob2024_preset_resolved(tmp_path):
    from mobeval.report import Report

    out = tmp_path / "traj"
    for model in ("weekly_repeat", "home_only"):
        argv = ["trajectory", "--reference", str(ROOT / "data_samples/humob/reference_test.csv.gz")]
        argv += ["--generated", str(ROOT / f"data_samples/humob/{model}.csv.gz")]
        argv += ["--convention", "humob2024", "--city", "test", "--out", str(out), "--quiet"]
        assert main(argv) == 0
    text = Report(out, plots=False, compute_compare=False).to_markdown()
    assert "N (largest n-gram) = 3" in text and "D[0,0] = free start" in text


def test_markers_need_compare_or_say_so(outs, tmp_path):
    out = _copy(outs["trajectory"], tmp_path)
    shutil.rmtree(out / "compare", ignore_errors=True)
    assert main(["report", str(out), "--format", "markdown", "--no-plots", "--no-compare"]) == 0
    text = (out / "report/report.md").read_text()
    assert "run `mobeval compare" in text and "†" not in text and "‡" not in text
    assert not (out / "compare").exists()
    assert main(["report", str(out), "--format", "markdown", "--no-plots"]) == 0
    text = (out / "report/report.md").read_text()
    assert "computed for this report" in text
    assert not (out / "compare").exists()  # computed, not written


def test_python_report_object(outs, tmp_path):
    pytest.importorskip("matplotlib")
    from mobeval.report import Report

    report = Report(outs["logits"], baseline="popularity")
    assert report.cities[0].baseline == "popularity"
    assert report.to_html().startswith("<!DOCTYPE html>")
    assert report._repr_html_().startswith("<div>")
    assert report.to_latex().startswith(r"\documentclass")
    path = report.save(tmp_path / "x" / "logits.md")
    assert path.read_text().count("](logits_files/") >= 2
    assert (tmp_path / "x" / "logits_files").is_dir()
    assert sorted(p.name for p in (tmp_path / "x").iterdir()) == ["logits.md", "logits_files"]
    with pytest.raises(ConfigError):
        Report(outs["logits"], baseline="nope")
    with pytest.raises(ConfigError):
        report.save(tmp_path / "x" / "logits.pdf")


def test_missing_extra_says_which_to_install(outs, tmp_path, monkeypatch, capsys):
    out = _copy(outs["trajectory"], tmp_path)
    for name in list(sys.modules):
        if name == "matplotlib" or name.startswith("matplotlib."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    assert main(["report", str(out), "--format", "html"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'mobeval[report]'" in err and err.count("\n") == 1
    assert not (out / "report").exists()
    assert main(["report", str(out), "--format", "html", "--no-plots"]) == 0
    assert "<img" not in (out / "report/report.html").read_text()
    job = tmp_path / "job.toml"
    job.write_text(
        (ROOT / "jobs/trajectory_sample.toml").read_text().replace("../", str(ROOT) + "/")
        + '\n[report]\nformats = ["html"]\n'
    )
    from mobeval.jobs import load_job

    with pytest.raises(ConfigError, match=r"report\.plots: .*pip install 'mobeval\[report\]'"):
        load_job(job, out=str(tmp_path / "o"))


def _job(tmp_path: Path, table: str) -> Path:
    job = tmp_path / "job.toml"
    text = (ROOT / "jobs/nextloc_sample.toml").read_text().replace('"../', f'"{ROOT}/')
    job.write_text(text + "\n[report]\n" + table)
    return job


def test_job_report_table(tmp_path):
    pytest.importorskip("matplotlib")
    from mobeval.jobs import load_job, run_job

    table = 'formats = ["html", "markdown"]\nbaseline = "popularity"\nresamples = 100\n'
    table += 'tests = ["paired-t", "randomization"]\ntest = "randomization"\n'
    out = tmp_path / "out"
    job = load_job(_job(tmp_path, table), out=str(out))
    assert job.report.formats == ("html", "markdown") and job.report.compare["resamples"] == 100
    logged = []
    run_job(job, progress=False, log=logged.append)
    assert sorted(p.name for p in (out / "report").iterdir()) == [
        "report.html",
        "report.md",
        "report_files",
    ]
    for city in ("tky", "nyc"):
        stored = pl.read_parquet(out / "compare" / f"city={city}" / "part-0.parquet")
        assert set(stored["baseline"]) == {"popularity"} and stored["resamples"][0] == 100
        assert stored["p_wilcoxon"].is_null().all()
    text = (out / "report/report.md").read_text()
    assert "Fisher's randomization (sign-flip) test" in text
    assert any(line.startswith("report: ") for line in logged)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('formats = "html"', "report.formats: expected an array of strings"),
        ('formats = ["pdf"]', "report.formats: ['pdf']: choose among"),
        ("resamples = -1", "report.resamples: -1 is not an integer"),
        ('correction = "fdr"', "report.correction: 'fdr': choose among"),
        ('baseline = "nope"', "report.baseline: no model 'nope'"),
        ('test = "wilcoxon"\ntests = ["paired-t"]', "report.test: 'wilcoxon' is not among"),
        ("colour = 1", "report: unknown key 'colour'"),
        ('plots = "yes"', "report.plots: expected true or false"),
    ],
)
def test_job_report_table_checked_at_load(tmp_path, table, message):
    from mobeval.jobs import load_job

    with pytest.raises(ConfigError) as error:
        load_job(_job(tmp_path, table + "\n"), out=str(tmp_path / "out"))
    assert message in str(error.value)
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
@pytest.mark.parametrize("family", FAMILIES)
def test_latex_compiles(outs, family, tmp_path):
    pytest.importorskip("matplotlib")
    out = _copy(outs[family], tmp_path)
    assert main(["report", str(out), "--format", "latex"]) == 0
    folder = out / "report"
    for _ in range(2):
        run = subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "report.tex"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stdout[-3000:]
    assert (folder / "report.pdf").stat().st_size > 10_000
    log = (folder / "report.log").read_text()
    assert "Missing character" not in log and "Overfull \\hbox" not in log  # nothing shrunk


# ---- LaTeX a paper takes as it is -----------------------------------------------------------


def _floats(tex: str) -> list[str]:
    """Every table float of a LaTeX report, whole (a table on a sideways page too)."""
    found = re.finditer(r"\\begin\{(sideways|)table\}.*?\\end\{\1table\}", tex, flags=re.S)
    return [match.group(0) for match in found]


def _plain(cell: str) -> str:
    """A LaTeX cell as the plain text it prints: bold, multicolumn, math signs and ties undone."""
    cell = re.sub(r"\\multicolumn\{\d+\}\{(?:@\{\})?\w\}\{(.*)\}$", r"\1", cell.strip())
    signs = ((r"$-$", "-"), (r"$+$", "+"), (r"\%", "%"), (r"\_", "_"), ("--", "-"), ("~", " "))
    for tex, text in signs:
        cell = cell.replace(tex, text)
    return cell.replace(r"$^{\dagger}$", "†").replace(r"$^{\ddagger}$", "‡")


def _latex_table(block: str) -> tuple[list[str], list[list[str]]]:
    """(heading, rows) of one table float as plain text, the sub-columns of each column (a
    value's ``r@{}l`` pair, an improvement's ``r@{}r@{}l``: read from the tabular's spec)
    joined."""
    spec = re.search(r"\\begin\{tabular\}\{@\{\}(.*)@\{\}\}", block).group(1)
    widths = [group.count("@") + 1 for group in re.findall(r"[lrc](?:@\{\}[lrc])*", spec)]
    body = block.split(r"\toprule", 1)[1].split(r"\bottomrule", 1)[0]
    lines = [ln for ln in body.splitlines() if ln.endswith(r"\\")]
    lines = [re.sub(r"\\textbf\{([^}]*)\}", r"\1", ln[:-2]) for ln in lines]
    table = []
    for line in lines:
        cells, row = [c.strip() for c in re.split(r"(?<!\\)&", line)], []
        for width in widths:
            group = []
            while width > 0:  # a multicolumn spans its sub-columns
                cell = cells.pop(0)
                found = re.match(r"\\multicolumn\{(\d+)\}", cell)
                width -= int(found.group(1)) if found else 1
                group.append(cell)
            row.append(_plain("".join(group)))
        assert not cells, line
        table.append(row)
    return table[0], table[1:]


def _five_models(tmp_path: Path, name: str, metrics: str) -> Path:
    """OUT ``name``: one city, five models (the two sample predictions under five names), the
    ``metrics`` (a TOML array)."""
    out = tmp_path / name
    models = {"markov": "markov", "popularity": "popularity", "markov_b": "markov"}
    models |= {"popularity_b": "popularity", "markov_c": "markov"}
    lines = [f'[[tasks]]\ntype = "nextloc"\ncity = "tky"\nk = [1, 5, 10]\nmetrics = {metrics}']
    lines.append(f'truth = "{ROOT}/data_samples/nextloc/tky/truth.parquet"\n[tasks.models]')
    lines += [f'{m} = "{ROOT}/data_samples/nextloc/tky/{f}.parquet"' for m, f in models.items()]
    job = tmp_path / f"{out.name}.toml"
    job.write_text("\n".join(lines) + "\n")
    from mobeval.jobs import load_job, run_job

    run_job(load_job(job, out=str(out)), progress=False, log=lambda _: None)
    return out


def _compiles(tex: str, folder: Path) -> str:
    """pdflatex's log of ``tex`` compiled twice in ``folder`` (asserting it succeeds)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.tex").write_text(tex)
    for _ in range(2):
        run = subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "report.tex"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stdout[-3000:]
    return (folder / "report.log").read_text()


def test_latex_tables_are_paper_ready(outs, tmp_path):
    from mobeval.report import Report

    report = Report(outs["nextloc"], plots=False, baseline="markov")
    tex = report.to_latex()
    assert r"\hline" not in tex and r"\resizebox" not in tex and "lmodern" not in tex
    floats = _floats(tex)
    assert len(floats) == 4  # two cities, two cutoff grids
    labels = [re.search(r"\\label\{([^}]*)\}", f).group(1) for f in floats]
    assert labels == ["tab:tky-1", "tab:tky-2", "tab:nyc-1", "tab:nyc-2"]
    for block, label in zip(floats, labels, strict=True):
        assert block.index(r"\toprule") < block.index(r"\midrule") < block.index(r"\bottomrule")
        notes = block.split(r"\begin{tablenotes}", 1)[1]  # the legend inside the float
        assert notes.index(r"\end{threeparttable}")
        if label.endswith("-1"):  # the legend once per city, under its first table
            assert "best per metric in bold" in notes
        else:  # the others point to it: a small table is not made a page of legend
            assert "best per metric" not in notes
            assert rf"Legend and notes under Table~\ref{{{label[:-2]}-1}}" in notes
        assert r"\caption{city=" in block
        assert not re.search(r"(?<![$\w])-\d", block)  # every minus is math's minus
    summary = _summary(outs["nextloc"]).filter(pl.col("city") == "tky")
    value = {(r["model"], r["metric"]): r["value"] for r in summary.iter_rows(named=True)}
    head, rows = _latex_table(floats[0])
    assert head == ["metric", "markov", "popularity", "popularity vs markov"]
    assert [r[0] for r in rows][:3] == ["acc@1", "acc@5", "acc@10"]
    assert any(r[3].startswith("-") for r in rows)  # a negative difference is in the table
    for metric, *cells in rows:
        a, b = value[("markov", metric)], value[("popularity", metric)]
        for model, text in zip(("markov", "popularity"), cells, strict=False):
            assert float(text.rstrip("†‡")) == pytest.approx(value[(model, metric)], abs=6e-5)
        improvement = f"{(b - a) * 100:+.2f} pp ({(b - a) / a * 100:+.1f}%), $d_z$ "  # math
        assert cells[2].startswith(improvement)
    # each value column is a pair aligned on the point: "0." right, "1693" left; the
    # improvement column three sub-columns, so that its differences line up on their point
    # and so do its relative changes, whatever the widths of the others ("+20.4%", "+0.3%")
    assert r"\begin{tabular}{@{}lr@{}lr@{}lr@{}r@{}l@{}}" in floats[0]
    body = floats[0].split(r"\midrule", 1)[1].split(r"\bottomrule", 1)[0]
    for line in body.strip().splitlines():
        _, _, _, _, _, difference, relative, effect = line.removesuffix(r" \\").split(" & ")
        assert re.fullmatch(r"\$[-+]\$\d+\.\d\d pp", difference), line
        assert re.fullmatch(r"~\(\$[-+]\$\d+\.\d\\%\)", relative), line
        assert re.fullmatch(r", \$d_z\$ \$[-+]\$\d\.\d\d", effect), line
    assert len({len(r[3].split(" (")[1]) for r in rows}) > 1  # relative changes of two widths
    # caption and label settable
    tex = report.to_latex(caption="Next-location results", label="tab:nl")
    assert r"\caption{Next-location results (city=tky: metrics at cutoffs @1, @5, @10). C" in tex
    assert r"\label{tab:nl:nyc-2}" in tex


def test_report_caption_and_transpose_reach_the_latex(outs, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(outs["nextloc"], out)
    argv = ["report", str(out), "--format", "latex", "--no-plots", "--baseline", "markov"]
    assert main([*argv, "--caption", "Next-location results", "--transpose"]) == 0
    floats = _floats((out / "report" / "report.tex").read_text())
    assert floats and all(r"\caption{Next-location results (city=" in f for f in floats)
    head, rows = _latex_table(floats[0])
    assert head[0] != "metric" and [r[0] for r in rows][:2] == ["markov", "popularity"]
    # models as rows: each column a metric's values, then its improvement in three sub-columns
    # (a value's decimals across the last two, with no space after its point)
    spec = re.search(r"\\begin\{tabular\}\{@\{\}l(.*)@\{\}\}", floats[0]).group(1)
    assert spec == "r@{}r@{}l" * (len(head) - 1)
    assert all(re.fullmatch(r"\d\.\d{4}[†‡°]?", cell) for row in rows[:2] for cell in row[1:])
    improvement = r"[-+]\d+\.\d\d pp \([-+]\d+\.\d%\), \$d_z\$ [-+]\d\.\d\d"
    assert all(re.fullmatch(improvement, cell) for cell in rows[2][1:]), rows[2]


def test_latex_wide_tables_transposed_or_split(tmp_path):
    from mobeval.report import Report

    models = ["markov", "popularity", "markov_b", "popularity_b", "markov_c"]
    others = [f"{m} vs markov" for m in models[1:]]
    # five models, two metrics: too wide with the models as columns, fits with them as rows
    few = Report(_five_models(tmp_path, "few", '["acc@k"]'), plots=False, compute_compare=False)
    tex = few.to_latex()
    floats = _floats(tex)
    assert len(floats) == 1 and "part 1" not in tex
    head, rows = _latex_table(floats[0])
    assert head == ["model", "acc@1", "acc@5", "acc@10"]
    assert [r[0] for r in rows] == models + others
    # five models, 21 metrics: fits neither way, split into parts; every value once
    many = Report(
        _five_models(tmp_path, "many", '["acc@k", "ndcg@k", "mrr", "map@k", "recall@k"]'),
        plots=False,
    )
    metrics = many.cities[0].metrics
    for transpose in (None, True, False):
        tex = many.to_latex(transpose=transpose)
        floats = _floats(tex)
        parts = [f for f in floats if "cutoffs" in f]
        assert len(parts) > 1 and all(
            f", part {i} of {len(parts)}" in f for i, f in enumerate(parts, 1)
        )
        seen = []
        for block in floats:
            head, rows = _latex_table(block)
            if head[0] == "metric":
                seen += [(m, r[0]) for r in rows for m in head[1:] if m in models]
            else:
                seen += [(r[0], m) for r in rows for m in head[1:] if r[0] in models]
        assert sorted(seen) == sorted((m, x) for m in models for x in metrics), transpose
        if transpose is not None:
            stub = "model" if transpose else "metric"
            assert all(_latex_table(f)[0][0] == stub for f in floats)
        # the legend once, under the last part; the other parts point to it
        assert sum("best per metric in bold" in f for f in parts) == 1
        assert "best per metric in bold" in parts[-1]
        last = re.search(r"\\label\{([^}]*)\}", parts[-1]).group(1)
        assert all(rf"under part {len(parts)} (Table~\ref{{{last}}})" in f for f in parts[:-1])
        if shutil.which("pdflatex"):
            log = _compiles(tex, tmp_path / f"tex-{transpose}")
            assert "Overfull \\hbox" not in log  # nothing wider than the text
            assert "undefined" not in log  # every part's \ref to the legend's part resolved
    # 21 metrics x 5 models in fewer parts on pages turned sideways, each fitting the page
    # turned (the compile above), with the legend once
    assert r"\begin{sidewaystable}" in many.to_latex()
    if shutil.which("pdflatex"):
        assert "Overfull \\hbox" not in _compiles(few.to_latex(), tmp_path / "tex-few")


def test_plots_label_both_axes_keep_legends_outside_and_pair_every_model(
    outs, tmp_path, monkeypatch
):
    pytest.importorskip("matplotlib")
    from mobeval.report import Report, plots

    drawn = {}
    draw = plots._figure

    def inspected(plt, figure, name, caption):
        figure.canvas.draw()
        renderer = figure.canvas.get_renderer()
        panels = [ax for ax in figure.axes if ax.axison]
        assert all(ax.get_xlabel() and ax.get_ylabel() for ax in panels), name
        for legend in (ax.get_legend() for ax in figure.axes):
            if legend is not None:  # outside every panel's data area
                box = legend.get_window_extent(renderer)
                assert not any(box.overlaps(ax.get_window_extent(renderer)) for ax in panels), name
        drawn[name] = len(panels)
        return draw(plt, figure, name, caption)

    monkeypatch.setattr(plots, "_figure", inspected)
    five = Report(_five_models(tmp_path, "five", '["acc@k", "mrr"]'), compute_compare=False)
    five.figures()
    assert drawn["tky-scatter.png"] == 4  # one panel per model against the baseline
    assert "tky-curves.png" in drawn and "tky-cdf.png" in drawn
    Report(outs["trajectory"], compute_compare=False).figures()
    assert {"test-cdf.png", "test-per-day.png", "test-scatter.png"} <= set(drawn)


# ---- HTML: formulas as MathML, cells that never wrap ----------------------------------------


def test_formulas_as_mathml():
    import xml.etree.ElementTree as ET

    from mobeval.report.mathml import tex_to_mathml
    from mobeval.report.methods import FAMILIES

    ns = "{http://www.w3.org/1998/Math/MathML}"
    for name, family in FAMILIES.items():  # every formula of the methods section
        math = ET.fromstring(tex_to_mathml(family.tex, family.text))
        assert math.get("alttext") == family.text and math.get("display") == "block", name
    math = ET.fromstring(tex_to_mathml(r"\frac{a + 1}{\sqrt{b_i}} \le \sum_{n=1}^{N} \hat r^2"))
    frac = math.find(f".//{ns}mfrac")
    assert [c.tag for c in frac] == [f"{ns}mrow", f"{ns}mrow"]
    assert "".join(frac[0].itertext()) == "a+1"
    assert frac[1].find(f".//{ns}msqrt/{ns}mrow/{ns}msub") is not None
    assert math.find(f"{ns}mrow/{ns}mo").text == "≤"
    limits = math.find(f".//{ns}munderover")  # the sum's limits under and over it
    assert [("".join(c.itertext())) for c in limits] == ["∑", "n=1", "N"]
    assert math.find(f".//{ns}msup/{ns}mover") is not None  # \hat r, squared
    assert ET.fromstring(tex_to_mathml(r"\text{GEO-BLEU}")).find(f".//{ns}mtext").text == "GEO-BLEU"
    math = ET.fromstring(tex_to_mathml(r"\exp\Big(x - 1\Big), (y)"))
    operators = [(o.text, o.get("stretchy"), o.get("minsize")) for o in math.iter(f"{ns}mo")]
    assert operators[:3] == [("(", "true", "1.623em"), ("−", None, None), (")", "true", "1.623em")]
    assert operators[4] == ("(", "false", None)  # an unsized fence keeps the text's height
    with pytest.raises(ValueError, match=r"\\oint is not known"):
        tex_to_mathml(r"\oint f")
    with pytest.raises(ValueError, match="ends too early"):
        tex_to_mathml(r"\frac{a}{b")


_MEASURE = """<script>
window.addEventListener('load', () => {
  const line = c => parseFloat(getComputedStyle(c).lineHeight)
    || 1.2 * parseFloat(getComputedStyle(c).fontSize);
  const wrapped = [...document.querySelectorAll('td, th')].filter(
    c => c.getClientRects().length && c.offsetHeight > 1.9 * line(c));
  const maths = [...document.querySelectorAll('math')];
  // the numbers of a value column end at one x (their digits tabular: on the point too),
  // whether or not a marker follows; every row of a table equally high
  const right = c => {  // where a value's number (its first one: a mean before its sd) ends
    const walk = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const m = n.data.match(/\\d+\\.\\d+/);
      if (m) { const r = document.createRange(); r.setStart(n, m.index);
        r.setEnd(n, m.index + m[0].length); return r.getBoundingClientRect().right; }
    }
  };
  const spread = xs => Math.max(...xs) - Math.min(...xs);
  const misaligned = [], uneven = [];
  document.querySelectorAll('div.scroll table').forEach(t => {
    const columns = {};
    t.querySelectorAll('td.num').forEach(c => {
      const text = c.textContent.trim();  // a value, not an improvement (pp, %)
      if (/^\\d+\\.\\d+/.test(text) && !/[(%]| pp/.test(text))
        (columns[c.cellIndex] ??= []).push(right(c));
    });
    Object.entries(columns).forEach(([i, xs]) => {
      if (spread(xs) > 0.5) misaligned.push(t.caption.textContent + ' column ' + i); });
    const heights = [...t.rows].slice(1).map(r => r.getBoundingClientRect().height);
    if (spread(heights) > 0.5) uneven.push(t.caption.textContent);
  });
  document.body.setAttribute('data-check', JSON.stringify({
    wrapped: wrapped.map(c => c.textContent),
    page_overflow: document.documentElement.scrollWidth > window.innerWidth,
    tables_scrolling: [...document.querySelectorAll('div.scroll')].filter(
      d => d.scrollWidth > d.clientWidth).map(d => d.querySelector('caption').textContent),
    misaligned: misaligned,
    uneven_rows: uneven,
    math: maths.length,
    math_drawn: maths.filter(m => m.getBoundingClientRect().height > 0).length,
  }));
});
</script>"""


@pytest.mark.skipif(
    not (shutil.which("chromium") or shutil.which("chromium-browser")),
    reason="chromium is not installed",
)
def test_html_in_a_headless_browser(tmp_path):
    pytest.importorskip("matplotlib")
    from mobeval.report import Report

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    page = Report(_five_models(tmp_path, "five", '["acc@k", "ndcg@k", "mrr"]')).to_html()
    assert "<script" not in page and "http" not in page.replace(
        'xmlns="http://www.w3.org/1998/Math/MathML"', ""
    )  # nothing fetched
    path = tmp_path / "page.html"
    path.write_text(page.replace("</body>", _MEASURE + "</body>"))
    for width in (1280, 800):
        argv = [browser, "--headless", "--no-sandbox", "--disable-gpu"]
        argv += ["--disable-background-networking", f"--window-size={width},2000"]
        run = subprocess.run(
            [*argv, "--dump-dom", path.as_uri()], capture_output=True, text=True, timeout=120
        )
        found = re.search(r'data-check="([^"]*)"', run.stdout)
        assert found, run.stderr[-2000:]
        check = json.loads(found.group(1).replace("&quot;", '"'))
        assert check["wrapped"] == [] and not check["page_overflow"], (width, check)
        assert check["misaligned"] == [] and check["uneven_rows"] == [], (width, check)
        if width == 1280:  # a normal window: every table fits, none scrolls sideways
            assert check["tables_scrolling"] == [], check
            assert "part 1 of" in page  # wider than the page: in parts
        assert check["math"] == page.count("<math") > 0 and check["math_drawn"] == check["math"]


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_latex_small_table_after_sideways_parts_shares_its_page(tmp_path):
    """A small table waiting behind tables turned sideways (21 metrics x 5 models) goes to the
    top of the next page, above the leaderboards that follow, not alone on a page: no page holds
    one table float only (its \\label's page in the .aux), whichever tables come after it."""
    from mobeval.report import Report

    out = _five_models(tmp_path, "many", '["acc@k", "ndcg@k", "mrr", "map@k", "recall@k"]')
    report = Report(out, plots=False, leaderboard=True)
    tex = report.to_latex()
    assert r"\begin{sidewaystable}" in tex and "metrics without a cutoff" in tex
    log = _compiles(tex, tmp_path / "tex")
    assert "Overfull \\hbox" not in log and "undefined" not in log
    aux = (tmp_path / "tex" / "report.aux").read_text()
    pages = dict(re.findall(r"\\newlabel\{(tab:[^}]*)\}\{\{\d+\}\{(\d+)\}", aux))
    sideways = set(re.findall(r"\\begin\{sidewaystable\}.*?\\label\{([^}]*)\}", tex, re.S))
    floats = [name for name in pages if re.fullmatch(r"tab:tky-\d+(-\d+)?", name)]
    assert len(floats) > len(sideways) > 0
    for name in floats:
        if name not in sideways:  # a small table: never alone on its page
            others = [other for other, page in pages.items() if page == pages[name]]
            assert len(others) > 1, (name, pages)


def test_a_caption_names_the_population_metrics(outs):
    """The logits sample's F1 over all rows has no per-row value: the caption of its table says
    that cell is one value over all the rows (the metrics without a per-unit column, counted
    here from the summary and the per-unit files), the others the city value over them."""
    import numpy as np

    from mobeval.report import Report

    out = outs["logits"]
    rows = f"{np.load(ROOT / 'data_samples/logits/targets.npy').shape[0]:,} rows"
    per_unit = pl.read_parquet_schema(next((out / "per_unit").rglob("*.parquet")))
    summary = _summary(out)
    population = [m for m in dict.fromkeys(summary["metric"]) if m not in per_unit]
    assert population  # the sample has some
    markdown = Report(out, plots=False, compute_compare=False).to_markdown()
    caption = next(ln for ln in markdown.splitlines() if ln.startswith("**Metrics without"))
    expected = f"Cells: city value over {rows}; {', '.join(population)}: one value over all {rows};"
    assert expected in caption, caption
