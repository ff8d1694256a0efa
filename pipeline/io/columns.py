"""Column mapping: the user's column names read as a family's own, input by input.

Every family reads two inputs, the truth (``truth``, or the family's own name for it: ``ratings``,
``reference``, ``targets``) and the predictions (``pred``, or ``predictions``, ``recs``,
``generated``, ``logits``). Its ``columns`` option maps our column names to the user's: a plain
entry (``location = "poi"``) in both inputs, an entry under an input's name in that input only::

    --columns location=poi,truth.user_id=userId       (command line: ours=theirs pairs)
    columns = { location = "poi", truth = { user_id = "userId" } }      (job file)
    columns={"location": "poi", "truth": {"user_id": "userId"}}         (Python; or "truth.user_id")

:func:`column_map` checks a mapping against a family's inputs and column names (an unknown input
or column, an entry given twice, two of our columns read from one column: an OptionError) and
splits it per input (:class:`ColumnMap`). The rename itself happens where an input is opened, the
one place every input passes through (an engine's ``source``): :class:`RenamedSource` for the
local engine's sources, the Spark engine's ``read_input`` for its DataFrames, both through
:func:`renamed_schema`. Past that point every reader, plan and scorer sees our names only.

:func:`rename_hint` is what a missing column's message says to do next: the column of the file
that likely holds it under another name (``userId`` for ``user_id``, ``movieId`` for ``item_id``,
a case or underscore difference) and the entry that reads it (``columns={'truth.user_id':
'userId'}``, spelled ``--columns truth.user_id=userId`` by the command line).

The module loads no Polars or Arrow (a family's definition reads it: ``--help`` stays light).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mobeval.errors import InputError, OptionError

if TYPE_CHECKING:
    import polars as pl

#: Our name of the logits family's targets column (in a Parquet file of targets, or beside the
#: logits in theirs).
TARGETS_COLUMN = "target"
#: The two inputs, as the mapping's prefixes name them beside each family's own names.
ROLES = ("truth", "pred")
#: Other spellings of our column names met in public data sets (MovieLens' ``userId`` /
#: ``movieId``, Foursquare's ``venueId``, Yelp's ``business_id``, Amazon's ``asin``...), compared
#: after :func:`_plain` (lower case, without ``_``, ``-``, ``.`` or spaces).
SPELLINGS: dict[str, tuple[str, ...]] = {
    "user_id": ("user", "userid", "uid", "users", "customerid", "reviewerid", "visitorid"),
    "item_id": (
        "item",
        "itemid",
        "movieid",
        "movie",
        "venueid",
        "venue",
        "businessid",
        "productid",
        "asin",
        "bookid",
        "isbn",
        "artistid",
        "trackid",
        "poiid",
        "poi",
    ),
    "rating": ("ratings", "stars", "score", "preference", "playcount", "count"),
    "location": ("poi", "poiid", "venueid", "venue", "loc", "locationid", "placeid", "label"),
    "locations": ("pois", "candidates", "topk", "predictions", "items"),
    "score": ("logit", "logits", "prob", "probability", "prediction", "pred", "weight"),
    "scores": ("logits", "probs", "probabilities"),
    "rank": ("position", "pos", "ranking"),
    "target": ("targets", "label", "labels", "y", "class"),
    "uid": ("userid", "user", "user_id"),
    "sample_id": ("sample", "sampleid", "id", "query", "queryid", "qid"),
}
#: The placeholder of a rename hint when no column of the file looks like the missing one.
PLACEHOLDER = "YOUR_COLUMN"


@dataclass(frozen=True)
class ColumnMap:
    """A checked ``columns`` option: per input (``truth``, ``pred``), our name -> the user's."""

    truth: dict[str, str] = field(default_factory=dict)
    pred: dict[str, str] = field(default_factory=dict)
    #: The entries given for both inputs: a column each must be found in one input at least.
    shared: dict[str, str] = field(default_factory=dict)

    def of(self, role: str) -> dict[str, str]:
        return self.truth if role == "truth" else self.pred


