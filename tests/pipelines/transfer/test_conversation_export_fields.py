"""Every field the conversation exports write (RAGAS multi-turn, DeepEval, CAsT), read back from the files of a
small hand-made golden set without the ragas and deepeval packages; the reading side's rules (prefix rows merged,
metadata kept, ids, contexts as passages) on small hand-written files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.errors import FormatError, InputError
from assay.formats.golden import CONVERSATIONS, GoldenSet
from assay.pipelines.transfer.conversations import cast_id, write_cast, write_deepeval, write_ragas_multiturn
from assay.pipelines.transfer.conversations_import import (
    context_chunk,
    conversation_records,
    read_deepeval,
    read_ragas_multiturn,
)
from assay.types import Turn

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "v1"
GIFT, KAYAK = "Can I get a refund for a gift card?", "Can I get a refund for a kayak?"
SHIP = "and how long does shipping take?"
NO_GIFT, YES_KAYAK, DAYS = "No, gift cards cannot be refunded.", "Yes, within 30 days.", "2 to 4 business days."
REFUNDS0, REFUNDS1, FAQ = "policies/refunds.md#0-1a2b3c4d", "policies/refunds.md#1-5e6f7a8b", "faq.html#0-9c0d1e2f"
# q2 is also labelled on both refunds chunks at grade 2 (refunds#1 written first, so only the id orders the tie)
EXTRA = [
    {"query_id": "q2", "chunk_id": REFUNDS1, "grade": 2, "provenance": {"source": "human", "annotator": "ana",
                                                                        "time": "2025-01-16T09:00:00Z"}},
    {"query_id": "q2", "chunk_id": REFUNDS0, "grade": 2, "provenance": {"source": "human", "annotator": "ana",
                                                                        "time": "2025-01-16T09:00:00Z"}},
]  # fmt: skip


@pytest.fixture
def golden(tmp_path: Path) -> GoldenSet:
    """The version 1 fixture: conversation c-1 = q1 (judged), a context turn c-1-t2, q2 (judged). Scored grades:
    q1 refunds#1 3, refunds#0 0 (a human's 0 over the judge's 1; faq unscored); q2 faq 3, refunds#1 2, refunds#0 2."""
    folder = tmp_path / "golden"
    shutil.copytree(FIXTURES / "golden", folder)
    shutil.copy(FIXTURES / CONVERSATIONS, folder / CONVERSATIONS)
    with (folder / "qrels.jsonl").open("a", encoding="utf-8") as out:
        out.writelines(json.dumps(label) + "\n" for label in EXTRA)
    gold = GoldenSet.load(folder)
    context = Turn(question_id="c-1-t2", utterance="and for a kayak?", judged=False, rewrite=KAYAK, answer=YES_KAYAK,
                   dropped="leakage", depends_on_history=True, dependency="ellipsis")  # fmt: skip
    gold.conversations[0].turns.insert(1, context)
    return gold


def chunk_text(gold: GoldenSet, cid: str) -> str:
    return gold.chunk(cid).text


Q1_META = {"query_id": "q1", "rewrite": GIFT, "dependency": "none", "depends_on_history": False}
CONTEXT_META = {"query_id": "c-1-t2", "rewrite": KAYAK, "dependency": "ellipsis", "depends_on_history": True,
                "judged": False, "dropped": "leakage"}  # fmt: skip
Q2_META = {"query_id": "q2", "rewrite": "How long does standard delivery take?", "dependency": "ellipsis",
           "depends_on_history": True}  # fmt: skip


