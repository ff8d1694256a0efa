"""trec_eval's measures and ir_measures' names as recommendation metrics (issue 26).

* On the inputs of ``tests/test_trec_eval.py`` (trec_eval's outputs in ``tests/data/trec_eval``),
  ``mobeval recs --metrics all_trec`` gives every user the value trec_eval printed for the query
  (4 decimals, as trec_eval prints them) and the summary trec_eval's ``all`` line.
* On ``tests/golden/trec_catalogue`` (seeded qrels and run), the per-user values and the means
  equal what pytrec_eval-terrier (asked for the sets ``official``, ``all_trec``, ``set``, as its
  own tests ask) and ir_measures (by their names) returned, to 1e-9.
"""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest
from test_trec_eval import DATA, write_inputs

from mobeval.api import evaluate_recs
from mobeval.cli import main
from mobeval.errors import ConfigError, InputError
from mobeval.metrics.ir_measures import UNSUPPORTED
from mobeval.trec_eval.output import value_text

CATALOGUE = DATA.parents[1] / "golden" / "trec_catalogue"
EXPECTED = json.loads((CATALOGUE / "expected.json").read_text())
NOT_PER_USER = ("runid", "num_q", "relstring")
#: Measures newer than the trec_eval inside pytrec_eval-terrier 0.5.11 (not in its all_trec).
NEWER = {"rbp", "rbp_resid", "unj_5", "unj_10", "unj_20"}
#: Where pytrec_eval-terrier 0.5.11's older trec_eval interpolates precision otherwise than
#: trec_eval 10.0 (which `mobeval trec_eval` reproduces: tests/test_trec_eval.py): left out.
OLDER_INTERPOLATION = ("iprec_at_recall_", "11pt_avg")


def _recs(qrels, run, metrics, **options):
    options.setdefault("convention", "trec_eval")
    result = evaluate_recs(str(qrels), str(run), metrics=metrics, **options)
    per_user = result.per_unit.sort("user_id")
    summary = dict(zip(result.summary["metric"], result.summary["value"], strict=True))
    return per_user, summary


def _trec_eval_lines(golden: str) -> dict[tuple[str, str], str]:
    lines = (DATA / f"{golden}.txt").read_text().splitlines()
    return {(q, m.strip()): v for m, q, v in (line.split("\t") for line in lines)}


@pytest.mark.parametrize(
    ("golden", "level"), [("gen1.aq", 1), ("gen3.aq", 1), ("hand.aq", 1), ("hand.aql0", 0)]
)
def test_all_trec_per_user_is_trec_evals(golden, level, tmp_path):
    """Every number trec_eval printed for ``-m all_trec -q [-l N]``, per query and for ``all``."""
    qrels, run = write_inputs(tmp_path, golden.split(".")[0])
    per_user, summary = _recs(qrels, run, ["all_trec"], relevant_threshold=level)
    expected = _trec_eval_lines(golden)
    names = [c for c in per_user.columns if c != "user_id"]
    assert {m for _, m in expected} - set(names) == set(NOT_PER_USER)
    checked = 0
    for row in per_user.iter_rows(named=True):
        for name in names:
            text = expected.get((row["user_id"], name))
            if text is None:  # gm_map / gm_bpref: trec_eval prints no per-query line
                assert name.startswith("gm_")
                continue
            value = row[name]
            ours = str(int(value)) if name.startswith("num_") else value_text(value)
            assert ours == text, (row["user_id"], name)
            checked += 1
    for name in names:
        value = summary[name]
        if value != value:  # the summary's NaN (a mean of NaN) has no sign: C's 0 / 0 prints -nan
            value = -abs(value)
        ours = str(int(value)) if name.startswith("num_") else value_text(value)
        assert ours == expected["all", name], name
    assert checked > 100


@pytest.mark.parametrize("nickname", ["official", "all_trec", "set"])
def test_pytrec_evals_measure_sets(nickname):
    """pytrec_eval's own tests ask for measures by set name: each per-user value is its own."""
    per_user, _ = _recs(CATALOGUE / "qrels.txt", CATALOGUE / "run.txt", [nickname])
    expected = EXPECTED["pytrec_eval"][nickname]
    names = [c for c in per_user.columns if c != "user_id"]
    assert set(names) - NEWER == {m for m in expected["u1"] if m not in NOT_PER_USER}
    assert sorted(per_user["user_id"]) == sorted(expected)
    for row in per_user.iter_rows(named=True):
        for name in set(names) - NEWER:
            if name.startswith(OLDER_INTERPOLATION):
                continue
            assert row[name] == pytest.approx(expected[row["user_id"]][name], abs=1e-9), name


