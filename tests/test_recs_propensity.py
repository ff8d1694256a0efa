"""PSP@k and PSR@k through ``mobeval recs``, the job file and the API (streamed,
:mod:`mobeval.tasks.recs_propensity`): pyxclib's values on tests/golden/propensity (to a few
units in the last place: its means sum in row order, ours exactly), the plain-Python oracle's
exactly rounded sums bit for bit for any chunking, and bad inputs refused with exit 2."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest

from mobeval.api import evaluate_recs
from mobeval.cli import main
from mobeval.errors import ConfigError
from mobeval.jobs import load_job, run_job
from tests.conftest import GOLDEN
from tests.test_propensity import user_weights

FOLDER = GOLDEN / "propensity"
EXPECTED = json.loads((FOLDER / "expected.json").read_text())
TRAIN, TRUTH, RECS = (pl.read_csv(FOLDER / f"{n}.csv") for n in ("train", "truth", "recs"))
RATINGS = TRUTH.with_columns(rating=pl.lit(1))
NAMES = [f"{family}@{k}" for k in range(1, 11) for family in ("psp", "psr")]
#: pyxclib sums its per-row values in row order, each addition rounded; mobeval's sums are exact.
PYXCLIB_RTOL = 1e-12


def _values(summary: pl.DataFrame) -> dict[str, tuple[float, int]]:
    return {m: (v, n) for m, v, n in summary.select("metric", "value", "n").iter_rows()}


def _cli(tmp_path, *options: str) -> tuple[int, pl.DataFrame | None]:
    RATINGS.write_csv(tmp_path / "ratings.csv")
    code = main(
        [
            "recs",
            "--ratings",
            str(tmp_path / "ratings.csv"),
            "--recs",
            str(FOLDER / "recs.csv"),
            "--convention",
            "trec_eval",
            "--metrics",
            ",".join(NAMES),
            "--out",
            str(tmp_path / "out"),
            *options,
        ]
    )
    summary = tmp_path / "out" / "summary"
    return code, pl.read_parquet(summary) if code == 0 else None


@pytest.mark.parametrize(("preset", "options"), [("default", ()), ("amazon", ("amazon",))])
def test_pyxclib_through_the_command_line(tmp_path, preset, options):
    flags = ["--train", str(FOLDER / "train.csv")]
    flags += [f for name in options for f in ("--propensity-preset", name)]
    code, summary = _cli(tmp_path, *flags)
    assert code == 0
    values = _values(summary)
    for k in range(1, 11):
        for family in ("psp", "psr"):
            value, n = values[f"{family}@{k}"]
            expected = EXPECTED[preset][family][k - 1]
            assert math.isclose(value, expected, rel_tol=PYXCLIB_RTOL, abs_tol=0), (family, k)
            assert n == 60  # u7 has a list and no relevant item: a row of pyxclib's matrix


def test_the_formula_s_a_and_b_given_alone(tmp_path):
    """--propensity-a / -b are the preset's A and B: amazon's by hand gives amazon's values."""
    flags = ["--train", str(FOLDER / "train.csv"), "--propensity-a", "0.6", "--propensity-b"]
    code, summary = _cli(tmp_path, *flags, "2.6")
    assert code == 0
    value, _ = _values(summary)["psp@3"]
    assert math.isclose(value, EXPECTED["amazon"]["psp"][2], rel_tol=PYXCLIB_RTOL, abs_tol=0)


def _oracle(weight: dict, k: int) -> tuple[float, float]:
    """The paper's normalised PSP@k, PSR@k in plain Python, each sum over users exactly rounded
    (``math.fsum``), each user's sums in rank order (:func:`tests.test_propensity.user_weights`),
    times ``1 / k`` and ``1 / |y_u|`` as pyxclib."""
    rows = user_weights(weight, k)
    parts: list[list[float]] = [[], [], [], []]
    for gained, best, relevant in rows:
        per_rank, per_relevant = 1.0 / k, 1.0 / max(relevant, 1)
        values = (gained * per_rank, gained * per_relevant, best * per_rank, best * per_relevant)
        for part, value in zip(parts, values, strict=True):
            part.append(value)
    s = [math.fsum(part) for part in parts]
    n = len(rows)
    return (s[0] / n) / (s[2] / n), (s[1] / n) / (s[3] / n)


