"""``mobeval ndeval QRELS RUN``: read the subtopic qrels, stream the run a batch of topics at a
time (:func:`mobeval.tasks.diversity_stream.stream_diversity`: memory bounded by
``--chunk-rows`` lines), print ndeval's CSV or, with ``-m``, ir_measures' lines."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field

from mobeval.errors import ConfigError, InputError
from mobeval.io.trec import iter_run, located, read_qrels, read_run
from mobeval.ndeval.measures import DiversityMeasure, parse_measure
from mobeval.tasks.diversity import DiversityScores
from mobeval.tasks.diversity_stream import CHUNK_ROWS, stream_diversity

#: ndeval's columns, in its order: (measure, cutoff).
COLUMNS = [
    *((name, k) for name in ("ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG") for k in (5, 10, 20)),
    ("NRBP", None),
    ("nNRBP", None),
    ("MAP-IA", None),
    *((name, k) for name in ("P-IA", "strec") for k in (5, 10, 20)),
]


@dataclass
class Options:
    """The options of one ndeval run, spelled as its flags (``measures``: ``-m``)."""

    alpha: float = 0.5
    beta: float = 0.5
    traditional: bool = False
    max_docs: int | None = None
    complete: bool = False
    measures: list[str] = field(default_factory=list)
    per_query: bool = False
    places: int = 4
    chunk_rows: int = CHUNK_ROWS


def c_fixed(value: float) -> str:
    """``%.6f`` as glibc prints it (a NaN with its sign: 0.0 / 0.0 is ``-nan``)."""
    if value == value:
        return f"{value:.6f}"
    return "-nan" if math.copysign(1.0, value) < 0 else "nan"


def ndeval_text(scores: DiversityScores, complete: bool, path: str) -> str:
    """ndeval's CSV: the header, a line per topic of the run (topics the qrels lack: zeros),
    then ``amean``: each column summed over those lines in order, over the topics of both files
    (every qrels topic with ``-c``)."""
    columns = [scores.value(name, k) for name, k in COLUMNS]
    names = ",".join(name if k is None else f"{name}@{k}" for name, k in COLUMNS)
    lines = [f"runid,topic,{names}"]
    totals = [0.0] * len(COLUMNS)
    for t in [t for t in range(len(scores.topics)) if scores.in_run[t]]:
        values = [float(column[t]) for column in columns]
        totals = [total + value for total, value in zip(totals, values, strict=True)]
        lines.append(",".join([scores.runid, scores.topics[t], *map(c_fixed, values)]))
    count = int((scores.in_qrels if complete else scores.in_qrels & scores.in_run).sum())
    if count == 0:
        raise InputError("no topic of the run is in the qrels", path=path)
    lines.append(",".join([scores.runid, "amean", *(c_fixed(t / count) for t in totals)]))
    return "\n".join(lines) + "\n"


def _value_text(value: float, places: int) -> str:
    """A value as ir_measures' command line prints it (``-p``: places, -1 Python's repr)."""
    return f"{value}" if places < 0 else f"{value:.{places}f}"


def ir_measures_text(qrels, score, measures: list[DiversityMeasure], opts: Options, paths) -> str:
    """ir_measures' lines of ``measures``: pyndeval's values (lists by score, ties by docno
    ascending; a qrels topic the run lacks 0), each measure's mean over the qrels topics summed
    in the run's order of topics (its aggregator's); ``-q``: a ``topic measure value`` line per
    qrels topic and measure first, then ``all``. ``score(**options)``: the run's
    :class:`DiversityScores` under ``options``, a pass over the run for each level, alpha and
    beta the measures name."""
    groups: dict[tuple, DiversityScores] = {}
    for m in measures:
        key = (m.level, m.alpha, m.beta)
        if key not in groups:
            groups[key] = score(
                order="score_docno_asc", level=m.level, alpha=m.alpha, beta=m.beta,
                numeric_topics=False,
            )  # fmt: skip
    first = next(iter(groups.values()))
    order = [t for t in first.run_order if first.in_qrels[t]]
    order += [t for t in range(len(first.topics)) if first.in_qrels[t] and not first.in_run[t]]
    if not order or not first.in_run[order[0]]:
        raise InputError("no topic of the run is in the qrels", path=paths[1])
    lines, summary = [], []
    values = {}
    for m in measures:
        scores = groups[m.level, m.alpha, m.beta]
        column = scores.value(m.column, m.cutoff)
        values[m.label] = [float(column[t]) if scores.in_run[t] else 0.0 for t in order]
        total = 0.0
        for value in values[m.label]:
            total += value
        summary.append((m.label, total / len(order)))
    if opts.per_query:
        for i, t in enumerate(order):
            for m in measures:
                value = _value_text(values[m.label][i], opts.places)
                lines.append(f"{first.topics[t]}\t{m.label}\t{value}")
        lines += [f"all\t{label}\t{_value_text(v, opts.places)}" for label, v in summary]
    else:
        lines += [f"{label}\t{_value_text(v, opts.places)}" for label, v in summary]
    return "\n".join(lines) + "\n"


def run_ndeval(qrels_path, run_path, opts: Options) -> str:
    """The whole command: read, score, format. Files plain or gzip, local paths or URLs;
    identifiers read as bytes (``.encode("latin-1")`` gives them back)."""
    measures = [parse_measure(text) for text in dict.fromkeys(opts.measures)]
    ndeval_flags = {
        "-alpha": opts.alpha != 0.5,
        "-beta": opts.beta != 0.5,
        "-traditional": opts.traditional,
        "-M": opts.max_docs is not None,
        "-c": opts.complete,
    }
    given = [flag for flag, on in ndeval_flags.items() if on]
    if measures and given:
        raise ConfigError(
            f"{given[0]} is ndeval's; -m names take ir_measures' conventions (ties by docno "
            "ascending, every qrels topic, alpha and beta as parameters: alpha_nDCG(alpha=0.3)@20)"
        )
    for path in (qrels_path, run_path):
        located(path)  # both there before either is read
    paths = (str(qrels_path), str(run_path))
    qrels = read_qrels(qrels_path, keep_iter=True, as_bytes=True)

    def score(**options) -> DiversityScores:
        path, fs = located(run_path)
        blocks = iter_run(path, filesystem=fs, as_bytes=True)
        whole = lambda: read_run(run_path, as_bytes=True)  # noqa: E731
        return stream_diversity(
            qrels, blocks, whole, chunk_rows=opts.chunk_rows, paths=paths, **options
        )

    if measures:
        return ir_measures_text(qrels, score, measures, opts, paths)
    scores = score(
        order="score_docno_desc" if opts.traditional else "rank",
        alpha=opts.alpha,
        beta=opts.beta,
        max_docs=opts.max_docs,
    )
    return ndeval_text(scores, opts.complete, paths[1])


def main_from_args(args) -> int:
    opts = Options(
        alpha=args.alpha,
        beta=args.beta,
        traditional=args.traditional,
        max_docs=args.max_docs,
        complete=args.complete,
        measures=list(args.measures),
        per_query=args.per_query,
        places=args.places,
        chunk_rows=args.chunk_rows or CHUNK_ROWS,
    )
    report = run_ndeval(args.qrels, args.run, opts).encode("latin-1")
    sys.stdout.flush()
    sys.stdout.buffer.write(report)
    return 0
