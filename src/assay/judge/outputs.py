"""The judge's structured outputs: one pydantic model per prompt, reason first, then the label.

Each prompt file names its output model by class name; :data:`OUTPUT_MODELS` maps every such name to its class.
The reason comes before the label in every model (and in every item of a list), so that a model writing its answer
left to right argues before it grades. Labels are constrained (``grade`` is an int in 0..3, verdicts are Literal
enums) and ``extra="forbid"`` everywhere, so a response with a stray or missing field fails validation and the
client's repair step runs.

Scales (from the TREC deep-learning track and UMBRELA for relevance)::

    grade 0  the passage has nothing to do with the question
          1  related to the topic, but does not answer the question
          2  partly answers it, or the answer is there but buried or unclear
          3  dedicated to the question and contains the exact answer

:func:`assay.judge.json_schema.strict_schema` turns a model's JSON schema into the subset that OpenAI's strict
``json_schema`` mode accepts; pydantic still checks the full constraints on the answer.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "OUTPUT_MODELS",
    "AnswerAssessment",
    "AnswerRelevance",
    "ArgumentsCheck",
    "Attribution",
    "ClaimCheck",
    "ClaimVerdict",
    "Claims",
    "ContradictionCheck",
    "CriterionTree",
    "CriterionVerdict",
    "DraftedCall",
    "DraftedReference",
    "DraftedToolCalls",
    "Entailment",
    "EntailmentCheck",
    "EquivalentCall",
    "EvidenceQuote",
    "Faithfulness",
    "GeneratedConversation",
    "GeneratedQuestion",
    "GeneratedTurn",
    "ListwiseRelevance",
    "NuggetItem",
    "Nuggets",
    "PassageJudgement",
    "Preference",
    "QuestionCritique",
    "RelevanceGrade",
    "RewriteCheck",
    "SentenceAttribution",
    "StatementSupport",
    "SupportAssignments",
    "SupportLevel",
    "TreeAnswer",
    "Verdict",
]

Grade = Annotated[int, Field(ge=0, le=3, description="0 unrelated, 1 related only, 2 partial or buried, 3 exact")]
AnswerScore = Annotated[
    int, Field(ge=0, le=3, description="0 off-topic or refusal, 1 related only, 2 partly answers, 3 fully answers")
]
Score5 = Annotated[int, Field(ge=1, le=5, description="1 (worst) to 5 (best)")]
SupportLevel = Literal["support", "partial", "none"]
Verdict = Literal["supported", "partial", "unsupported"]
Entailment = Literal["entailed", "neutral", "contradicted"]
ImportanceLevel = Literal["vital", "okay"]
DependencyKind = Literal["none", "pronoun", "ellipsis", "comparison", "topic_shift", "unanswerable"]


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _unique(ids: list[str], what: str) -> None:
    seen: set[str] = set()
    for item in ids:
        if item in seen:
            raise ValueError(f"{what} {item!r} appears twice; give exactly one entry per {what}")
        seen.add(item)


Quotes = Annotated[
    list[str],
    Field(default_factory=list, description="sentences of the passage that bear on the question, word for word"),
]


class RelevanceGrade(_Output):
    """Pointwise relevance of one passage to one question, on the 0-3 scale, with the sentences that earned it. An
    answer cut while listing its quotes keeps its reason and grade (``CUT_LIST``: the grade was given whole; the
    quotes are lost and the label counts its whole text)."""

    CUT_LIST: ClassVar[str] = "quotes"
    reason: str
    grade: Grade
    quotes: Quotes


class PassageJudgement(_Output):
    """One passage's grade inside a listwise call; graded on its own, not against the other passages."""

    id: str
    reason: str
    grade: Grade
    quotes: Quotes


class ListwiseRelevance(_Output):
    """Grades for several passages of one question; one judgement per passage id, no id twice."""

    judgements: list[PassageJudgement]

    @model_validator(mode="after")
    def _one_per_id(self) -> ListwiseRelevance:
        _unique([j.id for j in self.judgements], "passage id")
        return self

    def by_id(self) -> dict[str, PassageJudgement]:
        """The judgements keyed by passage id."""
        return {j.id: j for j in self.judgements}


