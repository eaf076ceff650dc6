"""The offline judge: deterministic answers to every packaged prompt from lexical evidence, with no model at all.

``--judge offline`` lets ``assay demo`` and smoke tests run with no key and no network. :class:`OfflineBackend`
ignores the rendered messages and computes the output model of the prompt from ``request.prompt_name`` and
``request.variables``:

===================  ===================================================================================
relevance            BM25-shaped overlap of question terms, numbers and names (see offline_lexical)
relevance_listwise   the pointwise grade for each passage on its own (so listwise == pointwise)
question_generation  a salient sentence turned into a question by a rule per type (see offline_questions)
reference_draft      the passages' sentences sharing most terms with the question (see offline_drafts)
question_critic      coverage of question and answer in the passages; pronoun/context/length checks
conversation         follow-up turns by rule: a pronoun or ellipsis for a phrase of the history, a comparison, a
                     topic shift, an unanswerable turn (see offline_conversations)
rewrite_check        the critic's scores of the rewrite, and the utterance's terms it keeps (faithful)
tool_calls           an arithmetic tool's call for a question asking a difference or a total, over the passages'
                     first two numbers; none otherwise (see offline_drafts)
tool_arguments       a system's call equivalent to a reference call when it names the same tool and each argument
                     holds the same numbers and words in any order (assay.metrics.tool_calls.same_terms)
claims               the clauses of the text's sentences (see offline_lexical, "Claims")
nuggets              the sentences of the answer: vital when they hold a number or name or share question terms
support              coverage of each statement's terms (and all its numbers) by the passages
faithfulness         the answer's clauses as claims, each with its support level
answer_relevance     overlap of question terms with the answer; noncommittal phrases score 0
attribution          the passages covering at least half of each answer sentence's terms
answer_assessment    faithfulness's claims with their passages, and answer_relevance's score, in one answer
claim_check          each answer claim against the reference, each reference claim against the answer: entailed
                     when the text holds half its terms and every number, else neutral (never contradicted)
contradiction        a number that differs for the same unit and thing from an earlier answer of the conversation
                     (see offline_conversations)
===================  ===================================================================================

It is a baseline, and every reason it writes says so. Thousands of calls per second; every answer depends only on
the request, so answers can be cached per request like a model's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from assay.errors import BackendError
from assay.judge.base import ChatRequest, ChatResponse
from assay.judge.offline_conversations import check_contradiction, check_rewrite, write_conversation
from assay.judge.offline_drafts import draft_reference, draft_tool_calls
from assay.judge.offline_lexical import (
    BASELINE,
    RULES,
    Level,
    answer_relevance,
    asserts_something,
    claims,
    entails,
    name_terms,
    number_set,
    quoted_sentences,
    relevance,
    stem_terms,
    support,
)
from assay.judge.offline_questions import Source, critique, generate
from assay.judge.outputs import (
    AnswerAssessment,
    AnswerRelevance,
    ArgumentsCheck,
    Attribution,
    ClaimCheck,
    Claims,
    ClaimVerdict,
    EntailmentCheck,
    EquivalentCall,
    Faithfulness,
    ListwiseRelevance,
    NuggetItem,
    Nuggets,
    PassageJudgement,
    RelevanceGrade,
    SentenceAttribution,
    StatementSupport,
    SupportAssignments,
    Verdict,
)
from assay.metrics.tool_calls import same_terms
from assay.text import canonical_json, count_tokens, sentences

__all__ = ["OfflineBackend", "offline_answer"]

_VERDICT: dict[Level, Verdict] = {"support": "supported", "partial": "partial", "none": "unsupported"}
Handler = Callable[["_Vars"], BaseModel]


class _Vars:
    """Typed access to a request's variables; a missing or mistyped one is a BackendError naming it."""

    def __init__(self, prompt: str, variables: Mapping[str, Any]) -> None:
        self.prompt = prompt
        self.variables = variables

    def fail(self, key: str, expected: str) -> BackendError:
        got = type(self.variables[key]).__name__ if key in self.variables else "nothing"
        return BackendError(
            f"offline judge, prompt {self.prompt!r}: variable {key!r} must be {expected}, got {got}; "
            f"pass it in the prompt's variables"
        )

    def text(self, key: str) -> str:
        value = self.variables.get(key)
        if not isinstance(value, str):
            raise self.fail(key, "text")
        return value

    def items(self, key: str) -> list[Source]:
        value = self.variables.get(key)
        if not isinstance(value, list | tuple) or not all(isinstance(v, Mapping) for v in value):
            raise self.fail(key, "a list of {id, text} objects")
        out = []
        for item in value:
            if not isinstance(item.get("id"), str) or not isinstance(item.get("text"), str):
                raise self.fail(key, "a list of {id, text} objects with string id and text")
            heading = item.get("heading")
            out.append(Source(item["id"], item["text"], heading if isinstance(heading, str) else ""))
        return out


