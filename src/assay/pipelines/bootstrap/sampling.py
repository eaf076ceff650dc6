"""Seed sampling for ``assay build``: which chunks questions are written from, of which type, in which style.

Allocation of questions to documents (deterministic, then seeded only where it must choose):

1. ``total`` questions: ``per_doc * n_docs`` with ``per_doc``, else ``questions``, else 2 per document. When
   ``total`` is smaller than the number of documents, ``total`` seed documents are drawn (:mod:`.strata`: seeded,
   stratified by source folder or file and by size) and each gets one question; the rest of the corpus still
   serves as pooling candidates and multi-hop partners. A plan of more than ``strata.BIG_PLAN`` questions not
   asked for with ``questions`` draws a warning (shown before any call).
2. Every (drawn) document gets 1; the remaining ``total - n_docs`` are shared in proportion to document size (tokens
   of its chunks) by the largest-remainder method, each document capped at ``max(max_per_doc, ceil(total / n_docs))``;
   what a cap cuts off goes to the uncapped documents, again by size. Ties are broken by document order.
3. Within a document, seed chunks are drawn without replacement with probability proportional to chunk tokens (a
   seeded RNG per document); when a document has fewer chunks than questions, it cycles (the types differ).

Types: target counts by the largest-remainder method over the mix shares, shuffled with the seed over the seeds.
A numeric question needs a number in its passage: a numeric type that lands on a chunk whose body (headings aside)
states no number trades places with the nearest later (else earlier) non-numeric seed whose chunk has one, so the mix
is kept; when no such seed is left, it falls back to ``factoid`` (counted as ``type_fallback``).
Multi-hop and comparison seeds get a second chunk: the BM25-nearest chunk of another document (query: the seed
chunk's 40 most frequent content terms), else a chunk of the same document under another heading, else any other
chunk; a corpus of one chunk has none, and such seeds also fall back to ``factoid``.

Styles (persona, phrasing, length) are drawn with the seed from short lists. Language: text whose words are at least
20% English stop words is called "English"; otherwise the prompt is told to keep the passage's language.
"""

from __future__ import annotations

import itertools
import math
import os
import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from assay.corpus.chunking import chunk_corpus
from assay.corpus.ingest import IngestResult, corpus_files, ingest
from assay.corpus.pooling import Bm25Index
from assay.errors import ConfigError, CorpusError
from assay.pipelines.bootstrap.settings import BuildSettings
from assay.pipelines.bootstrap.strata import (
    allocate,
    draw,
    plan_text,
    plan_warnings,
    source_group,
    type_counts,
)
from assay.text import STOPWORDS, content_hash, terms, words
from assay.types import Chunk, Document

__all__ = [
    "DEFAULT_MIX",
    "LENGTHS",
    "PERSONAS",
    "PHRASINGS",
    "TWO_CHUNK_TYPES",
    "Seed",
    "allocate",
    "chunk_query",
    "corpus_inputs",
    "detect_language",
    "parse_mix",
    "plan_seeds",
    "prepare_corpus",
    "sample_seeds",
    "type_counts",
]

DEFAULT_MIX: dict[str, float] = {
    "factoid": 0.20,
    "explanatory": 0.15,
    "procedural": 0.10,
    "numeric": 0.15,
    "conditional": 0.10,
    "multi-hop": 0.10,
    "comparison": 0.10,
    "unanswerable": 0.10,
}
KNOWN_TYPES = frozenset(DEFAULT_MIX)
TWO_CHUNK_TYPES = frozenset({"multi-hop", "comparison"})
PERSONAS = ("a first-time customer", "a regular customer", "a new employee", "a support agent", "a curious researcher")
PHRASINGS = ("a natural question", "a short search-style query", "a polite request ('Could you tell me ...')")
LENGTHS = ("short (under 12 words)", "medium (12 to 20 words)", "long (20 to 30 words, with some context)")
KEEP_LANGUAGE = "the passage's language"
_QUERY_TERMS = 40


@dataclass(frozen=True)
class Seed:
    """One planned question: its id, type, the chunk(s) it is written from, a style and a language hint."""

    id: str
    type: str
    chunk_ids: tuple[str, ...]
    doc_ids: tuple[str, ...]
    style: str
    language: str
    fallback_from: str | None = None  # the planned type when the seed had to fall back to factoid


