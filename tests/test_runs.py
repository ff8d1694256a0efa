"""Several runs of a model (seeds, folds): stored as ``city=<c>/model=<m>/run=<r>`` by every face
(job file, Python API, command line), resumed run by run, read back by ``scan_outputs``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from mobeval.api import evaluate_nextloc
from mobeval.cli import main
from mobeval.errors import ConfigError
from mobeval.io.outputs import scan_outputs
from mobeval.jobs import load_job, run_job

MODELS = ("gru", "lstm", "markov")
SEEDS = ("seed1", "seed2", "seed3")
SAMPLES = 40


def predictions(seed: int) -> pl.DataFrame:
    """Five scored candidates per sample, shifted by ``seed``'s draw around the truth's location."""
    rng = np.random.default_rng(seed)
    sample, shift = np.repeat(np.arange(SAMPLES), 5), rng.integers(-2, 2, SAMPLES)
    return pl.DataFrame(
        {
            "sample_id": sample,
            "location": sample % 7 + np.tile(np.arange(5), SAMPLES) + np.repeat(shift, 5),
            "score": rng.random(SAMPLES * 5),
        }
    )


def write_runs(folder: Path) -> tuple[Path, dict[str, dict[str, Path]]]:
    """The truth and every model's runs as Parquet files under ``folder``."""
    truth = folder / "truth.parquet"
    pl.DataFrame(
        {"sample_id": np.arange(SAMPLES), "location": np.arange(SAMPLES) % 7}
    ).write_parquet(truth)
    files = {}
    for m, model in enumerate(MODELS):
        for s, seed in enumerate(SEEDS):
            path = folder / f"{model}_{seed}.parquet"
            predictions(10 * m + s).write_parquet(path)
            files.setdefault(model, {})[seed] = path
    return truth, files


def write_job(folder: Path) -> Path:
    truth, files = write_runs(folder)
    lines = ['out = "out"', "[[tasks]]", 'type = "nextloc"', 'city = "tky"', f'truth = "{truth}"']
    lines += ["k = [1, 5]", "[tasks.models]"]
    for model, runs in files.items():
        pairs = ", ".join(f'{seed} = "{path}"' for seed, path in runs.items())
        lines.append(f"{model} = {{ {pairs} }}")
    path = folder / "job.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_job_of_three_models_by_three_seeds(tmp_path):
    job = load_job(write_job(tmp_path))
    results = run_job(job, log=lambda _: None)
    assert [(r.model, r.run) for r in results] == [(m, s) for m in MODELS for s in SEEDS]
    out = tmp_path / "out"
    manifest = json.loads((out / "manifest.json").read_text())["results"]
    assert sorted(manifest) == sorted(f"city=tky/model={m}/run={s}" for m in MODELS for s in SEEDS)
    for result in results:  # each run: the numbers of the same predictions scored alone
        folder = out / "summary" / "city=tky" / f"model={result.model}" / f"run={result.run}"
        stored = pl.read_parquet(folder / "part-00000.parquet")
        alone = evaluate_nextloc(
            tmp_path / "truth.parquet", tmp_path / f"{result.model}_{result.run}.parquet", k=[1, 5]
        ).summary
        assert stored.equals(alone)
        assert manifest[f"city=tky/model={result.model}/run={result.run}"]["config"]["run"]
    per_unit = scan_outputs(out, "per_unit").collect()
    assert per_unit.columns[:3] == ["city", "model", "run"]
    assert per_unit.group_by("model", "run").len().height == 9
    assert per_unit.height == 9 * SAMPLES


