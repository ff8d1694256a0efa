"""Write the seeded inputs of tests/golden/propensity/ (run from this folder).

train.csv: user_id, item_id (a user's training items, popular items far more often); truth.csv:
user_id, item_id (each test user's relevant items; user u7 has none); recs.csv: user_id,
item_id, score (10 items a user, scores distinct within a list: no tie to order).
"""

import random

rng = random.Random(34)
items = [f"i{j}" for j in range(40)]
weights = [1.0 / (j + 1) ** 1.1 for j in range(40)]
with open("train.csv", "w") as f:
    f.write("user_id,item_id\n")
    for u in range(300):
        for item in sorted(set(rng.choices(items, weights, k=rng.randint(1, 8)))):
            f.write(f"t{u},{item}\n")
with open("truth.csv", "w") as f, open("recs.csv", "w") as g:
    f.write("user_id,item_id\n")
    g.write("user_id,item_id,score\n")
    for u in range(60):
        relevant = [] if u == 7 else rng.sample(items, rng.randint(1, 9))
        for item in sorted(relevant):
            f.write(f"u{u},{item}\n")
        listed = rng.sample(items, 10)
        scores = rng.sample(range(1000), 10)
        for item, score in zip(listed, scores, strict=True):
            g.write(f"u{u},{item},{score / 100}\n")
