"""Which metric names exist here and why the others do not (:class:`Available`), rule by rule.

Each rule of the module docstring is read on an :class:`Available` that has everything but the one thing the rule
needs, so the reason is the rule's own and a name the rule does not cover stays offered; :meth:`Available.of` is read
on golden sets and runs that hold each thing only just (one claim and no reference answer, a conversation of exactly
two turns, an answer of blanks).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from evaluate_fixture import make_golden

from assay.formats.golden import GoldenSet
from assay.pipelines.evaluate.runs.loaded import LoadedRun, RunLine, Search
from assay.pipelines.evaluate.scoring.available import Available
from assay.pipelines.evaluate.scoring.names import catalogue
from assay.results import RunCounts
from assay.types import Conversation, Turn

EVERYTHING = Available(
    judged=True, nuggets=True, support=True, references=True, text=True, turns=True, passages=True, answers=True,
    rewrites=True, steps=True, hops=True, tool_calls=True,
)  # fmt: skip

NO_JUDGE = "it is LLM-judged and there is no judge (--judge MODEL)"
NO_TEXT = "the golden documents have no text"
NO_SUPPORT = "the golden set has no nugget support"
NO_NUGGETS = "the golden set has no nuggets"
NO_REFERENCES = "the golden set has no reference answers or claims"
NO_TURNS = "the golden set has no conversation of two turns or more"
NO_ANSWER = "no run has an answer"
NO_PASSAGES = "no run has passages"
NO_REWRITE = "no run line carries its own rewrite of a conversation turn"


def test_everything_there_every_name_exists() -> None:
    assert [n for n in catalogue((1, 5, 10), ("1000t",)) if EVERYTHING.why_not(n) is not None] == []


@pytest.mark.parametrize(
    ("lacking", "name", "why"),
    [
        ({"rewrites": False}, "rewrite_f1", NO_REWRITE),
        ({"rewrites": False}, "gold_rewrite_bm25_ndcg@10", NO_REWRITE),
        ({"rewrites": False, "judged": False, "passages": False}, "rewrite_bm25_ndcg@10", NO_REWRITE),
        ({"rewrites": None}, "rewrite_f1", None),  # no run read yet: not refused
        ({"judged": False}, "faithfulness", NO_JUDGE),
        ({"judged": False}, "ragas_context_precision@5", NO_JUDGE),
        ({"judged": False}, "ndcg@10", None),
        ({"judged": False}, "coverage_recall@5", None),  # computed from the nugget support, not judged
        ({"text": False}, "span_recall@5", NO_TEXT),
        ({"text": False}, "span_iou@1000t", NO_TEXT),
        ({"text": False}, "ndcg@1000t", NO_TEXT),
        ({"text": False}, "ndcg@10", None),
        ({"text": False}, "faithfulness", None),
        ({"support": False}, "coverage_recall@5", NO_SUPPORT),
        ({"support": False}, "nugget_recall", None),
        ({"support": False}, "ndcg@10", None),
        ({"nuggets": False}, "nugget_recall_vital_strict", NO_NUGGETS),
        ({"nuggets": False}, "faithfulness", None),
        ({"references": False}, "context_recall", NO_REFERENCES),
        ({"references": False}, "claim_f1", NO_REFERENCES),
        ({"references": False}, "faithfulness", None),
        ({"references": False}, "ndcg@10", None),
        ({"turns": False}, "contradiction", NO_TURNS),
        ({"turns": False}, "faithfulness", None),
        ({"turns": False}, "ndcg@10", None),
        ({"answers": False}, "faithfulness", NO_ANSWER),
        ({"answers": False}, "nugget_recall", NO_ANSWER),
        ({"answers": False}, "claim_recall", NO_ANSWER),
        ({"answers": False}, "contradiction", NO_ANSWER),
        ({"answers": False, "passages": False}, "attribution_rate", NO_ANSWER),  # the answer is named first
        ({"answers": False}, "ndcg@10", None),
        ({"answers": False}, "ragas_context_precision@5", None),
        ({"answers": False}, "coverage_recall@5", None),
        ({"answers": None}, "faithfulness", None),
        ({"passages": False}, "ndcg@10", NO_PASSAGES),
        ({"passages": False}, "span_recall@5", NO_PASSAGES),
        ({"passages": False}, "ragas_context_precision@5", NO_PASSAGES),
        ({"passages": False}, "coverage_recall@5", NO_PASSAGES),
        ({"passages": False}, "faithfulness", NO_PASSAGES),  # the answer against its passages
        ({"passages": False}, "claim_f1", None),  # the answer against the reference: no passage read
        ({"passages": False}, "answer_relevance", None),
        ({"passages": False}, "nugget_recall", None),
        ({"passages": False}, "contradiction", None),
        ({"passages": None}, "ndcg@10", None),
    ],
)
def test_each_rule_refuses_its_names_with_its_reason_and_no_others(
    lacking: dict[str, bool | None], name: str, why: str | None
) -> None:
    here = replace(EVERYTHING, **lacking)
    assert here.why_not(name) == why
    assert here.keep(name) is (why is None)


def _golden() -> GoldenSet:
    """The evaluator's golden set stripped bare: no reference answer, claim, nugget, document text or conversation."""
    gold = make_golden()
    for question in gold.questions:
        question.reference_answer, question.claims, question.nuggets = None, [], []
    for doc in gold.documents:
        doc.text = " \n"
    gold.nuggets, gold.conversations = [], []
    return gold


