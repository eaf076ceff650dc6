"""Real parts, a system that searches several times: a small LangChain agent (search with the question, search
again with a query built from what it found, call a calculator tool, answer with langchain-core's fake chat model;
no network) instrumented with the real ``openinference-instrumentation-langchain``, its spans exported as OTLP JSON
lines, then ``assay import traces`` (every step, in time order) and ``assay eval --no-judge`` (the trajectory
measures).

The agent asks the trajectory fixture's comparison question (the Brackenhow tent's weight and the express shipping
cost): its first search finds the tent paragraph, its second the express paragraph, and it answers from the second
search alone, so the tent's evidence is found and then dropped.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines" / "evaluate"))
from test_traces_langchain import WordOverlapRetriever, traced_into
from trajectory_fixture import TENT, N, trajectory_golden

from assay.cli import main

pytestmark = pytest.mark.filterwarnings(r"ignore:Calling \.text\(\) as a method is deprecated")
QUESTION = "How heavy is the Brackenhow 4 tent, and what does express shipping cost?"
ANSWER = "The tent weighs 3.2 kg; express shipping costs $12."


@tool
def calculator(expression: str) -> str:
    """Evaluate a sum of two numbers written as 'a + b'."""
    left, right = expression.split("+")
    return str(float(left) + float(right))


def agent() -> RunnableLambda[str, str]:
    retriever = WordOverlapRetriever(k=1)
    model = GenericFakeChatModel(messages=iter([AIMessage(content=ANSWER, usage_metadata={
        "input_tokens": 60, "output_tokens": 12, "total_tokens": 72})]))  # fmt: skip

    def run(question: str) -> str:
        first = retriever.invoke(question)
        follow_up = "express shipping cost" if "tent" in first[0].page_content.lower() else question
        second = retriever.invoke(follow_up)
        calculator.invoke({"expression": "3.2 + 12"})
        context = "\n\n".join(doc.page_content for doc in second)
        return str(model.invoke(f"Answer from the context.\n\n{context}\n\nQuestion: {question}").content)

    return RunnableLambda(run)


@pytest.fixture
def traced(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "agent-traces.jsonl"
    with traced_into(path):
        agent().invoke(QUESTION, config={"metadata": {"query_id": "q4"}})
    yield path


def test_an_instrumented_agent_imports_with_every_step_and_evaluates_its_trajectory(
    traced: Path, tmp_path: Path
) -> None:
    golden = tmp_path / "golden"
    trajectory_golden().save(golden)
    run_file = tmp_path / "agent.jsonl"
    result = CliRunner().invoke(main, ["import", "traces", str(traced), "-o", str(run_file), "--golden", str(golden)])
    assert result.exit_code == 0, result.output
    line = json.loads(run_file.read_text(encoding="utf-8").splitlines()[1])
    steps: list[dict[str, Any]] = line["steps"]
    assert [step["kind"] for step in steps] == ["retrieval", "retrieval", "tool", "llm"]
    assert [step["query"] for step in steps[:2]] == [QUESTION, "express shipping cost"]
    assert [len(step["retrieved"]) for step in steps[:2]] == [1, 1]
    assert steps[2]["name"] == "calculator" and steps[2]["arguments"] == {"input": "3.2 + 12"}
    assert steps[2]["output"] == "15.2"
    assert (steps[3]["prompt_tokens"], steps[3]["completion_tokens"]) == (60, 12)
    assert line["answer"] == ANSWER and line["retrieved"] == steps[1]["retrieved"]  # answered from the last search

    report = tmp_path / "report"
    result = CliRunner().invoke(main, ["eval", str(golden), str(run_file), "-o", str(report), "--no-judge", "-k", "1",
                                       "--n-boot", "200"])  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = [json.loads(raw) for raw in (report / "per_query.jsonl").read_text(encoding="utf-8").splitlines()]
    q4 = next(row for row in rows if row.get("query_id") == "q4")["metrics"]
    assert (q4["searches"], q4["tool_calls"], q4["step_tokens"]) == (2.0, 1.0, 72.0)
    assert q4["trajectory_recall"] == 1.0 and q4["hop_coverage"] == 1.0
    assert q4["evidence_dropped"] == pytest.approx(TENT / N)
    assert "- agent: 1 of 1 questions answered in steps" in (report / "report.md").read_text(encoding="utf-8")
