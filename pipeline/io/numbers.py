"""Numbers written as text, read one way for every text format mobeval parses: TREC runs,
qrels and ``-Z`` files, trec_eval's measure parameters, the HuMob validator's dataset.

* An *integer* is an optional sign and the ASCII digits 0-9, and lies within a 64-bit integer
  (:data:`INT64_MIN` to :data:`INT64_MAX`: what C's ``long``, trec_eval's type, and the kernels'
  int64 arrays hold). One beyond is an error: never wrapped, clipped or read as 0.
* A *real* is a decimal or exponent number as C's ``strtod`` and Python's ``float`` read it, and
  finite: ``nan`` has no place in an order (trec_eval's sort leaves it anywhere), ``inf`` and a
  value beyond float64 (``1e400``, which ``strtod`` reads as infinity) none in a sum. A run's
  *score* is a real or an infinity (it only orders a list, as trec_eval orders it).
* trec_eval's own readings of its options and measure parameters (C's ``atol``, ``atof``,
  casts and ``qsort``) are :func:`c_atol`, :func:`c_atof` and the helpers after them.

Each reading has a plain Python form (``*_problem``: why a text is not one, or None), used to
name a bad line and to check a parameter, and a Polars form (``*_column``) that reads a whole
block of fields the same way, null where the Python form finds a problem. The Python forms
load no Polars (trec_eval's measure names read them: ``--help`` and option checks stay light).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
INT64_RANGE = "a 64-bit integer (-2^63 to 2^63-1)"


def integer_problem(text: str) -> str | None:
    """Why ``text`` is not an integer within 64 bits (``"is not an integer"``, ``"is beyond a
    64-bit integer ..."``), or None."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not (digits.isascii() and digits.isdigit()):
        return "is not an integer"
    if not INT64_MIN <= int(text) <= INT64_MAX:
        return f"is beyond {INT64_RANGE}"
    return None


def real_problem(text: str) -> str | None:
    """Why ``text`` is not a finite real number (not a number, NaN, infinite or beyond
    float64), or None."""
    try:
        value = float(text) if text.isascii() and "_" not in text else None
    except ValueError:
        value = None
    if value is None:
        return "is not a number"
    if math.isnan(value):
        return "is NaN, which no order or sum can hold"
    if math.isinf(value):
        return "is infinite or beyond float64, which no order or sum can hold"
    return None


def score_problem(text: str) -> str | None:
    """Why ``text`` is not a run's score, or None: a real number as :func:`real_problem` reads
    it, infinite ones too (``inf``, ``-inf``, ``1e400``: ``strtod`` reads them as infinities and
    trec_eval ranks them first or last); NaN is refused (no order holds it)."""
    problem = real_problem(text)
    return problem if problem is None or "NaN" in problem or "not a number" in problem else None


def integer_column(text: pl.Expr) -> pl.Expr:
    """Int64 of each String of ``text``; null where :func:`integer_problem` finds a problem."""
    import polars as pl

    return text.str.replace(r"^\+([0-9])", "$1").cast(pl.Int64, strict=False)


def real_column(text: pl.Expr) -> pl.Expr:
    """Float64 of each String of ``text``; null where :func:`real_problem` finds a problem."""
    import polars as pl

    value = text.cast(pl.Float64, strict=False)
    return pl.when(value.is_finite()).then(value)


# --- C's readings: trec_eval's measure parameters and options (atol, atof) ---------------------

_C_SPACE = " \t\n\v\f\r"
_C_LONG = re.compile(r"[+-]?[0-9]+")
_C_DOUBLE = re.compile(
    r"[+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
    r"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    r"|(?i:infinity|inf|nan(?:\([0-9A-Za-z_]*\))?))"
)


def c_atol(text: str) -> int:
    """``text`` as C's ``atol`` (glibc's ``strtol`` in base 10) reads it: leading white space
    skipped, then the longest ``[+-]digits`` prefix (``"23.4"`` -> 23, ``"5abc"`` -> 5), 0 when
    there is none (``"abc"``, ``""``), clamped to :data:`INT64_MIN` .. :data:`INT64_MAX`."""
    match = _C_LONG.match(text.lstrip(_C_SPACE))
    value = int(match.group()) if match else 0
    return min(max(value, INT64_MIN), INT64_MAX)


def c_atof(text: str) -> float:
    """``text`` as C's ``atof`` (glibc's ``strtod``) reads it: leading white space skipped, then
    the longest prefix that is a decimal or hexadecimal number, ``inf``/``infinity`` or ``nan``
    (any case; ``nan(chars)``), 0.0 when there is none; a value beyond float64 is infinite
    (``"1e400"`` -> inf)."""
    match = _C_DOUBLE.match(text.lstrip(_C_SPACE))
    if match is None:
        return 0.0
    number = match.group()
    if "x" in number[:3].lower():
        sign = -1.0 if number[0] == "-" else 1.0
        return sign * float.fromhex(number.lstrip("+-"))
    return float(number.partition("(")[0])  # Python reads nan, inf, infinity too


def c_long_of_double(value: float) -> int:
    """C's ``(long) value`` on x86-64 (``cvttsd2si``): truncated toward zero; a NaN, an infinity
    or a value beyond 64 bits gives :data:`INT64_MIN`."""
    if not -(2.0**63) <= value < 2.0**63:  # NaN fails too
        return INT64_MIN
    return int(value)


def c_merge_sorted(values: list, compare) -> list:
    """``values`` ordered as glibc's ``qsort`` orders them with the C comparator ``compare``
    (a top-down merge sort taking from the left half while ``compare(left, right) <= 0``):
    the same order as C's even where ``compare`` is not a consistent order (trec_eval's
    comparators cut a difference to ``int``)."""
    if len(values) <= 1:
        return list(values)
    half = len(values) // 2
    left, right = c_merge_sorted(values[:half], compare), c_merge_sorted(values[half:], compare)
    merged, i, j = [], 0, 0
    while i < len(left) and j < len(right):
        if compare(left[i], right[j]) <= 0:
            merged.append(left[i])
            i += 1
        else:
            merged.append(right[j])
            j += 1
    return merged + left[i:] + right[j:]


def c_int(value: int) -> int:
    """An integer cut to C's 32-bit ``int`` (its low 32 bits, signed), as a comparator's
    ``return (a - b);`` cuts a ``long`` difference."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def score_column(text: pl.Expr) -> pl.Expr:
    """Float64 of each String of ``text``; null where :func:`score_problem` finds a problem."""
    import polars as pl

    value = text.cast(pl.Float64, strict=False)
    return value.fill_nan(None)