def _relevance(v: _Vars) -> BaseModel:
    question, passage = v.text("question"), v.text("passage")
    grade, reason = relevance(question, passage)
    return RelevanceGrade(reason=reason, grade=grade, quotes=quoted_sentences(question, passage) if grade else [])


def _listwise(v: _Vars) -> BaseModel:
    question = v.text("question")
    judgements = []
    for passage in v.items("passages"):
        grade, reason = relevance(question, passage.text)
        quotes = quoted_sentences(question, passage.text) if grade else []
        judgements.append(PassageJudgement(id=passage.id, reason=reason, grade=grade, quotes=quotes))
    return ListwiseRelevance(judgements=judgements)


def _question_generation(v: _Vars) -> BaseModel:
    sources = v.items("passages")
    if not sources:
        raise v.fail("passages", "a non-empty list of {id, text, heading} objects")
    return generate(sources, v.text("question_type"))


def _reference_draft(v: _Vars) -> BaseModel:
    return draft_reference(v.text("question"), v.items("passages"))


def _question_critic(v: _Vars) -> BaseModel:
    return critique(v.text("question"), v.text("answer"), [p.text for p in v.items("passages")])


def _conversation(v: _Vars) -> BaseModel:
    sources = v.items("passages")
    plan = v.variables.get("turns")
    if not sources:
        raise v.fail("passages", "a non-empty list of {id, text, heading} objects")
    if not isinstance(plan, list | tuple) or not plan or not all(isinstance(t, Mapping) for t in plan):
        raise v.fail("turns", "a non-empty list of {number, dependency, passage} objects")
    return write_conversation(sources, plan)


def _rewrite_check(v: _Vars) -> BaseModel:
    history = v.variables.get("history")
    if not isinstance(history, list | tuple) or not all(isinstance(h, Mapping) for h in history):
        raise v.fail("history", "a list of {utterance, answer} objects")
    passages = [p.text for p in v.items("passages")]
    return check_rewrite(history, v.text("utterance"), v.text("rewrite"), v.text("answer"), passages)


def _tool_calls(v: _Vars) -> BaseModel:
    tools = v.variables.get("tools")
    if not isinstance(tools, list | tuple) or not all(isinstance(t, Mapping) and t.get("name") for t in tools):
        raise v.fail("tools", "a list of {name, description, parameters} objects")
    return draft_tool_calls(v.text("question"), [p.text for p in v.items("passages")], tools)


def _tool_arguments(v: _Vars) -> BaseModel:
    def calls(key: str) -> list[tuple[str, str, dict[str, Any]]]:
        items = v.variables.get(key)
        if not isinstance(items, list | tuple) or not all(isinstance(i, Mapping) for i in items):
            raise v.fail(key, "a list of {id, name, arguments} objects")
        return [(str(i.get("id")), str(i.get("name")), _arguments(i.get("arguments"))) for i in items]

    # both lists read before pairing: a malformed ``calls`` is named even when there is no reference call
    reference, made = calls("reference"), calls("calls")
    pairs = [EquivalentCall(reference=r_id, call=c_id) for r_id, r_name, r_args in reference
             for c_id, c_name, c_args in made if same_terms((r_name, r_args), (c_name, c_args))]  # fmt: skip
    return ArgumentsCheck(reason=f"{BASELINE}: the same tool and, per argument, the same numbers and words.",
                          equivalent=pairs)  # fmt: skip


