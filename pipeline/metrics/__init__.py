"""Metric names, options and convention presets of each task (conventions are data)."""


def drop_duplicates_hint(entry: str) -> str:
    """What ``duplicates="drop"`` does, for the message that rejects an ``entry`` (item, location)
    twice in one list: the recommendation and the next-location tasks say it alike."""
    return (
        f"duplicates='drop' keeps one entry per {entry} as ranx, pytrec_eval "
        f"and ir_measures do (the last row's score, at the first row's place; the {entry}s after "
        "a copy move up)"
    )
