"""Pins of a run's lines assembled against a golden set (runs/assemble.py): what each line counts, the notes that
name it, the order of its passages, its citations read through the run's own ids, and its steps' passages resolved
with the same rules as its context (expected values worked out by hand from the module docstring)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from evaluate_fixture import make_golden, qid
from passages_fixture import DOCS, TIME, chunk_text, make_passages_golden, paragraph_chunks

from assay.errors import FormatError
from assay.formats.golden import GoldenSet
from assay.pipelines.evaluate.runs.loaded import LoadedRun, Search
from assay.pipelines.evaluate.runs.read import load_run
from assay.pipelines.evaluate.runs.sources import JSONL_EXPECTED, TREC_EXPECTED
from assay.types import (
    Conversation,
    Document,
    LlmStep,
    Manifest,
    Provenance,
    Question,
    RelevanceLabel,
    ToolStep,
    Turn,
)

REFUNDS = chunk_text("returns#2")  # "Refunds are issued to the original payment method within 5 business days."
NOWHERE = "Our stores open at nine every morning and close at six in the evening."


def _load(lines: list[dict[str, Any]]) -> LoadedRun:
    return load_run(("r", lines), make_passages_golden())


def test_what_a_run_gets_wrong_is_counted_and_named() -> None:
    run = _load([
        {"query_id": "q1", "retrieved": ["returns#1", "nowhere#9", "returns#1", {"id": "mine", "text": REFUNDS}],
         "answer": "Thirty days."},
        {"query_id": "q-unknown", "retrieved": ["tent#1"]},
        {"query_id": "q2", "retrieved": [], "answer": "   "},
        {"query_id": "q1", "retrieved": ["returns#4"], "answer": "Again."},  # the first line of q1 stands
        {"query_id": "q3", "retrieved": ["shipping#2"], "error": {"kind": "timeout"}},
    ])  # fmt: skip
    c = run.counts
    assert (c.lines, c.queries_evaluated, c.missing_queries, c.unknown_query_ids) == (5, 3, 0, 1)
    assert (c.unknown_chunk_ids, c.duplicate_ids, c.empty_retrieved, c.failed) == (1, 2, 1, 1)
    assert (c.with_answer, c.empty_answers) == (1, 1)
    # every item of the lines read (the repeated q1 line and the failed line are never resolved)
    assert c.matched_by == {"exact": 1, "id": 2, "unmatched": 1}
    assert list(c.matched_by) == ["exact", "id", "unmatched"]
    assert run.lines["q1"].ranked == ["returns#1", "nowhere#9", "returns#2"]
    assert run.lines["q3"].ranked == [] and run.lines["q3"].error is not None
    assert run.notes == [
        "r: 1 line(s) name a query the golden set does not have (skipped).",
        "r: 1 retrieved id(s) are not chunks of the golden set and come without a text (counted as not relevant; "
        'give each item its text, {"id": ..., "text": ...}, to have it located).',
        "r: the system failed on 1 question(s) (0 on the recall-type answer measures, every other metric of them "
        "unscored).",
        'r: 1 empty answer(s) ("" or only whitespace, or none on the line): 0 on the recall-type answer measures '
        '(nugget recall, claim recall, claim F1), unscored ("empty answer") on the others.',
    ]


def test_a_missing_answer_in_an_answering_run_is_empty_and_a_missing_question_is_named() -> None:
    run = _load([
        {"query_id": "q1", "retrieved": ["returns#1"]},  # no answer, in a run that answers: empty
        {"query_id": "q2", "retrieved": ["tent#1"], "answer": "3.2 kg."},
        {"query_id": "q-x", "retrieved": [{"text": NOWHERE}]},
    ])  # fmt: skip
    assert (run.counts.empty_answers, run.counts.with_answer, run.counts.missing_queries) == (1, 1, 1)
    assert "r: 1 golden question(s) have no line in the run (left out)." in run.notes
    retrieval_only = _load([{"query_id": "q1", "retrieved": ["returns#1"]}])
    assert (retrieval_only.counts.empty_answers, retrieval_only.counts.with_answer) == (0, 0)
    assert "r: 2 golden question(s) have no line in the run (left out)." in retrieval_only.notes


def test_a_text_found_in_no_document_is_named_apart_from_unknown_ids() -> None:
    run = _load([{"query_id": "q1", "retrieved": [{"text": NOWHERE}, {"text": NOWHERE + " Twice."}, "returns#1"]}])
    assert run.counts.unknown_chunk_ids == 0 and run.counts.matched_by == {"id": 1, "unmatched": 2}
    assert run.notes == [
        "r: 2 retrieved text(s) were found in no golden document (labelled by the judge when one is given, else "
        "unlabelled).",
        "r: 2 golden question(s) have no line in the run (left out).",
    ]
    line = run.lines["q1"]
    assert len(line.ranked) == 3 and line.ranked[2] == "returns#1"
    assert line.texts[line.ranked[0]] == NOWHERE  # a passage found nowhere keeps its own text
    assert line.texts["returns#1"] == chunk_text("returns#1")


def test_scores_order_the_passages_ties_by_id_descending_else_the_list_order() -> None:
    scored = [{"id": "returns#1", "score": 0.5}, {"id": "returns#2", "score": 0.9}, {"id": "returns#4", "score": 0.5}]
    run = _load([{"query_id": "q1", "retrieved": scored}, {"query_id": "q2", "retrieved": ["tent#2", "tent#1"]}])
    assert run.lines["q1"].ranked == ["returns#2", "returns#4", "returns#1"]
    assert run.lines["q1"].scores == {"returns#1": 0.5, "returns#2": 0.9, "returns#4": 0.5}
    # without scores the list order: 2 items, scored 2 and 1
    assert run.lines["q2"].ranked == ["tent#2", "tent#1"]
    assert run.lines["q2"].scores == {"tent#2": 2.0, "tent#1": 1.0}


def test_citations_name_the_passages_the_run_s_own_ids_were_given_to() -> None:
    retrieved = [{"id": "mine", "text": REFUNDS}, "returns#1", {"id": "mine", "text": chunk_text("returns#4")}]
    run = _load([{"query_id": "q1", "retrieved": retrieved, "answer": "a", "citations": ["mine", "returns#1", "x"]}])
    line = run.lines["q1"]
    assert line.citations == ["returns#2", "returns#1", "x"]  # the first passage given an id is the one it names
    assert line.located["returns#2"].match == "exact"
    assert line.texts == {"returns#2": REFUNDS, "returns#1": chunk_text("returns#1"),
                          "returns#4": chunk_text("returns#4")}  # fmt: skip


def test_a_run_of_no_lines_is_an_error() -> None:
    with pytest.raises(FormatError, match="no run lines"):
        _load([])


# ---------------------------------------------------------------------------------------------------------- steps


def test_a_search_s_passages_are_resolved_once_each_and_kept_apart_from_the_context() -> None:
    tool = {"kind": "tool", "name": "calculator", "arguments": {"expression": "2 + 2"}, "output": "4"}
    steps = [
        {"kind": "retrieval", "query": "refund time", "latency_ms": 12.5,
         "retrieved": ["returns#1", {"text": REFUNDS}, "returns#1", {"text": NOWHERE}, {"text": NOWHERE}]},
        tool,
        {"kind": "retrieval", "query": "again", "rerank": True, "retrieved": [{"id": "mine", "text": REFUNDS}]},
        {"kind": "llm", "model": "m", "prompt_tokens": 3},
    ]  # fmt: skip
    run = _load([{"query_id": "q1", "retrieved": ["returns#1"], "answer": "a", "steps": steps}])
    line = run.lines["q1"]
    first, called, second, model = line.steps
    assert isinstance(first, Search) and isinstance(second, Search)
    assert (first.query, first.rerank, first.latency_ms) == ("refund time", False, 12.5)
    assert first.units[:2] == ("returns#1", "returns#2") and len(first.units) == 3  # repeats once each
    nowhere = first.units[2]
    assert (second.query, second.rerank, second.latency_ms, second.units) == ("again", True, None, ("returns#2",))
    assert isinstance(called, ToolStep) and called.name == "calculator" and called.output == "4"
    assert isinstance(model, LlmStep) and model.prompt_tokens == 3
    # the context's passage stays the context's; a search's own passages are kept by unit
    assert set(line.step_found) == {"returns#2", nowhere}
    assert line.step_found["returns#2"].text == REFUNDS and line.step_found[nowhere].text == NOWHERE
    assert run.counts.step_passages_unlocated == 1  # the passage found nowhere, once though returned twice
    assert run.counts.matched_by == {"id": 1}  # a search's passages are not the context's
    assert run.notes[-1] == ("r: 1 passage(s) of search steps were found in no golden document (lines 1; never "
                             "relevant: give each its text or the golden chunk id).")  # fmt: skip


def test_the_first_place_a_search_found_a_passage_is_kept() -> None:
    steps = [
        {"kind": "retrieval", "retrieved": [{"doc_id": "returns", "start": 0, "end": len(DOCS["returns"])}]},
        {"kind": "retrieval", "retrieved": [{"id": "returns#2"}]},
        {"kind": "retrieval", "retrieved": [{"text": REFUNDS}]},
    ]
    line = _load([{"query_id": "q1", "retrieved": [], "steps": steps}]).lines["q1"]
    assert line.steps[1].units == line.steps[2].units == ("returns#2",)  # type: ignore[union-attr]
    assert line.step_found["returns#2"].match == "id"  # the second search's, not the third's


def test_lines_with_passages_found_nowhere_are_named_up_to_ten() -> None:
    golden = make_golden(n=12)  # documents without text: a passage given by text is found nowhere
    step = {"kind": "retrieval", "retrieved": [{"text": NOWHERE}]}
    lines = [{"query_id": qid(i), "retrieved": [], "steps": [step]} for i in range(11)]
    run = load_run(("r", [*lines, {"query_id": qid(11), "retrieved": []}]), golden)
    assert run.counts.step_passages_unlocated == 11
    assert run.notes[-1] == (
        "r: 11 passage(s) of search steps were found in no golden document (lines 1, 2, 3, 4, "
        "5, 6, 7, 8, 9, 10, ...; never relevant: give each its text or the golden chunk id)."
    )
    ten = load_run(("r", [*lines[:10], {"query_id": qid(10), "retrieved": []}, lines[0]]), golden)
    assert ten.counts.step_passages_unlocated == 10  # the repeated line 12 is not read
    assert "(lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10; never" in ten.notes[-1]
    two = [{"query_id": qid(0), "retrieved": [], "steps": [step, {**step, "retrieved": [{"text": "Elsewhere."}]}]}]
    assert load_run(("r", two), golden).notes[-1].startswith("r: 2 passage(s) of search steps were found in no golden "
                                                             "document (lines 1;")  # fmt: skip


def test_a_run_without_unlocated_search_passages_has_no_such_note() -> None:
    steps = [{"kind": "retrieval", "retrieved": ["returns#1"]}]
    run = _load([{"query_id": "q1", "retrieved": [], "steps": steps}, {"query_id": "q2", "retrieved": []},
                 {"query_id": "q3", "retrieved": []}])  # fmt: skip
    assert run.counts.step_passages_unlocated == 0 and run.notes == []


# ---------------------------------------------------------------------------------------------- conversations


def _talk() -> GoldenSet:
    """Four questions; q00 and q01 are turns 0 and 1 of conversation c0, whose turn 2 is a context turn (c0-t2)."""
    gold = make_golden(n=4)
    context = Turn(question_id="c0-t2", utterance="and that?", judged=False, rewrite="And that?", answer="x")
    turns = [Turn(question_id=qid(0), utterance="first"), Turn(question_id=qid(1), utterance="and then?"), context]
    gold.conversations = [Conversation(id="c0", turns=turns)]
    return gold


def _said(lines: list[dict[str, Any]]) -> FormatError:
    with pytest.raises(FormatError) as caught:
        load_run(("r", lines), _talk())
    return caught.value


def test_a_line_may_name_its_turn_or_only_its_conversation_or_neither() -> None:
    lines = [
        {"query_id": qid(0), "retrieved": [], "conversation_id": "c0", "turn": 0},
        {"query_id": qid(1), "retrieved": [], "conversation_id": "c0"},
        {"query_id": qid(2), "retrieved": []},
    ]
    assert set(load_run(("r", lines), _talk()).lines) == {qid(0), qid(1), qid(2)}


def test_a_line_naming_another_turn_or_conversation_is_an_error_at_its_line() -> None:
    other_turn = _said([{"query_id": qid(0), "retrieved": []},
                        {"query_id": qid(1), "retrieved": [], "conversation_id": "c0", "turn": 0}])  # fmt: skip
    assert other_turn.line == 2
    assert other_turn.problem == ("query 'q01' is given as turn 0 of conversation 'c0', but in the golden set it is "
                                  "turn 1 of conversation 'c0'")  # fmt: skip
    assert other_turn.expected == (
        "a run made on this golden set (assay run GOLDEN ...), or the line's "
        "conversation_id and turn as the golden set's conversations.jsonl has them"
    )
    other_conversation = _said([{"query_id": qid(1), "retrieved": [], "conversation_id": "c1", "turn": 1}])
    assert other_conversation.problem.endswith("it is turn 1 of conversation 'c0'")
    no_conversation = _said([{"query_id": qid(2), "retrieved": [], "conversation_id": "c0", "turn": 2}])
    assert no_conversation.problem == ("query 'q02' is given as turn 2 of conversation 'c0', but in the golden set it "
                                       "is no turn of a conversation")  # fmt: skip
    turn_alone = _said([{"query_id": qid(2), "retrieved": [], "turn": 1}])
    assert turn_alone.problem.startswith("query 'q02' is given as turn 1 of conversation None")
    unknown = _said([{"query_id": "c9-t1", "retrieved": [], "conversation_id": "c9", "turn": 1}])
    assert unknown.problem.endswith("but in the golden set it has no such question or turn")


def test_an_unknown_query_without_a_conversation_is_counted_not_refused() -> None:
    run = load_run(("r", [{"query_id": "c9-t1", "retrieved": []}, {"query_id": qid(0), "retrieved": []}]), _talk())
    assert run.counts.unknown_query_ids == 1 and set(run.lines) == {qid(0)}


def test_a_context_turn_s_line_is_kept_apart_first_line_standing_and_checked() -> None:
    lines = [
        {"query_id": "c0-t2", "retrieved": ["x"], "answer": "the first", "conversation_id": "c0", "turn": 2},
        {"query_id": qid(0), "retrieved": [], "answer": "a"},
        {"query_id": "c0-t2", "retrieved": [], "answer": "the second"},
    ]
    run = load_run(("r", lines), _talk())
    assert (run.counts.context_turns, run.counts.lines, run.counts.queries_evaluated) == (2, 3, 1)
    assert set(run.lines) == {qid(0)} and set(run.context) == {"c0-t2"}
    kept = run.context["c0-t2"]
    assert (kept.query_id, kept.answer, kept.ranked, kept.scores, kept.error) == ("c0-t2", "the first", [], {}, None)
    failed = load_run(("r", [{"query_id": "c0-t2", "error": {"kind": "timeout"}}]), _talk()).context["c0-t2"]
    assert failed.error is not None and failed.error.kind == "timeout" and failed.answer is None
    wrong = _said([{"query_id": "c0-t2", "retrieved": [], "conversation_id": "c0", "turn": 1}])
    assert wrong.problem.endswith("it is turn 2 of conversation 'c0'")


# ------------------------------------------------------------------------------------------- more of the counts


def test_each_failure_duplicate_and_unknown_query_is_counted() -> None:
    run = _load([
        {"query_id": "q1", "retrieved": ["returns#1", "returns#1", "returns#2", "returns#2"]},
        {"query_id": "q2", "error": {"kind": "timeout"}, "citations": ["c7"]},
        {"query_id": "q3", "error": {"kind": "http_status"}},
        {"query_id": "q-x", "retrieved": []},
        {"query_id": "q-y", "retrieved": []},
    ])  # fmt: skip
    assert (run.counts.failed, run.counts.duplicate_ids, run.counts.unknown_query_ids) == (2, 2, 2)
    failed = run.lines["q2"]
    assert (failed.query_id, failed.citations, failed.ranked, failed.scores) == ("q2", ["c7"], [], {})


def test_a_line_keeps_its_query_id_and_its_rewrite() -> None:
    failed = {"query_id": "q2", "retrieved": [], "error": {"kind": "timeout"}, "rewrite": "Tent weight?"}
    run = _load([{"query_id": "q1", "retrieved": ["returns#1"], "rewrite": "How long for returns?"}, failed])
    assert [(line.query_id, line.rewrite) for line in run.lines.values()] == [
        ("q1", "How long for returns?"),
        ("q2", "Tent weight?"),
    ]


def test_an_answer_given_once_and_once_empty_makes_a_missing_one_empty_too() -> None:
    run = _load([{"query_id": "q1", "retrieved": [], "answer": "a"}, {"query_id": "q2", "retrieved": [], "answer": ""},
                 {"query_id": "q3", "retrieved": []}])  # fmt: skip
    assert (run.counts.with_answer, run.counts.empty_answers) == (1, 2)


def test_a_question_without_labels_is_read_as_any_other() -> None:
    gold = make_passages_golden()
    gold.qrels = [label for label in gold.qrels if label.query_id != "q3"]
    run = load_run(("r", [{"query_id": "q3", "retrieved": [{"text": chunk_text("shipping#2")}],
                           "steps": [{"kind": "retrieval", "retrieved": ["shipping#1"]}]}]), gold)  # fmt: skip
    assert run.lines["q3"].ranked == ["shipping#2"]


# ------------------------------------------------------------------------------------------ errors name the line


@pytest.mark.parametrize(
    "bad",
    [
        {"retrieved": [{"doc_id": "nope", "start": 0, "end": 3}]},
        {"retrieved": [], "steps": [{"kind": "retrieval", "retrieved": [{"doc_id": "nope", "start": 0, "end": 3}]}]},
    ],
)
def test_a_bad_passage_of_the_context_or_a_search_names_the_run_and_the_line(bad: dict[str, Any]) -> None:
    with pytest.raises(FormatError) as caught:
        _load([{"query_id": "q1", "retrieved": []}, {"query_id": "q2", **bad}])
    error = caught.value
    assert (error.path, error.line, error.problem) == ("run 'r' (in memory), item", 2, "unknown doc_id 'nope'")


def test_a_context_turn_on_the_wrong_turn_names_the_run() -> None:
    wrong = _said([{"query_id": qid(0), "retrieved": []},
                   {"query_id": "c0-t2", "retrieved": [], "conversation_id": "c0", "turn": 0}])  # fmt: skip
    assert (wrong.path, wrong.line) == ("run 'r' (in memory), item", 2)


def test_no_run_lines_is_an_error_saying_what_a_line_looks_like(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as caught:
        _load([])
    error = caught.value
    assert (error.path, error.line, error.problem, error.expected) == (
        "run 'r' (in memory), item",
        None,
        "no run lines",
        JSONL_EXPECTED,
    )
    trec = tmp_path / "run.txt"
    trec.write_text("\n", encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        load_run(trec, make_passages_golden())
    assert (caught.value.path, caught.value.expected) == (str(trec), TREC_EXPECTED)


def test_a_ragas_file_of_no_rows_is_no_error(tmp_path: Path) -> None:
    path = tmp_path / "ragas.csv"
    path.write_text("user_input,retrieved_contexts,response\n", encoding="utf-8")
    run = load_run(path, make_passages_golden())
    assert run.kind == "ragas" and run.lines == {} and run.counts.missing_queries == 3


# ----------------------------------------------------------------------------------------- a repeated text


SAME = "The same sentence stands in both guides."


def _twice() -> GoldenSet:
    """Two documents holding one paragraph word for word; the question's label grades the copy in ``b``."""
    pages = {"a": f"# A\n\n{SAME}\n\nOther text of a.", "b": f"# B\n\n{SAME}\n\nMore text of b."}
    docs = [Document(id=d, source=f"{d}.md", text=t, content_hash=d) for d, t in pages.items()]
    made = Provenance(source="judge", model="fixture", time=TIME)
    qrels = [RelevanceLabel(query_id="q1", chunk_id="b#1", grade=2, provenance=made)]
    questions = [Question(id="q1", text="Where?"), Question(id="q2", text="Which?")]
    return GoldenSet(Manifest(assay_version="test"), docs, paragraph_chunks(pages), questions, qrels, [])


def test_a_repeated_text_of_the_context_or_a_search_is_placed_where_the_question_s_label_grades_it() -> None:
    step = {"kind": "retrieval", "retrieved": [{"text": SAME}]}
    lines = [{"query_id": q, "retrieved": [{"text": SAME}], "steps": [step]} for q in ("q1", "q2")]
    run = load_run(("r", lines), _twice())
    # q1's label grades the copy in b; q2 has none: the lowest document id
    assert run.lines["q1"].ranked == ["b#1"] and run.lines["q2"].ranked == ["a#1"]
    searched = [line.steps[0].units for line in run.lines.values()]  # type: ignore[union-attr]
    assert searched == [("b#1",), ("a#1",)]
