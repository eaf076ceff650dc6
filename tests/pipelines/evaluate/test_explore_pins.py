"""Pins of the explorer's per-question views found by the mutation habit (scripts/mutation.sh): built here from
hand-made runs, passage rows, claims and trajectories, so every rank, text, grade and step figure is the one
written in the test (no evaluation runs)."""

from __future__ import annotations

import math
from pathlib import Path

from passages_fixture import chunk_text, make_passages_golden

from assay.formats.golden import GoldenSet
from assay.metrics.trajectory import Trajectory
from assay.pipelines.evaluate.evaluated import PassageRow, SupportRow
from assay.pipelines.evaluate.explore import Paths, question_views
from assay.pipelines.evaluate.runs.loaded import LoadedRun, RunLine, Search
from assay.pipelines.evaluate.runs.locate import Located
from assay.pipelines.evaluate.scoring.trajectory import QuestionPath
from assay.results import ClaimView, PassageView, RunCounts, StepView
from assay.types import LlmStep, Nugget, Passage, RunError, ToolCall, ToolStep

STORES = "Our stores open at nine every morning."


def _golden() -> GoldenSet:
    """The passages fixture's set with a judged passage (p:x) and one whose id is a chunk's (tent#1: the chunk's own
    text wins), and nuggets for q1."""
    gold = make_passages_golden()
    passages = [Passage(id="p:x", text=STORES, match="unmatched"),
                Passage(id="tent#1", text="a judged copy of the tent paragraph", match="unmatched")]  # fmt: skip
    nuggets = [
        Nugget(id="n1", text="30 days", importance="vital"),
        Nugget(id="n2", text="full refund", importance="okay"),
    ]
    q1 = gold.questions[0].model_copy(update={"nuggets": nuggets, "difficulty": "hard"})
    return GoldenSet(
        gold.manifest, gold.documents, gold.chunks, [q1, *gold.questions[1:]], gold.qrels, passages=passages
    )


def _run(name: str, lines: list[RunLine]) -> LoadedRun:
    return LoadedRun(name=name, path=Path(f"{name}.jsonl"), kind="jsonl", lines={line.query_id: line for line in lines},
                     counts=RunCounts())  # fmt: skip


def _row(run: str, qid: str, rank: int, unit: str, grade: int | None, how: str) -> PassageRow:
    return PassageRow(run=run, query_id=qid, rank=rank, unit=unit, match="id", doc_id=None, start=None, end=None,
                      score=None, grade=grade, labelled_by=how)  # fmt: skip


def test_each_question_some_run_answered_with_its_passages_claims_and_errors() -> None:
    ranked = ["returns#1", "p:x", "t:own", "t:blank", "tent#1", "returns#2", "returns#4"]
    texts = {"t:own": "the run's own text", "returns#1": "the run's copy"}
    q1 = RunLine(query_id="q1", ranked=ranked, scores={}, texts=texts, answer="Within 30 days.")
    a = _run("a", [q1, RunLine(query_id="q3", ranked=[], scores={}, error=RunError(kind="timeout"))])
    b = _run("b", [RunLine(query_id="q3", ranked=[], scores={},
                           error=RunError(kind="http", message="503 from proxy X"))])  # fmt: skip
    passages = [
        _row("a", "q1", 1, "returns#1", 3, "chunk"), _row("a", "q1", 2, "p:x", 1, "stored"),
        _row("a", "q1", 3, "t:own", None, "unlabelled"), _row("a", "q1", 4, "t:blank", None, "unlabelled"),
        _row("a", "q1", 5, "tent#1", 0, "chunk"),
        # returns#2 has no row (beyond the labelled depth): it and everything after it are not shown
        _row("a", "q1", 7, "returns#4", 0, "chunk"), _row("b", "q1", 1, "returns#1", 3, "chunk"),
    ]  # fmt: skip
    support = [
        SupportRow(run="a", query_id="q1", kind="answer", claim="Returns are accepted within 30 days.",
                   verdict="supported", support={"p:x": 0.5, "t:own": 0.0, "returns#1": 1.0, "returns#2": 1.0},
                   reason="the returns paragraph says so"),
        SupportRow(run="a", query_id="q1", kind="reference", claim="within 30 days of delivery", verdict="missing",
                   support={}, reason=""),
        SupportRow(run="b", query_id="q1", kind="answer", claim="not b's line", verdict="supported", support={},
                   reason=""),
    ]  # fmt: skip
    views = question_views(_golden(), [a, b], passages, support)
    assert [v.query_id for v in views] == ["q1", "q3"]  # q2: no run answered it
    first = views[0]
    assert (first.text, first.type, first.difficulty, first.reference_answer) == (
        "How long do customers have to return an item?",
        "factoid",
        "hard",
        "within 30 days of delivery",
    )
    assert first.nuggets == [("vital", "30 days"), ("okay", "full refund")]
    (side,) = first.runs
    assert (side.run, side.answer, side.error) == ("a", "Within 30 days.", None)
    assert side.passages == [
        PassageView(rank=1, unit="returns#1", text=chunk_text("returns#1"), grade=3, how="chunk"),
        PassageView(rank=2, unit="p:x", text=STORES, grade=1, how="stored"),
        PassageView(rank=3, unit="t:own", text="the run's own text", grade=None, how="unlabelled"),
        PassageView(rank=4, unit="t:blank", text="", grade=None, how="unlabelled"),  # no text anywhere
        PassageView(rank=5, unit="tent#1", text=chunk_text("tent#1"), grade=0, how="chunk"),
    ]
    assert side.claims == [
        ClaimView(kind="answer", text="Returns are accepted within 30 days.", verdict="supported",
                  reason="the returns paragraph says so", ranks=[1, 2]),
        ClaimView(kind="reference", text="within 30 days of delivery", verdict="missing", reason="", ranks=[]),
    ]  # fmt: skip
    assert side.steps == [] and side.path == [] and side.hops == []
    assert [(s.run, s.error, s.passages) for s in views[1].runs] == [
        ("a", "timeout", []),
        ("b", "http: 503 from proxy X", []),
    ]


