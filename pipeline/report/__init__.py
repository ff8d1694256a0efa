"""``mobeval report OUT``: the results of an output folder as LaTeX, Markdown or HTML.

>>> from mobeval.report import Report
>>> report = Report("out/nextloc_sample", baseline="markov")
>>> report.save("out/nextloc_sample/report/report.html")   # or .md, .tex
>>> report.to_markdown()                                    # a string; plots need a folder

Per city: one table per cutoff grid (the metrics @1/@5/@10 together, the metrics without a
cutoff together), one row per metric and one column per model, the best value per metric in
bold (the lowest for dtw, mse, mae, rmse, cross_entropy), significance markers against the
baseline only from a test of exactly the values shown (``OUT/compare`` when it compared the
manifest's current results, else computed with :func:`mobeval.compare.compare` when
``compute_compare``; ``°`` marks a value not tested), models scored under different options
shown as separate groups, and improvement columns as in the seed guide: the difference in points
(percentage points for rates) and the relative change in %. Then plots (matplotlib, the
``report`` extra): metric@k curves, the CDF of per-unit values, the city GEO-BLEU per day
(trajectories), a paired scatter of each model's per-unit values against the baseline's; and a
methods section generated from the manifest: every metric's definition, formula and the
resolved parameters of this run (:mod:`mobeval.report.methods`).

Per-unit data is read one metric column at a time (plus the unit keys for the scatter), so memory
is bounded by one column per model, not by the number of metrics.

One concern per module:

* :mod:`~mobeval.report.document`: :class:`Report` (what each city holds, its cells, its
  methods section, its file written whole), :func:`write_reports`;
* :mod:`~mobeval.report.options`: the report's choices, defined once for every face;
* :mod:`~mobeval.report.city`: what a report shows of one city, as data;
* :mod:`~mobeval.report.tables`: the tables and cells every format shares;
* :mod:`~mobeval.report.markdown`, :mod:`~mobeval.report.html`, :mod:`~mobeval.report.latex`:
  one module per output format;
* :mod:`~mobeval.report.plots`: the plots (matplotlib);
* :mod:`~mobeval.report.methods`: what each metric is, the methods section's text;
* :mod:`~mobeval.report.job`: a job file's ``[report]``.
"""

from mobeval.lazy import lazy_exports

#: Each public name, by the module of this package that defines it, imported on first use, so
#: that ``mobeval report --help`` (which reads :mod:`~mobeval.report.options`) loads no Polars.
__all__, __getattr__, __dir__ = lazy_exports(
    "mobeval.report",
    {
        "mobeval.report.document": ("FORMATS", "Report", "parse_formats", "write_reports"),
        "mobeval.report.plots": ("EXTRA_MESSAGE", "ReportExtraMissing", "check_plotting"),
        "mobeval.report.tables": ("TEST_NAMES",),
    },
)
