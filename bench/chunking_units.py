"""Sections (g), (h), (i) and (k) of bench/chunking.py: one unit of account (issue 28).

The own run is BM25 top 10 over the golden chunks; its variants give the same text in the same order cut otherwise,
by offsets into the documents (so the figures measure the metrics, not the aligner): halves, thirds, overlapping
windows (two windows of two thirds of each chunk, overlapping by a third) and merged neighbours (the thirds with
the first two of each chunk merged back into one passage).
"""

from __future__ import annotations

import itertools
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

import bm25s

from assay.formats.golden import GoldenSet
from assay.pipelines.evaluate import EvalSettings, evaluate
from assay.types import Chunk, Manifest, Question, RelevanceLabel

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from chunking_systems import bm25_run, synthetic_corpus, windows  # noqa: E402

K = 10
Span = tuple[str, int, int]
Cut = Callable[[Span], list[Span]]


def _parts(n: int) -> Cut:
    def cut(span: Span) -> list[Span]:
        doc, s, e = span
        points = [s + (e - s) * i // n for i in range(n)] + [e]
        return [(doc, a, b) for a, b in itertools.pairwise(points) if b > a]

    return cut


def _windows(span: Span) -> list[Span]:
    doc, s, e = span
    third = max(1, (e - s) // 3)
    return [(doc, s, min(e, s + 2 * third)), (doc, min(e - 1, s + third), e)]


def _merged(span: Span) -> list[Span]:
    pieces = _parts(3)(span)
    return [(span[0], pieces[0][1], pieces[1][2]), *pieces[2:]] if len(pieces) == 3 else pieces


CUTS: dict[str, Cut] = {"own": lambda span: [span], "halves": _parts(2), "thirds": _parts(3), "windows": _windows,
                        "merged": _merged}  # fmt: skip


def own_spans(golden: GoldenSet) -> dict[str, list[Span]]:
    """BM25 top K over the golden chunks, per question, as the chunks' spans in rank order."""
    from assay.pipelines.evaluate.runs.locate import Resolver

    resolver = Resolver(golden)
    chunks = [c for c in golden.chunks if resolver.chunk_span(c.id) is not None]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize([c.text for c in chunks], stopwords="en", show_progress=False), show_progress=False)
    questions = list(golden.questions)
    tokens = bm25s.tokenize([q.text for q in questions], stopwords="en", show_progress=False)
    found, _ = retriever.retrieve(tokens, k=min(K, len(chunks)), show_progress=False)
    out = {}
    for q, hits in zip(questions, found, strict=True):
        spans = [resolver.chunk_span(chunks[i].id) for i in hits.tolist()]
        out[q.id] = [(s.doc_id, s.start, s.end) for s in spans if s is not None]
    return out


def as_run(spans: dict[str, list[Span]], cut: Cut, push: int = 0, texts: dict[str, str] | None = None) -> list[dict]:
    """A run by offsets (by text, cut inside words, with ``texts``: the documents' texts): each question's spans
    (its top ``push`` moved to the end), each cut by ``cut``."""
    rows = []
    for qid, ranked in spans.items():
        order = ranked[push:] + ranked[:push]
        pieces = [piece for span in order for piece in cut(span)]
        if texts is None:
            items = [{"doc_id": d, "start": a, "end": b} for d, a, b in pieces]
        else:
            items = [{"text": texts[d][a:b]} for d, a, b in pieces]
        rows.append({"query_id": qid, "retrieved": items})
    return rows


SETTINGS = EvalSettings(k_values=(5, K), n_boot=300, add_labels=False)


def invariance(folder: Path, spans: dict[str, list[Span]]) -> None:
    """(g): each cut beside the own run: the largest |difference| of the means; the cuts by offsets, then halves and
    thirds given by text (located by the aligner)."""
    from assay.pipelines.evaluate.scoring.names import counts_passages

    texts = {d.id: d.text for d in GoldenSet.load(folder).documents}
    own = as_run(spans, CUTS["own"])
    print(f"  {'cut':12s} {'comparable measures':>20s} {'largest |diff|':>15s}  {'worst':18s} "
          f"{'passage-bound, largest |diff|':>30s}")  # fmt: skip
    variants = [(name, as_run(spans, cut)) for name, cut in CUTS.items() if name != "own"]
    variants += [(f"{name}/text", as_run(spans, CUTS[name], texts=texts)) for name in ("halves", "thirds")]
    for name, run in variants:
        result, _ = evaluate(folder, {"own": own, name: run}, settings=SETTINGS)
        a, b = result.runs[0].metrics, result.runs[1].metrics
        diffs = {m: abs((a[m].mean or 0.0) - (b[m].mean or 0.0)) for m in a if m in b}
        fair = {m: d for m, d in diffs.items() if not counts_passages(m)}
        bound = {m: d for m, d in diffs.items() if counts_passages(m)}
        worst = max(fair, key=fair.__getitem__)
        other = max(bound, key=bound.__getitem__) if bound else None
        shown = f"{bound[other]:.3f} ({other})" if other else "-"
        print(f"  {name:12s} {len(fair):20d} {fair[worst]:15.4f}  {worst:18s} {shown:>30s}")


def discrimination(folder: Path, spans: dict[str, list[Span]]) -> None:
    """(h): in each chunking, the run against itself with its top 3 pushed to the end."""
    for name, cut in CUTS.items():
        runs = {"good": as_run(spans, cut), "pushed": as_run(spans, cut, push=3)}
        result, _ = evaluate(folder, runs, settings=SETTINGS)
        lead = next(c for c in result.comparisons if c.primary)
        budget = next((c for c in result.comparisons if c.metric == "ndcg@1000t"), None)
        extra = f"; ndcg@1000t {budget.delta:+.3f}, p adj. {budget.p_adjusted:.4f}" if budget else ""
        print(f"  {name:8s} {lead.metric}: {lead.verdict} ({lead.delta:+.3f}, p adj. {lead.p_adjusted:.4f}){extra}")


def aa(folder: Path, spans: dict[str, list[Span]], samples: int = 20, share: float = 0.7) -> None:
    """(i): the own run against its halves on random samples of the questions: verdicts called."""
    rng = random.Random(0)
    qids = sorted(spans)
    own, halves = as_run(spans, CUTS["own"]), as_run(spans, CUTS["halves"])
    called = 0
    for _ in range(samples):
        keep = set(rng.sample(qids, max(2, int(share * len(qids)))))
        runs = {
            "own": [r for r in own if r["query_id"] in keep],
            "halves": [r for r in halves if r["query_id"] in keep],
        }
        result, _ = evaluate(folder, runs, settings=SETTINGS)
        called += any(c.significant for c in result.comparisons)
    print(f"  samples calling a winner on any compared measure: {called}/{samples} (target <= 1)")


def speed_corpus(n_docs: int, n_questions: int, seed: int = 0) -> GoldenSet:
    """A golden set over ``n_docs`` synthetic documents (8 CISI sentences each, one word in five replaced): one
    document cut in two chunks at a sentence end past its middle, questions from the first 12 words of one of a
    random document's first sentences, that document's chunk holding the sentence graded 3 and its other chunk 1."""
    from assay.types import Provenance

    rng = random.Random(seed)
    docs = synthetic_corpus(n_docs, rng)
    chunks = []
    for doc in docs:
        cut = doc.text.index(". ", len(doc.text) // 2) + 2 if ". " in doc.text[len(doc.text) // 2 :] else len(doc.text)
        for i, (a, b) in enumerate(((0, cut), (cut, len(doc.text)))):
            if b > a:
                chunks.append(Chunk(id=f"{doc.id}#{i}", doc_id=doc.id, text=doc.text[a:b], start=a, end=b, ordinal=i))
    by_doc: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    questions, labels = [], []
    made = Provenance(source="judge", model="bench")
    for n in range(n_questions):
        doc = docs[rng.randrange(n_docs)]
        sentence = doc.text.split(". ")[rng.randrange(3)]
        questions.append(Question(id=f"q{n}", text=" ".join(sentence.split()[:12]), source_doc_ids=[doc.id]))
        for chunk in by_doc[doc.id]:
            grade = 3 if sentence[:40] in chunk.text else 1
            labels.append(RelevanceLabel(query_id=f"q{n}", chunk_id=chunk.id, grade=grade, provenance=made))
    return GoldenSet(Manifest(assay_version="bench"), docs, chunks, questions, labels)


def speed(n_docs: int) -> None:
    """(k): evaluation time of two by-text runs over ``n_docs`` documents, no judge."""
    golden = speed_corpus(n_docs, 200)
    own = bm25_run(golden, [c.text for c in golden.chunks])
    win = windows(100)
    fixed = bm25_run(golden, [p for doc in golden.documents for p in win(doc)])
    start = time.perf_counter()
    result, _ = evaluate(golden, {"own": own, "fixed100": fixed}, settings=EvalSettings(k_values=(10,), n_boot=300))
    took = time.perf_counter() - start
    means = {r.name: r.metrics["ndcg@10"].mean for r in result.runs}
    print(f"  {n_docs:,} documents, 200 questions, 2 runs: evaluation took {took:.1f} s (ndcg@10: {means})")
