"""The systems that bench/chunking.py and bench/chunking_units.py compare, and the corpus they run on: chunkers
(fixed windows of model tokens, with or without overlap, 3-sentence windows, Markdown sections, windows over the
rendered text), a BM25 top-K run over any list of passages, and a synthetic corpus recombined from CISI's sentences.

A module of its own so that both scripts import it and neither imports the other.
"""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Callable
from pathlib import Path

import bm25s

from assay.formats.golden import GoldenSet
from assay.text import sentences
from assay.types import Document

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from agreement_data import read_cisi  # noqa: E402

CISI = HERE.parent.parent / "shared" / "data" / "cisi"
K = 10
Chunker = Callable[[Document], list[str]]
_HEADING = re.compile(r"^#{1,6} ", re.MULTILINE)
_MD_SYNTAX = re.compile(r"\[([^\]]*)\]\([^)]*\)|[#*_`>|]+")


def windows(tokens: int, overlap: float = 0.0) -> Chunker:
    """Windows of ``tokens`` model tokens, taken as 0.75 words a token (assay.text.count_tokens' rate)."""
    size = max(1, round(tokens * 0.75))
    step = max(1, int(size * (1 - overlap)))

    def chunk(doc: Document) -> list[str]:
        words = doc.text.split()
        return [" ".join(words[i : i + size]) for i in range(0, max(1, len(words) - size + step), step)]

    return chunk


def sentence_windows(doc: Document) -> list[str]:
    found = sentences(doc.text)
    return [" ".join(found[i : i + 3]) for i in range(0, max(1, len(found) - 1), 2)]


def markdown_sections(doc: Document) -> list[str]:
    cuts = [m.start() for m in _HEADING.finditer(doc.text)]
    parts = [doc.text[a:b] for a, b in zip([0, *cuts], [*cuts, len(doc.text)], strict=True)]
    out = []
    for part in parts:
        words = part.split()
        out += [" ".join(words[i : i + 400]) for i in range(0, len(words), 400)]
    return [p for p in out if p.strip()]


def rendered(size: int) -> Chunker:
    inner = windows(size)

    def chunk(doc: Document) -> list[str]:
        plain = _MD_SYNTAX.sub(lambda m: m.group(1) or " ", doc.text)
        return inner(doc.model_copy(update={"text": plain}))

    return chunk


CHUNKERS: dict[str, Chunker] = {
    "fixed100": windows(100),
    "fixed100o": windows(100, 0.25),
    "fixed200": windows(200),
    "fixed200o": windows(200, 0.25),
    "fixed400": windows(400),
    "fixed400o": windows(400, 0.25),
    "fixed800": windows(800),
    "fixed800o": windows(800, 0.25),
    "sent3": sentence_windows,
    "md_sections": markdown_sections,
    "rendered400": rendered(400),
}


def bm25_run(golden: GoldenSet, passages: list[str], by_id: list[str] | None = None) -> list[dict]:
    """Top-K BM25 per golden question as a run: items by text, or by id when ``by_id`` names the passages."""
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(passages, stopwords="en", show_progress=False), show_progress=False)
    questions = [q for q in golden.questions]
    tokens = bm25s.tokenize([q.text for q in questions], stopwords="en", show_progress=False)
    found, scores = retriever.retrieve(tokens, k=min(K, len(passages)), show_progress=False)
    rows = []
    for q, hits, values in zip(questions, found, scores, strict=True):
        items = [
            {"id": by_id[i], "score": float(s)} if by_id else {"text": passages[i], "score": float(s)}
            for i, s in zip(hits.tolist(), values.tolist(), strict=True)
        ]
        rows.append({"query_id": q.id, "retrieved": items})
    return rows


def synthetic_corpus(n_docs: int, rng: random.Random) -> list[Document]:
    """``n_docs`` documents of 8 of CISI's sentences each, one word in five replaced by a word drawn from CISI's
    vocabulary at its frequency (so documents differ as real ones do instead of repeating whole sentences)."""
    pool = [s for c in read_cisi(CISI).chunks for s in sentences(c.text)]
    vocabulary = [w for s in pool for w in s.split()]

    def text(i: int) -> str:
        words = " ".join(rng.sample(pool, 8)).split()
        return " ".join(rng.choice(vocabulary) if rng.random() < 0.2 else w for w in words) + f" Record {i}."

    return [Document(id=f"d{i}", source="x", text=text(i), content_hash=str(i)) for i in range(n_docs)]
