"""The judged criteria of ``assay eval``: a team's own criterion files (:mod:`assay.judge.criteria`) put to a model.

One call per (run, question, judged criterion, judge), cached, concurrent and batched like every judge call:

- a criterion with a scale (and optional steps) asks the ``criterion`` prompt for a reason, then a label; the
  metric ``criterion:NAME`` is the declared score of that label, never a rescaled number;
- a decision tree asks the ``criterion_tree`` prompt to answer each of its yes/no questions with a reason; the walk
  from the first question follows the answers to a label, and every question answered on the walk is recorded.

The judge sees only what the criterion names (:data:`~assay.judge.criteria.INPUTS`): the question, the answer, the
texts of the run's top ``context_k`` passages, the reference answer, the nuggets, the conversation's earlier turns
(each user turn with this run's answer to it, when it has one). A name not given is sent as nothing at all.

Unscored, never 0, with the reason: a question whose answer the criterion reads but the system gave none (the
system failed, the answer is empty, the run answers nothing), a question without the reference answer or nuggets the
criterion reads, a failed call (its kind: ``truncated``, ``loop``, ``invalid_output``, ...), a label outside the
scale (:data:`NOT_IN_SCALE`), a tree walk that meets a question the judge did not answer (:data:`UNANSWERED`). A
panel asks each judge and combines their labels, ordered by declared score, with the panel's rule and quorum
(:func:`assay.judge.panel.combine_grades`; ``no_quorum`` when too few judges scored). The offline judge and
``--no-judge`` ask nothing: the criterion is unscored, :data:`NEEDS_MODEL_JUDGE`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.formats.golden import GoldenSet
from assay.judge import Estimate, Judge, Judgement
from assay.judge.criteria import INPUTS, Criterion
from assay.judge.label_probs import expected_score, tree_expected_score
from assay.judge.panel import NO_QUORUM, Grader, Panel, combine_grades, judges_of
from assay.pipelines.evaluate.runs.loaded import EMPTY_ANSWER, NO_ANSWERS, LoadedRun, RunLine
from assay.pipelines.evaluate.runs.read import FAILED
from assay.pipelines.evaluate.scoring.criteria import NEEDS_MODEL_JUDGE
from assay.pipelines.evaluate.scoring.ranking import QueryValues
from assay.results import CriterionVerdictRecord, CriterionVote, TreeStepAnswer
from assay.text import canonical_json, content_hash

__all__ = [
    "CRITERION_PROMPT",
    "NEEDS_MODEL_JUDGE",
    "NOT_IN_SCALE",
    "TREE_PROMPT",
    "UNANSWERED",
    "CriteriaJudged",
    "asking",
    "criterion_item",
    "criterion_stage",
    "criterion_variables",
    "estimate_criteria",
    "judge_criteria",
    "model_judges",
    "plan_criteria",
    "read_vote",
]

TOP_LOGPROBS = 10  # alternatives asked per token for an expected score (OpenAI allows up to 20)
CRITERION_PROMPT = "criterion"
TREE_PROMPT = "criterion_tree"
NOT_IN_SCALE = "label_not_in_scale"
UNANSWERED = "tree_question_unanswered"
OFFLINE = "offline"


def criterion_stage(criterion: Criterion) -> str:
    """The usage stage of a criterion's calls: ``criterion:NAME``."""
    return criterion.metric


def model_judges(grader: Grader | None) -> tuple[Judge, ...]:
    """The judges that can apply a judged criterion: every judge of ``grader`` but the offline one."""
    return tuple(one for one in judges_of(grader) if one.model != OFFLINE)


@dataclass(frozen=True)
class CriterionCall:
    """One planned criterion question: which run and question, which criterion, the prompt's variables."""

    run: str
    query_id: str
    criterion: Criterion
    variables: dict[str, Any]

    @property
    def prompt(self) -> str:
        return TREE_PROMPT if self.criterion.tree else CRITERION_PROMPT

    @property
    def shown(self) -> dict[str, Any]:
        """The inputs the judge sees (the ones the criterion names)."""
        return {name: self.variables[name] for name in self.criterion.inputs}

    @property
    def item(self) -> str:
        return criterion_item(self.criterion.ref, self.query_id, self.shown)


