"""Scoring programs for challenge platforms (``mobeval challenge``): Codabench, CodaLab, EvalAI.

* :mod:`mobeval.challenges.tasks`: the named tasks (HuMob 2024 by GEO-BLEU or DTW, GIS Cup 2025,
  a next-location or recommendation leaderboard), plain data;
* :mod:`mobeval.challenges.scoring`: one submission against the reference: found, validated,
  scored, or told invalid with the reasons;
* :mod:`mobeval.challenges.platforms`: what each platform runs (Codabench and CodaLab's
  ``score.py INPUT OUTPUT``, EvalAI's ``evaluate(...)``) and the files each reads back;
* :mod:`mobeval.challenges.program`: writes the programs and the leaderboard's columns.
"""
