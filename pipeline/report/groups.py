"""What sets apart the groups of a city's models scored under different options: the label
each group's tables carry in the report."""

from __future__ import annotations

import json

from mobeval.compare.results import Result


def group_label(group: list[Result], groups: list[list[Result]]) -> str:
    """What sets a group of a city's models apart from the others (empty when the city is one
    group): its task and its values of the options on which the groups differ, or its truth."""
    if len(groups) < 2:
        return ""
    first = group[0]
    names = sorted({name for other in groups for name in other[0].options})
    parts = [f"{first.task} results"] if len({g[0].task for g in groups}) > 1 else []
    parts += [
        f"{name} = {_plain(first.options.get(name))}"
        for name in names
        if len({json.dumps(g[0].options.get(name)) for g in groups}) > 1
    ]
    if not parts:
        return f"group {groups.index(group) + 1}: scored against another truth"
    return "scored with " + ", ".join(parts)


def _plain(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)