def test_ragas_rows_hold_the_reference_history_up_to_each_judged_turn(golden: GoldenSet, tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    assert write_ragas_multiturn(golden, path) == 2  # a row per judged turn, none for the context turn
    first, second = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert first == {"user_input": [{"content": GIFT, "type": "human", "metadata": Q1_META}], "reference": NO_GIFT,
                     "conversation_id": "c-1", "turn": 1, "query_id": "q1"}  # fmt: skip
    assert second == {
        "user_input": [
            {"content": GIFT, "type": "human", "metadata": Q1_META},
            {"content": NO_GIFT, "type": "ai"},
            {"content": "and for a kayak?", "type": "human", "metadata": CONTEXT_META},
            {"content": YES_KAYAK, "type": "ai"},
            {"content": SHIP, "type": "human", "metadata": Q2_META},
        ],
        "reference": DAYS,
        "conversation_id": "c-1",
        "turn": 3,
        "query_id": "q2",
    }


def test_deepeval_case_holds_every_turn_with_its_graded_contexts(golden: GoldenSet, tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    assert write_deepeval(golden, path) == 1
    [case] = json.loads(path.read_text(encoding="utf-8"))
    text = {cid: chunk_text(golden, cid) for cid in (REFUNDS0, REFUNDS1, FAQ)}
    assert case == {
        "name": "c-1",
        "scenario": "a gift card bought before a move",
        "expected_outcome": DAYS,
        "turns": [
            {"role": "user", "content": GIFT, "metadata": Q1_META},
            {"role": "assistant", "content": NO_GIFT, "retrieval_context": [text[REFUNDS1]],
             "metadata": {"query_id": "q1"}},
            {"role": "user", "content": "and for a kayak?", "metadata": CONTEXT_META},
            {"role": "assistant", "content": YES_KAYAK, "retrieval_context": [], "metadata": {"query_id": "c-1-t2"}},
            {"role": "user", "content": SHIP, "metadata": Q2_META},
            {"role": "assistant", "content": DAYS, "retrieval_context": [text[FAQ], text[REFUNDS0], text[REFUNDS1]],
             "metadata": {"query_id": "q2"}},
        ],
        "metadata": {"assay": {"conversation_id": "c-1", "source_doc_ids": ["policies/refunds.md", "faq.html"]}},
    }  # fmt: skip
    # grade 0 and up: q1's refunds#0 (a human's 0) joins, after the grade-3 chunk
    write_deepeval(golden, path, min_grade=0)
    [case] = json.loads(path.read_text(encoding="utf-8"))
    assert case["turns"][1]["retrieval_context"] == [text[REFUNDS1], text[REFUNDS0]]
    write_deepeval(golden, path, min_grade=3)
    [case] = json.loads(path.read_text(encoding="utf-8"))
    assert case["turns"][5]["retrieval_context"] == [text[FAQ]]


def test_cast_topics_qrels_and_rewrites(golden: GoldenSet, tmp_path: Path) -> None:
    assert cast_id(golden.conversations[0], 0) == "c-1_1"
    assert write_cast(golden, tmp_path) == {"topics.json": 1, "qrels.txt": 5, "topics.tsv": 3}
    topics = json.loads((tmp_path / "topics.json").read_text(encoding="utf-8"))
    assert topics == [{"number": "c-1", "title": "a gift card bought before a move", "turn": [
        {"number": 1, "raw_utterance": GIFT, "manual_rewritten_utterance": GIFT, "query_id": "q1",
         "dependency": "none"},
        {"number": 2, "raw_utterance": "and for a kayak?", "manual_rewritten_utterance": KAYAK, "query_id": "c-1-t2",
         "dependency": "ellipsis"},
        {"number": 3, "raw_utterance": SHIP, "manual_rewritten_utterance": "How long does standard delivery take?",
         "query_id": "q2", "dependency": "ellipsis"},
    ]}]  # fmt: skip
    assert (tmp_path / "qrels.txt").read_text(encoding="utf-8").splitlines() == [
        f"c-1_1 0 {REFUNDS0} 0", f"c-1_1 0 {REFUNDS1} 3",  # every scored grade, the human's 0 too
        f"c-1_3 0 {FAQ} 3", f"c-1_3 0 {REFUNDS0} 2", f"c-1_3 0 {REFUNDS1} 2",
    ]  # fmt: skip
    assert (tmp_path / "topics.tsv").read_text(encoding="utf-8").splitlines() == [
        f"c-1_1\t{GIFT}",
        f"c-1_2\t{KAYAK}",
        "c-1_3\tHow long does standard delivery take?",
    ]
    # a threshold keeps grades at or above it; a conversation without a scenario has an empty title
    golden.conversations[0] = golden.conversations[0].model_copy(update={"scenario": None})
    assert write_cast(golden, tmp_path, min_grade=2)["qrels.txt"] == 4
    assert f"c-1_1 0 {REFUNDS0} 0" not in (tmp_path / "qrels.txt").read_text(encoding="utf-8")
    assert json.loads((tmp_path / "topics.json").read_text(encoding="utf-8"))[0]["title"] == ""
    assert write_cast(golden, tmp_path, min_grade=3)["qrels.txt"] == 2


def test_every_export_refuses_a_golden_set_without_conversations(golden: GoldenSet, tmp_path: Path) -> None:
    golden.conversations = []
    for write in (write_ragas_multiturn, write_deepeval, write_cast):
        with pytest.raises(InputError, match=r"no conversations\.jsonl"):
            write(golden, tmp_path / "x.out")


# ------------------------------------------------------------------------------------------------------ reading


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_ragas_prefix_rows_merge_into_the_longer_row_and_keep_answers_and_metadata(tmp_path: Path) -> None:
    hi = {"type": "human", "content": "Hi?", "metadata": {"query_id": "a1", "rewrite": "Hello?"}}
    more = {"type": "human", "content": "More?", "metadata": {"dependency": "pronoun"}}
    rows = [
        {"user_input": [hi], "reference": "Hello."},  # no conversation id: found by its prefix of the next row
        {"user_input": [hi, {"type": "ai", "content": "Hello."}, more], "reference": "Yes.", "turn": 2},
        {"user_input": [{"type": "human", "content": "Other?"}], "reference": "No."},
    ]
    parsed = read_ragas_multiturn(_jsonl(tmp_path / "r.jsonl", rows))
    assert [(p.id, p.where) for p in parsed] == [("conv-1", "r.jsonl:1"), ("conv-3", "r.jsonl:3")]
    first = parsed[0]
    assert [(t["utterance"], t["answer"]) for t in first.turns] == [("Hi?", "Hello."), ("More?", "Yes.")]
    assert first.turns[0]["metadata"] == {"query_id": "a1", "rewrite": "Hello?"}
    questions, conversations, chunks, pairs = conversation_records(tmp_path / "r.jsonl", parsed)
    assert [(q.id, q.text, q.reference_answer, q.flags) for q in questions] == [
        ("a1", "Hello?", "Hello.", {}),
        ("conv-1-t2", "More?", "Yes.", {"rewrite_missing": True}),
        ("conv-3-t1", "Other?", "No.", {"rewrite_missing": True}),
    ]
    assert questions[1].metadata == {"conversation_id": "conv-1", "turn": 2, "utterance": "More?",
                                     "imported_from": "r.jsonl:1"}  # fmt: skip
    second = conversations[0].turns[1]
    assert (second.dependency, second.depends_on_history, second.judged) == ("pronoun", True, True)
    assert (conversations[0].turns[0].dependency, conversations[0].turns[0].depends_on_history) == ("none", False)
    assert chunks == [] and pairs == []


def test_ragas_rows_of_one_conversation_id_merge_whatever_their_order(tmp_path: Path) -> None:
    one = [{"type": "human", "content": "A?"}, {"type": "ai", "content": "a."}]
    two = [*one, {"type": "human", "content": "B?"}]
    rows = [{"user_input": two, "reference": "b.", "conversation_id": "c"},
            {"user_input": one[:1], "reference": "a.", "conversation_id": "c"}]  # fmt: skip
    [parsed] = read_ragas_multiturn(_jsonl(tmp_path / "r.jsonl", rows))
    assert [(t["utterance"], t["answer"]) for t in parsed.turns] == [("A?", "a."), ("B?", "b.")]
    clash = [*rows, {"user_input": [{"type": "human", "content": "Z?"}], "conversation_id": "c"}]
    with pytest.raises(FormatError, match=r"r\.jsonl:3: turn 1 differs from the same conversation's other rows"):
        read_ragas_multiturn(_jsonl(tmp_path / "r.jsonl", clash))


def test_ragas_rows_that_are_not_samples_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"user_input": [{"type": "human", "content": "A?"}]}\n\n{"user_input": "A?"}\n', "utf-8")
    with pytest.raises(FormatError, match=r"r\.jsonl:3: a multi-turn sample needs 'user_input', a list of messages"):
        read_ragas_multiturn(path)
    path.write_text("{not json\n", "utf-8")
    with pytest.raises(FormatError, match=r"r\.jsonl:1: not JSON"):
        read_ragas_multiturn(path)
    with pytest.raises(InputError, match="cannot read"):
        read_ragas_multiturn(tmp_path / "absent.jsonl")
    path.write_text('{"user_input": [{"type": "human"}]}\n', "utf-8")
    with pytest.raises(FormatError, match=r"r\.jsonl:1: a message must be an object with 'type' and string 'content'"):
        read_ragas_multiturn(path)


def test_deepeval_cases_give_ids_scenarios_contexts_and_context_turns(tmp_path: Path) -> None:
    turns = [
        {"role": "user", "content": "A?", "metadata": {"query_id": "qa", "rewrite": "Is A so?"}},
        {"role": "assistant", "content": "a.", "retrieval_context": ["Text one.", "Text two."]},
        {"role": "user", "content": "and B?", "metadata": {"judged": False, "rewrite": "Is B so?", "dropped": "leakage",
                                                           "dependency": "ellipsis"}},
        {"role": "assistant", "content": "b.", "retrieval_context": ["Text one."]},
        {"role": "user", "content": "C?", "metadata": {"rewrite": "Is C so?"}},
    ]  # fmt: skip
    cases = [{"name": "n1", "scenario": "s", "turns": turns, "metadata": {"assay": {"conversation_id": "talk"}}},
             {"name": "n2", "turns": turns[:1]}, {"turns": [{"role": "user", "content": "D?"}]}]  # fmt: skip
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"test_cases": cases}), "utf-8")
    parsed = read_deepeval(path)
    assert [(p.id, p.where, p.scenario) for p in parsed] == [
        ("talk", "d.json:case 1", "s"),
        ("n2", "d.json:case 2", None),
        ("conv-3", "d.json:case 3", None),
    ]
    assert parsed[0].turns[0]["contexts"] == ["Text one.", "Text two."]
    with pytest.raises(FormatError, match=r"question id 'qa' appears in two turns \(d\.json:case 2\)"):
        conversation_records(path, parsed)
    questions, conversations, chunks, pairs = conversation_records(path, parsed[::2])
    assert [(q.id, q.text, q.reference_answer) for q in questions] == [("qa", "Is A so?", "a."),
                                                                       ("talk-t3", "Is C so?", None),
                                                                       ("conv-3-t1", "D?", None)]  # fmt: skip
    context = conversations[0].turns[1]
    assert (context.question_id, context.judged, context.rewrite, context.answer, context.dropped) == (
        "talk-t2",
        False,
        "Is B so?",
        "b.",
        "leakage",
    )
    assert (context.dependency, context.depends_on_history) == ("ellipsis", True)
    one, two = context_chunk("Text one."), context_chunk("Text two.")
    assert one.id.startswith("ctx-") and len(one.id) == 4 + 16 and one.id != two.id  # 8 bytes of hash, in hex
    assert (one.doc_id, one.ordinal, one.text, one.start, one.end) == (one.id, 0, "Text one.", 0, 9)
    assert chunks == [one, two] and pairs == [("qa", one.id), ("qa", two.id)]  # the context turn's text: no label