@pytest.mark.parametrize("chunk_rows", [7, 64, 100_000])
def test_given_propensities_bit_for_bit_for_any_chunking(tmp_path, chunk_rows):
    propensity = {f"i{j}": 1 / (1 + 0.1 * j) for j in range(40)}
    table = pl.DataFrame({"item_id": list(propensity), "propensity": list(propensity.values())})
    table.write_csv(tmp_path / "p.csv")
    shuffled = RECS.sample(fraction=1.0, seed=3, shuffle=True)  # lists ranked by score
    result = evaluate_recs(
        RATINGS,
        shuffled,
        metrics=NAMES,
        convention="ir_measures",
        propensities=tmp_path / "p.csv",
        chunk_rows=chunk_rows,
    )
    values = _values(result.summary)
    weight = {item: 1.0 / p for item, p in propensity.items()}
    for k in range(1, 11):
        psp, psr = _oracle(weight, k)
        assert values[f"psp@{k}"] == (psp, 60), k
        assert values[f"psr@{k}"] == (psr, 60), k


def test_the_job_file_gives_the_command_line_s_values(tmp_path):
    RATINGS.write_csv(tmp_path / "ratings.csv")
    (tmp_path / "job.toml").write_text(
        f'out = "out"\n[[tasks]]\ntype = "recs"\ncity = "golden"\n'
        f'truth = "ratings.csv"\nmetrics = {json.dumps(NAMES)}\nconvention = "trec_eval"\n'
        f'train = "{FOLDER / "train.csv"}"\npropensity_preset = "amazon"\n'
        f'[tasks.models]\nlists = "{FOLDER / "recs.csv"}"\n'
    )
    (result,) = run_job(load_job(tmp_path / "job.toml"), progress=False, log=lambda *_: None)
    code, summary = _cli(
        tmp_path, "--train", str(FOLDER / "train.csv"), "--propensity-preset", "amazon"
    )
    assert code == 0
    assert _values(result.summary) == _values(summary)


def test_the_api_takes_frames(tmp_path):
    code, summary = _cli(tmp_path, "--train", str(FOLDER / "train.csv"))
    result = evaluate_recs(RATINGS, RECS, metrics=NAMES, convention="trec_eval", train=TRAIN)
    assert _values(result.summary) == _values(summary)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("item_id,propensity\ni0,0.5\ni1,0\n", "(0, 1], not 0.0 (first offending key: i1)"),
        ("item_id,propensity\ni0,0.5\ni1,1.5\n", "(0, 1], not 1.5 (first offending key: i1)"),
        ("item_id,propensity\ni0,0.5\ni0,0.4\n", "two propensities (first offending key: i0)"),
        ("item_id,propensity\ni0,0.5\ni1,\n", "column 'propensity': null value"),
        ("item_id,propensity\ni0,a\n", "column 'propensity': a propensity is a number"),
        ("item,propensity\ni0,0.5\n", "column 'item_id': missing column"),
        (
            "item_id,propensity\ni0,0.5\n",
            "column 'item_id': a relevant item without a propensity (first offending key: i",
        ),
    ],
)
def test_bad_propensities_exit_2_naming_the_file(tmp_path, capsys, rows, message):
    (tmp_path / "p.csv").write_text(rows)
    code, _ = _cli(tmp_path, "--propensities", str(tmp_path / "p.csv"))
    err = capsys.readouterr().err
    assert code == 2
    assert "p.csv" in err and message in err, err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "psp@1 needs propensities: give train=PATH"),
        ({"k": None, "metrics": ["psp"]}, "psp needs a cutoff"),
        (
            {"train": TRAIN, "propensity_preset": "lshtc"},
            r"propensity_preset='lshtc': must be one of \['amazon', 'jain', 'wikipedia'\]",
        ),
        (
            {"propensities": "p.csv", "propensity_a": 0.5},
            "propensity_preset, propensity_a and propensity_b do not apply",
        ),
    ],
)
def test_a_wrong_configuration_is_refused(options, message):
    with pytest.raises(ConfigError, match=message):
        evaluate_recs(RATINGS, RECS, **({"metrics": NAMES, "convention": "trec_eval"} | options))


TIES = GOLDEN / "propensity_ties"


@pytest.mark.parametrize("preset", ["jain", "wikipedia"])
def test_pyxclib_with_tied_propensities_and_scores(tmp_path, preset):
    """Items sharing a training count (tied 1 / p_l in the best k), items in no training row,
    users without a relevant item, tied scores ranked by item id: pyxclib's k = 1..20."""
    expected = json.loads((TIES / "expected.json").read_text())[preset]
    result = evaluate_recs(
        TIES / "truth.csv",
        TIES / "recs.csv",
        metrics=["psp", "psr"],
        k=list(range(1, 21)),
        convention="trec_eval",
        order="score_id_asc",
        train=TIES / "train.csv",
        propensity_preset=preset,
        chunk_rows=1000,
    )
    values = _values(result.summary)
    for k in range(1, 21):
        for family in ("psp", "psr"):
            value, n = values[f"{family}@{k}"]
            assert math.isclose(value, expected[family][k - 1], rel_tol=PYXCLIB_RTOL, abs_tol=0), (
                family,
                k,
            )
            assert n == 400
