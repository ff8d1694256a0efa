"""The validator's tasks (HuMob 2024 / GIS Cup 2025): each year and city's uid range and test
days, plain data, read by :mod:`mobeval.validate.humob` and by ``mobeval validate --help``
(which loads no Polars)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TaskSpec:
    """uid range (inclusive both ends) and test days of one task."""

    uid_min: int
    uid_max: int
    d_min: int
    d_max: int


def _tasks() -> dict[str, TaskSpec]:
    tasks = {
        "2025:a": TaskSpec(147001, 150000, 61, 75),
        "2025:b": TaskSpec(27001, 30000, 61, 75),
        "2025:c": TaskSpec(22001, 25000, 61, 75),
        "2025:d": TaskSpec(17001, 20000, 61, 75),
        "2025:test": TaskSpec(50, 60, 60, 74),  # the reference keeps the old test days
        # 2024 ranges were upper-exclusive in the old validator: range(22000, 25000) etc.
        "2024:b": TaskSpec(22000, 24999, 60, 74),
        "2024:c": TaskSpec(17000, 19999, 60, 74),
        "2024:d": TaskSpec(3000, 5999, 60, 74),
        "2024:test": TaskSpec(50, 59, 60, 74),
    }
    for name in ("a", "b", "c", "d", "test"):
        tasks[name] = tasks[f"2025:{name}"]
    return tasks


#: Task ids: "2025:a".."2025:d", "2025:test", "2024:b".."2024:d", "2024:test"; a bare
#: "a".."d"/"test" means 2025.
TASKS = _tasks()