def _entries(value: Mapping) -> Iterator[tuple[str | None, str, object, str]]:
    """(input or None, our name, their name, the entry as given) of each entry: nested tables
    (``truth = {user_id = "userId"}``) and dotted keys (``truth.user_id``) alike."""
    for name, theirs in value.items():
        if isinstance(theirs, Mapping):
            for ours, column in theirs.items():
                yield name, str(ours), column, f"{name}.{ours}"
        elif "." in str(name):
            where, _, ours = str(name).partition(".")
            yield where, ours, theirs, str(name)
        else:
            yield None, str(name), theirs, str(name)


def column_map(
    value: Mapping | None,
    *,
    inputs: Mapping[str, Collection[str]],
    names: Mapping[str, Collection[str]],
    title: str,
) -> ColumnMap:
    """``value`` (the ``columns`` option) checked and split per input. ``inputs``: each role's
    accepted names (``{"truth": ("truth", "ratings"), "pred": ("pred", "recs")}``); ``names``: our
    column names each role reads (the family's, and the key's): an entry for one input must
    name one of its own (``ratings.rank`` is refused, never ignored), a plain one a column of
    either; ``title``: the family's, for messages. An entry under an input's name wins over a
    plain one for that input."""
    if not value:
        return ColumnMap()
    role_of = {name: role for role, spellings in inputs.items() for name in spellings}
    listed = " and ".join(
        f"{role} (or {', '.join(s for s in spellings if s != role)})"
        if len(spellings) > 1
        else role
        for role, spellings in inputs.items()
    )
    plain: dict[str, str] = {}
    own: dict[str, dict[str, str]] = {role: {} for role in ROLES}
    given: dict[tuple[str | None, str], str] = {}
    for where, ours, theirs, entry in _entries(value):
        if where is not None and where not in role_of:
            raise OptionError(
                "columns", value, f"unknown input {where!r} in {entry!r}: the inputs are {listed}"
            )
        role = None if where is None else role_of[where]
        known = names[role] if role else list(dict.fromkeys(n for o in names.values() for n in o))
        if ours not in known:
            held = ": ours are" if role is None else f"'s {where} input, which holds"
            raise OptionError(
                "columns",
                value,
                f"{ours!r} (in {entry!r}) is not a column of {title}{held} "
                f"{', '.join(known)}; each entry is ours=yours",
            )
        if not isinstance(theirs, str) or not theirs.strip():
            raise OptionError("columns", value, f"{entry!r}: give the column's name, a string")
        if (role, ours) in given:
            raise OptionError(
                "columns", value, f"{given[role, ours]!r} and {entry!r} name one column: give one"
            )
        given[role, ours] = entry
        (plain if role is None else own[role])[ours] = theirs.strip()
    sides = {role: plain | own[role] for role in ROLES}
    for role, mapping in sides.items():
        read: dict[str, str] = {}
        for ours, theirs in mapping.items():
            if theirs in read:
                raise OptionError(
                    "columns",
                    value,
                    f"{read[theirs]!r} and {ours!r} are both read from {role}'s column "
                    f"{theirs!r}: one column of a file is one of ours",
                )
            read[theirs] = ours
    return ColumnMap(sides["truth"], sides["pred"], plain)


def renamed_schema(schema: Mapping, renames: Mapping[str, str], label: str) -> dict:
    """``schema`` (the file's names) with each of ``renames`` (ours -> theirs, those the file
    has) read under our name; an InputError when a renamed column lands on a name the file also
    holds (two columns of one name)."""
    back = {theirs: ours for ours, theirs in renames.items()}
    renamed = {}
    for name, dtype in schema.items():
        ours = back.get(name, name)
        if ours in renamed or (ours != name and ours in schema and ours not in renames):
            raise InputError(
                f"the mapping reads '{name}' as '{ours}', and the file has a column '{ours}' "
                f"too: map '{ours}' away as well, or drop the entry; columns present: "
                f"{list(schema)}",
                path=label,
                column=name,
            )
        renamed[ours] = dtype
    return renamed


