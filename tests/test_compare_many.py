"""mobeval compare over many models: Tukey's HSD vs statsmodels / scipy / ranx (golden values
they returned, tests/golden/compare), the corrections vs statsmodels' multipletests, the effect
sizes vs hand formulas, --pairs, --family, and the leaderboard's letters vs a brute-force
check."""

from __future__ import annotations

import itertools
import json
import math
import statistics

import numpy as np
import polars as pl
import pytest

scipy_stats = pytest.importorskip("scipy.stats")

from conftest import GOLDEN  # noqa: E402

from mobeval.cli import main  # noqa: E402
from mobeval.compare import adjust, cohen_dz, compare, rank_biserial, tukey_hsd  # noqa: E402
from mobeval.compare.leaderboard import compact_letters, leaderboard  # noqa: E402
from mobeval.errors import ConfigError  # noqa: E402
from tests.helpers import logits_out, per_unit_column  # noqa: E402

GOLD = json.loads((GOLDEN / "compare" / "golden.json").read_text())
MODELS = ["a", "b", "c", "d", "e"]


def _sums(groups):
    groups = [np.asarray(g, dtype=np.float64) for g in groups]
    means = np.array([g.mean() for g in groups])
    squares = np.array([np.sum((g - g.mean()) ** 2) for g in groups])
    return np.array([g.size for g in groups]), means, squares


@pytest.mark.parametrize("case", sorted(GOLD["tukey"]))
def test_tukey_equals_statsmodels_and_scipy(case):
    gold = GOLD["tukey"][case]
    ours, _ = tukey_hsd(*_sums(gold["groups"]))
    assert np.allclose(ours, gold["scipy_tukey_hsd"], rtol=0, atol=1e-9)
    for pair, p in gold["statsmodels_pairwise_tukeyhsd"].items():
        i, j = (int(name[1:]) for name in pair.split(":"))
        assert abs(ours[i, j] - p) <= 1e-9 and ours[j, i] == ours[i, j]


def test_tukey_equals_ranx_on_its_per_query_scores():
    gold = GOLD["ranx_tukey"]
    names = list(gold["runs"])
    for metric in gold["metrics"]:
        ours, _ = tukey_hsd(*_sums([gold["per_query"][m][metric] for m in names]))
        for pair, values in gold["p_values"].items():
            a, b = pair.split(":")
            assert abs(ours[names.index(a), names.index(b)] - values[metric]) <= 1e-9


@pytest.mark.parametrize("index", [0, 1])
@pytest.mark.parametrize("method", ["holm", "bonferroni", "bh", "by"])
def test_corrections_equal_statsmodels_multipletests(index, method):
    gold = GOLD["multipletests"][index]
    theirs = gold[{"bh": "fdr_bh", "by": "fdr_by"}.get(method, method)]
    p = np.array(gold["p"])
    assert np.allclose(adjust(p, method), theirs, rtol=1e-12, atol=0)
    # a NaN p-value is left out of the family
    with_nan = adjust(np.r_[p, np.nan], method)
    assert math.isnan(with_nan[-1]) and np.allclose(with_nan[:-1], theirs, rtol=1e-12, atol=0)


def _hand_rank_biserial(d):
    """Kerby's simple difference with zeros dropped and average ranks of tied |d|, by counting."""
    nonzero = [x for x in d if x != 0]
    absolute = [abs(x) for x in nonzero]

    def rank(v):
        below = sum(1 for w in absolute if w < v)
        equal = sum(1 for w in absolute if w == v)
        return below + (equal + 1) / 2

    plus = sum(rank(abs(x)) for x in nonzero if x > 0)
    minus = sum(rank(abs(x)) for x in nonzero if x < 0)
    return (plus - minus) / (plus + minus)


@pytest.mark.parametrize("seed", range(6))
def test_effect_sizes_equal_hand_formulas(seed):
    rng = np.random.default_rng(seed)
    d = rng.integers(-3, 4, 25) / 4 if seed % 2 else rng.normal(0.2, 1, 40)  # ties and zeros
    assert abs(cohen_dz(d) - statistics.mean(d) / statistics.stdev(d)) <= 1e-12
    assert abs(rank_biserial(d) - _hand_rank_biserial(list(d))) <= 1e-12
    assert math.isnan(rank_biserial(np.zeros(4))) and math.isnan(cohen_dz(np.ones(1)))