def test_deepeval_files_that_are_not_cases_name_the_case(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"goldens": [{"name": "x", "turns": "A?"}]}), "utf-8")
    with pytest.raises(FormatError, match=r"d\.json:1: a conversational test case needs 'turns'"):
        read_deepeval(path)
    path.write_text('"cases"', "utf-8")
    with pytest.raises(FormatError, match=r"d\.json:1: expected a JSON list"):
        read_deepeval(path)
    path.write_text("[\n{", "utf-8")
    with pytest.raises(FormatError, match=r"d\.json:2: not JSON"):
        read_deepeval(path)
    path.write_text(json.dumps([{"turns": [{"role": "user", "content": "A?", "retrieval_context": "A"}]}]), "utf-8")
    with pytest.raises(FormatError, match="retrieval_context must be a list of strings"):
        read_deepeval(path)
    path.write_text(json.dumps([{"turns": []}]), "utf-8")
    with pytest.raises(FormatError, match="a conversation without a user message"):
        read_deepeval(path)
    twice = [{"name": "x", "turns": [{"role": "user", "content": "A?"}]}] * 2
    path.write_text(json.dumps(twice), "utf-8")
    with pytest.raises(FormatError, match=r"conversation id 'x' appears twice \(d\.json:case 1 and d\.json:case 2\)"):
        conversation_records(path, read_deepeval(path))