class EvidenceQuote(_Output):
    """A verbatim span of a source passage that the reference answer rests on."""

    passage_id: str
    quote: str


class NuggetItem(_Output):
    """An atomic fact a good answer needs: ``vital`` must be present, ``okay`` is good to have."""

    text: str
    importance: ImportanceLevel


class GeneratedQuestion(_Output):
    """A generated question with its reference answer, evidence quotes, atomic claims and nuggets.

    For an ``unanswerable`` question the answer says that the documents do not answer it, and evidence, claims and
    nuggets may be empty.
    """

    reason: str
    question: str
    answer: str
    evidence: list[EvidenceQuote]
    claims: list[str]
    nuggets: list[NuggetItem]


class DraftedReference(_Output):
    """A reference answer drafted for a user's own question from its graded passages, with verbatim evidence,
    atomic claims and nuggets (``assay build --queries``; people confirm it in ``assay audit``)."""

    reason: str
    answer: str
    evidence: list[EvidenceQuote]
    claims: list[str]
    nuggets: list[NuggetItem]


class QuestionCritique(_Output):
    """A critic's scores (1-5) for a generated question: answerable from the passages, self-contained, clear."""

    reason: str
    answerable: Score5
    self_contained: Score5
    clear: Score5


class GeneratedTurn(_Output):
    """One user turn of a generated conversation: the ``utterance`` as typed (it may lean on the history), its
    standalone ``rewrite`` (TREC CAsT's manual rewrite: understandable with no history), how it depends on the
    history, and the reference answer with its verbatim evidence, claims and nuggets (as a generated question's)."""

    reason: str
    dependency: DependencyKind
    utterance: str
    rewrite: str
    answer: str
    evidence: list[EvidenceQuote]
    claims: list[str]
    nuggets: list[NuggetItem]


class GeneratedConversation(_Output):
    """A generated multi-turn conversation: what the user is after, then the turns in order."""

    reason: str
    scenario: str
    turns: list[GeneratedTurn]


class RewriteCheck(_Output):
    """A critic's scores (1-5) for one conversation turn: its rewrite answerable from the passages, standalone
    (understood with no history), faithful (means what the utterance means given the history), and clear."""

    reason: str
    answerable: Score5
    self_contained: Score5
    faithful: Score5
    clear: Score5


class DraftedCall(_Output):
    """One reference tool call: a tool's name and its arguments as the text of a JSON object."""

    name: str
    arguments: str


class DraftedToolCalls(_Output):
    """The tool calls a question needs, in order (none when the passages answer it without a tool), for ``assay
    build --tools``; people confirm them in ``assay audit``."""

    reason: str
    calls: list[DraftedCall]


class EquivalentCall(_Output):
    """A system's tool call (``call``, its id) that does what a reference call (``reference``, its id) does."""

    reference: str
    call: str


class ArgumentsCheck(_Output):
    """Which of a system's tool calls do what the reference calls do: the same tool, arguments that mean the same
    (``assay eval``'s ``tool_args_judged``)."""

    reason: str
    equivalent: list[EquivalentCall]


class CriterionVerdict(_Output):
    """A team's criterion (:mod:`assay.judge.criteria`) applied to one answer: the reason, written first, then the
    label of the criterion's scale it earns (checked against the scale when read: a label outside it is unscored)."""

    reason: str
    label: str


class TreeAnswer(_Output):
    """The judge's answer to one yes/no question of a criterion's decision tree (``id``: the question's)."""

    id: str
    reason: str
    answer: Literal["yes", "no"]


class CriterionTree(_Output):
    """A decision-tree criterion applied to one answer: each of its questions answered yes or no, with a reason; the
    walk from the first question to a label reads them (:mod:`assay.pipelines.evaluate.judging.criteria`)."""

    answers: list[TreeAnswer]

    @model_validator(mode="after")
    def _one_per_id(self) -> CriterionTree:
        _unique([a.id for a in self.answers], "question id")
        return self


class Preference(_Output):
    """Which of two answers to one question better meets a criterion (``A``, ``B`` or ``tie``), the reason first
    (``assay eval --pairwise``; each pair is asked in both orders)."""

    reason: str
    preferred: Literal["A", "B", "tie"]


