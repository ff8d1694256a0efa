"""TREC run and qrels files: whitespace-separated text, plain or gzip, read in blocks.

* run: ``qid Q0 docno rank score tag`` (six fields; trec_eval ignores anything after the sixth);
* qrels: ``qid iter docno rel`` (exactly four fields, ``rel`` an integer).

Fields may be separated by any run of spaces or tabs; a line ends with LF, CR LF or a lone CR.
Blank lines and lines whose first non-blank character is ``#`` are skipped, as trec_eval does. A
file is recognised from its first data line (:func:`sniff`): six or more fields with an integer
rank and a numeric score make a run, four with an integer relevance make qrels. A bad line is one
:class:`InputError` naming the file, the line number and the field.

Numbers are read by :mod:`mobeval.io.numbers`: a score is a real or an infinity (``inf``,
``-inf``, ``1e400``: ranked first or last, as trec_eval ranks them), never NaN (no place in a
ranking, trec_eval's sort leaving it anywhere), so ``mobeval trec_eval`` and ``mobeval recs``
read the same run lines (``recs`` then refuses an infinite score: its metrics sum scores); a
relevance is an integer
within 64 bits, or a finite decimal cut to the integer before its point or exponent as trec_eval's
``atol`` cuts it (``1.7`` -> 1), that integer within 64 bits too.

Identifiers (qid, docno, tag): with ``as_bytes`` (``mobeval trec_eval``) each byte is one
character (Latin-1), so identifiers compare and sort as their bytes, as trec_eval compares them,
and print back as the bytes they were (``str.encode("latin-1")``); otherwise (``recs``,
``nextloc``: identifiers are text in their outputs) a file must be UTF-8, and a byte that is not
is an error naming its line.

Blocks of lines are split by Polars (whitespace normalised with one regex pass, then split on a
single space); only a block holding a bad line is looked at again, line by line, to name it.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mobeval.errors import InputError, no_file
from mobeval.io.numbers import (
    INT64_RANGE,
    integer_column,
    integer_problem,
    real_column,
    real_problem,
    score_column,
    score_problem,
)
from mobeval.io.remote import (
    client_errors,
    file_size,
    filesystem,
    local_path,
    url_error,
    url_scheme,
)
from mobeval.io.text import (
    READ_ERRORS,
    first_non_utf8,
    line_blocks,
    open_binary,
    readable,
    whole_lines,
)

if TYPE_CHECKING:
    import polars as pl  # imported where used: mobeval trec_eval's fast path never needs it

RUN_FIELDS = ("qid", "iter", "docno", "rank", "score", "tag")
QRELS_FIELDS = ("qid", "iter", "docno", "rel")
#: Names of the columns a TREC file gives :mod:`mobeval.tasks.recs` (and nextloc): a run's
#: ``qid, docno, rank, score`` and qrels' ``qid, docno, rel``.
RUN_AS_RECS = {"qid": "user_id", "docno": "item_id", "rank": "rank", "score": "score"}
QRELS_AS_RATINGS = {"qid": "user_id", "docno": "item_id", "rel": "rating"}
BLOCK_BYTES = 1 << 24


# Field separators of trec_eval's C reader: C's isspace() but the newline. Python's str.split()
# also splits on \x1c-\x1f and Unicode spaces, which trec_eval keeps inside a field.
C_SPACE = " \t\r\f\v"
_C_SPACE_RUN = r"[ \t\r\f\v]+"  # the same characters, for Python and Polars


def split_fields(line: str) -> list[str]:
    """The fields of ``line`` as trec_eval splits them (runs of :data:`C_SPACE`)."""
    line = line.strip(C_SPACE)
    return re.split(_C_SPACE_RUN, line) if line else []


def _first_data_line(path, filesystem=None) -> str | None:
    guard = nullcontext() if filesystem is None else client_errors(path, READ_ERRORS)
    try:
        with guard, open_binary(path, filesystem) as stream:
            return first_data_line(stream)
    except READ_ERRORS:
        return None


def first_data_line(stream) -> str | None:
    """The first line of a binary ``stream`` that is neither blank nor a ``#`` comment,
    stripped, if one of the first 1000 is (lines ended as :func:`~mobeval.io.text.whole_lines`
    ends them)."""
    number = 0
    for block in whole_lines(stream, 1 << 16):
        for raw in block.split(b"\n")[:-1]:
            text = raw.decode("utf-8", errors="replace").strip(C_SPACE)
            if text and not text.startswith("#"):
                return text
            number += 1
            if number > 1000:
                return None
    return None


def _is_int(text: str) -> bool:
    """Whether ``text`` looks like an integer (sniffing only; reading: mobeval.io.numbers)."""
    return text.lstrip("+-").isdigit()


def _is_number(text: str) -> bool:
    """Whether ``text`` looks like a number (sniffing only; reading: mobeval.io.numbers)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _located(spec) -> tuple[object, object | None, bool]:
    """(path, fsspec file system or None, whether it is a file) of a local path or a URL."""
    if url_scheme(str(spec)) is None:
        path = Path(local_path(spec))
        return path, None, readable(path)
    fs, inside = filesystem(str(spec))
    try:
        return str(spec), fs, fs.isfile(inside)
    except Exception as error:  # noqa: BLE001 - network and permission errors of any fs
        raise url_error(spec, error) from None


