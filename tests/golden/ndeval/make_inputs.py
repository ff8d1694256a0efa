"""Write the seeded inputs of tests/golden/ndeval/ (run from this folder: python make_inputs.py).

qrels.txt: TREC diversity qrels (topic subtopic docno judgment; judgments 0..4, ndeval reads
them as binary), topics 1..14: 1 to 6 subtopics (ids with gaps, subtopic 9 of topic 3 never
relevant), a document judged for some subtopics only, topic 13 judged but never relevant;
run.txt: a run (topic Q0 docno rank score tag) whose ranks disagree with its scores (so
ndeval's default order by rank and -traditional differ), with score ties, unjudged documents,
topic 14 and 15 absent from one side each; adhoc.txt: graded qrels (topic 0 docno judgment,
-2..4) of the same documents for gdeval's ERR.
"""

import random

rng = random.Random(34)
qrels, adhoc, run = [], [], []
for topic in range(1, 15):
    subtopics = sorted(rng.sample(range(1, 9), rng.randint(1, 6)))
    if topic == 3:
        subtopics.append(9)
    docs = [
        f"d{topic}-{rng.randint(0, 10 ** rng.randint(1, 4)):x}" for _ in range(rng.randint(4, 40))
    ]
    docs = sorted(set(docs))
    for doc in docs:
        best = -2 if rng.random() < 0.05 else 0
        for s in subtopics:
            if rng.random() < 0.8:
                j = 0 if topic == 13 or s == 9 else rng.choice([0, 0, 0, 1, 1, 2, 3, 4])
                best = max(best, j)
                qrels.append(f"{topic} {s} {doc} {j}")
        adhoc.append(f"{topic} 0 {doc} {best}")
    if topic == 14:
        continue
    pool = docs + [f"u{topic}-{i}" for i in range(rng.randint(0, 15))]
    listed = rng.sample(pool, rng.randint(1, min(len(pool), 30)))
    ranks = list(range(1, len(listed) + 1))
    rng.shuffle(ranks)
    for doc, rank in zip(listed, ranks, strict=True):
        score = round(rng.uniform(0, 3), 1) if rng.random() < 0.5 else rank * -0.5
        run.append((topic, doc, rank, score))
for i in range(5):
    run.append((15, f"x{i}", i + 1, 1.0 - i))
with open("qrels.txt", "w") as f:
    f.write("\n".join(qrels) + "\n")
with open("adhoc.txt", "w") as f:
    f.write("\n".join(adhoc) + "\n")
with open("run.txt", "w") as f:
    f.write("".join(f"{t} Q0 {d} {r} {s} seeded\n" for t, d, r, s in run))
