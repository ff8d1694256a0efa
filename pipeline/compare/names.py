"""The tests' names and their p-value columns, plain data: read by the tests
(:mod:`mobeval.compare.significance`), the comparison's tables and the report's options, whose
``--help`` loads no kernel."""

TESTS = ("paired-t", "wilcoxon", "randomization", "tukey", "ttest-ind", "ranksums")
#: p-value column of each test.
P_COLUMNS = {
    "paired-t": "p_t",
    "wilcoxon": "p_wilcoxon",
    "randomization": "p_randomization",
    "tukey": "p_tukey",
    "ttest-ind": "p_ttest_ind",
    "ranksums": "p_ranksums",
}
#: The tests that ignore the pairing (ClayRS's): they compare the two models' values on the units
#: both share as two independent samples.
UNPAIRED_TESTS = ("ttest-ind", "ranksums")