@dataclass
class SamplingResult:
    """Seeds, the counts of the sampling stage, and warnings to show the user."""

    seeds: list[Seed] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    plan: str = ""  # one line: how many questions from which documents, and why
    documents: list[str] = field(default_factory=list)  # the drawn seed documents, when fewer than all


def parse_mix(text: str | Mapping[str, float] | None) -> dict[str, float]:
    """``"factoid=0.3,numeric=0.2"`` (or a mapping) -> shares that sum to 1; types not named get 0.

    Raises :class:`ConfigError` for an unknown type, a negative or non-numeric share, or all shares 0.
    """
    if text is None:
        return dict(DEFAULT_MIX)
    items = text.items() if isinstance(text, Mapping) else [_mix_item(part) for part in text.split(",") if part]
    shares: dict[str, float] = {}
    for name, value in items:
        if name not in KNOWN_TYPES:
            raise ConfigError(f"--mix: unknown question type {name!r}; use {', '.join(sorted(KNOWN_TYPES))}")
        if not value >= 0:
            raise ConfigError(f"--mix: share of {name} must be >= 0, got {value}")
        shares[name] = float(value)
    total = sum(shares.values())
    if total <= 0:
        raise ConfigError("--mix: the shares add up to 0; give at least one type a positive share")
    return {name: shares.get(name, 0.0) / total for name in DEFAULT_MIX}


def _mix_item(part: str) -> tuple[str, float]:
    name, sep, value = part.partition("=")
    try:
        return name.strip(), float(value) if sep else math.nan
    except ValueError:
        raise ConfigError(f"--mix: {part!r} is not TYPE=SHARE (e.g. factoid=0.25)") from None


def detect_language(text: str) -> str:
    """ "English" when at least 20% of the words are English stop words, else a hint to keep the source language."""
    tokens = words(text[:4000])
    if len(tokens) >= 8 and sum(t in STOPWORDS for t in tokens) / len(tokens) >= 0.2:
        return "English"
    return KEEP_LANGUAGE


def _tokens(chunk: Chunk) -> int:
    """The chunk's token count as chunking recorded it (pre-made chunks: about 4 characters a token)."""
    return int(chunk.metadata.get("tokens", 0)) or len(chunk.text) // 4


def _pick_chunks(chunks: list[Chunk], n: int, rng: random.Random) -> list[Chunk]:
    """``n`` chunks drawn without replacement, weighted by tokens; cycles when ``n`` exceeds the chunks."""
    out: list[Chunk] = []
    while len(out) < n:
        pool = list(chunks)
        while pool and len(out) < n:
            weights = [max(_tokens(c), 1) for c in pool]
            out.append(pool.pop(rng.choices(range(len(pool)), weights=weights)[0]))
    return out


def chunk_query(chunk: Chunk, size: int = _QUERY_TERMS) -> str:
    """A BM25 query standing for a chunk: its ``size`` most frequent content terms ("" when it has none)."""
    return " ".join(t for t, _ in Counter(terms(chunk.text)).most_common(size))


def second_chunk(index: Bm25Index, chunk: Chunk) -> str | None:
    """The partner of a two-chunk seed: BM25-nearest chunk of another document, else another section, else any."""
    for cid, _ in index.search(chunk_query(chunk), k=50) if terms(chunk.text) else []:
        if index.chunk(cid).doc_id != chunk.doc_id:
            return cid
    others = [c for c in index.chunks if c.id != chunk.id]
    same_doc_other_section = [c for c in others if c.doc_id == chunk.doc_id and c.heading_path != chunk.heading_path]
    candidates = same_doc_other_section or others
    return candidates[0].id if candidates else None


def _style(rng: random.Random) -> str:
    return f"persona: {rng.choice(PERSONAS)}; phrasing: {rng.choice(PHRASINGS)}; length: {rng.choice(LENGTHS)}"


def _seed_id(chunk_id: str, qtype: str, n: int) -> str:
    return "q-" + content_hash(f"{chunk_id}|{qtype}|{n}", 5)


