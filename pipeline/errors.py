"""Errors a user can act on. Every message names the file, the column and the first offending
key."""

from __future__ import annotations

import os


class MobevalError(Exception):
    """Base class of every error mobeval raises on purpose (the CLI prints it and exits 2)."""


class InputError(MobevalError):
    """Bad input: the message says where (file, column) and what (the first offending key)."""

    def __init__(
        self,
        message: str,
        *,
        path: object | None = None,
        column: str | None = None,
        key: object | None = None,
    ) -> None:
        self.message = message
        self.path = None if path is None else str(path)
        self.column = column
        self.key = key
        where = []
        if self.path is not None:
            where.append(self.path)
        if column is not None:
            where.append(f"column '{column}'")
        text = ": ".join([*where, message]) if where else message
        if key is not None:
            text += f" (first offending key: {key})"
        super().__init__(text)


def no_file(path: object) -> InputError:
    """The InputError for a ``path`` that is not a file to read, saying what it is instead:
    ``no such file``, ``a folder, not a file`` or ``a symbolic link to nothing`` (a URL: ``no
    such file``)."""
    if os.path.isdir(path):
        why = "a folder, not a file"
    elif os.path.islink(path) and not os.path.exists(path):
        why = "a symbolic link to nothing"
    else:
        why = "no such file"
    return InputError(why, path=path)


class ConfigError(MobevalError):
    """A job file or an option that makes no sense (unknown metric, k < 1, unknown preset...)."""


class EngineStopped(MobevalError):
    """The engine stopped under a run (the Spark driver shut down, its JVM killed, the cluster
    lost): neither an input's nor an option's fault, and said as such (the CLI exits 2)."""


class OutputInUse(MobevalError):
    """Another mobeval run holds the output folder's lock."""


class OptionError(ConfigError, ValueError):
    """An option's value is wrong (a wrong choice, type, range, NaN, empty...). ``option`` is the
    option's Python name; each face names it as its user spells it (:meth:`spelled`): ``--k`` on
    the command line, ``tasks[0].k`` in a job file, ``k=`` in Python (``str(error)``). Also a
    ValueError, as a wrong value given to a convention's dataclass always was."""

    def __init__(self, option: str, value: object, detail: str) -> None:
        self.option = option
        self.value = value
        self.detail = _without_prefix(option, detail)
        named = self.detail != detail  # "k must be...", "order_by='x' is not...": as they are
        super().__init__(detail if named else f"{option}={_short_repr(value)}: {detail}")

    def spelled(self, name: str) -> str:
        """The message with the option named ``name`` (``--matching``, ``job.toml: tasks[0].k``)."""
        return f"{name}: {self.detail}"


def _without_prefix(option: str, detail: str) -> str:
    """``"k must be >= 1"`` -> ``"must be >= 1"``: the face names the option itself."""
    for prefix in (f"{option}=", f"{option}: ", f"{option} "):
        if detail.startswith(prefix):
            return detail[len(prefix) :]
    return detail


def _short_repr(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