def _letters_are_right(models, significant, letters):
    for a, b in itertools.combinations(models, 2):
        share = bool(set(letters[a]) & set(letters[b]))
        assert share == (frozenset((a, b)) not in significant), (a, b, letters)


@pytest.mark.parametrize("seed", range(30))
def test_compact_letters_share_a_letter_exactly_when_not_significant(seed):
    rng = np.random.default_rng(seed)
    models = [f"m{i}" for i in range(int(rng.integers(2, 9)))]
    significant = {
        frozenset(p) for p in itertools.combinations(models, 2) if rng.random() < rng.random()
    }
    _letters_are_right(models, significant, compact_letters(models, significant))


@pytest.fixture(scope="module")
def five_models(tmp_path_factory):
    """A logits OUT of five models of increasing skill on 60 rows (one city)."""
    return logits_out(
        tmp_path_factory.mktemp("five"),
        MODELS,
        rows=60,
        classes=12,
        seed=1,
        step=0.4,
        cutoffs=(1, 5),
    )


def copy_with_model_d_rewritten(five_models, tmp_path, change):
    """A copy of ``five_models`` under ``tmp_path/out`` whose model ``d`` holds its per-unit
    rows as ``change(rows)``, in one file."""
    import shutil

    out = tmp_path / "out"
    shutil.copytree(five_models, out)
    files = sorted((out / "per_unit/city=x/model=d").glob("*.parquet"))
    frame = pl.read_parquet(files)
    for f in files:
        f.unlink()
    change(frame).write_parquet(files[0])
    return out


def test_compare_tukey_equals_scipy_on_the_per_unit_values(five_models):
    table = compare(five_models, tests="tukey", metrics="acc@5,mrr", resamples=0, log=None)
    assert table.height == 2 * 10  # every pair of five models, per metric
    for metric in ("acc@5", "mrr"):
        theirs = scipy_stats.tukey_hsd(*[per_unit_column(five_models, m, metric) for m in MODELS])
        rows = table.filter(pl.col("metric") == metric)
        for a, b, p, p_corrected, n in rows.select(
            "baseline", "model", "p_tukey", "p_tukey_corrected", "n_tukey"
        ).iter_rows():
            assert abs(p - theirs.pvalue[MODELS.index(a), MODELS.index(b)]) <= 1e-9
            assert p_corrected == p and n == 60  # already adjusted over the metric's pairs


def test_family_metric_corrects_each_metric_alone(five_models):
    options = dict(tests="paired-t,wilcoxon", metrics="acc@5,mrr", resamples=0, log=None)
    for correction in ("holm", "bh", "by", "bonferroni"):
        by_metric = compare(five_models, correction=correction, family="metric", **options)
        pooled = compare(five_models, correction=correction, family="all", **options)
        assert by_metric["family_size"].to_list() == [20] * 20
        assert pooled["family_size"].to_list() == [40] * 20
        for metric in ("acc@5", "mrr"):
            rows = by_metric.filter(pl.col("metric") == metric)
            raw = list(rows["p_t"]) + list(rows["p_wilcoxon"])
            expected = adjust(raw, correction)
            got = list(rows["p_t_corrected"]) + list(rows["p_wilcoxon_corrected"])
            assert np.allclose(got, expected, rtol=1e-15, atol=0)
        raw = list(pooled["p_t"]) + list(pooled["p_wilcoxon"])
        got = list(pooled["p_t_corrected"]) + list(pooled["p_wilcoxon_corrected"])
        assert np.allclose(got, adjust(raw, correction), rtol=1e-15, atol=0)


def test_pairs_all_baseline_and_a_list(five_models):
    options = dict(tests="paired-t", metrics="mrr", resamples=0, log=None)
    pairs = lambda frame: frame.select("baseline", "model").rows()  # noqa: E731
    assert pairs(compare(five_models, **options)) == list(itertools.combinations(MODELS, 2))
    assert pairs(compare(five_models, pairs="baseline", **options)) == [
        ("a", m) for m in MODELS[1:]
    ]
    assert pairs(compare(five_models, baseline="c", **options)) == [
        ("c", m) for m in MODELS if m != "c"
    ]
    assert pairs(compare(five_models, pairs="e:a, b:d", **options)) == [("e", "a"), ("b", "d")]
    malformed = "choose all, baseline"
    for bad, message in (("a:z", "no model 'z'"), ("a-b", malformed), ("a:a", malformed)):
        with pytest.raises(ConfigError, match=message):
            compare(five_models, pairs=bad, **options)
    assert main(["compare", str(five_models), "--pairs", "a:zz", "--tests", "paired-t"]) == 2