def test_files_keep_non_ascii_text_and_their_layout(golden: GoldenSet, tmp_path: Path) -> None:
    context = golden.conversations[0].turns[1]
    golden.conversations[0].turns[1] = context.model_copy(update={"utterance": "et pour un kayak à 30 €?"})
    write_ragas_multiturn(golden, tmp_path / "r.jsonl")
    assert '"content": "et pour un kayak à 30 €?"' in (tmp_path / "r.jsonl").read_text(encoding="utf-8")
    write_deepeval(golden, tmp_path / "d.json")
    text = (tmp_path / "d.json").read_text(encoding="utf-8")
    assert text.startswith('[\n {\n  "name": "c-1",\n') and text.endswith("\n  }\n }\n]\n")  # one space per level
    assert '"content": "et pour un kayak à 30 €?"' in text
    write_cast(golden, tmp_path)
    text = (tmp_path / "topics.json").read_text(encoding="utf-8")
    assert text.startswith('[\n {\n  "number": "c-1",\n') and '"raw_utterance": "et pour un kayak à 30 €?"' in text


def test_a_judged_turn_without_labels_has_no_contexts_and_no_qrels(golden: GoldenSet, tmp_path: Path) -> None:
    golden.qrels = [label for label in golden.qrels if label.query_id != "q2"]
    write_deepeval(golden, tmp_path / "d.json")
    [case] = json.loads((tmp_path / "d.json").read_text(encoding="utf-8"))
    assert case["turns"][5]["retrieval_context"] == []
    assert write_cast(golden, tmp_path)["qrels.txt"] == 2  # q1's two scored grades only


