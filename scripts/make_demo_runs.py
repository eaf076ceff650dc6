"""Build the demo golden set (offline judge, the settings ``assay demo`` uses) and write three example runs.

    python scripts/make_demo_runs.py            # writes datasets/demo/runs/{bm25,hybrid,weak}.jsonl
    python scripts/make_demo_runs.py --check    # prints nDCG@10 / recall@10 of each run against the fresh build

The runs are deterministic functions of the golden set (no randomness), one JSONL line per question:
``{"query_id", "retrieved": [{"id", "score"}, ...], "answer", "citations"}``.

- ``bm25``: BM25 (assay's Lucene-variant index over chunk text) top 10; the answer is, from each of the top 2
  chunks, the sentence sharing most content terms with the question; it cites those chunks.
- ``hybrid``: reciprocal-rank fusion (k = 60) of three BM25 rankings of the top 30: chunk text, the question
  expanded with the 8 most frequent content terms of the top 3 chunks (pseudo-relevance feedback), and the chunk's
  title + heading path + text; top 10 of the fused list. Its answer takes the 2 best sentences of its top 3 chunks.
- ``weak``: BM25 over titles and heading paths only (no chunk text), top 10; a vague answer (a hedge plus the first
  sentence of its top chunk), citing that chunk.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from assay.corpus.pooling import Bm25Index
from assay.formats.golden import GoldenSet
from assay.judge import make_judge
from assay.pipelines.bootstrap import DEMO_SETTINGS, build_golden
from assay.text import sentences, terms
from assay.types import Chunk, Question

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "datasets" / "demo" / "corpus"
RUNS = ROOT / "datasets" / "demo" / "runs"
K = 10


def _best_sentences(question: str, chunks: list[Chunk], n: int) -> list[tuple[str, str]]:
    """(chunk id, sentence) of the ``n`` sentences sharing most question terms (ties: earlier chunk, sentence)."""
    wanted = set(terms(question))
    scored = []
    for rank, chunk in enumerate(chunks):
        for pos, sentence in enumerate(sentences(chunk.text)):
            overlap = len(wanted & set(terms(sentence)))
            scored.append((-overlap, rank, pos, chunk.id, sentence))
    return [(cid, s) for _, _, _, cid, s in sorted(scored)[:n]]


def _line(qid: str, ranked: list[tuple[str, float]], answer: str, citations: list[str]) -> dict[str, object]:
    retrieved = [{"id": cid, "score": round(score, 6)} for cid, score in ranked[:K]]
    return {"query_id": qid, "retrieved": retrieved, "answer": answer, "citations": citations}


def bm25_run(golden: GoldenSet, index: Bm25Index) -> list[dict[str, object]]:
    out = []
    for q in golden.questions:
        ranked = index.search(q.text, K)
        picks = [_best_sentences(q.text, [golden.chunk(cid)], 1)[0] for cid, _ in ranked[:2]]
        out.append(_line(q.id, ranked, " ".join(s for _, s in picks), [cid for cid, _ in picks]))
    return out


def _expanded(question: Question, golden: GoldenSet, index: Bm25Index) -> str:
    top = [golden.chunk(cid).text for cid, _ in index.search(question.text, 3)]
    own = set(terms(question.text))
    extra = [t for t, _ in Counter(t for text in top for t in terms(text)).most_common() if t not in own][:8]
    return f"{question.text} {question.text} {' '.join(extra)}"


def _doc_titles(golden: GoldenSet) -> dict[str, str]:
    return {d.id: d.title or "" for d in golden.documents}


def _titled(golden: GoldenSet) -> list[Chunk]:
    titles = _doc_titles(golden)
    return [
        c.model_copy(update={"text": " ".join([titles.get(c.doc_id, ""), *c.heading_path, c.text])})
        for c in golden.chunks
    ]


def hybrid_run(golden: GoldenSet, index: Bm25Index) -> list[dict[str, object]]:
    titled = Bm25Index.build(_titled(golden))
    out = []
    for q in golden.questions:
        lists = [index.search(q.text, 30), index.search(_expanded(q, golden, index), 30), titled.search(q.text, 30)]
        fused: dict[str, float] = {}
        for ranking in lists:
            for rank, (cid, _) in enumerate(ranking, start=1):
                fused[cid] = fused.get(cid, 0.0) + 1.0 / (60 + rank)
        ranked = sorted(fused.items(), key=lambda item: (-item[1], item[0]))
        picks = _best_sentences(q.text, [golden.chunk(cid) for cid, _ in ranked[:3]], 2)
        out.append(_line(q.id, ranked, " ".join(s for _, s in picks), sorted({cid for cid, _ in picks})))
    return out


def weak_run(golden: GoldenSet) -> list[dict[str, object]]:
    titles = _doc_titles(golden)
    heads = [
        c.model_copy(update={"text": " ".join([titles.get(c.doc_id, ""), *c.heading_path])}) for c in golden.chunks
    ]
    index = Bm25Index.build(heads)
    out = []
    for q in golden.questions:
        ranked = index.search(q.text, K)
        if not ranked:
            out.append(_line(q.id, [], "I could not find anything about that.", []))
            continue
        top = golden.chunk(ranked[0][0])
        first = next(iter(sentences(top.text)), "")
        answer = f"It depends on the situation; the documentation may help. {first}"
        out.append(_line(q.id, ranked, answer, [top.id]))
    return out


def build_demo(output: Path | None = None) -> GoldenSet:
    """The demo golden set with the offline judge and :data:`DEMO_SETTINGS`."""
    return build_golden(CORPUS, judge=make_judge("offline"), settings=DEMO_SETTINGS, output=output, overwrite=True)


def _check(golden: GoldenSet, runs: dict[str, list[dict[str, object]]]) -> None:
    import pytrec_eval

    qrels = golden.qrels_map()
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.10", "recip_rank"})
    for name, lines in runs.items():
        run = {str(line["query_id"]): {i["id"]: i["score"] for i in line["retrieved"]} for line in lines}  # type: ignore[attr-defined]
        scores = evaluator.evaluate({q: r for q, r in run.items() if q in qrels})
        n = len(scores)
        means = {m: sum(s[m] for s in scores.values()) / n for m in ("ndcg_cut_10", "recall_10", "recip_rank")}
        print(f"{name:7s} " + "  ".join(f"{m}={v:.4f}" for m, v in means.items()) + f"  ({n} queries)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="print metrics of each run; write nothing")
    args = parser.parse_args(argv)
    golden = build_demo()
    index = Bm25Index.build(golden.chunks)
    runs = {"bm25": bm25_run(golden, index), "hybrid": hybrid_run(golden, index), "weak": weak_run(golden)}
    if args.check:
        _check(golden, runs)
        return 0
    RUNS.mkdir(parents=True, exist_ok=True)
    for name, lines in runs.items():
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        (RUNS / f"{name}.jsonl").write_text(text, encoding="utf-8")
        print(f"wrote {RUNS / f'{name}.jsonl'} ({len(lines)} queries)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