def test_tukey_same_numbers_for_any_row_order(five_models, tmp_path):
    import shutil

    out = tmp_path / "out"
    shutil.copytree(five_models, out)
    before = compare(out, tests="tukey", resamples=0, log=None)
    folder = out / "per_unit/city=x/model=c"
    files = sorted(folder.glob("*.parquet"))
    frame = pl.read_parquet(files)
    for f in files:
        f.unlink()
    frame.sample(fraction=1.0, shuffle=True, seed=3).write_parquet(files[0])
    after = compare(out, tests="tukey", resamples=0, log=None)
    assert before.select("p_tukey").equals(after.select("p_tukey"))


def test_models_with_the_same_units_have_their_keys_read_one_at_a_time(
    five_models, tmp_path, monkeypatch
):
    """Same units: at most one model's keys held besides the first model's (sorted, a copy),
    never the five at once; and the same table as when every model's keys are read and joined
    (a model's rows shuffled, so that its order is not the files')."""
    import weakref

    import mobeval.compare.comparison as comparison
    import mobeval.compare.pairing as pairing

    out = copy_with_model_d_rewritten(
        five_models, tmp_path, lambda frame: frame.sample(fraction=1.0, shuffle=True, seed=5)
    )
    options = dict(tests="paired-t,wilcoxon,tukey", resamples=50, log=None)
    held, most = [0], [0]

    def counted(*args):
        keys = read_keys(*args)
        held[0] += 1
        most[0] = max(most[0], held[0])
        weakref.finalize(keys, lambda: held.__setitem__(0, held[0] - 1))
        return keys

    read_keys = pairing.read_keys
    monkeypatch.setattr(pairing, "read_keys", counted)
    alone = compare(out, **options)
    assert most[0] == 1
    monkeypatch.setattr(comparison, "key_order", lambda sides: None)  # every model's keys joined
    most[0] = 0
    joined = compare(out, **options)
    assert most[0] == len(MODELS)
    assert alone.equals(joined)


def test_a_unit_twice_in_a_model_after_the_first_is_refused(five_models, tmp_path):
    """Only the first model's keys are checked for a unit that appears twice; another model's
    duplicate makes its keys differ from the first's, and is named where they are joined."""

    from mobeval.errors import InputError

    out = copy_with_model_d_rewritten(
        five_models, tmp_path, lambda frame: pl.concat([frame, frame.filter(pl.col("row") == 7)])
    )
    with pytest.raises(InputError, match="a unit appears twice") as error:
        compare(out, tests="tukey", resamples=0, log=None)
    assert "model=d" in str(error.value) and "row=7" in str(error.value)