def _arguments(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return {"input": value}
    return dict(value) if isinstance(value, Mapping) else {"input": value}


def _claims(v: _Vars) -> BaseModel:
    return Claims(claims=claims(v.text("text")))


def _nuggets(v: _Vars) -> BaseModel:
    question_terms = set(stem_terms(v.text("question")))
    nuggets = []
    for sentence in sentences(v.text("answer")):
        if not asserts_something(sentence):
            continue
        key = number_set(sentence) or name_terms(sentence) or question_terms & set(stem_terms(sentence))
        nuggets.append(NuggetItem(text=sentence, importance="vital" if key else "okay"))
    nuggets.sort(key=lambda n: n.importance != "vital")
    return Nuggets(nuggets=nuggets)


def _support(v: _Vars) -> BaseModel:
    passages = [(p.id, p.text) for p in v.items("passages")]
    assignments = []
    for statement in v.items("statements"):
        level, ids, reason = support(statement.text, passages)
        assignments.append(StatementSupport(statement_id=statement.id, reason=reason, support=level, passage_ids=ids))
    return SupportAssignments(assignments=assignments)


def _claim_verdicts(v: _Vars) -> list[ClaimVerdict]:
    """The answer's claims (its clauses), each with its support level in the passages."""
    passages = [(p.id, p.text) for p in v.items("passages")]
    out = []
    for claim in claims(v.text("answer")):
        level, ids, reason = support(claim, passages)
        out.append(ClaimVerdict(claim=claim, reason=reason, verdict=_VERDICT[level], passage_ids=ids))
    return out


def _faithfulness(v: _Vars) -> BaseModel:
    return Faithfulness(claims=_claim_verdicts(v))


def _answer_relevance(v: _Vars) -> BaseModel:
    score, noncommittal, reason = answer_relevance(v.text("question"), v.text("answer"))
    return AnswerRelevance(reason=reason, score=score, noncommittal=noncommittal)


def _attribution(v: _Vars) -> BaseModel:
    passages = [(p.id, p.text) for p in v.items("passages")]
    out = []
    for sentence in v.items("answer_sentences"):
        used = []
        for pid, text in passages:
            level, _, _ = support(sentence.text, [(pid, text)])
            if level != "none":
                used.append(pid)
        note = f"uses {', '.join(used)}" if used else "no passage covers half of its terms"
        reason = f"{BASELINE}: passages holding half the sentence's terms or more; {note}."
        out.append(SentenceAttribution(sentence_id=sentence.id, reason=reason, passage_ids=used))
    return Attribution(sentences=out)


def _answer_assessment(v: _Vars) -> BaseModel:
    claims = _claim_verdicts(v)
    score, noncommittal, reason = answer_relevance(v.text("question"), v.text("answer"))
    return AnswerAssessment(claims=claims, relevance_reason=reason, relevance=score, noncommittal=noncommittal)


def _entailment(statements: list[Source], text: str, against: str) -> list[EntailmentCheck]:
    """Each statement against one text (the ``against`` side): entailed by :func:`entails`, else neutral."""
    out = []
    for statement in statements:
        entailed, reason = entails(statement.text, text)
        out.append(EntailmentCheck(statement_id=statement.id, reason=f"{reason} ({against})",
                                   verdict="entailed" if entailed else "neutral"))  # fmt: skip
    return out


def _claim_check(v: _Vars) -> BaseModel:
    return ClaimCheck(
        answer_claims=_entailment(v.items("answer_claims"), v.text("reference"), "reference"),
        reference_claims=_entailment(v.items("reference_claims"), v.text("answer"), "answer"),
    )


def _contradiction(v: _Vars) -> BaseModel:
    return check_contradiction(v.text("answer"), v.items("earlier"))


HANDLERS: dict[str, Handler] = {
    "relevance": _relevance,
    "relevance_listwise": _listwise,
    "question_generation": _question_generation,
    "reference_draft": _reference_draft,
    "question_critic": _question_critic,
    "conversation": _conversation,
    "rewrite_check": _rewrite_check,
    "tool_calls": _tool_calls,
    "tool_arguments": _tool_arguments,
    "claims": _claims,
    "nuggets": _nuggets,
    "support": _support,
    "faithfulness": _faithfulness,
    "answer_relevance": _answer_relevance,
    "attribution": _attribution,
    "answer_assessment": _answer_assessment,
    "claim_check": _claim_check,
    "contradiction": _contradiction,
}


# prompts only a model can answer: a team's own criterion, or a preference between answers, has no lexical reading
# (assay eval leaves such a criterion unscored under the offline judge, "needs a model judge", and refuses
# --pairwise without a model judge)
MODEL_ONLY = ("criterion", "criterion_tree", "pairwise")


def offline_answer(prompt_name: str, variables: Mapping[str, Any]) -> BaseModel:
    """The offline judge's output model instance for one prompt and its variables.

    Raises :class:`BackendError` (not transient) for a prompt it has no method for, or a missing/mistyped variable.
    """
    handler = HANDLERS.get(prompt_name)
    if handler is None:
        raise BackendError(
            f"the offline judge has no method for prompt {prompt_name!r}; it knows {', '.join(sorted(HANDLERS))}. "
            f"Use a model judge (e.g. --judge openai/gpt-4o-mini) for other prompts"
        )
    try:
        return handler(_Vars(prompt_name, variables))
    except ValidationError as exc:
        problem = exc.errors()[0].get("msg", str(exc))
        raise BackendError(
            f"offline judge, prompt {prompt_name!r}: its answer does not validate ({problem}); check the variables "
            f"(an id given twice?)"
        ) from exc


class OfflineBackend:
    """A :class:`assay.judge.base.Backend` that answers from lexical evidence; labels it makes say ``offline``."""

    name = "offline"
    cache_model = f"offline/{RULES}"  # the judge keys its cache by this: answers change when the rules do

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Answer ``request`` with the JSON of its prompt's output model; token counts are estimates."""
        output = offline_answer(request.prompt_name, request.variables)
        content = output.model_dump_json()
        prompt_text = "\n".join(m.get("content", "") for m in request.messages) or canonical_json(request.variables)
        return ChatResponse(
            content=content,
            prompt_tokens=count_tokens(prompt_text),
            completion_tokens=count_tokens(content),
            finish_reason="stop",
            model="offline",
        )
