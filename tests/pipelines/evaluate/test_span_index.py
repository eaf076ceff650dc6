"""The pool a question's passages are graded from (carry.py's SpanIndex) and the carrying itself (carry_labels), on a
hand-made golden set whose documents are lines of distinct words, each line a chunk at its offsets:

- a: "The kettle boils..." (a#0, graded 3 for q1), "Its handle stays cool..." (a#1, graded 2, quoting "stays cool"),
  "The lid opens..." (a#2, graded 1, no quotes; the same line also stands in b), "Descale it..." (a#3, no label);
- b: "Warranty covers..." (b#0), "The lid opens..." (b#1), neither labelled for q1; a judged passage of b#0's first
  words is graded 2 for q1, quoting "heating element";
- c: "A B", two one-character chunks; d: a document without chunks.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from assay.corpus.align import Span
from assay.formats.golden import GoldenSet
from assay.judge import Pair
from assay.pipelines.evaluate.runs.carry import Carried, SpanIndex, carry_labels
from assay.pipelines.evaluate.runs.loaded import LoadedRun, RunLine
from assay.pipelines.evaluate.runs.locate import Located, Resolver
from assay.results.runs import RunCounts
from assay.types import Chunk, Document, Manifest, Passage, Provenance, Question, RelevanceLabel

TIME = datetime(2025, 1, 1, tzinfo=UTC)
JUDGE = Provenance(source="judge", model="fixture", time=TIME)
LINES = {
    "a": [
        "The kettle boils water in two minutes",
        "Its handle stays cool to the touch",
        "The lid opens with one button",
        "Descale it every month with vinegar",
    ],
    "b": ["Warranty covers the heating element for two years", "The lid opens with one button"],
    "c": ["A", "B"],
}
TEXTS = {doc: "\n".join(lines) for doc, lines in LINES.items()} | {"d": "Nothing in this document is chunked"}
Q1 = "How fast does the kettle boil?"
JUDGED = "p:b:0-35"  # "Warranty covers the heating element"


def at(doc: str, words: str, match: str = "exact") -> Span:
    """The span of ``words`` (their first place) in ``doc``."""
    start = TEXTS[doc].index(words)
    return Span(doc, start, start + len(words), match, 1.0)


def line(cid: str) -> Span:
    doc, ordinal = cid.split("#")
    return at(doc, LINES[doc][int(ordinal)], "offsets")


def label(qid: str, cid: str, grade: int | None, quotes: list[str] | None = None) -> RelevanceLabel:
    return RelevanceLabel(query_id=qid, chunk_id=cid, grade=grade, provenance=JUDGE, quotes=quotes)


def passage(pid: str, doc: str | None, start: int | None, end: int | None, *labels: RelevanceLabel) -> Passage:
    text = TEXTS[doc][start:end] if doc is not None and start is not None and end is not None else "lost words"
    match = "offsets" if doc is not None else "unmatched"
    return Passage(id=pid, text=text, match=match, doc_id=doc, start=start, end=end, labels=list(labels))


def golden() -> GoldenSet:
    documents = [Document(id=d, source=f"{d}.md", text=t, content_hash=d) for d, t in sorted(TEXTS.items())]
    chunks = []
    for doc, lines in LINES.items():
        for i, text in enumerate(lines):
            s = line(f"{doc}#{i}")
            chunks.append(Chunk(id=f"{doc}#{i}", doc_id=doc, ordinal=i, text=text, start=s.start, end=s.end))
    questions = [
        Question(id="q1", text=Q1, source_doc_ids=["a"], evidence=["boils water in two minutes", "  "]),
        # evidence words that stand in a and in b: the source document's place is the one meant
        Question(id="q2", text="What opens the lid?", source_doc_ids=["b"], evidence=["The lid opens with one button"]),
        # evidence words that are not in the source document: found wherever they stand
        Question(id="q3", text="How do I descale it?", source_doc_ids=["b"], evidence=["Descale it every month"]),
    ]
    qrels = [
        label("q1", "a#0", 3),
        label("q1", "a#1", 2, ["stays cool"]),
        label("q1", "a#2", 1),
        label("q1", "gone#7", 2),  # a chunk no longer in the golden set: no span, not in the pool
        # quotes that are not in their chunk: dropped and counted
        label("q2", "b#0", 2, ["stays cool"]),
        label("q2", "b#1", 1, ["Descale it"]),
    ]
    passages = [
        passage("p:b:36-45", "b", 36, 45, label("q1", "p:b:36-45", None)),  # unscored: not in the pool
        passage(JUDGED, "b", 0, 35, label("q1", JUDGED, 2, ["heating element"])),
        passage("t:lost", None, None, None, label("q1", "t:lost", 3)),  # not located: no span
        passage("p:b:0-9", "b", 0, None, label("q1", "p:b:0-9", 3)),  # half its offsets: no span
        passage("p:b:10-16", "b", 10, 16, label("q1", "p:gone", 3)),  # a label naming no kept passage
    ]
    return GoldenSet(Manifest(assay_version="test"), documents, chunks, questions, qrels, [], passages)


def index() -> SpanIndex:
    g = golden()
    return SpanIndex(g, Resolver(g))


def test_the_pool_holds_graded_chunks_then_judged_passages_then_their_quotes() -> None:
    """Chunks at their offsets with their grades, the one located and graded passage (the unscored one, the one not
    located, the one with half its offsets and the label of a missing passage are left out), then each quote placed
    in its label's span with the label's grade."""
    assert index().labelled("q1") == [
        (line("a#0"), 3),
        (line("a#1"), 2),
        (line("a#2"), 1),
        (Span("b", 0, 35, "offsets", 1.0), 2),
        (at("a", "stays cool", "quote"), 2),
        (at("b", "heating element", "quote"), 2),
    ]


def test_the_character_grades_follow_quotes_and_copies_of_a_label_without_quotes() -> None:
    """a#1 is 0 but for its quote; a#2 (graded 1, no quotes) paints its words where they also stand, in b, and not
    again at its own place; the judged passage is 0 but for its quote."""
    a1, a2 = line("a#1"), line("a#2")
    assert index().painted("q1") == [
        ("a", 0, len(LINES["a"][0]), 3),
        ("a", a1.start, a1.end, 0),
        ("a", *_ends(at("a", "stays cool")), 2),
        ("a", a2.start, a2.end, 1),
        ("b", *_ends(line("b#1")), 1),
        ("b", 0, 35, 0),
        ("b", *_ends(at("b", "heating element")), 2),
    ]


def _ends(span: Span) -> tuple[int, int]:
    return span.start, span.end


def test_quotes_not_in_their_span_are_counted_once_each() -> None:
    found = index()
    assert found.quotes_unplaced == 0
    found.labelled("q2")
    assert found.quotes_unplaced == 2


def test_evidence_is_looked_for_in_the_source_documents_first_then_anywhere() -> None:
    found = index()
    assert found.evidence("q1") == [at("a", "boils water in two minutes")]  # the blank quote is skipped
    assert found.evidence("q2") == [at("b", "The lid opens with one button")]  # not the earlier copy in a
    assert found.evidence("q3") == [at("a", "Descale it every month")]


def test_a_question_without_labels_has_an_empty_pool() -> None:
    found = index()
    assert found.graded("q3") == []
    assert found.labelled("q3") == []


def test_overlapping_names_the_chunks_a_span_reaches_in_its_own_document() -> None:
    found = index()
    a2, a3 = line("a#2"), line("a#3")
    assert found.overlapping(Span("a", a2.end - 5, a3.start + 3, "exact", 1.0)) == ["a#2", "a#3"]
    assert found.overlapping(Span("a", a2.end, a3.start, "exact", 1.0)) == []  # the line break between them
    assert found.overlapping(Span("d", 0, 7, "exact", 1.0)) == []  # a document without chunks


def test_held_chunks_are_those_a_span_covers_at_least_half_of() -> None:
    """a#1 is 34 characters long: 17 of them hold it, 16 do not; a span covering a chunk whole holds it at any
    share, however short the chunk."""
    found = index()
    a1 = line("a#1")
    assert len(LINES["a"][1]) == 34
    assert found.held(Span("a", a1.start, a1.start + 17, "exact", 1.0)) == ["a#1"]
    assert found.held(Span("a", a1.start, a1.start + 16, "exact", 1.0)) == []
    assert found.held(Span("a", a1.start - 1, a1.end + 1, "exact", 1.0), share=1.0) == ["a#1"]
    assert found.held(Span("c", 0, 3, "exact", 1.0), share=1.0) == ["c#0", "c#1"]
    assert found.held(Span("d", 0, 7, "exact", 1.0)) == []


def test_a_passage_stands_for_the_chunks_it_holds_and_an_unplaced_one_for_none() -> None:
    found = index()
    a1 = line("a#1")
    half = Span("a", a1.start, a1.start + 20, "exact", 1.0)
    run_line = RunLine(
        query_id="q1",
        ranked=["p:half", "t:lost"],
        scores={},
        located={"p:half": Located("p:half", "exact", half, None), "t:lost": Located("t:lost", "unmatched", None, "x")},
    )
    assert found.stands_for(run_line, "p:half") == ["a#1"]
    assert found.stands_for(run_line, "t:lost") == []
    assert found.stands_for(run_line, "p:absent") == []


def _unit(span: Span | None, text: str) -> tuple[str, Located]:
    unit = f"p:{span.doc_id}:{span.start}-{span.end}" if span is not None else "t:nowhere"
    return unit, Located(unit, "exact" if span is not None else "unmatched", span, text)


def test_carry_labels_by_stored_label_then_rule_and_pools_only_what_unlabelled_text_reaches() -> None:
    """Ranked: the golden chunk a#0 (skipped, not a passage), the stored passage (its stored grade), a piece of a#1
    without its quote (0 by the character grades, though a#1's whole-span grade is 2), a#2 with the line break and two
    letters of a#3 (90.6% labelled, holds a#2: 1; reaching a#3 does not pool it), the end of a#2 with all of a#3
    (unlabelled text: a#3 is pooled, a#2 is labelled), the end of a#3 (pools nothing twice), a passage not located
    (pending) and, past the depth, one more passage."""
    g = golden()
    a1, a2, a3 = line("a#1"), line("a#2"), line("a#3")
    units = [
        _unit(Span("a", a1.start, a1.start + 10, "exact", 1.0), "Its handle"),
        _unit(Span("a", a2.start, a3.start + 2, "exact", 1.0), "The lid opens with one button\nDe"),
        _unit(Span("a", a2.end - 6, a3.end, "exact", 1.0), "button\n" + LINES["a"][3]),
        _unit(Span("a", a3.end - 7, a3.end, "exact", 1.0), "vinegar"),
        _unit(None, "words found nowhere"),
        _unit(Span("a", 0, 3, "exact", 1.0), "The"),
    ]
    located = dict(units) | {JUDGED: Located(JUDGED, "offsets", Span("b", 0, 35, "offsets", 1.0), "Warranty")}
    ranked = ["a#0", JUDGED, *(u for u, _ in units)]
    texts = {u: found.text for u, found in located.items() if found.text is not None}
    run = LoadedRun("r", Path("r.jsonl"), "jsonl", {"q1": RunLine("q1", ranked, {}, texts, located=located)},
                    RunCounts())  # fmt: skip
    out = carry_labels(g, [run, run], SpanIndex(g, Resolver(g)), depth=7)
    piece, whole, reach, tail, lost, _past = (u for u, _ in units)
    assert out.grades == {("q1", JUDGED): 2, ("q1", piece): 0, ("q1", whole): 1}
    assert out.how == {
        ("q1", JUDGED): "stored",
        ("q1", piece): "rule",
        ("q1", whole): "rule",
        ("q1", reach): "unlabelled",
        ("q1", tail): "unlabelled",
        ("q1", lost): "unlabelled",
    }
    assert out.pending == [Pair("q1", Q1, u, texts[u]) for u in (reach, tail, lost)]
    assert out.pool == [Pair("q1", Q1, "a#3", LINES["a"][3])]


def test_judged_labels_fold_in_scored_and_unscored() -> None:
    carried = Carried()
    carried.add_judged([label("q1", "p:x", 2), label("q1", "p:y", None)])
    assert carried.grades == {("q1", "p:x"): 2}
    assert carried.unscored == {("q1", "p:y")}
    assert carried.how == {("q1", "p:x"): "judged", ("q1", "p:y"): "judged"}
