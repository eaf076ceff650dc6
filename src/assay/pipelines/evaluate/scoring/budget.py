"""Budget measures of ``assay eval``: recall, precision, MAP and nDCG of the first B tokens (or characters) of text a
run retrieved, in characters of relevant text (:mod:`assay.metrics.budget` has the formulas), and the span measures
at a budget against the question's evidence.

**Characters are the letters and digits of the text**: whitespace, punctuation and markup (HTML tags and comments,
whose letters are not text either) are not counted, in the budget or in the relevant text, for a golden chunk and a
located passage alike, so a loader that keeps or drops them, or a splitter whose cuts fall between words,
scores the same text the same (a passage given by text is located by its words: the characters between two pieces
of a cut belong to neither). A token is 4 of them (``1000t`` = 4,000).

**Character grades** (:mod:`~assay.pipelines.evaluate.runs.painting` has the rule): each golden chunk's label
paints its quotes with its grade (its whole span when it has none), a judged passage's label paints only text no
chunk label covers, and a character takes the highest grade painted on it; a character no label covers is unjudged
(not relevant). Every run is scored against the same grades, and judging one run's fragments changes none of them:
only a judge reading text no label covered adds relevant text, for every run.

Names (:func:`~.names.parse_budget_name`): ``recall@1000t``, ``P@4000c``, ``ndcg@1000t``, ``map@1000t`` (relevant
= grade >= the evaluation's threshold, or ``|g>=G``); ``span_recall@1000t``, ``span_precision@1000t``,
``span_iou@1000t`` against the evidence quotes (precision and IoU over the characters retrieved within the budget,
as the span measures at k). Unscored: ``no_relevant_text`` (no relevant character in the pool), ``no_evidence_spans``.

**A budget above the corpus** (:meth:`SpanPool.cap`): a budget of more characters than the golden documents hold
(their chunks' when the set has no documents) is measured at the corpus's count, and said (:func:`clamped_notes`):
no run can show more text than the corpus holds without repeating it, so a larger B would only shrink P@B and the
share of the budget filled toward 0.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import replace

from assay.formats.golden import GoldenSet
from assay.metrics.budget import budget_scores, resolve
from assay.pipelines.evaluate.runs.carry import SpanIndex
from assay.pipelines.evaluate.runs.loaded import LoadedRun, RunLine
from assay.pipelines.evaluate.scoring.names import SPAN_FAMILIES, BudgetName, parse_budget_name
from assay.pipelines.evaluate.scoring.ranking import QueryValues
from assay.text import blank_markup, blank_tags

__all__ = ["SpanPool", "budget_values", "clamped_notes", "passage_chars"]

NO_RELEVANT_TEXT = "no_relevant_text"
Segments = dict[str, list[tuple[int, int, int]]]


_WORD = re.compile(r"[^\W_]+")


class WordChars:
    """Offsets in a document's text to offsets among its letters and digits (computed per document on first need)."""

    def __init__(self, golden: GoldenSet) -> None:
        self.golden = golden
        self._maps: dict[str, tuple[list[int], list[int], list[int]]] = {}

    def _map(self, doc_id: str) -> tuple[list[int], list[int], list[int]]:
        if doc_id not in self._maps:
            text = blank_tags(self.golden.document(doc_id).text) if self.golden.has_document(doc_id) else ""
            starts, ends, before = [], [], [0]
            for match in _WORD.finditer(text):
                starts.append(match.start())
                ends.append(match.end())
                before.append(before[-1] + match.end() - match.start())
            self._maps[doc_id] = (starts, ends, before)
        return self._maps[doc_id]

    def at(self, doc_id: str, offset: int) -> int:
        """The letters and digits of the document before ``offset``."""
        starts, ends, before = self._map(doc_id)
        k = bisect.bisect_right(ends, offset)  # words ending at or before the offset
        inside = offset - starts[k] if k < len(starts) and starts[k] < offset else 0
        return before[k] + inside

    def segments(self, segments: Segments) -> Segments:
        """Graded segments in letter-and-digit offsets (segments with no letter or digit dropped)."""
        out: Segments = {}
        for doc, parts in segments.items():
            mapped = [(self.at(doc, s), self.at(doc, e), g) for s, e, g in parts]
            out[doc] = [(s, e, g) for s, e, g in mapped if e > s]
        return out


