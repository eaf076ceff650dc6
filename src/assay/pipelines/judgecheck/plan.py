"""The calls of a judge card, planned before any is made (so ``--dry-run`` prices exactly what a run would ask).

A :class:`Batch` is one kind of call: its prompt, the variables of each call, and the items behind each call
(one item per pointwise call; a group in one order per listwise call). The plan is a pure function of the
source's items and :class:`CheckSettings`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.pipelines.judgecheck.probes import (
    INJECTIONS,
    Altered,
    generation_probes,
    groups,
    injected,
    padded,
    rotations,
    stuffed,
)
from assay.pipelines.judgecheck.source import ProbeItem

__all__ = ["Batch", "CheckSettings", "missing", "plan"]

POINTWISE, LISTWISE, GENERATION, CLAIMS = "relevance", "relevance_listwise", "question_generation", "claims"


@dataclass(frozen=True)
class CheckSettings:
    """The size of a card: queries drawn, the seed, repeats, items per probe, listwise groups, generation probes."""

    queries: int = 20
    seed: int = 0
    repeats: int = 2
    per_probe: int = 40
    group_size: int = 4
    groups: int = 8
    generation: int = 10

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class Batch:
    """One kind of call: ``kind`` names it in the card, ``repeat`` > 0 asks again past the cache."""

    kind: str
    prompt: str
    variables: list[dict[str, Any]]
    items: list[list[ProbeItem]] = field(default_factory=list)
    repeat: int = 0


def _pointwise(kind: str, altered: Sequence[Altered], repeat: int = 0) -> Batch:
    variables = [{"question": a.item.question, "passage": a.text} for a in altered]
    return Batch(kind, POINTWISE, variables, [[a.item] for a in altered], repeat)


def _baseline(items: Sequence[ProbeItem], repeat: int = 0) -> Batch:
    kind = f"repeat{repeat}" if repeat else "baseline"
    return _pointwise(kind, [Altered(item, item.text) for item in items], repeat)


def _position(items: Sequence[ProbeItem], settings: CheckSettings) -> Batch:
    batch = Batch("position", LISTWISE, [])
    for group in groups(items, settings.group_size, settings.groups, settings.seed):
        for order in rotations(group):
            passages = [{"id": str(k + 1), "text": item.text} for k, item in enumerate(order)]
            batch.variables.append({"question": order[0].question, "passages": passages})
            batch.items.append(order)
    return batch


def _generation(altered: Sequence[Altered]) -> list[Batch]:
    question = Batch(GENERATION, GENERATION, [], [])
    claims = Batch(CLAIMS, CLAIMS, [], [])
    for a in altered:
        passage = {"id": a.item.chunk_id, "text": a.text}
        variables = {"passages": [passage], "question_type": "factoid", "style": "a natural question"}
        question.variables.append({**variables, "language": "English"})
        claims.variables.append({"question": a.item.question, "text": a.text})
        question.items.append([a.item])
        claims.items.append([a.item])
    return [question, claims]


def plan(items: Sequence[ProbeItem], settings: CheckSettings) -> list[Batch]:
    """Every batch of a card, in the order they run (the baseline first: the other probes compare with it)."""
    relevant = [item for item in items if item.relevant is True][: settings.per_probe]
    irrelevant = [item for item in items if item.relevant is False][: settings.per_probe]
    batches = [_baseline(items)]
    batches += [_baseline(items, r) for r in range(1, settings.repeats + 1)]
    batches.append(_pointwise("length_relevant", padded(relevant, items, settings.seed)))
    batches.append(_pointwise("length_irrelevant", padded(irrelevant, items, settings.seed)))
    batches.append(_pointwise("stuffing", stuffed(irrelevant)))
    batches += [_pointwise(f"injection_{form}", injected(irrelevant, form)) for form in INJECTIONS]
    batches.append(_position(items, settings))
    batches += _generation(generation_probes(irrelevant[: settings.generation]))
    return [batch for batch in batches if batch.variables]


def missing(items: Sequence[ProbeItem], batches: Sequence[Batch]) -> list[str]:
    """Why probes are absent from a plan: no relevant or no irrelevant pair drawn, no question with enough pairs."""
    kinds = {batch.kind for batch in batches}
    out = []
    if "length_relevant" not in kinds:
        out.append("no relevant pair among the drawn pairs: the length probe of relevant passages is not measured")
    if "stuffing" not in kinds:
        out.append(
            "no irrelevant pair (grade 0) among the drawn pairs: length of irrelevant passages, keyword stuffing, "
            "injections and generation are not measured; draw more questions (--queries) or use a pooled golden set"
        )
    if "position" not in kinds:
        out.append("no question has enough pairs for a listwise group: position is not measured (or --groups 0)")
    return out
