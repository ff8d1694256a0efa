"""Numbers written as text, read one way for every text format mobeval parses: TREC runs,
qrels and ``-Z`` files, trec_eval's measure parameters, the HuMob validator's dataset.

* An *integer* is an optional sign and the ASCII digits 0-9, and lies within a 64-bit integer
  (:data:`INT64_MIN` to :data:`INT64_MAX`: what C's ``long``, trec_eval's type, and the kernels'
  int64 arrays hold). One beyond is an error: never wrapped, clipped or read as 0.
* A *real* is a decimal or exponent number as C's ``strtod`` and Python's ``float`` read it, and
  finite: ``nan`` has no place in an order (trec_eval's sort leaves it anywhere), ``inf`` and a
  value beyond float64 (``1e400``, which ``strtod`` reads as infinity) none in a sum.

Each reading has a plain Python form (``*_problem``: why a text is not one, or None), used to
name a bad line and to check a parameter, and a Polars form (``*_column``) that reads a whole
block of fields the same way, null where the Python form finds a problem. The Python forms
load no Polars (trec_eval's measure names read them: ``--help`` and option checks stay light).
"""

from __future__ import annotations

import math
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


def integer_column(text: pl.Expr) -> pl.Expr:
    """Int64 of each String of ``text``; null where :func:`integer_problem` finds a problem."""
    import polars as pl

    return text.str.replace(r"^\+([0-9])", "$1").cast(pl.Int64, strict=False)


def real_column(text: pl.Expr) -> pl.Expr:
    """Float64 of each String of ``text``; null where :func:`real_problem` finds a problem."""
    import polars as pl

    value = text.cast(pl.Float64, strict=False)
    return pl.when(value.is_finite()).then(value)