def test_ir_measures_names_are_ir_measures_values():
    """Each name as ir_measures writes it: per user and the aggregate, under the same name."""
    names = list(EXPECTED["ir_measures"])
    per_user, summary = _recs(CATALOGUE / "qrels.txt", CATALOGUE / "run.txt", names)
    assert [c for c in per_user.columns if c != "user_id"] == names
    for name in names:
        if name.startswith("IPrec"):  # pytrec_eval's older interpolation: OLDER_INTERPOLATION
            continue
        expected = EXPECTED["ir_measures"][name]
        ours = dict(zip(per_user["user_id"], per_user[name], strict=True))
        assert ours == pytest.approx(expected["per_query"], abs=1e-9), name
        aggregate = expected["aggregate"]
        if name.startswith("Num"):  # ir_measures sums the counts, as trec_eval does
            assert summary[name] == aggregate, name
        else:
            assert summary[name] == pytest.approx(aggregate, abs=1e-9), name


def test_gm_map_is_the_geometric_mean():
    """gm_map per user is ``log(max(AP, 1e-5))`` (trec_eval's, pytrec_eval's); the summary its
    exp-mean, by a plain oracle on the users' own AP."""
    per_user, summary = _recs(CATALOGUE / "qrels.txt", CATALOGUE / "run.txt", ["AP", "gm_map"])
    ap = per_user["AP"].to_numpy()
    assert per_user["gm_map"].to_numpy() == pytest.approx(np.log(np.maximum(ap, 1e-5)), abs=1e-12)
    oracle = math.exp(sum(math.log(max(a, 1e-5)) for a in ap) / len(ap))
    assert summary["gm_map"] == pytest.approx(oracle, rel=1e-12)


def test_cli_job_and_compare_names(tmp_path, capsys):
    """The command line takes the names (printed back as spelled); the per-unit columns carry
    them, so ``compare`` pairs them as any metric."""
    out = tmp_path / "out"
    for model in ("a", "b"):
        argv = ["recs", "--ratings", str(CATALOGUE / "qrels.txt"), "--recs"]
        argv += [
            str(CATALOGUE / "run.txt"),
            "--convention",
            "trec_eval",
        ]
        names = "nDCG@10,bpref,P(rel=2)@5,SetF(rel=1, beta=0.5),P.5,10,ndcg.1=3,2=9"
        argv += ["--metrics", names, "--model", model, "--out", str(out)]
        assert main(argv) == 0
    printed = capsys.readouterr().out
    for name in ("P(rel=2)@5", "SetF(rel=1, beta=0.5)", "P_5", "P_10", "ndcg_1=3,2=9"):
        assert name in printed  # a name's own commas (brackets, -m lists) do not split it
    assert main(["compare", str(out), "--metrics", "nDCG@10,bpref"]) == 0
    printed = capsys.readouterr().out
    assert "nDCG@10" in printed and "bpref" in printed


@pytest.mark.parametrize(
    ("metric", "options", "said"),
    [
        ("bpref", {"convention": "clayrs"}, "order='score_id_str_desc'"),
        ("P_5", {"relevant_threshold": 3.5}, "relevance level -l, an integer"),
        ("nDCG@10", {"duplicates": "count_each"}, "duplicates"),
        ("Judged(rel=2)@10", {}, "takes no parameter, not rel"),
        ("RR(judged_only=True)@10", {}, "takes ['rel'], not judged_only"),
        ("RR(rel=-1)@10", {}, "rel must be >= 0"),
        ("Judged@0", {}, "whole number from 1"),
        ("RR@99999999999999999999", {}, "whole number from 1"),
        ("nDCG(gains={0: 1.5})", {}, "integers"),
        ("P(rel=1, rel=2)@5", {}, "cannot read the parameter 'rel=2'"),
        ("SDCG@10", {}, "not supported"),
        ("ERR", {}, "needs a cutoff"),
        ("ERR(rel=2)@10", {}, "takes no parameter, not rel"),
        ("Rprec@10", {}, "takes no cutoff"),
        ("P", {}, None),  # mobeval's own precision: no error
        ("SetF(gamma=2)", {}, "not gamma"),
        ("relstring", {}, "text, not a number"),
        ("P.0", {}, "cutoff 0 is not positive"),
    ],
)
def test_what_cannot_be_said_is_refused(metric, options, said):
    """A measure outside trec_eval's conventions, or not computed, is a ConfigError saying why."""
    args = (CATALOGUE / "qrels.txt", CATALOGUE / "run.txt", [metric])
    if said is None:
        _recs(*args, **options)
        return
    with pytest.raises(ConfigError, match=None) as error:
        _recs(*args, **options)
    assert said in str(error.value)


