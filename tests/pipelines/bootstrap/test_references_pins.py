"""Drafting claims and nuggets from the reference answers a golden set already has, pinned one promise at a time:
which questions are drafted, what each call is given, the progress it reports, the counts and flags of calls the
judge could not answer, and the questions passed on (:mod:`assay.pipelines.bootstrap.references`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from assay.formats.golden import GoldenSet
from assay.judge.base import ChatRequest
from assay.judge.client import Judge
from assay.judge.limits import RetryPolicy
from assay.judge.outputs import Claims
from assay.judge.results import Judgement
from assay.pipelines.bootstrap import references
from assay.pipelines.bootstrap.references import draft_from_references, to_draft
from assay.testing import FakeBackend
from assay.types import Chunk, Claim, Manifest, Nugget, Provenance, Question, RelevanceLabel, Unscored


def _golden(questions: list[Question], chunks: Sequence[Chunk] = (), qrels: Sequence[RelevanceLabel] = ()) -> GoldenSet:
    return GoldenSet(Manifest(assay_version="test"), chunks=list(chunks), questions=questions, qrels=list(qrels))


def test_only_answerable_questions_with_a_reference_and_nothing_drafted_are_drafted() -> None:
    claim = [Claim(id="c", text="A claim.")]
    nugget = [Nugget(id="n", text="A nugget.", importance="vital")]
    golden = _golden([
        Question(id="plain", text="q?", reference_answer="An answer."),
        Question(id="blank", text="q?", reference_answer="   "),  # whitespace only: no reference
        Question(id="none", text="q?"),  # no reference at all
        Question(id="claimed", text="q?", reference_answer="An answer.", claims=claim),
        Question(id="nuggeted", text="q?", reference_answer="An answer.", nuggets=nugget),
        Question(id="unanswerable", text="q?", reference_answer="Not in the documents.", type="unanswerable"),
    ])  # fmt: skip
    assert [q.id for q in to_draft(golden)] == ["plain"]


def _chunk(cid: str, heading: str = "Refunds") -> Chunk:
    return Chunk(id=cid, doc_id="d", ordinal=0, text=f"text of {cid}", heading_path=["Shop", heading])


def _label(qid: str, cid: str, grade: int | None) -> RelevanceLabel:
    return RelevanceLabel(query_id=qid, chunk_id=cid, grade=grade, provenance=Provenance(source="human"))


def test_each_call_gets_the_reference_and_the_passages_graded_2_or_more_best_first_without_headings() -> None:
    chunks = [_chunk(c) for c in ("c1", "c2", "c3", "c4", "other")]
    qrels = [
        _label("q1", "c1", 1),  # below 2: left out
        _label("q1", "c2", 2),
        _label("q1", "c3", 3),  # the best first
        _label("q1", "gone", 3),  # no such chunk in the set: left out
        _label("q1", "c4", None),  # unscored: left out
        _label("q2", "other", 3),  # another question's
    ]
    q1 = Question(id="q1", text="How long do refunds take?", reference_answer="  Fourteen days. ")
    q2 = Question(id="q2", text="Who pays postage?", reference_answer="The shop.")
    claims, nuggets = references._variables(_golden([q1, q2], chunks, qrels), [q1, q2])
    assert claims == [
        {"question": "How long do refunds take?", "text": "Fourteen days."},
        {"question": "Who pays postage?", "text": "The shop."},
    ]
    assert nuggets[0] == {
        "question": "How long do refunds take?",
        "answer": "Fourteen days.",
        "passages": [{"id": "P1", "text": "text of c3"}, {"id": "P2", "text": "text of c2"}],
    }
    assert nuggets[1]["passages"] == [{"id": "P1", "text": "text of other"}]


def test_at_most_a_builds_number_of_passages_go_with_a_reference() -> None:
    chunks = [_chunk(f"c{i}") for i in range(10)]
    qrels = [_label("q1", f"c{i}", 2) for i in range(10)]
    q1 = Question(id="q1", text="q?", reference_answer="An answer.")
    _, nuggets = references._variables(_golden([q1], chunks, qrels), [q1])
    assert [p["text"] for p in nuggets[0]["passages"]] == [f"text of c{i}" for i in range(8)]  # support_passages 8


def _script(request: ChatRequest) -> str:
    """Claims: the reference's sentences; nuggets: each sentence, vital. The question "Broken?" gets no valid
    nuggets; the question "Silent?" no valid answer at all."""
    question = request.variables["question"]
    if question == "Silent?" or (question == "Broken?" and request.prompt_name == "nuggets"):
        return "not json at all"
    reference = request.variables["text" if request.prompt_name == "claims" else "answer"]
    sentences = [s.strip() + "." for s in reference.split(".") if s.strip()]
    if request.prompt_name == "claims":
        return json.dumps({"claims": sentences})
    return json.dumps({"nuggets": [{"text": s, "importance": "vital"} for s in sentences]})


def _judge() -> Judge:
    return Judge(FakeBackend(_script), model="test/judge", retry=RetryPolicy.immediate())


def test_unscored_calls_are_counted_and_flagged_and_a_question_with_claims_only_is_drafted() -> None:
    ok = Question(id="ok", text="Fine?", reference_answer="Yes. Twice.")
    broken = Question(id="broken", text="Broken?", reference_answer="Half. Of it.")
    silent = Question(id="silent", text="Silent?", reference_answer="Nothing.")
    kept = Question(id="kept", text="Kept?", claims=[Claim(id="k", text="Given.")])  # nothing to draft
    golden = _golden([ok, broken, silent, kept])
    out = draft_from_references(golden, judge=_judge())
    assert out.records == [ok, broken, silent, kept]  # every question passed on, in order
    assert out.counts == {"drafted_claims": 2, "drafted_nuggets": 1, "draft_unscored": 3}  # broken 1, silent 2
    assert [c.text for c in broken.claims] == ["Half.", "Of it."] and broken.nuggets == []
    assert broken.flags["claims_drafted"] is True  # claims alone make a drafted question
    assert "claims_drafted" not in silent.flags and "draft_unscored" not in ok.flags
    for question in (broken, silent):
        reason = question.flags["draft_unscored"]
        assert isinstance(reason, str) and reason and reason != "no draft"  # the judge's own reason
    assert golden.manifest.counts["draft_unscored"] == 3


def test_progress_counts_both_calls_of_every_drafted_question() -> None:
    said: list[tuple[str, int, int]] = []
    golden = _golden([Question(id=q, text="Fine?", reference_answer="Yes.") for q in ("a", "b")])
    draft_from_references(golden, judge=_judge(), progress=lambda *p: said.append(p))
    assert said == [("draft", n, 4) for n in range(5)]


def _call(output: Any, unscored: Unscored | None) -> Judgement[Any]:
    return Judgement(output=output, unscored=unscored, cached=False, model="m", prompt="claims@2", prompt_hash="h")


def test_an_unscored_call_keeps_the_judges_reason_or_says_no_draft_without_one() -> None:
    question = Question(id="q", text="q?", reference_answer="A.")
    counts = {"drafted_claims": 0, "drafted_nuggets": 0, "draft_unscored": 0}
    references._apply(question, _call(None, Unscored(reason="the model refused")), _call(None, None), counts)
    assert question.flags == {"draft_unscored": "no draft"}  # the last unscored call's reason; nothing drafted
    assert counts == {"drafted_claims": 0, "drafted_nuggets": 0, "draft_unscored": 2}
    other = Question(id="o", text="q?", reference_answer="A.")
    references._apply(other, _call(Claims(claims=["A."]), None), _call(None, Unscored(reason="cut")), counts)
    assert other.flags == {"draft_unscored": "cut", "claims_drafted": True}
    assert counts == {"drafted_claims": 1, "drafted_nuggets": 0, "draft_unscored": 3}
