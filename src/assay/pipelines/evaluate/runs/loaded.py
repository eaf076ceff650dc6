"""The records of a run read and checked against a golden set: :class:`LoadedRun` with its :class:`RunLine` per
query and the :class:`SystemTrace` of the system that answered."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from assay.formats.golden import GoldenSet
from assay.formats.jsonl import JsonlHeader
from assay.pipelines.evaluate.runs.locate import Located
from assay.pipelines.evaluate.runs.sources import RawLine, RunKind
from assay.results import RunCounts
from assay.types import LlmStep, RunError, ToolStep

__all__ = [
    "EMPTY_ANSWER",
    "NO_ANSWERS",
    "NO_PASSAGES",
    "LineStep",
    "LoadedRun",
    "RunLine",
    "Search",
    "SystemTrace",
    "length_summary",
]

# why a measure of a run's line is unscored, from the run itself (the system's failure is runs.read.FAILED)
NO_PASSAGES = "no passages in this run"  # an answer-only run: ranking, budget and passage measures
EMPTY_ANSWER = "empty answer"  # the measures about what an answer says, for an empty one (recall-type ones score 0)
NO_ANSWERS = "no answers in this run"  # a retrieval-only run: every answer measure


@dataclass(frozen=True)
class Search:
    """A retrieval step of a line, resolved: the query the system sent, its passages as units in the order the step
    returned them (duplicates removed; their :class:`Located` in :attr:`RunLine.step_found`), and whether it was a
    reranker's output."""

    query: str | None
    units: tuple[str, ...]
    rerank: bool = False
    latency_ms: float | None = None


LineStep = Search | ToolStep | LlmStep


@dataclass
class RunLine:
    """One query of a run: unit ids in rank order (duplicates removed), their scores, texts and where they were
    found, the answer and citations; ``error`` when the system failed on the question."""

    query_id: str
    ranked: list[str]
    scores: dict[str, float]
    texts: dict[str, str] = field(default_factory=dict)
    answer: str | None = None
    citations: list[str] = field(default_factory=list)
    located: dict[str, Located] = field(default_factory=dict)
    error: RunError | None = None
    rewrite: str | None = None  # a conversation turn: the system's own standalone rewrite of it
    steps: list[LineStep] = field(default_factory=list)  # a system that searches several times: what it did
    step_found: dict[str, Located] = field(default_factory=dict)  # the passages of its searches, by unit

    @property
    def given_answer(self) -> str | None:
        """The answer, when the system gave one: it did not fail and the answer is not empty or only whitespace."""
        if self.error is not None or not self.answer or not self.answer.strip():
            return None
        return self.answer

    def found(self, unit: str) -> Located | None:
        """Where ``unit`` was found: a passage of the context, else of a search."""
        return self.located.get(unit) or self.step_found.get(unit)

    def searched(self, depth: int) -> list[str]:
        """The units of the context's top ``depth``, then those of each search's top ``depth`` not already named:
        every passage the system was shown that the labels must grade."""
        units = dict.fromkeys(self.top(depth))
        for step in self.steps:
            if isinstance(step, Search):
                units.update(dict.fromkeys(step.units[:depth]))
        return list(units)

    def top(self, k: int) -> list[str]:
        """The first ``k`` unit ids."""
        return self.ranked[:k]

    def text(self, unit: str, gold: GoldenSet) -> str | None:
        """The text of ``unit``: a golden chunk's, else the run's own for a passage (None when it gave none)."""
        if gold.has_chunk(unit):
            return gold.chunk(unit).text
        found = self.step_found.get(unit)
        return self.texts.get(unit, found.text if found is not None else None)


@dataclass
class SystemTrace:
    """What every line of a run says of the system that answered (``assay run`` writes it): latency of the answered
    lines, failure kinds, token and cost usage, and the steps of a system that searches several times."""

    latencies: list[float] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)
    usages: list[dict[str, float]] = field(default_factory=list)
    steps: list[Counter[str]] = field(default_factory=list)  # per line that reports steps: how many of each kind

    def add(self, raw: RawLine) -> None:
        if raw.error is not None:
            self.failures[raw.error.kind] += 1
        elif raw.latency_ms is not None:
            self.latencies.append(raw.latency_ms)
        if raw.usage is not None:
            self.usages.append(raw.usage)
        if raw.steps:
            self.steps.append(Counter(step.kind for step in raw.steps))


@dataclass
class LoadedRun:
    """A run read and checked against a golden set: its lines by known query id, its counts and notes."""

    name: str
    path: Path
    kind: RunKind
    lines: dict[str, RunLine]
    counts: RunCounts
    notes: list[str] = field(default_factory=list)
    header: JsonlHeader | None = None  # a JSONL run's header (``assay run`` records its target, label and times)
    trace: SystemTrace = field(default_factory=SystemTrace)
    repeat_of: str | None = None  # one asking of a repeated run: the run's own name (this one is NAME#r)
    repeat: int | None = None
    context: dict[str, RunLine] = field(default_factory=dict)  # lines of context turns: answer and error only

    @property
    def answers_given(self) -> bool:
        """:attr:`~assay.results.RunCounts.answers_given` (else the run is retrieval-only)."""
        return self.counts.answers_given

    @property
    def passage_free(self) -> bool:
        """:attr:`~assay.results.RunCounts.passage_free`: an answer-only run."""
        return self.counts.passage_free

    def length_summary(self) -> dict[str, float]:
        """Length in characters of the retrieved passages (each once per query): :func:`length_summary` of them."""
        return length_summary([len(text) for line in self.lines.values() for text in line.texts.values()])


def length_summary(sizes: Sequence[int]) -> dict[str, float]:
    """Count, min, quartiles, max and mean of ``sizes`` (lengths in characters); empty without sizes."""
    if not sizes:
        return {}
    one = [float(sizes[0])] * 3
    q1, median, q3 = statistics.quantiles(sizes, n=4, method="inclusive") if len(sizes) > 1 else one
    return {"count": len(sizes), "min": min(sizes), "p25": round(q1, 1), "median": round(median, 1),
            "p75": round(q3, 1), "max": max(sizes), "mean": round(statistics.fmean(sizes), 1)}  # fmt: skip
