"""The example RAG app of examples/ (the README's targets) as a function, a command and an HTTP server, asked the
demo corpus' questions: every way returns the golden chunk ids that hold the answer."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.corpus.chunking import chunk_corpus
from assay.corpus.ingest import ingest
from assay.formats.golden import GoldenSet
from assay.targets import TargetSettings, TargetSpec, run_target
from assay.types import Manifest, Question

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = {
    "stove": ("How much does it cost to rent the Emberline 2 stove per night?", "products/emberline-stove.html#3-"),
    "tent": ("How much does the Brackenhow 4 tent weigh?", "products/brackenhow-4-tent.txt#"),
}


@pytest.fixture(scope="module")
def golden() -> GoldenSet:
    docs = ingest(ROOT / "datasets" / "demo" / "corpus").documents
    questions = [Question(id=qid, text=text) for qid, (text, _) in QUESTIONS.items()]
    return GoldenSet(Manifest(assay_version="test"), docs, chunk_corpus(docs), questions)


def _check(golden: GoldenSet, lines: list[dict[str, object]]) -> None:
    assert [line["query_id"] for line in lines] == list(QUESTIONS)
    for line in lines:
        ids = [item["id"] for item in line["retrieved"]]  # type: ignore[attr-defined, index, union-attr]
        assert all(golden.has_chunk(cid) for cid in ids)  # the app chunks as assay does: the golden set's ids
        assert any(cid.startswith(QUESTIONS[str(line["query_id"])][1]) for cid in ids[:3]), ids
        assert isinstance(line["answer"], str) and line["answer"] and line["citations"] == ids[:2]


def test_function_target(golden: GoldenSet, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT))
    done = run_target(golden, TargetSpec("python:examples.rag_app:answer"))
    _check(golden, done.lines)


def test_command_target(golden: GoldenSet) -> None:
    spec = TargetSpec(f"cmd:{sys.executable} {ROOT / 'examples' / 'rag_app.py'} --stdin")
    done = run_target(golden, spec, settings=TargetSettings(concurrency=2, timeout=120))
    _check(golden, done.lines)


@pytest.fixture
def server() -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, str(ROOT / "examples" / "rag_server.py"), "--port", str(port)],
                               stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == f"serving http://127.0.0.1:{port}/answer"
        yield f"http://127.0.0.1:{port}/answer"
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_http_target(golden: GoldenSet, server: str) -> None:
    done = run_target(golden, TargetSpec(server), settings=TargetSettings(timeout=120))
    _check(golden, done.lines)


def test_the_app_answers_with_an_openai_compatible_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.testing import FakeOpenAIServer

    monkeypatch.syspath_prepend(str(ROOT))
    from examples import rag_app

    reply = "Renting the Emberline 2 costs $6 per night."
    with FakeOpenAIServer(lambda body: reply) as server:
        monkeypatch.setenv("RAG_MODEL", "tiny")
        monkeypatch.setenv("RAG_API_BASE", server.url)
        monkeypatch.setenv("RAG_API_KEY", "k-1")
        out = rag_app.answer(QUESTIONS["stove"][0])
        [request] = server.requests
    assert out["answer"] == reply and request["model"] == "tiny"
    assert QUESTIONS["stove"][0] in request["messages"][-1]["content"]
    # the fake counts a token per 4 characters, plus 1
    prompt = sum(len(m["content"]) for m in request["messages"]) // 4 + 1
    assert out["usage"] == {"prompt_tokens": prompt, "completion_tokens": len(reply) // 4 + 1}
    assert [p["id"] for p in out["retrieved"]] == [p["id"] for p in rag_app.retrieve(QUESTIONS["stove"][0])]
