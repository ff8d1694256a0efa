"""When a run's batches are decoded and its chunks consumed: a trace of one ``mobeval`` process,
to see whether the reading threads keep the scoring (main) thread fed.

    python benchmarks/bench_read_trace.py [--batches] -- recs --ratings ... --recs ... --quiet

Runs the command in this process (``mobeval.__main__``) with three functions wrapped: each
Parquet batch a source yields (:func:`mobeval.io.sources.parquet_batches`: when, on which thread,
which file, its rows), the sorted stream's pairs (:func:`mobeval.engines.local.stream_pairs`:
how long the main thread waited for each pair, and how long it took to score it before asking
for the next) and the engine's run (its start). Prints, in seconds from the process's start
(``/proc/self/stat``'s start time): the first and the last batch of each file and thread, the
engine's start, the first and the last pair, the main thread's waits (total, the first, the
largest after it) and scoring, and the process's CPU (user + system) at the end; ``--batches``:
every batch and every pair as well. The wrappers cost a few microseconds a batch.
"""

from __future__ import annotations

import argparse
import atexit
import os
import resource
import sys
import threading
import time


def _started() -> float:
    """The process's start, on ``time.time()``'s clock."""
    ticks = os.sysconf("SC_CLK_TCK")
    with open("/proc/self/stat") as stat:
        since_boot = int(stat.read().rsplit(")", 1)[1].split()[19]) / ticks
    with open("/proc/uptime") as uptime:
        booted = time.time() - float(uptime.read().split()[0])
    return booted + since_boot


T0 = _started()
EVENTS: list[tuple[float, str, str, str]] = []  # (seconds, thread, what, detail)


def _mark(what: str, detail: str = "") -> None:
    EVENTS.append((time.time() - T0, threading.current_thread().name, what, detail))


def _wrap() -> None:
    import mobeval.engines.base as base
    import mobeval.io.sources as sources

    decode = sources.parquet_batches

    def batches(parquet, source, columns, batch_rows, plain):
        name = os.path.basename(str(source))
        for batch in decode(parquet, source, columns, batch_rows, plain):
            _mark("decoded", f"{name} {batch.height}")
            yield batch

    sources.parquet_batches = batches
    run = base.LocalEngine.run

    def engine_run(self, *args, **kwargs):
        _mark("engine run")
        import mobeval.engines.local as local  # the engine imports it now, as it would

        pairs = local.stream_pairs

        def timed_pairs(*args, **kwargs):
            asked = time.time()
            for item in pairs(*args, **kwargs):
                handed = time.time()
                _mark("pair", f"{(handed - asked) * 1000:.1f}")
                yield item
                asked = time.time()
                _mark("scored", f"{(asked - handed) * 1000:.1f}")

        local.stream_pairs = timed_pairs
        return run(self, *args, **kwargs)

    base.LocalEngine.run = engine_run


def _report(every: bool) -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    end = time.time() - T0
    if every:
        for seconds, thread, what, detail in EVENTS:
            print(f"{seconds:7.3f} {thread:22} {what} {detail}", file=sys.stderr)
    spans: dict[tuple[str, str], list[float]] = {}
    for seconds, thread, what, detail in EVENTS:
        if what == "decoded":
            spans.setdefault((detail.rsplit(" ", 1)[0], thread), []).append(seconds)
    for (name, thread), times in spans.items():
        print(
            f"{name} on {thread}: {len(times)} batches, {times[0]:.3f}-{times[-1]:.3f} s",
            file=sys.stderr,
        )
    pairs = [(s, float(d) / 1000) for s, _, what, d in EVENTS if what == "pair"]
    scoring = sum(float(d) / 1000 for _, _, what, d in EVENTS if what == "scored")
    starts = [s for s, _, what, _ in EVENTS if what == "engine run"]
    if pairs:
        waits = [wait for _, wait in pairs]
        print(
            f"engine run {starts[0]:.3f} s; pairs {len(pairs)}: first {pairs[0][0]:.3f} s, last "
            f"{pairs[-1][0]:.3f} s; main waited {sum(waits):.3f} s (first {waits[0]:.3f}, "
            f"largest after {max(waits[1:], default=0):.3f}), scored {scoring:.3f} s",
            file=sys.stderr,
        )
    print(f"end {end:.3f} s, CPU {usage.ru_utime + usage.ru_stime:.3f} s", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", action="store_true", help="print every batch and pair")
    parser.add_argument("arguments", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    _wrap()
    atexit.register(_report, args.batches)
    sys.argv = ["mobeval", *[a for a in args.arguments if a != "--"]]
    import mobeval.__main__ as entry

    raise SystemExit(getattr(entry, "command", entry.run)())


if __name__ == "__main__":
    main()
