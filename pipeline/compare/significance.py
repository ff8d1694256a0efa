"""The significance tests of a comparison, on NumPy arrays of paired differences
``d = model - baseline``: the paired t-test, the Wilcoxon signed-rank test and Fisher's
randomization (sign-flip) test; ClayRS's two unpaired tests on the two models' values
(Student's t for independent samples, the Wilcoxon rank-sum test); Tukey's HSD over every model
of a city on their per-unit values;
the effect sizes beside them (paired Cohen's d_z, the matched-pairs rank-biserial correlation);
each as the package docstring of :mod:`mobeval.compare` states it."""

from __future__ import annotations

import math

import numpy as np

from mobeval.kernels import resampling

#: Non-zero differences up to which the randomization test enumerates every sign vector.
EXACT_MAX_NONZERO = 16
#: Absolute tolerance of the randomization test, times max|d|.
FLIP_TOLERANCE = 1e-9


def paired_t(d: np.ndarray) -> float:
    """Two-sided p-value of the paired t-test (``scipy.stats.ttest_rel``, to the last bits)."""
    return paired_t_moments(*moments(d))


def moments(d: np.ndarray) -> tuple[int, float, float]:
    """``(n, total, squares)`` of the differences ``d``: their count, ``np.sum(d)`` and
    ``np.sum((d - np.mean(d)) ** 2)`` (what the paired t-test and d_z take)."""
    return _deviations(np.array(d, dtype=np.float64))


def difference_moments(
    a: np.ndarray, b: np.ndarray, scratch: np.ndarray | None = None
) -> tuple[int, float, float]:
    """:func:`moments` of ``b - a``, formed in ``scratch`` (float64, the length of ``a``; reused
    across pairs: no temporary array) when given: the same NumPy sums, the same bits."""
    return _deviations(np.subtract(b, a, out=scratch))


def _deviations(d: np.ndarray) -> tuple[int, float, float]:
    """:func:`moments` of ``d``, overwritten by its squared deviations (NumPy's pairwise sums:
    ``np.mean(d) = total / n``, ``np.var(d) = squares / n``, as ``np.mean`` and ``np.std``
    compute them)."""
    n = d.size
    if n == 0:
        return 0, 0.0, 0.0
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, as NumPy gives it
        total = np.add.reduce(d)
        np.subtract(d, total / n, out=d)
        np.square(d, out=d)
        return n, float(total), float(np.add.reduce(d))


def paired_t_moments(n: int, total: float, squares: float) -> float:
    """:func:`paired_t` of n differences from their :func:`moments`, as scipy computes it:
    ``mean = total / n``, ``var = squares / n * n / (n - 1)``, ``t = mean / sqrt(var / n)``,
    ``p = 2 F(-|t|)``, F Student's t with ``n - 1`` degrees of freedom; NaN without units."""
    from scipy import special

    if n == 0:
        return math.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.float64(total) / n
        var = np.float64(squares) / n * (np.float64(n) / np.float64(n - 1))
        t = mean / np.sqrt(var / np.float64(n))
        return float(2 * special.stdtr(np.float64(n - 1), -np.abs(t)))


def pooled_t(
    count_a: int, mean_a: float, squares_a: float, count_b: int, mean_b: float, squares_b: float
) -> float:
    """Two-sided p-value of Student's t-test for two **independent** samples with a pooled
    variance (``scipy.stats.ttest_ind`` with its defaults; ClayRS 0.5.1's ``Ttest``), from each
    sample's size ``n``, mean and sum of squared deviations from its mean ``S``:

    ``s^2 = (S_a + S_b) / (n_a + n_b - 2)``, ``t = (mean_a - mean_b) / sqrt(s^2 (1/n_a + 1/n_b))``,
    Student's t with ``n_a + n_b - 2`` degrees of freedom; NaN with fewer than 3 values or both
    samples constant and equal (0/0), 0 when they are constant and different.

    The pairing of the units is unused: on paired values (the same units under two models) the
    paired t-test (:func:`paired_t`) is the right one (the spread between units cancels out of
    its differences; here it stays in ``s^2``)."""
    from scipy import special

    df = float(count_a) + float(count_b) - 2.0
    if df <= 0:
        return math.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        pooled = (np.float64(squares_a) + np.float64(squares_b)) / df
        t = (np.float64(mean_a) - np.float64(mean_b)) / np.sqrt(
            pooled * (1.0 / count_a + 1.0 / count_b)
        )
        return float(2 * special.stdtr(df, -np.abs(t)))


