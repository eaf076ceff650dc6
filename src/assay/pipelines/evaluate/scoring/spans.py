"""Span metrics of ``assay eval``: recall, precision and IoU of the characters the top-k passages cover against the
question's evidence (:mod:`assay.metrics.spans`). They need no judge and stay comparable across chunkings: a system
is not rewarded for longer passages (ranking measures are: a long passage is more likely to hold something
relevant, and fewer of them fill the same context).

Names: ``span_recall@k``, ``span_precision@k``, ``span_iou@k`` against the evidence quotes located in the documents
(unscored, reason ``no_evidence_spans``, for a question without located evidence); ``span_recall@k|g>=2`` (any
grade) against the characters of the question's golden chunks graded at least 2 (unscored, ``no_graded_chunks``,
without such a chunk). Retrieved passages found in no document count in the retrieved characters with their text's
length; an unknown id without text counts 0 characters.
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.corpus.align import Span
from assay.formats.golden import GoldenSet
from assay.metrics.spans import Range, span_scores
from assay.pipelines.evaluate.runs.carry import SpanIndex
from assay.pipelines.evaluate.runs.loaded import LoadedRun, RunLine
from assay.pipelines.evaluate.scoring.names import SPAN_FAMILIES, parse_span_name
from assay.pipelines.evaluate.scoring.ranking import QueryValues

__all__ = ["default_span_names", "span_values"]


def default_span_names(k_values: Sequence[int], golden: GoldenSet, index: SpanIndex) -> list[str]:
    """Span metrics at each k against the evidence quotes when some question's evidence is found in the documents,
    else against the chunks graded >= 2 when some such chunk is found in its document, else none (a golden set
    whose documents have no text, e.g. imported qrels without a corpus, has no characters to measure)."""
    qids = [q.id for q in golden.questions]
    if any(index.evidence(qid) for qid in qids):
        suffix = ""
    elif any(grade >= 2 for qid in qids for _, grade in index.graded(qid)):
        suffix = "|g>=2"
    else:
        return []
    return [f"{family}@{k}{suffix}" for k in k_values for family in SPAN_FAMILIES]


def _retrieved(line: RunLine, k: int) -> tuple[list[Range], int]:
    ranges: list[Range] = []
    outside = 0
    for unit in line.top(k):
        located = line.located.get(unit)
        span = located.span if located is not None else None
        if span is not None:
            ranges.append((span.doc_id, span.start, span.end))
        else:
            outside += len(line.texts.get(unit, ""))
    return ranges, outside


def _evidence(index: SpanIndex, qid: str, min_grade: int | None) -> tuple[list[Span], str]:
    if min_grade is None:
        return index.evidence(qid), "no_evidence_spans"
    return [span for span, grade in index.graded(qid) if grade >= min_grade], "no_graded_chunks"


def span_values(run: LoadedRun, index: SpanIndex, names: Sequence[str]) -> dict[str, QueryValues]:
    """The span metrics ``names`` for every query of ``run``."""
    parsed = [parse_span_name(name) for name in names]
    out: dict[str, QueryValues] = {}
    for qid, line in run.lines.items():
        values = out[qid] = QueryValues()
        for spec in parsed:
            evidence, reason = _evidence(index, qid, spec.min_grade)
            ranges, outside = _retrieved(line, spec.k)
            scores = span_scores(ranges, [(s.doc_id, s.start, s.end) for s in evidence], outside)
            value = {"span_recall": scores.recall, "span_precision": scores.precision, "span_iou": scores.iou}
            values.put(spec.name, value[spec.family], reason)
    return out
