"""Why each of a run's first passages counts what it counts for a question: the real cause of a 0 in a failing gate.

For one run and question, the passage rows of ``passages.jsonl`` (rank, unit, span, grade, ``labelled_by``; a run
asked several times: its first asking) are read in rank order and each is explained by the first step that applies:

1. **A golden chunk** (by id, or by a text whose words are exactly the chunk's): its label with its source and
   rationale, or "no relevance label (counted not relevant)".
2. **Found in no document**: never relevant.
3. **A located passage**: how it was graded: "graded G by rule" (carried over from the labelled spans it holds),
   "judged G", "graded G by an earlier judgement (stored)", or "unlabelled" (no judge was given, or the judge gave
   no grade: counted not relevant). For a measure counted in golden chunks
   (:func:`~assay.pipelines.evaluate.scoring.names.counts_units`) it goes on with what the passage reached there
   (:mod:`assay.metrics.projection`): the golden chunks the run had shown half of at its rank, with their grades;
   else the chunk it overlaps already counted at an earlier rank; else the share of the chunk it overlaps most that
   the run had shown by then ("shows 40% of chunk X (a unit counts once half of it is shown)").
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.formats.golden import GoldenSet
from assay.formats.golden_labels import standing_labels
from assay.metrics.projection import Item
from assay.pipelines.evaluate.evaluated import PassageRow
from assay.pipelines.evaluate.runs.locate import Resolver
from assay.pipelines.evaluate.runs.units import Units
from assay.pipelines.evaluate.scoring.names import counts_units
from assay.types import RelevanceLabel

__all__ = ["Causes"]

Row = PassageRow
_HOW = {"rule": "graded {g} by rule", "judged": "judged {g}", "stored": "graded {g} by an earlier judgement (stored)"}


class Causes:
    """Explains passage rows against one golden set (as evaluated: with the labels the judge added); ``judged``:
    whether the evaluation had a judge."""

    def __init__(self, golden: GoldenSet, rows: Sequence[Row], *, judged: bool) -> None:
        self.golden = golden
        self.rows = rows
        self.judged = judged
        self.labels = standing_labels(golden.qrels) | golden.passage_labels()
        self._units: Units | None = None

    @property
    def units(self) -> Units:
        if self._units is None:
            self._units = Units(self.golden, Resolver(self.golden))
        return self._units

    def reasons(self, run: str, query_id: str, metric: str, first: int) -> list[str]:
        """One line per passage of ``run``'s ``first`` ranks for ``query_id``: ``rank N UNIT: cause`` (a run asked
        several times: its first asking)."""
        rows = [r for r in self.rows if r.run == run and r.query_id == query_id]
        asking = min((r.repeat or 0 for r in rows), default=0)
        line = sorted((r for r in rows if (r.repeat or 0) == asking), key=lambda r: r.rank)
        reached = self._reached(line) if counts_units(metric) else None
        return [f"rank {row.rank} {row.unit}: {self._cause(row, line, reached)}" for row in line[:first]]

    def _cause(self, row: Row, line: Sequence[Row], reached: dict[str, int] | None) -> str:
        if row.unit in self.units.position:
            return self._chunk(row.query_id, row.unit)
        if row.doc_id is None:
            return "found in no golden document (never relevant)"
        graded = self._graded(row)
        return graded if reached is None else f"{graded}, {self._reach(row, line, reached)}"

    def _chunk(self, query_id: str, chunk_id: str) -> str:
        label = self.labels.get((query_id, chunk_id))
        if label is None or label.grade is None:
            return "no relevance label (counted not relevant)" + ("" if self.judged else "; no judge was given")
        return f"grade {label.grade} ({_source(label)})"

    def _graded(self, row: Row) -> str:
        grade, how = row.grade, row.labelled_by
        if how not in _HOW or grade is None:
            return (
                "unlabelled (" + ("the judge gave no grade" if self.judged else "no judge") + ": counted not relevant)"
            )
        label = self.labels.get((row.query_id, row.unit))
        why = f" ({_source(label)})" if how != "rule" and label is not None else ""
        return _HOW[how].format(g=grade) + why

    def _reached(self, line: Sequence[Row]) -> dict[str, int]:
        """Golden chunk id -> the rank at which the run's projection reached it."""
        slots = self.units.index.project([self._item(row) for row in line])
        return {self.units.ids[s.at]: line[s.rank].rank for s in slots if s.kind == "unit"}

    def _item(self, row: Row) -> Item:
        if row.unit in self.units.position:
            return int(self.units.position[row.unit])
        return row.place

    def _reach(self, row: Row, line: Sequence[Row], reached: dict[str, int]) -> str:
        """What ``row`` reached among the golden chunks (step 3 of the module docstring)."""
        now = [cid for cid, rank in reached.items() if rank == row.rank]
        if now:
            return "reaches " + ", ".join(f"chunk {cid} ({self._chunk(row.query_id, cid)})" for cid in now)
        overlapped = self._overlapped(row)
        if not overlapped:
            return "but overlaps no golden chunk (counted in no unit)"
        earlier = [cid for cid in overlapped if cid in reached and reached[cid] < row.rank]
        if earlier:
            return f"but chunk {earlier[0]} was already counted at rank {reached[earlier[0]]} (a unit counts once)"
        located = [r for r in line if r.unit not in self.units.position and r.doc_id is not None]
        share, cid = max((_shown(located, row.rank, self._range(cid)), cid) for cid in overlapped)
        return f"but shows {share:.0%} of chunk {cid} (a unit counts once half of it is shown)"

    def _range(self, chunk_id: str) -> tuple[str, int, int]:
        return self.units.ranges[self.units.position[chunk_id]]

    def _overlapped(self, row: Row) -> list[str]:
        """The golden chunks the located passage ``row`` overlaps, in the golden set's order."""
        if row.place is None:
            return []
        doc, start, end = row.place
        return [cid for cid, (d, s, e) in zip(self.units.ids, self.units.ranges, strict=True)
                if d == doc and s < end and start < e]  # fmt: skip


def _shown(line: Sequence[Row], rank: int, chunk: tuple[str, int, int]) -> float:
    """Share of ``chunk``'s characters the located passages of ranks 1..``rank`` cover (each character once)."""
    doc, start, end = chunk
    places = [(r.rank, r.place) for r in line if r.place is not None]
    pieces = sorted((max(s, start), min(e, end)) for r, (d, s, e) in places
                    if r <= rank and d == doc and s < end and start < e)  # fmt: skip
    covered, reach = 0, start
    for s, e in pieces:
        covered += max(0, e - max(s, reach))
        reach = max(reach, e)
    return covered / (end - start) if end > start else 0.0


def _source(label: RelevanceLabel) -> str:
    return f"{label.provenance.source}: {label.provenance.rationale or 'no rationale'}"