def criterion_item(ref: str, query_id: str, shown: Mapping[str, Any]) -> str:
    """The audit item of a verdict: a digest of the criterion's ``ref`` (NAME@VERSION), the question and the inputs
    the judge saw, so one answer judged in two runs or two evaluations is one item for people to label."""
    return content_hash(canonical_json({"ref": ref, "query_id": query_id, "shown": dict(shown)}), 12)


@dataclass
class CriteriaJudged:
    """Per run and question the judged criteria's values (``criterion:NAME``, or unscored with the reason), each
    verdict with its votes, and per audit item (:func:`criterion_item`) the inputs the judge saw, for the audit."""

    values: dict[str, dict[str, QueryValues]] = field(default_factory=dict)
    records: list[CriterionVerdictRecord] = field(default_factory=list)
    shown: dict[str, dict[str, Any]] = field(default_factory=dict)

    def unscored(self, run: str, qid: str, criterion: Criterion, reason: str) -> None:
        values = self.values.setdefault(run, {}).setdefault(qid, QueryValues({}, {}))
        for metric in criterion.metrics:
            values.metrics[metric] = None
            values.unscored[metric] = reason

    def scored(self, criterion: Criterion, record: CriterionVerdictRecord) -> None:
        values = self.values.setdefault(record.run, {}).setdefault(record.query_id, QueryValues({}, {}))
        values.metrics[criterion.metric] = record.score
        if record.score is None:
            values.unscored[criterion.metric] = record.unscored or "unscored"
        if criterion.expected:
            values.metrics[criterion.expected_metric] = record.expected
            if record.expected is None:
                values.unscored[criterion.expected_metric] = record.expected_unscored or "unscored"
        self.records.append(record)


def _criterion_variable(criterion: Criterion) -> dict[str, Any]:
    """What the prompt says of the criterion: its name, instructions, steps or tree, and its scale (the labels and
    what they mean; the declared scores stay with assay). The file's hash rides along, so an edited file makes new
    calls (the delimiter code, and so the cache key, is a digest of every variable)."""
    out: dict[str, Any] = {"name": criterion.name, "instructions": criterion.instructions or criterion.description,
                           "hash": criterion.content_hash}  # fmt: skip
    if criterion.tree:
        out["tree"] = [{"id": s.id, "question": s.question} for s in criterion.tree]
    else:
        out["steps"] = list(criterion.steps)
        out["labels"] = [{"label": label.name, "description": label.description} for label in criterion.labels]
    return out


def criterion_variables(criterion: Criterion, shown: Mapping[str, Any]) -> dict[str, Any]:
    """The prompt's variables for ``criterion``: the criterion itself, and of ``shown`` (input name -> value) only the
    inputs it names (the others are sent as nothing)."""
    variables = {name: (shown.get(name) if name in criterion.inputs else None) for name in INPUTS}
    return {"criterion": _criterion_variable(criterion), **variables}