def test_unsupported_names_each_have_a_reason():
    assert all(reason for reason in UNSUPPORTED.values())


def test_a_fractional_rating_is_not_a_level(tmp_path):
    ratings = pl.DataFrame({"user_id": ["u"], "item_id": ["i"], "rating": [1.5]})
    recs = pl.DataFrame({"user_id": ["u"], "item_id": ["i"], "score": [1.0]})
    with pytest.raises(InputError) as error:
        evaluate_recs(ratings, recs, metrics=["bpref"], convention="trec_eval")
    assert "integer" in str(error.value) and "rating" in str(error.value)


def _oracle(qrels_text: str, run_text: str, level: int) -> dict[str, dict[str, float]]:
    """mrr@3, hit_rate@2 and f1@3 per query in plain Python: each list by score descending, ties
    by docno descending (trec_eval's order), relevant a judgment >= level, for queries on both
    sides; a negative judgment is trec_eval's unjudged."""
    judged: dict[str, dict[str, int]] = {}
    for line in qrels_text.splitlines():
        qid, _, doc, rel = line.split()
        judged.setdefault(qid, {})[doc] = int(rel)
    lists: dict[str, list[tuple[float, str]]] = {}
    for line in run_text.splitlines():
        fields = line.split()
        if len(fields) >= 6 and not line.startswith("#"):
            lists.setdefault(fields[0], []).append((float(fields[4]), fields[2]))
    out = {}
    for qid, entries in lists.items():
        if qid not in judged:
            continue
        ranked = [doc for _, doc in sorted(entries, reverse=True)]
        relevant = {d for d, r in judged[qid].items() if r >= max(level, 0) and r >= 0}
        first = next((i + 1 for i, d in enumerate(ranked) if d in relevant), None)
        hits3 = sum(d in relevant for d in ranked[:3])
        precision, recall = hits3 / 3, hits3 / len(relevant) if relevant else 0.0
        f1 = 2 * precision * recall / (precision + recall) if hits3 else 0.0
        out[qid] = {
            "mrr@3": 1 / first if first is not None and first <= 3 else 0.0,
            "hit_rate@2": float(first is not None and first <= 2),
            "f1@3": f1,
        }
    return out


@pytest.mark.parametrize("level", [1, 2, 0])
def test_recs_metrics_in_trec_eval_command(level, tmp_path, capsys):
    """The reverse direction: ``mobeval trec_eval -m mrr@3`` (and any ranking metric of the
    recs family that trec_eval lacks) prints each query's value and the mean over queries in
    trec_eval's layout, equal to a plain oracle; trec_eval's own measures are untouched."""
    qrels, run = write_inputs(tmp_path, "hand")
    argv = ["trec_eval", "-q", "-l", str(level), "-m", "mrr@3", "-m", "hit_rate@2", "-m", "f1@3"]
    assert main([*argv, "-m", "recip_rank", str(qrels), str(run)]) == 0
    printed = {}
    for line in capsys.readouterr().out.splitlines():
        name, qid, value = line.split("\t")
        printed[qid, name.strip()] = value
    oracle = _oracle(qrels.read_text(), run.read_text(), level)
    assert {q for q, _ in printed} - {"all"} == set(oracle)
    for name in ("mrr@3", "hit_rate@2", "f1@3"):
        for qid, values in oracle.items():
            assert printed[qid, name] == value_text(values[name]), (qid, name)
        mean = sum(values[name] for values in oracle.values()) / len(oracle)
        assert printed["all", name] == value_text(mean), name
    assert "recip_rank" in {name for _, name in printed}


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["-m", "rmse"], "predicted rating"),
        (["-J", "-m", "mrr@3"], "-J does not apply"),
        (["-c", "-m", "mrr@3"], "-c does not apply"),
        (["-M", "5", "-m", "mrr@3"], "-M does not apply"),
        (["-m", "nDCG@3"], "unknown measure"),
        (["-m", "nonsense@3"], "unknown measure"),
    ],
)
def test_trec_eval_command_refuses_what_recs_metrics_cannot_do(argv, said, tmp_path, capsys):
    qrels, run = write_inputs(tmp_path, "hand")
    assert main(["trec_eval", *argv, str(qrels), str(run)]) == 2
    assert said in capsys.readouterr().err
