"""Benchmark of systems that search several times (issue 42): where a small agent and single-shot BM25 fail on
multi-hop questions, read off the trajectory measures.

Collections:

- the bundled demo (``datasets/demo/corpus``), built with the offline judge as ``assay demo`` builds it; its
  multi-hop and comparison questions (those with hops) are asked;
- HotpotQA's dev set, distractor setting (``--hotpot FILE``: ``hotpot_dev_distractor_v1.json``, or any prefix of it:
  a file cut mid-record gives its complete records): every paragraph of every question's context is a document (one
  chunk each), the two supporting paragraphs of a question are its hops (in the order its supporting facts name
  them) and are labelled 2, the other eight paragraphs of its context 0, its supporting sentences are its evidence.

Systems, over BM25 (:class:`assay.corpus.pooling.Bm25Index`) on the golden chunks:

- ``bm25``: one search with the question, its top ``--k`` passages the context;
- ``agent``: search with the question (top 2), read the best passage, search again with a query built from it (the
  question's words and the names the passage holds that the question does not: a bridge entity), and answer from
  the best passage of each search; its lines carry both searches as ``steps``;
- ``agent-keeps-all``: the same searches, answering from all four passages (what a ReAct scratchpad keeps).

Each collection is evaluated once with the three runs (no judge: the labels are complete for HotpotQA's contexts,
the offline build's for the demo) and printed: per run the trajectory measures (means), then how each fails
(questions with a hop no search found, questions whose evidence was found and then dropped), the significant
differences between runs on those measures, and a trajectory's diagnosis as the explorer gives it.

``--langchain``: the agent written as a LangChain runnable, traced by the real OpenInference instrumentation (the
dev extra's ``langchain-core`` and ``openinference-instrumentation-langchain``), its OTLP JSON lines read by
``assay import traces`` and evaluated beside the others (``agent-traced``): the steps come from the spans alone.

Figures are printed, not asserted.

    python bench/agents.py                                   # the demo only
    python bench/agents.py --hotpot path/to/hotpot_dev_distractor_v1.json --langchain
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.corpus.pooling import Bm25Index
from assay.formats.golden import GoldenSet
from assay.judge import make_judge
from assay.metric_names import TRAJECTORY_METRICS
from assay.pipelines.bootstrap import DEMO_SETTINGS, build_golden
from assay.pipelines.evaluate import EvalSettings, Evaluated, evaluate_detailed
from assay.pipelines.evaluate.scoring.trajectory import hops_of
from assay.report._format import fmt_value
from assay.report._trajectory import trajectory_lines
from assay.types import Chunk, Document, Manifest, Provenance, Question, RelevanceLabel

HERE = Path(__file__).resolve().parent
DEMO = HERE.parent / "datasets" / "demo" / "corpus"
SHOWN = ("trajectory_recall", "first_search_recall", "evidence_dropped", "hop_coverage", "redundant_searches",
         "step_query_bm25_ndcg@10", "searches")  # fmt: skip
_NAME = re.compile(r"\b[A-Z][\w'’-]*(?:\s+(?:of|the|and|de|von)?\s*[A-Z][\w'’-]*)*")


def demo_golden(out: Path) -> GoldenSet:
    """The demo corpus built with the offline judge, as ``assay demo`` builds it."""
    return build_golden(DEMO, judge=make_judge("offline"), settings=DEMO_SETTINGS, output=out)


def read_hotpot(path: Path) -> list[dict[str, Any]]:
    """The complete records of a HotpotQA JSON file (a file cut mid-record keeps those before the cut)."""
    text = path.read_text(encoding="utf-8")
    decoder, at, out = json.JSONDecoder(), text.index("[") + 1, []
    while True:
        while at < len(text) and text[at] in " ,\n\r\t":
            at += 1
        try:
            record, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            return out
        out.append(record)


def _doc_id(title: str) -> str:
    return "p-" + re.sub(r"[^0-9A-Za-z]+", "-", title).strip("-").lower()


def hotpot_golden(records: Sequence[dict[str, Any]]) -> GoldenSet:
    """HotpotQA records as a golden set (module docstring)."""
    docs: dict[str, Document] = {}
    chunks: dict[str, Chunk] = {}
    questions, labels = [], []
    when = Provenance(source="imported", model="hotpotqa")
    for record in records:
        for title, sentences in record["context"]:
            doc = _doc_id(title)
            if doc not in docs:
                text = f"{title}. " + "".join(sentences)
                docs[doc] = Document(id=doc, source=f"{title}.txt", text=text, content_hash=doc)
                chunks[doc] = Chunk(id=doc, doc_id=doc, ordinal=0, text=text, start=0, end=len(text))
        supporting = list(dict.fromkeys(_doc_id(title) for title, _ in record["supporting_facts"]))
        sentences = {title: lines for title, lines in record["context"]}
        evidence = [sentences[t][i].strip() for t, i in record["supporting_facts"]
                    if t in sentences and i < len(sentences[t])]  # fmt: skip
        qtype = "comparison" if record["type"] == "comparison" else "multi-hop"
        questions.append(Question(id=record["_id"], text=record["question"], type=qtype, hops=supporting,
                                  reference_answer=record["answer"], evidence=evidence,
                                  source_chunk_ids=supporting))  # fmt: skip
        for title, _ in record["context"]:
            grade = 2 if _doc_id(title) in supporting else 0
            labels.append(RelevanceLabel(query_id=record["_id"], chunk_id=_doc_id(title), grade=grade,
                                         provenance=when))  # fmt: skip
    unique = {(label.query_id, label.chunk_id): label for label in labels}
    return GoldenSet(Manifest(assay_version="bench"), list(docs.values()), list(chunks.values()), questions,
                     list(unique.values()), [])  # fmt: skip


class Agent:
    """The bench's agent and single-shot BM25 over the golden chunks (module docstring)."""

    def __init__(self, gold: GoldenSet, k: int) -> None:
        self.index, self.k = Bm25Index.build(gold.chunks), k
        self.text = {c.id: c.text for c in gold.chunks}

    def search(self, query: str, k: int) -> list[str]:
        return [cid for cid, _ in self.index.search(query, k)]

    def follow_up(self, question: str, passage: str) -> str:
        """The question's words and the names of ``passage`` the question does not hold (the bridge)."""
        asked = question.lower()
        names = [m.group(0) for m in _NAME.finditer(passage) if m.group(0).lower() not in asked]
        return " ".join([question, *dict.fromkeys(names)][:8])

    def single(self, qid: str, question: str) -> dict[str, Any]:
        return {"query_id": qid, "retrieved": self.search(question, self.k)}

    def agent(self, qid: str, question: str, *, keep_all: bool = False) -> dict[str, Any]:
        first = self.search(question, 2)
        query = self.follow_up(question, self.text[first[0]]) if first else question
        second = self.search(query, 2)
        context = list(dict.fromkeys(first + second)) if keep_all else list(dict.fromkeys(first[:1] + second[:1]))
        steps = [{"kind": "retrieval", "query": question, "retrieved": first},
                 {"kind": "retrieval", "query": query, "retrieved": second}]  # fmt: skip
        return {"query_id": qid, "retrieved": context, "steps": steps}


