"""Benchmark of real traffic in (issue 32): figures printed, nothing asserted.

Parts (``--part``, all of them by default):

- ``traces``: ``assay import traces`` of synthetic production traces. N traces (10,000 by default) are written as
  the OpenTelemetry collector's file exporter writes them: OTLP JSON lines, each line a batch of 256 spans (so the
  spans of one trace can straddle two lines), hex ids, integer enums, 64-bit integers as strings. Each trace has
  5 spans, as OpenInference's LangChain instrumentation records a RAG chain: a CHAIN root (the question in
  ``input.value``, the answer in ``output.value``), an EMBEDDING span, a RETRIEVER with 10 documents (id, score,
  metadata and about 400 characters of content each), a PROMPT span and an LLM span (input and output messages,
  token counts, cost). The import runs in a fresh subprocess (the reading, the trace rules and the atomic write of
  the run, as the command does them), so its peak resident memory (``ru_maxrss``) is its own; the wall and CPU
  seconds, traces per second and the sizes of the files are printed. Target: 10,000 traces in under 20 s.

    python bench/traffic.py                        # every part
    python bench/traffic.py --part traces --traces 10000
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

SPANS_PER_LINE = 256
DOCUMENTS = 10
T0 = 1_735_689_600_000_000_000  # 2025-01-01T00:00:00Z in nanoseconds
MS = 1_000_000
WORDS = (
    "warranty refund shipping order invoice account password plan tier storage backup device battery firmware screen "
    "charger cable return policy days weeks support ticket agent manual setup install"
).split()


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": str(value)}}


def _span(
    trace: str, sid: int, parent: int | None, name: str, start: int, end: int, attrs: dict[str, Any]
) -> dict[str, Any]:
    return {"traceId": trace, "spanId": f"{sid:016x}", "parentSpanId": f"{parent:016x}" if parent else "",
            "name": name, "kind": 1, "startTimeUnixNano": str(start), "endTimeUnixNano": str(end),
            "attributes": [_attr(k, v) for k, v in attrs.items()], "status": {"code": 1}}  # fmt: skip


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def trace_spans(rng: random.Random, n: int) -> list[dict[str, Any]]:
    """The five spans of trace ``n``."""
    trace = f"{rng.getrandbits(128):032x}"
    base, start = n * 8 + 1, T0 + n * 50 * MS
    question = _sentence(rng, 9).rstrip(".") + "?"
    answer = _sentence(rng, 25)
    docs: dict[str, Any] = {}
    for i in range(DOCUMENTS):
        prefix = f"retrieval.documents.{i}.document"
        docs |= {f"{prefix}.id": f"doc-{rng.randrange(100_000)}#{rng.randrange(20)}",
                 f"{prefix}.score": round(1.0 - i * 0.05 - rng.random() * 0.01, 4),
                 f"{prefix}.content": " ".join(_sentence(rng, 12) for _ in range(5)),
                 f"{prefix}.metadata": json.dumps({"source": f"kb/{rng.randrange(500)}.md"})}  # fmt: skip
    llm = {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini", "llm.token_count.prompt": 1800,
           "llm.token_count.completion": 60, "llm.token_count.total": 1860, "llm.cost.total": 0.0003,
           "llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": question,
           "llm.output_messages.0.message.role": "assistant",
           "llm.output_messages.0.message.content": answer}  # fmt: skip
    return [
        _span(trace, base, None, "RunnableSequence", start, start + 900 * MS, {
            "openinference.span.kind": "CHAIN", "input.value": question, "output.value": answer,
            "metadata": json.dumps({"user": f"u{rng.randrange(1000)}"})}),
        _span(trace, base + 1, base, "OpenAIEmbeddings", start + MS, start + 40 * MS,
              {"openinference.span.kind": "EMBEDDING", "embedding.model_name": "text-embedding-3-small"}),
        _span(trace, base + 2, base, "VectorStoreRetriever", start + 41 * MS, start + 90 * MS,
              {"openinference.span.kind": "RETRIEVER", "input.value": question, **docs}),
        _span(trace, base + 3, base, "ChatPromptTemplate", start + 91 * MS, start + 92 * MS,
              {"openinference.span.kind": "PROMPT", "input.value": question}),
        _span(trace, base + 4, base, "ChatOpenAI", start + 93 * MS, start + 890 * MS, llm),
    ]  # fmt: skip


def _lines(traces: int, seed: int) -> Iterator[str]:
    rng = random.Random(seed)
    batch: list[dict[str, Any]] = []
    for n in range(traces):
        batch += trace_spans(rng, n)
        while len(batch) >= SPANS_PER_LINE:
            yield _request(batch[:SPANS_PER_LINE])
            batch = batch[SPANS_PER_LINE:]
    if batch:
        yield _request(batch)


def _request(spans: list[dict[str, Any]]) -> str:
    scope = {"scope": {"name": "openinference.instrumentation.langchain", "version": "0.1.80"}, "spans": spans}
    resource_ = {"attributes": [_attr("service.name", "support-bot")]}
    return json.dumps({"resourceSpans": [{"resource": resource_, "scopeSpans": [scope]}]})


def write_traces(path: Path, traces: int, seed: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        for line in _lines(traces, seed):
            out.write(line + "\n")


def _child_import(source: str, out: str) -> None:
    """Import in this (fresh) process and print the figures as JSON."""
    from assay.pipelines.transfer.traces import import_traces, write_traces_run

    wall, cpu = time.perf_counter(), time.process_time()
    result = import_traces(source)
    written = write_traces_run(result, out)
    figures = {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu, "lines": written,
               "spans": result.spans, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}  # fmt: skip
    print(json.dumps(figures))


def bench_traces(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="assay-traffic-") as tmp:
        source, out = Path(tmp) / "traces.jsonl", Path(tmp) / "run.jsonl"
        began = time.perf_counter()
        write_traces(source, args.traces, args.seed)
        made = time.perf_counter() - began
        child = subprocess.run([sys.executable, __file__, "--child-import", str(source), str(out)],
                               capture_output=True, text=True, check=True)  # fmt: skip
        got = json.loads(child.stdout.strip().splitlines()[-1])
        size, run_size = source.stat().st_size / 2**20, out.stat().st_size / 2**20
    print(f"traces: {args.traces:,} traces, {got['spans']:,} spans, {DOCUMENTS} documents each "
          f"({size:.1f} MB of OTLP JSON lines, written in {made:.1f} s)")  # fmt: skip
    print(f"  import: {got['wall']:.2f} s wall, {got['cpu']:.2f} s CPU, {args.traces / got['wall']:,.0f} traces/s; "
          f"{got['lines']:,} run lines ({run_size:.1f} MB); peak resident memory {got['peak_mb']:.0f} MB")  # fmt: skip
    print(f"  target: under 20 s for 10,000 traces ({'met' if got['wall'] < 20 * args.traces / 10_000 else 'MISSED'}"
          " at this size, scaled linearly)")  # fmt: skip


PARTS: dict[str, Callable[[argparse.Namespace], None]] = {"traces": bench_traces}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=sorted(PARTS), action="append", help="Part to run (repeatable; default all).")
    parser.add_argument("--traces", type=int, default=10_000, help="Traces to import (traces part).")
    parser.add_argument("--seed", type=int, default=0, help="Seed of the synthetic data.")
    parser.add_argument("--child-import", nargs=2, metavar=("SOURCE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_import:
        _child_import(*args.child_import)
        return
    for part in args.part or sorted(PARTS):
        PARTS[part](args)


if __name__ == "__main__":
    main()
