"""The unit of account of ranking measures: every run, however it chunks, projected onto the golden set's chunks.

A run's ranked passages become a ranked list of golden chunks by the rule of :mod:`assay.metrics.projection`: a
golden chunk given as itself (by id, or a text whose words are exactly the chunk's) stands for itself; a passage
located in a document reaches each chunk once the run's passages up to it have shown at least half of the chunk's
characters; a passage found in no document (or an unknown id) keeps its place under its own unit id and is never
relevant. trec_eval's measures, context precision, coverage recall, judged@k and the grade histogram are computed on
the projection, against the same labels for every run, so they depend on which text a run retrieved and in what
order, not on how it cut that text; a run of golden chunk ids projects onto itself and scores what trec_eval gives.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from assay.formats.golden import GoldenSet
from assay.metrics.projection import Item, UnitIndex
from assay.pipelines.evaluate.runs.loaded import LoadedRun, RunLine
from assay.pipelines.evaluate.runs.locate import Resolver

__all__ = ["ReadRun", "Units", "project_run", "read_runs"]


class Units:
    """The golden chunks as units: their ids, their ranges in the documents (empty when a chunk cannot be placed),
    and each id's position."""

    def __init__(self, golden: GoldenSet, resolver: Resolver) -> None:
        self.ids = [chunk.id for chunk in golden.chunks]
        self.position = {cid: i for i, cid in enumerate(self.ids)}
        self.ranges: list[tuple[str, int, int]] = []
        for cid in self.ids:
            span = resolver.chunk_span(cid)
            self.ranges.append((span.doc_id, span.start, span.end) if span is not None else ("", 0, 0))
        self.index = UnitIndex(self.ranges)


def _items(line: RunLine, units: Units) -> list[Item]:
    items: list[Item] = []
    for unit in line.ranked:
        if unit in units.position:
            items.append(units.position[unit])
            continue
        found = line.located.get(unit)
        span = found.span if found is not None else None
        items.append((span.doc_id, span.start, span.end) if span is not None else None)
    return items


def _projected(line: RunLine, units: Units) -> RunLine:
    slots = units.index.project(_items(line, units))
    ranked = [units.ids[slot.at] if slot.kind == "unit" else line.ranked[slot.at] for slot in slots]
    scores = {unit: float(len(ranked) - rank) for rank, unit in enumerate(ranked)}  # the projected order, strictly
    return RunLine(line.query_id, ranked, scores, answer=line.answer, citations=line.citations, error=line.error)


def project_run(run: LoadedRun, units: Units) -> LoadedRun:
    """``run`` with every line's ranking projected onto the golden chunks (see the module docstring); the counts,
    header and trace are the run's own (shared, not copied)."""
    return replace(run, lines={qid: _projected(line, units) for qid, line in run.lines.items()})


@dataclass(frozen=True)
class ReadRun:
    """One run as the evaluation carries it from its first step: ``run`` as read (its passages as the system
    returned them: what the judge reads and the budget and span measures cut) and ``projected`` onto the golden
    chunks (what the label-based measures rank). Built once, by :func:`read_runs`, and passed whole."""

    run: LoadedRun
    projected: LoadedRun

    @property
    def name(self) -> str:
        return self.run.name


def read_runs(loaded: list[LoadedRun], units: Units) -> list[ReadRun]:
    """Each run with its projection onto ``units``, in the order read."""
    return [ReadRun(run, project_run(run, units)) for run in loaded]
