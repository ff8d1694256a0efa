"""The peers' test cases as plain data (read by ``test_peer_suites.py`` and by the private
script that asked the peers for ``tests/golden/peer_suites/expected.json``)."""

# ir_measures' tests: the qrels and runs as its test files write them.
QRELS_A = """\
0 0 D0 0
0 0 D1 1
0 0 D2 1
0 0 D3 2
0 0 D4 0
1 0 D0 1
1 0 D3 2
1 0 D5 2
"""
RUN_A = """\
0 0 D0 1 0.8 run
0 0 D2 2 0.7 run
0 0 D1 3 0.3 run
0 0 D3 4 0.4 run
0 0 D4 5 0.1 run
1 0 D1 1 0.8 run
1 0 D3 2 0.7 run
1 0 D4 3 0.3 run
1 0 D2 4 0.4 run
"""
QRELS_ONE = """\
0 0 D0 0
0 0 D1 1
0 0 D2 1
0 0 D3 2
0 0 D4 0
"""
RUN_ONE = """\
0 0 D0 1 0.8 run
0 0 D2 2 0.7 run
0 0 D1 3 0.3 run
0 0 D3 4 0.4 run
0 0 D4 5 0.1 run
"""
RUN_ONE_JUDGED = """\
0 0 D1 3 0.3 run
0 0 D3 4 0.4 run
0 0 D4 5 0.1 run
"""
RUN_B = """\
0 0 D0 1 0.8 run
0 0 D2 2 0.7 run
0 0 D1 3 0.3 run
0 0 D3 4 0.4 run
0 0 D4 5 0.1 run
1 0 D1 1 0.8 run
1 0 D4 2 0.7 run
1 0 D3 3 0.3 run
1 0 D2 4 0.4 run
"""
QRELS_B = """\
0 0 D0 0
0 0 D1 1
0 0 D2 2
0 0 D3 2
0 0 D4 0
1 0 D0 1
1 0 D3 2
1 0 D5 0
"""
QRELS_NEGATIVE = """\
0 0 D0 1
0 0 D1 -1
0 0 D2 0
0 0 D3 2
0 0 D4 0
1 0 D0 1
1 0 D3 2
1 0 D4 -1
1 0 D5 0
"""

