"""The pool of labelled spans, and the one rule that grades any span from it.

Labels live on document spans. A question's **pool** is every span with a scored label for it: each golden chunk's
label at the chunk's span, and each judged passage's label (``passages.jsonl``, judged in this or an earlier
evaluation, or graded by a person) at the passage's span, and each quote of a label (the sentences that bear on the
question) at its place, with the label's grade. The **character grades** are painted from them by the rule of
:mod:`~.painting` (quotes, else whole spans; chunk labels first, a passage's only where no chunk label covers; the
highest grade wins, so no label erases relevant text); the budget measures read the same character grades
(:mod:`~assay.pipelines.evaluate.scoring.budget`).

The rule, for a question q and a span S of document d (a retrieved passage that is not a golden chunk; evidence
spans are q's evidence quotes located in its source documents):

1. **Same text.** S and labelled spans overlap with IoU >= 0.9: the highest of their grades (near-identical spans
   are one text).
2. **Evidence inside.** S contains a whole evidence span of q: the highest grade among the labelled spans that
   contain that evidence span and the labelled spans S contains whole; undecided when no labelled span holds the
   evidence span.
3. **Labelled text.** At least 90% of S's characters have a character grade:
   a. every graded character of S is graded 0: grade 0 (a part of irrelevant text is irrelevant);
   b. S contains a whole labelled span (a quote counts) whose grade is the highest of S's characters: that grade
      (it holds all the text that earned it);
   c. otherwise undecided (a fragment of a relevant span may have lost the answer).
4. **Otherwise** (S reaches text no label covers for q): undecided.

With golden chunks alone (they do not overlap) the character grades are the chunks' and this is issue 20's
carry-over rule. With a judge, the golden chunks that undecided passages of step 4 overlap and that have no label for
q are judged first, like the chunks of any new run (pooled into the golden set: their labels serve every later
system, whatever its chunking), and the rule is applied again; only what is still undecided is judged as a passage,
and its label joins the pool for every run evaluated then and later, as TREC pools judgements across runs.
A passage that could not be located is undecided. Undecided passages go to the judge when there is one (cached per
question and text like any relevance call, and kept in the golden set's ``passages.jsonl``, so a second evaluation
pays nothing); without a judge they are unlabelled: not relevant for ranking measures, as trec_eval treats unjudged
documents, and counted in judged@k and the passage-label counts. Never silently 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from assay.corpus.align import Span
from assay.formats.golden import GoldenSet
from assay.judge import Pair
from assay.metrics.budget import resolve
from assay.pipelines.evaluate.runs.loaded import LoadedRun, RunLine
from assay.pipelines.evaluate.runs.locate import Resolver
from assay.pipelines.evaluate.runs.painting import LabelSpan, painted_segments, quote_spans
from assay.types import RelevanceLabel

__all__ = ["Carried", "SpanIndex", "carry_labels", "decide"]

SAME_TEXT_IOU = 0.9
LABELLED_SHARE = 0.9
Graded = tuple[Span, int]


class SpanIndex:
    """Per question: its evidence spans, its graded chunks' spans and its pool of labelled spans (chunks and judged
    passages), computed once through ``resolver``."""

    def __init__(self, golden: GoldenSet, resolver: Resolver) -> None:
        self.golden = golden
        self.resolver = resolver
        self._qrels = golden.qrels_map()
        self._evidence: dict[str, list[Span]] = {}
        self._graded: dict[str, list[Graded]] = {}
        self._graded_ids: dict[str, list[str]] = {}
        self._passages: dict[str, list[LabelSpan]] | None = None
        self._chunk_labels: dict[str, list[LabelSpan]] = {}
        self._painted: dict[str, list[tuple[str, int, int, int]]] = {}
        self._standing_qrels: dict[tuple[str, str], RelevanceLabel] | None = None
        self._by_doc: dict[str, list[tuple[Span, str]]] | None = None
        self.quotes_unplaced = 0  # quotes of labels that could not be placed inside their label's span

    def relabelled(self) -> None:
        """Read the golden set's labels again (labels were added to it): the graded chunks and the pool follow."""
        self._qrels = self.golden.qrels_map()
        self._graded.clear()
        self._passages = None
        self._chunk_labels.clear()
        self._painted.clear()
        self._standing_qrels = None

    def labelled(self, qid: str) -> list[Graded]:
        """The question's pool: its graded chunks' spans, then its judged passages' spans, with their grades, and
        every placed quote of theirs as a labelled span of the label's grade."""
        chunks, passages = self._chunk_labels_of(qid), self._passage_labels().get(qid, [])
        return [(item.span, item.grade) for item in chunks + passages] + [
            (quote, item.grade) for item in chunks + passages for quote in item.quotes
        ]

    def painted(self, qid: str) -> list[tuple[str, int, int, int]]:
        """The question's character grades as overlapping ``(doc, start, end, grade)`` segments
        (:mod:`~.painting`'s rule; resolve them by the highest grade)."""
        if qid not in self._painted:
            self._painted[qid] = painted_segments(self._chunk_labels_of(qid), self._passage_labels().get(qid, []))
        return self._painted[qid]

    def _placed(self, span: Span, label: RelevanceLabel, text: str | None) -> LabelSpan:
        """A label at its span, its quotes placed in it and the other places of the same words (``text``: the
        labelled text, whose copies a label without quotes reaches)."""
        quotes, echoes, dropped = quote_spans(span, label.quotes, self.resolver.text_places)
        self.quotes_unplaced += dropped
        if not quotes and (label.grade or 0) >= 1 and text:
            own = (span.doc_id, span.start, span.end)
            echoes = [p for p in self.resolver.text_places(text) if (p.doc_id, p.start, p.end) != own]
        return LabelSpan(span, label.grade or 0, tuple(quotes), tuple(echoes))

    def _chunk_labels_of(self, qid: str) -> list[LabelSpan]:
        if qid not in self._chunk_labels:
            standing = self._standing()
            out = []
            for (span, grade), cid in zip(self.graded(qid), self._graded_ids[qid], strict=True):
                label = standing.get((qid, cid))
                text = self.golden.chunk(cid).text
                out.append(self._placed(span, label, text) if label is not None else LabelSpan(span, grade))
            self._chunk_labels[qid] = out
        return self._chunk_labels[qid]

    def _standing(self) -> dict[tuple[str, str], RelevanceLabel]:
        if self._standing_qrels is None:
            self._standing_qrels = self.golden.standing_qrels()
        return self._standing_qrels

    def _passage_labels(self) -> dict[str, list[LabelSpan]]:
        if self._passages is None:
            where = {p.id: p for p in self.golden.passages}
            self._passages = {}
            for (qid_of, pid), label in self.golden.passage_labels().items():
                passage = where.get(pid)
                if label.grade is None or passage is None or passage.doc_id is None:
                    continue
                if passage.start is not None and passage.end is not None:
                    found = Span(passage.doc_id, passage.start, passage.end, "offsets", 1.0)
                    placed = self._placed(found, label, None)
                    placed = LabelSpan(placed.span, placed.grade, placed.quotes)  # no copies: painting step 4
                    self._passages.setdefault(qid_of, []).append(placed)
        return self._passages

    def evidence(self, qid: str) -> list[Span]:
        """The question's evidence quotes located (in its source documents first, then anywhere)."""
        if qid not in self._evidence:
            question = self.golden.question(qid)
            spans = [self._quote(text, question.source_doc_ids) for text in question.evidence if text.strip()]
            self._evidence[qid] = [s for s in spans if s is not None]
        return self._evidence[qid]

    def _quote(self, text: str, doc_ids: Sequence[str]) -> Span | None:
        span = self.resolver.locate(text, doc_ids) if doc_ids else None
        return span if span is not None else self.resolver.locate(text)

    def _chunks_in(self, doc_id: str) -> list[tuple[Span, str]]:
        """The golden chunks of a document at their spans (every document's, computed on first need)."""
        if self._by_doc is None:
            self._by_doc = {}
            for chunk in self.golden.chunks:
                found = self.resolver.chunk_span(chunk.id)
                if found is not None:
                    self._by_doc.setdefault(found.doc_id, []).append((found, chunk.id))
        return self._by_doc.get(doc_id, [])

    def overlapping(self, span: Span) -> list[str]:
        """Golden chunks of ``span``'s document that overlap it."""
        return [cid for s, cid in self._chunks_in(span.doc_id) if _overlap(span, s)]

    def held(self, span: Span, share: float = 0.5) -> list[str]:
        """Golden chunks of ``span``'s document of which ``span`` covers at least ``share`` of the characters."""
        return [cid for s, cid in self._chunks_in(span.doc_id) if _overlap(span, s) >= share * max(1, s.end - s.start)]

    def stands_for(self, line: RunLine, unit: str) -> list[str]:
        """The golden chunks a retrieved passage stands for in chunk-id metrics: those it covers at least half of."""
        found = line.located.get(unit)
        return self.held(found.span) if found is not None and found.span is not None else []

    def graded(self, qid: str) -> list[Graded]:
        """The spans of the question's golden chunks with a scored label, with the grade."""
        if qid not in self._graded:
            out, ids = [], []
            for cid, grade in self._qrels.get(qid, {}).items():
                span = self.resolver.chunk_span(cid) if self.golden.has_chunk(cid) else None
                if span is not None:
                    out.append((span, grade))
                    ids.append(cid)
            self._graded[qid], self._graded_ids[qid] = out, ids
        return self._graded[qid]