def _path(loop: str | None = None) -> QuestionPath:
    measured = Trajectory(recall_after=(0.25, math.nan), recall=0.25, dropped=0.125, added=(10, 0), lost=(3, 7),
                          hop_found=(1, None, 0), n_relevant=40)  # fmt: skip
    return QuestionPath(("tent weight", None), measured, ("tent#1", "shipping#2", "returns#1"), loop)


def test_each_step_of_a_line_with_steps_its_hops_and_the_path() -> None:
    steps = [
        Search(query="tent weight", units=("tent#1", "t:frag", "t:none")),
        ToolStep(kind="tool", name="calc", arguments={"b": 2, "a": "x"}, output="6.4", error="slow"),
        LlmStep(kind="llm", model="small", prompt_tokens=7),
        LlmStep(kind="llm", completion_tokens=4),
        LlmStep(kind="llm", model="none"),
        Search(query=None, units=("tent#2",)),
    ]
    found = {"t:frag": Located(unit="t:frag", match="exact", span=None, text="weighs 3.2 kg")}
    line = RunLine(query_id="q2", ranked=["tent#1"], scores={}, steps=list(steps), step_found=found)
    plain = RunLine(query_id="q1", ranked=["returns#1"], scores={})
    # steps, but no path measured for it (a failed line): shown without steps
    unmeasured = RunLine(query_id="q3", ranked=[], scores={}, steps=[Search(query="express", units=("shipping#2",))])
    run = _run("agent", [line, plain, unmeasured])
    passages = [_row("agent", "q2", 1, "tent#1", 3, "chunk"), _row("agent", "q1", 1, "returns#1", 3, "chunk")]
    grades = {"tent#1": (3, "chunk"), "t:frag": (2, "rule"), "tent#2": (0, "chunk")}

    def grade(qid: str, unit: str) -> tuple[int | None, str]:
        assert qid == "q2"
        return grades.get(unit, (None, "unlabelled"))

    # a path for q1 too: its line has no steps, so none are shown
    paths = Paths({("agent", "q2"): _path("step 9 repeats something"), ("agent", "q1"): _path()}, grade)
    q1, q2, q3 = question_views(_golden(), [run], passages, [], paths)
    side = q2.runs[0]
    assert side.steps == [
        StepView(number=1, kind="retrieval", query="tent weight", recall=0.25, added=10, lost=3, passages=[
            PassageView(rank=1, unit="tent#1", text=chunk_text("tent#1"), grade=3, how="chunk"),
            PassageView(rank=2, unit="t:frag", text="weighs 3.2 kg", grade=2, how="rule"),
            PassageView(rank=3, unit="t:none", text="", grade=None, how="unlabelled"),
        ]),
        StepView(number=2, kind="tool", name="calc", arguments='{"a": "x", "b": 2}', output="6.4", error="slow"),
        StepView(number=3, kind="llm", model="small", tokens=7),
        StepView(number=4, kind="llm", tokens=4),
        StepView(number=5, kind="llm", model="none", tokens=None),
        StepView(number=6, kind="retrieval", query=None, recall=None, added=0, lost=7, passages=[
            PassageView(rank=1, unit="tent#2", text=chunk_text("tent#2"), grade=0, how="chunk"),
        ]),
    ]  # fmt: skip
    # hop 1 found after the second search (step 6), hop 2 never, hop 3 after the first (step 1)
    assert side.hops == [("tent#1", 6), ("shipping#2", None), ("returns#1", 1)]
    assert side.path == [
        "never searched for hop 2 of 3 (shipping#2): no search returned half of its evidence",
        "found but dropped: relevant text returned by search 1 (3 characters), search 2 (7 characters) is not in the "
        "final context (evidence_dropped 0.125)",
        "looped: step 9 repeats something",
    ]
    assert q1.runs[0].steps == [] and q1.runs[0].path == [] and q1.runs[0].hops == []
    assert q3.runs[0].steps == [] and q3.runs[0].path == [] and q3.runs[0].hops == []
    without = question_views(_golden(), [run], passages, [])  # no paths at all: the steps are not shown
    assert without[1].runs[0].steps == [] and without[1].runs[0].path == []


def test_reference_calls_are_shown_with_their_arguments_sorted_and_whether_a_step_made_each() -> None:
    """q2's references: calc with its arguments given out of order (the line made it exactly) and another calc call
    it did not make: each shown as name(arguments as JSON, keys sorted)."""
    gold = _golden()
    q2 = gold.question("q2")
    q2.tool_calls = [ToolCall(name="calc", arguments={"b": 2, "a": "x"}),
                     ToolCall(name="calc", arguments={"z": 1, "y": 0})]  # fmt: skip
    steps = [Search(query="tent weight", units=("tent#1",)), Search(query=None, units=()),
             ToolStep(kind="tool", name="calc", arguments={"a": "x", "b": 2})]  # fmt: skip
    line = RunLine(query_id="q2", ranked=["tent#1"], scores={}, steps=list(steps))
    paths = Paths({("agent", "q2"): _path()}, lambda qid, unit: (None, "unlabelled"))
    (view,) = question_views(gold, [_run("agent", [line])], [], [], paths)
    assert view.runs[0].references == [('calc({"a": "x", "b": 2})', True), ('calc({"y": 0, "z": 1})', False)]
