"""A small RAG app over the demo corpus, for trying `assay run` and `assay eval --target` (and for assay's tests).

Retrieval: BM25 over the demo corpus, chunked by assay's own chunker (so the chunk ids it returns are the golden
set's ids; a real app would return its own ids, or passage texts). Generation: extractive by default (from each of
the top 2 passages, the sentence sharing most words with the question: no model, no key); or any OpenAI-compatible
chat model when RAG_MODEL and RAG_API_BASE are set (RAG_API_KEY for a key; the reply's token usage is returned).

Three ways to call it:

    python:examples.rag_app:answer                 # a Python function (from the repository's root folder)
    cmd:python examples/rag_app.py --stdin         # one JSON object in on stdin, one out on stdout
    python examples/rag_server.py --port 8000      # an HTTP server: POST /answer {"question": ...}
"""

from __future__ import annotations

import functools
import json
import os
import sys
import urllib.request
from pathlib import Path
from typing import Any

import assay
from assay.corpus.chunking import chunk_corpus
from assay.corpus.ingest import ingest
from assay.corpus.pooling import Bm25Index
from assay.text import sentences, terms
from assay.types import Chunk

CORPUS = Path(assay.__file__).parent / "_datasets" / "demo" / "corpus"  # datasets/demo/corpus, shipped with assay
TOP_K = 10


@functools.cache
def _index() -> tuple[Bm25Index, dict[str, Chunk]]:
    chunks = chunk_corpus(ingest(CORPUS).documents)
    return Bm25Index.build(chunks), {chunk.id: chunk for chunk in chunks}


def retrieve(question: str, k: int = TOP_K) -> list[dict[str, Any]]:
    """The top ``k`` chunks for ``question``: id, BM25 score and text."""
    index, chunks = _index()
    return [{"id": cid, "score": round(score, 6), "text": chunks[cid].text} for cid, score in index.search(question, k)]


def _best_sentence(question: str, text: str) -> str:
    wanted = set(terms(question))
    return max(sentences(text) or [text], key=lambda s: len(wanted & set(terms(s))))


def extractive(question: str, passages: list[dict[str, Any]]) -> dict[str, Any]:
    """From each of the top 2 passages the sentence sharing most words with the question; cites those passages."""
    top = passages[:2]
    return {"answer": " ".join(_best_sentence(question, p["text"]) for p in top), "citations": [p["id"] for p in top]}


def generated(question: str, passages: list[dict[str, Any]], model: str, api_base: str) -> dict[str, Any]:
    """An answer from an OpenAI-compatible chat model, with the reply's token usage."""
    context = "\n\n".join(f"[{p['id']}] {p['text']}" for p in passages[:5])
    body = {"model": model, "messages": [
        {"role": "system", "content": "Answer from the passages only, in one or two sentences."},
        {"role": "user", "content": f"Passages:\n{context}\n\nQuestion: {question}"}]}  # fmt: skip
    headers = {"Content-Type": "application/json"}
    if os.environ.get("RAG_API_KEY"):
        headers["Authorization"] = f"Bearer {os.environ['RAG_API_KEY']}"
    request = urllib.request.Request(  # noqa: S310
        api_base.rstrip("/") + "/chat/completions", json.dumps(body).encode(), headers
    )
    with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310 (the user's own http(s) api base)
        reply = json.load(response)
    usage = reply.get("usage") or {}
    return {"answer": reply["choices"][0]["message"]["content"],
            "usage": {k: usage[k] for k in ("prompt_tokens", "completion_tokens") if k in usage}}  # fmt: skip


def answer(
    question: str, query_id: str | None = None, metadata: dict[str, Any] | None = None, top_k: int = TOP_K
) -> dict[str, Any]:
    """Retrieve the top ``top_k`` (``assay run --top-k``), then generate: ``{"retrieved": [{"id", "score", "text"},
    ...], "answer", "citations", "usage"?}``."""
    passages = retrieve(question, top_k)
    model, api_base = os.environ.get("RAG_MODEL"), os.environ.get("RAG_API_BASE")
    reply = generated(question, passages, model, api_base) if model and api_base else extractive(question, passages)
    return {"retrieved": passages, **reply}


def main(argv: list[str]) -> int:
    """``--stdin``: answer the JSON question on stdin; else answer the question given as arguments."""
    if argv[:1] == ["--stdin"]:
        ask = json.loads(sys.stdin.read())
        print(json.dumps(answer(ask["question"], ask.get("query_id"), ask.get("metadata"), ask.get("top_k", TOP_K))))
        return 0
    if not argv:
        print("usage: python examples/rag_app.py QUESTION...  |  --stdin", file=sys.stderr)
        return 2
    print(json.dumps(answer(" ".join(argv)), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
