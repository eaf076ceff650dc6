"""Chunking: offsets, heading paths, sizes and overlap, tiny fragments, stable ids."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from assay.corpus import chunk_corpus, chunk_document, ingest
from assay.corpus.chunking import heading_sections
from assay.errors import ConfigError
from assay.text import content_hash, count_tokens
from assay.types import Chunk, Document

CORPUS = Path(__file__).parents[1] / "fixtures" / "corpus"


def _doc(text: str, doc_id: str = "doc.md") -> Document:
    return Document(id=doc_id, source=doc_id, text=text, content_hash=content_hash(text))


def _para(tag: str, n: int = 8) -> str:
    return " ".join(f"Rule {tag}{i} says the refund window for item {tag} is {i + 10} days long." for i in range(n))


LONG = (
    "Intro before any heading.\n\n# Policy\n\n## Refunds\n\n"
    + "\n\n".join(_para(f"R{j}") for j in range(5))
    + "\n\n### Exceptions\n\nFinal sale items only.\n\n## Shipping\n\n"
    + "\n\n".join(_para(f"S{j}") for j in range(3))
)


def _check_offsets(doc: Document, chunks: list[Chunk]) -> None:
    for chunk in chunks:
        assert chunk.start is not None and chunk.end is not None
        assert doc.text[chunk.start : chunk.end] == chunk.text
        assert chunk.text == chunk.text.strip() and chunk.text


def _covered(doc: Document, chunks: list[Chunk]) -> bool:
    seen = [False] * len(doc.text)
    for c in chunks:
        for i in range(c.start or 0, c.end or 0):
            seen[i] = True
    return all(seen[i] or ch.isspace() for i, ch in enumerate(doc.text))


def test_offsets_hold_and_every_character_is_covered() -> None:
    docs = [*ingest(CORPUS / "good").documents, _doc(LONG)]
    for doc in docs:
        for settings in ({}, {"max_tokens": 60, "overlap": 15, "min_tokens": 8}):
            chunks = chunk_document(doc, **settings)
            _check_offsets(doc, chunks)
            assert _covered(doc, chunks)
            assert [c.ordinal for c in chunks] == list(range(len(chunks)))


def test_short_document_is_one_chunk() -> None:
    doc = ingest(CORPUS / "tiny").documents[0]
    (chunk,) = chunk_document(doc)
    assert (chunk.text, chunk.start, chunk.end, chunk.heading_path) == ("Hi there.", 0, 9, [])
    refunds = next(d for d in ingest(CORPUS / "good").documents if d.id == "policies/refunds.md")
    (whole,) = chunk_document(refunds)
    assert whole.heading_path == ["Refund policy"]  # common prefix of all its sections


def test_headings_give_each_chunk_its_path() -> None:
    doc = _doc(LONG)
    chunks = chunk_document(doc, max_tokens=200, overlap=40, min_tokens=20)
    paths = {tuple(c.heading_path) for c in chunks}
    assert ("Policy", "Refunds") in paths and ("Policy", "Shipping") in paths
    first = chunks[0]
    assert first.text.startswith("Intro before any heading.")
    exceptions = next(c for c in chunks if "Final sale" in c.text)
    # the tiny "Exceptions" section joins its parent section's last chunk, not the next sibling section
    assert exceptions.heading_path == ["Policy", "Refunds"]
    assert "## Shipping" not in exceptions.text
    shipping = [c for c in chunks if c.heading_path == ["Policy", "Shipping"]]
    assert shipping[0].text.startswith("## Shipping\n\nRule S00")


def test_deep_heading_path_in_a_long_section() -> None:
    text = "# Policy\n\n## Refunds\n\n### Exceptions\n\n" + "\n\n".join(_para(f"E{j}") for j in range(4))
    chunks = chunk_document(_doc(text), max_tokens=150, overlap=0, min_tokens=10)
    assert len(chunks) > 1
    assert all(c.heading_path == ["Policy", "Refunds", "Exceptions"] for c in chunks)
    assert chunks[0].text.startswith("# Policy\n\n## Refunds\n\n### Exceptions\n\nRule E00")  # headings kept


def test_headings_inside_code_fences_are_not_headings() -> None:
    text = "# Setup\n\nRun this:\n\n```sh\n# not a heading\necho hi\n```\n\n## Next\n\nMore text here."
    assert [s.path for s in heading_sections(text)] == [("Setup",), ("Setup", "Next")]


def test_sizes_stay_near_the_budget() -> None:
    doc = _doc(LONG)
    for max_tokens, overlap, min_tokens in ((200, 40, 20), (120, 30, 10), (512, 64, 32)):
        for chunk in chunk_document(doc, max_tokens=max_tokens, overlap=overlap, min_tokens=min_tokens):
            assert count_tokens(chunk.text) <= max_tokens + min_tokens
            assert chunk.metadata["tokens"] == count_tokens(chunk.text)


def test_overlap_is_whole_sentences_of_the_previous_chunk() -> None:
    doc = _doc(LONG)
    chunks = chunk_document(doc, max_tokens=200, overlap=40, min_tokens=20)
    overlapping = 0
    for prev, nxt in itertools.pairwise(chunks):
        assert prev.start is not None and prev.end is not None and nxt.start is not None
        if prev.heading_path != nxt.heading_path or nxt.start >= prev.end:
            continue
        overlapping += 1
        shared = doc.text[nxt.start : prev.end]
        assert prev.text.endswith(shared) and nxt.text.startswith(shared)
        assert re.fullmatch(r"(Rule \w+ says the refund window for item \w+ is \d+ days long\.\s*)+", shared)
        assert count_tokens(shared) <= 40
    assert overlapping >= 3


def test_no_overlap_when_overlap_is_zero() -> None:
    chunks = chunk_document(_doc(LONG), max_tokens=200, overlap=0, min_tokens=20)
    for prev, nxt in itertools.pairwise(chunks):
        assert prev.end is not None and nxt.start is not None and nxt.start >= prev.end


def test_oversized_paragraph_is_split_at_sentences() -> None:
    doc = _doc(_para("P", 30))  # one paragraph of ~480 tokens
    chunks = chunk_document(doc, max_tokens=100, overlap=0, min_tokens=10)
    assert len(chunks) >= 5
    for chunk in chunks:
        assert chunk.text.startswith("Rule P") and chunk.text.endswith("days long.")


def test_a_sentence_longer_than_the_budget_is_cut_at_words() -> None:
    doc = _doc(" ".join(f"word{i}" for i in range(400)))  # no punctuation at all
    chunks = chunk_document(doc, max_tokens=50, overlap=0, min_tokens=5)
    _check_offsets(doc, chunks)
    assert len(chunks) > 5
    assert all(count_tokens(c.text) <= 50 + 5 for c in chunks)
    assert " ".join(c.text for c in chunks) == doc.text


def test_tiny_trailing_fragment_is_merged() -> None:
    text = _para("A", 12) + "\n\nOk."
    chunks = chunk_document(_doc(text), max_tokens=100, overlap=0, min_tokens=10)
    assert chunks[-1].text.endswith("Ok.")
    assert all(count_tokens(c.text) >= 10 for c in chunks)


def test_chunk_ids_are_doc_ordinal_and_hash() -> None:
    for chunk in chunk_document(_doc(LONG), max_tokens=200, overlap=40, min_tokens=20):
        assert chunk.id == f"doc.md#{chunk.ordinal}-{content_hash(chunk.text)[:8]}"
        assert chunk.doc_id == "doc.md"


def test_rebuilding_gives_identical_ids() -> None:
    docs = ingest(CORPUS / "good").documents
    first = [c.model_dump() for c in chunk_corpus(docs, max_tokens=60, overlap=15, min_tokens=8)]
    docs_again = ingest(CORPUS / "good").documents
    again = [c.model_dump() for c in chunk_corpus(docs_again, max_tokens=60, overlap=15, min_tokens=8)]
    assert first == again


def test_changing_one_document_changes_only_its_chunk_ids() -> None:
    docs = [_doc(LONG, "a.md"), _doc(LONG.replace("Intro", "Preface"), "b.md"), _doc(_para("C", 20), "c.md")]
    before = chunk_corpus(docs, max_tokens=200, overlap=40, min_tokens=20)
    edited = docs[1].text.replace("Rule S21 says", "Rule S21 now says")
    docs[1] = _doc(edited, "b.md")
    after = chunk_corpus(docs, max_tokens=200, overlap=40, min_tokens=20)
    ids = lambda chunks, d: [c.id for c in chunks if c.doc_id == d]  # noqa: E731
    assert ids(before, "a.md") == ids(after, "a.md") and ids(before, "c.md") == ids(after, "c.md")
    changed = set(ids(before, "b.md")) ^ set(ids(after, "b.md"))
    assert changed and len(set(ids(before, "b.md")) & set(ids(after, "b.md"))) >= 5  # chunks before the edit keep ids


def test_bad_settings_are_config_errors() -> None:
    doc = _doc("text")
    with pytest.raises(ConfigError, match="overlap must be between 0 and max_tokens - 1"):
        chunk_document(doc, max_tokens=10, overlap=10)
    with pytest.raises(ConfigError, match="max_tokens must be at least 1"):
        chunk_document(doc, max_tokens=0)
    with pytest.raises(ConfigError, match="min_tokens"):
        chunk_document(doc, max_tokens=10, overlap=1, min_tokens=11)


def test_blank_document_gives_no_chunks() -> None:
    assert chunk_document(_doc("  \n\n ")) == []


@pytest.mark.parametrize(
    "text",
    [
        "A cat sat.  It  slept\nthere. Then it left.",
        "at home: the cat sat at\t the mat. At last it left at noon.",
        "Words Words words. Words again, words.",
    ],
)
def test_sentence_spans_match_the_sentences_words_in_order(text: str) -> None:
    from assay.corpus.chunking import _sentence_spans, _words_by_regex
    from assay.text import sentences

    spans, cursor = [], 0
    for sentence in sentences(text):  # the reference: one regex per sentence, searched from the cursor
        span = _words_by_regex(text, sentence.split(), cursor, len(text))
        assert span is not None
        spans.append(span)
        cursor = span[1]
    assert _sentence_spans(text, 0, len(text)) == spans
