"""The integer codes and limits the kernels take, as plain data: no Numba, no NumPy.

The metric names, tie policies and conventions of :mod:`mobeval.metrics` map onto these codes
(``"id_asc"`` -> :data:`ID_ASC`, ``"ndcg"`` -> :data:`NDCG`), so that they, ``--help`` and option
checks read them without loading the kernels (issue 25, start-up); the kernels of
:mod:`mobeval.kernels.ranks`, :mod:`mobeval.kernels.topk` and :mod:`mobeval.kernels.geobleu`
take the same names from here.
"""

# Tie policies of a sample's candidates (:mod:`mobeval.kernels.ranks`: what each one means).
ID_ASC = 0
ID_DESC_STR = 1
INPUT = 2
OPTIMISTIC = 3
PESSIMISTIC = 4
AVERAGE = 5
ID_ASC_STR = 6
RANX = 7
RANX_COMPARABLE = 8
RANX_DICT = 9

# Top-K metrics of a single true item per sample (:mod:`mobeval.kernels.topk`: the formulas).
ACC = 0
PRECISION = 1
RECALL = 2
F1 = 3
MRR = 4  # with k = 0: no cutoff
MAP = 5
NDCG = 6
NO_CUTOFF = 0
#: Every metric code the top-K kernel computes; any other is refused before the kernel runs.
CODES = frozenset({ACC, PRECISION, RECALL, F1, MRR, MAP, NDCG})

#: Largest squared-distance lookup table of GEO-BLEU's proximities (entries); beyond that, each
#: proximity is computed directly (:mod:`mobeval.kernels.geobleu`).
MAX_TABLE = 1 << 22
#: Largest n-gram order N of GEO-BLEU (a day has at most 48 half-hour steps; this bounds the
#: buffers).
MAX_ORDER = 128
