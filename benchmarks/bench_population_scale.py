"""Unpaired populations at city scale: ``mobeval trajectory --pairing none`` in each location
space with each preset, beside MoveSim's, TrajGDM's and MobilityGPT's own evaluation code.

    python benchmarks/bench_population_scale.py [--sizes 100000,300000,1000000]
        [--spaces grid,ids,gps,links] [--presets movesim,trajgdm,mobilitygpt,default]
        [--chunk-rows 500000] [--engines local,spark] [--check-size 20000] [--check-chunk-rows 7001]
        [--reference-sizes 1000,3000,10000,30000,100000] [--reference-timeout 300]
        [--movesim-code DIR] [--trajgdm-code DIR] [--mobilitygpt-code DIR] [--theirs-python PY]

Data (:func:`datagen.population_files`, cached in ``bench_data/``): N real and N generated
trajectories of 48 points in the space's columns, 1 % of the generated copying a real one and 1 %
repeating the one before. Each run is a fresh process (:mod:`benchmarks.measure`): wall, CPU
seconds (user + system) and peak RSS.

* Scale: every (size, space, preset, engine) with the preset's metrics and the three ratios
  (``duplicate_ratio``, ``memorised``, ``memorised_near``): one streaming pass per side,
  ``--chunk-rows`` rows a chunk; ``default`` is no ``--convention`` (mobeval's own binning,
  JSD) over ``distance``, ``radius``, ``jump``, ``location``, ``od``, ``length`` (and
  ``trip_length`` on links, as ``mobilitygpt``).
* Bits (``--check-size``): each (space, preset) at that size with ``--chunk-rows`` and with
  chunks of ``--check-chunk-rows`` rows (7,001 by default), from a copy of the generated file
  in shuffled row order, and on every
  engine of ``--engines``: the summaries must be equal, value for value.
* References, run privately by ``--theirs-python`` from a checkout of each repository (never
  part of mobeval): MoveSim's ``IndividualEval.get_individual_jsds`` (ids over its geolife
  ``gps`` table, which the ids space then uses), TrajGDM's ``Evaluation_metrics(200,
  40000).js_traj`` (grid cells as ids ``(x - 1) * 200 + (y - 1)``) and MobilityGPT's
  ``TrajectoryEvaluator`` ``js_od``, ``js_link``, ``js_length`` (the link table), each on the
  sizes of ``--reference-sizes`` in turn until one passes ``--reference-timeout`` seconds; beside
  them mobeval's run of the same files, and the largest relative difference of the values.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_trajectory_population import THEIRS as MOVESIM_THEIRS  # noqa: E402
from datagen import BENCH_DATA, BOX, population_files, population_table  # noqa: E402
from measure import load, machine_line, run_measured  # noqa: E402

RATIOS = ["duplicate_ratio", "memorised", "memorised_near"]
PRESETS = {
    "movesim": (
        ["--convention", "movesim"],
        ["distance", "radius", "duration", "dailyloc", "grank", "irank"],
    ),
    "trajgdm": (
        ["--convention", "trajgdm", "--divergence", "jsdist"],
        ["jump", "location", "origin_location", "destination_location"],
    ),
    "mobilitygpt": (["--convention", "mobilitygpt", "--divergence", "jsdist"], ["od", "location"]),
    "default": ([], ["distance", "radius", "jump", "location", "od", "length"]),
}
GPS_GRID = ",".join(map(str, BOX)) + ",500m"
TRAJGDM_THEIRS = """
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np, torch
from metrics import Evaluation_metrics
real, gen = (torch.tensor(np.load(p)) for p in sys.argv[2:4])
values = Evaluation_metrics(200, 40000).js_traj(real, gen)
print(json.dumps([float(v) for v in values]))
"""
MOBILITYGPT_THEIRS = """
import collections, json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np, pandas as pd
from evaluate import TrajectoryEvaluator
table = pd.read_csv(sys.argv[4])
geo = pd.DataFrame({"geo_id": table["location"], "length": table["length"],
                    "coordinates": [f"[[{a}, {b}]]" for a, b in zip(table["lon"], table["lat"])]})