def _history(gold: GoldenSet, run: LoadedRun) -> dict[str, list[dict[str, Any]]]:
    """Per judged turn of a conversation, its earlier turns: the user's utterance and this run's answer to it (None
    where the run has none)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for conversation in gold.conversations:
        before: list[dict[str, Any]] = []
        for turn in conversation.turns:
            out.setdefault(turn.question_id, list(before))
            line = run.lines.get(turn.question_id) or run.context.get(turn.question_id)
            before.append({"question": turn.utterance, "answer": line.given_answer if line is not None else None})
    return out


def _missing_answer(line: RunLine, answers_given: bool) -> str | None:
    """Why there is no answer to judge (None when there is one)."""
    if line.error is not None:
        return FAILED
    if line.given_answer is not None:
        return None
    return EMPTY_ANSWER if answers_given else NO_ANSWERS


def _why_not(criterion: Criterion, shown: Mapping[str, Any], absent: str | None) -> str | None:
    """Why ``criterion`` cannot be asked about a question (None when it can): the system failed on it, or an input
    it reads is missing (``absent``: why there is no answer)."""
    if absent == FAILED:
        return FAILED
    for name in criterion.inputs:
        if name == "answer" and absent is not None:
            return absent
        if name in ("reference_answer", "nuggets") and shown[name] is None:
            return f"no_{name}"
    return None


def plan_criteria(
    gold: GoldenSet, runs: Sequence[LoadedRun], criteria: Sequence[Criterion], *, context_k: int,
    judged: CriteriaJudged,
) -> list[CriterionCall]:  # fmt: skip
    """The calls the judged ``criteria`` need over ``runs``; the questions that cannot be asked are recorded in
    ``judged`` as unscored with the reason (module doc)."""
    wanted = [c for c in criteria if c.judged]
    calls: list[CriterionCall] = []
    for run in runs:
        history = _history(gold, run) if any("history" in c.inputs for c in wanted) else {}
        for qid, line in run.lines.items():
            question = gold.question(qid)
            shown: dict[str, Any] = {
                "question": question.text,
                "answer": line.answer,
                "passages": [text for unit in line.top(context_k) if (text := line.text(unit, gold))],
                "reference_answer": question.reference_answer or None,
                "nuggets": [{"text": n.text, "importance": n.importance} for n in question.nuggets] or None,
                "history": history.get(qid, []),
            }
            absent = _missing_answer(line, run.answers_given)
            for criterion in wanted:
                why = _why_not(criterion, shown, absent)
                if why is not None:
                    judged.unscored(run.name, qid, criterion, why)
                    continue
                calls.append(CriterionCall(run.name, qid, criterion, criterion_variables(criterion, shown)))
    return calls


def read_vote(criterion: Criterion, model: str, judgement: Judgement[Any]) -> CriterionVote:
    """One judge's answer as a vote: its label (None when unscored, with why) and reason, or its tree walk; with
    ``expected = true`` its expected score from the answer's token probabilities (:mod:`assay.judge.label_probs`)."""
    if judgement.output is None:
        kind = judgement.unscored.kind if judgement.unscored is not None else "unscored"
        return CriterionVote(model=model, unscored=kind, expected_unscored=kind if criterion.expected else None)
    data = judgement.output.model_dump()
    if criterion.tree:
        vote = _walk(criterion, model, data["answers"])
    else:
        label, reason = str(data["label"]).strip(), str(data["reason"])
        names = {one.name.casefold(): one.name for one in criterion.labels}
        if label.casefold() in names:
            vote = CriterionVote(model=model, label=names[label.casefold()], reason=reason)
        else:
            vote = CriterionVote(model=model, reason=reason, unscored=NOT_IN_SCALE)
    if not criterion.expected:
        return vote
    if vote.unscored is not None:  # no label from the scale was written: no label whose certainty to weigh
        return vote.model_copy(update={"expected_unscored": vote.unscored})
    return _with_expected(criterion, vote, judgement, data)


def _with_expected(criterion: Criterion, vote: CriterionVote, judgement: Judgement[Any], data: Any) -> CriterionVote:
    """``vote`` with its expected score, or why it has none."""
    scores = {one.name: one.score for one in criterion.labels}
    if criterion.tree:
        tree = {step.id: (step.yes, step.no) for step in criterion.tree}
        order = [str(answer["id"]) for answer in data["answers"]]
        found = tree_expected_score(judgement.logprobs, order, tree, scores, criterion.tree[0].id)
    else:
        found = expected_score(judgement.logprobs, scores)
    if isinstance(found, str):
        return vote.model_copy(update={"expected_unscored": found})
    return vote.model_copy(update={"expected": round(found[0], 6), "coverage": round(found[1], 6)})


def _expected_of(votes: Sequence[CriterionVote]) -> tuple[float | None, str | None]:
    """A verdict's expected score: the mean of its votes' (a panel's judges weigh alike), or the first reason."""
    given = [v.expected for v in votes if v.expected is not None]
    if given:
        return round(sum(given) / len(given), 6), None
    return None, next((v.expected_unscored for v in votes if v.expected_unscored), "unscored")


def _walk(criterion: Criterion, model: str, answers: Sequence[Mapping[str, Any]]) -> CriterionVote:
    """Follow the judge's yes/no answers from the first question to a label (the tree has no loop: it was checked
    when the file was read)."""
    given = {str(a["id"]): a for a in answers}
    steps: list[TreeStepAnswer] = []
    labels = {label.name for label in criterion.labels}
    by_id = {step.id: step for step in criterion.tree}
    at = criterion.tree[0].id
    while at not in labels:
        step = by_id[at]
        answer = given.get(at)
        if answer is None:
            return CriterionVote(model=model, steps=steps, unscored=UNANSWERED)
        steps.append(TreeStepAnswer(id=at, question=step.question, answer=answer["answer"], reason=answer["reason"]))
        at = step.yes if answer["answer"] == "yes" else step.no
    reason = steps[-1].reason if steps else ""
    return CriterionVote(model=model, label=at, reason=reason, steps=steps)