def _overlap(a: Span, b: Span) -> int:
    return max(0, min(a.end, b.end) - max(a.start, b.start)) if a.doc_id == b.doc_id else 0


def _contains(outer: Span, inner: Span) -> bool:
    return outer.doc_id == inner.doc_id and outer.start <= inner.start and inner.end <= outer.end


def _resolved_in(span: Span, painted: Sequence[tuple[str, int, int, int]]) -> list[tuple[int, int]]:
    """``(characters, grade)`` of the parts of ``span`` that the character grades ``painted`` grade, overlaps
    resolved by the highest grade."""
    near = [p for p in painted if p[0] == span.doc_id and p[2] > span.start and p[1] < span.end]
    segments = resolve(near).get(span.doc_id, [])
    return [(min(e, span.end) - max(s, span.start), g) for s, e, g in segments if min(e, span.end) > max(s, span.start)]


def decide(
    span: Span,
    labelled: Sequence[Graded],
    evidence: Sequence[Span],
    painted: Sequence[tuple[str, int, int, int]] | None = None,
) -> tuple[int | None, str]:
    """The grade the rule of the module docstring gives a passage at ``span`` from the labelled spans ``labelled``
    and the character grades ``painted`` (:mod:`~.painting`; by default the labelled spans themselves), None when it
    cannot decide, and the step that decided (``same``, ``evidence``, ``irrelevant``, ``contains``) or why it could
    not (``evidence_ungraded``, ``unlabelled_text``, ``fragment``)."""
    size = span.end - span.start
    near = [(s, g) for s, g in labelled if _overlap(span, s)]
    same = [g for s, g in near if _overlap(span, s) / (size + (s.end - s.start) - _overlap(span, s)) >= SAME_TEXT_IOU]
    if same:
        return max(same), "same"
    inside = [e for e in evidence if _contains(span, e)]
    if inside:
        holders = [g for e in inside for s, g in near if _contains(s, e)]
        whole = [g for s, g in near if _contains(span, s)]
        return (max(holders + whole), "evidence") if holders else (None, "evidence_ungraded")
    parts = _resolved_in(span, painted if painted is not None else [(s.doc_id, s.start, s.end, g) for s, g in near])
    if size <= 0 or sum(n for n, _ in parts) < LABELLED_SHARE * size:
        return None, "unlabelled_text"
    top = max(g for _, g in parts)
    if top == 0:
        return 0, "irrelevant"
    if any(g == top and _contains(span, s) for s, g in near):
        return top, "contains"
    return None, "fragment"


