"""``conversations.jsonl``: a file written before context turns loads and is rewritten unchanged; context turns
(unjudged, CAsT) round-trip; what a turn must and must not name is refused with the file and record."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.errors import DatasetError
from assay.formats.golden import CONVERSATIONS, GoldenSet
from assay.types import Conversation, Turn

FIXTURES = Path(__file__).parents[1] / "fixtures" / "formats" / "v1"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The version 1 golden fixture with the version 1 ``conversations.jsonl`` (turns q1, q2; written before context
    turns existed)."""
    target = tmp_path / "golden"
    shutil.copytree(FIXTURES / "golden", target)
    shutil.copy(FIXTURES / CONVERSATIONS, target / CONVERSATIONS)
    return target


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()[1:]  # the header names the assay version that wrote it


def context_turn(qid: str = "c-1-t3", **changes: object) -> Turn:
    fields: dict[str, object] = {"question_id": qid, "utterance": "and for a kayak?", "judged": False,
                                 "rewrite": "Can I get a refund for a kayak?", "answer": "Yes, within 30 days.",
                                 "dropped": "leakage", "depends_on_history": True,
                                 "dependency": "ellipsis"}  # fmt: skip
    return Turn.model_validate({**fields, **changes})


def test_a_version_1_conversations_file_loads_and_is_written_back_unchanged(folder: Path) -> None:
    golden = GoldenSet.load(folder)
    [conversation] = golden.conversations
    assert [t.question_id for t in conversation.turns] == ["q1", "q2"]
    assert all(t.judged and t.rewrite is None and t.answer is None and t.dropped is None for t in conversation.turns)
    assert golden.turn_texts(conversation.turns[1]) == ("How long does standard delivery take?",
                                                        "2 to 4 business days.")  # fmt: skip
    golden.save(folder, overwrite=True)
    assert _lines(folder / CONVERSATIONS) == _lines(FIXTURES / CONVERSATIONS)


def test_context_turns_round_trip_and_only_they_carry_the_new_fields(folder: Path) -> None:
    golden = GoldenSet.load(folder)
    golden.conversations[0].turns.insert(1, context_turn())
    golden.save(folder, overwrite=True)
    again = GoldenSet.load(folder)
    turns = again.conversations[0].turns
    assert turns == golden.conversations[0].turns and not turns[1].judged
    assert again.turn_texts(turns[1]) == ("Can I get a refund for a kayak?", "Yes, within 30 days.")
    assert again.turn_of("c-1-t3") == (again.conversations[0], 1)
    written = json.loads(_lines(folder / CONVERSATIONS)[0])["turns"]
    assert written[1]["judged"] is False and written[1]["dropped"] == "leakage"
    assert not {"judged", "rewrite", "answer", "dropped"} & (set(written[0]) | set(written[2]))
    assert [q.id for q in again.questions] == ["q1", "q2"]  # a context turn is no question


@pytest.mark.parametrize(
    ("turn", "problem"),
    [
        (context_turn("q2"), "record 1: context turn 'q2' (judged false) names a question of questions.jsonl"),
        (context_turn(rewrite=" "), "record 1: context turn 'c-1-t3' (judged false) needs its rewrite and answer"),
        (context_turn(answer=None), "record 1: context turn 'c-1-t3' (judged false) needs its rewrite and answer"),
        (Turn(question_id="q9", utterance="u"), "record 1 names unknown question 'q9'"),
        (Turn(question_id="q1", utterance="u"), "record 1: 'q1' is already a turn of conversation 'c-1'"),
    ],
)
def test_what_a_turn_names_is_checked(folder: Path, turn: Turn, problem: str) -> None:
    golden = GoldenSet.load(folder)
    golden.conversations[0].turns.append(turn)
    with pytest.raises(DatasetError, match=f"conversations.jsonl {problem}".replace("(", r"\(").replace(")", r"\)")):
        golden.save(folder, overwrite=True)


def test_a_conversation_of_context_turns_only_is_refused(folder: Path) -> None:
    golden = GoldenSet.load(folder)
    golden.conversations.append(Conversation(id="c-2", turns=[context_turn("c-2-t1"), context_turn("c-2-t2")]))
    with pytest.raises(DatasetError, match=r"conversations.jsonl record 2: conversation 'c-2' has no judged turn"):
        golden.save(folder, overwrite=True)
    (folder / CONVERSATIONS).write_text(  # a file edited by hand is refused on loading, naming the record
        (folder / CONVERSATIONS).read_text(encoding="utf-8")
        + json.dumps(golden.conversations[1].model_dump(mode="json")) + "\n", encoding="utf-8"
    )  # fmt: skip
    with pytest.raises(DatasetError, match=r"record 2: conversation 'c-2' has no judged turn"):
        GoldenSet.load(folder)
