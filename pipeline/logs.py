"""Log lines for a scheduler or a log collector, on stderr: one per phase of each result.

Off a terminal a progress bar is of no use to whoever reads the log afterwards (a cron mail, a
Slurm or Airflow log, a collector). With a log format set (:func:`configure`: the command line's
``--log-format``, a job file's ``log_format``; ``mobeval run`` off a terminal logs ``text``
unless ``--quiet``), each result writes one line as each of its phases ends (``read``,
``bucket``, ``compile``, ``score``, ``write``, then ``done``), and a long phase one more line
every :data:`PERIOD` seconds, never one per chunk::

    2026-11-27T17:02:11Z mobeval tky/markov score rows=3000 rate=1.2e6/s elapsed=0.41s

``json``: the same fields as one JSON object a line (``ts``, ``level``, ``city``, ``model``,
``run``, ``phase``, ``rows``, ``rate``, ``elapsed``, ``out``); the command's other messages,
its error included, as ``{"ts", "level", "message"}`` objects, so that every line parses.
``ts`` is ISO 8601 in UTC; ``elapsed`` the phase's seconds (``done``: the result's); ``rate``
``rows / elapsed`` (``score``: the compile's seconds left out, being logged on their own line).
"""

from __future__ import annotations

import functools
import json
import sys
from datetime import UTC, datetime

#: The formats ``--log-format`` takes.
FORMATS = ("text", "json")

#: Seconds between two lines of one long phase.
PERIOD = 30.0

#: The format set for this process (:func:`configure`); ``None``: no log lines.
_format: str | None = None


def configure(log_format: str | None) -> None:
    """Log in ``log_format`` (one of :data:`FORMATS`) from now on; ``None``: no log lines."""
    global _format
    _format = log_format


def scoped(function):
    """``function`` (a command's ``main``), the log format it sets let go when it returns: a
    caller that goes on (a test, a notebook) logs nothing unless it asks."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        finally:
            configure(None)

    return wrapper


def timestamp() -> str:
    """Now, ISO 8601 in UTC to the second: ``2026-11-27T17:02:11Z``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def short(number: float) -> str:
    """``number`` in two significant digits, as a log reads it: ``1.2e6``, ``4.1e-1``."""
    mantissa, exponent = f"{number:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def message(text: str, level: str = "info", stream=None) -> None:
    """One of the command's messages (``level``: info or error): as it reads in ``text`` (or
    with no log format), a JSON object in ``json``."""
    stream = sys.stderr if stream is None else stream
    if _format == "json":
        text = json.dumps({"ts": timestamp(), "level": level, "message": text})
    stream.write(text + "\n")
    stream.flush()


class ResultLog:
    """The log lines of one (city, model, run) result written to ``out`` (``None``: in memory),
    on ``stream`` (default: stderr) in ``log_format``; a result under a ``partition``
    (``date=2026-11-27``) has it first, a field of its own."""

    def __init__(self, city, model, run, out, log_format: str, stream=None, partition=None) -> None:
        self.where = {} if partition is None else {"partition": partition}
        self.where |= {"city": city, "model": model, "run": run}
        self.out = None if out is None else str(out)
        self.format = log_format
        self.stream = sys.stderr if stream is None else stream

    @classmethod
    def configured(cls, city, model, run, out, partition=None) -> ResultLog | None:
        """The result's log in the format :func:`configure` set; ``None`` if none is set."""
        if _format is None:
            return None
        return cls(city, model, run, out, _format, partition=partition)

    def due(self, seconds: float) -> bool:
        """Whether a phase whose last line is ``seconds`` old has its next one now."""
        return seconds >= PERIOD

    def phase(self, phase: str, rows: int | None, seconds: float) -> None:
        """Phase ``phase`` (a log name: read, bucket, compile, score, write, done) did ``rows``
        (``None``: rows are not what it counts) in ``seconds``."""
        rate = rows / seconds if rows is not None and seconds > 0 else None
        record = {"ts": timestamp(), "level": "info", **self.where, "phase": phase}
        record |= {"rows": rows, "rate": rate, "elapsed": round(seconds, 6), "out": self.out}
        if self.format == "json":
            line = json.dumps(record)
        else:
            label = "/".join(n for n in self.where.values() if n is not None)
            line = f"{record['ts']} mobeval {label} {phase}"
            line += "" if rows is None else f" rows={rows}"
            line += "" if rate is None else f" rate={short(rate)}/s"
            line += f" elapsed={seconds:.2f}s"
            line += f" out={self.out}" if phase == "done" and self.out is not None else ""
        self.stream.write(line + "\n")
        self.stream.flush()


def add_option(command) -> None:
    """``--log-format`` on the argparse ``command``."""
    command.add_argument(
        "--log-format",
        choices=FORMATS,
        default=None,
        help="one stderr line per phase of each result (read, compile, score, write, done) with "
        "a UTC timestamp, rows, rate and seconds, instead of the progress bar: text, or json "
        "(one object a line, errors too) for a log collector (default: text for 'mobeval run' "
        "off a terminal, else none)",
    )


def chosen(log_format: str | None, *, quiet: bool, by_default: bool, stream=None) -> str | None:
    """The format a command logs in: ``log_format`` if given; else, for a command that logs
    ``by_default`` (``mobeval run``) and is not ``quiet``, ``text`` when ``stream`` (default:
    stderr) is not a terminal; else none."""
    if log_format is not None or quiet or not by_default:
        return log_format
    stream = sys.stderr if stream is None else stream
    return None if getattr(stream, "isatty", lambda: False)() else "text"
