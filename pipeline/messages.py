"""What a failed command says: one line, options spelled as typed, an OS error's path and reason
(the command line's messages; :func:`mobeval.cli.main` prints them)."""

from __future__ import annotations

import re
import sys


def cli_spelling(message: str, family: str) -> str:
    """``message`` with the options spelled as on the command line, from the family's
    definition: a value spelled as in Python (``on_mismatch='skip'``, ``duplicates="drop"``)
    becomes the flag to type (``--skip-mismatched``, ``--duplicates drop``), and a bare option
    name with an underscore (``gain_threshold``: never an English word) its flag
    (``--gain-threshold``); a mapping (``columns={'truth.user_id': 'userId', 'truth.item_id':
    'movieId'}``) its flag and pairs (``--columns truth.user_id=userId,truth.item_id=movieId``)."""
    from mobeval.families import FAMILIES

    for option in FAMILIES[family].options:
        if option.flag is None:
            continue
        valued = rf"(?<![\w-]){option.name}=(['\"])([^'\"]*)\1"
        message = re.sub(valued, lambda m, o=option: o.cli_spelling(m.group(2)), message)
        if option.kind == "mapping":  # columns={'location': 'poi'} -> --columns location=poi
            pair = r"'([^']*)': '([^']*)'"
            mapping = rf"(?<![\w-]){option.name}=\{{({pair}(?:, {pair})*)\}}"
            message = re.sub(
                mapping,
                lambda m, o=option, pair=pair: (
                    f"{o.flag_name} "
                    + ",".join(f"{a}={b}" for a, b in re.findall(pair, m.group(1)))
                ),
                message,
            )
        if "_" in option.name:
            message = re.sub(rf"(?<![\w-]){option.name}\b", option.flag_name, message)
    return message


def one_line(text: str) -> str:
    return " ".join(line.strip() for line in str(text).splitlines() if line.strip())


def os_error_text(error: OSError) -> str:
    """``path: reason`` of a failed file operation (``reason`` alone if it names no file)."""
    reason = error.strerror or str(error) or type(error).__name__
    if error.filename is None:
        return reason
    where = str(error.filename)
    if error.filename2 is not None:
        where += f" -> {error.filename2}"
    return f"{where}: {reason}"


def polars_panic() -> type[BaseException]:
    """Polars' ``PanicException`` (a BaseException) where the command loaded Polars."""
    polars = sys.modules.get("polars")
    return polars.exceptions.PanicException if polars is not None else Exception