def located(spec) -> tuple[object, object | None]:
    """(path, fsspec file system or None) of the TREC file at ``spec``, a local path or a URL;
    InputError ``no such file`` naming ``spec`` if there is none."""
    path, fs, is_file = _located(spec)
    if not is_file:
        raise no_file(spec)
    return path, fs


def sniff(path: str | os.PathLike) -> str | None:
    """``"run"``, ``"qrels"`` or None: what the first data line of ``path`` (a local path or a
    URL) looks like; None for a pipe too (a look would take lines the reading never sees)."""
    path, fs, is_file = _located(path)
    if not is_file or (fs is None and not path.is_file()):
        return None
    return kind_of_line(_first_data_line(path, fs))


def kind_of_line(line: str | None) -> str | None:
    """``"run"``, ``"qrels"`` or None: what a file whose first data line is ``line`` is."""
    if line is None:
        return None
    fields = split_fields(line)
    if len(fields) >= 6 and _is_int(fields[3]) and _is_number(fields[4]):
        return "run"
    if len(fields) == 4 and _is_int(fields[3]):
        return "qrels"
    return None


# Bytes that hardly ever occur in text, tried in turn as the separator of a one-column CSV read
# (a block's lines, whole): the first one absent from the block is used.
_LINE_SEPARATORS = [chr(c) for c in range(1, 32) if chr(c) not in "\t\n\r\x0b\x0c"]


def polars_text(path, block: bytes, first_line: int, as_bytes: bool) -> bytes:
    """``block`` as the UTF-8 text Polars reads: ASCII as it is; with ``as_bytes`` every byte one
    character (Latin-1, written in UTF-8); otherwise checked to be UTF-8, a byte that is not an
    InputError naming its line."""
    if block.isascii():
        return block
    if as_bytes:
        return block.decode("latin-1").encode("utf-8")
    bad = first_non_utf8(block)
    if bad is not None:
        raise InputError(
            f"line {first_line + bad[1]}: byte 0x{bad[0]:02x} is not UTF-8 (recs and nextloc "
            "keep identifiers as text; mobeval trec_eval reads them as bytes)",
            path=path,
        )
    return block


def _line_fields(block: bytes) -> pl.DataFrame:
    import polars as pl

    separator = next((s for s in _LINE_SEPARATORS if s.encode() not in block), None)
    if separator is None:  # every control byte occurs: split the lines in Python
        lines = pl.DataFrame(
            {"line": block.decode("utf-8").split("\n")},
            schema={"line": pl.String},
        )
    else:
        lines = _read_lines(block, separator)
    text = pl.col("line").str.replace_all(_C_SPACE_RUN, " ").str.strip_chars(" ")
    frame = lines.select(text.alias("line"))
    frame = frame.filter((pl.col("line") != "") & ~pl.col("line").str.starts_with("#"))
    return frame.select(pl.col("line").str.split(" ").alias("f"))


def _read_lines(block: bytes, separator: str) -> pl.DataFrame:
    """The lines of ``block`` as one String column ``line`` (``separator`` absent from it)."""
    import polars as pl

    return pl.read_csv(
        io.BytesIO(block),
        has_header=False,
        separator=separator,
        quote_char=None,
        new_columns=["line"],
        schema={"line": pl.String},
    )


