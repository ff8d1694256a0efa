"""A commit journal read back (``OUT/.staging/commit-<token>.json``, written by
:func:`mobeval.io.writers.commit_result` before its first move): checked whole before the next
run undoes what it lists, since undoing renames the folders it names. Only exactly what a commit
writes passes: a journal naming the staging area itself, a whole section, ``..`` or a path
outside the staging area and the result's folders is refused, and nothing moves."""

from __future__ import annotations

import re

from mobeval.io.partitions import PARTITION_PIECES


def check_journal(plan: object, sections: tuple[str, ...], staging: str, name: re.Pattern) -> None:
    """``plan`` checked to be what a commit writes, every path whole (``sections``: OUT's result
    sections; ``staging``: its staging folder's name; ``name``: a plain city, model or run
    name): a list of moves ``{"final", "aside", "staged"}``, each ``final`` one section's
    folder of one result (``<section>/[<partition>/]city=<c>/model=<m>[/run=<r>]``), the same result
    throughout and each section once; each ``aside`` ``<root>/replaced-<section>`` of its own
    section under one root inside the staging area (never the area itself); each ``staged``
    null or a folder inside it. A ValueError names the first entry that is not."""
    plain = name.pattern
    final_path = re.compile(
        rf"({'|'.join(sections)})/((?:{PARTITION_PIECES}/)?city={plain}/model={plain}"
        rf"(?:/run={plain})?)"
    )
    inside = re.compile(rf"{re.escape(staging)}(?:/{plain})+")  # never the area itself
    if not isinstance(plan, list) or not plan:
        raise ValueError("not a list of moves")
    results, seen, roots = set(), [], set()
    for index, move in enumerate(plan):
        if not isinstance(move, dict) or set(move) != {"final", "aside", "staged"}:
            raise ValueError(f"entry {index} is not a move (final, aside, staged)")
        final, aside, staged = move["final"], move["aside"], move["staged"]
        found = final_path.fullmatch(final) if isinstance(final, str) else None
        if found is None:
            raise ValueError(f"entry {index}: final {final!r} is not a result's section folder")
        section, result = found.groups()
        root = aside.removesuffix(f"/replaced-{section}") if isinstance(aside, str) else None
        if root is None or root == aside or not inside.fullmatch(root):
            raise ValueError(
                f"entry {index}: aside {aside!r} is not {staging}/.../replaced-{section}"
            )
        if staged is not None and not (isinstance(staged, str) and inside.fullmatch(staged)):
            raise ValueError(f"entry {index}: staged {staged!r} is not inside {staging}")
        results.add(result)
        seen.append(section)
        roots.add(root)
    if len(results) > 1 or len(roots) > 1 or len(set(seen)) < len(seen):
        raise ValueError("its moves are not one result's sections, each once, under one root")
