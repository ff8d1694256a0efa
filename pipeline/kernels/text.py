"""Numba kernels over the bytes of text files: the fields of TREC run lines and byte strings
interned to integer codes (:func:`mobeval.io.trec_codes.read_run_codes`).

A block is a ``uint8`` array of whole lines, each ended by one LF. Fields are separated by runs
of C's ``isspace()`` bytes but the newline (space, tab, CR, FF, VT), as trec_eval splits them; a
line blank or starting with ``#`` holds no data.

Interning: a table of ``capacity`` slots (a power of two, at most half full), open addressing with
linear probing on a 64-bit FNV-1a hash; key ``c`` is ``arena[start[c]:end[c]]``, codes are given
in order of first appearance. The kernels return the (perhaps grown) arrays of the table.
"""

from __future__ import annotations

import numpy as np

from mobeval.kernels.borrow import borrowed
from mobeval.kernels.jit import njit

#: 10**0 .. 10**22: the powers of ten a float64 holds exactly (Clinger's fast path).
POWERS_OF_TEN = np.array([float(10**k) for k in range(23)])
#: Integers up to 2**53 are float64 exactly.
EXACT_INTEGER = 1 << 53
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@njit(cache=True)
def _is_space(byte):
    return byte == 32 or byte == 9 or byte == 13 or byte == 12 or byte == 11


@njit(cache=True)
def decimal_fast(data, start, end, powers):
    """(value, True) of the decimal ``[+-]digits[.digits][(e|E)[+-]digits]`` in
    ``data[start:end]`` when its digits make an integer m <= 2**53 and its power of ten e is
    within 22: then ``m * 10**e`` (or ``m / 10**-e``) is one correctly rounded IEEE operation on
    exact operands, which is what ``strtod`` and Python's ``float`` return (Clinger, "How to read
    floating point numbers accurately", PLDI 1990). (0.0, False) for any other text: it is read
    the slow, general way."""
    i = start
    negative = False
    if i < end and (data[i] == 43 or data[i] == 45):
        negative = data[i] == 45
        i += 1
    mantissa = 0
    digits = 0
    scale = 0
    seen = False
    while i < end and 48 <= data[i] <= 57:
        if mantissa > 0 or data[i] != 48:
            digits += 1
            if digits > 16:
                return 0.0, False
            mantissa = mantissa * 10 + (data[i] - 48)
        seen = True
        i += 1
    if i < end and data[i] == 46:
        i += 1
        while i < end and 48 <= data[i] <= 57:
            if mantissa > 0 or data[i] != 48:
                digits += 1
                if digits > 16:
                    return 0.0, False
                mantissa = mantissa * 10 + (data[i] - 48)
            scale -= 1
            seen = True
            i += 1
    if not seen:
        return 0.0, False
    if i < end and (data[i] == 101 or data[i] == 69):
        i += 1
        exp_negative = False
        if i < end and (data[i] == 43 or data[i] == 45):
            exp_negative = data[i] == 45
            i += 1
        if i == end:
            return 0.0, False
        exponent = 0
        while i < end and 48 <= data[i] <= 57:
            if exponent > 1000:
                return 0.0, False
            exponent = exponent * 10 + (data[i] - 48)
            i += 1
        scale += -exponent if exp_negative else exponent
    if i != end or mantissa > EXACT_INTEGER:
        return 0.0, False
    value = float(mantissa)
    if mantissa != 0:
        if scale > 22 or scale < -22:
            return 0.0, False
        value = value * powers[scale] if scale >= 0 else value / powers[-scale]
    return (-value if negative else value), True


@njit(cache=True)
def _split_line(data, i, field_start, field_end):
    """The fields of the line starting at ``data[i]``: the spans of the first
    ``field_start.size`` written to ``field_start``, ``field_end``. Returns (the index of the
    next line, the number of fields: 0 for a blank or comment line)."""
    fields = 0
    while data[i] != 10:
        if _is_space(data[i]):
            i += 1
            continue
        if fields == 0 and data[i] == 35:  # a comment
            while data[i] != 10:
                i += 1
            break
        begin = i
        while data[i] != 10 and not _is_space(data[i]):
            i += 1
        if fields < field_start.size:
            field_start[fields] = begin
            field_end[fields] = i
        fields += 1
    return i + 1, fields