def bad_line(path: Path, block: bytes, first_line: int, kind: str) -> InputError:
    """The first bad line of ``block``, checked line by line as the fast path checks it."""
    for offset, raw in enumerate(block.split(b"\n")):
        text = raw.decode("utf-8").strip(C_SPACE)
        if not text or text.startswith("#"):
            continue
        problem = _line_problem(split_fields(text), kind)
        if problem:
            field, why = problem
            return InputError(
                f"line {first_line + offset}: {why} ({text[:80]!r})", path=path, column=field
            )
    return InputError("a line could not be read", path=path)  # not reached


def _line_problem(fields: list[str], kind: str) -> tuple[str, str] | None:
    if kind == "run":
        if len(fields) < 6:
            name = RUN_FIELDS[len(fields)]
            return name, f"{len(fields)} fields; a run line has 6 (qid Q0 docno rank score tag)"
        problem = score_problem(fields[4])
        return ("score", f"score {fields[4]!r} {problem}") if problem else None
    if len(fields) != 4:
        name = QRELS_FIELDS[min(len(fields), 3)]
        return name, f"{len(fields)} fields; a qrels line has 4 (qid iter docno rel)"
    problem = _relevance_problem(fields[3])
    return ("rel", f"relevance {fields[3]!r} {problem}") if problem else None


def _relevance_problem(text: str) -> str | None:
    """Why ``text`` is not a judgment :func:`relevance` reads, or None (its Python form)."""
    if integer_problem(text) is None:
        return None
    problem = real_problem(text)
    if problem is not None:
        return problem
    digits = re.match(r"[+-]?[0-9]+", text)
    if digits is not None and integer_problem(digits.group()) is not None:
        return f"is beyond {INT64_RANGE}"
    return None


_NOT_SINGLE_SPACED = (b"\t", b"\r", b"\x0b", b"\x0c")


def _single_spaced_run(block: bytes) -> pl.DataFrame | None:
    """The common case read by Polars' CSV reader with a space separator: every line six or more
    fields apart by single spaces, no comment or blank line. None when the block is not so (an
    empty field shows a doubled space, a blank line or a short one); the general path reads it."""
    import polars as pl

    if any(mark in block for mark in _NOT_SINGLE_SPACED):
        return None
    try:
        frame = pl.read_csv(
            io.BytesIO(block),
            has_header=False,
            separator=" ",
            quote_char=None,
            schema=dict.fromkeys(RUN_FIELDS, pl.String),
            truncate_ragged_lines=True,
        )
    except (pl.exceptions.PolarsError, ValueError):
        return None
    frame = frame.with_columns(
        pl.col("rank").cast(pl.Int64, strict=False),
        score_column(pl.col("score")),
    )
    fields = ("qid", "iter", "docno", "score", "tag")
    bad = pl.any_horizontal(pl.col(*fields).is_null()) | pl.col("qid").str.starts_with("#")
    if frame.select(bad.any()).item():
        return None
    return frame.select("qid", "docno", "rank", "score", "tag")


def iter_run(
    path, *, block_bytes: int = BLOCK_BYTES, filesystem=None, as_bytes: bool = False
) -> Iterator[pl.DataFrame]:
    """A run as DataFrames of ``qid, docno, rank, score, tag`` (strings, rank Int64 when it is an
    integer, score Float64), block by block. ``rank`` is kept for list orders that use it; a rank
    that is not an integer is null (trec_eval ignores it). ``filesystem``: an fsspec file system
    holding ``path`` (None: a local file); ``as_bytes``: identifiers as bytes (see the module)."""
    import polars as pl

    path = Path(path) if filesystem is None else path
    blocks = line_blocks(path, block_bytes, "not a readable TREC file", filesystem)
    for raw, first_line in blocks:
        block = polars_text(path, raw, first_line, as_bytes)
        fast = _single_spaced_run(block)
        if fast is not None:
            yield fast
            continue
        fields = _line_fields(block)
        count = pl.col("f").list.len()
        parsed = fields.select(
            count.alias("n"),
            pl.col("f").list.get(0, null_on_oob=True).alias("qid"),
            pl.col("f").list.get(2, null_on_oob=True).alias("docno"),
            pl.col("f").list.get(3, null_on_oob=True).cast(pl.Int64, strict=False).alias("rank"),
            pl.col("f").list.get(4, null_on_oob=True).alias("score_text"),
            pl.col("f").list.get(5, null_on_oob=True).alias("tag"),
        ).with_columns(score_column(pl.col("score_text")).alias("score"))
        bad = (pl.col("n") < 6) | pl.col("score").is_null()
        if parsed.select(bad.any()).item():
            raise bad_line(path, block, first_line, "run")
        yield parsed.select("qid", "docno", "rank", "score", "tag")


