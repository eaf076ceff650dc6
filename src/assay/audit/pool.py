"""People's grades of spans join the pool: the store's human labels of judged passages, written into passages.jsonl.

A span label is the label of a passage judged during an evaluation (``passages.jsonl``: a span of a golden
document, or a text found in no document). People grade it on the audit page or in an imported CSV like a chunk;
the store keeps the events (source ``human`` or ``imported``, annotator, reason, time). The pool that ``assay eval``
scores every run against reads the passages' labels (:meth:`GoldenSet.passage_labels`: a human label stands
before the judge's, :data:`~assay.formats.golden.SOURCE_PRECEDENCE`), so the store's grades are written there, by
one rule:

1. Per (question, passage), the current grades of every person in the store (undone grades are gone).
2. One grade: the lower median of them (as :meth:`LabelStore.audited_pairs` with ``one_per_item``); the label has
   source ``human``, the annotator's name (``consensus of a, b`` for several), their reasons as rationale, and the
   time of the latest grade.
3. Its quotes (which characters are relevant, :mod:`assay.audit.quoting`): none when the grade is 0; else the quotes
   of the people who graded 1 or more, each once, in annotator order; none when one of them quoted nothing (their
   grade is of the whole text, which then paints whole).
4. That label replaces the passage's human label for the question. When every grade of an item was undone, its
   human label is removed; an item the store has no human event for is left as it is (a deleted store removes
   nothing).

Human labels of passages are the store's: nothing else writes them. The rule is applied for one item after each
grade or undo on the page, after a CSV import, and for every item when a store is opened (``assay audit``,
``agreement``, ``labels``) and before ``assay eval`` and ``assay export``: a grade made while an evaluation rewrote
passages.jsonl comes back at the next of these. Chunk labels are not written anywhere: the store is read where they
are used (agreement, PPI).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path

from assay.audit.records import CurrentLabel, Item, current_of, fold
from assay.audit.store import LabelStore
from assay.formats.golden import read_passages, write_passages
from assay.types import Passage, Provenance, RelevanceLabel

__all__ = ["human_span_labels", "join_pool"]


def human_span_labels(current: Iterable[CurrentLabel], passage_ids: set[str]) -> dict[Item, RelevanceLabel]:
    """Steps 1 and 2: one human label per (question, passage) from the current labels of the store."""
    graded: dict[Item, list[CurrentLabel]] = {}
    for lab in current:
        if lab.source != "judge" and lab.grade is not None and lab.chunk_id in passage_ids:
            graded.setdefault(lab.item, []).append(lab)
    return {item: _combined(item, labels) for item, labels in graded.items()}


def _combined(item: Item, labels: list[CurrentLabel]) -> RelevanceLabel:
    labels = sorted(labels, key=lambda lab: lab.annotator)
    grade = int(statistics.median_low(lab.grade for lab in labels if lab.grade is not None))
    names = [lab.annotator for lab in labels]
    who = names[0] if len(names) == 1 else "consensus of " + ", ".join(names)
    reasons = [lab.reason for lab in labels if lab.reason]
    if len(labels) > 1:
        reasons = [f"{lab.annotator}: {lab.reason}" for lab in labels if lab.reason]
    prov = Provenance(
        source="human",
        annotator=who,
        rationale="; ".join(reasons) or None,
        time=max(datetime.fromisoformat(lab.time) for lab in labels),
    )
    return RelevanceLabel(query_id=item[0], chunk_id=item[1], grade=grade, provenance=prov,
                          quotes=_quotes(labels, grade))  # fmt: skip


def _quotes(labels: list[CurrentLabel], grade: int) -> list[str] | None:
    """Step 3: the quotes of the combined label of ``grade`` from people's labels (in annotator order)."""
    relevant = [lab for lab in labels if lab.grade is not None and lab.grade >= 1]
    if grade < 1 or any(not lab.quotes for lab in relevant):
        return None
    return list(dict.fromkeys(quote for lab in relevant for quote in lab.quotes or ()))


def join_pool(store: LabelStore, golden_dir: str | Path, items: Sequence[Item] | None = None) -> int:
    """Write the store's human grades of spans into ``golden_dir``'s passages.jsonl (the module docstring's rule),
    for ``items`` or every item; returns how many (question, passage) labels were added, changed or removed (0: the
    file is left untouched).

    Runs under the store's write lock, so two pages, or a page and a CSV import, never lose each other's grade."""
    folder = Path(golden_dir)
    with store.exclusive():
        passages = read_passages(folder)
        ids = {p.id for p in passages} if items is None else {pid for _, pid in items}
        if not ids:
            return 0
        events = store.events() if items is None else [e for item in set(items) for e in store.history(*item)]
        known = {(e.query_id, e.chunk_id) for e in events if e.source != "judge" and e.chunk_id in ids}
        wanted: dict[str, dict[str, RelevanceLabel]] = {}
        current = (current_of(stack[-1]) for stack in fold(events).values() if stack)
        for (qid, pid), label in human_span_labels(current, ids).items():
            wanted.setdefault(pid, {})[qid] = label
        changed = sum(_apply(p, known, wanted.get(p.id, {})) for p in passages if p.id in ids)
        if changed:
            write_passages(folder, passages)
        return changed


def _apply(passage: Passage, known: set[Item], wanted: dict[str, RelevanceLabel]) -> int:
    """Step 4 on one passage: its human labels the store knows become ``wanted`` (by question); how many differ."""

    def ours(label: RelevanceLabel) -> bool:
        return label.provenance.source == "human" and (label.query_id, passage.id) in known

    old = {label.query_id: label for label in passage.labels if ours(label)}
    differ = [q for q in old.keys() | wanted.keys() if q not in old or q not in wanted or not _same(old[q], wanted[q])]
    if differ:
        passage.labels[:] = [label for label in passage.labels if not ours(label)] + [wanted[q] for q in sorted(wanted)]
    return len(differ)


def _same(old: RelevanceLabel, new: RelevanceLabel) -> bool:
    a, b = old.provenance, new.provenance
    return (old.grade, a.annotator, a.rationale, a.time, old.quotes) == (
        new.grade, b.annotator, b.rationale, b.time, new.quotes)  # fmt: skip
