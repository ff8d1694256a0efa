"""trec_eval's text: a line per measure (and per query with ``-q``), the summary's
averages, ``-c``'s queries without results, ``-Z``'s z-scores."""

from __future__ import annotations

import math

import numpy as np

from mobeval.errors import InputError
from mobeval.io.numbers import real_problem
from mobeval.io.text import READ_ERRORS, open_binary, read_error_reason, universal_newlines
from mobeval.io.trec import located, split_fields
from mobeval.tasks.trec import Judged, Options, sequential_sum


def _zeroed_when_bogus(name: str) -> bool:
    """Values trec_eval resets for a query without results under -c (by the value's name)."""
    return name in ("num_ret", "utility", "rbp_resid") or name.startswith("unj")


def value_text(v: float) -> str:
    """``%6.4f`` as glibc prints it: a NaN with its sign (0.0 / 0.0 gives ``-nan``, a parameter
    read as ``nan`` ``nan``), which Python's format leaves out."""
    if v == v:
        return f"{v:6.4f}"
    return f"{'-nan' if math.copysign(1.0, v) < 0 else 'nan':>6}"


def _zero_bogus(results, bogus: np.ndarray):
    if not bogus.any():
        return results
    out = []
    for names, kind, values in results:
        if kind == "relstring" and names[0] == "relstring":
            values = ["" if b else text for text, b in zip(values, bogus, strict=True)]
        elif values is not None and kind != "relstring":
            values = values.copy()
            for j, name in enumerate(names):
                if _zeroed_when_bogus(name):
                    values[bogus, j] = 0.0
        out.append((names, kind, values))
    return out


MISSING_ZSCORE = -1000000.0


def read_zscores(path) -> dict[tuple[str, str], tuple[float, float]]:
    """-Z's file: ``qid measure mean stddev`` a line (whitespace separated), plain or gzip, at a
    local path or a URL; at least one such line (trec_eval refuses an empty file too)."""
    table = {}
    try:
        with open_binary(*located(path)) as stream:
            text = universal_newlines(stream.read()).decode("latin-1")  # qids as bytes
    except READ_ERRORS as error:
        reason = read_error_reason(error)
        raise InputError(f"not a readable z-scores file ({reason})", path=path) from None
    for number, line in enumerate(text.split("\n"), 1):
        fields = split_fields(line)
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != 4:
            raise InputError(
                f"line {number}: expected 'qid measure mean stddev' ({line[:80]!r})", path=path
            )
        qid, measure, mean, stddev = fields
        for name, value in (("mean", mean), ("stddev", stddev)):
            problem = real_problem(value)
            if problem is not None:
                raise InputError(
                    f"line {number}: {name} {value!r} {problem}", path=path, column=name
                )
        table[qid, measure] = (float(mean), float(stddev))
    if not table:  # trec_eval: "Cannot read zscores file"
        raise InputError("the z-scores file holds no line (qid measure mean stddev)", path=path)
    return table


def _to_zscores(results, qids: list[str], table):
    """Each query's values as (value - mean) / stddev of the z-scores file (trec_eval -Z): a
    query or measure the file lacks, or a stddev of 0 with a value off the mean, gives -1e6."""
    known = {qid for qid, _ in table}
    out = []
    for names, kind, values in results:
        if values is None or kind == "relstring":
            out.append((names, kind, values))
            continue
        values = values.copy()
        for j, name in enumerate(names):
            stats = [table.get((qid, name)) for qid in qids]
            mean = np.array([m[0] if m else np.nan for m in stats])
            std = np.array([m[1] if m else np.nan for m in stats])
            v = values[:, j]
            with np.errstate(divide="ignore", invalid="ignore"):
                z = np.where(std != 0, (v - mean) / std, np.where(v == mean, 0.0, MISSING_ZSCORE))
            z[np.isnan(mean)] = MISSING_ZSCORE
            z[[qid not in known for qid in qids]] = MISSING_ZSCORE
            values[:, j] = z
        out.append((names, kind, values))
    return out


def per_query_text(results, qids: list[str], rows: np.ndarray, z: str) -> str:
    """-q's lines of the queries ``rows`` (of ``qids``), a query's lines together, its
    measures in ``results``' order: ``name<TAB>qid<TAB>value``, ``name`` padded to 22. Formatted
    in bulk: one ``%`` template holding every line of a query, applied once per query to its
    ``(qid, value, qid, value, ...)`` (Python's ``%6.4f`` and ``%d``, as :func:`value_text` and
    ``int`` print a value); a column holding a NaN is printed by :func:`value_text` (``-nan``)."""
    qids = [qids[q] for q in rows]
    template, columns = [], []
    for names, kind, values in results:
        if kind in ("runid", "num_q", "gm"):
            continue
        if kind == "relstring":
            template.append(_literal(f"{names[0]:<22}") + "\t%s\t'%s'\n")
            columns += [qids, [values[q] for q in rows]]
            continue
        chosen = values[rows]
        for j, name in enumerate(names):
            column = chosen[:, j]
            if kind == "long" and not z:
                field, printed = "%d", column.tolist()
            elif np.isnan(column).any():
                field, printed = "%s", [value_text(v) for v in column]
            else:
                field, printed = "%6.4f", column.tolist()
            template.append(_literal(f"{z}{name:<22}") + f"\t%s\t{field}\n")
            columns += [qids, printed]
    line_of_query = "".join(template)
    return "".join([line_of_query % values for values in zip(*columns, strict=True)])


def _literal(text: str) -> str:
    """``text`` inside a ``%`` template."""
    return text.replace("%", "%%")


def format_report(judged: Judged, results, num_ret, opts: Options) -> str:
    """trec_eval's text: per-query lines (-q), then the summary."""
    rows = np.flatnonzero(judged.scored)
    if rows.size == 0:
        raise InputError("no query has both results and judgments")
    lines = []  # the summary's
    results = _zero_bogus(results, judged.bogus)
    z = ""
    if opts.zscores is not None:
        results = _to_zscores(results, judged.qids, read_zscores(opts.zscores))
        z = "Z"
    per_query = per_query_text(results, judged.qids, rows, z) if opts.per_query else ""
    count = rows.size
    for names, kind, values in results:
        if kind == "runid":
            lines.append(f"{names[0]:<22}\tall\t{judged.runid}")
        elif kind == "num_q":
            number = f"{count:6.4f}" if z else count
            lines.append(f"{z}{names[0]:<22}\tall\t{number}")
        elif kind == "relstring":
            continue
        elif kind == "long":
            if opts.complete and names[0] == "num_rel":
                total = judged.positive_judgments
            else:
                total = values[rows, 0].sum()
            if z:
                lines.append(f"{z}{names[0]:<22}\tall\t{value_text(total)}")
            else:
                lines.append(f"{names[0]:<22}\tall\t{int(total)}")
        else:
            chosen = values[rows]
            for j, name in enumerate(names):
                column = chosen[:, j]
                value = sequential_sum(column) / count
                if kind == "gm":
                    value = math.exp(value)
                lines.append(f"{z}{name:<22}\tall\t{value_text(value)}")
    return per_query + "".join(line + "\n" for line in lines) or "\n"
