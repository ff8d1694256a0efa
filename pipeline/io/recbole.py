"""RecBole atomic files (RecBole's ``docs/source/user_guide/data/atomic_files.rst``): text tables
whose columns are apart by a tab (RecBole's ``field_separator``) and whose first line names each
column with its type, ``name:type``, e.g. an interaction file ``ml-1m.inter``::

    user_id:token	item_id:token	rating:float	timestamp:float
    1	1193	5	978300760

Types, read as RecBole's ``Dataset._load_feat`` reads them (pandas ``read_csv`` with
``dtype=np.float64`` for ``float``, ``str`` otherwise): ``token`` a string (an id, kept as text as
RecBole keeps it), ``float`` a float64, ``token_seq`` / ``float_seq`` a sequence as its text (the
``seq_separator``-joined values; mobeval scores none of them). Fields may be quoted with ``"`` as
pandas allows. The column names are the part before the colon, so an ``.inter`` file gives the
recs task its ``user_id``, ``item_id`` and ``rating`` (ratings), or ``score`` / ``rank`` (lists).

A file is an atomic file when its name ends with ``.inter`` (``.inter.gz``) or, when its name
does not say CSV or Parquet (``.tsv``, ``.txt``, none), when every tab-separated field of its
first line is ``name:type`` with a RecBole type (:func:`parse_header`). It is read in blocks by
pyarrow's CSV reader (:mod:`mobeval.io.sources`).
"""

from __future__ import annotations

import re

import pyarrow as pa

SUFFIXES = (".inter", ".inter.gz")
FIELD_SEPARATOR = "\t"
#: RecBole's feature types and the Arrow type each is read as.
FEATURE_TYPES = {
    "token": pa.string(),
    "token_seq": pa.string(),
    "float": pa.float64(),
    "float_seq": pa.string(),
}
_FIELD = re.compile(r"^([^:\t]+):(token|token_seq|float|float_seq)$")


def parse_header(line: str) -> dict[str, pa.DataType] | None:
    """Column name -> Arrow type of a typed header line, or None if ``line`` is not one (every
    field ``name:type`` with a RecBole type, names distinct)."""
    fields = line.rstrip("\r\n").split(FIELD_SEPARATOR)
    parsed = [_FIELD.match(field) for field in fields]
    if not fields or not all(parsed):
        return None
    names = [m.group(1) for m in parsed]
    if len(set(names)) != len(names):
        return None
    return {m.group(1): FEATURE_TYPES[m.group(2)] for m in parsed}