def sample_seeds(
    chunks: Sequence[Chunk],
    index: Bm25Index,
    *,
    total: int | None,
    per_doc: int | None,
    max_per_doc: int,
    mix: Mapping[str, float],
    seed: int,
    groups: Mapping[str, str] | None = None,
) -> SamplingResult:
    """Plan the seeds of a build (module docstring). Chunks must be in corpus order (documents, then ordinals).
    ``groups``: document id -> source group, the strata of a document draw (:mod:`.strata`; missing: one group)."""
    result = SamplingResult()
    by_doc: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    n_docs = len(by_doc)
    wanted = per_doc * n_docs if per_doc is not None else total if total is not None else 2 * n_docs
    if wanted < n_docs:
        by_doc = draw(by_doc, wanted, seed, groups or {}, _tokens)
        result.documents = list(by_doc)
    result.plan = plan_text(wanted, len(by_doc), n_docs, per_doc, total)
    cap = max(max_per_doc, math.ceil(wanted / len(by_doc)), per_doc or 0)
    sizes = [sum(_tokens(c) for c in cs) for cs in by_doc.values()]
    quota = allocate(sizes, wanted, cap)
    picked: list[Chunk] = []
    for (doc_id, doc_chunks), n in zip(by_doc.items(), quota, strict=True):
        picked.extend(_pick_chunks(doc_chunks, n, random.Random(f"{seed}:{doc_id}")))
    rng = random.Random(seed)
    types = [t for t, n in type_counts(mix, len(picked)).items() for _ in range(n)]
    rng.shuffle(types)
    has_number = [_has_number(chunk) for chunk in picked]
    result.seeds = _make_seeds(picked, _fit_numeric(types, has_number), has_number, index, rng)
    result.counts = {
        "seeds": len(result.seeds),
        "seed_documents": len(by_doc),
        "type_fallback": sum(s.fallback_from is not None for s in result.seeds),
    }
    result.warnings += plan_warnings(len(picked), wanted, cap, len(chunks), explicit=total is not None)
    return result


_HEADING_LINE = re.compile(r"^\s*#.*$", re.M)
_QUANTITY = re.compile(r"(?<![\w.-])\d")  # a number standing alone, not part of a name (utf-8) or a version (v1.2)


def _has_number(chunk: Chunk) -> bool:
    """Whether the chunk's body (headings aside: "Chapter 2") states a number."""
    return bool(_QUANTITY.search(_HEADING_LINE.sub("", chunk.text)))


def _fit_numeric(types: list[str], has_number: Sequence[bool]) -> list[str]:
    """``types`` with each numeric type moved onto a seed whose chunk holds a number, by swaps (module docstring)."""
    out = list(types)
    for i, qtype in enumerate(out):
        if qtype != "numeric" or has_number[i]:
            continue
        order = itertools.chain(range(i + 1, len(out)), range(i - 1, -1, -1))
        j = next((j for j in order if has_number[j] and out[j] != "numeric"), None)
        if j is None:
            break  # every chunk with a number holds a numeric type already, and swaps never free one: no later fit
        out[i], out[j] = out[j], out[i]
    return out


def _make_seeds(
    picked: list[Chunk], types: list[str], has_number: Sequence[bool], index: Bm25Index, rng: random.Random
) -> list[Seed]:
    """One seed per picked chunk and type. Two seeds of one chunk and type get different styles (redrawn on a
    clash): the same prompt twice would only give the same question twice, which the near-duplicate filter drops."""
    seen: Counter[tuple[str, str]] = Counter()
    prompts: set[tuple[tuple[str, ...], str, str]] = set()
    out: list[Seed] = []
    for chunk, planned, numbered in zip(picked, types, has_number, strict=True):
        qtype, fallback = planned, None
        chunk_ids: tuple[str, ...] = (chunk.id,)
        if qtype == "numeric" and not numbered:
            qtype, fallback = "factoid", planned
        elif qtype in TWO_CHUNK_TYPES:
            partner = second_chunk(index, chunk)
            if partner is None:
                qtype, fallback = "factoid", planned
            else:
                chunk_ids = (chunk.id, partner)
        key = (chunk.id, qtype)
        seen[key] += 1
        doc_ids = tuple(dict.fromkeys(index.chunk(c).doc_id for c in chunk_ids))
        style = _style(rng)
        for _ in range(20):
            if (chunk_ids, qtype, style) not in prompts:
                break
            style = _style(rng)
        prompts.add((chunk_ids, qtype, style))
        out.append(
            Seed(
                id=_seed_id(chunk.id, qtype, seen[key]),
                type=qtype,
                chunk_ids=chunk_ids,
                doc_ids=doc_ids,
                style=style,
                language=detect_language(chunk.text),
                fallback_from=fallback,
            )
        )
    return out