def runs_of(gold: GoldenSet, questions: Sequence[Question], k: int) -> dict[str, list[dict[str, Any]]]:
    agent = Agent(gold, k)
    return {
        "bm25": [agent.single(q.id, q.text) for q in questions],
        "agent": [agent.agent(q.id, q.text) for q in questions],
        "agent-keeps-all": [agent.agent(q.id, q.text, keep_all=True) for q in questions],
    }


def traced_run(gold: GoldenSet, questions: Sequence[Question], k: int, folder: Path) -> Path | None:
    """The agent as a LangChain runnable traced by OpenInference, imported by ``assay import traces``; None when the
    dev extra is not installed."""
    try:
        from langchain_core.callbacks import CallbackManagerForRetrieverRun
        from langchain_core.documents import Document as LcDocument
        from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        from langchain_core.messages import AIMessage
        from langchain_core.retrievers import BaseRetriever
        from langchain_core.runnables import RunnableLambda
        from openinference.instrumentation.langchain import LangChainInstrumentor
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    except ImportError:
        return None
    from google.protobuf.json_format import MessageToJson
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    from assay.pipelines.traces.imports import import_traces

    agent = Agent(gold, k)

    class Bm25Retriever(BaseRetriever):
        top: int = 2

        def _get_relevant_documents(
            self, query: str, *, run_manager: CallbackManagerForRetrieverRun
        ) -> list[LcDocument]:
            return [LcDocument(page_content=agent.text[cid], id=cid) for cid in agent.search(query, self.top)]

    retriever = Bm25Retriever()
    model = GenericFakeChatModel(
        messages=iter([AIMessage(content="(the bench's agent answers nothing)")] * len(questions))
    )

    def run(question: str) -> str:
        first = retriever.invoke(question)
        query = agent.follow_up(question, first[0].page_content) if first else question
        second = retriever.invoke(query)
        context = "\n\n".join(doc.page_content for doc in (first[:1] + second[:1]))
        return str(model.invoke(f"Answer from the context.\n\n{context}\n\nQuestion: {question}").content)

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        chain = RunnableLambda(run)
        for question in questions:
            chain.invoke(question.text, config={"metadata": {"query_id": question.id}})
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
    spans = folder / "agent-traces.jsonl"
    spans.write_text(MessageToJson(encode_spans(exporter.get_finished_spans()), indent=None) + "\n", encoding="utf-8")
    imported = import_traces(spans, golden=gold)
    out = folder / "agent-traced.jsonl"
    out.write_text("".join(json.dumps(line) + "\n" for line in imported.lines), encoding="utf-8")
    return out