def rank_sum(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided p-value of the Wilcoxon rank-sum test of two **independent** samples
    (``scipy.stats.ranksums``; ClayRS 0.5.1's ``Wilcoxon``): the values of both ranked together
    (average ranks of ties), ``R`` the rank sum of ``a``,

    ``z = (R - n_a (n_a + n_b + 1) / 2) / sqrt(n_a n_b (n_a + n_b + 1) / 12)``, ``p = 2 Phi(-|z|)``

    (the normal approximation, without tie correction, as scipy); NaN when a sample is empty.
    As :func:`pooled_t`, it ignores the pairing: on paired values the signed-rank test
    (:func:`wilcoxon`) is the right one."""
    from scipy import special

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    n_a, n_b = float(a.size), float(b.size)
    if a.size == 0 or b.size == 0:
        return math.nan
    ranks, _ = _average_ranks(np.concatenate([a, b]))
    expected = n_a * (n_a + n_b + 1) / 2.0
    z = (np.sum(ranks[: a.size]) - expected) / np.sqrt(n_a * n_b * (n_a + n_b + 1) / 12.0)
    return float(2 * special.ndtr(-np.abs(z)))


def _average_ranks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Average ranks (1-based) of ``values`` and the size of each tie group."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    sizes = np.diff(np.r_[starts, ordered.size])
    group_rank = starts + 1 + (sizes - 1) / 2.0
    ranks = np.empty(values.size, dtype=np.float64)
    ranks[order] = np.repeat(group_rank, sizes)
    return ranks, sizes


def _signed_rank_pmf(n: int) -> np.ndarray:
    """P(R+ = r), r = 0 .. n(n+1)/2, of the signed-rank statistic without ties (the recursion
    scipy uses: each rank is positive with probability 1/2)."""
    c = np.ones(1, dtype=np.float64)
    for k in range(1, n + 1):
        previous = c
        c = np.zeros(k * (k + 1) // 2 + 1, dtype=np.float64)
        m = len(previous)
        c[:m] = previous * 0.5
        c[-m:] += previous * 0.5
    return c


def signed_ranks(d: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The non-zero differences (zeros dropped, scipy's ``zero_method="wilcox"``), the average
    ranks of their ``|d|`` and the size of each tie group."""
    nonzero = d[d != 0]
    ranks, sizes = _average_ranks(np.abs(nonzero))
    return nonzero, ranks, sizes


def wilcoxon(d: np.ndarray) -> tuple[float, str]:
    """Two-sided p-value of the Wilcoxon signed-rank test with scipy's defaults, and the method
    used (``exact``, ``permutation`` or ``asymptotic``)."""
    d = np.asarray(d, dtype=np.float64)
    return wilcoxon_ranked(d.size, *signed_ranks(d))


def wilcoxon_ranked(
    n: int, nonzero: np.ndarray, ranks: np.ndarray, sizes: np.ndarray
) -> tuple[float, str]:
    """:func:`wilcoxon` of n differences ranked by :func:`signed_ranks` (the ranks computed
    once for the test and :func:`rank_biserial_ranked`)."""
    from scipy import special

    if n == 0:
        return math.nan, "none"
    m = nonzero.size
    r_plus = float(np.sum(ranks[nonzero > 0]))
    has_ties = bool(np.any(sizes > 1))
    if n > 50 or ((has_ties or m < n) and n > 13):
        count = float(m)
        mean = count * (count + 1.0) * 0.25
        spread = count * (count + 1.0) * (2.0 * count + 1.0)
        tie_correct = float(np.sum(sizes.astype(np.float64) ** 3 - sizes))
        with np.errstate(divide="ignore", invalid="ignore"):
            se = np.sqrt((spread - tie_correct / 2) / 24)
            z = (r_plus - mean) / se
        return float(2 * special.ndtr(-np.abs(z))), "asymptotic"
    if not has_ties and m == n:
        pmf = _signed_rank_pmf(m)
        centre = m * (m + 1) / 4
        k_low, k_high = math.floor(r_plus), math.ceil(r_plus)
        sf = pmf[k_low:].sum() if k_low <= centre else 1 - pmf[:k_low].sum()
        cdf = pmf[: k_high + 1].sum() if k_high <= centre else 1 - pmf[k_high + 1 :].sum()
        return float(np.clip(2 * min(sf, cdf), 0, 1)), "exact"
    # ties or zeros, n <= 13: every sign vector of the non-zero differences (zeros only double
    # each count, so the shares are those of all 2**n vectors)
    masks = np.arange(2**m, dtype=np.int64)
    positive = ((masks[:, None] >> np.arange(m)) & 1) == 0
    null = positive.astype(np.float64) @ ranks if m else np.zeros(1)
    gamma = abs(np.finfo(np.float64).eps * 100 * r_plus)
    less = np.count_nonzero(null <= r_plus + gamma) / null.size
    greater = np.count_nonzero(null >= r_plus - gamma) / null.size
    return float(np.clip(min(less, greater) * 2, 0, 1)), "permutation"


def randomization(d: np.ndarray, permutations: int, seed: int) -> tuple[float, str]:
    """Two-sided p-value of Fisher's sign-flip test of the mean difference and its method
    (``exact`` or ``monte-carlo``); see :mod:`mobeval.compare`."""
    p, method = randomizations(np.asarray(d, dtype=np.float64)[:, None], permutations, seed)
    return float(p[0]), method[0]


def randomizations(d: np.ndarray, permutations: int, seed: int) -> tuple[np.ndarray, list[str]]:
    """:func:`randomization` of every column of ``d`` (float64[n, m]): the exact test per column
    where it applies, the Monte-Carlo one for the others together (the same numbers as one by
    one: every column sees the same sign vectors)."""
    d = np.ascontiguousarray(d, dtype=np.float64)
    columns = d.shape[1]
    pvalues = np.full(columns, math.nan)
    methods = ["none"] * columns
    thresholds = np.zeros(columns)
    sampled = []
    for c in range(columns):
        nonzero = np.ascontiguousarray(d[d[:, c] != 0, c])
        m = nonzero.size
        if m == 0:
            pvalues[c], methods[c] = (1.0 if d.shape[0] else math.nan), "exact"
            continue
        # the observed sum over the non-zero values is the sum over all (adding 0.0 is exact)
        thresholds[c] = abs(resampling.flip_sum(nonzero, 0)) - FLIP_TOLERANCE * float(
            np.max(np.abs(nonzero))
        )
        if m <= EXACT_MAX_NONZERO or (m < 62 and 2**m <= permutations):
            count = resampling.signflip_count_exact(nonzero, thresholds[c])
            pvalues[c], methods[c] = float(count) / float(2**m), "exact"
        elif permutations >= 1:
            sampled.append(c)
    if sampled:
        counts = resampling.signflip_count_mc(
            np.ascontiguousarray(d[:, sampled]), permutations, seed, thresholds[sampled]
        )
        for c, count in zip(sampled, counts, strict=True):
            pvalues[c], methods[c] = (count + 1) / (permutations + 1), "monte-carlo"
    return pvalues, methods


def cohen_dz(d: np.ndarray) -> float:
    """Paired Cohen's d_z (Cohen 1988, eq. 2.3.5; Lakens 2013, eq. 6): ``mean(d) / sd(d)``, the
    standard deviation with ``ddof=1``; NaN with fewer than two units or every difference equal
    (0/0), +-inf when they are equal and not zero."""
    return cohen_dz_moments(*moments(d))


def cohen_dz_moments(n: int, total: float, squares: float) -> float:
    """:func:`cohen_dz` of n differences from their :func:`moments`, as NumPy's ``np.mean(d) /
    np.std(d, ddof=1)``: ``(total / n) / sqrt(squares / (n - 1))``."""
    if n < 2:
        return math.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(total) / n / np.sqrt(np.float64(squares) / (n - 1)))


def rank_biserial(d: np.ndarray) -> float:
    """The matched-pairs rank-biserial correlation of the Wilcoxon test, by Kerby's (2014) simple
    difference formula: ``r = (R+ - R-) / (R+ + R-)``, the rank sums of the positive and the
    negative differences, ranked as :func:`wilcoxon` ranks them (zero differences dropped, tied
    ``|d|`` given their average rank); in [-1, 1], positive when the model is ahead; NaN when
    every difference is zero."""
    return rank_biserial_ranked(*signed_ranks(np.asarray(d, dtype=np.float64))[:2])


def rank_biserial_ranked(nonzero: np.ndarray, ranks: np.ndarray) -> float:
    """:func:`rank_biserial` of the non-zero differences ranked by :func:`signed_ranks`."""
    if nonzero.size == 0:
        return math.nan
    r_plus = float(np.sum(ranks[nonzero > 0]))
    r_minus = float(np.sum(ranks[nonzero < 0]))
    return (r_plus - r_minus) / (r_plus + r_minus)


def tukey_hsd(
    counts: np.ndarray, means: np.ndarray, squares: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Tukey's HSD p-values of every pair of k groups (k x k, symmetric, ones on the diagonal)
    from each group's size ``n_i``, mean and sum of squared deviations from its mean: the
    one-way ANOVA design of ``scipy.stats.tukey_hsd`` and statsmodels' ``pairwise_tukeyhsd``
    (which ranx's ``compare(stat_test="tukey")`` calls on the per-query scores), to which the
    pairing of the units is unknown:

    ``MSE = sum_i squares_i / (N - k)``, ``N = sum_i n_i``;
    ``q_ij = |mean_i - mean_j| / sqrt(MSE / 2 (1/n_i + 1/n_j))``;
    ``p_ij = P(Q_{k, N-k} >= q_ij)``, the studentized range distribution
    (``scipy.stats.studentized_range.sf``).

    Sums rather than the values, so that a caller holds one column at a time.

    Also returns, k x k, the pairs whose p-value scipy's numerical integration of the
    studentized range flagged (``IntegrationWarning``: "probably divergent, or slowly
    convergent"; seen for q near 0 below N - k = 100,000, where scipy integrates a double
    integral): the p-values are scipy's, as ``scipy.stats.tukey_hsd`` returns them, and the
    warning is left to the caller to say once rather than printed per pair."""
    counts = np.asarray(counts, dtype=np.float64)
    means = np.asarray(means, dtype=np.float64)
    k = counts.size
    df = float(np.sum(counts)) - k
    with np.errstate(divide="ignore", invalid="ignore"):
        mse = float(np.sum(squares)) / df
        normalize = 1.0 / counts + 1.0 / counts[:, None]
        q = np.abs(means[:, None] - means) / np.sqrt(normalize * mse / 2.0)
    pvalues = np.ones((k, k))
    flagged = np.zeros((k, k), dtype=bool)
    upper = np.triu_indices(k, 1)
    if k >= 2 and df > 0:
        pvalues[upper], flagged[upper] = _studentized_range_sf(q[upper], k, df)
        pvalues.T[upper], flagged.T[upper] = pvalues[upper], flagged[upper]
    else:
        pvalues[upper] = pvalues.T[upper] = math.nan
    return pvalues, flagged


def _studentized_range_sf(q: np.ndarray, k: int, df: float) -> tuple[np.ndarray, np.ndarray]:
    """``scipy.stats.studentized_range.sf(q, k, df)`` and, per value, whether scipy's
    integration warned (``IntegrationWarning``, kept from the terminal; any other warning passes
    on); the flagged values are found one at a time, only when there are some (the same bits:
    scipy integrates each value on its own)."""
    import warnings

    from scipy import integrate, stats

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", integrate.IntegrationWarning)
        pvalues = np.asarray(stats.studentized_range.sf(q, k, df), dtype=np.float64)
    integration = False
    for warning in caught:
        if issubclass(warning.category, integrate.IntegrationWarning):
            integration = True
        else:
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    if not integration or q.size == 1:
        return pvalues, np.full(q.shape, integration)
    return pvalues, np.array([_studentized_range_sf(value[None], k, df)[1][0] for value in q])
