"""What the report's per-question explorer shows: each question with every run's passages, answer and checked
claims (and, for a system that searches several times, its steps), and the claims that show the failures the
diagnosis metrics count."""

from __future__ import annotations

from pydantic import Field

from assay.results._model import _Model

__all__ = [
    "ClaimView",
    "CriterionVerdictRecord",
    "CriterionVote",
    "DiagnosisExample",
    "PassageView",
    "QuestionView",
    "RunView",
    "StepView",
    "TreeStepAnswer",
]


class PassageView(_Model):
    """One retrieved passage of one run for one question, as the report's explorer shows it: its rank, unit id (a
    golden chunk id, or ``p:{doc_id}:{start}-{end}`` for a passage located in a document), text, grade and how the
    grade was found (``chunk``: the golden chunk's label, ``rule``: carried over from labelled spans, ``stored``:
    judged in an earlier evaluation, ``judged``: judged now, ``unlabelled``)."""

    rank: int
    unit: str
    text: str = ""
    grade: int | None = None
    how: str = "chunk"


class ClaimView(_Model):
    """One claim of a question checked for one run: an ``answer`` claim (is it supported by the passages?) or a
    ``reference`` claim (do the passages hold it?), the judge's verdict and reason, and the ranks of the passages
    that support it."""

    kind: str
    text: str
    verdict: str
    reason: str = ""
    ranks: list[int] = Field(default_factory=list)


class StepView(_Model):
    """One step of a system that searches several times, as the explorer shows it. A ``retrieval`` step: its query,
    its passages with their grades (the same pool as the context's), the recall after it, and the relevant
    characters it ``added`` (no earlier search had them) and ``lost`` (the final context lacks them); a ``tool``
    call: its name, arguments (JSON), output or error; an ``llm`` call: its model and tokens."""

    number: int
    kind: str
    query: str | None = None
    passages: list[PassageView] = Field(default_factory=list)
    recall: float | None = None
    added: int = 0
    lost: int = 0
    name: str | None = None
    arguments: str | None = None
    output: str | None = None
    error: str | None = None
    model: str | None = None
    tokens: int | None = None


class RunView(_Model):
    """One run's side of one question: its passages in rank order, its answer (or why the system failed), the claims
    the judge checked, and a system that searches several times its steps and the diagnosis of its path (hops never
    searched, evidence found but dropped, loops; :meth:`~assay.pipelines.evaluate.scoring.trajectory.QuestionPath.
    notes`)."""

    run: str
    passages: list[PassageView] = Field(default_factory=list)
    answer: str | None = None
    error: str | None = None
    claims: list[ClaimView] = Field(default_factory=list)
    steps: list[StepView] = Field(default_factory=list)
    path: list[str] = Field(default_factory=list)
    hops: list[tuple[str, int | None]] = Field(default_factory=list)  # (chunk, the step that found it: None never)
    # the question's reference tool calls, each written name(arguments), and whether a step made it exactly
    references: list[tuple[str, bool]] = Field(default_factory=list)


class QuestionView(_Model):
    """One golden question with every run's side of it: what the report's per-question explorer shows (the metric
    values are in the :class:`QueryResult` rows)."""

    query_id: str
    text: str
    type: str = ""
    difficulty: str | None = None
    reference_answer: str | None = None
    nuggets: list[tuple[str, str]] = Field(default_factory=list)  # (importance, text)
    runs: list[RunView] = Field(default_factory=list)


class DiagnosisExample(_Model):
    """One claim that shows a failure the diagnosis metrics count, with the evidence, for the report to show.

    ``category``: hallucination, relevant_noise, irrelevant_noise, self_knowledge (answer claims), missed_by_retriever
    or ignored_by_generator (reference claims). ``chunk_id``/``chunk_text``: the chunk that entails the claim (for
    noise and ignored claims), else None. ``verdict`` says in words what the judge found; ``reason`` is its reason.
    """

    run: str
    query_id: str
    question: str
    category: str
    claim: str
    verdict: str
    reason: str = ""
    chunk_id: str | None = None
    chunk_text: str | None = None


class TreeStepAnswer(_Model):
    """One question of a decision-tree criterion on the judge's walk from the first question to a label: its id,
    the question, the judge's answer (``yes``/``no``) and reason."""

    id: str
    question: str
    answer: str
    reason: str = ""


class CriterionVote(_Model):
    """One judge's verdict on one criterion for one answer: the label it gave (None when unscored, ``unscored``
    saying why: the call failed, the label is outside the scale, the tree walk met an unanswered question), its
    reason, and for a decision tree the answered questions of its walk, in order."""

    model: str
    label: str | None = None
    reason: str = ""
    steps: list[TreeStepAnswer] = Field(default_factory=list)
    unscored: str | None = None
    # with ``expected = true``: the declared scores weighted by the judge's token probabilities, the share of the
    # probability the labels held (coverage), or why there is no expected score
    expected: float | None = None
    coverage: float | None = None
    expected_unscored: str | None = None


class CriterionVerdictRecord(_Model):
    """A judged criterion (``criterion:NAME``) on one question of one run: the label (a panel's votes combined by
    its rule), the declared score it earns (the metric), every judge's vote, or why it is unscored. What the audit
    page queues and the report's explorer shows. ``item``: the audit item, a digest of the criterion's version, the
    question and the inputs the judge saw, so the same answer judged again (in any run) is the same item."""

    run: str
    query_id: str
    criterion: str  # NAME
    ref: str  # NAME@VERSION
    item: str | None = None
    label: str | None = None
    score: float | None = None
    unscored: str | None = None
    votes: list[CriterionVote] = Field(default_factory=list)
    # with ``expected = true``: the expected score (a panel's: the mean of its judges'), or why there is none
    expected: float | None = None
    expected_unscored: str | None = None