test, synth = ([list(map(int, row)) for row in np.load(p)] for p in sys.argv[2:4])
e = TrajectoryEvaluator()
m = e._calculate_distribution_metrics(test, synth, sum(test, []), sum(synth, []))
m.update(e._calculate_trajectory_metrics(test, synth, geo, collections.defaultdict(list)))
print(json.dumps([float(m[k]) for k in ("js_od", "js_link", "js_length")]))
"""


def space_options(space: str, preset: str, ids_table: Path | None) -> list[str]:
    """The command-line options of a location space (and the preset's there)."""
    table = ids_table if space == "ids" and ids_table else population_table(space)
    out = {
        "grid": [],
        "ids": ["--locations", "ids", "--location-table", str(table), "--max-distance", "247.3"],
        "gps": ["--locations", "gps", "--gps-grid", GPS_GRID, "--distance", "haversine"],
        "links": ["--locations", "links", "--location-table", str(table)],
    }[space]
    if space in ("gps", "links"):
        out += ["--distance", "haversine"] * (space == "links")
        out += ["--max-distance", "3000", "--jump-max", "3000", "--near-tolerance", "0.001"]
    return out


def command(real: Path, gen: Path, space: str, preset: str, engine: str, chunk_rows: int,
            ids_table: Path | None = None, ratios: bool = True) -> list[str]:  # fmt: skip
    options, metrics = PRESETS[preset]
    trips = space == "links" and preset in ("mobilitygpt", "default")
    metrics = metrics + ["trip_length"] * trips
    metrics = metrics + RATIOS * ratios
    return [
        sys.executable, "-m", "mobeval", "trajectory", "--reference", str(real),
        "--generated", str(gen), "--pairing", "none", *space_options(space, preset, ids_table),
        *options, "--metrics", ",".join(metrics), "--engine", engine,
        "--chunk-rows", str(chunk_rows), "--format", "json", "--quiet",
    ]  # fmt: skip


def measured(cmd: list[str], out: str) -> tuple[dict, dict]:
    report, text = run_measured(cmd, out)
    return report, json.loads(text)["summary"]


def line(name: str, report: dict) -> str:
    mib = report["rss_kib"] / 1024
    return f"{name:44s} {report['wall']:8.1f} s wall {report['cpu']:8.1f} s CPU {mib:7.0f} MiB"


def shuffled(path: Path) -> Path:
    """A copy of ``path`` with its rows in a seeded random order."""
    target = path.with_name(path.stem + "_shuffled.parquet")
    if not target.exists():
        frame = pl.read_parquet(path)
        frame.sample(fraction=1.0, shuffle=True, seed=1).write_parquet(target)
    return target


def check_bits(args, out: str) -> None:
    for space in args.spaces:
        real, gen = population_files(args.check_size, space)
        for preset in args.presets:
            small = args.check_chunk_rows
            runs = {
                f"local, chunks of {args.chunk_rows}": (gen, "local", args.chunk_rows),
                f"local, chunks of {small}, shuffled rows": (shuffled(gen), "local", small),
            }
            runs |= {f"{e}, shuffled rows": (shuffled(gen), e, args.chunk_rows)
                     for e in args.engines if e != "local"}  # fmt: skip
            summaries = {}
            for name, (g, e, c) in runs.items():
                report, summaries[name] = measured(command(real, g, space, preset, e, c), out)
                print(line(f"bits {space} {preset}: {name}", report), flush=True)
            first = next(iter(summaries.values()))
            same = all(s == first for s in summaries.values())
            print(f"bits {space:5s} {preset:11s}: {len(runs)} runs, equal: {same}", flush=True)
            if not same:
                sys.exit(f"summaries differ: {json.dumps(summaries, indent=1)}")


def location_ids(path: Path, space: str) -> np.ndarray:
    """The trajectories of a grid or links file as ids, one per row (N x 48)."""
    table = pq.read_table(path)
    if space == "grid":  # TrajGDM's ids of HuMob cells
        ids = (table["x"].to_numpy() - 1) * 200 + (table["y"].to_numpy() - 1)
    else:
        ids = table["location"].to_numpy()
    return ids.reshape(-1, 48)


def references(args, out: str, tmp: str) -> None:
    """Each reference's own code on growing sizes, beside mobeval on the same files."""
    cases = []
    if args.movesim_code:
        code = args.movesim_code.resolve()
        table = code.parent / "data" / "geolife" / "gps"
        cases.append(("MoveSim", "ids", "movesim", [str(code)], MOVESIM_THEIRS, table, 6))
    if args.trajgdm_code:
        code = str(args.trajgdm_code.resolve())
        cases.append(("TrajGDM", "grid", "trajgdm", [code], TRAJGDM_THEIRS, None, 5))
    if args.mobilitygpt_code:
        code, links = str(args.mobilitygpt_code.resolve()), population_table("links")
        cases.append(("MobilityGPT", "links", "mobilitygpt", [code], MOBILITYGPT_THEIRS, None, 3))
    for name, space, preset, before, script, ids_table, count in cases:
        after = [str(links)] if name == "MobilityGPT" else []
        for n in args.reference_sizes:
            real, gen = population_files(n, space)
            arrays = [Path(tmp, f"{side}.npy") for side in ("real", "gen")]
            for path, source in zip(arrays, (real, gen), strict=True):
                np.save(path, location_ids(source, space))
            cmd = [args.theirs_python, "-c", script, *before, *map(str, arrays), *after]
            try:
                report, text = run_measured(["timeout", str(args.reference_timeout), *cmd], out)
            except SystemExit:
                print(f"{name} at {n:,}: not done in {args.reference_timeout} s", flush=True)
                break
            theirs = np.array(json.loads(text)[:count])
            ours_cmd = command(real, gen, space, preset, "local", args.chunk_rows, ids_table)
            ours_report, summary = measured(ours_cmd, out)
            ours = np.array(list(summary.values())[:count], dtype=float)
            scale = np.where(theirs != 0, np.abs(theirs), 1.0)
            largest = float(np.nanmax(np.abs(ours - theirs) / scale))
            print(line(f"{name} own code, {n:,} x 48", report), flush=True)
            print(line(f"mobeval {preset} ({space}), {n:,} x 48", ours_report), flush=True)
            print(f"  largest relative difference {largest:.1e}  (load {load()})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])

    def listed(kind):
        return lambda text: [kind(v) for v in text.split(",") if v]

    parser.add_argument("--sizes", type=listed(int), default=[100_000, 300_000, 1_000_000])
    parser.add_argument("--spaces", type=listed(str), default=["grid", "ids", "gps", "links"])
    parser.add_argument("--presets", type=listed(str), default=list(PRESETS))
    parser.add_argument("--engines", type=listed(str), default=["local"])
    parser.add_argument("--chunk-rows", type=int, default=500_000)
    parser.add_argument("--check-size", type=int, default=0)
    parser.add_argument("--check-chunk-rows", type=int, default=7001)
    parser.add_argument("--reference-sizes", type=listed(int), default=[1000, 10_000, 100_000])
    parser.add_argument("--reference-timeout", type=int, default=300)
    for name in ("movesim", "trajgdm", "mobilitygpt"):
        parser.add_argument(f"--{name}-code", type=Path)
    parser.add_argument("--theirs-python", default=sys.executable)
    args = parser.parse_args()
    print(f"machine: {machine_line()}; load before: {load()}", flush=True)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    print(f"mobeval at {head.stdout.strip()}", flush=True)
    BENCH_DATA.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp, "out"))
        if args.check_size:
            check_bits(args, out)
        for n in args.sizes:
            for space in args.spaces:
                real, gen = population_files(n, space)
                for preset in args.presets:
                    for engine in args.engines:
                        cmd = command(real, gen, space, preset, engine, args.chunk_rows)
                        report, _ = measured(cmd, out)
                        name = f"{n:,} x 48 {space} {preset} {engine}"
                        print(line(name, report) + f"  (load {load()})", flush=True)
        references(args, out, tmp)
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
