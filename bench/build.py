"""Benchmark of ``assay build``: calls and prompt tokens per accepted question and per chunk, against a RAGAS shape.

A corpus of synthetic documents (seeded templates: product sheets with names, prices, weights, dates and policies)
is built through the fake OpenAI-compatible server (in-process, scripted valid answers, no latency) three times:
with the default settings (listwise relevance, 10 pooled chunks per call), pointwise (``--listwise 0``, one call per
pooled chunk) and with ``--listwise 20``. For each it prints the LLM calls and prompt tokens per accepted question
and per chunk, and the wall time.

The RAGAS-style shape is computed on the same corpus: a knowledge graph built with 4 extractor calls per chunk
(summary, headlines, keyphrases, entities), each sending the chunk plus a ~150-token instruction, then 1 generation
call per question (its chunk plus a ~300-token instruction), for as many questions as assay accepted. Its calls
per accepted question are ``(4 * chunks + questions) / questions``. Note that it grades no pooled chunk at all:
its golden set has one relevant chunk per question, where assay's has every pooled chunk graded.

Target (issue 4): assay at most a third of the RAGAS shape's calls per accepted question, with default settings
(the script exits 1 when the default misses it).

    python bench/build.py            # 1,000 documents, 1 question per document
    python bench/build.py --quick    # 100 documents
"""

from __future__ import annotations

import argparse
import html
import json
import random
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from assay.judge import make_judge
from assay.judge.limits import RetryPolicy
from assay.pipelines.bootstrap import BuildSettings, build_golden
from assay.testing import FakeOpenAIServer
from assay.text import count_tokens, numbers, sentences, terms

_PASSAGE = re.compile(r'<passage-\w+ id="([^"]+)"[^>]*>\n(.*?)\n</passage-\w+>', re.DOTALL)
_SINGLE = re.compile(r"<passage-\w+>\n(.*?)\n</passage-\w+>", re.DOTALL)
_QUESTION = re.compile(r"<question-\w+>\n(.*?)\n</question-\w+>", re.DOTALL)
NAMES = (
    "Alder Birch Cedar Dunlin Eider Fulmar Gannet Heron Ibis Jay Kestrel Linnet Merlin Nuthatch Osprey Plover".split()
)
THINGS = "tent stove backpack jacket lantern sleeping-bag headlamp trekking-pole water-filter bivvy".split()
CITIES = "Elderfield Marrow Ashcombe Pellham Dunmore Kestrel Harlow Brindle Quarry Selby".split()
EXTRACTOR_INSTRUCTION, QUESTION_INSTRUCTION = 150, 300
DEFAULT = "assay default (lw 10)"


def document(i: int, rng: random.Random) -> str:
    """A product sheet of about 900 words: overview, specifications, care, warranty, rental, history, FAQ."""
    name = f"{rng.choice(NAMES)} {rng.choice(NAMES)} {i}"
    thing = rng.choice(THINGS)
    city = rng.choice(CITIES)
    parts = [f"# The {name} {thing}\n"]
    for section in ("Overview", "Specifications", "Care", "Warranty", "Rental", "History", "Questions"):
        parts.append(f"## {section}\n")
        for _ in range(3):
            facts = [
                f"The {name} {thing} weighs {rng.randint(80, 4000)} g and costs ${rng.randint(20, 900)}.",
                f"It was designed in {city} and released on {rng.randint(1, 28)} {rng.choice(['March', 'June', 'October'])} {rng.randint(2015, 2024)}.",  # noqa: E501
                f"Members of tier {rng.choice(['Scout', 'Ranger', 'Summit'])} get {rng.randint(5, 25)}% off {section.lower()} services.",  # noqa: E501
                f"If the {thing} is returned within {rng.randint(14, 90)} days, a refund is paid within {rng.randint(3, 14)} business days.",  # noqa: E501
                f"Staff in {rng.choice(CITIES)} check each {thing} for {rng.randint(2, 30)} minutes before sale.",
            ]
            rng.shuffle(facts)
            parts.append(" ".join(facts) + "\n")
    return "\n".join(parts)


def write_corpus(folder: Path, n: int, seed: int) -> None:
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    for i in range(n):
        (folder / f"doc-{i:04d}.md").write_text(document(i, rng), encoding="utf-8")


def _passages(user: str) -> list[tuple[str, str]]:
    return [(pid, html.unescape(text)) for pid, text in _PASSAGE.findall(user)]


def _grade(question: str, passage: str) -> int:
    """Share of the question's terms in the passage: >= 0.8 -> 3, >= 0.6 -> 2, > 0 -> 1, else 0."""
    wanted = set(terms(question.split(" about ", 1)[-1].split(" (", 1)[0]))
    share = len(wanted & set(terms(passage))) / max(len(wanted), 1)
    return 3 if share >= 0.8 else 2 if share >= 0.6 else 1 if share > 0 else 0


