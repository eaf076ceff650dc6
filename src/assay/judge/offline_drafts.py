"""The offline judge's drafts: ``reference_draft``, a reference answer to a user's question from its graded
passages, and ``tool_calls``, the reference tool calls of a question.

The rule: every sentence of the passages is scored by how many of the question's stemmed content terms it holds
(ties: passage order, then sentence order); the answer is the best sentence, plus the second best when it comes
from another passage and holds at least half as many question terms. Evidence quotes the chosen sentences verbatim,
claims are those sentences, and the nuggets are the same sentences (vital when they hold a number or a name, the
first always vital). A question none of whose terms occur gets the best passage's first sentence. A baseline, and its
reason says so.

Tool calls: one call of an arithmetic tool (a tool whose name or description speaks of calculating, arithmetic, maths
or an expression, with one required argument) when the question asks for a difference ("how many more", "how much
older", "the difference in"; "the difference between A and B" asks what sets them apart) or a total ("in total",
"combined", "altogether", "sum"), over the first two distinct numbers of the passages that are not part of a name (a
number right after a capitalised word, "Skerry 2", is a model's): ``larger - smaller`` for a difference, ``a + b``
for a total, as the text of the required argument.
Any other question needs no call. A baseline: it cannot tell which two numbers a question is about.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from assay.judge.offline_lexical import BASELINE, name_terms, number_set, stem_terms
from assay.judge.offline_questions import Source, locate
from assay.judge.outputs import DraftedCall, DraftedReference, DraftedToolCalls, EvidenceQuote, NuggetItem
from assay.text import sentences

__all__ = ["draft_reference", "draft_tool_calls"]

_DIFFERENCE = re.compile(r"\b(?:how (?:many|much) (?:more|less|fewer|longer|shorter|older|younger|heavier|lighter|"
                         r"larger|smaller|bigger|later|earlier)|difference in)\b", re.IGNORECASE)  # fmt: skip
_TOTAL = re.compile(r"\b(?:in total|combined|altogether|sum)\b", re.IGNORECASE)
_ARITHMETIC = re.compile(r"calculat|arithmetic|math|expression", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.]*\d)")
_NAMED = re.compile(r"\b[A-Z][\w-]*\s+$")  # a capitalised word right before a number: the number is a model's


def _scored(question: str, sources: list[Source]) -> list[tuple[int, int, int, Source, str]]:
    asked = set(stem_terms(question))
    out = []
    for p, source in enumerate(sources):
        for s, sentence in enumerate(sentences(source.text)):
            out.append((-len(asked & set(stem_terms(sentence))), p, s, source, sentence))
    return sorted(out, key=lambda row: row[:3])


def draft_reference(question: str, sources: list[Source]) -> DraftedReference:
    """The drafted answer, evidence, claims and nuggets (see the module docstring)."""
    ranked = _scored(question, sources)
    if not ranked:
        return DraftedReference(reason=f"{BASELINE}: no passage text", answer="", evidence=[], claims=[], nuggets=[])
    best = ranked[0]
    picks = [best]
    second = next((row for row in ranked[1:] if row[3].id != best[3].id), None)
    if second is not None and best[0] < 0 and second[0] * 2 <= best[0]:
        picks.append(second)
    chosen = [(row[3], row[4].strip()) for row in picks]
    nuggets = [
        NuggetItem(text=text, importance="vital" if i == 0 or number_set(text) or name_terms(text) else "okay")
        for i, (_, text) in enumerate(chosen)
    ]
    return DraftedReference(
        reason=f"{BASELINE}: the sentences sharing most terms with the question ({-best[0]} terms)",
        answer=" ".join(text for _, text in chosen),
        evidence=[EvidenceQuote(passage_id=src.id, quote=locate(text, src.text)) for src, text in chosen],
        claims=[text for _, text in chosen],
        nuggets=nuggets,
    )


def draft_tool_calls(question: str, passages: Sequence[str], tools: Sequence[Mapping[str, Any]]) -> DraftedToolCalls:
    """The offline rule of the module docstring."""
    tool = next((t for t in tools if _arithmetic(t)), None)
    difference, total = _DIFFERENCE.search(question), _TOTAL.search(question)
    numbers = list(dict.fromkeys(float(m.group(0)) for text in passages for m in _NUMBER.finditer(text)
                                 if not _NAMED.search(text[: m.start()])))[:2]  # fmt: skip
    if tool is None or not (difference or total) or len(numbers) < 2:
        why = "no arithmetic tool" if tool is None else "no difference or total asked over two numbers"
        return DraftedToolCalls(reason=f"{BASELINE}: {why}, so no call.", calls=[])
    a, b = numbers
    expression = f"{_shown(max(a, b))} - {_shown(min(a, b))}" if difference else f"{_shown(a)} + {_shown(b)}"
    argument = tool["parameters"]["required"][0]
    call = DraftedCall(name=str(tool["name"]), arguments=json.dumps({argument: expression}))
    return DraftedToolCalls(reason=f"{BASELINE}: the question asks for a {'difference' if difference else 'total'} of "
                                   "the passages' first two numbers.", calls=[call])  # fmt: skip


def _arithmetic(tool: Mapping[str, Any]) -> bool:
    parameters = tool.get("parameters") or {}
    required = parameters.get("required") if isinstance(parameters, Mapping) else None
    words = f"{tool.get('name', '')} {tool.get('description', '')}"
    return isinstance(required, list) and len(required) == 1 and _ARITHMETIC.search(words) is not None


def _shown(value: float) -> str:
    return str(int(value)) if value.is_integer() else str(value)