def relevance(text: pl.Expr) -> pl.Expr:
    """A judgment as trec_eval reads it (C's atol: the leading digits): an integer, or a finite
    number cut to the integer written before its point or exponent (``1.0`` -> 1, ``0.5`` -> 0,
    ``2e1`` -> 2); null when the text is not a finite number or that integer is beyond 64 bits
    (:func:`_relevance_problem` says why)."""
    import polars as pl

    digits = text.str.extract(r"^([+-]?[0-9]+)", 1)
    leading = pl.when(digits.is_null()).then(0).otherwise(integer_column(digits))
    return pl.coalesce(integer_column(text), pl.when(real_column(text).is_not_null()).then(leading))


def iter_qrels(
    path,
    *,
    block_bytes: int = BLOCK_BYTES,
    keep_iter: bool = False,
    filesystem=None,
    as_bytes: bool = False,
) -> Iterator[pl.DataFrame]:
    """Qrels as DataFrames of ``qid, docno`` (strings) and ``rel`` (Int64), block by block;
    ``keep_iter``: the second field too (``iter``, trec_eval's judgment group under -R qrels_jg);
    ``filesystem`` and ``as_bytes`` as :func:`iter_run`'s."""
    import polars as pl

    path = Path(path) if filesystem is None else path
    blocks = line_blocks(path, block_bytes, "not a readable TREC file", filesystem)
    for raw, first_line in blocks:
        block = polars_text(path, raw, first_line, as_bytes)
        fields = _line_fields(block)
        parsed = fields.select(
            pl.col("f").list.len().alias("n"),
            pl.col("f").list.get(0, null_on_oob=True).alias("qid"),
            pl.col("f").list.get(1, null_on_oob=True).alias("iter"),
            pl.col("f").list.get(2, null_on_oob=True).alias("docno"),
            pl.col("f").list.get(3, null_on_oob=True).alias("rel_text"),
        ).with_columns(relevance(pl.col("rel_text")).alias("rel"))
        bad = (pl.col("n") != 4) | pl.col("rel").is_null()
        if parsed.select(bad.any()).item():
            raise bad_line(path, block, first_line, "qrels")
        yield (
            parsed.select("qid", "iter", "docno", "rel")
            if keep_iter
            else parsed.select("qid", "docno", "rel")
        )


def _concat(frames: list[pl.DataFrame], schema: dict) -> pl.DataFrame:
    import polars as pl

    return pl.concat(frames, rechunk=True) if frames else pl.DataFrame(schema=schema)


def read_run(spec, *, block_bytes: int = BLOCK_BYTES, as_bytes: bool = False) -> pl.DataFrame:
    """A whole run at a local path or a URL (see :func:`iter_run`)."""
    import polars as pl

    schema = {"qid": pl.String, "docno": pl.String, "rank": pl.Int64, "score": pl.Float64}
    path, fs = located(spec)
    frames = iter_run(path, block_bytes=block_bytes, filesystem=fs, as_bytes=as_bytes)
    return _concat(list(frames), schema | {"tag": pl.String})


def read_qrels(
    spec, *, block_bytes: int = BLOCK_BYTES, keep_iter: bool = False, as_bytes: bool = False
) -> pl.DataFrame:
    """Whole qrels at a local path or a URL (see :func:`iter_qrels`)."""
    import polars as pl

    schema = {"qid": pl.String, "docno": pl.String, "rel": pl.Int64}
    if keep_iter:
        schema = {"qid": pl.String, "iter": pl.String, "docno": pl.String, "rel": pl.Int64}
    path, fs = located(spec)
    frames = iter_qrels(
        path, block_bytes=block_bytes, keep_iter=keep_iter, filesystem=fs, as_bytes=as_bytes
    )
    return _concat(list(frames), schema)