def _run(*lines: RunLine) -> LoadedRun:
    return LoadedRun(name="r", path=Path("r.jsonl"), kind="jsonl", lines={line.query_id: line for line in lines},
                     counts=RunCounts(lines=len(lines)))  # fmt: skip


def test_of_reads_a_bare_golden_set_as_holding_nothing() -> None:
    bare = Available.of(_golden(), None, judged=False)
    assert bare == Available(judged=False, nuggets=False, support=False, references=False, text=False, turns=False,
                             passages=None, answers=None, rewrites=None)  # fmt: skip


def test_of_takes_a_claim_or_a_reference_answer_alone_as_references() -> None:
    claims_only, answer_only = make_golden(), make_golden()
    for question in claims_only.questions:
        question.reference_answer = None
    for question in answer_only.questions:
        question.claims = []
    assert Available.of(claims_only, None, judged=True).references
    assert Available.of(answer_only, None, judged=True).references


def test_of_needs_a_conversation_of_two_turns_exactly_two_is_enough() -> None:
    gold = _golden()
    ids = [q.id for q in gold.questions]
    gold.conversations = [Conversation(id="c1", turns=[Turn(question_id=ids[0], utterance="one")])]
    assert not Available.of(gold, None, judged=True).turns
    gold.conversations.append(
        Conversation(id="c2", turns=[Turn(question_id=ids[1], utterance="one"),
                                     Turn(question_id=ids[2], utterance="and two?", depends_on_history=True)])
    )  # fmt: skip
    assert Available.of(gold, None, judged=True).turns


def test_of_reads_passages_answers_and_rewrites_from_any_line_of_any_run() -> None:
    gold = _golden()
    blank = _run(RunLine(query_id="q1", ranked=[], scores={}, answer=None),
                 RunLine(query_id="q2", ranked=[], scores={}, answer="  \n"))  # fmt: skip
    assert Available.of(gold, [blank], judged=True) == replace(
        Available.of(gold, None, judged=True), passages=False, answers=False, rewrites=False, steps=False
    )
    full = _run(RunLine(query_id="q3", ranked=["c1"], scores={"c1": 1.0}, answer="Thirty days.", rewrite="Why?",
                        steps=[Search("thirty", ("c1",))]))  # fmt: skip
    assert Available.of(gold, [blank, full], judged=True) == replace(
        Available.of(gold, None, judged=True), passages=True, answers=True, rewrites=True, steps=True
    )
    answered = _run(RunLine(query_id="q4", ranked=[], scores={}, answer="Yes."))
    seen = Available.of(gold, [blank, answered], judged=True)
    assert (seen.passages, seen.answers, seen.rewrites) == (False, True, False)
    assert seen.why_not("faithfulness") == NO_PASSAGES and seen.why_not("answer_relevance") is None


def test_the_measures_of_a_trajectory_need_a_line_with_steps_and_hop_coverage_a_question_with_hops() -> None:
    no_steps = replace(EVERYTHING, steps=False)
    said = "no run line carries steps (a system that searches several times)"
    assert no_steps.why_not("trajectory_recall") == said
    assert no_steps.why_not("looped") == said
    assert replace(EVERYTHING, steps=None).why_not("evidence_dropped") is None  # runs not read yet: not refused
    no_hops = replace(EVERYTHING, hops=False)
    said = "no question of the golden set has hops (multi-hop or comparison questions)"
    assert no_hops.why_not("hop_coverage") == said
    assert no_hops.why_not("trajectory_recall") is None
    no_tools = replace(EVERYTHING, tool_calls=False)
    assert no_tools.why_not("tool_name_f1") == "no question of the golden set has reference tool calls"
    assert no_tools.why_not("tool_calls") is None  # how many calls a system made needs no reference
