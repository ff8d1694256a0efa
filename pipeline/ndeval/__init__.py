"""``mobeval ndeval QRELS RUN``: the TREC Web track's ``ndeval`` (version 4.5), its novelty and
diversity measures over subtopic qrels (``topic subtopic docno judgment``), and ir_measures'
names for them.

Without ``-m``, a drop-in for ndeval: its options (``-alpha``, ``-beta``, ``-traditional``,
``-M``, ``-c``) and its CSV (``runid,topic,ERR-IA@5,...,strec@20``: a line per topic of the run,
then ``amean``, values ``%.6f``). With ``-m NAME`` (repeatable), ir_measures' measures as its
pyndeval provider computes them (``alpha_nDCG@20``, ``ERR_IA@10``, ``P_IA(rel=2)@5``, ``AP_IA``,
``NRBP(alpha=0.3,beta=0.8)``...), printed as ir_measures' command line prints them.

One concern per module: :mod:`~mobeval.tasks.diversity` (judging, per-topic values, by
:mod:`~mobeval.kernels.diversity`), :mod:`~mobeval.ndeval.measures` (ir_measures' names),
:mod:`~mobeval.ndeval.arguments` (the options), :mod:`~mobeval.ndeval.command` (read, score,
print).
"""

from mobeval.lazy import lazy_exports

#: Each public name, by the module that defines it, imported on first use: ``mobeval ndeval
#: --help`` reads :mod:`~mobeval.ndeval.arguments` alone.
__all__, __getattr__, __dir__ = lazy_exports(
    "mobeval.ndeval",
    {
        "mobeval.ndeval.arguments": ("add_arguments",),
        "mobeval.ndeval.command": ("main_from_args", "run_ndeval"),
    },
)
