"""The model-free stages of ``assay build``: evidence check, leakage, near-duplicates, relabelling, difficulty.

Each takes questions (with ``metadata['evidence_chunk_ids']`` parallel to ``evidence``, as the generation stage
writes them) and returns a :class:`StageOutput`; a dropped question gets ``flags['dropped']`` = the filter's name.

Evidence (``dropped_by_evidence``). A quote matches its cited chunk with score 1 when its normalised text
(:func:`assay.text.normalize`) is a substring of the chunk's; otherwise the score is the ordered token coverage
``m / |q|``: ``|q|`` is the quote's word count and ``m`` the words of the quote that ``difflib.SequenceMatcher``
matches in order within the aligned window of the chunk (the longest run shared with the quote, extended to where
the quote would start and end, plus 2 words each side), so scattered words elsewhere in the chunk do not count.
Every quote must score >= ``quote_match`` and answerable types need at least one quote; unanswerable questions
are not checked (they have no evidence).

Leakage (``dropped_by_leakage``, ``flags['leakage_span']``): the longest run of consecutive words (stop words
included) shared by the question and one of its source chunks. Runs of ``leakage_flag_words`` or more are flagged;
``leakage_words`` or more, or a run of 4+ words covering ``leakage_ratio`` of the question's words, are dropped.

Near-duplicates (``dropped_by_near_duplicate``): Jaccard similarity of the sets of word bigrams (one-word questions:
the word) >= ``duplicate_jaccard``; the question met first (seed order) is kept.

Relabelling (``relabelled``): a multi-hop or comparison question whose evidence all lies in one chunk can be
answered from that chunk alone; it becomes ``explanatory`` when its answer has more than one sentence or 25 words,
else ``factoid``, and its source chunks shrink to that chunk (``metadata['planned_type']`` keeps the old type).
One that keeps its type records its **hops** (``question.hops``): the chunks its evidence lies in, in the order of
its source chunks (the seed chunk first, then the partner found from it), the path a system that searches several
times must walk (every source chunk when the evidence does not name two).

Difficulty (``question.difficulty``)::

    points = hop points (2 when the evidence spans 2+ chunks, else 0)
           + rank points (BM25 rank of the source chunk for the question over the whole corpus, the worst over
             sources: rank 1 -> 0, 2..10 -> 1, beyond 10 or no shared term -> 2)
           + overlap points (share of the question's content terms found in its source chunks:
             >= 0.6 -> 0, >= 0.3 -> 1, else 2)
    easy: 0-1 points, medium: 2-3, hard: 4-6. Unanswerable questions get difficulty None (no source answers them).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from difflib import SequenceMatcher

from assay.corpus.pooling import Bm25Index, jaccard
from assay.pipelines.bootstrap.settings import BuildSettings, StageOutput, drop
from assay.text import normalize, sentences, terms, words
from assay.types import Chunk, Question

_SLACK = 2

__all__ = [
    "assign_difficulty",
    "difficulty_label",
    "filter_evidence",
    "filter_leakage",
    "filter_near_duplicates",
    "leakage_span",
    "question_bigrams",
    "quote_score",
    "relabel_single_chunk",
]


def quote_score(quote: str, text: str) -> float:
    """How well ``quote`` is found in ``text``, 0..1 (module docstring: substring, else ordered token coverage)."""
    q = words(quote)
    if not q:
        return 0.0
    if normalize(quote) in normalize(text):
        return 1.0
    t = words(text)
    longest = SequenceMatcher(None, q, t, autojunk=False).find_longest_match(0, len(q), 0, len(t))
    if longest.size == 0:
        return 0.0
    start = max(0, longest.b - longest.a - _SLACK)
    window = t[start : longest.b + (len(q) - longest.a) + _SLACK]
    matched = sum(b.size for b in SequenceMatcher(None, q, window, autojunk=False).get_matching_blocks())
    return matched / len(q)


def filter_evidence(
    questions: Sequence[Question], chunks: Mapping[str, Chunk], settings: BuildSettings
) -> StageOutput[Question]:
    """Drop questions whose evidence quotes are missing or not found in the chunks they cite."""
    out = StageOutput[Question](records=[], counts={"dropped_by_evidence": 0})
    for question in questions:
        problem = None if question.type == "unanswerable" else _evidence_problem(question, chunks, settings)
        if problem is None:
            out.records.append(question)
        else:
            drop(out, question, "evidence", problem)
    return out


def _evidence_problem(question: Question, chunks: Mapping[str, Chunk], settings: BuildSettings) -> str | None:
    if not question.evidence:
        return "no evidence quotes"
    cited: list[str | None] = list(question.metadata.get("evidence_chunk_ids", []))
    scores: list[float] = []
    for i, quote in enumerate(question.evidence):
        chunk = chunks.get(cited[i] or "") if i < len(cited) else None
        scores.append(quote_score(quote, chunk.text) if chunk is not None else 0.0)
    question.metadata["evidence_match"] = [round(s, 3) for s in scores]
    bad = [i for i, s in enumerate(scores) if s < settings.quote_match]
    if bad:
        return f"quote {bad[0] + 1} not found in its cited chunk (match {scores[bad[0]]:.2f} < {settings.quote_match})"
    return None


def leakage_span(question: str, text: str) -> int:
    """Length in words of the longest run of consecutive words shared by ``question`` and ``text``."""
    q, t = words(question), words(text)
    if not q or not t:
        return 0
    return SequenceMatcher(None, q, t, autojunk=False).find_longest_match(0, len(q), 0, len(t)).size


def filter_leakage(
    questions: Sequence[Question], chunks: Mapping[str, Chunk], settings: BuildSettings
) -> StageOutput[Question]:
    """Flag questions that copy runs of their source chunk; drop those above the threshold."""
    out = StageOutput[Question](records=[], counts={"dropped_by_leakage": 0, "flagged_leakage": 0})
    for question in questions:
        ids = question.source_chunk_ids or question.metadata.get("seed_chunk_ids", [])
        sources = [chunks[c].text for c in ids if c in chunks]
        span = max((leakage_span(question.text, text) for text in sources), default=0)
        n_words = max(len(words(question.text)), 1)
        if span >= settings.leakage_flag_words:
            question.flags["leakage_span"] = span
            out.counts["flagged_leakage"] += 1
        if span >= settings.leakage_words or (span >= 4 and span / n_words >= settings.leakage_ratio):
            drop(out, question, "leakage", f"copies a run of {span} words of {n_words}")
        else:
            out.records.append(question)
    return out


def question_bigrams(text: str) -> frozenset[str]:
    """Word bigrams of a question (its only word for a one-word question)."""
    tokens = words(text)
    if len(tokens) < 2:
        return frozenset(tokens)
    return frozenset(f"{a} {b}" for a, b in itertools.pairwise(tokens))


def filter_near_duplicates(questions: Sequence[Question], settings: BuildSettings) -> StageOutput[Question]:
    """Keep the first of each group of near-duplicate questions (bigram Jaccard >= ``duplicate_jaccard``)."""
    out = StageOutput[Question](records=[], counts={"dropped_by_near_duplicate": 0})
    kept: list[frozenset[str]] = []
    index: dict[str, list[int]] = {}
    for question in questions:
        grams = question_bigrams(question.text)
        candidates = sorted({j for g in grams for j in index.get(g, [])})
        twin = next((j for j in candidates if jaccard(grams, kept[j]) >= settings.duplicate_jaccard), None)
        if twin is not None:
            drop(out, question, "near_duplicate", f"near-duplicate of {out.records[twin].id}")
            continue
        for g in grams:
            index.setdefault(g, []).append(len(kept))
        kept.append(grams)
        out.records.append(question)
    return out


def relabel_single_chunk(questions: Sequence[Question]) -> StageOutput[Question]:
    """Multi-hop and comparison questions whose evidence is all in one chunk become factoid or explanatory; the
    others record their hops."""
    out = StageOutput[Question](records=list(questions), counts={"relabelled": 0})
    for question in questions:
        if question.type not in ("multi-hop", "comparison"):
            continue
        cited = {c for c in question.metadata.get("evidence_chunk_ids", []) if c}
        if len(cited) != 1:
            hops = [c for c in question.source_chunk_ids if c in cited]
            question.hops = hops if len(hops) >= 2 else list(question.source_chunk_ids)
            continue
        answer = question.reference_answer or ""
        new = "explanatory" if len(sentences(answer)) > 1 or len(words(answer)) > 25 else "factoid"
        question.metadata["planned_type"] = question.type
        question.flags["relabelled"] = f"{question.type}->{new}"
        question.type = new
        question.source_chunk_ids = sorted(cited)
        out.counts["relabelled"] += 1
    return out


def difficulty_label(hops: int, rank: int | None, overlap: float) -> str:
    """easy / medium / hard from hop count, BM25 rank of the source and term overlap (module docstring)."""
    points = 2 if hops >= 2 else 0
    points += 0 if rank == 1 else 1 if rank is not None and rank <= 10 else 2
    points += 0 if overlap >= 0.6 else 1 if overlap >= 0.3 else 2
    return "easy" if points <= 1 else "medium" if points <= 3 else "hard"


def assign_difficulty(questions: Sequence[Question], index: Bm25Index) -> StageOutput[Question]:
    """Set ``difficulty`` (and ``metadata['difficulty_inputs']``) on every question."""
    counts = {"difficulty_easy": 0, "difficulty_medium": 0, "difficulty_hard": 0}
    for question in questions:
        if question.type == "unanswerable" or not question.source_chunk_ids:
            question.difficulty = None
            continue
        cited = {c for c in question.metadata.get("evidence_chunk_ids", []) if c}
        hops = max(len(cited & set(question.source_chunk_ids)), 1)
        ranks = [index.rank_of(question.text, cid) for cid in question.source_chunk_ids]
        rank = None if any(r is None for r in ranks) else max(r for r in ranks if r is not None)
        q_terms = set(terms(question.text))
        source_terms = {t for cid in question.source_chunk_ids for t in terms(index.chunk(cid).text)}
        overlap = len(q_terms & source_terms) / len(q_terms) if q_terms else 0.0
        question.difficulty = difficulty_label(hops, rank, overlap)
        question.metadata["difficulty_inputs"] = {"hops": hops, "bm25_rank": rank, "overlap": round(overlap, 3)}
        counts[f"difficulty_{question.difficulty}"] += 1
    return StageOutput(records=list(questions), counts=counts)
