"""Paired comparison of models scored on the same units: ``mobeval compare OUT``.

>>> from mobeval.compare import compare
>>> table = compare("out/nextloc_sample", baseline="popularity")   # a polars DataFrame
>>> compare("out/nextloc_sample", write=True)   # also OUT/compare/city=<c>/part-0.parquet

For every city of OUT, every metric whose city value is the mean of its per-unit values, and every
pair of ``pairs`` (every pair, each model against the baseline, or a list), the per-unit values
are paired by the unit key
(samples, uids, uid-days, users, logits rows) and the differences ``d = model - baseline`` go
through the chosen tests. One concern per module:

* :mod:`~mobeval.compare.results`: OUT's complete results (:class:`~mobeval.compare.results.\
  OutputFolder`), the options that define their metrics;
* :mod:`~mobeval.compare.pairing`: the unit keys, each model's side, the common units;
* :mod:`~mobeval.compare.significance`: the tests, on NumPy arrays of differences;
* :mod:`~mobeval.compare.intervals`: the bootstrap interval;
* :mod:`~mobeval.compare.corrections`: Holm, Bonferroni, Benjamini-Hochberg / -Yekutieli, over
  the family chosen;
* :mod:`~mobeval.compare.comparison`: :func:`compare` itself, its options, ``OUT/compare``;
* :mod:`~mobeval.compare.leaderboard`: the models ranked per metric with compact letters;
* :mod:`~mobeval.compare.printing`: the tables ``mobeval compare`` prints.

Conventions (README "Compare models"):

* ``paired-t``: ``scipy.stats.ttest_rel(baseline, model)``, two-sided: ``t = mean(d) /
  sqrt(var(d, ddof=1) / n)``, Student's t with ``n - 1`` degrees of freedom; every difference zero
  gives NaN (0/0), as scipy.
* ``wilcoxon``: ``scipy.stats.wilcoxon(baseline, model)`` with its defaults: zero differences
  dropped (``zero_method="wilcox"``), average ranks for tied ``|d|``, no continuity correction,
  ``method="auto"``: the exact null distribution when n <= 50 with no ties and no zeros, the exact
  sign-flip distribution of the rank sum when n <= 13 otherwise, else the normal approximation with
  the tie correction (n counts the zeros in these thresholds, as scipy).
* ``randomization``: Fisher's sign-flip test of the mean difference, two-sided: the share of sign
  vectors ``s`` with ``|sum(s d)| >= |sum(d)| - 1e-9 max|d|`` (the tolerance absorbs rounding, so
  that mathematically equal sums count). A zero difference changes no sum. Every sign vector of
  the m non-zero differences when m <= 16 (or ``2**m <= permutations``): the exact p = count /
  2**m, the share among all 2**n vectors; otherwise ``permutations`` random sign vectors of all n
  units (shared by the metrics paired on the same units), p = (count + 1) / (permutations + 1).
* Bootstrap: ``resamples`` resamples of the units with replacement; the percentile interval of the
  resampled mean differences (``np.percentile``, linear interpolation), as
  ``scipy.stats.bootstrap(method="percentile")``.
* Random numbers: counter-based streams per (seed, resample index) in
  :mod:`mobeval.kernels.resampling`, so a seed gives the same numbers for any thread count; the
  units are in unit-key order, so the numbers do not depend on the row order of the files.
* ``tukey``: Tukey's HSD over every model of the city, the one-way ANOVA design of
  ``scipy.stats.tukey_hsd`` / statsmodels' ``pairwise_tukeyhsd`` (and of ranx's
  ``compare(stat_test="tukey")``, which calls scipy's on the per-query scores): the pairing of the
  units unused (:func:`~mobeval.compare.significance.tukey_hsd`), on the units every model has.
* ``ttest-ind`` and ``ranksums``: ClayRS's ``Ttest`` and ``Wilcoxon``
  (``clayrs/evaluation/statistical_test.py``), ``scipy.stats.ttest_ind(baseline, model)`` (pooled
  variance) and ``scipy.stats.ranksums(baseline, model)`` on the two models' values of the units
  compared: **unpaired** tests, whose spread includes the spread between units, which the paired
  tests cancel (:func:`~mobeval.compare.significance.pooled_t`,
  :func:`~mobeval.compare.significance.rank_sum`); for ClayRS users who reproduce its numbers.
* Effect sizes: paired Cohen's d_z ``mean(d) / sd(d)`` (ddof=1), and beside Wilcoxon the
  matched-pairs rank-biserial correlation ``(R+ - R-) / (R+ + R-)`` (Kerby 2014), ranked as the
  Wilcoxon test ranks (zeros dropped, average ranks of ties).
* Corrections (``holm``, ``bonferroni``, ``bh``, ``by``, ``none``) over each family: every
  p-value of a city (``family="all"``: metrics x pairs x tests) or those of one metric
  (``"metric"``); a NaN p-value is left out of the family and stays NaN; Tukey's p-values,
  already adjusted over the metric's pairs, are left as they are.
"""

from mobeval.lazy import lazy_exports

#: Each public name, by the module of this package that defines it, imported on first use: the
#: command line prints every family's tables with :mod:`~mobeval.compare.printing`, which loads
#: none of the tests.
__all__, __getattr__, __dir__ = lazy_exports(
    "mobeval.compare",
    {
        "mobeval.compare.comparison": (
            "CORRECTED",
            "DEFAULT_TESTS",
            "SCHEMA",
            "checked_options",
            "compare",
        ),
        "mobeval.compare.corrections": ("CORRECTIONS", "FAMILIES", "adjust"),
        "mobeval.compare.intervals": ("bootstrap_ci", "bootstrap_cis"),
        "mobeval.compare.leaderboard": ("compact_letters", "leaderboard"),
        "mobeval.compare.pairing": ("UNITS", "unit_refused"),
        "mobeval.compare.printing": ("print_comparison", "whole_tables"),
        "mobeval.compare.results": ("COUNT_ROWS",),
        "mobeval.compare.runs": ("fold_rows",),
        "mobeval.compare.names": ("P_COLUMNS", "TESTS"),
        "mobeval.compare.significance": (
            "cohen_dz",
            "paired_t",
            "randomization",
            "randomizations",
            "rank_biserial",
            "tukey_hsd",
            "wilcoxon",
        ),
    },
)
