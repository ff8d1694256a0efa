"""Results that show themselves (issue 35): ``dir(mobeval)`` lists the API without importing it,
an :class:`Evaluation` renders as an HTML table and hands its summary to Polars and pandas,
``evaluate_*(out=...)`` writes an OUT that ``compare``, ``report`` and ``run --resume`` take as
the command line's, and a recs task's file options take a frame where its two inputs do."""

from __future__ import annotations

import json
import subprocess
import sys
from html.parser import HTMLParser

import polars as pl
import pytest

from mobeval.api import Evaluation, evaluate_nextloc, evaluate_recs
from mobeval.cli import main
from mobeval.errors import OptionError
from mobeval.jobs import load_job, run_job
from tests.conftest import REPO_ROOT

SAMPLES = REPO_ROOT / "data_samples"
TKY = SAMPLES / "nextloc" / "tky"
RATINGS, MF = SAMPLES / "recs" / "ratings.parquet", SAMPLES / "recs" / "mf.parquet"


def test_dir_lists_the_api_and_imports_none_of_it():
    code = (
        "import json, sys, mobeval, mobeval.compare, mobeval.report\n"
        "names = {p: dir(m) for p, m in [('mobeval', mobeval), ('compare', mobeval.compare),"
        " ('report', mobeval.report)]}\n"
        "alls = {'mobeval': mobeval.__all__, 'compare': mobeval.compare.__all__,"
        " 'report': mobeval.report.__all__}\n"
        "print(json.dumps([names, alls, 'mobeval.api' in sys.modules, 'polars' in sys.modules]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    names, alls, api_loaded, polars_loaded = json.loads(done.stdout)
    for package, public in alls.items():
        assert set(public) <= set(names[package]), package
    assert {"evaluate_logits", "Evaluation", "run_job"} <= set(names["mobeval"])
    assert not api_loaded and not polars_loaded


class _Cells(HTMLParser):
    """The text of every table cell (th, td), row by row, and the caption."""

    def __init__(self) -> None:
        super().__init__()
        self.rows, self.caption, self._in = [], "", None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        if tag in ("th", "td", "caption"):
            self._in = tag
            if tag != "caption":
                self.rows[-1].append("")

    def handle_endtag(self, tag):
        if tag in ("th", "td", "caption"):
            self._in = None

    def handle_data(self, data):
        if self._in == "caption":
            self.caption += data
        elif self._in:
            self.rows[-1][-1] += data


@pytest.fixture(scope="module")
def evaluation() -> Evaluation:
    return evaluate_nextloc(TKY / "truth.parquet", TKY / "markov.parquet", k=[1, 5])


def test_html_is_one_row_per_metric_with_the_summary_values(evaluation):
    cells = _Cells()
    cells.feed(evaluation._repr_html_())
    assert cells.rows[0] == ["metric", "value", "n", "std"]
    assert "city=tky" in cells.caption and "model=markov" in cells.caption
    summary = evaluation.summary
    assert [row[0] for row in cells.rows[1:]] == summary["metric"].to_list()
    for row, (value, n, std) in zip(
        cells.rows[1:], summary.select("value", "n", "std").rows(), strict=True
    ):
        assert int(row[2].replace(",", "")) == n
        if std is None and value == n:  # a count: its value as an integer
            assert int(row[1].replace(",", "")) == value
        else:
            assert abs(float(row[1]) - value) <= 5e-7
            assert row[3] == "" if std is None else abs(float(row[3]) - std) <= 5e-7


def test_html_escapes_what_it_shows():
    summary = pl.DataFrame(
        {"metric": ["<b>x&y</b>"], "value": [0.5], "n": [2], "std": [0.5]},
        schema={"metric": pl.String, "value": pl.Float64, "n": pl.Int64, "std": pl.Float64},
    )
    text = Evaluation(city="c", model="m", summary=summary)._repr_html_()
    assert "<b>" not in text and "&lt;b&gt;x&amp;y&lt;/b&gt;" in text


def test_to_polars_is_the_summary_with_the_names_in_front(evaluation):
    frame = evaluation.to_polars()
    assert frame.columns == ["city", "model", "run", "metric", "value", "n", "std"]
    assert frame.drop("city", "model", "run").equals(evaluation.summary)
    assert set(frame["city"]) == {"tky"} and set(frame["model"]) == {"markov"}
    assert frame["run"].null_count() == frame.height
    both = pl.concat([evaluation.to_polars(), evaluation.to_polars()])
    assert both.height == 2 * evaluation.summary.height


def test_to_pandas_gives_the_same_table(evaluation):
    pytest.importorskip("pandas")
    frame = evaluation.to_pandas()
    assert list(frame.columns) == evaluation.to_polars().columns
    assert frame["value"].tolist() == evaluation.summary["value"].to_list()


def test_to_pandas_without_pandas_says_what_to_install(evaluation, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    with pytest.raises(ImportError, match=r"pip install pandas"):
        evaluation.to_pandas()


# --------------------------------------------------------------------------- a complete OUT


def _entry(out, name: str) -> dict:
    return json.loads((out / "manifest.json").read_text())["results"][name]


def test_an_api_out_goes_through_compare_report_and_resume(tmp_path, capsys):
    out = tmp_path / "out"
    for model in ("markov", "popularity"):
        evaluate_nextloc(
            TKY / "truth.parquet", TKY / f"{model}.parquet", out=out, k=[1, 5], convention="libcity"
        )
    entry = _entry(out, "city=tky/model=markov")
    assert entry["status"] == "complete" and entry["task"] == "nextloc"
    assert entry["config"] == {
        "type": "nextloc",
        "city": "tky",
        "model": "markov",
        "k": [1, 5],
        "convention": "libcity",
    }
    assert main(["compare", str(out)]) == 0
    assert (out / "compare").is_dir()
    assert main(["report", str(out), "--no-plots"]) == 0
    assert (out / "report" / "report.html").is_file()
    job = tmp_path / "job.toml"
    job.write_text(
        f'out = "{out}"\n[[tasks]]\ntype = "nextloc"\ncity = "tky"\n'
        f'truth = "{TKY / "truth.parquet"}"\nk = [1, 5]\nconvention = "libcity"\n'
        f'[tasks.models]\nmarkov = "{TKY / "markov.parquet"}"\n'
        f'popularity = "{TKY / "popularity.parquet"}"\n'
    )
    said = []
    again = run_job(load_job(job), resume=True, progress=False, log=said.append)
    assert [e.resumed for e in again] == [True, True], said
    capsys.readouterr()


def test_the_command_line_records_as_the_api_does(tmp_path):
    cli_out, api_out = tmp_path / "cli", tmp_path / "api"
    truth, pred = TKY / "truth.parquet", TKY / "markov.parquet"
    argv = ["nextloc", "--truth", str(truth), "--pred", str(pred), "--k", "1,5", "--quiet"]
    assert main([*argv, "--out", str(cli_out)]) == 0
    evaluate_nextloc(truth, pred, out=api_out, k=[1, 5])
    cli_entry, api_entry = (_entry(o, "city=tky/model=markov") for o in (cli_out, api_out))
    names = {"type": "nextloc", "city": "tky", "model": "markov"}
    for entry in (cli_entry, api_entry):  # the CLI gives every option, the API those typed
        assert {key: entry["config"][key] for key in names} == names
        assert entry["config"]["k"] == [1, 5]
    assert cli_entry["inputs"] == api_entry["inputs"]


# --------------------------------------------------------------------------- file options


def test_a_file_option_takes_a_frame_where_it_takes_a_path(tmp_path):
    ratings = pl.read_parquet(RATINGS)
    catalogue = ratings.select("item_id").unique(maintain_order=True)
    catalogue.write_parquet(tmp_path / "catalogue.parquet")
    metrics = ["ndcg@10", "coverage@10", "avg_popularity@10", "delta_gap@10"]
    groups = {"user_groups": ["popular=0.2", "rest=0.8"]}
    by_path = evaluate_recs(
        RATINGS,
        MF,
        metrics=metrics,
        catalogue=tmp_path / "catalogue.parquet",
        train=RATINGS,
        original_ratings=RATINGS,
        **groups,
    )
    by_frame = evaluate_recs(
        RATINGS,
        MF,
        metrics=metrics,
        catalogue=catalogue,
        train=ratings.to_arrow(),
        original_ratings=ratings.lazy(),
        **groups,
        out=tmp_path / "out",
    )
    assert by_frame.summary.equals(by_path.summary)
    entry = _entry(tmp_path / "out", "city=recs/model=mf")
    assert entry["config"]["catalogue"] == "<DataFrame>"
    assert entry["inputs"]["catalogue"] == [{"path": "<DataFrame>", "rows": catalogue.height}]
    for value in (5, True, ["a.parquet"], ""):  # still refused: neither a path nor a frame
        with pytest.raises(OptionError, match="catalogue"):
            evaluate_recs(RATINGS, MF, metrics=["coverage@10"], catalogue=value)
