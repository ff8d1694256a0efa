"""The command line's values: each flag's text turned into the value the API takes (cutoffs,
names, metric lists with parameters, column maps, thresholds), with argparse's error on a
bad one."""

from __future__ import annotations

import argparse
import math
import re

from mobeval.engines.cluster import conf_pair
from mobeval.errors import ConfigError


def finite(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, not {text!r}")
    return value


def int_list(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected integers like 1,5,10, got {text!r}") from None


def name_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


_PARAMETER_LIST_TAIL = re.compile(r"^[-+0-9.=]+$")


def metric_list(text: str) -> list[str]:
    """Metric names apart at commas, except the commas of a name's own parameters: inside
    brackets (ir_measures' ``SetF(rel=1, beta=0.5)``, ``nDCG(gains={0:1,1:4})``) and within
    trec_eval's ``-m`` lists after a dot (``P.5,10``, ``ndcg.1=3,2=9``: a part of numbers and
    ``=`` goes on the name before it)."""
    names: list[str] = []
    depth, start = 0, 0
    for i, char in enumerate(text + ","):
        depth += (char in "([{") - (char in ")]}")
        if char == "," and depth <= 0:
            part = text[start:i].strip()
            if names and "." in names[-1] and _PARAMETER_LIST_TAIL.match(part):
                names[-1] += "," + part
            elif part:
                names.append(part)
            start = i + 1
    return names


def threshold_value(text: str) -> float | str | None:
    """A number, ``user_mean`` or ``none`` (every rated item is relevant)."""
    if text in ("user_mean", "none"):
        return None if text == "none" else text
    try:
        return finite(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"expected a finite number, user_mean or none, not {text!r}"
        ) from None


def mapping(text: str) -> dict[str, str]:
    pairs = {}
    for part in name_list(text):
        ours, sep, theirs = part.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"expected ours=theirs pairs, got {part!r}")
        pairs[ours.strip()] = theirs.strip()
    return pairs


#: Text -> value of an option's flag (:attr:`mobeval.families.Flag.parse`).
PARSERS = {
    "ints": int_list,
    "names": name_list,
    "metrics": metric_list,
    "mapping": mapping,
    "finite": finite,
    "threshold": threshold_value,
    "int": int,
}


def spark_conf(text: str) -> tuple[str, str]:
    """``--spark-conf KEY=VALUE``: (key, value), a key of Spark's (``spark.*``)."""
    try:
        return conf_pair(text, "--spark-conf")
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("--spark-conf: ")) from None
