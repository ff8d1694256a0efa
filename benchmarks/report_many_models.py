"""A leaderboard's report to look at: 10 models x 3 seeds in two cities, compared and reported.

    python benchmarks/report_many_models.py [FOLDER]      # default bench_data/report_many_models

Inputs: data_samples/nextloc's truths of tky and nyc (3,000 samples each). Each model ranks the
20 candidates of the sample's ``markov`` list by ``-rank + noise``: model i's noise has the sd
``0.6 * i`` (the first model is markov itself, give or take its seed's noise), each seed draws its
own noise, so the models form a ladder whose close neighbours a test cannot tell apart. A job file
scores them (``model = { seed1 = ..., seed2 = ..., seed3 = ... }``), then

    mobeval compare OUT --pairs all --tests tukey            (the leaderboard, with letters)
    mobeval compare OUT                                      (the default tests, every pair)
    mobeval report OUT --format latex,markdown,html --baseline markov --letters \
        --leaderboard --comparisons

leave ``FOLDER/out/report/report.{tex,md,html}`` to open in a browser or compile with pdflatex.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parent.parent
MODELS = (
    "markov",
    "graph_flashback",
    "getnext",
    "stan",
    "deepmove",
    "lstpm",
    "strnn",
    "gru",
    "lstm",
    "popularity",
)
SEEDS = ("seed1", "seed2", "seed3")


def model_runs(city: str, folder: Path) -> dict[str, dict[str, Path]]:
    """Every model's three runs of ``city`` as Parquet files (sample_id, location, score)."""
    markov = pl.read_parquet(ROOT / "data_samples" / "nextloc" / city / "markov.parquet")
    rank = markov.select(pl.int_range(pl.len()).over("sample_id").alias("rank"))["rank"]
    files: dict[str, dict[str, Path]] = {}
    for i, model in enumerate(MODELS):
        for s, seed in enumerate(SEEDS):
            rng = np.random.default_rng([i, s, len(city)])
            noise = rng.normal(0.0, 0.6 * i + 0.3, markov.height)
            path = folder / f"{city}_{model}_{seed}.parquet"
            markov.with_columns(score=-rank.to_numpy() + noise).write_parquet(path)
            files.setdefault(model, {})[seed] = path
    return files


def write_job(folder: Path) -> Path:
    lines = [f'out = "{folder / "out"}"']
    for city in ("tky", "nyc"):
        files = model_runs(city, folder)
        truth = ROOT / "data_samples" / "nextloc" / city / "truth.parquet"
        lines += [
            "[[tasks]]",
            'type = "nextloc"',
            f'city = "{city}"',
            f'truth = "{truth}"',
            "k = [1, 5, 10]",
            'convention = "libcity"',
            "[tasks.models]",
        ]
        for model, runs in files.items():
            pairs = ", ".join(f'{seed} = "{path}"' for seed, path in runs.items())
            lines.append(f"{model} = {{ {pairs} }}")
    job = folder / "job.toml"
    job.write_text("\n".join(lines) + "\n")
    return job


def mobeval(*args: str) -> None:
    print("$ mobeval " + " ".join(args), flush=True)
    subprocess.run([sys.executable, "-m", "mobeval", *args], check=True)


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "bench_data" / "report_many_models")
    folder.mkdir(parents=True, exist_ok=True)
    out = str(folder / "out")
    mobeval("run", str(write_job(folder)))
    mobeval("compare", out, "--city", "tky", "--pairs", "all", "--tests", "tukey", "--view",
            "leaderboard", "--metrics", "acc@1,mrr")  # fmt: skip
    mobeval("compare", out, "--baseline", "markov")
    mobeval("report", out, "--format", "latex,markdown,html", "--baseline", "markov", "--letters",
            "--leaderboard", "--comparisons")  # fmt: skip


if __name__ == "__main__":
    main()
