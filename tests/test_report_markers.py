"""A report's significance marker is a tested claim or nothing (issue 22): markers only from a
comparison of exactly the results shown, models scored differently never in one table or under
one convention, "not tested" unlike "not significant", the note naming the test, alpha, the
correction and its family of p-values; the report's choices on every face; the methods section
stating a run's shared parameters once.

Every expected marker is read here from the comparison's Parquet file (or the stored p-values
this test wrote), never from the report's code."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from mobeval.cli import main
from mobeval.compare import compare
from mobeval.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data_samples/nextloc/tky"
MARKS = ("†", "‡", "°")


def _score(out: Path, model: str, convention: str = "libcity") -> None:
    argv = ["nextloc", "--truth", str(DATA / "truth.parquet"), "--pred"]
    argv += [str(DATA / f"{model}.parquet"), "--model", model, "--city", "tky", "--k", "1,5"]
    argv += ["--metrics", "acc@k,precision@k,mrr", "--convention", convention, "--out", str(out)]
    assert main(argv) == 0


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> Path:
    """tky: markov and popularity scored under LibCity's conventions."""
    out = tmp_path_factory.mktemp("markers") / "out"
    _score(out, "markov")
    _score(out, "popularity")
    return out


@pytest.fixture
def out(scored, tmp_path) -> Path:
    target = tmp_path / "out"
    shutil.copytree(scored, target)
    return target


def _report(out: Path, *options: str) -> str:
    argv = ["report", str(out), "--format", "markdown", "--no-plots", *options]
    assert main(argv) == 0
    return (out / "report/report.md").read_text()