def answer(body: dict[str, Any]) -> str:
    """A valid scripted answer per prompt (schema name), from the passages in the request."""
    schema = body["response_format"]["json_schema"]["name"]
    user = body["messages"][-1]["content"]
    passages = _passages(user)
    if schema == "GeneratedQuestion":
        kind = user.split("Question type: ", 1)[1].split("\n", 1)[0]
        used = passages[:2] if kind in ("multi-hop", "comparison") else passages[:1]
        quotes = [] if kind == "unanswerable" else [(pid, sentences(text)[1]) for pid, text in used]
        sentence = sentences(used[0][1])[1]
        topic = " ".join(terms(sentence)[:3] + numbers(sentence))
        return json.dumps(
            {
                "reason": "scripted",
                "question": f"What does the sheet say about {topic} ({kind})?",
                "answer": " ".join(q for _, q in quotes) or "The documents do not say.",
                "evidence": [{"passage_id": pid, "quote": q} for pid, q in quotes],
                "claims": [q for _, q in quotes],
                "nuggets": [{"text": q, "importance": "vital"} for _, q in quotes],
            }
        )
    if schema == "QuestionCritique":
        return json.dumps({"reason": "scripted", "answerable": 4, "self_contained": 4, "clear": 4})
    found = _QUESTION.search(user)
    question = html.unescape(found.group(1)) if found else ""
    if schema == "RelevanceGrade":
        single = _SINGLE.search(user)
        text = html.unescape(single.group(1)) if single else ""
        return json.dumps({"reason": "scripted", "grade": _grade(question, text)})
    if schema == "ListwiseRelevance":
        items = [{"id": pid, "reason": "scripted", "grade": _grade(question, text)} for pid, text in passages]
        return json.dumps({"judgements": items})
    ids = re.findall(r'<statement-\w+ id="([^"]+)">', user)
    items = [{"statement_id": s, "reason": "s", "support": "support", "passage_ids": [passages[0][0]]} for s in ids]
    return json.dumps({"assignments": items})


def run_build(corpus: Path, settings: BuildSettings) -> dict[str, Any]:
    with FakeOpenAIServer(answer, record=False) as server:
        judge = make_judge(
            "openai/bench", api_base=server.url, api_key="k", concurrency=32, retry=RetryPolicy.immediate()
        )
        start = time.perf_counter()
        golden = build_golden(corpus, judge=judge, settings=settings)
        wall = time.perf_counter() - start
    usage = golden.manifest.usage
    return {
        "wall": wall,
        "chunks": len(golden.chunks),
        "accepted": len(golden.questions),
        "calls": sum(u.calls for u in usage.values()),
        "prompt_tokens": sum(u.prompt_tokens for u in usage.values()),
        "by_stage": {stage: u.calls for stage, u in usage.items()},
        "dropped": {k: v for k, v in golden.manifest.counts.items() if k.startswith("dropped_by") and v},
        "chunk_tokens": [count_tokens(c.text) for c in golden.chunks],
    }


def ragas_shape(chunk_tokens: list[int], questions: int) -> dict[str, float]:
    chunks = len(chunk_tokens)
    calls = 4 * chunks + questions
    mean_chunk = sum(chunk_tokens) / chunks
    tokens = 4 * sum(t + EXTRACTOR_INSTRUCTION for t in chunk_tokens) + questions * (mean_chunk + QUESTION_INSTRUCTION)
    return {"calls": calls, "prompt_tokens": tokens}


def report(name: str, result: dict[str, Any]) -> float:
    q, c = result["accepted"], result["chunks"]
    per_q = result["calls"] / q
    print(
        f"{name:<22} calls {result['calls']:>7}  per accepted question {per_q:6.2f}  per chunk "
        f"{result['calls'] / c:6.2f}  prompt tokens per question {result['prompt_tokens'] / q:8.0f}  "
        f"wall {result['wall']:6.1f} s\n{'':<22} calls by stage {result['by_stage']}, dropped {result['dropped']}"
    )
    return per_q


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="100 documents")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    n = 100 if args.quick else args.docs
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        write_corpus(corpus, n, args.seed)
        results = {
            DEFAULT: run_build(corpus, BuildSettings(per_doc=1, seed=args.seed)),
            "assay pointwise": run_build(corpus, BuildSettings(per_doc=1, seed=args.seed, listwise=None)),
            "assay listwise 20": run_build(corpus, BuildSettings(per_doc=1, seed=args.seed, listwise=20)),
        }
    first = next(iter(results.values()))
    print(f"{n} documents, {first['chunks']} chunks, {first['accepted']} accepted questions of {n} seeds")
    per_question = {name: report(name, result) for name, result in results.items()}
    ragas = ragas_shape(first["chunk_tokens"], first["accepted"])
    ragas_q = ragas["calls"] / first["accepted"]
    print(
        f"{'RAGAS shape (4/chunk+1/q)':<22} calls {ragas['calls']:>7.0f}  per accepted question {ragas_q:6.2f}  "
        f"per chunk {ragas['calls'] / first['chunks']:6.2f}  prompt tokens per question "
        f"{ragas['prompt_tokens'] / first['accepted']:8.0f}"
    )
    for name, value in per_question.items():
        verdict = "meets" if value <= ragas_q / 3 else "misses"
        print(f"{name}: {value / ragas_q:.2f} x the RAGAS shape's calls per accepted question ({verdict} <= 1/3)")
    if per_question[DEFAULT] > ragas_q / 3:
        raise SystemExit(f"{DEFAULT} misses the target: more than 1/3 of the RAGAS shape's calls per question")


if __name__ == "__main__":
    main()
