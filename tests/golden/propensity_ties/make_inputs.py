"""Write the seeded inputs of tests/golden/propensity_ties/ (run from this folder).

train.csv: user_id, item_id: 1,500 training users; item j (0..199) held by the first
(1, 4, 16, 64 or 256)[j % 5] users of a shuffled order, so 40 items share each count (ties in
1 / p_l); items 200..249 are in no training row (N_l = 0). truth.csv: user_id, item_id, rating
(1): 0 to 15 relevant items a test user (users 0 to 399; every 25th has none). recs.csv:
user_id, item_id, score: 20 items a user, scores on a grid of 0.5 (ties, ranked by item id).
"""

import random

rng = random.Random(3434)
with open("train.csv", "w") as f:
    f.write("user_id,item_id\n")
    rows = []
    for j in range(200):
        holders = rng.sample(range(1500), (1, 4, 16, 64, 256)[j % 5])
        rows += [(u, j) for u in holders]
    for u, j in sorted(rows):
        f.write(f"{u},{j}\n")
with open("truth.csv", "w") as f, open("recs.csv", "w") as g:
    f.write("user_id,item_id,rating\n")
    g.write("user_id,item_id,score\n")
    for u in range(400):
        relevant = [] if u % 25 == 0 else rng.sample(range(250), rng.randint(1, 15))
        for item in sorted(relevant):
            f.write(f"{u},{item},1\n")
        for item in rng.sample(range(250), 20):
            g.write(f"{u},{item},{rng.randint(0, 6) / 2}\n")