class SpanPool:
    """Per question, the pool of labelled spans (:meth:`~..runs.carry.SpanIndex.labelled`) as grades of the
    letters and digits of the documents."""

    def __init__(self, index: SpanIndex) -> None:
        self.index = index
        self.chars = WordChars(index.golden)
        self._grades: dict[str, Segments] = {}
        self._corpus: int | None = None

    @property
    def corpus_chars(self) -> int:
        """The letters and digits of the golden documents (of the chunks, when the set has no document)."""
        if self._corpus is None:
            golden = self.index.golden
            texts = [blank_tags(d.text) for d in golden.documents] or [blank_markup(c.text) for c in golden.chunks]
            self._corpus = sum(len(word) for text in texts for word in _WORD.findall(text))
        return self._corpus

    def cap(self, chars: int) -> int:
        """A budget of ``chars`` characters, clamped to the corpus's (at least 1: an empty corpus still divides)."""
        return min(chars, max(1, self.corpus_chars))

    def grades(self, qid: str) -> Segments:
        """The question's character grades (overlaps resolved, see the module docstring)."""
        if qid not in self._grades:
            self._grades[qid] = self.chars.segments(resolve(self.index.painted(qid)))
        return self._grades[qid]

    def evidence(self, qid: str) -> Segments:
        """The question's evidence quotes as grade-1 characters."""
        return self.chars.segments(resolve([(s.doc_id, s.start, s.end, 1) for s in self.index.evidence(qid)]))


def passage_chars(line: RunLine, chars: WordChars) -> list[tuple[str, int, int] | int]:
    """The line's passages in rank order, in letters and digits: a located one's range, else the count of its text's
    letters and digits (no text: 0)."""
    out: list[tuple[str, int, int] | int] = []
    for unit in line.ranked:
        found = line.located.get(unit)
        span = found.span if found is not None else None
        if span is not None:
            out.append((span.doc_id, chars.at(span.doc_id, span.start), chars.at(span.doc_id, span.end)))
        else:
            out.append(sum(len(word) for word in _WORD.findall(blank_markup(line.texts.get(unit, "")))))
    return out


def clamped_notes(names: Sequence[str], pool: SpanPool) -> list[str]:
    """One note per budget of the measures ``names`` above the corpus's characters (measured at the corpus's)."""
    budgets = {spec.budget: spec.chars for spec in map(parse_budget_name, names)}
    return [
        f"Budget {budget} ({chars:,} characters) is more text than the golden documents hold "
        f"({pool.corpus_chars:,} characters of letters and digits): measured at {pool.cap(chars):,} characters."
        for budget, chars in budgets.items()
        if pool.cap(chars) < chars
    ]


def budget_values(run: LoadedRun, pool: SpanPool, names: Sequence[str], threshold: int) -> dict[str, QueryValues]:
    """The budget measures ``names`` for every query of ``run`` (budgets above the corpus clamped to it)."""
    parsed = [replace(spec, chars=pool.cap(spec.chars)) for spec in map(parse_budget_name, names)]
    out: dict[str, QueryValues] = {}
    for qid, line in run.lines.items():
        values = out[qid] = QueryValues()
        passages, grades = passage_chars(line, pool.chars), pool.grades(qid)
        evidence = pool.evidence(qid) if any(spec.family in SPAN_FAMILIES for spec in parsed) else {}
        for spec in parsed:
            _put(values, spec, passages, grades=grades, evidence=evidence, threshold=threshold)
    return out


def _put(
    values: QueryValues,
    spec: BudgetName,
    passages: list[tuple[str, int, int] | int],
    *,
    grades: Segments,
    evidence: Segments,
    threshold: int,
) -> None:
    if spec.family in SPAN_FAMILIES:
        got = budget_scores(passages, evidence, spec.chars, 1)
        shown, found, n = got.shown, got.found, got.n_relevant
        value = {"span_recall": got.recall, "span_precision": found / shown if shown else 0.0,
                 "span_iou": found / (shown + n - found) if n else float("nan")}[spec.family]  # fmt: skip
        values.put(spec.name, value, "no_evidence_spans")
        return
    got = budget_scores(passages, grades, spec.chars, spec.threshold or threshold)
    value = {"recall": got.recall, "P": got.precision, "map": got.map, "ndcg": got.ndcg}[spec.family]
    values.put(spec.name, value if got.n_relevant else None, NO_RELEVANT_TEXT)
