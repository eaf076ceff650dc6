"""Real parts: a small LangChain RAG chain (a ``BaseRetriever`` over the test corpus and langchain-core's fake chat
model, no network) instrumented with the real ``openinference-instrumentation-langchain`` and the OpenTelemetry SDK,
its spans exported the way a user writes OTLP JSON from Python (the SDK's OTLP encoder, then protobuf's
``MessageToJson``, one export a line), then ``assay import traces`` and ``assay eval --no-judge``.

The versions are pinned in pyproject's ``dev`` extra; the assay package itself imports none of them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner
from google.protobuf.json_format import MessageToJson
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnablePassthrough
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines" / "evaluate"))
from passages_fixture import DOCS, QUESTIONS, paragraphs, save_passages_golden

from assay.cli import main
from assay.corpus.align import normalized_words
from assay.formats.golden import GoldenSet
from assay.pipelines.evaluate.runs.read import load_run

# openinference-instrumentation-langchain 0.1.80 still calls message.text() (a langchain-core deprecation): theirs
pytestmark = pytest.mark.filterwarnings(r"ignore:Calling \.text\(\) as a method is deprecated")
ANSWERS = {"q1": "Within 30 days of delivery.", "q2": "It weighs 3.2 kg.", "q3": "Express shipping costs $12."}


class WordOverlapRetriever(BaseRetriever):
    """The corpus' paragraphs ranked by the words they share with the query (ties: corpus order); the top ``k``."""

    k: int = 2

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        asked = set(normalized_words(query))
        found = []
        for doc_id, text in DOCS.items():
            for i, (start, end) in enumerate(paragraphs(doc_id)):
                shared = len(asked & set(normalized_words(text[start:end])))
                found.append((-shared, len(found), Document(page_content=text[start:end], id=f"{doc_id}:{i}",
                                                             metadata={"source": f"{doc_id}.md"})))  # fmt: skip
        return [doc for _, _, doc in sorted(found, key=lambda x: (x[0], x[1]))[: self.k]]


class OtlpJsonLinesExporter(SpanExporter):
    """What a user writes to keep spans as OTLP JSON: the SDK's OTLP encoder, protobuf's JSON, one export a line."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self.path.open("a", encoding="utf-8") as out:
            out.write(MessageToJson(encode_spans(spans), indent=None) + "\n")
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None


def rag_chain(answers: Sequence[str]) -> Runnable[str, str]:
    usage = [{"input_tokens": 40 + i, "output_tokens": 6, "total_tokens": 46 + i} for i in range(len(answers))]
    messages = iter([AIMessage(content=a, usage_metadata=u) for a, u in zip(answers, usage, strict=True)])
    prompt = ChatPromptTemplate.from_template("Answer from the context.\n\n{context}\n\nQuestion: {question}")

    def joined(docs: list[Document]) -> str:
        return "\n\n".join(d.page_content for d in docs)

    return (
        {"context": WordOverlapRetriever() | joined, "question": RunnablePassthrough()}
        | prompt
        | GenericFakeChatModel(messages=messages)
        | StrOutputParser()
    )


@contextmanager
def traced_into(path: Path) -> Iterator[None]:
    """LangChain instrumented by OpenInference while the block runs, its spans written to ``path`` as OTLP JSON
    lines (flushed on exit)."""
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(OtlpJsonLinesExporter(path)))
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield
    finally:
        instrumentor.uninstrument()
        provider.shutdown()  # flushes the batch processor


@pytest.fixture
def traced(tmp_path: Path) -> Iterator[Path]:
    """The three golden questions asked of the chain, traced; q1 carries its query id in LangChain's metadata."""
    path = tmp_path / "otel-traces.jsonl"
    with traced_into(path):
        chain = rag_chain([ANSWERS[q] for q in ("q1", "q2", "q3")])
        chain.invoke(QUESTIONS["q1"][0], config={"metadata": {"query_id": "q1"}})
        chain.invoke(QUESTIONS["q2"][0])
        chain.invoke(QUESTIONS["q3"][0].lower())  # matched by its words all the same
    yield path


def test_instrumented_langchain_traces_import_and_evaluate(traced: Path, tmp_path: Path) -> None:
    golden = save_passages_golden(tmp_path / "golden")
    run_file = tmp_path / "prod.jsonl"
    result = CliRunner().invoke(main, ["import", "traces", str(traced), "-o", str(run_file), "--golden", str(golden)])
    assert result.exit_code == 0, result.output
    assert "Read 3 trace(s)" in result.stdout and f"matched to {golden}: 1 by query id, 2 by question" in result.stdout

    lines = [json.loads(raw) for raw in run_file.read_text(encoding="utf-8").splitlines()[1:]]
    assert [line["query_id"] for line in lines] == ["q1", "q2", "q3"]
    assert [line["answer"] for line in lines] == [ANSWERS["q1"], ANSWERS["q2"], ANSWERS["q3"]]
    assert [line["usage"] for line in lines] == [{"prompt_tokens": 40 + i, "completion_tokens": 6} for i in range(3)]
    assert all(len(line["retrieved"]) == 2 and line["latency_ms"] > 0 for line in lines)
    assert all(len(line["trace_id"]) == 32 for line in lines)

    loaded = load_run(run_file, GoldenSet.load(golden))
    assert loaded.counts.matched_by == {"exact": 6}  # every retrieved paragraph located in the golden documents
    assert [loaded.lines[q].ranked[0] for q in ("q1", "q2", "q3")] == ["returns#1", "tent#1", "shipping#2"]

    report = tmp_path / "report"
    result = CliRunner().invoke(main, ["eval", str(golden), str(run_file), "-o", str(report), "--no-judge",
                                       "-k", "1,2", "--n-boot", "200"])  # fmt: skip
    assert result.exit_code == 0, result.output
    run = json.loads((report / "results.json").read_text(encoding="utf-8"))["runs"][0]
    assert run["counts"]["queries_evaluated"] == 3 and run["metrics"]["P@1"]["mean"] == 1.0
    assert (run["system"]["prompt_tokens"], run["system"]["completion_tokens"]) == (123, 18)


def test_without_a_golden_set_the_trace_ids_name_the_questions(traced: Path, tmp_path: Path) -> None:
    run_file = tmp_path / "run.jsonl"
    result = CliRunner().invoke(main, ["import", "traces", str(traced), "-o", str(run_file)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(raw) for raw in run_file.read_text(encoding="utf-8").splitlines()[1:]]
    assert lines[0]["query_id"] == "q1"
    assert [line["query_id"] for line in lines[1:]] == [f"t-{line['trace_id'][:12]}" for line in lines[1:]]
    assert [line["question"] for line in lines] == [QUESTIONS["q1"][0], QUESTIONS["q2"][0], QUESTIONS["q3"][0].lower()]
