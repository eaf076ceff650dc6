"""Conversations to RAGAS multi-turn, DeepEval and CAsT, loaded by the real ragas and deepeval; back again; errors."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest

from assay.errors import FormatError, InputError
from assay.formats.golden import GoldenSet
from assay.judge import make_judge
from assay.pipelines.bootstrap import DEMO_CONVERSATIONS, build_golden
from assay.pipelines.transfer import export_golden, import_conversations
from assay.types import Conversation, Turn

DEMO = Path(__file__).resolve().parents[3] / "datasets" / "demo" / "corpus"


def interop(module: str) -> None:
    """The real ``module`` (the ``interop`` extra): skip when it is absent, unless ASSAY_REQUIRE_INTEROP=1 (as in
    CI, which installs the extra in a venv of its own), where that is a failure."""
    try:
        __import__(module)
    except ImportError:
        if os.environ.get("ASSAY_REQUIRE_INTEROP") == "1":
            pytest.fail(f"{module} is missing and ASSAY_REQUIRE_INTEROP=1: pip install -e '.[dev,interop]'")
        pytest.skip(f"{module} is not installed (pip install -e '.[dev,interop]')")


@pytest.fixture(scope="module")
def golden() -> GoldenSet:
    return build_golden(DEMO, judge=make_judge("offline"), settings=DEMO_CONVERSATIONS)


def test_ragas_multiturn_rows_load_as_ragas_samples(golden: GoldenSet, tmp_path: Path) -> None:
    export_golden(golden, "ragas-multiturn", tmp_path / "r")
    interop("ragas")
    from ragas.dataset_schema import EvaluationDataset, MultiTurnSample  # the real package, the interop extra

    rows = [json.loads(line) for line in (tmp_path / "r" / "ragas_multiturn.jsonl").read_text().splitlines()]
    assert len(rows) == sum(t.judged for c in golden.conversations for t in c.turns)  # no row for a context turn
    dataset = EvaluationDataset.from_list(rows)
    assert all(isinstance(s, MultiTurnSample) for s in dataset.samples)
    second = golden.conversations[0].turns[1]
    sample = next(s for s, r in zip(dataset.samples, rows, strict=True) if r["query_id"] == second.question_id)
    assert [m.type for m in sample.user_input] == ["human", "ai", "human"]
    assert sample.user_input[-1].content == second.utterance
    assert sample.user_input[-1].metadata["rewrite"] == golden.question(second.question_id).text
    assert (
        sample.user_input[1].content == golden.question(golden.conversations[0].turns[0].question_id).reference_answer
    )
    talk, after = _after_context(golden)
    later = next(s for s, r in zip(dataset.samples, rows, strict=True) if r["query_id"] == after.question_id)
    context = next(t for t in talk.turns if not t.judged)
    shown = [(m.content, m.metadata.get("judged") if m.type == "human" else None) for m in later.user_input]
    assert (context.utterance, False) in shown and (context.answer, None) in shown


def test_deepeval_cases_load_as_conversational_test_cases(golden: GoldenSet, tmp_path: Path) -> None:
    export_golden(golden, "deepeval", tmp_path / "d")
    os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
    interop("deepeval")
    from deepeval.test_case import ConversationalTestCase  # the real package, the interop extra

    cases = json.loads((tmp_path / "d" / "deepeval.json").read_text())
    loaded = [ConversationalTestCase(**case) for case in cases]
    assert [c.name for c in loaded] == [c.id for c in golden.conversations]
    first = loaded[0]
    assert [t.role for t in first.turns][:2] == ["user", "assistant"]
    assert first.turns[0].content == golden.conversations[0].turns[0].utterance
    grades = golden.qrels_map()[golden.conversations[0].turns[0].question_id]
    assert len(first.turns[1].retrieval_context or []) == sum(g >= 2 for g in grades.values())
    talk, _ = _after_context(golden)
    case = next(c for c in loaded if c.name == talk.id)
    assert len(case.turns) == 2 * len(talk.turns)  # context turns are turns of the case like the others


def test_cast_topics_and_per_turn_qrels(golden: GoldenSet, tmp_path: Path) -> None:
    export_golden(golden, "cast", tmp_path / "c")
    topics = json.loads((tmp_path / "c" / "topics.json").read_text())
    conversation = golden.conversations[0]
    assert topics[0]["number"] == conversation.id
    turn = topics[0]["turn"][1]
    assert turn["number"] == 2 and turn["raw_utterance"] == conversation.turns[1].utterance
    assert turn["manual_rewritten_utterance"] == golden.question(conversation.turns[1].question_id).text
    qrels = (tmp_path / "c" / "qrels.txt").read_text().splitlines()
    ids = {line.split()[0] for line in qrels}
    assert f"{conversation.id}_2" in ids and len(qrels) == sum(1 for label in golden.qrels if label.grade is not None)


def test_cast_lists_a_context_turn_in_its_topic_with_no_qrels(golden: GoldenSet, tmp_path: Path) -> None:
    summary = export_golden(golden, "cast", tmp_path / "c")
    talk, _ = _after_context(golden)
    index = next(i for i, t in enumerate(talk.turns) if not t.judged)
    context = talk.turns[index]
    topic = next(t for t in json.loads((tmp_path / "c" / "topics.json").read_text()) if t["number"] == talk.id)
    assert topic["turn"][index] == {"number": index + 1, "raw_utterance": context.utterance,
                                    "manual_rewritten_utterance": context.rewrite, "query_id": context.question_id,
                                    "dependency": context.dependency}  # fmt: skip
    qrels = {line.split()[0] for line in (tmp_path / "c" / "qrels.txt").read_text().splitlines()}
    assert f"{talk.id}_{index + 1}" not in qrels and f"{talk.id}_{index + 2}" in qrels
    assert f"{talk.id}_{index + 1}\t{context.rewrite}" in (tmp_path / "c" / "topics.tsv").read_text()
    assert summary.questions == len(golden.questions)  # judged turns


def _after_context(golden: GoldenSet) -> tuple[Conversation, Turn]:
    """A conversation of the demo with a context turn followed by a judged turn, and that judged turn."""
    for talk in golden.conversations:
        for before, turn in itertools.pairwise(talk.turns):
            if not before.judged and turn.judged:
                return talk, turn
    raise AssertionError("the demo conversations have no context turn before a judged turn")


@pytest.mark.parametrize(("fmt", "file"), [("ragas-multiturn", "ragas_multiturn.jsonl"), ("deepeval", "deepeval.json")])
def test_round_trip_keeps_turns_rewrites_and_dependencies(
    golden: GoldenSet, tmp_path: Path, fmt: str, file: str
) -> None:
    export_golden(golden, fmt, tmp_path / "x")
    back = import_conversations(tmp_path / "x" / file, fmt).golden
    assert [c.id for c in back.conversations] == [c.id for c in golden.conversations]
    for old, new in zip(golden.conversations, back.conversations, strict=True):
        last = max(i for i, t in enumerate(old.turns) if t.judged)  # RAGAS: a context turn after it is in no row
        kept = old.turns if fmt == "deepeval" else old.turns[: last + 1]
        assert [(t.question_id, t.utterance, t.dependency, t.depends_on_history, t.judged) for t in new.turns] == [
            (t.question_id, t.utterance, t.dependency, t.depends_on_history, t.judged) for t in kept
        ]
        for turn in new.turns:
            assert back.turn_texts(turn) == golden.turn_texts(turn)
            assert turn.judged == (turn.question_id in {q.id for q in back.questions})
    back.save(tmp_path / "g")
    assert GoldenSet.load(tmp_path / "g").conversations == back.conversations


def test_a_golden_set_without_conversations_names_the_fix(golden: GoldenSet, tmp_path: Path) -> None:
    plain = GoldenSet(golden.manifest, golden.documents, golden.chunks, golden.questions, golden.qrels)
    with pytest.raises(InputError, match="--conversations N"):
        export_golden(plain, "cast", tmp_path / "c")
    assert not (tmp_path / "c").exists()


def test_bad_messages_name_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "r.jsonl"
    good = {"user_input": [{"type": "human", "content": "Hi?"}], "reference": "Hello."}
    bad.write_text(json.dumps(good) + "\n" + json.dumps({"user_input": [{"type": "system", "content": "x"}]}) + "\n")
    with pytest.raises(FormatError, match=r"r\.jsonl:2: message role 'system'"):
        import_conversations(bad, "ragas-multiturn")
    cases = tmp_path / "d.json"
    cases.write_text(json.dumps([{"turns": [{"role": "assistant", "content": "Hi"}]}]))
    with pytest.raises(FormatError, match=r"d\.json:1: the conversation starts with an assistant message"):
        import_conversations(cases, "deepeval")
    gap = tmp_path / "gap.jsonl"
    gap.write_text(json.dumps({**good, "conversation_id": "c", "turn": 3}) + "\n")
    with pytest.raises(FormatError, match="gap"):
        import_conversations(gap, "ragas-multiturn")


def test_import_without_rewrites_flags_them(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    turns = [
        {"role": "user", "content": "What does the Ranger cost?"},
        {"role": "assistant", "content": "$40.", "retrieval_context": ["The Ranger costs $40 a year."]},
        {"role": "user", "content": "And Summit?"},
    ]
    path.write_text(json.dumps([{"name": "c1", "scenario": "a member", "turns": turns}]))
    summary = import_conversations(path, "deepeval", grade=3)
    golden = summary.golden
    assert [t.utterance for t in golden.conversations[0].turns] == ["What does the Ranger cost?", "And Summit?"]
    assert all(q.flags.get("rewrite_missing") for q in golden.questions) and summary.skipped["rewrites_missing"] == 2
    assert [(label.query_id, label.grade) for label in golden.qrels] == [("c1-t1", 3)]
