"""A model name mobeval chose never replaces another input's result.

Given no model name (``--model``, ``model=``), a result is named after its predictions' file
(:func:`mobeval.engines.base.default_model_name`: ``bpr.run`` -> ``bpr.run``,
``deepmove.parquet`` -> ``deepmove``). Two inputs may give one name (``a/bpr.run`` and
``b/bpr.run``; any object without a file); the second would replace the first's result in OUT
with exit 0. So a chosen name replaces a result only when the manifest records it as scored
from the same input: a file in common (the same predictions scored again, changed or not), or
files of the same sizes and digests (a copy). Otherwise the run stops before any work, exit 2,
naming both inputs and ``--model``; a name the user gives replaces its result as before.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from mobeval.errors import ConfigError
from mobeval.io.outputs import read_manifest
from mobeval.io.remote import url_scheme
from mobeval.io.writers import partition_path, result_name

#: What tells a file's content in its fingerprint (:func:`mobeval.io.sources.file_fingerprint`).
_CONTENT = ("size", "sha256_footer", "sha256_head")


def _located(part: dict) -> str | None:
    """Where a fingerprinted file lies, resolved (a URL as it is); None for an object."""
    path = str(part.get("path", ""))
    if not path or path.startswith("<"):
        return None
    return path if url_scheme(path) else os.path.realpath(path)


def _content(parts: list[dict]) -> list[tuple] | None:
    """The files' sizes and digests, None where a file has no digest (nothing to compare)."""
    if not parts or not all(any(k.startswith("sha256") for k in part) for part in parts):
        return None
    return [tuple(part.get(k) for k in _CONTENT) for part in parts]


def same_input(recorded: list[dict], current: list[dict]) -> bool:
    """Whether two fingerprints (:meth:`Source.fingerprint`) are of one input: a file in
    common, or the same files' sizes and digests."""
    common = {_located(p) for p in recorded} & {_located(p) for p in current}
    content = _content(recorded)
    return bool(common - {None}) or (content is not None and content == _content(current))


def _shown(parts: list[dict]) -> str:
    paths = [str(part.get("path", "?")) for part in parts]
    return paths[0] if len(paths) == 1 else f"{paths[0]} and {len(paths) - 1} more file(s)"


def check_chosen_model(
    where: dict,
    names: tuple[str, str, str | None],
    label: str,
    fingerprint: Callable[[], list[dict]],
    read_text: Callable[[str], str | None] | None = None,
) -> None:
    """Before a result is scored into ``where["out"]`` under ``names`` (city, model, run,
    partition: :func:`mobeval.io.writers.result_name`) with
    no model name given (``where["model"]`` None, so mobeval chose it): refuse when OUT's
    manifest records that result as scored from another input than ``label``, the predictions
    (whose ``fingerprint()`` is taken only then): a ConfigError naming both and ``--model``.
    ``read_text`` reads the manifest (default: the local file's text, None when absent)."""
    out = where["out"]
    if out is None or where["model"] is not None:
        return
    manifest = f"{str(out).rstrip('/')}/manifest.json"
    kwargs = {} if read_text is None else {"read_text": read_text}
    entry = read_manifest(manifest, **kwargs).get(result_name(*names))
    if entry is None:
        return
    recorded = entry["inputs"].get("predictions", [])
    if same_input(recorded, fingerprint()):
        return
    city, model = names[:2]
    place = f"{str(out).rstrip('/')}/{partition_path('summary', *names)}"
    raise ConfigError(
        f"{label}: model {model!r} (the name taken from its file) of city {city!r} is already "
        f"{place}, scored from {_shown(recorded)}: another input, whose result this one would "
        f"replace; give --model NAME to keep both, or --model {model} to replace it"
    )