@dataclass(frozen=True)
class TrecSource:
    """A TREC run or qrels file presented as an input source of the evaluation engine, streamed
    block by block. For ``recs`` (``task="recs"``): a run gives ``user_id`` (qid), ``item_id``
    (docno), ``rank`` and ``score``; qrels give ``user_id``, ``item_id`` and ``rating`` (the
    relevance). For ``nextloc`` (``task="nextloc"``): ``qid``, ``location`` (the docno, an
    integer) and a run's ``rank`` and ``score``; the qrels' relevant lines (``rel > 0``) are the
    truth, one a query (a known-item search)."""

    label: str
    path: Path | str  # a local path, or a URL read through ``filesystem``
    kind: str  # "run" or "qrels"
    task: str = "recs"  # or "nextloc"
    filesystem: object | None = field(default=None, compare=False, repr=False)

    @classmethod
    def open(cls, spec, kind: str | None = None, *, task: str = "recs") -> TrecSource:
        """The TREC file at ``spec`` (a local path or a URL); ``kind`` None: told by its first
        data line."""
        path, fs = located(spec)
        found = sniff(spec)
        if kind is None:
            kind = found
        if kind not in ("run", "qrels"):
            raise InputError(
                "not a TREC run (qid Q0 docno rank score tag) or qrels (qid iter docno rel) file",
                path=spec,
            )
        return cls(str(spec), path, kind, task, fs)

    @property
    def files(self) -> tuple[Path, ...]:
        return (self.path,)

    def _names(self) -> dict[str, str]:
        if self.task == "nextloc":
            names = {"qid": "qid", "docno": "location"}
            return names | {"rank": "rank", "score": "score"} if self.kind == "run" else names
        return RUN_AS_RECS if self.kind == "run" else QRELS_AS_RATINGS

    def schema(self) -> dict[str, pl.DataType]:
        import polars as pl

        if self.task == "nextloc":
            schema = {"qid": pl.String, "location": pl.Int64}
            if self.kind == "run":
                schema |= {"rank": pl.Int64, "score": pl.Float64}
            return schema
        if self.kind == "run":
            return {
                "user_id": pl.String,
                "item_id": pl.String,
                "rank": pl.Int64,
                "score": pl.Float64,
            }
        return {"user_id": pl.String, "item_id": pl.String, "rating": pl.Float64}

    def row_count_estimate(self) -> int:
        fs = self.filesystem
        size = os.path.getsize(self.path) if fs is None else file_size(fs, self.path)
        return max(1, size // 24)

    def has_rows(self) -> bool:
        return _first_data_line(self.path, self.filesystem) is not None

    def iter_batches(self, columns: list[str], batch_rows: int) -> Iterator[pl.DataFrame]:
        import polars as pl

        names = self._names()
        missing = [c for c in columns if c not in names.values()]
        if missing:
            raise InputError(
                "missing column (a TREC file has no such field)", path=self.label, column=missing[0]
            )
        reader = iter_run if self.kind == "run" else iter_qrels
        block = max(1 << 20, min(batch_rows * 48, 1 << 28))
        for frame in reader(self.path, block_bytes=block, filesystem=self.filesystem):
            if self.task == "nextloc":
                frame = self._integer_docnos(frame)
            renamed = frame.select([pl.col(k).alias(v) for k, v in names.items()])
            if "rating" in renamed.columns:
                renamed = renamed.with_columns(pl.col("rating").cast(pl.Float64))
            yield renamed.select(columns)

    def _integer_docnos(self, frame: pl.DataFrame) -> pl.DataFrame:
        import polars as pl

        if self.kind == "qrels":
            frame = frame.filter(pl.col("rel") > 0)
        docno = pl.col("docno").cast(pl.Int64, strict=False)
        bad = frame.filter(docno.is_null()).head(1)
        if bad.height:
            raise InputError(
                f"docno {bad['docno'][0]!r} of query {bad['qid'][0]} is not an integer "
                "(next-location ids are integers)",
                path=self.label,
                column="docno",
            )
        return frame.with_columns(docno)

    def fingerprint(self) -> list[dict]:
        # imported here: mobeval.io.sources loads pyarrow, which mobeval trec_eval never needs
        from mobeval.io.sources import file_fingerprint, remote_fingerprint

        if self.filesystem is not None:
            return [remote_fingerprint(self.filesystem, self.path, footer=False)]
        return [file_fingerprint(self.path, footer=False)]