@njit(cache=True)
def _line_count(data):
    lines = 0
    for b in data:
        lines += b == 10
    return lines


@njit(nogil=True, cache=True)
def run_fields(data, powers):
    """The data lines of a run block: per line the spans (start, end) of its qid, docno and
    score text, its score (:func:`decimal_fast`) and whether that read it; the span of the last
    line's tag; the number (from 0) of the first line with fewer than six fields (-1: none); and
    the number of lines in the block. A line's fields after the sixth are ignored."""
    lines = _line_count(data)
    spans = np.empty((lines, 6), dtype=np.int64)
    score = np.empty(lines, dtype=np.float64)
    score_read = np.empty(lines, dtype=np.bool_)
    fields = np.empty((2, 6), dtype=np.int64)  # a line's fields' starts and ends
    n, short = _run_lines(data, powers, spans, score, score_read, fields)
    tag = np.zeros(2, dtype=np.int64)
    if n:
        tag[0], tag[1] = fields[0, 5], fields[1, 5]
    return spans[:n], score[:n], score_read[:n], tag, short, lines


@njit(cache=True)
def _run_lines(data, powers, spans, score, score_read, fields):
    """:func:`run_fields`' lines read into its arrays, on borrowed views
    (:mod:`mobeval.kernels.borrow`: a line's calls count no reference): ``(n, short)``, the
    data lines and the first short line."""
    data, powers, spans, score, score_read, fields = borrowed(
        data, powers, spans, score, score_read, fields
    )
    field_start, field_end = fields[0], fields[1]
    n = 0
    short = -1
    i = 0
    for line in range(spans.shape[0]):
        i, count = _split_line(data, i, field_start, field_end)
        if 0 < count < 6 and short < 0:
            short = line
        if count >= 6:
            for f in range(3):
                spans[n, 2 * f] = field_start[2 * f]
                spans[n, 2 * f + 1] = field_end[2 * f]
            score[n], score_read[n] = decimal_fast(data, field_start[4], field_end[4], powers)
            n += 1
    return n, short


@njit(cache=True)
def integer_fast(data, start, end):
    """(value, True) of the integer ``[+-]digits`` in ``data[start:end]`` when it has at most
    18 significant digits (so it is within 64 bits); (0, False) for any other text: it is read
    the slow, general way."""
    i = start
    negative = False
    if i < end and (data[i] == 43 or data[i] == 45):
        negative = data[i] == 45
        i += 1
    if i == end:
        return 0, False
    value = 0
    digits = 0
    while i < end:
        if not 48 <= data[i] <= 57:
            return 0, False
        if value > 0 or data[i] != 48:
            digits += 1
            if digits > 18:
                return 0, False
        value = value * 10 + (data[i] - 48)
        i += 1
    return (-value if negative else value), True


@njit(nogil=True, cache=True)
def qrels_fields(data):
    """The data lines of a qrels block: per line the spans (start, end) of its qid, docno and
    relevance text (as :func:`run_fields`' qid, docno and score), its relevance
    (:func:`integer_fast`) and whether that read it; the number (from 0) of the first line
    that has not exactly four fields (-1: none); and the number of lines in the block."""
    lines = _line_count(data)
    spans = np.empty((lines, 6), dtype=np.int64)
    rel = np.empty(lines, dtype=np.int64)
    rel_read = np.empty(lines, dtype=np.bool_)
    fields = np.empty((2, 4), dtype=np.int64)  # a line's fields' starts and ends
    n, bad = _qrels_lines(data, spans, rel, rel_read, fields)
    return spans[:n], rel[:n], rel_read[:n], bad, lines