_GOLDEN_FILES = ("manifest.json", "questions.jsonl", "qrels.jsonl")


def _is_golden(folder: Path) -> bool:
    return all((folder / name).is_file() for name in _GOLDEN_FILES)


def _golden_sets_under(folder: Path) -> list[Path]:
    """Golden-set folders inside ``folder`` (not descending into them; hidden folders skipped, as ingest does)."""
    found: list[Path] = []
    for dirpath, dirnames, _ in os.walk(folder):
        here = Path(dirpath)
        found.extend(here / d for d in sorted(dirnames) if not d.startswith(".") and _is_golden(here / d))
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and here / d not in found)
    return found


def _files_outside(folder: Path, excluded: Sequence[Path]) -> list[Path]:
    return [f for f in corpus_files(folder) if not any(f.is_relative_to(d) for d in excluded)]


def corpus_inputs(corpus: Path | Sequence[Path]) -> tuple[Path | list[Path], Path | None, list[str]]:
    """What to ingest for ``corpus``: (paths, root, warnings), leaving out golden-set folders found inside it.

    A golden set written into the corpus folder (``assay build docs/ -o docs/golden``) is a build's output, not
    documents: its files are skipped with a warning, so a rebuild sees the same corpus (and the same ids: the root
    stays the folder). A golden set given as the corpus itself is an error that names the fix.
    """
    items = [Path(corpus)] if isinstance(corpus, str | Path) else [Path(p) for p in corpus]
    for item in items:
        if item.is_dir() and _is_golden(item):
            raise CorpusError(
                f"{item} is an assay golden set, not a corpus: point assay build at your documents "
                f"(to score runs against it: assay eval {item} RUN.jsonl)"
            )
    golden = [g for item in items if item.is_dir() for g in _golden_sets_under(item)]
    if not golden:
        return (items[0] if isinstance(corpus, str | Path) else items), None, []
    files = [f for item in items for f in (_files_outside(item, golden) if item.is_dir() else [item])]
    root = items[0] if len(items) == 1 and items[0].is_dir() else None
    return files, root, [f"skipped {g}: an assay golden set (a build's output), not documents." for g in golden]


def prepare_corpus(
    corpus: Path | Sequence[Path], settings: BuildSettings
) -> tuple[IngestResult, list[Chunk], Bm25Index]:
    """Ingest and chunk ``corpus`` (raises CorpusError for an unusable one) and index the chunks with BM25;
    golden-set folders inside the corpus are skipped with a warning (:func:`corpus_inputs`)."""
    paths, root, warnings = corpus_inputs(corpus)
    result = ingest(paths, root=root)
    result.warnings[:0] = warnings
    chunks = chunk_corpus(
        result.documents,
        max_tokens=settings.chunk_tokens,
        overlap=settings.overlap,
        min_tokens=min(settings.min_chunk_tokens, settings.chunk_tokens),
    )
    chunks.extend(result.chunks_given)
    return result, chunks, Bm25Index.build(chunks)


def plan_seeds(
    chunks: list[Chunk], index: Bm25Index, settings: BuildSettings, documents: Sequence[Document] = ()
) -> SamplingResult:
    """The seeds of a build with these settings (deterministic for a corpus and seed); ``documents`` give the
    source groups of a document draw."""
    return sample_seeds(
        chunks,
        index,
        total=settings.questions,
        per_doc=settings.per_doc,
        max_per_doc=settings.max_per_doc,
        mix=parse_mix(settings.mix),
        seed=settings.seed,
        groups={d.id: source_group(d.source) for d in documents},
    )
