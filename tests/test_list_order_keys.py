"""The integer keys of ids compared as text (:func:`mobeval.kernels.list_order.text_keys`)
against Python's order of the ids' decimal strings: a sort by the keys is trec_eval's ``strcmp``
order of the ids (``"9" > "10"``, a prefix below its extensions, ``"-"`` below the digits); an
id of 17 or more digits gets no key (the caller compares it as text)."""

import numpy as np
import pytest

from mobeval.kernels.list_order import TEXT_DESC, list_order, text_keys

BIG = 10**17 - 1  # the largest magnitude with a key
EDGES = [0, 1, 9, 10, 11, 19, 2, 20, 100, 1000, 10**16, BIG, 99, 990, 9900]
EDGES += [-x for x in EDGES if x]


def _keys(ids):
    keys = np.empty(len(ids), dtype=np.int64)
    assert text_keys(np.array(ids, dtype=np.int64), 0, len(ids), keys)
    return keys


@pytest.mark.parametrize("seed", range(3))
def test_keys_order_as_the_ids_text(seed):
    rng = np.random.default_rng(seed)
    digits = rng.integers(1, 18, 3000)
    ids = [int(rng.integers(0, 10**d)) * int(rng.choice([-1, 1])) for d in digits] + EDGES
    keys = _keys(ids)
    by_text = sorted(range(len(ids)), key=lambda i: (str(ids[i]), i))
    by_key = sorted(range(len(ids)), key=lambda i: (keys[i], i))
    assert by_key == by_text
    for i, j in zip(by_text, by_text[1:], strict=False):  # equal keys exactly for equal ids
        assert (keys[i] == keys[j]) == (ids[i] == ids[j])


@pytest.mark.parametrize("long_id", [10**17, -(10**17), 2**63 - 1, -(2**63)])
def test_no_key_for_an_id_of_17_digits(long_id):
    ids = np.array([5, long_id, 7], dtype=np.int64)
    assert not text_keys(ids, 0, 3, np.empty(3, dtype=np.int64))
    assert text_keys(ids, 2, 1, np.empty(1, dtype=np.int64))  # a slice without it has keys


def test_keyed_and_text_compared_lists_in_the_same_order():
    """Lists of short ids (sorted by their keys) beside lists holding a long id (compared as
    text), all in Python's order of the ids' text."""
    rng = np.random.default_rng(7)
    lengths = [40, 40, 12, 12]
    offsets = np.array([0, 40, 80, 92, 104], dtype=np.int64)
    ids = rng.choice(np.array(EDGES + list(range(-30, 300)), dtype=np.int64), 104)
    ids[40], ids[92] = 2**63 - 1, -(10**17)  # the second and fourth lists compared as text
    scores = np.floor(rng.random(104) * 3) / 3
    rows = list_order(offsets, scores, ids, TEXT_DESC, True)[0]
    for u in range(len(lengths)):
        lo, hi = offsets[u], offsets[u + 1]
        want = sorted(range(lo, hi), key=lambda r: (-scores[r], _desc(str(ids[r])), r))
        assert list(rows[lo:hi]) == want


def _desc(text):
    """A sort key that orders strings descending (their code points negated, then a terminator
    above every code point, so a prefix comes after its extensions)."""
    return [-ord(c) for c in text] + [1]
