"""The on-disk contract: pydantic records for everything assay reads and writes.

Each JSONL file of a golden set starts with a header line ``{"assay": KIND, "version": N}`` (see
:mod:`assay.formats.jsonl`); the records below are the lines after it. Fields are only ever added with defaults, so
every older file keeps loading; a change that cannot be made that way bumps :data:`FORMAT_VERSION` and comes with a
migration and a fixture of the old version.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "FORMAT_VERSION",
    "STEP_KINDS",
    "Chunk",
    "Claim",
    "Conversation",
    "Dependency",
    "Document",
    "Importance",
    "LabelEvent",
    "LabelSource",
    "LlmStep",
    "Manifest",
    "Nugget",
    "NuggetSupport",
    "Passage",
    "PassageMatch",
    "Provenance",
    "Question",
    "QuestionType",
    "RelevanceLabel",
    "RetrievalStep",
    "RetrievedItem",
    "RunError",
    "RunItem",
    "StageUsage",
    "Step",
    "ToolCall",
    "ToolStep",
    "Turn",
    "Unscored",
    "Vote",
    "turn_id",
    "utc_now",
]

FORMAT_VERSION = 1

LabelSource = Literal["generator", "judge", "human", "imported"]
Importance = Literal["vital", "okay"]
QuestionType = Literal[
    "factoid",
    "explanatory",
    "procedural",
    "numeric",
    "conditional",
    "multi-hop",
    "comparison",
    "unanswerable",
]


def utc_now() -> datetime:
    """The current time in UTC, to the second (labels do not need more and it keeps files diffable)."""
    return datetime.now(UTC).replace(microsecond=0)


class _Record(BaseModel):
    # Unknown fields are kept, not dropped: a newer assay may have written them and an older one must not lose them.
    model_config = ConfigDict(extra="allow", frozen=False)


class Provenance(_Record):
    """Where a label came from: who made it, with which model and prompt, why, and when."""

    source: LabelSource
    model: str | None = None
    prompt: str | None = None  # "name@version"
    prompt_hash: str | None = None
    rationale: str | None = None
    annotator: str | None = None
    time: datetime = Field(default_factory=utc_now)


class Document(_Record):
    """One source document. ``id`` comes from its relative path or the id the user gave."""

    id: str
    source: str  # relative path (or "file.jsonl:LINE") it was read from
    title: str | None = None
    text: str
    content_hash: str
    metadata: dict[str, Any] = Field(default_factory=dict)


class Chunk(_Record):
    """A passage of a document; ``id`` is derived from the document id, the ordinal and a hash of the text."""

    id: str
    doc_id: str
    ordinal: int
    text: str
    heading_path: list[str] = Field(default_factory=list)
    start: int | None = None  # character offsets into Document.text, when the chunk came from assay's chunker
    end: int | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class Claim(_Record):
    """An atomic statement of a reference answer; ``supported_by`` lists chunk ids that support it."""

    id: str
    text: str
    supported_by: list[str] = Field(default_factory=list)


class Nugget(_Record):
    """An atomic fact a good answer must contain (TREC RAG AutoNuggetizer), vital or okay."""

    id: str
    text: str
    importance: Importance = "vital"
    supported_by: list[str] = Field(default_factory=list)


class NuggetSupport(_Record):
    """One line of ``nuggets.jsonl``: which chunks support one nugget of one question (AutoNuggetizer's
    support / partial support), i.e. the required chunk sets for coverage recall."""

    query_id: str
    nugget_id: str
    chunk_ids: list[str] = Field(default_factory=list)  # chunks that fully support the nugget
    partial_chunk_ids: list[str] = Field(default_factory=list)  # chunks that support it in part
    provenance: Provenance | None = None


class ToolCall(_Record):
    """A reference tool call of a golden question: a tool's name and its arguments (a JSON object), and who wrote
    it (``provenance``: a person, an import, or the generator)."""

    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    provenance: Provenance | None = None


class Question(_Record):
    """A golden question with its reference answer, claims and nuggets, and where it came from."""

    id: str
    text: str
    type: str = "factoid"
    difficulty: str | None = None
    reference_answer: str | None = None
    source_doc_ids: list[str] = Field(default_factory=list)
    source_chunk_ids: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    # a multi-hop or comparison question: its evidence chunks in the order a system must find them (written only
    # when there are some, so other lines are as they always were)
    hops: list[str] = Field(default_factory=list, exclude_if=lambda hops: not hops)
    # the tool calls a system should make for it, in order (a system that calls tools; written only when there are
    # some)
    tool_calls: list[ToolCall] = Field(default_factory=list, exclude_if=lambda calls: not calls)
    claims: list[Claim] = Field(default_factory=list)
    nuggets: list[Nugget] = Field(default_factory=list)
    flags: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)
    provenance: Provenance | None = None


Dependency = Literal["none", "pronoun", "ellipsis", "comparison", "topic_shift", "unanswerable"]


class Turn(_Record):
    """One user turn of a conversation (TREC CAsT's convention): ``utterance`` is the turn as a user would type it,
    which may lean on the history ("and for international orders?"); its question ``question_id`` in
    ``questions.jsonl`` holds the **standalone rewrite** as its text, with the reference answer, claims and nuggets,
    and the relevance labels are for that rewrite. ``depends_on_history``: whether the utterance needs earlier turns
    to be understood; ``dependency`` says how (a pronoun, an ellipsis, a comparison with an earlier answer, a topic
    shift, or a turn the documents cannot answer; ``none`` for a standalone turn). ``rewrite_provenance``: who wrote
    the rewrite (the generator, or a person who corrected it in ``assay audit``).

    A **context turn** (``judged`` False; TREC CAsT's unjudged turns) is part of the conversation's history but no
    test item: ``question_id`` is then the turn's query id (``{conversation}-t{n}``), which names no question of
    ``questions.jsonl``; it is never pooled, graded or scored; the turn carries its own standalone ``rewrite`` and
    reference ``answer`` (the history of later turns), and ``dropped`` says why it is no test item (the build filter
    that set it aside: ``leakage``, ``near_duplicate``). The three fields are written only for a context turn, so a
    judged turn's line is as it always was."""

    question_id: str
    utterance: str
    depends_on_history: bool = False
    dependency: Dependency = "none"
    rewrite_provenance: Provenance | None = None
    judged: bool = Field(default=True, exclude_if=lambda judged: judged is True)
    rewrite: str | None = Field(default=None, exclude_if=lambda rewrite: rewrite is None)
    answer: str | None = Field(default=None, exclude_if=lambda answer: answer is None)
    dropped: str | None = Field(default=None, exclude_if=lambda dropped: dropped is None)


def turn_id(conversation_id: str, n: int) -> str:
    """The query id of turn ``n`` (from 1) of a conversation, ``{conversation}-t{n}``: its question's id when assay
    made the conversation, and a context turn's id (:class:`Turn`). Nothing parses it back: a turn's conversation and
    number are read from its records, never from its id."""
    return f"{conversation_id}-t{n}"


class Conversation(_Record):
    """A multi-turn dialogue of a golden set (``conversations.jsonl``): its turns in order, each a question of the
    golden set or a context turn (module :mod:`assay.types` ``Turn``), at least one of them judged; ``scenario``
    says what the user is after, ``source_doc_ids`` the documents it is grounded in. Earlier turns' reference answers
    (a context turn's own ``answer``) are the conversation's reference history."""

    id: str
    turns: list[Turn] = Field(default_factory=list)
    scenario: str | None = None
    source_doc_ids: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)


class Unscored(_Record):
    """A judgement that could not be produced. Counted in every report, never averaged in as 0."""

    reason: str
    kind: str = "invalid_output"  # invalid_output | backend_error | budget | refused | ...
    raw: str | None = None


class Vote(_Record):
    """One judge's grade of a pair that a panel of judges graded (:mod:`assay.judge.panel`); ``grade`` is None when
    that judge could not score it (``unscored`` says why)."""

    model: str
    grade: int | None
    prompt: str | None = None
    rationale: str | None = None
    unscored: Unscored | None = None


class RelevanceLabel(_Record):
    """A graded relevance label for a (question, chunk) pair; ``grade`` is None when the judge could not score it.

    ``votes``: set only on a label a panel of judges combined, each judge's own grade (written to the file only
    then, so the labels of one judge stay as they were).

    ``quotes``: the sentences of the passage that bear on the question, word for word, as the judge (or a person)
    marked them on a label graded 1 or more; they say *which characters* are relevant (a character's grade is the
    highest grade of a quote covering it). None (or empty): the label says nothing finer than its whole text.
    ``quotes_dropped``: quotes the judge gave that are not in the passage (paraphrases), dropped and counted.
    """

    query_id: str
    chunk_id: str
    grade: int | None
    provenance: Provenance
    unscored: Unscored | None = None
    votes: list[Vote] | None = Field(default=None, exclude_if=lambda votes: votes is None)
    quotes: list[str] | None = Field(default=None, exclude_if=lambda quotes: not quotes)
    quotes_dropped: int = Field(default=0, exclude_if=lambda n: not n)

    @field_validator("grade")
    @classmethod
    def _grade_in_scale(cls, grade: int | None) -> int | None:
        if grade is not None and not -1 <= grade <= 3:
            raise ValueError(f"grade {grade} is outside the 0-3 scale (-1 is allowed for junk)")
        return grade


class RetrievedItem(_Record):
    """One retrieved passage in a run, in any of these forms (mixed forms in one run are fine):

    * ``{"id": "c1"}`` (or the bare string ``"c1"``): a chunk of the golden set, optionally with ``score`` and
      ``text`` (an id the golden set does not know is located by its text);
    * ``{"text": "..."}``: a passage known only by its text, located in the golden documents;
    * ``{"doc_id": "d1", "start": 10, "end": 200}``: character offsets into a golden document's text (``text``
      optional).
    """

    id: str | None = None
    score: float | None = None
    text: str | None = None
    doc_id: str | None = None
    start: int | None = None
    end: int | None = None


class RunError(_Record):
    """Why the system under test gave no output for a question (written by ``assay run``): the query is counted as
    failed: it scores 0 on the recall-type answer measures (the system gave nothing) and every other metric of it
    is unscored."""

    kind: str
    message: str = ""


def _ids_as_objects(value: Any) -> Any:
    """A retrieved list may name chunks by bare id: ``"c1"`` is ``{"id": "c1"}``."""
    if isinstance(value, list):
        return [{"id": v} if isinstance(v, str) else v for v in value]
    return value


class RetrievalStep(_Record):
    """A search of a system that searches several times: the query it sent and the passages it got back, in any form
    ``retrieved`` takes (``rerank``: a reranker's output rather than a search's)."""

    kind: Literal["retrieval"]
    query: str | None = None
    retrieved: list[RetrievedItem] = Field(default_factory=list)
    rerank: bool = False
    latency_ms: float | None = None

    @field_validator("retrieved", mode="before")
    @classmethod
    def _ids_or_objects(cls, value: Any) -> Any:
        return _ids_as_objects(value)


class ToolStep(_Record):
    """A tool call: its name, its arguments (a JSON object; a string holding one is read), its output or error."""

    kind: Literal["tool"]
    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    output: str | None = None
    error: str | None = None
    latency_ms: float | None = None

    @field_validator("arguments", mode="before")
    @classmethod
    def _json_arguments(cls, value: Any) -> Any:
        if value is None:
            return {}
        if isinstance(value, str):
            try:
                return json.loads(value) if value.strip() else {}
            except json.JSONDecodeError:
                raise ValueError(f"arguments {value[:60]!r} are not JSON: give a JSON object") from None
        return value

    @field_validator("output", mode="before")
    @classmethod
    def _text_output(cls, value: Any) -> Any:
        return value if value is None or isinstance(value, str) else json.dumps(value, sort_keys=True)


class LlmStep(_Record):
    """A model call inside the system: the model, its tokens and latency."""

    kind: Literal["llm"]
    model: str | None = None
    prompt_tokens: int | None = Field(default=None, ge=0)
    completion_tokens: int | None = Field(default=None, ge=0)
    latency_ms: float | None = None


Step = Annotated[RetrievalStep | ToolStep | LlmStep, Field(discriminator="kind")]
STEP_KINDS = ("retrieval", "tool", "llm")


class RunItem(_Record):
    """One line of a run: a query, what the system retrieved (ranked), and optionally its answer and citations.

    ``latency_ms``, ``usage`` (prompt_tokens, completion_tokens, cost_usd) and ``error`` are written by ``assay run``.
    ``repeat`` numbers the asking (0, 1, ..., N - 1) when the system was asked every question N times
    (``assay run --repeats N``): such a run has exactly one line per question and repeat. A turn of a conversation
    names it: ``conversation_id`` and ``turn`` (its index, from 0), and ``rewrite``, the system's own standalone
    rewrite of the turn when it reports one. ``steps``: what a system that searches several times did, in order
    (:class:`RetrievalStep`, :class:`ToolStep`, :class:`LlmStep`), or ``messages``, the system's chat messages with
    its tool calls, from which the steps (and the answer and context when the line has none) are read by
    :mod:`assay.formats.messages`; ``retrieved`` stays the context the answer was written from.
    """

    query_id: str
    retrieved: list[RetrievedItem] = Field(default_factory=list)
    answer: str | None = None
    citations: list[str] = Field(default_factory=list)
    latency_ms: float | None = None
    usage: dict[str, float] | None = None
    error: RunError | None = None
    repeat: int | None = Field(default=None, ge=0)
    conversation_id: str | None = None
    turn: int | None = Field(default=None, ge=0)
    rewrite: str | None = None
    steps: list[Step] = Field(default_factory=list)
    messages: list[Any] | None = None  # an agent's chat messages, read into steps (assay.formats.messages)

    @field_validator("retrieved", mode="before")
    @classmethod
    def _ids_or_objects(cls, value: Any) -> Any:
        return _ids_as_objects(value)


PassageMatch = Literal["id", "offsets", "exact", "approximate", "unmatched"]


class Passage(_Record):
    """A retrieved passage that is not a golden chunk, located in a golden document (or not), with the labels it
    was given for questions (``passages.jsonl``): a judged passage is reused by later evaluations at no cost.

    ``id`` is ``p:{doc_id}:{start}-{end}`` for an aligned passage and ``t:{hash}`` of the normalized text for one
    that could not be aligned; ``score`` is the share of the passage's words found in order in the span (1.0 for
    exact and offset matches).
    """

    id: str
    text: str
    match: PassageMatch
    doc_id: str | None = None
    start: int | None = None
    end: int | None = None
    score: float = 0.0
    labels: list[RelevanceLabel] = Field(default_factory=list)


class LabelEvent(_Record):
    """An append-only event in the audit label store; the current label is a fold over an item's events.

    ``quotes``: the sentences of the item's text the label says bear on the question (as
    :attr:`RelevanceLabel.quotes`); None: the label says nothing finer than its grade of the whole text."""

    query_id: str
    chunk_id: str
    grade: int | None
    reason: str | None = None
    source: LabelSource
    annotator: str | None = None
    prompt: str | None = None
    time: datetime = Field(default_factory=utc_now)
    quotes: list[str] | None = None


class StageUsage(_Record):
    """Calls, tokens and money spent by one stage; ``cost_usd`` is None when a model has no known price."""

    calls: int = 0
    cached: int = 0
    unscored: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0

    def plus(self, other: StageUsage) -> StageUsage:
        """Both stages' spending together; the cost is None when either has no price."""
        cost = None if self.cost_usd is None or other.cost_usd is None else self.cost_usd + other.cost_usd
        return self.model_copy(update={
            "calls": self.calls + other.calls, "cached": self.cached + other.cached,
            "unscored": self.unscored + other.unscored, "prompt_tokens": self.prompt_tokens + other.prompt_tokens,
            "completion_tokens": self.completion_tokens + other.completion_tokens, "cost_usd": cost,
        })  # fmt: skip

    def minus(self, before: StageUsage) -> StageUsage:
        """What was spent since ``before`` (the same stage read earlier); the cost is None when this one has no
        price, and an earlier unknown price counts as nothing spent then."""
        return StageUsage(
            calls=self.calls - before.calls, cached=self.cached - before.cached,
            unscored=self.unscored - before.unscored, prompt_tokens=self.prompt_tokens - before.prompt_tokens,
            completion_tokens=self.completion_tokens - before.completion_tokens,
            cost_usd=None if self.cost_usd is None else self.cost_usd - (before.cost_usd or 0.0),
        )  # fmt: skip


class Manifest(_Record):
    """``manifest.json`` of a golden set."""

    format_version: int = FORMAT_VERSION
    assay_version: str
    created: datetime = Field(default_factory=utc_now)
    corpus_hash: str | None = None
    models: dict[str, str] = Field(default_factory=dict)  # role -> model
    prompts: dict[str, str] = Field(default_factory=dict)  # "name@version" -> content hash
    seeds: dict[str, int] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)
    counts: dict[str, int] = Field(default_factory=dict)
    usage: dict[str, StageUsage] = Field(default_factory=dict)