def test_resume_run_by_run(tmp_path):
    job = load_job(write_job(tmp_path))
    run_job(job, log=lambda _: None)
    predictions(99).write_parquet(tmp_path / "lstm_seed2.parquet")  # one run's input changes
    lines = []
    again = run_job(job, resume=True, log=lines.append)
    assert [r.resumed for r in again] == [(r.model, r.run) != ("lstm", "seed2") for r in again]
    assert "tky/lstm/seed2: done" in " ".join(lines)
    assert "tky/gru/seed1: complete, resumed from OUT (--resume)" in lines


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([*argv, "--quiet"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_api_and_the_command_line_name_a_run(tmp_path, capsys):
    truth, files = write_runs(tmp_path)
    out = tmp_path / "out"
    evaluation = evaluate_nextloc(truth, files["gru"]["seed1"], out=out, model="gru", run="seed1")
    assert evaluation.label == "gru/seed1"
    for section in ("summary", "per_unit"):
        folder = out / section / f"city={evaluation.city}" / "model=gru" / "run=seed1"
        assert (folder / "part-00000.parquet").is_file()
    code, printed, _ = run_cli(
        capsys,
        "nextloc", "--truth", str(truth), "--pred", str(files["gru"]["seed2"]), "--model", "gru",
        "--run", "seed2", "--out", str(out), "--k", "1",
    )  # fmt: skip
    assert code == 0 and "gru/seed2" in printed
    manifest = json.loads((out / "manifest.json").read_text())["results"]
    assert f"city={evaluation.city}/model=gru/run=seed2" in manifest


def test_a_model_is_all_runs_or_none(tmp_path, capsys):
    truth, files = write_runs(tmp_path)
    out = tmp_path / "out"
    evaluate_nextloc(truth, files["gru"]["seed1"], out=out, model="gru", run="seed1")
    with pytest.raises(ConfigError, match="already has runs"):
        evaluate_nextloc(truth, files["gru"]["seed2"], out=out, model="gru")
    evaluate_nextloc(truth, files["lstm"]["seed1"], out=out, model="lstm")
    with pytest.raises(ConfigError, match="a result without a run"):
        evaluate_nextloc(truth, files["lstm"]["seed2"], out=out, model="lstm", run="seed2")
    code, _, error = run_cli(
        capsys,
        "nextloc", "--truth", str(truth), "--pred", str(files["gru"]["seed2"]), "--run", "a/b",
        "--k", "1",
    )  # fmt: skip
    assert code == 2 and "--run: 'a/b' is not a plain name" in error


def test_a_job_names_a_bad_run(tmp_path):
    job = write_job(tmp_path)
    job.write_text(job.read_text().replace("seed1 =", '"s 1" =', 1))
    with pytest.raises(ConfigError, match=r"tasks\[0\].models.gru: 's 1' is not a plain name"):
        load_job(job)
    job.write_text(
        job.read_text().replace('"s 1" =', "seed1 =").replace("gru = {", "gru = { x = 3, ", 1)
    )
    with pytest.raises(ConfigError, match=r"models.gru.x: expected a path \(a string\) or a table"):
        load_job(job)


def test_compare_separate_reads_each_run_as_a_model_of_its_own(tmp_path):
    from mobeval.compare import compare

    run_job(load_job(write_job(tmp_path)), log=lambda _: None)
    rows = compare(
        tmp_path / "out",
        baseline="gru/seed1",
        metrics=["acc@1"],
        tests=["paired-t"],
        runs="separate",
    )
    others = [f"{m}/{s}" for m in MODELS for s in SEEDS][1:]
    assert rows.get_column("model").to_list() == others
    units = pl.read_parquet(tmp_path / "out" / "per_unit" / "city=tky" / "model=lstm" / "run=seed3")
    base = pl.read_parquet(tmp_path / "out" / "per_unit" / "city=tky" / "model=gru" / "run=seed1")
    lstm3 = rows.filter(pl.col("model") == "lstm/seed3")
    expected = (units["acc@1"] - base["acc@1"]).mean()  # both sorted by sample_id, as written
    assert lstm3["diff"].item() == pytest.approx(expected, abs=1e-12)


def per_unit(out: Path, model: str, run: str, metric: str) -> dict[int, float]:
    """One run's per-unit values of ``metric``, by sample."""
    frame = pl.read_parquet(out / "per_unit" / "city=tky" / f"model={model}" / f"run={run}")
    return dict(zip(frame["sample_id"].to_list(), frame[metric].to_list(), strict=True))


def run_means(out: Path, model: str, metric: str) -> list[float]:
    """Each run's city value of ``metric`` (its summary), in the runs' order."""
    means = []
    for run in sorted(p.name[4:] for p in (out / "summary/city=tky" / f"model={model}").iterdir()):
        summary = pl.read_parquet(out / "summary/city=tky" / f"model={model}" / f"run={run}")
        means.append(summary.filter(pl.col("metric") == metric)["value"].item())
    return means


def test_compare_takes_a_models_seeds_together_over_per_unit_means(tmp_path):
    from scipy import stats

    from mobeval.compare import compare

    run_job(load_job(write_job(tmp_path)), log=lambda _: None)
    out = tmp_path / "out"
    rows = compare(out, baseline="gru", metrics=["acc@5", "mrr"], tests=["paired-t", "wilcoxon"])
    assert rows.get_column("model").to_list() == ["lstm", "markov", "lstm", "markov"]
    assert set(rows["runs"]) == {"unit means over runs"} and set(rows["unit"]) == {"sample"}
    for row in rows.iter_rows(named=True):
        metric, means = row["metric"], {}
        for model in ("gru", row["model"]):
            runs = [per_unit(out, model, seed, metric) for seed in SEEDS]
            means[model] = [sum(run[s] for run in runs) / 3 for s in range(SAMPLES)]
        assert row["n"] == SAMPLES and row["runs_baseline"] == row["runs_model"] == 3
        assert row["mean_model"] == pytest.approx(sum(means[row["model"]]) / SAMPLES, abs=1e-12)
        t = stats.ttest_rel(means["gru"], means[row["model"]]).pvalue
        w = stats.wilcoxon(means["gru"], means[row["model"]]).pvalue
        assert row["p_t"] == pytest.approx(t, abs=1e-12)
        assert row["p_wilcoxon"] == pytest.approx(w, abs=1e-12)
        for side, model in (("baseline", "gru"), ("model", row["model"])):
            values = run_means(out, model, metric)
            assert row[f"mean_{side}"] == pytest.approx(sum(values) / 3, abs=1e-12)
            mean = sum(values) / 3
            sd = (sum((v - mean) ** 2 for v in values) / 2) ** 0.5
            assert row[f"sd_runs_{side}"] == pytest.approx(sd, abs=1e-12)


def score(truth: Path, pred: Path, out: Path, model: str, run: str | None = None) -> None:
    """``mobeval nextloc`` into ``out`` as city tky (a run of ``model`` when ``run`` is given)."""
    where = ["--city", "tky", "--model", model] + (["--run", run] if run else [])
    argv = ["nextloc", "--truth", str(truth), "--pred", str(pred), "--out", str(out), "--k", "1"]
    assert main([*argv, *where, "--quiet"]) == 0


def write_folds(folder: Path) -> Path:
    """Three folds, each its own samples and truth; every model scored on each."""
    out = folder / "out"
    for f in range(3):
        offset = 100 * f
        truth = folder / f"truth{f}.parquet"
        pl.DataFrame(
            {"sample_id": np.arange(SAMPLES) + offset, "location": np.arange(SAMPLES) % 7}
        ).write_parquet(truth)
        for m, model in enumerate(MODELS):
            pred = folder / f"{model}{f}.parquet"
            predictions(10 * m + f).with_columns(pl.col("sample_id") + offset).write_parquet(pred)
            score(truth, pred, out, model, f"fold{f}")
    return out


def test_compare_takes_folds_as_units_when_units_differ(tmp_path, capsys):
    from scipy import stats

    from mobeval.compare import compare

    out = write_folds(tmp_path)
    rows = compare(out, baseline="gru", metrics=["acc@1", "mrr"], tests=["paired-t"])
    assert set(rows["runs"]) == {"runs as units"} and set(rows["unit"]) == {"run"}
    for row in rows.iter_rows(named=True):
        base, model = (
            run_means(out, "gru", row["metric"]),
            run_means(out, row["model"], row["metric"]),
        )
        assert row["n"] == 3
        assert row["p_t"] == pytest.approx(stats.ttest_rel(base, model).pvalue, abs=1e-12)
        assert row["mean_model"] == pytest.approx(sum(model) / 3, abs=1e-12)
    capsys.readouterr()
    code = main(["compare", str(out), "--runs", "separate", "--baseline", "gru/fold0"])
    error = capsys.readouterr().err
    assert code == 2 and "scored against different truth files" in error
    score(tmp_path / "truth0.parquet", tmp_path / "gru0.parquet", out, "once")
    with pytest.raises(ConfigError, match="once has no runs; score each fold"):
        compare(out, baseline="gru", tests=["paired-t"], log=None)
    with pytest.raises(SystemExit) as exit_:
        main(["compare", str(out), "--runs", "both"])
    assert exit_.value.code == 2 and "--runs: invalid choice: 'both'" in capsys.readouterr().err


def test_the_report_shows_mean_and_sd_over_runs(tmp_path):
    from mobeval.report import Report

    run_job(load_job(write_job(tmp_path)), log=lambda _: None)
    out = tmp_path / "out"
    report = Report(out, baseline="gru", plots=False)
    markdown, html, latex = report.to_markdown(), report.to_html(), report.to_latex()
    for model in MODELS:
        values = run_means(out, model, "mrr")
        mean = sum(values) / 3
        sd = (sum((v - mean) ** 2 for v in values) / 2) ** 0.5
        assert f"{mean:.4f}" in markdown and f" ± {sd:.4f}" in markdown
        assert f" ± {sd:.4f}" in html and rf"$\pm$ {sd:.4f}" in latex
    assert "/seed1" not in markdown
    assert "mean ± sd over runs (runs: gru 3, lstm 3, markov 3; sd with ddof = 1)" in markdown
    assert "runs (gru 3, lstm 3, markov 3): each value of a model with runs is the mean" in markdown
    assert "(n = 40, each unit's mean across a model's runs)" in markdown
    # every model with runs: the caption says so once, not model by model (40: the n above)
    assert ".** Cells: mean ± sd over runs of the city value over 40 samples;" in markdown


def test_a_jobs_report_compares_runs_together_and_uses_the_written_comparison(tmp_path):
    job = write_job(tmp_path)
    report = (
        '[report]\nformats = ["markdown"]\nplots = false\nbaseline = "gru"\ntests = ["paired-t"]\n'
    )
    job.write_text(job.read_text().replace("[[tasks]]", report + "[[tasks]]", 1))
    run_job(load_job(job), log=lambda _: None)
    written = pl.read_parquet(tmp_path / "out" / "compare" / "city=tky" / "part-0.parquet")
    assert set(written["runs"]) == {"unit means over runs"}
    markdown = (tmp_path / "out" / "report" / "report.md").read_text()
    assert "source: OUT/compare/city=tky (mobeval compare)" in markdown
    job.write_text(job.read_text().replace("plots = false\n", 'plots = false\nruns = "all"\n'))
    with pytest.raises(ConfigError, match=r"report.runs: 'all': choose among mean, separate"):
        load_job(job)


def test_the_command_line_offers_every_way_compare_takes_runs(tmp_path, capsys):
    """``--runs``'s choices are spelt in cli.py (its --help imports no Polars): compare's own."""
    from mobeval.cli import main
    from mobeval.compare.runs import RUNS

    for runs in RUNS:
        main(["compare", str(tmp_path / "no-out"), "--runs", runs])
        assert "invalid choice" not in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["compare", str(tmp_path / "no-out"), "--runs", "median"])
    assert "invalid choice" in capsys.readouterr().err


def test_compare_takes_runs_together_in_every_city_of_an_out(tmp_path):
    """Two cities with models of the same names and different numbers of samples: each city's
    per-unit means across runs are its own (not the other city's, read from a shared scratch)."""
    from mobeval.compare import compare

    job = write_job(tmp_path)
    text = job.read_text()
    small = tmp_path / "small"
    small.mkdir()
    for path in [tmp_path / "truth.parquet", *tmp_path.glob("*_seed*.parquet")]:
        frame = pl.read_parquet(path).filter(pl.col("sample_id") < SAMPLES // 2)
        frame.write_parquet(small / path.name)
    second = text.split("[[tasks]]")[1].replace('"tky"', '"nyc"').replace(str(tmp_path), str(small))
    job.write_text(text + "[[tasks]]" + second)
    run_job(load_job(job), log=lambda _: None)
    out = tmp_path / "out"
    both = compare(out, baseline="gru", metrics=["mrr"], tests=["paired-t"], log=None)
    for city, samples in (("tky", SAMPLES), ("nyc", SAMPLES // 2)):
        alone = compare(out, city=city, baseline="gru", metrics=["mrr"], tests=["paired-t"])
        rows = both.filter(pl.col("city") == city)
        assert rows.height == 2 and set(rows["n"]) == {samples}
        assert rows.equals(alone)