def checked_renames(schema: Collection[str], columns: ColumnMap, role: str, label: str) -> dict:
    """The renames (ours -> theirs) of one input (``role``) whose file has ``schema``: the
    entries given for this input alone must name a column it has (an InputError naming the file,
    the column and the entry), a plain entry may be the other input's alone; a renamed column
    may not land on a name the file also holds (:func:`renamed_schema`)."""
    renames = columns.of(role)
    for ours, theirs in renames.items():
        if theirs not in schema and columns.shared.get(ours) != theirs:
            itself = (
                f"; the file has '{ours}' itself: no mapping is needed" if ours in schema else ""
            )
            raise InputError(
                f"missing column, read as '{ours}' by columns={{'{role}.{ours}': '{theirs}'}}; "
                f"columns present: {list(schema)}{itself}",
                path=label,
                column=theirs,
            )
    found = {ours: theirs for ours, theirs in renames.items() if theirs in schema}
    renamed_schema(dict.fromkeys(schema), found, label)
    return found


def check_used(columns: ColumnMap, truth, pred) -> None:
    """An OptionError when an entry given for both inputs names a column that neither has (each
    input's ``renames``: what was read under our names)."""
    for ours, theirs in columns.shared.items():
        read = [getattr(s, "renames", {}).get(ours) for s in (truth, pred)]
        if theirs not in read:
            itself = all(ours in s.schema() for s in (truth, pred))
            raise OptionError(
                "columns",
                {ours: theirs},
                f"neither {truth.label} nor {pred.label} has a column {theirs!r} (read as "
                f"{ours!r})"
                + (
                    f"; both have '{ours}' itself: no mapping is needed"
                    if itself
                    else f": name the column that holds our {ours!r}"
                ),
            )


@dataclass(frozen=True)
class RenamedSource:
    """A source (:mod:`mobeval.io.sources`'s interface) whose columns ``renames`` (ours -> the
    file's, each present) are read under our names: ``schema()`` and every batch say ours, what
    is asked of the source says the file's."""

    source: object
    renames: dict[str, str]

    @property
    def label(self) -> str:
        return self.source.label

    def schema(self) -> dict:
        return renamed_schema(self.source.schema(), self.renames, self.label)

    def has_rows(self) -> bool:
        return self.source.has_rows()

    def row_count_estimate(self) -> int:
        return self.source.row_count_estimate()

    def fingerprint(self) -> list[dict]:
        return self.source.fingerprint()

    def iter_batches(self, columns: list[str], batch_rows: int) -> Iterator[pl.DataFrame]:
        theirs = [self.renames.get(c, c) for c in columns]
        back = {t: o for o, t in self.renames.items() if t in theirs}
        for batch in self.source.iter_batches(theirs, batch_rows):
            yield batch.rename(back)


def renamed(source, columns: ColumnMap | None, role: str):
    """``source`` read with the ``columns`` of its input (``role``: :func:`checked_renames`);
    itself when the mapping is empty."""
    if columns is None or not (columns.truth or columns.pred):
        return source
    return RenamedSource(source, checked_renames(source.schema(), columns, role, source.label))


def _plain(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch not in "_-. ")


def likely_source(schema: Collection[str], column: str, known: Collection[str] = ()) -> str | None:
    """The column of ``schema`` that likely holds our ``column`` under another name: the same
    name but for case and ``_-.`` (``userId``, ``User_ID``), a spelling of :data:`SPELLINGS`
    (``movieId`` for ``item_id``), else the one column the family does not know (``known``:
    our names and the key); None if none or several."""
    others = [name for name in schema if name not in known and name != column]
    for wanted in (_plain(column), *SPELLINGS.get(column, ())):
        found = [name for name in others if _plain(name) == wanted]
        if len(found) == 1:
            return found[0]
    return others[0] if len(others) == 1 else None