class Claims(_Output):
    """Atomic, decontextualised, self-contained statements of a text (empty for a text that asserts nothing)."""

    claims: list[str]


class Nuggets(_Output):
    """The nuggets a good answer to a question needs (TREC RAG 2024 AutoNuggetizer idea)."""

    nuggets: list[NuggetItem]


class StatementSupport(_Output):
    """Whether the passages support one statement (claim or nugget), and which passages do."""

    statement_id: str
    reason: str
    support: SupportLevel
    passage_ids: list[str]


class SupportAssignments(_Output):
    """One support assignment per statement id, no id twice."""

    assignments: list[StatementSupport]

    @model_validator(mode="after")
    def _one_per_id(self) -> SupportAssignments:
        _unique([a.statement_id for a in self.assignments], "statement id")
        return self


class ClaimVerdict(_Output):
    """One claim of an answer and whether the passages support it."""

    claim: str
    reason: str
    verdict: Verdict
    passage_ids: list[str]


class Faithfulness(_Output):
    """The answer's claims, each checked against the passages (empty when the answer asserts nothing)."""

    claims: list[ClaimVerdict]


class AnswerRelevance(_Output):
    """How directly an answer addresses the question, 0-3; ``noncommittal`` for evasive or "I don't know" answers.

    Scale: 0 off-topic or a refusal, 1 related but does not answer, 2 partly answers, 3 fully and directly answers.
    """

    reason: str
    score: AnswerScore
    noncommittal: bool


class AnswerAssessment(_Output):
    """Faithfulness, attribution and answer relevance of one answer in one call (``answer_assessment``).

    ``claims`` as in :class:`Faithfulness` (each with the passages it draws on); then the relevance reason, the 0-3
    relevance score (scale of :class:`AnswerRelevance`) and whether the answer is noncommittal.
    """

    claims: list[ClaimVerdict]
    relevance_reason: str
    relevance: AnswerScore
    noncommittal: bool


class SentenceAttribution(_Output):
    """Which passages one answer sentence draws on (empty when none)."""

    sentence_id: str
    reason: str
    passage_ids: list[str]


class Attribution(_Output):
    """One attribution per answer sentence id, no id twice."""

    sentences: list[SentenceAttribution]

    @model_validator(mode="after")
    def _one_per_id(self) -> Attribution:
        _unique([s.sentence_id for s in self.sentences], "sentence id")
        return self


class EntailmentCheck(_Output):
    """Whether one claim is entailed by, neutral to, or contradicted by the text it is checked against."""

    statement_id: str
    reason: str
    verdict: Entailment


class ClaimCheck(_Output):
    """Both directions of ``claim_check`` in one answer: each answer claim against the reference answer, each
    reference claim against the answer; one entry per id, no id twice in a list."""

    answer_claims: list[EntailmentCheck]
    reference_claims: list[EntailmentCheck]

    @model_validator(mode="after")
    def _one_per_id(self) -> ClaimCheck:
        _unique([c.statement_id for c in self.answer_claims], "answer claim id")
        _unique([c.statement_id for c in self.reference_claims], "reference claim id")
        return self


class ContradictionCheck(_Output):
    """Whether an answer contradicts an earlier answer of the same conversation (``contradiction``), and which
    earlier turns (their numbers; empty when it contradicts none)."""

    reason: str
    contradicts: bool
    earlier_turns: list[int]


OUTPUT_MODELS: dict[str, type[BaseModel]] = {
    model.__name__: model
    for model in (
        RelevanceGrade,
        ListwiseRelevance,
        GeneratedQuestion,
        DraftedReference,
        QuestionCritique,
        GeneratedConversation,
        RewriteCheck,
        DraftedToolCalls,
        ArgumentsCheck,
        CriterionVerdict,
        CriterionTree,
        Preference,
        Claims,
        Nuggets,
        SupportAssignments,
        Faithfulness,
        AnswerRelevance,
        Attribution,
        AnswerAssessment,
        ClaimCheck,
        ContradictionCheck,
    )
}
