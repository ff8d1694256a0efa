"""Regenerate data_samples/recbole: a small interaction file in RecBole's atomic format and a
model's top-20 lists (deterministic, Python's ``random.Random``, the same on every platform).

* ``ratings.inter``: ``user_id:token  item_id:token  rating:float  timestamp:float``, tab
  separated, as RecBole ships MovieLens (``ml-100k.inter``): 50 users, each rating 25 of 200
  items 1..5, in time order.
* ``bpr.tsv``: a model's lists, ``user_id:token  item_id:token  score:float`` (20 items a user,
  best first, scores with 4 decimals); its name says nothing, its typed header says RecBole.

    python data_samples/recbole/make_recbole_samples.py
"""

from __future__ import annotations

import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
USERS, ITEMS, RATED, LISTED = 50, 200, 25, 20


def main() -> None:
    rng = random.Random(2026)
    ratings = ["user_id:token\titem_id:token\trating:float\ttimestamp:float"]
    lists = ["user_id:token\titem_id:token\tscore:float"]
    clock = 881250949
    for user in range(1, USERS + 1):
        rated = {}
        for item in rng.sample(range(1, ITEMS + 1), RATED):
            rated[item] = rng.choices([1, 2, 3, 4, 5], weights=[1, 2, 5, 6, 4])[0]
            clock += rng.randint(1, 5000)
            ratings.append(f"{user}\t{item}\t{rated[item]}\t{clock}")
        scored = []
        for item in rng.sample(range(1, ITEMS + 1), LISTED):
            boost = 0.3 if rated.get(item, 0) >= 4 else 0.0
            scored.append((round(rng.random() + boost, 4), item))
        scored.sort(key=lambda pair: (-pair[0], pair[1]))
        lists.extend(f"{user}\t{item}\t{score:.4f}" for score, item in scored)
    (HERE / "ratings.inter").write_text("\n".join(ratings) + "\n")
    (HERE / "bpr.tsv").write_text("\n".join(lists) + "\n")


if __name__ == "__main__":
    main()