def test_the_refusal_names_both_ways_out(golden: GoldenSet, tmp_path: Path) -> None:
    golden.conversations = []
    with pytest.raises(InputError) as caught:
        write_cast(golden, tmp_path)
    assert str(caught.value) == (
        "this golden set has no conversations (no conversations.jsonl): build them with assay build DOCS -o golden/ "
        "--conversations N, or export its questions with --to ragas|beir|trec"
    )


HUMAN, AI = {"type": "human", "content": "A?"}, {"type": "ai", "content": "a."}
RAGAS_ERRORS = [
    ('{"user_input": 3}', "r.jsonl:1: a multi-turn sample needs 'user_input', a list of messages (expected write RAGAS "
                          "MultiTurnSample rows)"),
    ("[1]", "r.jsonl:1: a multi-turn sample needs 'user_input', a list of messages (expected write RAGAS "
            "MultiTurnSample rows)"),
    ("{oops", "r.jsonl:1: not JSON (Expecting property name enclosed in double quotes) (expected one JSON object per "
              "line)"),
    (json.dumps({"user_input": ["hi"]}),
     "r.jsonl:1: a message must be an object with 'type' and string 'content', got 'hi' (expected write messages as "
     "{\"type\": ..., \"content\": \"...\"})"),
    (json.dumps({"user_input": [{"type": "human", "content": 7}]}),
     "r.jsonl:1: a message must be an object with 'type' and string 'content', got \"{'type': 'human', 'content': "
     "7}\" (expected write messages as {\"type\": ..., \"content\": \"...\"})"),
    (json.dumps({"user_input": [{"type": "tool", "content": "x"}]}),
     "r.jsonl:1: message role 'tool' is not a user or assistant role (expected use human/ai (RAGAS) or "
     "user/assistant (DeepEval, OpenAI format))"),
    (json.dumps({"user_input": [AI, HUMAN]}), "r.jsonl:1: the conversation starts with an assistant message (expected "
                                              "start each conversation with the user's first turn)"),
    (json.dumps({"user_input": []}), "r.jsonl:1: a conversation without a user message (expected give at least one "
                                     "user turn)"),
    (json.dumps({"user_input": [HUMAN, AI, HUMAN], "turn": 4}),
     "r.jsonl:1: turn numbers [1, 4] have a gap or are out of order (expected number the turns of a conversation 1, "
     "2, 3, ... with none missing)"),
    (json.dumps({"user_input": [HUMAN], "conversation_id": "c"}) + "\n" + json.dumps({"user_input": [
        {"type": "human", "content": "B?"}], "conversation_id": "c"}),
     "r.jsonl:2: turn 1 differs from the same conversation's other rows (expected give each conversation a distinct "
     "conversation_id)"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "message"), RAGAS_ERRORS)