def test_leaderboard_letters_follow_the_p_values(five_models, capsys):
    table = compare(five_models, tests="tukey,paired-t", metrics="acc@5,mrr", log=None)
    board = leaderboard(table)
    assert board["test"].unique().to_list() == ["tukey"]
    for metric in ("acc@5", "mrr"):
        rows = board.filter(pl.col("metric") == metric)
        means = {m: per_unit_column(five_models, m, metric).mean() for m in MODELS}
        assert rows["model"].to_list() == sorted(MODELS, key=lambda m: -means[m])
        assert np.allclose(rows["mean"], [means[m] for m in rows["model"]], rtol=1e-15, atol=0)
        p = table.filter(pl.col("metric") == metric)
        significant = {
            frozenset((a, b)) for a, b, v in p.select("baseline", "model", "p_tukey").iter_rows()
            if v < 0.05
        }  # fmt: skip
        _letters_are_right(MODELS, significant, dict(rows.select("model", "letters").rows()))
    t_board = leaderboard(table, test="paired-t", alpha=0.01)
    assert set(t_board["correction"]) == {"holm"}
    with pytest.raises(ConfigError, match="every pair"):
        leaderboard(compare(five_models, baseline="a", tests="paired-t", resamples=0, log=None))
    # the CLI prints it within 80 columns, and as csv / json
    args = ["compare", str(five_models), "--tests", "tukey", "--metrics", "mrr"]
    assert main([*args, "--view", "leaderboard", "--resamples", "0"]) == 0
    printed = capsys.readouterr().out
    assert "models sharing a letter" in printed
    assert max(len(line) for line in printed.splitlines()) <= 80
    assert main([*args, "--view", "leaderboard", "--format", "json", "--resamples", "0"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["model"] for r in rows] == board.filter(pl.col("metric") == "mrr")["model"].to_list()
    assert main([*args, "--format", "csv", "--resamples", "0"]) == 0
    csv_rows = capsys.readouterr().out.splitlines()
    assert csv_rows[0].startswith("city,task,unit,metric") and len(csv_rows) == 11


def test_report_letters_are_the_leaderboards(five_models, tmp_path):
    import shutil

    from mobeval.report import Report
    from mobeval.report.tables import superscript

    out = tmp_path / "out"
    shutil.copytree(five_models, out)
    report = Report(
        out, letters=True, metrics=["acc@5", "mrr"], plots=False, test="paired-t", transpose=False
    )
    board = leaderboard(compare(out, tests="tukey", metrics="acc@5,mrr", resamples=0, log=None))
    markdown = report.to_markdown()
    assert "letters: models sharing a letter are not significantly different" in markdown
    cells, heads = {}, []  # (metric, model) -> cell, over every part of the table
    for line in markdown.splitlines():
        texts = [c.strip() for c in line.strip("|").split(" | ")]
        if line.startswith("| metric |"):
            heads = texts
        elif line.startswith(("| acc@5 ", "| mrr ")):
            cells |= {(texts[0], h): c for h, c in zip(heads[1:], texts[1:], strict=True)}
    for metric, model, letters in board.select("metric", "model", "letters").rows():
        assert cells[(metric, model)].endswith(superscript(letters))
    latex = report.to_latex()
    assert r"$^{\mathrm{a}}$" in latex
    assert main(["report", str(out), "--letters", "--format", "html", "--no-plots"]) == 0


def test_same_numbers_when_memory_allows_one_metric_at_a_time(five_models, monkeypatch):
    import mobeval.compare.comparison as comparison

    options = dict(tests="paired-t,wilcoxon,randomization,tukey", resamples=200, log=None)
    options |= dict(permutations=300)
    together = compare(five_models, **options)
    monkeypatch.setattr(comparison, "COLUMNS_BUDGET", 1)  # one metric's columns at a time
    assert compare(five_models, **options).equals(together)


def test_report_markers_by_tukey_say_its_family(five_models, tmp_path):
    import shutil

    from mobeval.report import Report

    out = tmp_path / "out"
    shutil.copytree(five_models, out)
    report = Report(out, test="tukey", baseline="a", metrics=["mrr"], plots=False)
    text = report.to_markdown()
    assert "adjusted over every pair of the 5 models by the studentized range" in text
    theirs = scipy_stats.tukey_hsd(*[per_unit_column(out, m, "mrr") for m in MODELS]).pvalue
    for model in MODELS[1:]:  # each marker by Tukey's p-value of (a, model) over all 5 models
        assert (
            abs(report.p_value(report.cities[0], model, "mrr") - theirs[0, MODELS.index(model)])
            <= 1e-9
        )


def test_tukey_flags_the_pairs_scipys_integration_warned_about():
    """14 groups of 1,503 (N - k = 21,028: scipy's double integral) with MSE = 1: the first
    pair's q = 0.35, where scipy's integration of the studentized range warns; the pairs flagged
    are those whose own scipy call warns, the p-values scipy's, and no warning escapes."""
    import warnings

    from scipy import integrate

    k, n = 14, 1503
    counts = np.full(k, n)
    means = np.r_[0.0, 0.35 / math.sqrt(n), 1.0 + np.arange(k - 2)]
    squares = np.full(k, (k * n - k) / k)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a raw IntegrationWarning would fail the test
        pvalues, flagged = tukey_hsd(counts, means, squares)
    assert flagged[0, 1] and flagged[1, 0]
    for i, j in itertools.combinations(range(k), 2):
        q = abs(means[i] - means[j]) / math.sqrt((1 / n + 1 / n) / 2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            p = scipy_stats.studentized_range.sf(q, k, k * n - k)
        warned = any(issubclass(w.category, integrate.IntegrationWarning) for w in caught)
        assert flagged[i, j] == flagged[j, i] == warned
        assert pvalues[i, j] == pvalues[j, i] == p


def test_tukey_integration_warning_is_one_line_of_ours(five_models, monkeypatch, capsys):
    """When scipy's integral warns (here made to warn for every q whose p > 0.5, as it does
    near q = 0), compare prints one note naming the pairs' count, the metrics and the smallest
    such p-value, nothing raw, and the same p-values."""
    import warnings

    from scipy import integrate

    options = dict(tests="tukey", metrics="acc@5,mrr", resamples=0)
    quiet = compare(five_models, **options, log=None)
    real = scipy_stats.studentized_range.sf

    def warning_sf(q, k, df):
        p = real(q, k, df)
        if np.any(np.asarray(p) > 0.5):
            warnings.warn("probably divergent", integrate.IntegrationWarning, stacklevel=2)
        return p

    monkeypatch.setattr(scipy_stats.studentized_range, "sf", warning_sf)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = compare(five_models, **options)
    assert table.equals(quiet)
    lines = [line for line in capsys.readouterr().err.splitlines() if "Tukey" in line]
    high = quiet.filter(pl.col("p_tukey") > 0.5)
    assert high.height > 0 and len(lines) == 1
    assert (
        f"for {high.height} pair(s) of {', '.join(high['metric'].unique(maintain_order=True))};"
        in lines[0]
    )
    assert f"the smallest {high['p_tukey'].min():.12g}: far from any" in lines[0]


def _untypeset(text: str) -> str:
    """A report's LaTeX or HTML with its notations as plain text: ``$d_z$`` and
    ``<i>d</i><sub>z</sub>`` as ``d_z``, ``$1.70\\times10^{-4}$`` and ``1.70×10<sup>−4</sup>``
    as ``1.70×10⁻⁴`` (p_text's)."""
    import re

    for name in ("d_z", "r_rb"):
        letter, sub = name.split("_")
        text = text.replace(f"<i>{letter}</i><sub>{sub}</sub>", name)
    text = text.replace("$d_z$", "d_z").replace(r"$r_{\mathrm{rb}}$", "r_rb")
    digits = str.maketrans("-−0123456789", "⁻⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
    return re.sub(
        r"\$?(\d\.\d+)(?:\\times|×)10(?:\^\{|<sup>)([-−]?\d+)(?:\}\$|</sup>)",
        lambda m: f"{m[1]}×10{m[2].translate(digits)}",
        text,
    )


def _report_tables(text: str, fmt: str) -> dict[str, tuple[list[str], list[list[str]]]]:
    """Every small table of a report as {title: (heads, rows)} of plain texts, parsed from
    the Markdown, the HTML or the LaTeX."""
    import html
    import re

    found = {}
    if fmt == "markdown":
        blocks = re.findall(r"\*\*([^*\n]+)\*\*\n\n((?:\|.*\n)+)", text)
        for title, body in blocks:
            lines = [[c.strip() for c in ln.strip("|").split(" | ")] for ln in body.splitlines()]
            found[title] = (lines[0], lines[2:])
    elif fmt == "html":
        for title, body in re.findall(r"<caption>([^<]*)</caption>(.*?)</table>", text):
            rows = [re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r) for r in body.split("</tr>")]
            rows = [[html.unescape(_untypeset(c)) for c in r] for r in rows if r]
            found[html.unescape(title)] = (rows[0], rows[1:])
    else:
        for title, body in re.findall(
            r"\\listing\{city=x: ([^}]*)\}.*?\\toprule\n(.*?)\\bottomrule", text, flags=re.S
        ):
            plain = _untypeset(body).replace("$-$", "-").replace("$+$", "+").replace(r"\_", "_")
            plain = plain.replace(r"$\pm$", "±").replace(r"\%", "%")
            rows = [ln[:-3].split(" & ") for ln in plain.splitlines() if ln.endswith(r" \\")]
            found[title] = (rows[0], rows[1:])
    return found


@pytest.mark.parametrize("fmt", ["markdown", "html", "latex"])
def test_report_leaderboard_and_comparisons_are_compares_rows(five_models, tmp_path, capsys, fmt):
    """The report's leaderboard tables hold what ``mobeval compare --view leaderboard`` prints
    (its JSON rows), and its comparison tables the rows ``mobeval compare`` wrote to
    OUT/compare (its Parquet file): difference and CI in points, d_z, r_rb, p and corrected p."""
    import shutil

    from mobeval.compare.printing import p_text
    from mobeval.report import Report

    out = tmp_path / "out"
    shutil.copytree(five_models, out)
    args = ["compare", str(out), "--metrics", "acc@5,mrr"]
    assert main([*args, "--tests", "tukey", "--view", "leaderboard", "--format", "json"]) == 0
    board = json.loads(capsys.readouterr().out)["rows"]
    shutil.rmtree(out / "compare")  # all pairs by Tukey: never replaced by pairs with a baseline
    assert main([*args, "--baseline", "a", "--tests", "paired-t,wilcoxon", "--seed", "3"]) == 0
    capsys.readouterr()
    stored = pl.read_parquet(out / "compare/city=x/part-0.parquet")
    report = Report(
        out, metrics="acc@5,mrr", baseline="a", test="wilcoxon", plots=False,
        leaderboard=True, comparisons=True,
    )  # fmt: skip
    text = {"markdown": report.to_markdown, "html": report.to_html, "latex": report.to_latex}[fmt]()
    tables = _report_tables(text, fmt)
    for metric in ("acc@5", "mrr"):
        heads, rows = tables[f"{metric}: highest first"]
        assert heads == ["rank", "model", "mean", "letters"]
        expected = [r for r in board if r["metric"] == metric]
        assert rows == [
            [str(r["rank"]), r["model"], f"{r['mean']:.4f}", r["letters"]] for r in expected
        ]
        heads, rows = tables[f"{metric}: each model vs a"]
        assert heads == ["model", "difference", "95% CI", "d_z", "r_rb", "p wilcoxon", "p holm"]
        pairs = stored.filter(pl.col("metric") == metric)
        assert [r[0] for r in rows] == pairs["model"].to_list() == MODELS[1:]
        for row, pair in zip(rows, pairs.iter_rows(named=True), strict=True):
            assert row[1] == f"{pair['diff'] * 100:+.2f} pp"
            assert row[2] == f"[{pair['ci_low'] * 100:+.2f}, {pair['ci_high'] * 100:+.2f}]"
            assert row[3:5] == [f"{pair['cohen_dz']:+.2f}", f"{pair['rank_biserial']:+.2f}"]
            assert row[5:] == [p_text(pair["p_wilcoxon"]), p_text(pair["p_wilcoxon_corrected"])]
    assert "OUT/compare/city=x (mobeval compare)" in "\n".join(report.comparison_text())
    # neither asked: neither shown
    plain = Report(out, metrics="acc@5,mrr", baseline="a", test="wilcoxon", plots=False)
    assert not any(": highest first" in t or "each model vs" in t for t in _report_tables(
        {"markdown": plain.to_markdown, "html": plain.to_html, "latex": plain.to_latex}[fmt](), fmt
    ))  # fmt: skip


def test_report_latex_leaderboards_side_by_side_on_few_pages(five_models, tmp_path):
    """``report --leaderboard --comparisons`` in LaTeX: each metric's small tables flow side by
    side (as many on a line as fit) rather than a float each (a float page held two or three,
    and past 18 floats waiting LaTeX stopped: ``Too many unprocessed floats``): every one
    compiles, numbered and labelled, two leaderboards on a line, a page holding several."""
    import re
    import shutil
    import subprocess

    from mobeval.report import Report

    if shutil.which("pdflatex") is None or shutil.which("pdftotext") is None:
        pytest.skip("pdflatex / pdftotext are not installed")
    from mobeval.jobs import load_job, run_job

    source = five_models.parent  # its five models at five cutoffs: 13 metrics
    lines = ["[[tasks]]", 'type = "logits"', 'city = "x"', f'truth = "{source}/targets.npy"']
    lines += ["k = [1, 2, 3, 4, 5]", "[tasks.models]"]
    (tmp_path / "job.toml").write_text(
        "\n".join([*lines, *(f'{m} = "{source}/{m}.npy"' for m in MODELS)]) + "\n"
    )
    run_job(load_job(tmp_path / "job.toml", out=str(tmp_path / "out")), progress=False, log=print)
    report = Report(
        tmp_path / "out", baseline="a", test="paired-t", plots=False, leaderboard=True,
        comparisons=True,
    )  # fmt: skip
    tex = report.to_latex()
    tables = _report_tables(tex, "latex")
    assert len(tables) > 18  # more than LaTeX's floats waiting
    folder = tmp_path / "tex"
    folder.mkdir()
    (folder / "report.tex").write_text(tex)
    for _ in range(2):
        run = subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "report.tex"],
            cwd=folder, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert run.returncode == 0, run.stdout[-3000:]
    log = (folder / "report.log").read_text()
    assert "Overfull" not in log and "undefined" not in log and "Float too large" not in log
    # every small table numbered and labelled: its \label's page in the .aux
    aux = (folder / "report.aux").read_text()
    pages = {
        section: [
            int(page)
            for page in re.findall(rf"newlabel{{tab:x-{section}-\d+}}{{{{\d+}}{{(\d+)}}", aux)
        ]
        for section in ("leaderboard", "comparisons")
    }
    board = pages["leaderboard"]
    ranked = [title.split(":")[0] for title in tables if title.endswith(" first")]
    assert len(board) == len(ranked) and len(board) + len(pages["comparisons"]) == len(tables)
    assert max(board.count(page) for page in board) >= 6  # three lines of two, at least
    assert min(pages["comparisons"]) >= max(board)  # the sections in order
    text = subprocess.run(
        ["pdftotext", "-layout", str(folder / "report.pdf"), "-"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    lines = [ln for ln in text.splitlines() if "highest first" in ln or "lowest first" in ln]
    beside = [re.findall(r"Table \d+: city=x: (.+?): \w+ first", ln) for ln in lines]
    shown = [title.replace("\\_", " ") for title in ranked]  # pdftotext: _ as a space
    assert [m for line in beside for m in line] == shown  # each once, in order
    assert len(beside[0]) >= 2 and all(len(line) == len(beside[0]) for line in beside[:-1])


def test_paired_t_and_effect_sizes_of_every_pair_equal_scipy_and_numpy_to_the_bit(five_models):
    """Each model's mean taken once and every pair's differences formed in one reused scratch
    column give each pair's p_t, d_z and means with the bits scipy's ``ttest_rel`` and NumPy's
    ``mean`` / ``std`` give on that pair's own values."""
    metrics = ["acc@1", "acc@5", "mrr"]
    table = compare(five_models, tests="paired-t", metrics=metrics, resamples=0, log=None)
    assert table.height == 10 * len(metrics)
    for metric, a, b, p_t, dz, mean_a, mean_b in table.select(
        "metric", "baseline", "model", "p_t", "cohen_dz", "mean_baseline", "mean_model"
    ).iter_rows():
        va, vb = per_unit_column(five_models, a, metric), per_unit_column(five_models, b, metric)
        d = vb - va
        assert p_t == float(scipy_stats.ttest_rel(vb, va).pvalue), (metric, a, b)
        assert dz == float(np.mean(d) / np.std(d, ddof=1)), (metric, a, b)
        assert (mean_a, mean_b) == (float(np.mean(va)), float(np.mean(vb)))


@pytest.mark.parametrize("n", [1, 2, 7, 8, 127, 128, 129, 1000, 4097, 100_003])
def test_difference_moments_in_a_scratch_column_are_numpys(n):
    """The moments of ``b - a`` formed in a reused scratch column equal NumPy's ``np.sum(d)`` and
    ``np.sum((d - np.mean(d)) ** 2)`` to the bit (lattice values and values over many binades,
    where the order of additions shows), also with infinities and NaN."""
    from mobeval.compare.significance import difference_moments

    rng = np.random.default_rng(n)
    columns = [rng.integers(0, 6, n) / 5.0 for _ in range(2)]
    columns += [rng.standard_normal(n) * 10.0 ** rng.integers(-8, 9, n) for _ in range(2)]
    special = rng.integers(0, 6, n) / 5.0
    special[::3] = np.inf
    special[1::5] = np.nan
    columns.append(special)
    scratch = np.empty(n)
    with np.errstate(invalid="ignore"):
        for a, b in itertools.permutations(columns, 2):
            d = b - a
            expected = (n, float(np.sum(d)), float(np.sum((d - np.mean(d)) ** 2)))
            got = difference_moments(a, b, scratch)
            assert np.array_equal(got, expected, equal_nan=True), (got, expected)
