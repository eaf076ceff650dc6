"""A trajectory for the evaluator's and the report's tests: the passages fixture's golden set with a comparison
question of two hops (q4: the Brackenhow tent's weight, tent#1, and the express shipping cost, shipping#2, both
graded 3), an agent's line that searched three times (the second search found nothing relevant, the third a fragment
of the express paragraph), called a tool and answered from the express paragraph alone, and a single search's line.
"""

from __future__ import annotations

from typing import Any

from passages_fixture import TIME, make_passages_golden

from assay.formats.golden import GoldenSet
from assay.types import Provenance, Question, RelevanceLabel

# letters and digits: "The Brackenhow 4 tent weighs 3.2 kg and sleeps four people." = 47;
# "Express shipping costs $12 and arrives the next day." = 42; the fragment "Express shipping costs $12" = 22
TENT, EXPRESS, FRAGMENT = 47, 42, 22
N = TENT + EXPRESS


def trajectory_golden() -> GoldenSet:
    gold = make_passages_golden()
    question = Question(id="q4", text="How heavy is the Brackenhow 4 tent, and what does express shipping cost?",
                        type="comparison", hops=["tent#1", "shipping#2"])  # fmt: skip
    labels = [
        RelevanceLabel(query_id="q4", chunk_id=cid, grade=3, provenance=Provenance(source="judge", time=TIME))
        for cid in ("tent#1", "shipping#2")
    ]
    return GoldenSet(gold.manifest, gold.documents, gold.chunks, [*gold.questions, question], [*gold.qrels, *labels],
                     [])  # fmt: skip


def search(query: str, *retrieved: Any) -> dict[str, Any]:
    return {"kind": "retrieval", "query": query, "retrieved": list(retrieved)}


AGENT = [{
    "query_id": "q4",
    "retrieved": ["shipping#2"],
    "steps": [
        search("Brackenhow tent weight", "tent#1", "tent#2"),
        search("express shipping cost", "shipping#1"),
        search("express shipping price", {"text": "Express shipping costs $12"}),
        {"kind": "llm", "prompt_tokens": 100, "completion_tokens": 20},
        {"kind": "tool", "name": "calculator", "arguments": {"expression": "3.2 * 2"}},
        {"kind": "llm", "prompt_tokens": 150, "completion_tokens": 30},
    ],
}]  # fmt: skip
SINGLE = [{"query_id": "q4", "retrieved": ["tent#1", "tent#2", "returns#1"]}]