#: case -> (qrels, run), each from the ir_measures test named in the comment.
CASES = {
    # test_pytrec_eval.py test_NumRet, test_NumQ; test_judged.py; test_providers.py
    "numret": (QRELS_A, RUN_A),
    # test_pytrec_eval.py test_NumRel
    "numrel": (QRELS_A.replace("1 0 D5 2", "1 0 D5 0"), RUN_A),
    # test_pytrec_eval.py test_Success, test_SetP, test_SetR, test_SetAP, test_SetF
    "set": (QRELS_B, RUN_B),
    # test_pytrec_eval.py test_IPrec
    "iprec": (QRELS_B.replace("0 0 D0 0", "0 0 D0 1"), RUN_B),
    # test_pytrec_eval.py test_infAP, test_nDCG
    "negative": (QRELS_NEGATIVE, RUN_B),
    # test_pytrec_eval.py test_P
    "p": (
        "0 0 D0 -1\n0 0 D1 1\n0 0 D3 2\n0 0 D4 1\n1 0 D0 1\n1 0 D3 0\n1 0 D4 -1\n",
        RUN_A.replace("1 0 D3 2 0.7", "1 0 D0 2 0.7").replace("1 0 D4 3 0.3", "1 0 D3 3 0.3"),
    ),
    # test_pytrec_eval.py test_judged_only: the run, and the run without its unjudged D2 (and
    # D0, judged -1, which trec_eval's -J drops as unjudged)
    "judged_only": ("0 0 D0 -1\n0 0 D1 1\n0 0 D3 2\n0 0 D4 1\n", RUN_ONE),
    "judged_only_removed": ("0 0 D0 -1\n0 0 D1 1\n0 0 D3 2\n0 0 D4 1\n", RUN_ONE_JUDGED),
    # test_measures.py test_P, test_measures (one query)
    "one_query": (QRELS_ONE, RUN_ONE),
    # test_providers.py test_empty: the qrels of query 0 only
    "partial_qrels": (QRELS_ONE, RUN_A),
    # score ties (Judged@k and RR@k rank them by docno ascending, trec_eval's measures
    # descending): made here
    "ties": (
        "a 0 D1 1\na 0 D3 2\na 0 D5 -1\nb 0 D2 1\nb 0 D9 0\nc 0 D1 0\n",
        "a 0 D4 1 1.0 r\na 0 D1 2 1.0 r\na 0 D2 3 1.0 r\na 0 D3 4 0.5 r\na 0 D5 5 0.5 r\n"
        "b 0 D9 1 2.0 r\nb 0 D2 2 2.0 r\nb 0 D1 3 2.0 r\nc 0 D2 1 1.0 r\nc 0 D1 2 1.0 r\n",
    ),
    # test_aggregate.py test_P
    "aggregate": (QRELS_A, RUN_A + "1 0 D0 5 0.1 run\n"),
}
JUDGED_ONLY = ["P@4", "RR", "Rprec", "AP", "AP@4", "nDCG", "nDCG@4", "R@2", "SetP", "SetAP"]
JUDGED_ONLY += ["SetF", "Success@2", "IPrec@0.5"]
IR_MEASURES_TIES = ["RR", "RR@1", "RR@2", "RR(rel=2)@4", "nDCG@2", "P@1", "AP"]
IR_MEASURES_TIES += ["Judged", "Judged@1", "Judged@2", "Judged@4", "nDCG(gains={1: 3, 2: 1})@2"]
#: (case, measure as ir_measures writes it, the per-query values its test states or None,
#: the aggregate it states or None, its tolerance in decimal places)
IR_MEASURES = [
    ("numret", "NumRet", {"0": 5, "1": 4}, 9, 7),
    ("numret", "NumRet(rel=1)", {"0": 3, "1": 1}, 4, 7),
    ("numret", "NumRet(rel=2)", {"0": 1, "1": 1}, 2, 7),
    ("numret", "NumRet(rel=3)", {"0": 0, "1": 0}, 0, 7),
    ("numrel", "NumRel", {"0": 3, "1": 2}, 5, 7),
    ("set", "Success@2", {"0": 1, "1": 0}, 0.5, 7),
    ("set", "Success(rel=2)@2", {"0": 1, "1": 0}, 0.5, 7),
    ("set", "Success(rel=3)@2", {"0": 0, "1": 0}, 0, 7),
    ("set", "SetP(rel=1)", {"0": 0.6, "1": 0.25}, 0.425, 7),
    ("set", "SetRelP(rel=1)", {"0": 1.0, "1": 0.5}, 0.75, 7),
    ("set", "SetP(rel=2)", {"0": 0.4, "1": 0.25}, 0.325, 7),
    ("set", "SetRelP(rel=2)", {"0": 1.0, "1": 1.0}, 1.0, 7),
    ("set", "SetP(rel=3)", {"0": 0, "1": 0}, 0, 7),
    ("set", "SetR(rel=1)", {"0": 1.0, "1": 0.5}, 0.75, 7),
    ("set", "SetR(rel=2)", {"0": 1.0, "1": 1.0}, 1.0, 7),
    ("set", "SetR(rel=3)", {"0": 0, "1": 0}, 0, 7),
    ("set", "SetAP(rel=1)", {"0": 0.6, "1": 0.125}, 0.3625, 7),
    ("set", "SetAP(rel=2)", {"0": 0.4, "1": 0.25}, 0.325, 7),
    ("set", "SetAP(rel=3)", {"0": 0, "1": 0}, 0, 7),
    ("set", "SetF(rel=1)", {"0": 0.75, "1": 0.33333}, 0.5417, 4),
    ("set", "SetF(rel=1, beta=0.5)", {"0": 0.6923, "1": 0.3}, 0.49615, 4),
    ("set", "SetF(rel=1, beta=2.0)", {"0": 0.81818, "1": 0.375}, 0.59659, 4),
    ("set", "SetF(rel=3)", {"0": 0, "1": 0}, 0, 7),
    ("iprec", "IPrec@0.25", {"0": 1.0, "1": 0.25}, 0.625, 7),
    ("iprec", "IPrec@0.5", {"0": 1.0, "1": 0.25}, 0.625, 7),
    ("iprec", "IPrec@0.75", {"0": 1.0, "1": 0}, 0.5, 7),
    ("iprec", "IPrec(rel=2)@0.1", {"0": 0.6666666, "1": 0.25}, 0.4583, 4),
    ("iprec", "IPrec(rel=2)@0.25", {"0": 0.6666666, "1": 0.25}, 0.4583, 4),
    ("iprec", "IPrec(rel=2)@0.5", {"0": 0.6666666, "1": 0.25}, 0.4583, 4),
    ("iprec", "IPrec(rel=2)@0.75", {"0": 0.6666666, "1": 0.25}, 0.4583, 4),
    ("negative", "AP", {"0": 0.8333, "1": 0.125}, 0.47916666666666663, 4),
    ("negative", "infAP", {"0": 0.8333, "1": 0.1875}, 0.510416, 4),
    ("negative", "AP(rel=2)", {"0": 0.33333, "1": 0.25}, 0.2917, 4),
    ("negative", "infAP(rel=2)", {"0": 0.33333, "1": 0.375}, 0.3542, 4),
    ("negative", "nDCG", {"0": 0.76018, "1": 0.32739}, None, 4),
    ("negative", "nDCG@3", {"0": 0.76018, "1": 0.0}, None, 4),
    ("negative", "nDCG(gains={0:1,1:4})", {"0": 0.97177, "1": 0.14949}, None, 4),
    ("negative", "nDCG(gains={0:1,1:4})@3", None, None, 7),
    ("negative", "nDCG(gains={0: 0, 2: 5, 1: 3}, judged_only=True)@2", None, None, 7),
    ("p", "P@4", {"0": 0.5, "1": 0.25}, None, 4),
    ("p", "P(judged_only=True)@4", {"0": 0.75, "1": 0.25}, None, 4),
    ("aggregate", "P@5", None, 0.5, 7),
    # test_judged.py (the judged provider)
    ("numret", "Judged", {"0": 1.0, "1": 1.0 / 4.0}, None, 4),
    ("numret", "Judged@1000", {"0": 1.0, "1": 1.0 / 4.0}, None, 4),
    ("numret", "Judged@10", {"0": 1.0, "1": 1.0 / 4.0}, None, 4),
    ("numret", "Judged@3", {"0": 1.0, "1": 1.0 / 3.0}, None, 4),
    ("numret", "Judged@1", {"0": 1.0, "1": 0.0}, None, 4),
    # test_providers.py test_empty, "run but partial qrels"
    ("partial_qrels", "Judged@5", {"0": 1.0}, 1.0, 7),
    ("partial_qrels", "RR@5", {"0": 0.5}, 0.5, 7),
    ("partial_qrels", "P@5", {"0": 0.6}, 0.6, 7),
]
#: test_ranx.py test_P (one query): the values ir_measures' ranx provider states, which
#: pytrec_eval's agree with.
RANX_PROVIDER = {
    "P@5": 0.6,
    "P(rel=2)@5": 0.2,
    "SetP": 0.6,
    "R@5": 1.0,
    "R(rel=2)@5": 1.0,
    "R@2": 0.3333333333333333,
    "R(rel=2)@2": 0.0,
    "SetR": 1.0,
    "RR": 0.5,
    "RR(rel=2)": 0.3333333333333333,
    "AP": 0.6388888888888888,
    "AP(rel=2)": 0.3333333333333333,
    "AP@10": 0.6388888888888888,
    "AP(rel=2)@10": 0.3333333333333333,
    "AP@2": 0.16666666666666666,
    "AP(rel=2)@2": 0.0,
    "Success@10": 1.0,
    "Success(rel=2)@10": 1.0,
    "Success@2": 1.0,
    "Success(rel=2)@2": 0.0,
    "NumRet(rel=1)": 3.0,
    "nDCG": 0.6584645692843067,
    "nDCG@5": 0.6584645692843067,
    "nDCG@2": 0.23981246656813146,
    "Rprec": 0.6666666666666666,
    "Rprec(rel=2)": 0.0,
    "RR@10": 0.5,
    "RR(rel=2)@10": 0.3333333333333333,
    "RR@2": 0.5,
    "RR(rel=2)@2": 0.0,
}
#: test_measures.py test_P and test_measures (one query): the measures it prints or compares
#: across providers, without a value: checked against ir_measures' own values.
ONE_QUERY = (
    [f"P(rel={r})@{k}" for r in (1, 2) for k in (1, 5, 10, 20, 50, 100)]
    + [f"R(rel={r})@{k}" for r in (1, 2) for k in (1, 5, 10, 20, 50, 100)]
    + [f"{m}(rel={r})" for m in ("RR", "Rprec", "AP", "Bpref") for r in (1, 2)]
    + [f"AP(rel={r})@{k}" for r in (1, 2) for k in (1, 2, 5, 10, 20, 50, 100)]
    + ["nDCG(dcg='log2')"]
    + [f"nDCG(dcg='log2')@{k}" for k in (1, 2, 5, 10, 20, 50, 100)]
    + ["Bpref", "NumRet(rel=2)"]
    + [f"RR(rel={r})@{k}" for r in (1, 2) for k in (1, 5, 10, 20, 50, 100)]
    + [f"Judged@{k}" for k in (1, 5, 10, 20, 50, 100)]
)
IR_MEASURES += [
    ("one_query", name, None if name not in RANX_PROVIDER else {"0": RANX_PROVIDER[name]}, None, 7)
    for name in dict.fromkeys(ONE_QUERY + list(RANX_PROVIDER))
]
IR_MEASURES += [("ties", name, None, None, 7) for name in IR_MEASURES_TIES]

