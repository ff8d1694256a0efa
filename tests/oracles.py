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
