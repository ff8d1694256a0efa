"""``mobeval trec_eval QRELS RUN``: trec_eval's command line, measures and text output.

Options as trec_eval's: ``-m measure[.params]`` (repeatable; ``official`` when none, ``all_trec``,
``set``), ``-q`` (one line per query and measure before the summary), ``-c`` (average over every
query of the qrels, a query without results scoring 0), ``-l N`` (relevant: judged ``>= N``,
default 1), ``-M N`` (score at most the top N documents of each query), ``-J`` (drop documents
the qrels do not judge, or judge negatively, before scoring), ``-N N`` (documents in the
collection, for ``utility``), ``-Z FILE`` (values as z-scores against ``qid measure mean
stddev`` lines), ``-R qrels_jg`` (the qrels' second field names judgment groups). Output:
``measure`` left-justified in 22 characters, a tab, the query (``all`` for the summary), a tab,
the value (4 decimals; counts as integers).

A query's list: its run lines ordered by score descending, ties by docno descending (byte order),
the run's rank field ignored -- trec_eval's order, which the ``trec_eval`` recs preset copies.
Queries scored: those of the qrels with at least one run line (every qrels query with ``-c``).
A qrels query absent from the run is skipped without ``-c`` (trec_eval 9.0's behaviour).

Supported measures, in trec_eval's order: runid, num_q, num_ret, num_rel, num_rel_ret, map,
gm_map, Rprec, bpref, recip_rank, iprec_at_recall, P, relstring, recall, infAP, gm_bpref,
Rprec_mult, utility, 11pt_avg, binG, G, dcg, ideal_dcg, ndcg, ndcg_rel, Rndcg, ndcg_cut, map_cut,
relative_P, success, set_P, set_relative_P, set_recall, set_map, set_F, num_nonrel_judged_ret,
map_avgjg, P_avgjg, Rprec_mult_avgjg (``-R qrels_jg`` only), rbp, rbp_resid, unj. (Not: the
preference measures of ``-R prefs`` / ``-R qrels_prefs``.)

One concern per module: :mod:`~mobeval.metrics.trec` (the measures and their
parameters), :mod:`~mobeval.tasks.trec` (judging and per-query values),
:mod:`~mobeval.trec_eval.output` (the text, z-scores), :mod:`~mobeval.trec_eval.arguments` (the
options), :mod:`~mobeval.trec_eval.command` (the whole command).
"""

from mobeval.lazy import lazy_exports

#: Each public name, by the module that defines it, imported on first use: ``mobeval trec_eval
#: --help`` reads :mod:`~mobeval.trec_eval.arguments` alone.
__all__, __getattr__, __dir__ = lazy_exports(
    "mobeval.trec_eval",
    {
        "mobeval.metrics.trec": ("MEASURES", "resolve_measures"),
        "mobeval.tasks.trec": ("Options", "sequential_sum"),
        "mobeval.trec_eval.arguments": ("add_arguments",),
        "mobeval.trec_eval.command": ("main_from_args", "run_trec_eval"),
    },
)