def rename_hint(
    schema: Collection[str], columns: Sequence[str], role: str, known: Collection[str] = ()
) -> str:
    """What a message about our ``columns`` missing from an input (``role``: ``truth``, ``pred``)
    says to do next: ``; the file has 'userId': read it as 'user_id' with columns={'truth.user_id':
    'userId'}`` (:func:`likely_source`; a placeholder when no column looks like the first one;
    every missing column whose likely source is found, in one entry). The command line spells
    the entry ``--columns truth.user_id=userId``."""
    found = {c: likely_source(schema, c, known) for c in columns}
    found = {ours: theirs for ours, theirs in found.items() if theirs is not None}
    if not found:
        entry = f"columns={{'{role}.{columns[0]}': '{PLACEHOLDER}'}}"
        return f"; a column under another name is read as '{columns[0]}' with {entry}"
    entry = ", ".join(f"'{role}.{ours}': '{theirs}'" for ours, theirs in found.items())
    theirs = ", ".join(f"'{c}'" for c in found.values())
    ours = ", ".join(f"'{c}'" for c in found)
    them = "them" if len(found) > 1 else "it"
    return f"; the file has {theirs}: read {them} as {ours} with columns={{{entry}}}"


def key_hint(column: str, schema: Collection[str], other: Collection[str], known) -> str:
    """``; both inputs have 'sample_id': if it is the key, key='sample_id'`` when the key's one
    column (``column``) is missing and both inputs hold its likely source under one name."""
    theirs = likely_source(schema, column, known)
    if theirs is None or column in other or likely_source(other, column, known) != theirs:
        return ""
    return f"; both inputs have '{theirs}': if it is the key, key='{theirs}'"


def swapped_hint(own: str, schema: Collection[str], other: Collection[str], role: str) -> str:
    """``; this file looks like the <other input>...`` when the column that this input (``role``)
    lacks (``own``) is the other input's and this one has none of ours of its own: the two inputs
    given in each other's place."""
    if own in other and own not in schema:
        other_role = "predictions" if role == "truth" else "truth"
        return (
            f"; the other input has '{own}': is this file the {other_role}? then the truth and "
            "the predictions are swapped: give each to the other"
        )
    return ""


def missing_column(
    schema: Collection[str],
    column: str | Sequence[str],
    label: str,
    role: str,
    known: Collection[str] = (),
    what: str = "missing column",
    other: Collection[str] = (),
    key_in: Collection[str] | None = None,
) -> InputError:
    """The error of our ``column`` (or columns: the first is named) missing from an input
    (``role``: ``truth``, ``pred``; its file ``label``, our names in ``schema``): the columns
    present and what to do next, the two inputs given in each other's place (``other``: the
    other input's own columns, :func:`swapped_hint`) or the entry that reads the columns under
    their names in the file (:func:`rename_hint`; ``known``: the family's names and the key,
    which are not candidates). ``key_in``: where ``column`` is the key's one column, the other
    input's columns: a likely source in both inputs is named as the key to give instead."""
    from mobeval.io.sources import columns_present

    columns = [column] if isinstance(column, str) else list(column)
    hint = (
        (key_in is not None and key_hint(columns[0], schema, key_in, known))
        or swapped_hint(columns[0], schema, other, role)
        or rename_hint(schema, columns, role, known)
    )
    return InputError(f"{what}; {columns_present(schema)}{hint}", path=label, column=columns[0])


@contextmanager
def their_names(*sources) -> Iterator[None]:
    """An InputError raised inside about a column that a source reads under our name
    (``renames``) names the column as its file does: ``poi`` (read as ``location``)."""
    try:
        yield
    except InputError as error:
        for source in sources:
            theirs = getattr(source, "renames", {}).get(error.column)
            if theirs is not None and error.path == source.label:
                raise InputError(
                    f"{error.message} (read as '{error.column}' by the columns option)",
                    path=error.path,
                    column=theirs,
                    key=error.key,
                ) from None
        raise
