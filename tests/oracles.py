"""Plain, obviously-correct Python versions of the metrics, used as test oracles."""

import math


def sort_candidates(candidates, ties):
    """candidates: list of (location, score) in input order; best first under a tie policy."""
    indexed = list(enumerate(candidates))
    if ties == "id_asc":
        indexed.sort(key=lambda item: (-item[1][1], item[1][0]))
    elif ties == "id_desc_str":
        indexed.sort(key=lambda item: str(item[1][0]), reverse=True)
        indexed.sort(key=lambda item: -item[1][1])
    elif ties == "id_asc_str":
        indexed.sort(key=lambda item: (-item[1][1], str(item[1][0])))
    elif ties == "input":
        indexed.sort(key=lambda item: (-item[1][1], item[0]))
    else:
        raise ValueError(ties)
    return [location for _, (location, _) in indexed]


def rank_range(candidates, target, ties):
    """Every equally likely 1-based rank of the target (one but for 'average'); [] if absent."""
    locations = [location for location, _ in candidates]
    if target not in locations:
        return []
    score = dict(candidates)[target]
    greater = sum(1 for _, s in candidates if s > score)
    equal = sum(1 for _, s in candidates if s == score) - 1
    if ties == "optimistic":
        return [greater + 1]
    if ties == "pessimistic":
        return [greater + equal + 1]
    if ties == "average":
        return list(range(greater + 1, greater + equal + 2))
    return [sort_candidates(candidates, ties).index(target) + 1]


def metric_at_rank(name, rank):
    """Metric ``name`` (acc@5, mrr, ndcg@10...) of one true item at ``rank`` (None: a miss)."""
    base, _, cut = name.partition("@")
    k = int(cut) if cut else None
    if rank is None or (k is not None and rank > k):
        return 0.0
    return {
        "acc": 1.0,
        "recall": 1.0,
        "precision": 1.0 / k if k else None,
        "f1": 2.0 / (k + 1) if k else None,
        "mrr": 1.0 / rank,
        "map": 1.0 / rank,
        "ndcg": 1.0 / math.log2(rank + 1),
    }[base]


def sample_value(name, candidates, target, ties):
    ranks = rank_range(candidates, target, ties)
    if not ranks:
        return metric_at_rank(name, None)
    return sum(metric_at_rank(name, r) for r in ranks) / len(ranks)


def geobleu_precisions(gen, ref, prox, max_n=5):
    """GEO-BLEU's n-gram precisions, n = 1 .. min(max_n, len(gen), len(ref)), as the spec words
    calc_geobleu_orig: an n-gram pair's weight is the product of its point proximities
    ``prox(a, b)`` left to right; the pairs are sorted by weight, descending and stable; the
    first is taken and every pair sharing its i or its j deleted, until none is left; the
    precision is the sum of the weights taken, in the order taken, over len(gen) - n + 1."""
    p = []
    for n in range(1, min(max_n, len(gen), len(ref)) + 1):
        edges = []
        for i in range(len(gen) - n + 1):
            for j in range(len(ref) - n + 1):
                w = prox(gen[i], ref[j])
                for k in range(1, n):
                    w = w * prox(gen[i + k], ref[j + k])
                edges.append(((i, j), float(w)))
        edges.sort(key=lambda e: e[1], reverse=True)
        total = 0.0
        while edges:
            (bi, bj), w = edges[0]
            total += w
            edges = [e for e in edges if e[0][0] != bi and e[0][1] != bj]
        p.append(total / float(len(gen) - n + 1))
    return p


def geobleu_gmean(p, len_gen, len_ref):
    """GEO-BLEU from its precisions ``p``: BP * exp(mean of log p) with libm's exp and log, one
    log added after the other (0 when a precision is 0); BP = 1 when len_gen > len_ref, else
    exp(1 - len_ref / len_gen)."""
    bp = 1.0 if len_gen > len_ref else math.exp(1.0 - len_ref / float(len_gen))
    if any(v == 0.0 for v in p):
        return 0.0
    total = 0.0
    for v in p:
        total += math.log(v)
    return bp * math.exp(total / len(p))
