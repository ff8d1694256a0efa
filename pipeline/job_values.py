"""The kinds of value a job file's key may hold, and how a wrong one is shown in a message.

Shared by the ``[[tasks]]`` entries (:mod:`mobeval.jobs`) and the ``[report]`` table
(:mod:`mobeval.report.job`). TOML gives str, int, float, bool, list, dict (and dates); nothing
is converted, so ``k = "5"`` or ``metrics = "mrr"`` (a string where an array is expected) is an
error naming the key, never read letter by letter.
"""

from __future__ import annotations

from collections.abc import Callable


def is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_str(value: object) -> bool:
    return isinstance(value, str)


def all_items(check: Callable[[object], bool]) -> Callable[[object], bool]:
    """A check that a value is a list whose every item passes ``check``."""
    return lambda value: isinstance(value, list) and all(check(item) for item in value)


#: What a job value may be: kind -> (words for the message, check).
VALUE_KINDS: dict[str, tuple[str, Callable[[object], bool]]] = {
    "string": ("a string", is_str),
    "strings": ('an array of strings, e.g. ["a", "b"]', all_items(is_str)),
    "key": ("a string or an array of strings", lambda v: is_str(v) or all_items(is_str)(v)),
    "cutoffs": (
        "an integer or an array of integers, e.g. [1, 5, 10]",
        lambda v: is_int(v) or all_items(is_int)(v),
    ),
    "boolean": ("true or false", lambda v: isinstance(v, bool)),
    "integer": ("an integer", is_int),
    "number": ("a number", is_number),
    "threshold": ('a number or "user_mean"', lambda v: is_number(v) or v == "user_mean"),
    "mapping": (
        'a table of name = "column" (or of input = { name = "column" })',
        lambda v: (
            isinstance(v, dict)
            and all(
                is_str(x) or (isinstance(x, dict) and all(map(is_str, x.values())))
                for x in v.values()
            )
        ),
    ),
}


def shown(value: object) -> str:
    """A job value as a message shows it: its TOML kind and its text (cut after 60
    characters), e.g. ``string '5'``, ``array [1, 'a']``."""
    text = repr(value)
    kind = type(value).__name__
    kind = {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}.get(kind, kind)
    kind = {"list": "array", "dict": "table"}.get(kind, kind)
    return f"{kind} {text if len(text) <= 60 else text[:60] + '...'}"
