"""Settings of ``assay build`` and the shape every build stage returns.

Each stage is ``stage(records, judge, settings, context) -> StageOutput``: records in, records out, with the counts of
that stage (``generated``, ``dropped_by_<filter>``, ``relabelled``, ...). No stage keeps state between calls, so the
stages can later run over batches on Ray Data; the judge cache makes a rerun pay for no call twice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Generic, TypeVar

from assay.errors import ConfigError
from assay.formats.tools import ToolSpec
from assay.types import Question

__all__ = ["BuildSettings", "ProgressFn", "StageOutput", "drop"]

T = TypeVar("T")
# progress(stage, done, total): called with done=0 when a stage starts and after each item.
ProgressFn = Callable[[str, int, int], None]


@dataclass
class StageOutput(Generic[T]):
    """Records a stage passes on, its counts, records it set aside (dropped, with ``flags['dropped']``) and warnings
    for the user (added to the build's)."""

    records: list[T]
    counts: dict[str, int] = field(default_factory=dict)
    dropped: list[T] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def drop(out: StageOutput[Question], question: Question, reason: str, detail: str) -> None:
    """Set ``question`` aside in ``out``: ``flags['dropped']`` = ``reason`` (with ``dropped_detail``), counted in
    ``dropped_by_<reason>``."""
    question.flags["dropped"] = reason
    question.flags["dropped_detail"] = detail
    out.dropped.append(question)
    out.counts[f"dropped_by_{reason}"] += 1


@dataclass(frozen=True)
class BuildSettings:
    """Everything that decides what a build produces (recorded in the manifest).

    Sampling: ``questions`` (total) or ``per_doc``; neither means 2 per document. ``max_per_doc`` caps a document
    (raised to ``ceil(questions / documents)`` when needed). ``mix``: type -> share (None = the default mix).
    Filters: every evidence quote must match its cited chunk with ordered token coverage >= ``quote_match``;
    the critic keeps questions scoring at least ``critic_min`` on answerable, self-contained and clear (unanswerable
    questions: self-contained and clear only); a question sharing a run of ``leakage_words`` or more words with its
    source chunk is dropped (``leakage_flag_words`` only flags it), as is one whose longest shared run covers at
    least ``leakage_ratio`` of its words (when that run is 4 words or more); near-duplicate questions (Jaccard of
    word-bigram sets >= ``duplicate_jaccard``) keep only the first.
    Pooling: BM25 top ``pool_k`` (unless not ``pool_bm25``), the top ``pool_k`` of each of ``pool_runs`` (the
    user's retrievers, ``NAME=RUN_FILE`` or ``NAME=cmd:TEMPLATE``, :mod:`.pool_runs`; a command gets
    ``pool_run_timeout`` seconds a question), ``neighbours`` chunks each side of a source, near-duplicates of sources.
    Relevance: ``listwise`` pooled chunks of a question per call (default 10; None = pointwise, one call per chunk).
    Listwise costs ``ceil(pool / N)`` calls per question instead of ``pool`` (about 2 instead of 20 with the default
    pool) and shares the instruction tokens; each passage is still graded on its own 0-3 scale (not ranked against
    the others), the passages are shuffled with a seeded RNG against position bias, and each label is cached per
    (question, chunk) pair, so it is reused whatever the grouping (another N, another seed, ``assay eval``).
    Pointwise shows the model one passage at a time, the setting closest to a human assessor; it costs N times the
    calls. Support: pooled chunks graded >= ``support_min_grade``, at most ``support_passages`` per call (more are
    batched, best-graded first; a statement with only partial support from chunks in different batches gets one
    follow-up call with those chunks together).
    Conversations (:mod:`.conversations`): ``conversations`` multi-turn conversations besides the questions (0:
    none), each of a number of turns drawn in ``turns`` (low, high); ``questions=0`` builds conversations only.
    Queries (a build from the user's own questions, :mod:`.real_questions`): ``scrub`` masks personal data first.
    Tools (:mod:`.tool_calls`): ``tools``, the tools a system can call (``--tools FILE``), make each answerable
    question's reference tool calls drafted (none: no call asked).
    """

    questions: int | None = None
    per_doc: int | None = None
    max_per_doc: int = 8
    mix: Mapping[str, float] | None = None
    seed: int = 0
    chunk_tokens: int = 512
    overlap: int = 64
    min_chunk_tokens: int = 32
    quote_match: float = 0.85
    critic: bool = True
    critic_min: int = 3
    leakage_words: int = 10
    leakage_flag_words: int = 6
    leakage_ratio: float = 0.8
    duplicate_jaccard: float = 0.7
    pool_k: int = 20
    pool_bm25: bool = True
    pool_runs: tuple[str, ...] = ()
    pool_run_timeout: float = 60.0
    neighbours: int = 1
    near_duplicates: bool = True
    listwise: int | None = 10
    support_min_grade: int = 2
    support_passages: int = 8
    conversations: int = 0
    turns: tuple[int, int] = (2, 4)
    scrub: bool = True
    tools: tuple[ToolSpec, ...] = ()

    def __post_init__(self) -> None:
        if self.questions is not None and self.per_doc is not None:
            raise ConfigError("give --questions or --per-doc, not both")
        if self.questions is not None and self.questions < 0:
            raise ConfigError(f"questions must be at least 0, got {self.questions}")
        if self.conversations < 0:
            raise ConfigError(f"--conversations must be at least 0, got {self.conversations}")
        if not 2 <= self.turns[0] <= self.turns[1] <= 12:
            raise ConfigError(f"--turns must be LOW-HIGH with 2 <= LOW <= HIGH <= 12 (e.g. 2-5), got {self.turns}")
        if self.questions == 0 and not self.conversations:
            raise ConfigError("--questions 0 builds conversations only: give --conversations N too")
        if self.questions == 0 and self.per_doc is not None:
            raise ConfigError("give --questions 0 or --per-doc, not both")
        for name in ("per_doc", "max_per_doc", "support_passages", "leakage_words", "chunk_tokens"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ConfigError(f"{name.replace('_', '-')} must be at least 1, got {value}")
        if self.pool_k < 0 or self.neighbours < 0:
            raise ConfigError(f"pool-k and neighbours must be >= 0, got {self.pool_k} and {self.neighbours}")
        if self.pool_run_timeout <= 0:
            raise ConfigError(f"--pool-run-timeout must be positive, got {self.pool_run_timeout}")
        if self.listwise is not None and self.listwise < 1:
            raise ConfigError(f"--listwise must be at least 1, got {self.listwise}")
        for name in ("quote_match", "leakage_ratio", "duplicate_jaccard"):
            if not 0 < getattr(self, name) <= 1:
                raise ConfigError(f"{name} must be in (0, 1], got {getattr(self, name)}")
        if not 1 <= self.critic_min <= 5 or not 0 <= self.support_min_grade <= 3:
            raise ConfigError("critic_min must be in 1..5 and support_min_grade in 0..3")

    def as_dict(self) -> dict[str, Any]:
        """The settings as plain JSON values (for the manifest)."""
        out = asdict(self)
        out["mix"] = dict(self.mix) if self.mix is not None else None
        out["pool_runs"] = list(self.pool_runs)
        out["turns"] = list(self.turns)
        out["tools"] = [tool.as_dict() for tool in self.tools]
        return out
