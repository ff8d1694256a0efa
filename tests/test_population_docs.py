"""What a new user of issue 32 finds documented works as written: the API reference's
``evaluate_trajectory`` says how to score unpaired populations, and the job file shipped beside
MoveSim's GeoLife files (``data_samples/movesim/geolife.toml``, run in docs/population.md) gives
MoveSim's own six values bit for bit (``tests/golden/movesim_geolife``)."""

from __future__ import annotations

import json

from conftest import REPO_ROOT

GOLDEN = REPO_ROOT / "tests" / "golden" / "movesim_geolife" / "expected.json"


def test_the_api_reference_documents_unpaired_populations():
    from mobeval.api import evaluate_trajectory

    doc = evaluate_trajectory.__doc__
    for words in ('pairing="none"', "location_table", "gps_grid", '"movesim"', '"trajgdm"',
                  '"mobilitygpt"'):  # fmt: skip
        assert words in doc, words


def test_the_shipped_job_file_gives_movesims_values(tmp_path, capsys):
    from mobeval.cli import main

    job = REPO_ROOT / "data_samples" / "movesim" / "geolife.toml"
    capsys.readouterr()
    assert main(["run", str(job), "--out", str(tmp_path / "out"), "--format", "json"]) == 0
    (result,) = json.loads(capsys.readouterr().out)["results"]
    golden = json.loads(GOLDEN.read_text())
    got = [result["summary"][f"jsd_{name}"] for name in golden["order"]]
    assert got == golden["jsds"]
    assert (result["summary"]["uids"], result["summary"]["real_uids"]) == (2500, 7000)


def test_unpaired_inputs_without_pairing_none_point_to_it(tmp_path, capsys):
    """A new user's first run of two unpaired populations (uids on one side only) stops with the
    mismatch and says how to score them as populations (before: only --skip-mismatched)."""
    import polars as pl

    from mobeval.cli import main

    frame = pl.read_csv(REPO_ROOT / "data_samples" / "humob" / "reference_test.csv.gz")
    real, generated = tmp_path / "real.csv", tmp_path / "generated.csv"
    frame.filter(pl.col("uid") < 56).write_csv(real)
    frame.filter(pl.col("uid") >= 53).write_csv(generated)
    argv = ["trajectory", "--reference", str(real), "--generated", str(generated)]
    assert main([*argv, "--metrics", "distance,radius"]) == 2
    assert "--pairing none scores two populations of any sizes" in capsys.readouterr().err
    assert main([*argv, "--metrics", "distance,radius", "--pairing", "none"]) == 0