@njit(cache=True)
def _qrels_lines(data, spans, rel, rel_read, fields):
    """:func:`qrels_fields`' lines read into its arrays, on borrowed views: ``(n, bad)``, the
    data lines and the first line of another field count."""
    data, spans, rel, rel_read, fields = borrowed(data, spans, rel, rel_read, fields)
    field_start, field_end = fields[0], fields[1]
    n = 0
    bad = -1
    i = 0
    for line in range(spans.shape[0]):
        i, count = _split_line(data, i, field_start, field_end)
        if count == 0:
            continue
        if count != 4:
            if bad < 0:
                bad = line
            continue
        for f, field in enumerate((0, 2, 3)):
            spans[n, 2 * f] = field_start[field]
            spans[n, 2 * f + 1] = field_end[field]
        rel[n], rel_read[n] = integer_fast(data, field_start[3], field_end[3])
        n += 1
    return n, bad


@njit(cache=True)
def _hash(data, start, end):
    h = _FNV_OFFSET
    for i in range(start, end):
        h = (h ^ np.uint64(data[i])) * _FNV_PRIME
    return h


@njit(cache=True)
def _same(arena, a, a_end, data, b, b_end):
    if a_end - a != b_end - b:
        return False
    k = 0
    while k < a_end - a and arena[a + k] == data[b + k]:
        k += 1
    return k == a_end - a


@njit(cache=True)
def intern(data, starts, ends, table, arena, used, key_start, key_end, count):
    """Codes (int32) of the byte strings ``data[starts[i]:ends[i]]``, new ones added to the table.
    ``table``: slots holding a code or -1; ``arena[:used]``: the keys' bytes; ``key_start``,
    ``key_end``: their spans (``count`` of them). Returns (codes, table, arena, used,
    key_start, key_end, count), arrays grown where needed. A string equal to the one before
    it (a run's lines come query by query) takes its code without hashing."""
    codes = np.empty(starts.size, dtype=np.int32)
    for i in range(starts.size):
        s, e = starts[i], ends[i]
        if i > 0 and _same(data, starts[i - 1], ends[i - 1], data, s, e):
            codes[i] = codes[i - 1]
            continue
        if 2 * (count + 1) > table.size:  # rehash into twice the slots
            table = np.full(2 * table.size, -1, dtype=np.int64)
            mask = np.uint64(table.size - 1)
            for c in range(count):
                slot = _hash(arena, key_start[c], key_end[c]) & mask
                while table[slot] >= 0:
                    slot = (slot + np.uint64(1)) & mask
                table[slot] = c
        mask = np.uint64(table.size - 1)
        slot = _hash(data, s, e) & mask
        while True:
            c = table[slot]
            if c < 0:
                break
            if _same(arena, key_start[c], key_end[c], data, s, e):
                break
            slot = (slot + np.uint64(1)) & mask
        if c < 0:
            c = count
            if c == key_start.size:
                key_start = np.concatenate((key_start, np.empty(key_start.size, np.int64)))
                key_end = np.concatenate((key_end, np.empty(key_end.size, np.int64)))
            if used + (e - s) > arena.size:
                grown = np.empty(max(2 * arena.size, used + e - s), dtype=np.uint8)
                grown[:used] = arena[:used]
                arena = grown
            arena[used : used + e - s] = data[s:e]
            key_start[c], key_end[c] = used, used + e - s
            used += e - s
            table[slot] = c
            count += 1
        codes[i] = c
    return codes, table, arena, used, key_start, key_end, count


@njit(nogil=True, cache=True)
def concatenated(data, starts, ends):
    """The strings ``data[starts[i]:ends[i]]`` end to end, and their offsets in that copy
    (string ``i`` at ``offsets[i]:offsets[i + 1]``)."""
    offsets = np.zeros(starts.size + 1, dtype=np.int64)
    for i in range(starts.size):
        offsets[i + 1] = offsets[i] + ends[i] - starts[i]
    out = np.empty(offsets[-1], dtype=np.uint8)
    _copy_strings(data, starts, ends, offsets, out)
    return out, offsets


@njit(cache=True)
def _copy_strings(data, starts, ends, offsets, out):
    """:func:`concatenated`'s copies, on borrowed views (a string's two slices count no
    reference)."""
    data, starts, ends, offsets, out = borrowed(data, starts, ends, offsets, out)
    for i in range(starts.size):
        out[offsets[i] : offsets[i + 1]] = data[starts[i] : ends[i]]