def report(name: str, done: Evaluated, seconds: float) -> None:
    result = done.result
    print(
        f"\n## {name}: {len({r.query_id for r in done.per_query})} questions with hops, evaluated in {seconds:.1f} s\n"
    )
    print("| run | " + " | ".join(SHOWN) + " | hop never found | evidence dropped |")
    print("|---|" + "---|" * (len(SHOWN) + 2))
    for run in result.runs:
        cells = [_cell(run.metrics.get(m)) for m in SHOWN]
        paths = run.trajectories
        missed = f"{paths.hops_missed} of {paths.hop_questions}" if paths else "-"
        dropped = f"{paths.dropped} of {paths.questions}" if paths else "-"
        print(f"| {run.name} | " + " | ".join(cells) + f" | {missed} | {dropped} |")
    print()
    for line in trajectory_lines(result):
        print(f"- {line}")
    example = next((side for q in done.questions for side in q.runs if side.run == "agent" and side.path), None)
    if example is not None:
        question = next(q for q in done.questions if example in q.runs)
        print(f"\nA trajectory's diagnosis (agent, {question.query_id}: {question.text}):")
        for step in example.steps:
            print(f"  step {step.number}: search {step.query!r}: recall after it {_cell_value(step.recall)}, "
                  f"{step.added} relevant characters new, {step.lost} not in the final context")  # fmt: skip
        for line in example.path:
            print(f"  {line}")


def _cell(summary: Any) -> str:
    if summary is None or summary.mean is None:
        return "-"
    if summary.low is None or summary.high is None:
        return fmt_value(summary.mean)
    return f"{fmt_value(summary.mean)} [{fmt_value(summary.low)}, {fmt_value(summary.high)}]"


def _cell_value(value: float | None) -> str:
    return "-" if value is None else fmt_value(value)


def evaluate_collection(name: str, gold: GoldenSet, k: int, langchain: bool, folder: Path) -> None:
    asked = [q for q in gold.questions if len(hops_of(q)) > 1]
    if not asked:
        print(f"\n## {name}: no question with hops")
        return
    started = time.perf_counter()
    runs: list[tuple[str, Any]] = list(runs_of(gold, asked, k).items())
    if langchain:
        traced = traced_run(gold, asked, k, folder)
        if traced is None:
            print("(--langchain: langchain-core and openinference-instrumentation-langchain are not installed)")
        else:
            runs.append(("agent-traced", traced))
    settings = EvalSettings(k_values=(k,), metrics=("recall@4",), n_boot=1000, seed=0)
    done = evaluate_detailed(gold, runs, settings=settings)
    report(name, done, time.perf_counter() - started)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hotpot", type=Path, help="HotpotQA's hotpot_dev_distractor_v1.json (or a prefix of it)")
    parser.add_argument("--no-demo", action="store_true", help="skip the demo corpus")
    parser.add_argument("--k", type=int, default=4, help="single-shot BM25's passages (default 4: the agent's four)")
    parser.add_argument("--langchain", action="store_true", help="also the agent traced through LangChain")
    args = parser.parse_args(argv)
    print(f"# Systems that search several times: trajectory measures (assay {TRAJECTORY_METRICS[0]}, ...)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if not args.no_demo:
            started = time.perf_counter()
            gold = demo_golden(folder / "demo")
            print(f"\ndemo golden set built in {time.perf_counter() - started:.1f} s: {len(gold.questions)} questions")
            evaluate_collection("demo", gold, args.k, args.langchain, folder)
        if args.hotpot is not None:
            records = read_hotpot(args.hotpot)
            gold = hotpot_golden(records)
            print(f"\nHotpotQA ({args.hotpot.name}): {len(records)} questions, {len(gold.chunks)} paragraphs")
            evaluate_collection("HotpotQA dev (distractor)", gold, args.k, args.langchain, folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