def _rows(text: str) -> dict[str, list[str]]:
    """metric -> the cells of its row, from every table of the report."""
    rows = {}
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("| metric |"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows.setdefault(cells[0], cells[1:])
    return rows


def _stored(out: Path) -> pl.DataFrame:
    return pl.read_parquet(out / "compare/city=tky/part-0.parquet")


def _expected_mark(p: float | None, alpha: float = 0.05) -> str:
    if p is None:
        return "°"
    return "‡" if p < alpha / 5 else "†" if p < alpha else ""


def test_rescored_under_another_convention_no_marker_no_single_convention(out, capsys):
    assert main(["compare", str(out), "--baseline", "markov"]) == 0
    _score(out, "popularity", "trec_eval")
    assert main(["compare", str(out)]) == 2  # compare refuses the city, as before
    capsys.readouterr()
    text = _report(out, "--baseline", "markov")
    assert not any(mark in text for mark in MARKS)
    tables = [line for line in text.splitlines() if line.startswith("| metric |")]
    assert tables and all(line.count("|") == 3 for line in tables)  # one model per table
    assert "scored with convention = libcity" in text
    assert "scored with convention = trec_eval" in text
    methods = text.split("## Methods", 1)[1].split("### Comparison")[0]
    libcity, trec = methods.split("### nextloc: city=tky (popularity)")
    assert "convention = libcity" in libcity and "trec_eval" not in libcity
    assert "convention = trec_eval" in trec and "libcity" not in trec
    assert "scored under different options (convention" in capsys.readouterr().err


def test_stored_comparison_of_replaced_results_is_never_reused(out):
    assert main(["compare", str(out), "--baseline", "markov", "--tests", "paired-t"]) == 0
    # every stored p-value says "significant": a report reading it marks every tested value
    forged = _stored(out).with_columns(pl.lit(0.0).alias("p_t_corrected"))
    forged.write_parquet(out / "compare/city=tky/part-0.parquet")
    rows = _rows(_report(out))
    assert all(rows[m][1].endswith("‡") for m in forged["metric"])
    _score(out, "popularity")  # scored again, the same way: the stored p-values are stale
    text = _report(out, "--no-compare")
    rows = _rows(text)
    assert all(rows[m][1].endswith("°") for m in forged["metric"])
    assert "OUT/compare/city=tky was not used: popularity was scored again since" in text
    assert "no significance markers: run `mobeval compare" in text
    text = _report(out)
    assert "computed for this report" in text and "popularity was scored again since" in text
    fresh = compare(out, baseline="markov", tests="paired-t", log=None)  # not written
    rows = _rows(text)
    for metric, p in fresh.select("metric", "p_t_corrected").rows():
        mark = _expected_mark(p)
        assert rows[metric][1].endswith(mark) if mark else not rows[metric][1].endswith(MARKS)
    assert any(not rows[m][1].endswith("‡") for m in fresh["metric"])


def test_compare_of_some_metrics_untested_look_untested(out):
    argv = ["compare", str(out), "--baseline", "markov", "--metrics", "acc@1,acc@5,mrr"]
    assert main(argv) == 0
    stored = _stored(out)
    text = _report(out)
    rows = _rows(text)
    tested = dict(stored.select("metric", "p_t_corrected").rows())
    for metric, cells in rows.items():
        mark = _expected_mark(tested.get(metric))
        assert cells[1].endswith(mark) if mark else not cells[1].endswith(MARKS), metric
        assert not cells[0].endswith(MARKS)  # the baseline's column
    assert rows["precision@1"][1].endswith("°") and not rows["acc@1"][1].endswith("°")
    assert "tested: acc@1, acc@5, mrr; ° not tested: precision@1, precision@5" in text
    assert "source: OUT/compare/city=tky (mobeval compare)" in text
    # the family the stored Holm correction ran over: 3 tests x 3 metrics x 1 pair
    count = sum(stored[c].fill_nan(None).is_not_null().sum() for c in ("p_t", "p_wilcoxon"))
    count += stored["p_randomization"].fill_nan(None).is_not_null().sum()
    assert (
        f"holm-corrected over a family of {count} p-values: the paired t-test, Wilcoxon "
        "signed-rank test, Fisher's randomization (sign-flip) test p-values of 3 metric(s) x "
        "1 model pair(s)"
    ) in text


def test_family_of_one_test_said_so_and_alpha_moves_the_marks(out):
    argv = ["compare", str(out), "--baseline", "markov", "--tests", "paired-t"]
    assert main(argv + ["--metrics", "acc@1,acc@5,mrr"]) == 0
    text = _report(out, "--alpha", "0.5")
    assert "holm-corrected over a family of 3 p-values: the paired t-test p-values of 3" in text
    assert "† p < 0.5, ‡ p < 0.1 vs markov" in text
    rows = _rows(text)
    for metric, p in _stored(out).select("metric", "p_t_corrected").rows():
        mark = _expected_mark(p, alpha=0.5)
        assert rows[metric][1].endswith(mark) if mark else not rows[metric][1].endswith(MARKS)


def test_a_test_the_stored_comparison_did_not_run_is_computed(out):
    assert main(["compare", str(out), "--baseline", "markov", "--tests", "paired-t"]) == 0
    text = _report(out, "--test", "wilcoxon")
    assert "OUT/compare/city=tky was not used: it did not run wilcoxon" in text
    assert "Wilcoxon signed-rank test, two-sided" in text


def test_choices_on_the_command_line(out):
    text = _report(
        out,
        *("--metrics", "mrr,acc@1", "--models", "popularity,markov", "--baseline", "popularity"),
        *("--title", "Table 3 source", "--caption", "Next-location accuracy."),
    )
    assert text.startswith("# Table 3 source\n")
    assert "| metric | popularity | markov | markov vs popularity |" in text
    assert [m for m in _rows(text)] == ["acc@1", "mrr"]  # grouped by cutoff grid
    assert "tested: mrr, acc@1;" in text  # in the order asked


def test_choices_in_python_reach_the_tables(out):
    from mobeval.report import Report

    report = Report(out, metrics="acc@1", caption="Results.", transpose=True, plots=False)
    (city,) = report.cities
    (table,) = city.tables
    assert table.metrics == ["acc@1"] and table.transpose is True
    assert table.caption == "Results. city=tky: Metrics at cutoffs @1." and table.label
    assert Report(out, plots=False).cities[0].tables[0].transpose is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--metrics", "acc@1,nope"], "--metrics: no metric 'nope'"),
        (["--models", "markov,nope"], "--models: no model 'nope'"),
        (["--baseline", "nope"], "--baseline: no model 'nope'"),
        (["--test", "anova"], "--test: 'anova': choose among paired-t"),
        (["--alpha", "2"], "--alpha: 2.0: the significance level must lie between 0 and 1"),
        (["--title", " "], "--title: ' ': expected some text"),
        (["--models", "markov", "--baseline", "popularity"], "'popularity' is not among --models"),
    ],
)
def test_bad_choices_named_exit_2_nothing_written(out, capsys, options, message):
    assert main(["report", str(out), "--format", "markdown", "--no-plots", *options]) == 2
    assert message in capsys.readouterr().err
    assert not (out / "report").exists()


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('models = ["nope"]', "report.models: no model 'nope' in the job's tasks"),
        ("alpha = 1.5", "report.alpha: 1.5: the significance level must lie between 0 and 1"),
        ('alpha = "0.05"', "report.alpha: expected a number"),
        ("transpose = 1", "report.transpose: expected true or false"),
        ('metrics = "acc@1"', "report.metrics: expected an array of strings"),
        ('test = "anova"', "report.test: 'anova': choose among"),
    ],
)
def test_bad_choices_in_a_job_named_at_load(tmp_path, table, message):
    from mobeval.jobs import load_job

    job = tmp_path / "job.toml"
    text = (ROOT / "jobs/nextloc_sample.toml").read_text().replace('"../', f'"{ROOT}/')
    job.write_text(text + "\n[report]\n" + table + "\n")
    with pytest.raises(ConfigError) as error:
        load_job(job, out=str(tmp_path / "out"))
    assert message in str(error.value)


def test_methods_state_shared_parameters_once(out):
    methods = _report(out).split("## Methods", 1)[1].split("### Comparison")[0]
    assert methods.count("convention = libcity") == 1
    assert methods.count("ties = id_asc") == 1
    for family in methods.split("\n**")[1:]:  # each family: definition, formula, its own
        assert "$$" in family and "convention" not in family