@dataclass
class Carried:
    """Labels of the passages of the runs' top ``depth``: grades by (question, unit), how each was labelled
    (``rule``, ``stored``, ``judged``, ``unlabelled``), the unscored ones, the passages left for the judge
    (``pending``) and the unlabelled golden chunks that undecided passages reach (``pool``: judged first)."""

    grades: dict[tuple[str, str], int] = field(default_factory=dict)
    how: dict[tuple[str, str], str] = field(default_factory=dict)
    unscored: set[tuple[str, str]] = field(default_factory=set)
    pending: list[Pair] = field(default_factory=list)
    pool: list[Pair] = field(default_factory=list)
    pooled: int = 0  # golden chunks graded for the pool in this evaluation

    def add_judged(self, labels: Iterable[RelevanceLabel]) -> None:
        """Fold in the judge's labels of the pending pairs (unscored ones stay unscored, counted)."""
        for label in labels:
            key = (label.query_id, label.chunk_id)
            self.how[key] = "judged"
            if label.grade is None:
                self.unscored.add(key)
            else:
                self.grades[key] = label.grade


def carry_labels(golden: GoldenSet, runs: Sequence[LoadedRun], index: SpanIndex, depth: int) -> Carried:
    """Label every passage unit (not a golden chunk) in the runs' top ``depth``, and in each search step's top
    ``depth`` (:meth:`~.loaded.RunLine.searched`: the same pool and rule), by the stored label, else the rule;
    what neither decides is pending (for the judge), with the unlabelled golden chunks it reaches in ``pool``."""
    stored = golden.passage_labels()
    labelled = {(label.query_id, label.chunk_id) for label in golden.qrels}
    out = Carried()
    pooled: set[tuple[str, str]] = set()
    for run in runs:
        for qid, line in run.lines.items():
            for unit in line.searched(depth):
                key = (qid, unit)
                if golden.has_chunk(unit) or key in out.how:
                    continue
                found = line.found(unit)
                span, text = (found.span, found.text) if found is not None else (None, None)
                why = _label_one(out, key, stored=stored, index=index, span=span, text=text, golden=golden)
                if why == "unlabelled_text" and span is not None:
                    for cid in index.overlapping(span):
                        if (qid, cid) not in labelled and (qid, cid) not in pooled:
                            pooled.add((qid, cid))
                            out.pool.append(Pair(qid, golden.question(qid).text, cid, golden.chunk(cid).text))
    return out


def _label_one(
    out: Carried,
    key: tuple[str, str],
    *,
    stored: dict[tuple[str, str], RelevanceLabel],
    index: SpanIndex,
    span: Span | None,
    text: str | None,
    golden: GoldenSet,
) -> str:
    qid, unit = key
    label = stored.get(key)
    if label is not None and label.grade is not None:
        out.grades[key], out.how[key] = label.grade, "stored"
        return "stored"
    if span is None:
        grade, why = None, "unaligned"
    else:
        grade, why = decide(span, index.labelled(qid), index.evidence(qid), index.painted(qid))
    if grade is not None:
        out.grades[key], out.how[key] = grade, "rule"
        return why
    out.how[key] = "unlabelled"
    if text:
        out.pending.append(Pair(qid, golden.question(qid).text, unit, text))
    return why