def _combined(criterion: Criterion, votes: Sequence[CriterionVote], rule: str | None) -> tuple[str | None, str | None]:
    """The label of ``votes`` (one judge's, or a panel's by ``rule`` over the labels ordered by declared score) and
    why there is none."""
    if rule is None:
        return votes[0].label, votes[0].unscored
    ordered = sorted(criterion.labels, key=lambda label: label.score)
    rank = {label.name: i for i, label in enumerate(ordered)}
    grade = combine_grades([rank[v.label] if v.label is not None else None for v in votes], rule)
    return (ordered[grade].name, None) if grade is not None else (None, NO_QUORUM)


async def judge_criteria(
    grader: Grader,
    calls: Sequence[CriterionCall],
    judged: CriteriaJudged,
    *,
    on_result: Callable[[], None] | None = None,
) -> None:
    """Make ``calls`` with every model judge of ``grader`` and record each verdict in ``judged`` (module doc)."""
    judges = model_judges(grader)
    rule = grader.combine if isinstance(grader, Panel) and len(judges) > 1 else None
    groups: dict[str, list[int]] = {}  # per criterion (its form decides the prompt, its expected score the params)
    for index, call in enumerate(calls):
        groups.setdefault(call.criterion.name, []).append(index)
    votes: list[list[CriterionVote | None]] = [[None] * len(judges) for _ in calls]

    async def ask(j: int, judge: Judge, indexes: list[int]) -> None:
        def done(at: int, judgement: Judgement[Any]) -> None:
            call = calls[indexes[at]]
            votes[indexes[at]][j] = read_vote(call.criterion, judge.model, judgement)
            if on_result is not None:
                on_result()

        first = calls[indexes[0]]
        asker = asking(judge, first.criterion)
        await asker.ajudge_many(first.prompt, [calls[i].variables for i in indexes],
                                stage=criterion_stage(first.criterion), on_result=done)  # fmt: skip

    await asyncio.gather(*(ask(j, one, indexes) for j, one in enumerate(judges) for indexes in groups.values()))
    for call, given in zip(calls, votes, strict=True):
        cast = [v if v is not None else CriterionVote(model=judges[j].model, unscored="unscored")
                for j, v in enumerate(given)]  # fmt: skip
        label, why = _combined(call.criterion, cast, rule)
        score = next((one.score for one in call.criterion.labels if one.name == label), None)
        expected, no_expected = _expected_of(cast) if call.criterion.expected else (None, None)
        record = CriterionVerdictRecord(run=call.run, query_id=call.query_id, criterion=call.criterion.name,
                                        ref=call.criterion.ref, item=call.item, label=label, score=score,
                                        unscored=None if label is not None else why, votes=cast, expected=expected,
                                        expected_unscored=no_expected)  # fmt: skip
        judged.scored(call.criterion, record)
        judged.shown.setdefault(call.item, call.shown)


def estimate_criteria(grader: Grader, calls: Sequence[CriterionCall]) -> dict[str, Estimate]:
    """Calls, cached items, prompt tokens and a cost bound per criterion (and per judge of a panel); no call."""
    judges = model_judges(grader)
    out: dict[str, Estimate] = {}
    names = list(dict.fromkeys(call.criterion.name for call in calls))
    for name in names:
        mine = [call for call in calls if call.criterion.name == name]
        stage = criterion_stage(mine[0].criterion)
        for one in judges:
            key = stage if len(judges) == 1 else f"{stage} {one.model}"
            out[key] = asking(one, mine[0].criterion).estimate(mine[0].prompt, [call.variables for call in mine])
    return out


def asking(judge: Judge, criterion: Criterion) -> Judge:
    """The judge that asks ``criterion``: with ``expected = true``, one that asks for the answer's token
    probabilities too (cached apart: the params are part of the cache key)."""
    return judge.with_params(logprobs=True, top_logprobs=TOP_LOGPROBS) if criterion.expected else judge
