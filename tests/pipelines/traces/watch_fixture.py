"""Exports for the tests of ``traces watch``: OTLP JSON lines of RAG traces asking the passages golden set's
questions, written, appended, or rewritten in place (the same inode, as ext4 gives a file re-created after rm)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "formats"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evaluate"))
from otlp_fixture import rag_trace, request
from passages_fixture import QUESTIONS, chunk_text, save_passages_golden

Q1, Q2, Q3 = (QUESTIONS[q][0] for q in ("q1", "q2", "q3"))

__all__ = ["Q1", "Q2", "Q3", "append", "line", "rewrite_in_place", "run_of", "save_passages_golden", "trace"]


def trace(n: int, question: str) -> list[dict[str, Any]]:
    """Trace ``n`` (root first, then its retriever and LLM spans), started at ``n`` x 100 ms."""
    return rag_trace(n, question, [chunk_text("returns#1"), chunk_text("tent#1")], "An answer.", start_ms=n * 100)


def line(*spans: list[dict[str, Any]]) -> str:
    """One OTLP request holding the spans of the given traces, as one JSON line."""
    return json.dumps(request([s for group in spans for s in group])) + "\n"


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def rewrite_in_place(path: Path, text: str) -> None:
    """New content under the same inode: truncated and written through the same file."""
    with path.open("r+b") as handle:
        handle.truncate(0)
        handle.write(text.encode("utf-8"))


def run_of(out: Path) -> list[dict[str, Any]]:
    """The lines of the watched run (its header left out)."""
    lines = (out / "watch-run.jsonl").read_text(encoding="utf-8").splitlines()[1:]
    return [json.loads(raw) for raw in lines]