# pytrec_eval's tests (tests/pytrec_eval_tests.py): its qrels (terrierteam's adds "q10": {}, a
# query without judgments: no qrels line), runs as dicts written here one line per entry.
PYTREC_QRELS = "q1 0 d1 0\nq1 0 d2 1\nq1 0 d3 0\nq2 0 d2 1\nq2 0 d3 1\n"
PYTREC_RUNS = {
    "d2_third": "q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 0.0 r\nq1 Q0 d3 3 1.5 r\n",
    "d2_first": "q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 2.0 r\nq1 Q0 d3 3 1.5 r\n",
    "d2_second": "q1 Q0 d1 1 4.0 r\nq1 Q0 d2 2 2.0 r\nq1 Q0 d3 3 1.5 r\n",
    "q2_unjudged_d1": "q2 Q0 d1 1 1.0 r\nq2 Q0 d2 2 0.0 r\nq2 Q0 d3 3 1.5 r\n",
    "q10": "q2 Q0 d1 1 1.0 r\nq2 Q0 d2 2 0.0 r\nq2 Q0 d3 3 1.5 r\nq10 Q0 d1 1 1.0 r\n",
}
#: (run, the measures pytrec_eval is asked for, judged_docs_only_flag, the values its test
#: states: {query: {measure: value}}), in the order of its tests.
PYTREC_EVAL = [
    ("d2_third", ["map", "ndcg"], False, {"q1": {"ndcg": 0.5}}),
    ("d2_first", ["map", "ndcg"], False, {"q1": {"ndcg": 1.0}}),
    ("d2_second", ["map", "ndcg"], False, {"q1": {"ndcg": 0.6309297535714575}}),
    ("q2_unjudged_d1", ["map", "ndcg"], False, {"q2": {"ndcg": 0.9197207891481876}}),
    ("q2_unjudged_d1", ["map", "ndcg"], True, {"q2": {"ndcg": 1.0}}),
    ("q10", ["map", "ndcg"], True, {"q2": {"ndcg": 1.0}}),  # and no q10
    ("d2_third", ["ndcg_cut.3"], False, {"q1": {"ndcg_cut_3": 0.5}}),
    ("d2_first", ["ndcg_cut.1"], False, {"q1": {"ndcg_cut_1": 1.0}}),
    (
        "d2_third",
        ["ndcg_cut.1,2,3,1000"],
        False,
        {"q1": {"ndcg_cut_3": 0.5, "ndcg_cut_2": 0.0, "ndcg_cut_1": 0.0, "ndcg_cut_1000": 0.5}},
    ),
]
#: test_measure_params: the measures asked for and the names pytrec_eval returns. Its list also
#: asks for ``ndcg_cut`` (whose default cutoffs pytrec_eval drops once another entry names
#: ndcg_cut's) and ``P`` (its default cutoffs): left out, docs/measures.md says why.
PYTREC_PARAMS = (
    ["ndcg_cut.1,4", "ndcg_cut_20,4", "ndcg_cut_15", "recall.1000"],
    {"ndcg_cut_1", "ndcg_cut_4", "ndcg_cut_15", "ndcg_cut_20", "recall_1000"},
)

