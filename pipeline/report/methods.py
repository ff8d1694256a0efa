"""What each metric is, as data: the methods section of ``mobeval report``.

:func:`resolved_options` turns the options a result was scored with (the manifest's ``config``:
what the user typed) into the values the run actually used, through each family's own presets
(:mod:`mobeval.metrics.nextloc`, :mod:`mobeval.metrics.recs`, :mod:`mobeval.metrics.trajectory`,
:mod:`mobeval.tasks.logits`), so a report states ``relevant_threshold = 4`` or ``N = 5`` and not
only ``convention = "clayrs"``. :data:`FAMILIES` holds each metric family's definition and
formula; :func:`methods` picks the families a result computed and attaches the parameters of
this run to each, in the ClayRS report's spirit (formula, then "in this experiment ...").
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import NamedTuple

from mobeval.metrics import (
    DIVERGENCES,
    GENERATION_DISTRIBUTIONS,
    cutoff_of,
    family_of,
)
from mobeval.population_options import distance_unit


def _plain(value):
    return json.loads(json.dumps(value, default=str))


def resolved_options(task: str, config: dict) -> dict:
    """Every option of a ``task`` result as the run used it: the preset resolved, every field of
    its convention spelled out, the API's defaults for what was not given (the family's
    definition: :func:`mobeval.families.resolved_options`). Raises what the resolvers raise on
    options they refuse (never the case for a recorded result)."""
    from mobeval.families import FAMILIES, resolved_options

    if task not in FAMILIES:
        return _plain({k: v for k, v in (config or {}).items() if v is not None})
    return resolved_options(task, config)


@dataclass(frozen=True)
class Family:
    """A metric family: its name in the report, a definition, the per-unit formula (LaTeX and
    plain text), and how the city value is made (text)."""

    title: str
    definition: str
    tex: str
    text: str
    aggregate: str


#: The recommendation families whose values depend on which items are relevant.
RECS_RELEVANCE = (
    *("precision", "recall", "fmeasure", "r-precision", "map", "mrr", "hit_rate", "hits"),
)

_MEAN = "the city value is the mean over the units (samples / users / rows) of the per-unit values"

_POPULATION = (
    "one value for the whole population (histograms of every uid-day of every uid, merged "
    "exactly over chunks): a population metric, not paired with another model's"
)

FAMILIES: dict[str, Family] = {
    "acc": Family(
        "Accuracy@k (hit rate)",
        "1 when the true location / class is among the first k of the ranked list, else 0.",
        r"\mathrm{Acc@}k_u = \mathbf{1}[\mathrm{rank}_u \le k]",
        "Acc@k_u = 1[rank_u <= k]",
        _MEAN,
    ),
    "hit_rate": Family(
        "Hit rate@k",
        "1 when at least one relevant item is among the first k recommendations, else 0.",
        r"HR@k_u = \mathbf{1}[tp@k_u > 0]",
        "HR@k_u = 1[tp@k_u > 0]",
        _MEAN,
    ),
    "precision": Family(
        "Precision@k",
        "Share of the first k recommended items that are relevant: tp@k are the relevant items "
        "in the list cut at k, fp@k the non-relevant ones.",
        r"P@k_u = \frac{tp@k_u}{tp@k_u + fp@k_u}",
        "P@k_u = tp@k_u / (tp@k_u + fp@k_u)",
        "macro: mean of P@k_u over users; micro: sum of tp@k over sum of (tp@k + fp@k)",
    ),
    "recall": Family(
        "Recall@k",
        "Share of the user's relevant items found in the first k: fn@k are the relevant items "
        "not in the list cut at k.",
        r"R@k_u = \frac{tp@k_u}{tp@k_u + fn@k_u}",
        "R@k_u = tp@k_u / (tp@k_u + fn@k_u)",
        "macro: mean of R@k_u over users; micro: sum of tp@k over sum of (tp@k + fn@k)",
    ),
    "fmeasure": Family(
        "F-measure@k",
        "Weighted harmonic mean of precision and recall; beta > 1 weighs recall more, beta < 1 "
        "precision more, beta = 1 (F1) weighs them equally.",
        r"F_\beta@k_u = (1 + \beta^2)\,\frac{P@k_u \cdot R@k_u}{\beta^2 P@k_u + R@k_u}",
        "F_b@k_u = (1 + b^2) P R / (b^2 P + R)",
        "macro: mean of per-unit F; aggregate: F of the averaged P and R",
    ),
    "f1": Family(
        "F1@k",
        "Harmonic mean of precision@k and recall@k (one true location per sample).",
        r"F1@k = \frac{2\,P@k \cdot R@k}{P@k + R@k}",
        "F1@k = 2 P R / (P + R)",
        "'aggregate': F1 of the averaged P@k and R@k (LibCity); 'mean': mean of per-sample F1",
    ),
    "r-precision": Family(
        "R-Precision",
        "Precision at R, the number of relevant items of the user.",
        r"RP_u = \frac{tp@R_u}{R_u}",
        "RP_u = tp@R_u / R_u",
        "macro: mean over users; micro: sum of tp@R over sum of R",
    ),
    "map": Family(
        "MAP@k (mean average precision)",
        "Mean over users of the average of the precisions at the ranks of the relevant items "
        "retrieved in the first k; the denominator is set by the convention.",
        r"AP@k_u = \frac{1}{D_u}\sum_{i=1}^{k} P@i_u \cdot rel_u(i)",
        "AP@k_u = (1/D_u) sum_{i<=k} P@i_u rel_u(i)",
        _MEAN,
    ),
    "mrr": Family(
        "MRR (mean reciprocal rank)",
        "Reciprocal of the rank of the first relevant item (the true location / class); 0 when "
        "it is not within the cutoff k (no cutoff for a bare mrr).",
        r"RR@k_u = \frac{\mathbf{1}[\mathrm{rank}_u \le k]}{\mathrm{rank}_u}",
        "RR@k_u = 1[rank_u <= k] / rank_u",
        _MEAN,
    ),
    "ndcg": Family(
        "nDCG@k (normalized discounted cumulative gain)",
        "DCG of the list cut at k divided by the DCG of the ideal ranking; f is the gain "
        "function, b the base of the logarithmic discount.",
        r"DCG@k_u = \sum_{i=1}^{k} \frac{f(r_{u,i})}{\log_b(i + 1)}, \quad "
        r"nDCG@k_u = \frac{DCG@k_u}{IDCG@k_u}",
        "DCG@k_u = sum_{i<=k} f(r_ui) / log_b(i + 1); nDCG@k_u = DCG@k_u / IDCG@k_u",
        _MEAN,
    ),
    "dcg": Family(
        "DCG@k (discounted cumulative gain, unnormalised)",
        "Gains of the list cut at k, each discounted by the log of its position (Jarvelin & "
        "Kekalainen 2002; ranx dcg); f is the convention's gain, b the base of the discount.",
        r"DCG@k_u = \sum_{i=1}^{k} \frac{f(r_{u,i})}{\log_b(i + 1)}",
        "DCG@k_u = sum_{i<=k} f(r_ui) / log_b(i + 1)",
        _MEAN,
    ),
    "dcg_burges": Family(
        "DCG@k, Burges' exponential gain (unnormalised)",
        "DCG with the gain 2^r - 1 of the rating r (Burges et al. 2005; ranx dcg_burges).",
        r"DCG_B@k_u = \sum_{i=1}^{k} \frac{2^{r_{u,i}} - 1}{\log_b(i + 1)}",
        "DCG_B@k_u = sum_{i<=k} (2^r_ui - 1) / log_b(i + 1)",
        _MEAN,
    ),
    "hits": Family(
        "Hits@k",
        "Number of relevant items among the first k recommendations (ranx hits).",
        r"Hits@k_u = tp@k_u",
        "Hits@k_u = tp@k_u",
        _MEAN,
    ),
    "gini": Family(
        "Gini index@k (of the items recommended)",
        "Inequality of how often each item appears in the first k items of every list: 0 when "
        "every item is recommended equally often, near 1 when a few items take every slot. "
        "x_j are the N item counts sorted ascending, T their sum.",
        r"G@k = \frac{\sum_{j=1}^{N} (2j - N - 1)\, x_j}{N\, T}",
        "G@k = sum_j (2j - N - 1) x_j / (N T)",
        "a value of the whole population of lists (no per-user values)",
    ),
    "coverage": Family(
        "Catalogue coverage@k",
        "Share of the catalogue I in R^k, the items in the first k items of at least one list.",
        r"C@k = \frac{|R^k \cap I|}{|I|}",
        "C@k = |R^k & I| / |I|",
        "a value of the whole population of lists (no per-user values)",
    ),
    "entropy": Family(
        "Shannon entropy@k",
        "Entropy of the shares p_i = c_i / T of the items in the first k items of every list.",
        r"H@k = -\sum_{i} p_i \ln p_i",
        "H@k = -sum_i p_i ln p_i",
        "a value of the whole population of lists (no per-user values)",
    ),
    "avg_popularity": Family(
        "Average popularity@k",
        "Mean popularity (rows in the training interactions) of the first k recommended items.",
        r"AP@k_u = \frac{1}{|L_u^k|}\sum_{i \in L_u^k} \phi(i)",
        "AP@k_u = (1/|L_u^k|) sum_{i in L_u^k} phi(i)",
        "the mean over users (no per-user values are stored)",
    ),
    "tail_percentage": Family(
        "Tail percentage@k",
        "Share of long-tail items (the least popular of the training interactions) among the "
        "first k recommended items.",
        r"TP@k_u = \frac{|L_u^k \cap T|}{|L_u^k|}",
        "TP@k_u = |L_u^k & T| / |L_u^k|",
        "the mean over users (no per-user values are stored)",
    ),
    **{
        method: Family(
            f"{title}@k (predicted scores vs ratings)",
            f"{title} between the predicted scores and the ratings of the user's rated items among "
            "the first k recommended (ClayRS's Correlation); NaN below 2 such items.",
            tex,
            text,
            "mean over the users whose value is not NaN",
        )
        for method, title, tex, text in (
            (
                "pearson",
                "Pearson's r",
                r"r_u = \frac{\sum_i (s_i - \bar s)(r_i - \bar r)}"
                r"{\sqrt{\sum_i (s_i - \bar s)^2 \sum_i (r_i - \bar r)^2}}",
                "r_u = sum (s_i - s^)(r_i - r^) / sqrt(sum (s_i - s^)^2 sum (r_i - r^)^2)",
            ),
            (
                "spearman",
                "Spearman's rho",
                r"\rho_u = r(\mathrm{rank}(s), \mathrm{rank}(r))",
                "rho_u = r(rank(s), rank(r)), average ranks for ties",
            ),
            (
                "kendall",
                "Kendall's tau-b",
                r"\tau_u = \frac{C - D}{\sqrt{(n_0 - n_1)(n_0 - n_2)}}",
                "tau_u = (C - D) / sqrt((n0 - n1)(n0 - n2))",
            ),
        )
    },
    "gauc": Family(
        "GAUC (grouped area under the ROC curve)",
        "Per user, the share of (rated, unrated) item pairs of its list that the predicted score "
        "orders correctly (ties count one half); L items, P rated, S the sum of the rated items' "
        "descending ranks.",
        r"AUC_u = \frac{(L + 1) P - P (P + 1)/2 - S}{P (L - P)}",
        "AUC_u = ((L + 1) P - P (P + 1)/2 - S) / (P (L - P))",
        "the mean of AUC_u weighted by P_u over the users with a rated and an unrated item",
    ),
    "auc": Family(
        "AUC (area under the ROC curve)",
        "Over every scored (user, item) pair of the lists, the share of (rated, unrated) pairs "
        "that the predicted score orders correctly (ties count one half); P rated pairs, N "
        "unrated.",
        r"AUC = \frac{\sum_{p, q} ([s_p > s_q] + [s_p = s_q] / 2)}{P N}",
        "AUC = sum_{p, q} ([s_p > s_q] + [s_p = s_q] / 2) / (P N)",
        "one value over every scored pair (not a mean over users)",
    ),
    "delta_gap": Family(
        "Delta GAP@k (group average popularity)",
        "Relative change from the mean item popularity of a user group's profiles to that of "
        "its recommendations (the first k items); groups of users by the share of popular items "
        "in their profiles.",
        r"\Delta GAP_g = \frac{GAP_g(L^k) - GAP_g(P)}{GAP_g(P)}",
        "DeltaGAP_g = (GAP_g(L^k) - GAP_g(P)) / GAP_g(P)",
        "one value per user group, over its users with a list (no per-user values)",
    ),
    "pop_ratio": Family(
        "Popularity ratio of profiles and recommendations",
        "Per user group, the mean share of popular items among the distinct items of its users' "
        "profiles and among the distinct items of their recommendations (the first k).",
        r"PR_u = \frac{|I_u \cap I_{pop}|}{|I_u|}",
        "PR_u = |I_u ∩ I_pop| / |I_u|",
        "two values per user group (profile, recs), the means over its users with a list",
    ),
    "mse": Family(
        "MSE (mean squared error)",
        "Mean squared difference between the rating r and the predicted score over the user's "
        "rated recommended items T_u (items that could not be predicted left out; none: NaN).",
        r"MSE_u = \frac{1}{|T_u|}\sum_{i \in T_u} (r_{u,i} - \hat r_{u,i})^2",
        "MSE_u = (1/|T_u|) sum (r_ui - r^_ui)^2",
        "mean of MSE_u over users, NaN users left out",
    ),
    "mae": Family(
        "MAE (mean absolute error)",
        "Mean absolute difference between the rating and the predicted score over T_u.",
        r"MAE_u = \frac{1}{|T_u|}\sum_{i \in T_u} |r_{u,i} - \hat r_{u,i}|",
        "MAE_u = (1/|T_u|) sum |r_ui - r^_ui|",
        "mean of MAE_u over users, NaN users left out",
    ),
    "rmse": Family(
        "RMSE (root mean squared error)",
        "Square root of the user's MSE.",
        r"RMSE_u = \sqrt{MSE_u}",
        "RMSE_u = sqrt(MSE_u)",
        "mean of RMSE_u over users, NaN users left out",
    ),
    "f1_weighted": Family(
        "Weighted F1 of the top-1 class",
        "Per-class F1 of the arg-max prediction, averaged with weights n_c / N (the class's "
        "share of the targets), as scikit-learn's f1_score(average='weighted').",
        r"F1_{w} = \sum_{c} \frac{n_c}{N} \cdot \frac{2 P_c R_c}{P_c + R_c}",
        "F1_w = sum_c (n_c / N) 2 P_c R_c / (P_c + R_c)",
        "computed over all rows at once (no per-row value)",
    ),
    "f1_macro": Family(
        "Macro F1 of the top-1 class",
        "Unweighted mean of the per-class F1 of the arg-max prediction (scikit-learn's "
        "f1_score(average='macro')).",
        r"F1_{macro} = \frac{1}{C}\sum_{c} \frac{2 P_c R_c}{P_c + R_c}",
        "F1_macro = (1/C) sum_c 2 P_c R_c / (P_c + R_c)",
        "computed over all rows at once (no per-row value)",
    ),
    "cross_entropy": Family(
        "Cross-entropy",
        "Negative log of the softmax probability of the target class (PyTorch's mean, float64).",
        r"CE_u = -\log \frac{e^{x_{u,y_u}}}{\sum_c e^{x_{u,c}}}",
        "CE_u = -log softmax(x_u)[y_u]",
        "mean over rows",
    ),
    "geobleu": Family(
        "GEO-BLEU",
        "BLEU over n-grams of grid cells with a spatial proximity in place of exact matches, per "
        "uid-day: p_n the proximity-weighted n-gram precision (greedy matching), BP the brevity "
        "penalty; a uid's value is the mean over its days.",
        r"\text{GEO-BLEU} = BP \cdot \exp\Big(\sum_{n=1}^{N} w_n \log p_n\Big), "
        r"\quad \mathrm{prox}(a, b) = e^{-\beta\, \lVert a - b \rVert}",
        "GEO-BLEU = BP * exp(sum_{n<=N} w_n log p_n), prox(a, b) = exp(-beta |a - b|)",
        "city value: mean over uids of the per-uid values",
    ),
    "dtw": Family(
        "DTW (dynamic time warping)",
        "Minimum cumulative Euclidean distance over warping paths aligning the generated and "
        "real steps of a uid-day, in km (cell distance / scale); a uid's value is the mean over "
        "its days. Lower is better.",
        r"D[i,j] = d(g_i, r_j) + \min(D[i-1,j], D[i,j-1], D[i-1,j-1]), \quad "
        r"\mathrm{DTW} = D[n, m]",
        "D[i,j] = d(g_i, r_j) + min(D[i-1,j], D[i,j-1], D[i-1,j-1]); DTW = D[n,m]",
        "city value: mean over uids of the per-uid values",
    ),
    "jsd": Family(
        "Jensen-Shannon divergence of a population distribution",
        "Divergence between the real (P) and the generated (Q) population's histogram of a "
        "measure over every uid-day (MoveSim, Feng et al., KDD 2020): distance the jumps "
        "between consecutive points, radius each day's radius of gyration, duration the stays, "
        "dailyloc the distinct locations per day, grank the visits of the top-k locations, "
        "irank each day's r-th most visited location's visits summed over days; and (DiffTraj, "
        "Zhu et al., NeurIPS 2023) density the points per cell of a 16 x 16 grid, trip each "
        "day's first and last points on that grid (the mean of the two divergences). Natural "
        "log; lower is better.",
        r"JSD = \frac{1}{2} \sum_i p_i \ln\frac{p_i}{m_i} + \frac{1}{2} \sum_i q_i "
        r"\ln\frac{q_i}{m_i}, \quad m = \frac{p + q}{2}",
        "JSD = 1/2 sum p_i ln(p_i / m_i) + 1/2 sum q_i ln(q_i / m_i), m = (p + q) / 2",
        _POPULATION,
    ),
    "jsdist": Family(
        "Jensen-Shannon distance of a population distribution",
        "Square root of the Jensen-Shannon divergence (scipy's jensenshannon) of the histograms "
        "described under it, or of the generation metrics' (TrajGDM, Chu et al., ICDE 2024: "
        "jump, location, origin_location, destination_location; MobilityGPT, Haydari et al., "
        "2024: od, trip_length, link_radius, gravity; DiffTraj: length, the points per "
        "uid-day). Lower is better.",
        r"JS = \sqrt{\frac{1}{2} \sum_i p_i \ln\frac{p_i}{m_i} + \frac{1}{2} \sum_i q_i "
        r"\ln\frac{q_i}{m_i}}, \quad m = \frac{p + q}{2}",
        "JS = sqrt(1/2 sum p_i ln(p_i / m_i) + 1/2 sum q_i ln(q_i / m_i)), m = (p + q) / 2",
        _POPULATION,
    ),
    "duplicate_ratio": Family(
        "Duplicate ratio of the generated trajectories",
        "Share of the generated uid-days whose whole point sequence another generated uid-day "
        "repeats (TrajGDM's diversity check). Lower is better.",
        r"\frac{1}{N} \sum_i [g_i = g_j \text{ for some } j \ne i]",
        "#{g_i : g_i = g_j for some j != i} / N",
        _POPULATION,
    ),
    "memorised": Family(
        "Memorisation: generated copies of real trajectories",
        "Share of the generated uid-days that copy a real uid-day point for point (memorised) "
        "or after snapping every coordinate to a grid of side tolerance (memorised_near). "
        "Lower is better.",
        r"\frac{1}{N} \sum_i [g_i = r_k \text{ for some } k]",
        "#{g_i : g_i = r_k for some k} / N",
        _POPULATION,
    ),
    "kl": Family(
        "Kullback-Leibler divergence of a population distribution",
        "KL(real || generated) of the histograms described under the Jensen-Shannon "
        "divergence (infinite where the generated population has no mass in a bin the real "
        "one has). Lower is better.",
        r"KL(P \,\lVert\, Q) = \sum_i p_i \ln\frac{p_i}{q_i}",
        "KL(P || Q) = sum p_i ln(p_i / q_i)",
        _POPULATION,
    ),
    "emd": Family(
        "Earth mover's distance of a population distribution",
        "Wasserstein-1 distance between the real and generated histograms (bins of width w; "
        "P_i, Q_i the cumulative shares), in the measure's unit. Lower is better.",
        r"W_1 = w \sum_i |P_i - Q_i|",
        "W1 = w sum |P_i - Q_i|",
        _POPULATION,
    ),
}

FAMILIES["memorised_near"] = FAMILIES["memorised"]
FAMILIES["connectivity"] = Family(
    "Connectivity of the generated trajectories",
    "Share of the generated trajectories whose every step goes from a road link to one the link "
    "graph leads to (MobilityGPT, Haydari et al., 2024). Higher is better.",
    r"\frac{1}{N} \sum_i [(l_j, l_{j+1}) \in E \text{ for every step of } g_i]",
    "#{g_i : every step (l_j, l_j+1) of g_i in E} / N",
    _POPULATION,
)

_TIES = {
    "id_asc": "tied candidates ordered by location id, ascending",
    "id_asc_str": "tied candidates ordered by id as a string, ascending",
    "id_desc_str": "tied candidates ordered by id as a string, descending (trec_eval)",
    "input": "tied candidates kept in input order",
    "optimistic": "optimistic: rank = 1 + #greater",
    "pessimistic": "pessimistic: rank = #greater + #equal",
    "average": "average: expectation over every order of the ties",
    "index": "lower class index first",
    "index_desc": "higher class index first (scikit-learn)",
}
_GAINS = {
    "binary": "f(r) = 1 if relevant else 0",
    "linear": "f(r) = r",
    "exponential": "f(r) = 2^r - 1",
    "relison": "f(r) = 2^(r - t + 1) - 1 (t = gain threshold)",
}


def _threshold_text(value) -> str:
    if value == "user_mean":
        return "rating >= the user's mean rating"
    if value is None:
        return "every rated item is relevant"
    return f"rating >= {value:g}" if isinstance(value, int | float) else str(value)


_POPULATION = (
    *("gini", "coverage", "entropy", "avg_popularity", "tail_percentage", "delta_gap"),
    "pop_ratio",
    *("pearson", "spearman", "kendall", "gauc", "auc"),
)


def parameters(task: str, family: str, options: dict, metrics: list[str]) -> list[tuple[str, str]]:
    """(name, value) of the run's parameters that shape ``family``'s values."""
    o = options
    ks = sorted({k for m in metrics if (k := cutoff_of(m)) is not None})
    out: list[tuple[str, str]] = [("convention", str(o.get("convention")))]
    if ks:
        out.append(("k", ", ".join(map(str, ks))))
    if task == "nextloc":
        out.append(("ties", f"{o.get('ties')} ({_TIES.get(o.get('ties'), o.get('ties'))})"))
        out.append(("samples without predictions", str(o.get("missing"))))
        out.append(("duplicates in a list", str(o.get("duplicates"))))
        if family == "f1":
            out.append(("F1 averaging", str(o.get("f1"))))
        if family == "ndcg":
            out.append(("gain", "binary (one true location), log base 2, IDCG = 1"))
        if family == "map":
            out.append(("denominator D_u", "1 (one true location)"))
        out.append(("relevant", "the one true next location"))
    elif task == "recs" and family in _POPULATION:
        out[0] = ("population convention", str(o.get("population_convention")))
        if family in ("coverage", "gini"):
            out.append(("catalogue", str(o.get("catalogue"))))
        if family in ("avg_popularity", "tail_percentage", "delta_gap", "pop_ratio"):
            out.append(("training interactions", str(o.get("train"))))
        if family in ("delta_gap", "pop_ratio"):
            out.append(("user groups", ", ".join(o.get("user_groups") or [])))
            out.append(("most popular items", f"the first {o.get('pop_percentage')} of them"))
            out.append(("popularity from", str(o.get("original_ratings") or o.get("train"))))
        if family == "tail_percentage":
            ratio = o.get("tail_ratio")
            out.append(("tail ratio", "0.1 (RecBole's default)" if ratio is None else str(ratio)))
    elif task == "recs":
        if family in RECS_RELEVANCE:
            out.append(("relevant threshold", _threshold_text(o.get("relevant_threshold"))))
        if family in ("precision", "recall", "fmeasure", "r-precision"):
            out.append(("sys average", str(o.get("averaging"))))
        if family == "precision":
            out.append(("precision denominator", str(o.get("precision_denominator"))))
        if family == "fmeasure":
            out.append(("beta", f"{o.get('beta'):g}"))
            out.append(("beta weighting", str(o.get("f_beta"))))
        if family == "map":
            out.append(("AP denominator D_u", str(o.get("ap_denominator"))))
        if family in ("ndcg", "dcg"):
            gain = o.get("gain")
            out.append(("gain f", f"{gain} ({_GAINS.get(gain, gain)})"))
        if family in ("ndcg", "dcg", "dcg_burges"):
            out.append(("gain threshold", str(o.get("gain_threshold"))))
            out.append(("log base b", f"{o.get('log_base'):g}"))
            out.append(("negative gain", str(o.get("negative_gain"))))
        if family == "ndcg":
            out.append(("ideal list (IDCG)", str(o.get("idcg"))))
        out.append(("users without relevant items", str(o.get("no_relevant"))))
        out.append(("users averaged", str(o.get("denominator"))))
        out.append(("list order", str(o.get("order"))))
        out.append(("duplicates in a list", str(o.get("duplicates"))))
        if o.get("unweighted"):
            out.append(("ratings", "read as 1 (unweighted)"))
    elif task == "logits":
        policy = {"mrr": o.get("mrr_ties"), "ndcg": o.get("ndcg_ties")}.get(family, o.get("ties"))
        if family not in ("f1_weighted", "f1_macro", "cross_entropy"):
            out.append(("ties", f"{policy} ({_TIES.get(policy, policy)})"))
        if family == "ndcg":
            out.append(("gain", "binary (one relevant class), log base 2"))
        out.append(("in percent", "yes" if o.get("percent") else "no"))
        if o.get("ignore_target") is not None:
            out.append(("rows left out", f"target = {o.get('ignore_target')}"))
    elif task == "trajectory":
        if family == "geobleu":
            out.append(("N (largest n-gram)", str(o.get("max_n"))))
            n = o.get("max_n") or 1
            out.append(("weights w_n", f"1/{n} each (uniform)"))
            out.append(("beta (proximity decay per cell)", f"{o.get('beta'):g}"))
            out.append(("matching", str(o.get("matching"))))
            out.append(("exp / log", str(o.get("exp"))))
        if family == "dtw":
            out.append(("scale (cell distance divisor)", f"{o.get('dtw_scale'):g}"))
            out.append(("D[0,0]", "free start (first row 0)" if o.get("dtw_free_start") else "0"))
        generation = [m for m in metrics if m.partition("_")[2] in GENERATION_DISTRIBUTIONS]
        distances, coordinates, jump_unit = _units(o)
        g = o.get("generation") or {}
        if generation:
            binning = f"{g.get('binning')}, {g.get('bins')} bins"
            out.append(("binning (generation metrics)", binning))
        if any(m.endswith("_gravity") for m in generation):
            out.append(("gravity", f"{g.get('gravity_bins')} bins"))
        if any(m.endswith("_jump") for m in generation):
            jumps = f"{g.get('jump_bins')} bins over [0, {g.get('jump_max'):g}] {jump_unit}"
            out.append(("jumps", jumps))
        if family == "memorised_near":
            out.append(("tolerance (snapping grid)", f"{g.get('tolerance'):g} {coordinates}"))
        if family in DIVERGENCES and len(generation) < len(metrics):
            largest = f"{o.get('max_distance'):g} {distances}"
            out.append(("largest distance (max_distance)", largest))
            out.append(("bins", f"{o.get('bins')} ({o.get('distance_bins')} distance bins)"))
            out.append(("top locations (top_k)", str(o.get("top_k"))))
            if family == "emd":
                out.append(("unit", str(o.get("unit"))))
        out.append(("uids whose steps differ", str(o.get("on_mismatch"))))
        out.append(("coordinates outside the grid", str(o.get("out_of_grid"))))
        if o.get("pairing") == "none":  # a population: its space and its distances' unit
            space = str(o.get("locations") or "grid")
            where = o.get("gps_grid") or o.get("location_table")
            out.append(("location space (locations)", space + (f", {where}" if where else "")))
            out.append(("distances", f"{o.get('distance') or 'planar'}, {distances}"))
    return out


def _units(o: dict) -> tuple[str, str, str]:
    """The units of a trajectory run's options ``o``: of its distances (``max_distance``,
    :func:`mobeval.population_options.distance_unit`), of its coordinates (the snapping grid
    of ``memorised_near``) and of its generation jumps (metres under haversine, else the
    coordinates')."""
    locations, distance = o.get("locations") or "grid", o.get("distance") or "planar"
    coordinates = {"grid": "cells", "gps": "degrees"}.get(locations, "location table units")
    jumps = "metres" if distance == "haversine" else coordinates
    return distance_unit(locations, distance, o.get("unit") or "cells"), coordinates, jumps


@dataclass(frozen=True)
class Method:
    family: str
    info: Family
    metrics: list[str]
    parameters: list[tuple[str, str]]


class MethodGroup(NamedTuple):
    """The methods of the results scored one way: where (``cities``: a city's name, with its
    models when only some of them were scored this way), the ``task``, the parameters ``shared``
    by every metric family (stated once), and each family's :class:`Method` with only its own
    parameters."""

    cities: list[str]
    task: str
    shared: list[tuple[str, str]]
    methods: list[Method]


def method_group(cities: list[str], task: str, options: dict, metrics: list[str]) -> MethodGroup:
    """The :class:`MethodGroup` of ``metrics`` scored by ``task`` under ``options``: a parameter
    with the same value for every family (the convention, the ties...) is stated once for the
    group, not in every family's list."""
    entries = methods(task, options, metrics)
    shared = [
        parameter
        for parameter in (entries[0].parameters if len(entries) > 1 else [])
        if all(parameter in entry.parameters for entry in entries)
    ]
    own = [
        dataclasses.replace(entry, parameters=[p for p in entry.parameters if p not in shared])
        for entry in entries
    ]
    return MethodGroup(cities, task, shared, own)


def methods(task: str, options: dict, metrics: list[str]) -> list[Method]:
    """One entry per metric family among ``metrics``, in their order."""
    seen: dict[str, list[str]] = {}
    for metric in metrics:
        family = family_of(metric)
        if family == "fmeasure" and task != "recs":
            family = "f1"
        seen.setdefault(family, []).append(metric)
    entries = []
    for family, names in seen.items():
        info = FAMILIES.get(family)
        if info is None:
            continue
        if task != "recs" and family in ("precision", "recall"):
            info = dataclasses.replace(info, aggregate=_MEAN)
        entries.append(Method(family, info, names, parameters(task, family, options, names)))
    return entries