def test_each_ragas_error_says_where_what_and_the_fix(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(text + "\n", encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        read_ragas_multiturn(path)
    assert str(caught.value) == f"{tmp_path}/{message}"


DEEPEVAL_ERRORS = [
    ("{", "d.json:1: not JSON (Expecting property name enclosed in double quotes) (expected give a JSON list of test "
          "cases)"),
    ('"x"', "d.json:1: expected a JSON list of conversational test cases (expected wrap the cases in [...])"),
    ('[{"turns": {}}]', "d.json:1: a conversational test case needs 'turns', a list of messages (expected write "
                        "DeepEval ConversationalTestCase fields (test case number given as line))"),
    ('[{"turns": []}, 3]', "d.json:1: a conversation without a user message (expected give at least one user turn)"),
    (json.dumps([{"turns": [{"role": "user", "content": "A?", "retrieval_context": ["a", 1]}]}]),
     "d.json:1: retrieval_context must be a list of strings (expected give the context texts)"),
    (json.dumps([{"turns": [{"content": "A?"}]}]), "d.json:1: a message must be an object with 'role' and string "
                                                    "'content', got \"{'content': 'A?'}\" (expected write messages as "
                                                    "{\"role\": ..., \"content\": \"...\"})"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "message"), DEEPEVAL_ERRORS)
def test_each_deepeval_error_says_where_what_and_the_fix(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "d.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        read_deepeval(path)
    assert str(caught.value) == f"{tmp_path}/{message}"


def test_ids_given_twice_are_named_with_both_places(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    one = {"role": "user", "content": "A?", "metadata": {"query_id": "qa"}}
    path.write_text(json.dumps([{"name": "x", "turns": [one]}, {"name": "x", "turns": [one]}]), encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        conversation_records(path, read_deepeval(path))
    assert str(caught.value) == (f"{path}: conversation id 'x' appears twice (d.json:case 1 and d.json:case 2) "
                                 "(expected give each conversation its own id)")  # fmt: skip
    path.write_text(json.dumps([{"name": "x", "turns": [one]}, {"name": "y", "turns": [one]}]), encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        conversation_records(path, read_deepeval(path))
    assert str(caught.value) == (f"{path}: question id 'qa' appears in two turns (d.json:case 2) (expected give every "
                                 "turn its own query_id, or leave it out)")  # fmt: skip
    with pytest.raises(InputError, match=r"^cannot read .*absent\.json: No such file or directory$"):
        read_deepeval(tmp_path / "absent.json")


def test_a_ragas_row_without_an_id_joins_the_longer_row_it_is_a_prefix_of(tmp_path: Path) -> None:
    two = [HUMAN, AI, {"type": "human", "content": "B?"}]
    rows = [{"user_input": two, "reference": "b."}, {"user_input": [HUMAN], "reference": "a."},
            {"user_input": [{"type": "human", "content": "B?"}], "reference": "x."}]  # fmt: skip
    parsed = read_ragas_multiturn(_jsonl(tmp_path / "r.jsonl", rows))
    assert [p.id for p in parsed] == ["conv-1", "conv-3"]  # "B?" alone opens no prefix of conv-1
    assert [(t["utterance"], t["answer"]) for t in parsed[0].turns] == [("A?", "a."), ("B?", "b.")]


def test_rows_of_one_conversation_merge_answers_and_metadata(tmp_path: Path) -> None:
    a = {"type": "human", "content": "A?", "metadata": {"query_id": "qa", "rewrite": "Is A so?"}}
    b = {"type": "human", "content": "B?"}
    rows = [
        {"user_input": [a], "reference": "a.", "conversation_id": "c"},
        # the longer row: A? unanswered (no ai message after it), its metadata partly new
        {"user_input": [{**a, "metadata": {"rewrite": "Is A really so?", "dependency": "none"}}, b],
         "reference": "b.", "conversation_id": "c"},
    ]  # fmt: skip
    [parsed] = read_ragas_multiturn(_jsonl(tmp_path / "r.jsonl", rows))
    assert [(t["utterance"], t["answer"]) for t in parsed.turns] == [("A?", "a."), ("B?", "b.")]
    assert parsed.turns[0]["metadata"] == {"query_id": "qa", "rewrite": "Is A really so?", "dependency": "none"}
    # two rows as long as each other: the later one's answer and metadata win, the earlier fills what it lacks
    again = [
        {"user_input": [a], "reference": "first.", "conversation_id": "c"},
        {"user_input": [{**a, "metadata": {"rewrite": "later"}}], "reference": "second.", "conversation_id": "c"},
    ]
    [parsed] = read_ragas_multiturn(_jsonl(tmp_path / "r.jsonl", again))
    assert parsed.turns[0]["answer"] == "second."
    assert parsed.turns[0]["metadata"] == {"query_id": "qa", "rewrite": "later"}


def test_a_shorter_row_does_not_shorten_what_later_rows_are_matched_against(tmp_path: Path) -> None:
    c = {"type": "human", "content": "C?"}
    x = {"type": "human", "content": "X?"}
    rows = [{"user_input": [HUMAN, AI, {"type": "human", "content": "B?"}, AI, c]},
            {"user_input": [HUMAN]},  # a prefix of the first: joins it
            {"user_input": [HUMAN, AI, {"type": "human", "content": "B?"}, AI, x]}]  # fmt: skip
    # the third row is no prefix of the first (its third turn differs): a conversation of its own, never matched
    # against the shorter second row
    assert [p.id for p in read_ragas_multiturn(_jsonl(tmp_path / "r.jsonl", rows))] == ["conv-1", "conv-3"]