#: test_nicknames: the measures pytrec_eval returns per query for each set name.
PYTREC_NICKNAMES = {
    "all_trec": [
        "11pt_avg",
        "G",
        "P_10",
        "P_100",
        "P_1000",
        "P_15",
        "P_20",
        "P_200",
        "P_30",
        "P_5",
        "P_500",
        "Rndcg",
        "Rprec",
        "Rprec_mult_0.20",
        "Rprec_mult_0.40",
        "Rprec_mult_0.60",
        "Rprec_mult_0.80",
        "Rprec_mult_1.00",
        "Rprec_mult_1.20",
        "Rprec_mult_1.40",
        "Rprec_mult_1.60",
        "Rprec_mult_1.80",
        "Rprec_mult_2.00",
        "binG",
        "bpref",
        "gm_bpref",
        "gm_map",
        "infAP",
        "iprec_at_recall_0.00",
        "iprec_at_recall_0.10",
        "iprec_at_recall_0.20",
        "iprec_at_recall_0.30",
        "iprec_at_recall_0.40",
        "iprec_at_recall_0.50",
        "iprec_at_recall_0.60",
        "iprec_at_recall_0.70",
        "iprec_at_recall_0.80",
        "iprec_at_recall_0.90",
        "iprec_at_recall_1.00",
        "map",
        "map_cut_10",
        "map_cut_100",
        "map_cut_1000",
        "map_cut_15",
        "map_cut_20",
        "map_cut_200",
        "map_cut_30",
        "map_cut_5",
        "map_cut_500",
        "ndcg",
        "ndcg_cut_10",
        "ndcg_cut_100",
        "ndcg_cut_1000",
        "ndcg_cut_15",
        "ndcg_cut_20",
        "ndcg_cut_200",
        "ndcg_cut_30",
        "ndcg_cut_5",
        "ndcg_cut_500",
        "ndcg_rel",
        "num_nonrel_judged_ret",
        "num_q",
        "num_rel",
        "num_rel_ret",
        "num_ret",
        "recall_10",
        "recall_100",
        "recall_1000",
        "recall_15",
        "recall_20",
        "recall_200",
        "recall_30",
        "recall_5",
        "recall_500",
        "recip_rank",
        "relative_P_10",
        "relative_P_100",
        "relative_P_1000",
        "relative_P_15",
        "relative_P_20",
        "relative_P_200",
        "relative_P_30",
        "relative_P_5",
        "relative_P_500",
        "relstring",
        "runid",
        "set_F",
        "set_P",
        "set_map",
        "set_recall",
        "set_relative_P",
        "success_1",
        "success_10",
        "success_5",
        "utility",
    ],
    "official": [
        "P_10",
        "P_100",
        "P_1000",
        "P_15",
        "P_20",
        "P_200",
        "P_30",
        "P_5",
        "P_500",
        "Rprec",
        "bpref",
        "gm_map",
        "iprec_at_recall_0.00",
        "iprec_at_recall_0.10",
        "iprec_at_recall_0.20",
        "iprec_at_recall_0.30",
        "iprec_at_recall_0.40",
        "iprec_at_recall_0.50",
        "iprec_at_recall_0.60",
        "iprec_at_recall_0.70",
        "iprec_at_recall_0.80",
        "iprec_at_recall_0.90",
        "iprec_at_recall_1.00",
        "map",
        "num_q",
        "num_rel",
        "num_rel_ret",
        "num_ret",
        "recip_rank",
        "runid",
    ],
    "set": [
        "num_q",
        "num_rel",
        "num_rel_ret",
        "num_ret",
        "runid",
        "set_F",
        "set_P",
        "set_map",
        "set_recall",
        "set_relative_P",
        "utility",
    ],
}
